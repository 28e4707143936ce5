import type { IDataObject, INode } from 'n8n-workflow';

import { idKey, UnusableAnswerError, servicePath, type ExtractionServiceClient } from './transport';
import type { JobKind } from './kinds';

/**
 * Checks that an answer is the resource it should be (`§node`, Checked answers): a JSON object with
 * a non-empty `id` and, for a read, the `id` asked for (matched in any letter case, `idKey`) and
 * (jobs) a `status`. A create answered without an id may still have made the resource, and the
 * error says so.
 *
 * @param answer the parsed answer (a JSON object: the transport checked that)
 * @param resourceName "Extract", "Document", … (for messages)
 * @param read for a poll or a Get: the id that was asked for, and whether a `status` is required
 * @returns the answer, with `id` as a string as the service sent it (trimmed)
 * @throws NodeApiError (an `UnusableAnswerError`, so a poll skips it) naming what is missing
 */
export function checkResource(
	node: INode,
	resourceName: string,
	answer: IDataObject,
	itemIndex: number,
	read?: { id: string; status: boolean },
): IDataObject {
	const id =
		typeof answer.id === 'string' || typeof answer.id === 'number' ? String(answer.id).trim() : '';
	const problem = !id
		? 'no "id"'
		: read && idKey(id) !== idKey(read.id) // UUIDs: letter case does not matter
			? `the id of another ${resourceName} (${id})`
			: read?.status && typeof answer.status !== 'string'
				? 'no "status"'
				: undefined;
	if (!problem) return { ...answer, id };
	const sample = JSON.stringify(answer).slice(0, 200);
	throw new UnusableAnswerError(
		node,
		{ status: read ? 200 : 201 },
		{
			message: `The service answered with ${problem} where ${read ? `${resourceName} ${read.id}` : `the new ${resourceName}`} was expected`,
			description: read
				? `The answer was: ${sample}`
				: `The request was accepted, so the ${resourceName} may already exist at the service: check with Get Many before running the workflow again. The answer was: ${sample}`,
			itemIndex,
		},
	);
}

/**
 * Reads a job by id (`§v0-4.7, §v0-4.9`; `§unversioned-4.3`) and checks the answer is it, with a
 * `status`; with `status` false, any resource of that shape (a document, `§v0-4.3`).
 *
 * @param deadline epoch ms bounding the read (a poll's wait deadline)
 * @throws NodeApiError for service errors and answers that are not the job
 */
export async function fetchJob(
	client: ExtractionServiceClient,
	node: INode,
	kind: Pick<JobKind, 'family' | 'segment' | 'resourceName'>,
	id: string,
	itemIndex: number,
	deadline?: number,
	status = true,
): Promise<IDataObject> {
	const job = await client.request<IDataObject>({
		family: kind.family,
		method: 'GET',
		path: servicePath(kind.family, kind.segment, id),
		itemIndex,
		resourceName: kind.resourceName,
		resourceId: id,
		deadline,
	});
	return checkResource(node, kind.resourceName, job, itemIndex, { id, status });
}
