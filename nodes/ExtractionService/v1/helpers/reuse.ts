import type { IDataObject, INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { servicePath, type ExtractionServiceClient } from '../../../shared/transport';
import type { JobKind } from '../../../shared/kinds';
import { fetchJob } from '../../../shared/resource';

/**
 * Reuse Existing Job: exactly-once job creation when n8n runs the same input again (a user's Retry
 * of a failed execution, the node setting Retry On Fail, a queue-mode job re-queued after its worker
 * died). Every job the node creates carries a metadata key/value the user maps (e.g. the mail's
 * message id); before creating, the node looks that key/value up and, when a job that did not fail
 * exists, waits for it instead of creating another.
 *
 * How exact the lookup is (`§unversioned-4.1`, `§v0-4.6`):
 * - extractions: the list filters `meta_key` + `meta_value` select extractions whose metadata holds
 *   the key and the value — exact;
 * - parsings: the /v0 list has only `search` (file names and metadata values, matched loosely), so
 *   each candidate is read by id and kept only when `metadata[key]` equals the value exactly.
 * Not atomic: two executions racing on the same key at the same moment can both create.
 */

/** A job's idempotency key: stored in its metadata as `{ [key]: value }`. */
export interface ReuseKey {
	key: string;
	value: string;
}

/**
 * The item's Reuse Existing Job option, checked.
 *
 * @param option the option's value: `{ key: { key, value } }` (a fixed collection), or undefined
 * @returns undefined when the option is not set
 * @throws NodeOperationError naming the field when the key or the value is empty
 */
export function readReuseKey(
	node: INode,
	itemIndex: number,
	option: unknown,
): ReuseKey | undefined {
	const entry = (option as { key?: { key?: unknown; value?: unknown } } | undefined)?.key;
	if (!entry) return undefined;
	const key = String(entry.key ?? '').trim();
	const value = String(entry.value ?? '').trim();
	if (!key)
		throw new NodeOperationError(node, 'Parameter "Reuse Existing Job" has an empty Metadata Key', {
			itemIndex,
		});
	if (!value) {
		throw new NodeOperationError(
			node,
			'Parameter "Reuse Existing Job" has an empty Metadata Value',
			{
				itemIndex,
				description:
					'Map a value that identifies this input, e.g. the mail\'s message id: {{ $json.metadata["message-id"] }}.',
			},
		);
	}
	return { key, value };
}

/**
 * The keys of an item's jobs, one per uploaded file, unique within the item: the value with `:` and
 * the file name appended (`<value>:<file name>`), so each attachment of a mail has its own job. A
 * file whose name an earlier file of the item already has adds its position among those files
 * (`<value>:invoice.pdf#2`, `#3`, …, in the order of the item's binary properties, which a re-run of
 * the same input keeps); the first keeps the plain form, the key it had before names could repeat.
 *
 * @param fileNames the item's files in upload order; none: one job for the item, keyed by the value
 * @returns one key per file (or the item's one key), in the same order
 */
export function jobKeys(reuse: ReuseKey, fileNames: string[]): ReuseKey[] {
	const seen = new Map<string, number>();
	return fileNames.map((fileName) => {
		const count = (seen.get(fileName) ?? 0) + 1;
		seen.set(fileName, count);
		const suffix = count > 1 ? `#${count}` : '';
		return { key: reuse.key, value: `${reuse.value}:${fileName}${suffix}` };
	});
}

/** Metadata with the job's key added (the user's own Metadata keeps its other keys). */
export function withKey(
	metadata: IDataObject | undefined,
	key: ReuseKey | undefined,
): IDataObject | undefined {
	if (!key) return metadata && Object.keys(metadata).length ? metadata : undefined;
	return { ...(metadata ?? {}), [key.key]: key.value };
}

/**
 * Looks up a job created earlier with this key: every page of the list
 * filtered by the key (exact for extractions, `search` for parsings; `getAll`, so a job behind many
 * failed re-runs is still found), each candidate read by id and kept only when its metadata holds the
 * value exactly and it did not fail.
 *
 * @returns the job (read by id, checked), or undefined when none exists or every match failed (ERROR)
 * @throws NodeApiError for service errors of the lookup
 */
export async function findExistingJob(
	client: ExtractionServiceClient,
	node: INode,
	kind: JobKind,
	key: ReuseKey,
	itemIndex: number,
): Promise<IDataObject | undefined> {
	const exact = kind.family === 'unversioned';
	const qs = exact ? { meta_key: key.key, meta_value: key.value } : { search: key.value };
	const candidates = await client.getAll(
		{
			family: kind.family,
			method: 'GET',
			path: servicePath(kind.family, kind.segment),
			qs,
			itemIndex,
			resourceName: `${kind.resourceName}s`,
		},
		true,
		0,
	);
	for (const candidate of candidates) {
		if (candidate.status === 'ERROR' || candidate.id === undefined || candidate.id === null)
			continue;
		const job = await fetchJob(client, node, kind, String(candidate.id), itemIndex);
		const metadata = (job.metadata ?? {}) as IDataObject;
		if (job.status !== 'ERROR' && metadata[key.key] === key.value) return job;
	}
	return undefined;
}
