import type {
	ICredentialsDecrypted,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	IN8nHttpFullResponse,
	INode,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import {
	MAX_ANSWER_BYTES,
	MAX_ERROR_BODY_BYTES,
	lowerCaseHeaders,
	readCapped,
	toBuffer,
} from './body';
import { withCancelSignal } from './cancel-signal';
import { Semaphore } from './concurrency';
import {
	CONNECTION_FAILURES,
	MAYBE_SENT_CODES,
	NOT_SENT_CODES,
	connectionErrorCode,
	errorMessage,
	parseRetryAfter,
	safeHost,
} from './connection';
import { readAll, readPage, type ListPage } from './pagination';
import { isStreamedMultipart, type StreamedMultipart } from './multipart-stream';
import { CancelledError, cancellableSleep } from './sleep';
import {
	TransientError,
	capText,
	decodeBody,
	nestedDeeperThan,
	parseAnswer,
	redactDeep,
	redactText,
	redirectError,
	unusableAnswerError,
	type Expected,
} from './answers';
import { errorForStatus } from './errors';
import { CREDENTIAL_TYPE, type ApiFamily } from './families';
import { originOf } from '../../../../credentials/shared';

export { CREDENTIAL_TYPE, servicePath, type ApiFamily } from './families';
export { idKey, isRetryLater, TransientError, UnusableAnswerError, type Expected } from './answers';
export { MAX_ANSWER_BYTES, MAX_ERROR_BODY_BYTES } from './body';
export { connectionErrorCode, parseRetryAfter } from './connection';
export { MAX_PAGES, type ListPage } from './pagination';

/** Longest wait a Node timer takes (2³¹ − 1 ms, about 24.8 days): longer ones fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** A request body that is built anew for every attempt, inside the concurrency slot (multipart). */
export type BodyFactory = () =>
	| Promise<FormData | StreamedMultipart | Buffer | IDataObject>
	| FormData
	| StreamedMultipart
	| Buffer
	| IDataObject;

/** One request to the service, as operations describe it. */
export interface ServiceRequest {
	family: ApiFamily;
	method: IHttpRequestMethods;
	/** Path from `servicePath()`, or an absolute URL (download redirects). */
	path: string;
	qs?: IDataObject;
	/** JSON object/array, or a factory for multipart bodies (called once per attempt). */
	body?: IDataObject | IDataObject[] | BodyFactory;
	/** The item the request is for (errors point at it). */
	itemIndex: number;
	/** Human resource name and id, for "Extract 1234 was not found". */
	resourceName?: string;
	resourceId?: string;
	/**
	 * Epoch ms at which the request gives up (the Wait for Completion deadline): no retry starts after
	 * it, and an attempt still running then is aborted.
	 */
	deadline?: number;
	/**
	 * What the answer must be (default: a JSON object; `nothing` for DELETE). Anything else is
	 * refused with an error that says what came back (`answers.ts`).
	 */
	expect?: Expected;
}

/**
 * A 2xx answer (or, for `binary` requests, a 3xx). `body` is the parsed JSON with the credential's
 * secrets removed, a Buffer (binary), or undefined (an empty answer where `nothing` was expected).
 */
export interface ServiceResponse<T = unknown> {
	statusCode: number;
	headers: Record<string, string>;
	body: T;
	/** The URL that gave this answer (after redirects, for downloads). */
	url: string;
}

/** Execution-wide transport settings, from the operation's Options. */
export interface ClientSettings {
	/** Requests in flight at once, all items together (waiting between polls holds no slot). */
	concurrency: number;
	/** Retries of one request after a retryable failure (see `isRetryable`). */
	maxRetries: number;
	/** Timeout of one HTTP attempt, in ms. */
	requestTimeoutMs: number;
	/** Base delay of the exponential retry backoff, in ms (doubles per retry, ±20 % jitter). */
	retryBaseDelayMs: number;
	/** Upper bound of one retry delay, in ms (also caps an honoured Retry-After). */
	retryMaxDelayMs: number;
}

/** Default of Concurrency (requests in flight at once). */
export const DEFAULT_CONCURRENCY = 5;
/** Default of Max Retries. */
export const DEFAULT_MAX_RETRIES = 3;
/** Default of Request Timeout, in seconds. */
export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 300;

export const DEFAULT_CLIENT_SETTINGS: ClientSettings = {
	concurrency: DEFAULT_CONCURRENCY,
	maxRetries: DEFAULT_MAX_RETRIES,
	requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_SECONDS * 1000,
	retryBaseDelayMs: 1_000,
	retryMaxDelayMs: 30_000,
};

/** The n8n contexts the client runs in: an execution, a list search, a trigger's poll. */
type Context = IExecuteFunctions | ILoadOptionsFunctions | IPollFunctions;

/** A page of a list (`§v0-2.5`, `§unversioned-2.4`), checked. */

/** What the client knows of a family's credential: where to send, what never to show, what to sign with. */
interface FamilyCredential {
	baseUrl: string;
	/** Secret values (every field but the Base URL), removed from all service text. */
	secrets: string[];
	/**
	 * The credential as read once for the execution, handed to every request
	 * (`credentialsDecrypted`): without it n8n reads the credential again for each request — in n8n
	 * a database read and a decryption, thousands of times in a large execution.
	 */
	decrypted: ICredentialsDecrypted;
}

/** The least time left to a deadline for which an attempt is still started (ms). */
const MIN_ATTEMPT_MS = 100;

/** Secrets shorter than this are not searched for in service text (they would match ordinary words). */
const MIN_SECRET_LENGTH = 4;

/**
 * The small typed client every operation uses: the only code that joins URLs and calls HTTP, always
 * through `this.helpers.httpRequestWithAuthentication` with the family's credential.
 *
 * - Paths follow each family's slash rule (`servicePath`).
 * - At most `concurrency` requests are in flight across all items; bodies are built inside the slot.
 * - Safe requests (GET, DELETE: every poll) are retried on 429, 5xx and connection errors with
 *   exponential backoff and jitter, honouring `Retry-After` (seconds or HTTP date). A create
 *   (POST/PUT) is retried only when the service certainly did not act on it: 429, or a connection
 *   refused before anything was sent — never after a timeout or a 5xx, so nothing is billed twice.
 * - Non-2xx answers become NodeApiErrors worded per `§v0-7` / `§unversioned-7`.
 * - Answers are checked (`answers.ts`): a 2xx must be the JSON the request expects, a 3xx outside a
 *   download is an error naming the Location's origin, and the credential's secrets are removed from
 *   every text the service sends (bodies, error bodies) before anything else sees it.
 * - Each attempt is aborted at min(Request Timeout, time left to the request's deadline), combined
 *   with the execution's cancel signal, so a hanging or dripping answer cannot outlive either.
 * - Cancelling the execution (or `abort()`) aborts requests and retry waits at once.
 * - It keeps a ledger of the jobs and documents the service created (`created`), so a failed
 *   execution can name them.
 */
export class ExtractionServiceClient {
	private readonly limiter: Semaphore;

	private readonly credentials = new Map<ApiFamily, Promise<FamilyCredential>>();

	private readonly controller = new AbortController();

	private readonly memo = new Map<string, Promise<unknown>>();

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

	/**
	 * The family's credential, read once per execution: Base URL checked (an http(s) URL without a
	 * user or password, `§node`, Addresses and credentials), secrets collected.
	 */
	private async credential(family: ApiFamily, itemIndex: number): Promise<FamilyCredential> {
		let entry = this.credentials.get(family);
		if (!entry) {
			entry = this.ctx.getCredentials(CREDENTIAL_TYPE[family], itemIndex).then((c) => {
				const raw = String(c.baseUrl ?? '')
					.trim()
					.replace(/\/+$/, '');
				let parsed: URL | undefined;
				try {
					parsed = new URL(raw);
				} catch {
					parsed = undefined;
				}
				if (!parsed || !/^https?:$/.test(parsed.protocol) || !/^https?:\/\//i.test(raw)) {
					// Anything between "//" and "@" may be a password: never shown.
					throw new NodeOperationError(
						this.ctx.getNode(),
						`The credential's Base URL "${raw.replace(/\/\/[^/]*@/, '//…@')}" is not a valid http(s) URL`,
						{
							description: 'Write it with its scheme, for example https://api.example.com',
							itemIndex,
						},
					);
				}
				// A user and password in the Base URL would travel into every absolute URL the node
				// outputs (`*_absolute`) and into messages.
				if (parsed.username || parsed.password) {
					throw new NodeOperationError(
						this.ctx.getNode(),
						'The Base URL must not contain a user name or password',
						{
							description:
								'Remove "user:password@" from the credential\'s Base URL. The node authenticates with the API key or token only; a proxy that needs a login cannot be given one here.',
							itemIndex,
						},
					);
				}
				const secrets = Object.entries(c)
					.filter(
						([key, value]) =>
							key !== 'baseUrl' &&
							typeof value === 'string' &&
							value.trim().length >= MIN_SECRET_LENGTH,
					)
					.flatMap(([, value]) => [...new Set([String(value), String(value).trim()])])
					.sort((a, b) => b.length - a.length);
				const type = CREDENTIAL_TYPE[family];
				const saved = this.ctx.getNode().credentials?.[type];
				return {
					baseUrl: raw,
					secrets,
					decrypted: { id: saved?.id ?? '', name: saved?.name ?? '', type, data: c },
				};
			});
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
		for (let attempt = 0; ; attempt++) {
			this.throwIfCancelled(req.itemIndex);
			// Reads and polls before creates (`Semaphore`): a waiting job's poll is not queued behind them.
			const outcome = await this.limiter.run(
				async () => await this.attempt(req, url, family.decrypted),
				req.method === 'GET',
			);
			// A create the service accepted is returned even when the execution is stopping: its answer
			// names a job that exists (the caller records it before it stops).
			if (!(outcome.response && outcome.response.statusCode < 300 && !this.cancelSignal.aborted))
				this.throwIfCancelled(req.itemIndex);
			if (outcome.response && outcome.response.statusCode < 400)
				return this.answer<T>(req, url, outcome.response, family.secrets, outcome.cut);
			// A retried DELETE answered 404: the attempt whose answer was lost deleted it. Done.
			if (req.method === 'DELETE' && attempt > 0 && outcome.response?.statusCode === 404) {
				return {
					statusCode: 204,
					headers: lowerCaseHeaders(outcome.response.headers),
					url,
					body: undefined as T,
				};
			}

			const failed = this.classifyFailure(req, url, outcome, family.secrets);
			if (
				!failed.retryable ||
				attempt >= this.settings.maxRetries ||
				!this.canWait(req, attempt, failed.retryAfterMs)
			)
				throw failed.error();
			await cancellableSleep(
				this.retryDelay(attempt, failed.retryAfterMs, req.deadline),
				this.signal,
			).catch((e) => {
				throw this.cancelledError(e, req.itemIndex);
			});
		}
	}

	/**
	 * What a failed attempt means: whether it may be retried (429 always; 5xx and connection failures
	 * for safe requests; for creates, only when nothing was sent), how long the service asked to
	 * wait, and the error to throw when it is not retried (built only then).
	 */
	private classifyFailure(
		req: ServiceRequest,
		url: string,
		outcome: AttemptOutcome,
		secrets: string[],
	): { retryable: boolean; retryAfterMs?: number; error: () => Error } {
		const safe = req.method === 'GET' || req.method === 'DELETE';
		if (!outcome.response) {
			const code = outcome.timedOut ? 'ETIMEDOUT' : connectionErrorCode(outcome.error);
			return {
				retryable:
					code !== undefined && (NOT_SENT_CODES.has(code) || (safe && MAYBE_SENT_CODES.has(code))),
				error: () => this.connectionError(outcome.error, code, req, url, outcome.timedOut),
			};
		}
		const { response } = outcome;
		const status = response.statusCode;
		const retryAfterMs = parseRetryAfter(lowerCaseHeaders(response.headers)['retry-after']);
		return {
			retryable: status === 429 || (safe && status >= 500),
			retryAfterMs,
			error: () => {
				const raw = toBuffer(response.body);
				const decoded =
					decodeBody(raw, lowerCaseHeaders(response.headers)['content-type']) ??
					raw.toString('utf8');
				const text = redactText(decoded, secrets);
				const info = {
					family: req.family,
					method: req.method,
					resourceName: req.resourceName,
					resourceId: req.resourceId,
					itemIndex: req.itemIndex,
				};
				const error = errorForStatus(
					this.ctx.getNode(),
					status,
					parseErrorBody(text),
					info,
					retryAfterMs !== undefined ? Math.round(retryAfterMs / 1000) : undefined,
				);
				// Said after the service's text, which the error caps: a cut answer says so, always.
				if (outcome.cut)
					error.description = [
						error.description,
						`The service's answer was longer than ${MAX_ERROR_BODY_BYTES / 1024} KiB: only its start was read.`,
					]
						.filter(Boolean)
						.join(' ');
				return error;
			},
		};
	}

	/**
	 * GET of a binary resource; follows up to 5 redirects itself (`§v0-4.4`: 302 to the file
	 * URL). Each hop goes through `httpRequestWithAuthentication`, whose credential adds the secret
	 * only for the Base URL's origin: a pre-signed URL on another host never sees the key.
	 *
	 * @returns the final answer with the body as a Buffer and `url` the address that served it
	 * @throws NodeApiError for 4xx/5xx, a redirect without Location or to a non-http(s) address, or
	 *   more than 5 redirects
	 */
	async download(req: ServiceRequest): Promise<ServiceResponse<Buffer>> {
		let current: ServiceRequest = { ...req, method: 'GET', expect: 'binary' };
		const baseOrigin = originOf(await this.baseUrl(req.family, req.itemIndex));
		for (let hop = 0; hop <= 5; hop++) {
			const storage = hop > 0 ? originOf(current.path) : undefined;
			const response = await this.send<Buffer>(current).catch((error: unknown) => {
				// The storage a download was redirected to refused it: an expired or refused link, not
				// the service's credits or key (its answer never names the link's path or signature).
				const code = error instanceof NodeApiError ? error.httpCode : undefined;
				if (storage === undefined || storage === baseOrigin || (code !== '401' && code !== '403'))
					throw error;
				throw new NodeApiError(
					this.ctx.getNode(),
					{ status: Number(code) },
					{
						message: `The download link was refused or has expired (HTTP ${code} from ${storage})`,
						description:
							'The service sent the download on to its file storage, which refused the link (pre-signed links expire after a while). Read the resource again with Get for a fresh link, then download it again.',
						httpCode: code,
						itemIndex: req.itemIndex,
					},
				);
			});
			if (response.statusCode < 300 || response.statusCode >= 400) return response;
			const location = response.headers.location;
			if (!location) {
				throw new NodeApiError(
					this.ctx.getNode(),
					{ status: response.statusCode },
					{
						message: `The service answered HTTP ${response.statusCode} without a Location to download from`,
						itemIndex: req.itemIndex,
					},
				);
			}
			const next = new URL(location, response.url);
			if (next.protocol !== 'http:' && next.protocol !== 'https:') {
				throw new NodeApiError(
					this.ctx.getNode(),
					{ status: response.statusCode },
					{
						message: `The service redirected the download to a ${next.protocol.replace(':', '')} address, which the node does not follow`,
						description: 'Only http(s) redirects are followed.',
						itemIndex: req.itemIndex,
					},
				);
			}
			current = { ...current, path: next.toString(), qs: undefined };
		}
		throw new NodeApiError(
			this.ctx.getNode(),
			{},
			{ message: 'Too many redirects while downloading', itemIndex: req.itemIndex },
		);
	}

	/** One checked page of a list (`readPage`, pagination.ts). */
	async page(req: ServiceRequest, page: number, size: number): Promise<ListPage> {
		return await readPage(this, req, page, size);
	}

	/** Every item of a list, or up to `limit` (`readAll`, pagination.ts). */
	async getAll(req: ServiceRequest, returnAll: boolean, limit: number): Promise<IDataObject[]> {
		return await readAll(this, req, returnAll, limit);
	}

	/**
	 * The checked body of a 2xx (or, for binary, 3xx) answer: secrets removed, shape per `expect`.
	 *
	 * @throws NodeApiError (unusable) for a 3xx outside binary or an answer of the wrong shape
	 */
	private answer<T>(
		req: ServiceRequest,
		url: string,
		response: IN8nHttpFullResponse,
		secrets: string[],
		cut = false,
	): ServiceResponse<T> {
		const headers = lowerCaseHeaders(response.headers);
		const expected = req.expect ?? (req.method === 'DELETE' ? 'nothing' : 'object');
		const refused = {
			status: response.statusCode,
			method: req.method,
			itemIndex: req.itemIndex,
			resourceName: req.resourceName,
			resourceId: req.resourceId,
		};
		const base = { statusCode: response.statusCode, headers, url };
		if (expected === 'binary') return { ...base, body: toBuffer(response.body) as T };
		if (response.statusCode >= 300)
			throw redirectError(this.ctx.getNode(), refused, headers.location, url);
		if (cut)
			throw unusableAnswerError(
				this.ctx.getNode(),
				refused,
				`an answer larger than ${MAX_ANSWER_BYTES / (1024 * 1024)} MiB`,
				expected === 'objects' ? 'a JSON object or list' : 'a JSON object',
			);
		const decoded = decodeBody(toBuffer(response.body), headers['content-type']);
		if (decoded === undefined)
			throw unusableAnswerError(
				this.ctx.getNode(),
				refused,
				`an answer in a charset it cannot read (${capText(headers['content-type'] ?? '', 100)})`,
				'UTF-8 or another standard charset',
			);
		const text = redactText(decoded, secrets);
		const body = parseAnswer(this.node, refused, text, headers['content-type'] ?? '', expected);
		// A secret written with JSON escapes survives `redactText`: the parsed answer is copied with its
		// strings redacted only when one of them holds a secret (a walk that copies nothing otherwise).
		return { ...base, body: (holdsSecret(body, secrets) ? redactDeep(body, secrets) : body) as T };
	}

	/**
	 * One HTTP attempt, aborted at min(Request Timeout, time left to `req.deadline`) or when the
	 * execution is cancelled.
	 *
	 * The attempt's own signal reaches n8n-core through `withCancelSignal` (cancel-signal.ts). Should
	 * an n8n line honour neither that nor `abortSignal`, the wait still ends on time: the attempt
	 * also races its signal, leaving the request to finish on its own.
	 *
	 * Every answer is asked for as a stream (`encoding: 'stream'`, which n8n passes to axios as
	 * `responseType`, its body then the response stream) and read by `readCapped`: a 3xx or error
	 * answer up to `MAX_ERROR_BODY_BYTES`, a JSON answer up to `MAX_ANSWER_BYTES`, a download whole.
	 *
	 * @returns the answer (any status) with its body as a Buffer and `cut` when it went on beyond
	 *   its cap, or the failure and whether the attempt's own time ran out
	 */
	private async attempt(
		req: ServiceRequest,
		url: string,
		credentialsDecrypted: ICredentialsDecrypted,
	): Promise<AttemptOutcome> {
		if (this.signal.aborted) return { error: new CancelledError(), timedOut: false };
		// No request is started that could not be answered before its deadline.
		if (req.deadline !== undefined && req.deadline - Date.now() < MIN_ATTEMPT_MS)
			return { error: new CancelledError(), timedOut: true };
		// Whole ms within what a timer can wait (a fraction or more than about 24.8 days is a RangeError).
		const timeoutMs = Math.min(
			MAX_TIMER_MS,
			Math.max(
				1,
				Math.ceil(
					Math.min(
						this.settings.requestTimeoutMs,
						req.deadline === undefined ? Infinity : req.deadline - Date.now(),
					),
				),
			),
		);
		const stop = req.method === 'GET' || req.method === 'DELETE' ? this.signal : this.cancelSignal;
		const signal = AbortSignal.any([stop, AbortSignal.timeout(timeoutMs)]);
		let streamed: StreamedMultipart | undefined;
		let stopListening = (): void => undefined;
		try {
			const built = typeof req.body === 'function' ? await req.body() : req.body;
			// A streamed multipart body travels as a raw Readable with its own Content-Type/-Length.
			streamed = isStreamedMultipart(built) ? built : undefined;
			const body = streamed ? streamed.stream : built;
			const isJsonBody =
				body !== undefined && !streamed && !(body instanceof FormData) && !Buffer.isBuffer(body);
			const options: IHttpRequestOptions = {
				method: req.method,
				url,
				qs: req.qs,
				body: body as IHttpRequestOptions['body'],
				headers: {
					Accept: req.expect === 'binary' ? '*/*' : 'application/json',
					...(streamed?.headers ?? {}),
				},
				json: isJsonBody,
				returnFullResponse: true,
				ignoreHttpStatusErrors: true,
				disableFollowRedirect: true,
				timeout: timeoutMs,
				abortSignal: signal,
				// Every answer is streamed, so that no more of it is read than needed (`readCapped`).
				encoding: 'stream',
			};
			const aborted = new Promise<never>((_, reject) => {
				const onAbort = () => reject(new CancelledError());
				signal.addEventListener('abort', onAbort, { once: true });
				stopListening = () => signal.removeEventListener('abort', onAbort);
			});
			const request = this.ctx.helpers.httpRequestWithAuthentication.call(
				withCancelSignal(this.ctx, signal),
				CREDENTIAL_TYPE[req.family],
				options,
				{ credentialsDecrypted },
			) as Promise<IN8nHttpFullResponse>;
			request.catch(() => undefined); // settles on its own when the race below is lost
			const response = await Promise.race([request, aborted]);
			// A 3xx's or an error's body up to MAX_ERROR_BODY_BYTES (a download's too), a JSON answer
			// up to MAX_ANSWER_BYTES, a downloaded file whole; the rest is left unread.
			const cap =
				response.statusCode >= 300
					? MAX_ERROR_BODY_BYTES
					: req.expect === 'binary'
						? Infinity
						: MAX_ANSWER_BYTES;
			const read = readCapped(response.body, cap);
			read.catch(() => undefined);
			const { bytes, cut } = await Promise.race([read, aborted]);
			return { response: { ...response, body: bytes }, cut };
		} catch (error) {
			return { error, timedOut: signal.aborted && !stop.aborted };
		} finally {
			stopListening();
			// Closes the stored files when the service answered before reading the whole body.
			streamed?.stream.destroy();
		}
	}

	private retryDelay(
		attempt: number,
		retryAfterMs: number | undefined,
		deadline: number | undefined,
	): number {
		const { retryBaseDelayMs, retryMaxDelayMs } = this.settings;
		// The service's Retry-After wins when given; otherwise exponential backoff with ±20 % jitter.
		const backoff = retryBaseDelayMs * 2 ** attempt * (0.8 + Math.random() * 0.4);
		let delay = Math.min(retryAfterMs ?? backoff, retryMaxDelayMs);
		if (deadline !== undefined) delay = Math.min(delay, Math.max(0, deadline - Date.now()));
		return delay;
	}

	/** Whether a retry would still start before the request's deadline. */
	private canWait(req: ServiceRequest, attempt: number, retryAfterMs: number | undefined): boolean {
		if (req.deadline === undefined) return true;
		const earliest =
			Date.now() +
			Math.min(
				retryAfterMs ?? this.settings.retryBaseDelayMs * 2 ** attempt * 0.8,
				this.settings.retryMaxDelayMs,
			);
		return earliest < req.deadline;
	}

	private throwIfCancelled(itemIndex: number): void {
		if (this.signal.aborted) throw this.cancelledError(new CancelledError(), itemIndex);
	}

	private cancelledError(error: unknown, itemIndex: number): Error {
		if (error instanceof CancelledError) {
			return new NodeOperationError(this.ctx.getNode(), 'The execution was cancelled', {
				itemIndex,
			});
		}
		return error as Error;
	}

	private connectionError(
		error: unknown,
		code: string | undefined,
		req: ServiceRequest,
		url: string,
		ownTimeout = false,
	): Error {
		if (error instanceof NodeOperationError) return error;
		const host = safeHost(url);
		const timedOut =
			ownTimeout ||
			code === 'ECONNABORTED' ||
			code === 'ETIMEDOUT' ||
			/timeout/i.test(errorMessage(error));
		const atDeadline = ownTimeout && req.deadline !== undefined && Date.now() >= req.deadline - 50;
		const message = atDeadline
			? `The request to ${host} was still running at the wait deadline`
			: timedOut
				? `The request to ${host} timed out after ${Math.round(this.settings.requestTimeoutMs / 1000)} s`
				: `Could not reach the Extraction Service at ${host}${code ? `: ${CONNECTION_FAILURES[code] ?? 'connection failed'}` : ''}`;
		const description =
			req.method === 'POST' || req.method === 'PUT'
				? 'The request was not retried because the service may already have acted on it; check before running it again.'
				: 'Check the Base URL of the credential and that the service is reachable from n8n.';
		// Not under `code`: NodeApiError would swap our message for its generic text of that code.
		// A failure with a network code may pass (`TransientError`); anything else is definitive.
		return new (code !== undefined ? TransientError : NodeApiError)(
			this.ctx.getNode(),
			{ connectionError: code ?? 'UNKNOWN' },
			{ message, description, itemIndex: req.itemIndex },
		);
	}
}

/** What one HTTP attempt gave: an answer (any status), or the failure and whether the attempt's own time ran out. */
type AttemptOutcome =
	| {
			response: IN8nHttpFullResponse;
			error?: undefined;
			timedOut?: undefined;
			/** The body went on beyond what was read (see `readCapped`). */ cut?: boolean;
	  }
	| { response?: undefined; error: unknown; timedOut: boolean; cut?: undefined };

/** A job or document the service created: enough to fetch it again with Get. */
export interface CreatedResource {
	/** "Extract", "Parsing", "Extraction", "Document". */
	resourceName: string;
	id: string;
	itemIndex: number;
}

/**
 * Whether any string of a parsed JSON value (keys included) holds one of `secrets`, as it is or
 * URL-encoded (what `redactText` removes). Walked without recursion and without copying.
 */
function holdsSecret(value: unknown, secrets: readonly string[]): boolean {
	if (secrets.length === 0) return false;
	const forms = secrets.flatMap((secret) => [secret, encodeURIComponent(secret)]);
	const holds = (text: string): boolean => forms.some((form) => text.includes(form));
	const stack: unknown[] = [value];
	while (stack.length > 0) {
		const current = stack.pop();
		if (typeof current === 'string') {
			if (holds(current)) return true;
		} else if (current && typeof current === 'object') {
			for (const key of Object.keys(current)) {
				if (holds(key)) return true;
				stack.push((current as IDataObject)[key]);
			}
		}
	}
	return false;
}

/** An error body as text: JSON when it parses, else the text itself (HTML pages included). */
function parseErrorBody(text: string): unknown {
	if (!text.trim()) return undefined;
	try {
		const parsed: unknown = JSON.parse(text);
		// Too deep to walk (field messages, capping): kept as text.
		return nestedDeeperThan(parsed) ? text : parsed;
	} catch {
		return text;
	}
}
