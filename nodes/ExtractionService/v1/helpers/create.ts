import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import {
	servicePath,
	type BodyFactory,
	type ExtractionServiceClient,
} from '../../../shared/transport';
import type { InputFile } from './input-files';
import type { JobKind } from '../../../shared/kinds';
import { JobOutcomes, outcomeOf, type JobOutcome } from './outcomes';
import { checkResource } from '../../../shared/resource';
import { findExistingJob, type ReuseKey } from './reuse';
import { waitForJob, type WaitSettings } from './wait';

/** One create request of a job-creating operation. */
export interface JobRequest {
	body: IDataObject | BodyFactory;
	qs?: IDataObject;
	/** Create path when it is not the kind's collection (`/workflow/{id}/extract/`). */
	path?: string;
	/** Resource named in a 404 of the create call, when the path addresses one (the workflow). */
	notFound?: { resourceName: string; resourceId: string };
	/** The uploaded file, carried to the output shaping (file name, "Include Input Binary"). */
	file?: InputFile;
	/** Reuse Existing Job: the key this job carries in its metadata; a job found with it is waited for instead. */
	reuse?: ReuseKey;
}

/**
 * Creates jobs and, with Wait for Completion, waits for all of them together; then shapes each
 * final job into output items. A create answer may be one job or a list of jobs (a list of URLs,
 * `§v0-4.5`; several workflow documents, `§unversioned-4.10`): each becomes its own
 * output. Every job the service accepts is recorded in the client's ledger (`created`) at once. With
 * Reuse Existing Job, a request whose key finds a job (`findExistingJob`) waits for that job instead.
 *
 * Nothing is lost when some jobs fail: every job's outcome is returned as a value (`outcomes.ts`),
 * each failure reported to the client's `onJobFailure` as it happens — the router outputs the
 * finished jobs beside error items (with their ids) under Continue On Fail, and otherwise stops the
 * execution at the first failure.
 *
 * @param wait the item's Wait for Completion settings
 * @param shape turns one job (final, or as created without waiting) into output items
 * @returns every job's outcome, in request order then answer order
 */
export async function createAndWait(
	ctx: IExecuteFunctions,
	client: ExtractionServiceClient,
	kind: JobKind,
	itemIndex: number,
	requests: JobRequest[],
	wait: WaitSettings,
	shape: (job: IDataObject, file?: InputFile) => Promise<INodeExecutionData[]>,
): Promise<JobOutcomes> {
	const node = ctx.getNode();
	const create = async ({ body, qs, path, notFound, reuse }: JobRequest) => {
		const existing = reuse
			? await findExistingJob(client, node, kind, reuse, itemIndex)
			: undefined;
		const created =
			existing ??
			(await client.request<IDataObject | IDataObject[]>({
				family: kind.family,
				method: 'POST',
				path: path ?? servicePath(kind.family, kind.segment),
				qs,
				body: typeof body === 'function' ? body : stripUndefined(body),
				itemIndex,
				resourceName: notFound?.resourceName ?? kind.resourceName,
				resourceId: notFound?.resourceId,
				expect: 'objects',
			}));
		// Each element on its own: one without an id fails alone, after the others are recorded.
		const jobs: IDataObject[] = [];
		const refused: unknown[] = [];
		for (const answer of Array.isArray(created) ? created : [created]) {
			try {
				jobs.push(checkResource(node, kind.resourceName, answer, itemIndex));
			} catch (error) {
				refused.push(error);
			}
		}
		if (!existing)
			for (const job of jobs)
				client.recordCreated({ resourceName: kind.resourceName, id: String(job.id), itemIndex });
		return { jobs, refused, reused: existing !== undefined };
	};
	const groups = await Promise.all(
		requests.map(async (request): Promise<JobOutcome[]> => {
			let jobs: IDataObject[];
			let refused: unknown[];
			let reused: boolean;
			try {
				({ jobs, refused, reused } = await create(request));
			} catch (error) {
				return [await outcomeOf(client, itemIndex, undefined, Promise.reject(error))];
			}
			const failures = refused.map(
				async (error) => await outcomeOf(client, itemIndex, undefined, Promise.reject(error)),
			);
			return await Promise.all([
				...jobs.map(
					async (job) =>
						await outcomeOf(
							client,
							itemIndex,
							String(job.id),
							waitForJob(ctx, client, kind, job, itemIndex, wait, undefined, !reused).then(
								async (final) => await shape(final, request.file),
							),
						),
				),
				...failures,
			]);
		}),
	);
	return new JobOutcomes(groups.flat());
}

/** A JSON body without the keys whose value is undefined (optional fields not set). */
export function stripUndefined(body: IDataObject): IDataObject {
	return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}
