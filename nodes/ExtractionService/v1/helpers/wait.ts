import type { IDataObject, IExecuteFunctions, INode } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { asNodeError, isRetryLater, type ExtractionServiceClient } from '../../../shared/transport';
import { admissionOf } from './admission';
import type { JobKind } from '../../../shared/kinds';
import { pollUntilFinal, type PollTiming } from './polling';
import { learningKey } from './poll-learning';
import { fetchJob } from '../../../shared/resource';
import { secondsToMs } from '../../../shared/validation';

/** Default of Wait Timeout, in seconds. */
export const DEFAULT_WAIT_TIMEOUT_SECONDS = 600;

/** Wait for Completion settings of one item (read by `readItemSettings`). */
export interface WaitSettings {
	waitForCompletion: boolean;
	/** Elapsed-time deadline in seconds, counted from when the wait starts. */
	timeoutSeconds: number;
	onTimeout: 'error' | 'outputUnfinished';
	treatPartialAsError: boolean;
}

/**
 * Adds to an error that a job exists and how to get it again, so no wait error loses a job's id.
 *
 * @returns the same NodeApiError/NodeOperationError with the note in its description; any other
 *   error wrapped in a NodeOperationError
 */
export function withJobNote(
	node: INode,
	error: unknown,
	kind: JobKind,
	id: string,
	itemIndex: number,
): NodeApiError | NodeOperationError {
	const known = asNodeError(node, error, itemIndex);
	const note = `${kind.resourceName} ${id} was created at the service and goes on there: fetch it with ${kind.resourceName} → Get and this ID instead of creating it again.`;
	if (!String(known.description ?? '').includes(note))
		known.description = [known.description, note].filter(Boolean).join(' ');
	return known;
}

/**
 * Waits for a created job to reach a final state and applies the outcome rules:
 * - `ERROR` → NodeOperationError with the service's `error` text (`§v0-3 rule 1`);
 * - `PARTIAL_FINISHED` → returned (with `pages_*` and `error`, `§v0-3` rule 2), or an error when
 *   "Treat Partial as Error" is on;
 * - deadline passed → NodeOperationError, or with On Timeout "Output Unfinished Item" the last
 *   state read successfully plus `timedOut: true` (its `id` lets a later Get resume it).
 * Polls that fail transiently or answer something unusable are skipped until the deadline; every
 * error thrown names the job's id.
 *
 * @param created the job as created or read (checked: it has an `id`)
 * @param timing poll timing override (tests); default 2 s growing to 5 s
 * @param justCreated whether the job was created in this execution just now (its polls then time the
 *   first polls of the execution's later jobs of the kind, `poll-learning.ts`)
 * @returns the job in its final (or last seen) state
 */
export async function waitForJob(
	ctx: IExecuteFunctions,
	client: ExtractionServiceClient,
	kind: JobKind,
	created: IDataObject,
	itemIndex: number,
	settings: WaitSettings,
	timing?: PollTiming,
	justCreated = false,
): Promise<IDataObject> {
	if (!settings.waitForCompletion) return created;
	const node = ctx.getNode();
	const id = String(created.id);
	// A waiting job holds no place: the next item starts (`admission.ts`).
	admissionOf(client.signal).leave(itemIndex);
	const { resource, timedOut, lastFailure } = await pollUntilFinal(created, {
		fetch: async (deadline) => await fetchJob(client, node, kind, id, itemIndex, deadline),
		isFinal: (job) => kind.finalStatuses.includes(String(job.status)),
		deadline: Date.now() + secondsToMs(settings.timeoutSeconds),
		signal: client.signal,
		isSkippable: isRetryLater,
		timing,
		maxInFlight: 2 * client.settings.concurrency,
		...(justCreated ? { learnAs: learningKey(kind.resourceName, created) } : {}),
	}).catch((error: unknown) => {
		const cause = client.signal.aborted
			? new NodeOperationError(node, 'The execution was cancelled', { itemIndex })
			: error;
		throw withJobNote(node, cause, kind, id, itemIndex);
	});

	if (timedOut) {
		if (settings.onTimeout === 'outputUnfinished') return { ...resource, timedOut: true };
		const last =
			lastFailure instanceof Error ? ` The last poll failed: ${lastFailure.message}.` : '';
		throw new NodeOperationError(
			node,
			`Timed out after ${settings.timeoutSeconds} s waiting for ${kind.resourceName} ${id} (last status ${String(resource.status ?? 'unknown')})`,
			{
				itemIndex,
				description: `The job goes on at the service.${last} Raise the Wait Timeout option, or set On Timeout to "Output Unfinished Item" and fetch it later with the Get operation and ID ${id}.`,
			},
		);
	}
	if (resource.status === 'ERROR') {
		throw new NodeOperationError(
			node,
			`${kind.resourceName} ${id} failed: ${String(resource.error ?? 'the service gave no reason')}`,
			{
				itemIndex,
				description: 'The service accepted the job but could not process it (status ERROR).',
			},
		);
	}
	if (
		kind.partialStatus &&
		resource.status === kind.partialStatus &&
		settings.treatPartialAsError
	) {
		throw new NodeOperationError(
			node,
			`${kind.resourceName} ${id} finished partially: ${String(resource.pages_failed ?? '?')} of ${String(resource.pages_total ?? '?')} pages failed`,
			{
				itemIndex,
				description:
					`${String(resource.error ?? '')} (the option "Treat Partial as Error" is on)`.trim(),
			},
		);
	}
	return resource;
}

/**
 * Get (and optionally wait for) one job by id: the Get operation of parsings, extracts and
 * extractions.
 *
 * @throws NodeApiError 404 naming the job; the errors of `waitForJob`
 */
export async function getJob(
	ctx: IExecuteFunctions,
	client: ExtractionServiceClient,
	kind: JobKind,
	id: string,
	itemIndex: number,
	wait: WaitSettings,
): Promise<IDataObject> {
	const job = await fetchJob(client, ctx.getNode(), kind, id, itemIndex);
	return await waitForJob(ctx, client, kind, job, itemIndex, wait);
}
