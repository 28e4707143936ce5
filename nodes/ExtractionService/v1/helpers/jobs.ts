import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { isTransientError, servicePath, type ApiFamily, type BodyFactory, type ExtractionServiceClient } from '../transport';
import type { InputFile } from './binary';
import { pollUntilFinal, type PollTiming } from './polling';
import { positiveSeconds } from './validation';

/** An asynchronous job type of the service and its final states. */
export interface JobKind {
	family: ApiFamily;
	/** Name users read in messages ("Extract", "Parsing", "Extraction"). */
	resourceName: string;
	/** Path segment of its GET-by-id endpoint. */
	segment: string;
	finalStatuses: string[];
	/** Final state that means "done, some pages failed" (parsings only). */
	partialStatus?: string;
}

/**
 * The three kinds of asynchronous job:
 * - parsing: `v0-api.md §3` (final `FINISHED`, `PARTIAL_FINISHED`, `ERROR`), polled at §4.7;
 * - extract: `v0-api.md §3` (final `FINISHED`, `ERROR`), polled at §4.9;
 * - extraction: `unversioned-api.md §2.1/§3` (final `FINISHED`, `ERROR`), polled at §4.3, where
 *   200 and 202 both carry the resource.
 */
export const JOB_KINDS = {
	parsing: { family: 'v0', resourceName: 'Parsing', segment: 'parsing', finalStatuses: ['FINISHED', 'PARTIAL_FINISHED', 'ERROR'], partialStatus: 'PARTIAL_FINISHED' },
	extract: { family: 'v0', resourceName: 'Extract', segment: 'extract', finalStatuses: ['FINISHED', 'ERROR'] },
	extraction: { family: 'unversioned', resourceName: 'Extraction', segment: 'extract', finalStatuses: ['FINISHED', 'ERROR'] },
} satisfies Record<string, JobKind>;

/** Wait for Completion settings of one item. */
export interface WaitSettings {
	waitForCompletion: boolean;
	/** Elapsed-time deadline in seconds, counted from when the wait starts. */
	timeoutSeconds: number;
	onTimeout: 'error' | 'outputUnfinished';
	treatPartialAsError: boolean;
}

/**
 * Reads the Wait for Completion parameters of an item (`waitForCompletion`, and `options.timeout`,
 * `options.onTimeout`, `options.treatPartialAsError`).
 *
 * @throws NodeOperationError when Timeout is not above 0
 */
export function waitSettings(ctx: IExecuteFunctions, itemIndex: number): WaitSettings {
	const options = ctx.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const waitForCompletion = ctx.getNodeParameter('waitForCompletion', itemIndex, true) as boolean;
	return {
		waitForCompletion,
		timeoutSeconds: waitForCompletion ? positiveSeconds(ctx.getNode(), itemIndex, 'Timeout', options.timeout ?? 600) : 0,
		onTimeout: options.onTimeout === 'outputUnfinished' ? 'outputUnfinished' : 'error',
		treatPartialAsError: options.treatPartialAsError === true,
	};
}

/**
 * Waits for a created job to reach a final state and applies the outcome rules:
 * - `ERROR` → NodeOperationError with the service's `error` text (`v0-api.md §3 rule 1`);
 * - `PARTIAL_FINISHED` → returned (with `pages_*` and `error`, §3 rule 2), or an error when
 *   "Treat Partial as Error" is on;
 * - deadline passed → NodeOperationError, or with On Timeout "Output Unfinished Item" the last
 *   state plus `timedOut: true` (its `id` lets a later Get resume it).
 *
 * @param created the job as returned by its create call (must have `id` and `status`)
 * @param timing poll timing override (tests); default 2 s growing to 5 s
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
): Promise<IDataObject> {
	if (!settings.waitForCompletion) return created;
	const id = String(created.id ?? '');
	const isFinal = (job: IDataObject) => kind.finalStatuses.includes(String(job.status));
	const { resource, timedOut } = await pollUntilFinal(created, {
		fetch: async (deadline) =>
			await client.request<IDataObject>({
				family: kind.family,
				method: 'GET',
				path: servicePath(kind.family, kind.segment, id),
				itemIndex,
				resourceName: kind.resourceName,
				resourceId: id,
				deadline,
			}),
		isFinal,
		deadline: Date.now() + settings.timeoutSeconds * 1000,
		signal: client.signal,
		isTransient: isTransientError,
		timing,
	}).catch((error: unknown) => {
		if (client.signal.aborted) {
			throw new NodeOperationError(ctx.getNode(), 'The execution was cancelled', { itemIndex });
		}
		throw error;
	});

	if (timedOut) {
		if (settings.onTimeout === 'outputUnfinished') return { ...resource, timedOut: true };
		throw new NodeOperationError(
			ctx.getNode(),
			`Timed out after ${settings.timeoutSeconds} s waiting for ${kind.resourceName} ${id} (last status ${String(resource.status)})`,
			{
				itemIndex,
				description: `The job goes on at the service. Raise the Timeout option, or set On Timeout to "Output Unfinished Item" and fetch it later with the Get operation and ID ${id}.`,
			},
		);
	}
	if (resource.status === 'ERROR') {
		throw new NodeOperationError(ctx.getNode(), `${kind.resourceName} ${id} failed: ${String(resource.error ?? 'the service gave no reason')}`, {
			itemIndex,
			description: 'The service accepted the job but could not process it (status ERROR).',
		});
	}
	if (kind.partialStatus && resource.status === kind.partialStatus && settings.treatPartialAsError) {
		throw new NodeOperationError(
			ctx.getNode(),
			`${kind.resourceName} ${id} finished partially: ${String(resource.pages_failed ?? '?')} of ${String(resource.pages_total ?? '?')} pages failed`,
			{ itemIndex, description: `${String(resource.error ?? '')} (the option "Treat Partial as Error" is on)`.trim() },
		);
	}
	return resource;
}

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
}

/**
 * Creates jobs and, with Wait for Completion, waits for all of them together; then shapes each
 * final job into output items. A create answer may be one job or an array of jobs (a list of URLs,
 * `v0-api.md §4.5`; several workflow documents, `unversioned-api.md §4.10`): each becomes its own
 * output. With Continue On Fail, a job that fails while waiting becomes an error item (with its
 * `id`) and its siblings are still output; otherwise the first failure is thrown.
 *
 * @param shape turns one job (final, or as created without waiting) into output items
 * @returns output items in request order, then answer order
 */
export async function createAndWait(
	ctx: IExecuteFunctions,
	client: ExtractionServiceClient,
	kind: JobKind,
	itemIndex: number,
	requests: JobRequest[],
	shape: (job: IDataObject, file?: InputFile) => Promise<INodeExecutionData[]>,
): Promise<INodeExecutionData[]> {
	const wait = waitSettings(ctx, itemIndex);
	const perRequest = await Promise.all(
		requests.map(async ({ body, qs, path, file, notFound }) => {
			const created = await client.request<IDataObject | IDataObject[]>({
				family: kind.family,
				method: 'POST',
				path: path ?? servicePath(kind.family, kind.segment),
				qs,
				body: typeof body === 'function' ? body : stripUndefined(body),
				itemIndex,
				resourceName: notFound?.resourceName ?? kind.resourceName,
				resourceId: notFound?.resourceId,
			});
			const jobs = Array.isArray(created) ? created : [created];
			const perJob = await Promise.all(
				jobs.map(async (job) => {
					try {
						return await shape(await waitForJob(ctx, client, kind, job, itemIndex, wait), file);
					} catch (error) {
						// waitForJob and the transport throw NodeOperationError/NodeApiError only.
						// eslint-disable-next-line @n8n/community-nodes/require-node-api-error
						if (!ctx.continueOnFail() || jobs.length === 1) throw error;
						return [{ json: { id: job.id ?? null, error: (error as Error).message } }];
					}
				}),
			);
			return perJob.flat();
		}),
	);
	return perRequest.flat();
}

/** A JSON body without the keys whose value is undefined (optional fields not set). */
export function stripUndefined(body: IDataObject): IDataObject {
	return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}
