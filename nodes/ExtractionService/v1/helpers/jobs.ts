import type { IDataObject, IExecuteFunctions, INode, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import {
	idKey,
	isRetryLater,
	UnusableAnswerError,
	servicePath,
	type ApiFamily,
	type BodyFactory,
	type ExtractionServiceClient,
} from '../transport';
import { admissionOf } from './admission';
import { secondsToMs } from './validation';
import type { InputFile } from './binary';
import { JobOutcomes, outcomeOf, type JobOutcome } from './outcomes';
import { pollUntilFinal, type PollTiming } from './polling';
import type { ReuseKey } from './reuse';

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
 * The three kinds of asynchronous job and their final statuses (`§v0-3`, `§unversioned-3`):
 * - parsing: final `FINISHED`, `PARTIAL_FINISHED`, `ERROR`, polled at `§v0-4.7`;
 * - extract: final `FINISHED`, `ERROR`, polled at `§v0-4.9`;
 * - extraction (`§unversioned-2.1`): final `FINISHED`, `ERROR`, polled at `§unversioned-4.3`,
 *   where 200 and 202 both carry the resource.
 */
export const JOB_KINDS = {
	parsing: {
		family: 'v0',
		resourceName: 'Parsing',
		segment: 'parsing',
		finalStatuses: ['FINISHED', 'PARTIAL_FINISHED', 'ERROR'],
		partialStatus: 'PARTIAL_FINISHED',
	},
	extract: {
		family: 'v0',
		resourceName: 'Extract',
		segment: 'extract',
		finalStatuses: ['FINISHED', 'ERROR'],
	},
	extraction: {
		family: 'unversioned',
		resourceName: 'Extraction',
		segment: 'extract',
		finalStatuses: ['FINISHED', 'ERROR'],
	},
} satisfies Record<string, JobKind>;

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
 * Reads a job by id (`§v0-4.7, §v0-4.9`; `§unversioned-4.3`) and checks the answer is it.
 *
 * @param deadline epoch ms bounding the read (a poll's wait deadline)
 * @throws NodeApiError for service errors and answers that are not the job
 */
export async function fetchJob(
	client: ExtractionServiceClient,
	node: INode,
	kind: JobKind,
	id: string,
	itemIndex: number,
	deadline?: number,
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
	return checkResource(node, kind.resourceName, job, itemIndex, { id, status: true });
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
	const known =
		error instanceof NodeApiError || error instanceof NodeOperationError
			? error
			: new NodeOperationError(node, error as Error, { itemIndex });
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

/**
 * Looks up a job created earlier with this key (Reuse Existing Job, reuse.ts): every page of the list
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
		const jobs = (Array.isArray(created) ? created : [created]).map((job) =>
			checkResource(node, kind.resourceName, job, itemIndex),
		);
		if (!existing)
			for (const job of jobs)
				client.recordCreated({ resourceName: kind.resourceName, id: String(job.id), itemIndex });
		return jobs;
	};
	const groups = await Promise.all(
		requests.map(async (request): Promise<JobOutcome[]> => {
			let jobs: IDataObject[];
			try {
				jobs = await create(request);
			} catch (error) {
				return [await outcomeOf(client, itemIndex, undefined, Promise.reject(error))];
			}
			return await Promise.all(
				jobs.map(
					async (job) =>
						await outcomeOf(
							client,
							itemIndex,
							String(job.id),
							waitForJob(ctx, client, kind, job, itemIndex, wait).then(
								async (final) => await shape(final, request.file),
							),
						),
				),
			);
		}),
	);
	return new JobOutcomes(groups.flat());
}

/** A JSON body without the keys whose value is undefined (optional fields not set). */
export function stripUndefined(body: IDataObject): IDataObject {
	return Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined));
}
