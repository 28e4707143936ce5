/**
 * The transport: the only code that joins URLs and calls HTTP (`docs/service-api.md` §node). Each
 * module has one job:
 * - `credentials.ts` reads a family's credential once and checks its Base URL;
 * - `attempt.ts` sends one HTTP attempt with its timer and reads its streamed answer;
 * - `retry.ts` decides whether a failed attempt is tried again, and after how long;
 * - `answers.ts` checks a 2xx answer's shape, `redact.ts` keeps the credential's secrets out of it;
 * - `errors.ts` words every error; `ledger.ts` names what the service created;
 * - `pagination.ts` reads lists, `download.ts` follows a download's redirects;
 * - this file's `ExtractionServiceClient` ties them together for an execution.
 */
import type { IDataObject, INode } from 'n8n-workflow';

import { checkAnswer } from './answers';
import { attempt } from './attempt';
import { lowerCaseHeaders } from './body';
import { Semaphore } from './concurrency';
import { loadCredential, type FamilyCredential } from './credentials';
import { download } from './download';
import { cancelledError, failedAttemptError, rateLimitedError } from './failures';
import type { ApiFamily } from './families';
import type { CreatedResource } from './ledger';
import { readAll, readPage, type ListPage } from './pagination';
import { Holds, canWait, classify, retryDelay } from './retry';
import { CancelledError, cancellableSleep } from './sleep';
import {
	DEFAULT_CLIENT_SETTINGS,
	type ClientSettings,
	type Context,
	type DownloadBody,
	type Requester,
	type ServiceRequest,
	type ServiceResponse,
} from './types';

export { CREDENTIAL_TYPE, servicePath, type ApiFamily } from './families';
export { isRetryLater, TransientError, UnusableAnswerError } from './answers';
export { asNodeError, isNotFound } from './errors';
export { idKey } from './ids';
export { MAX_ANSWER_BYTES, MAX_DOWNLOAD_BYTES, MAX_ERROR_BODY_BYTES } from './body';
export { connectionErrorCode, parseRetryAfter } from './connection';
export { MAX_TIMER_MS } from './attempt';
export type { CreatedResource } from './ledger';
export { MAX_PAGES, type ListPage } from './pagination';
export {
	DEFAULT_CLIENT_SETTINGS,
	DEFAULT_CONCURRENCY,
	DEFAULT_MAX_RETRIES,
	DEFAULT_REQUEST_TIMEOUT_SECONDS,
	type BodyFactory,
	type ClientSettings,
	type DownloadBody,
	type Expected,
	type ServiceRequest,
	type ServiceResponse,
} from './types';

/**
 * The small typed client every operation uses, one per execution (per poll in the trigger), always
 * through `this.helpers.httpRequestWithAuthentication` with the family's credential.
 *
 * - Paths follow each family's slash rule (`servicePath`).
 * - At most `concurrency` requests are in flight across all items; bodies are built inside the slot.
 * - Failed attempts are retried as `retry.ts` decides; non-2xx answers become NodeApiErrors worded
 *   per `§v0-7` / `§unversioned-7` (`errors.ts`); 2xx answers are checked (`answers.ts`) and the
 *   credential's secrets removed from every text the service sends (`redact.ts`).
 * - Each attempt is aborted at min(Request Timeout, time left to the request's deadline), combined
 *   with the execution's cancel signal, so a hanging or dripping answer cannot outlive either.
 * - Cancelling the execution (or `abort()`) aborts requests and retry waits at once.
 * - It keeps a ledger of the jobs and documents the service created (`created`), so a failed
 *   execution can name them.
 */
export class ExtractionServiceClient implements Requester {
	private readonly limiter: Semaphore;

	private readonly credentials = new Map<ApiFamily, Promise<FamilyCredential>>();

	private readonly controller = new AbortController();

	private readonly memo = new Map<string, Promise<unknown>>();

	/** Per family, the time before which the service asked for no request (`Retry-After`, `retry.ts`). */
	private readonly holds = new Holds();

	/** Jobs and documents the service created in this execution, in order (see `recordCreated`). */
	readonly created: CreatedResource[] = [];

	/**
	 * Told of a job's failure the moment it happens (`helpers/outcomes.ts`), before the item's other
	 * jobs settle: the router sets it to stop the execution when Continue On Fail is off.
	 */
	onJobFailure?: (error: unknown, itemIndex: number) => void;

	/** Aborted only when the execution is cancelled (by the user, or n8n). */
	private readonly cancelSignal: AbortSignal;

	/** The node, read once for the checks of every answer (n8n's `getNode()` copies it each time). */
	private nodeCopy?: INode;

	constructor(
		private readonly ctx: Context,
		readonly settings: ClientSettings = DEFAULT_CLIENT_SETTINGS,
	) {
		this.limiter = new Semaphore(settings.concurrency);
		const cancel = new AbortController();
		this.cancelSignal = cancel.signal;
		const onCancel = (): void => {
			cancel.abort();
			this.controller.abort();
		};
		const executionSignal =
			'getExecutionCancelSignal' in ctx ? ctx.getExecutionCancelSignal?.() : undefined;
		if (executionSignal?.aborted) onCancel();
		executionSignal?.addEventListener('abort', onCancel, { once: true });
		if ('onExecutionCancellation' in ctx && typeof ctx.onExecutionCancellation === 'function')
			ctx.onExecutionCancellation(onCancel);
	}

	/**
	 * Runs `make` once per key for this client — once per execution (once per poll in the trigger)
	 * — and hands every caller the same result (e.g. a schema read for Check Against Schema). A result
	 * `lasting` refuses (a read that failed and may pass next time) is not kept: the caller whose own
	 * `make` gave it gets it, and callers that were waiting on it run `make` again.
	 */
	async once<T>(key: string, make: () => Promise<T>, lasting: (value: T) => boolean = () => true) {
		for (;;) {
			let promise = this.memo.get(key) as Promise<T> | undefined;
			const own = !promise;
			if (!promise) {
				promise = make();
				this.memo.set(key, promise);
			}
			const value = await promise;
			if (lasting(value)) return value;
			if (this.memo.get(key) === promise) this.memo.delete(key);
			if (own) return value;
		}
	}

	/** Aborted when the execution is cancelled or `abort()` is called (a sibling item failed). */
	get signal(): AbortSignal {
		return this.controller.signal;
	}

	/**
	 * Stops every wait and every read of this execution, and keeps new requests from starting (used
	 * when one item fails without Continue On Fail). A create already in flight is let finish, so the
	 * service's answer — the id of a job it accepted — is not lost; cancelling the execution aborts
	 * those too.
	 */
	abort(): void {
		this.controller.abort();
	}

	/**
	 * Base URL of a family's credential without trailing slashes.
	 *
	 * @throws NodeOperationError when the Base URL is not an absolute http(s) URL
	 */
	async baseUrl(family: ApiFamily, itemIndex = 0): Promise<string> {
		return (await this.credential(family, itemIndex)).baseUrl;
	}

	/** The node, for the errors of answers: one copy per execution. */
	get node(): INode {
		return (this.nodeCopy ??= this.ctx.getNode());
	}

	/** Notes a job or document the service created (a create answered with its id), for `created`. */
	recordCreated(resource: CreatedResource): void {
		this.created.push(resource);
	}

	/** The family's credential, read once per execution (`loadCredential`); a failed read is tried again. */
	private async credential(family: ApiFamily, itemIndex: number): Promise<FamilyCredential> {
		let entry = this.credentials.get(family);
		if (!entry) {
			entry = loadCredential(this.ctx, family, itemIndex);
			entry.catch(() => this.credentials.delete(family));
			this.credentials.set(family, entry);
		}
		return await entry;
	}

	/**
	 * Sends a request and returns the parsed JSON body of its 2xx answer (shape per `req.expect`).
	 *
	 * @throws NodeApiError for non-2xx answers, unusable answers and exhausted retries;
	 *   NodeOperationError when cancelled
	 */
	async request<T = IDataObject>(req: ServiceRequest): Promise<T> {
		return (await this.send<T>(req)).body;
	}

	/**
	 * Sends a request and returns its whole answer (status, headers, body). Only `binary` requests
	 * may get a 3xx back (see `download`); any other 3xx is an error. A DELETE retried after a lost
	 * answer (5xx, connection broken) that then gets 404 returns as a 204: the lost attempt deleted
	 * it (`§node`, Retries); a 404 on the first attempt is an error as any other.
	 *
	 * @throws NodeApiError for 3xx (outside binary), 4xx/5xx, unusable answers and exhausted
	 *   retries, a `TransientError` or `UnusableAnswerError` where a poll may try again; NodeOperationError when cancelled
	 */
	async send<T = unknown>(req: ServiceRequest): Promise<ServiceResponse<T>> {
		const family = await this.credential(req.family, req.itemIndex);
		const url = /^https?:\/\//i.test(req.path) ? req.path : `${family.baseUrl}${req.path}`;
		const at = {
			ctx: this.ctx,
			requestTimeoutMs: this.settings.requestTimeoutMs,
			stopSignal: this.signal,
			cancelSignal: this.cancelSignal,
			credentialsDecrypted: family.decrypted,
		};
		for (let tries = 0; ; tries++) {
			this.throwIfCancelled(req.itemIndex);
			await this.waitForHold(req);
			// Reads and polls before creates (`Semaphore`): a waiting job's poll is not queued behind them.
			// A hold that began while it queued is waited for first (the slot is given back meanwhile).
			const outcome = await this.limiter.run(async () => {
				if (this.holds.wait(this.settings, req) !== 0) return undefined;
				const tried = await attempt(at, req, url);
				this.holds.note(req.family, tried);
				return tried;
			}, req.method === 'GET');
			if (!outcome) {
				tries--;
				continue;
			}
			// A create the service accepted is returned even when the execution is stopping: its answer
			// names a job that exists (the caller records it before it stops).
			if (!(outcome.response && outcome.response.statusCode < 300 && !this.cancelSignal.aborted))
				this.throwIfCancelled(req.itemIndex);
			const { response } = outcome;
			if (response && response.statusCode < 400)
				return checkAnswer<T>(this.node, req, url, response, family.secrets, outcome.cut);
			// A retried DELETE answered 404: the attempt whose answer was lost deleted it. Done.
			if (req.method === 'DELETE' && tries > 0 && response?.statusCode === 404) {
				const headers = lowerCaseHeaders(response.headers);
				return { statusCode: 204, headers, url, body: undefined as T };
			}
			const verdict = classify(req, outcome);
			// A retry the service asked to wait for waits at the top of the loop (`waitForHold`).
			const held = verdict.retryAfterMs !== undefined;
			if (
				!verdict.retryable ||
				tries >= this.settings.maxRetries ||
				(!held && !canWait(this.settings, req, tries))
			)
				throw failedAttemptError(this.node, this.settings, req, url, outcome, family.secrets);
			if (!held) await this.sleep(retryDelay(this.settings, tries, req.deadline), req.itemIndex);
		}
	}

	/**
	 * Waits until the service's last Retry-After for the request's family has passed.
	 *
	 * @throws `rateLimitedError` (not sent) when that is longer than `retryMaxDelayMs` or past the
	 *   request's deadline; NodeOperationError when cancelled
	 */
	private async waitForHold(req: ServiceRequest): Promise<void> {
		const wait = this.holds.wait(this.settings, req);
		if (typeof wait !== 'number') {
			const { retryMaxDelayMs } = this.settings;
			throw rateLimitedError(this.node, req, wait.until, wait.status, retryMaxDelayMs);
		}
		if (wait > 0) await this.sleep(wait, req.itemIndex);
	}

	/** Sleeps `ms`, cut short when the execution stops. */
	private async sleep(ms: number, itemIndex: number): Promise<void> {
		await cancellableSleep(ms, this.signal).catch((e) => {
			throw cancelledError(this.node, e, itemIndex);
		});
	}

	/** A download, following its redirects (`download.ts`). */
	async download(req: ServiceRequest): Promise<ServiceResponse<DownloadBody>> {
		return await download(this, req);
	}

	/** One checked page of a list (`readPage`, pagination.ts). */
	async page(req: ServiceRequest, page: number, size: number): Promise<ListPage> {
		return await readPage(this, req, page, size);
	}

	/** Every item of a list, or up to `limit` (`readAll`, pagination.ts). */
	async getAll(req: ServiceRequest, returnAll: boolean, limit: number): Promise<IDataObject[]> {
		return await readAll(this, req, returnAll, limit);
	}

	private throwIfCancelled(itemIndex: number): void {
		if (this.signal.aborted) throw cancelledError(this.node, new CancelledError(), itemIndex);
	}
}
