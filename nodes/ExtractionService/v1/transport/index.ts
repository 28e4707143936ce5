import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	IHttpRequestOptions,
	ILoadOptionsFunctions,
	IN8nHttpFullResponse,
} from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { Semaphore } from '../helpers/concurrency';
import { isStreamedMultipart, type StreamedMultipart } from '../helpers/multipart-stream';
import { CancelledError, cancellableSleep } from '../helpers/sleep';
import { errorForStatus } from './errors';
import { CREDENTIAL_TYPE, type ApiFamily } from './families';

export { CREDENTIAL_TYPE, servicePath, type ApiFamily } from './families';

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
	/** Epoch ms after which no retry is started (the Wait for Completion deadline). */
	deadline?: number;
	/** Return the body as a Buffer instead of parsed JSON. */
	binary?: boolean;
	/** Headers besides authentication (which the credential adds). */
	headers?: IDataObject;
}

/** A 2xx or 3xx answer. `body` is parsed JSON, a Buffer (binary), or undefined when empty. */
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

export const DEFAULT_CLIENT_SETTINGS: ClientSettings = {
	concurrency: 5,
	maxRetries: 3,
	requestTimeoutMs: 300_000,
	retryBaseDelayMs: 1_000,
	retryMaxDelayMs: 30_000,
};

/** Connection error codes that mean the request never reached the service. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** Connection error codes after which the service may or may not have acted. */
const MAYBE_SENT_CODES = new Set([
	'ECONNRESET',
	'ETIMEDOUT',
	'ECONNABORTED',
	'EPIPE',
	'ESOCKETTIMEDOUT',
	'UND_ERR_SOCKET',
	'ERR_STREAM_PREMATURE_CLOSE',
]);

/**
 * Words for connection error codes. The codes themselves stay out of messages: n8n's NodeError
 * replaces any message containing one with its own generic text.
 */
const CONNECTION_FAILURES: Record<string, string> = {
	ECONNREFUSED: 'the connection was refused',
	ENOTFOUND: 'the host name was not found',
	EAI_AGAIN: 'the host name could not be resolved',
	EHOSTUNREACH: 'the host is unreachable',
	ENETUNREACH: 'the network is unreachable',
	ECONNRESET: 'the connection was closed by the server',
	EPIPE: 'the connection was closed by the server',
	UND_ERR_SOCKET: 'the connection was closed by the server',
	ERR_STREAM_PREMATURE_CLOSE: 'the connection was closed by the server',
};

type Context = IExecuteFunctions | ILoadOptionsFunctions;

/** Errors of failures that may pass (429, 5xx, connection): a poll that meets one is tried again later. */
const transientErrors = new WeakSet<object>();

/** Whether `error` came from a transient failure (429, 5xx or a connection error) after retries. */
export function isTransientError(error: unknown): boolean {
	return typeof error === 'object' && error !== null && transientErrors.has(error);
}

function markTransient<E extends object>(error: E, transient: boolean): E {
	if (transient) transientErrors.add(error);
	return error;
}

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
 * - Non-2xx answers become NodeApiErrors worded per `v0-api.md §7` / `unversioned-api.md §7`.
 * - Cancelling the execution (or `abort()`) aborts requests and retry waits at once.
 */
export class ExtractionServiceClient {
	private readonly limiter: Semaphore;

	private readonly baseUrls = new Map<ApiFamily, Promise<string>>();

	private readonly controller = new AbortController();

	constructor(
		private readonly ctx: Context,
		readonly settings: ClientSettings = DEFAULT_CLIENT_SETTINGS,
	) {
		this.limiter = new Semaphore(settings.concurrency);
		const executionSignal = 'getExecutionCancelSignal' in ctx ? ctx.getExecutionCancelSignal?.() : undefined;
		if (executionSignal?.aborted) this.controller.abort();
		executionSignal?.addEventListener('abort', () => this.controller.abort(), { once: true });
		if ('onExecutionCancellation' in ctx && typeof ctx.onExecutionCancellation === 'function') {
			ctx.onExecutionCancellation(() => this.controller.abort());
		}
	}

	/** Aborted when the execution is cancelled or `abort()` is called (a sibling item failed). */
	get signal(): AbortSignal {
		return this.controller.signal;
	}

	/** Stops every request and wait of this execution (used when one item fails without Continue On Fail). */
	abort(): void {
		this.controller.abort();
	}

	/**
	 * Base URL of a family's credential without trailing slashes.
	 *
	 * @throws NodeOperationError when the Base URL is not an absolute http(s) URL
	 */
	async baseUrl(family: ApiFamily, itemIndex = 0): Promise<string> {
		let url = this.baseUrls.get(family);
		if (!url) {
			url = this.ctx.getCredentials(CREDENTIAL_TYPE[family], itemIndex).then((c) => {
				const raw = String(c.baseUrl ?? '').trim().replace(/\/+$/, '');
				let parsed: URL | undefined;
				try {
					parsed = new URL(raw);
				} catch {
					parsed = undefined;
				}
				if (!parsed || !/^https?:$/.test(parsed.protocol) || !/^https?:\/\//i.test(raw)) {
					throw new NodeOperationError(
						this.ctx.getNode(),
						`The credential's Base URL "${raw}" is not a valid http(s) URL`,
						{ description: 'Write it with its scheme, for example https://api.example.com', itemIndex },
					);
				}
				return raw;
			});
			url.catch(() => this.baseUrls.delete(family));
			this.baseUrls.set(family, url);
		}
		return await url;
	}

	/**
	 * Sends a request and returns the parsed JSON body of its 2xx answer.
	 *
	 * @throws NodeApiError for non-2xx answers and exhausted retries; NodeOperationError when cancelled
	 */
	async request<T = IDataObject>(req: ServiceRequest): Promise<T> {
		return (await this.send<T>(req)).body;
	}

	/**
	 * Sends a request and returns the whole 2xx/3xx answer (status, headers, body). Redirects are not
	 * followed here; see `download`.
	 *
	 * @throws NodeApiError for 4xx/5xx answers and exhausted retries; NodeOperationError when cancelled
	 */
	async send<T = unknown>(req: ServiceRequest): Promise<ServiceResponse<T>> {
		const url = /^https?:\/\//i.test(req.path) ? req.path : `${await this.baseUrl(req.family, req.itemIndex)}${req.path}`;
		const safe = req.method === 'GET' || req.method === 'DELETE' || req.method === 'HEAD';
		for (let attempt = 0; ; attempt++) {
			this.throwIfCancelled(req.itemIndex);
			let response: IN8nHttpFullResponse | undefined;
			let failure: unknown;
			try {
				response = await this.limiter.run(async () => await this.attempt(req, url));
			} catch (error) {
				failure = error;
			}
			this.throwIfCancelled(req.itemIndex);

			let retryAfterMs: number | undefined;
			let retryable: boolean;
			if (response) {
				const status = response.statusCode;
				if (status < 400) {
					return {
						statusCode: status,
						headers: lowerCaseHeaders(response.headers),
						body: (req.binary ? toBuffer(response.body) : parseJsonBody(response.body)) as T,
						url,
					};
				}
				retryAfterMs = parseRetryAfter(lowerCaseHeaders(response.headers)['retry-after']);
				retryable = status === 429 || (safe && status >= 500);
				if (!retryable || attempt >= this.settings.maxRetries || !this.canWait(req, attempt, retryAfterMs)) {
					const body = parseJsonBody(req.binary ? toBuffer(response.body).toString('utf8') : response.body);
					const error = errorForStatus(this.ctx.getNode(), status, body, {
						family: req.family,
						method: req.method,
						resourceName: req.resourceName,
						resourceId: req.resourceId,
						itemIndex: req.itemIndex,
					}, retryAfterMs !== undefined ? Math.round(retryAfterMs / 1000) : undefined);
					throw markTransient(error, status === 429 || status >= 500);
				}
			} else {
				const code = connectionErrorCode(failure);
				retryable = code !== undefined && (NOT_SENT_CODES.has(code) || (safe && MAYBE_SENT_CODES.has(code)));
				if (!retryable || attempt >= this.settings.maxRetries || !this.canWait(req, attempt, undefined)) {
					throw markTransient(this.connectionError(failure, code, req, url), code !== undefined);
				}
			}
			await cancellableSleep(this.retryDelay(attempt, retryAfterMs, req.deadline), this.signal).catch((e) => {
				throw this.cancelledError(e, req.itemIndex);
			});
		}
	}

	/**
	 * GET of a binary resource; follows up to 5 redirects itself (`v0-api.md §4.4`: 302 to the file
	 * URL). Each hop goes through `httpRequestWithAuthentication`, whose credential adds the secret
	 * only for the Base URL's origin: a pre-signed URL on another host never sees the key.
	 *
	 * @returns the final answer with the body as a Buffer and `url` the address that served it
	 * @throws NodeApiError for 4xx/5xx, a redirect without Location, or more than 5 redirects
	 */
	async download(req: ServiceRequest): Promise<ServiceResponse<Buffer>> {
		let current: ServiceRequest = { ...req, method: 'GET', binary: true };
		for (let hop = 0; hop <= 5; hop++) {
			const response = await this.send<Buffer>(current);
			if (response.statusCode < 300 || response.statusCode >= 400) return response;
			const location = response.headers.location;
			if (!location) {
				throw new NodeApiError(this.ctx.getNode(), { status: response.statusCode }, {
					message: `The service answered HTTP ${response.statusCode} without a Location to download from`,
					itemIndex: req.itemIndex,
				});
			}
			current = { ...current, path: new URL(location, response.url).toString(), qs: undefined };
		}
		throw new NodeApiError(this.ctx.getNode(), {}, { message: 'Too many redirects while downloading', itemIndex: req.itemIndex });
	}

	/**
	 * Reads every item of a paginated list (`v0-api.md §2.5`, `unversioned-api.md §2.4`): pages are
	 * requested with `page` (from 1) and `size` while the envelope's `next` is not null.
	 *
	 * @param limit maximum number of items when `returnAll` is false
	 * @returns the `results` items, in the service's order
	 */
	async getAll(req: ServiceRequest, returnAll: boolean, limit: number): Promise<IDataObject[]> {
		const results: IDataObject[] = [];
		const size = returnAll ? 100 : Math.min(Math.max(limit, 1), 100);
		for (let page = 1; ; page++) {
			const envelope = await this.request<IDataObject>({ ...req, qs: { ...(req.qs ?? {}), page, size } });
			const pageItems = Array.isArray(envelope.results) ? (envelope.results as IDataObject[]) : [];
			results.push(...pageItems);
			if (!returnAll && results.length >= limit) return results.slice(0, limit);
			if (!envelope.next || pageItems.length === 0) return results;
		}
	}

	private async attempt(req: ServiceRequest, url: string): Promise<IN8nHttpFullResponse> {
		const built = typeof req.body === 'function' ? await req.body() : req.body;
		// A streamed multipart body travels as a raw Readable with its own Content-Type/-Length.
		const streamed = isStreamedMultipart(built) ? built : undefined;
		const body = streamed ? streamed.stream : built;
		const isJsonBody = body !== undefined && !streamed && !(body instanceof FormData) && !Buffer.isBuffer(body);
		const options: IHttpRequestOptions = {
			method: req.method,
			url,
			qs: req.qs,
			body: body as IHttpRequestOptions['body'],
			headers: { Accept: req.binary ? '*/*' : 'application/json', ...(streamed?.headers ?? {}), ...(req.headers ?? {}) },
			json: isJsonBody,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			disableFollowRedirect: true,
			timeout: this.settings.requestTimeoutMs,
			abortSignal: this.signal,
			encoding: 'arraybuffer',
		};
		try {
			return (await this.ctx.helpers.httpRequestWithAuthentication.call(
				this.ctx,
				CREDENTIAL_TYPE[req.family],
				options,
			)) as IN8nHttpFullResponse;
		} finally {
			// Closes the stored files when the service answered before reading the whole body.
			streamed?.stream.destroy();
		}
	}

	private retryDelay(attempt: number, retryAfterMs: number | undefined, deadline: number | undefined): number {
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
		const earliest = Date.now() + Math.min(retryAfterMs ?? this.settings.retryBaseDelayMs * 2 ** attempt * 0.8, this.settings.retryMaxDelayMs);
		return earliest < req.deadline;
	}

	private throwIfCancelled(itemIndex: number): void {
		if (this.signal.aborted) throw this.cancelledError(new CancelledError(), itemIndex);
	}

	private cancelledError(error: unknown, itemIndex: number): Error {
		if (error instanceof CancelledError) {
			return new NodeOperationError(this.ctx.getNode(), 'The execution was cancelled', { itemIndex });
		}
		return error as Error;
	}

	private connectionError(error: unknown, code: string | undefined, req: ServiceRequest, url: string): Error {
		if (error instanceof NodeOperationError) return error;
		const host = safeHost(url);
		const timedOut = code === 'ECONNABORTED' || code === 'ETIMEDOUT' || /timeout/i.test(errorMessage(error));
		const message = timedOut
			? `The request to ${host} timed out after ${Math.round(this.settings.requestTimeoutMs / 1000)} s`
			: `Could not reach the Extraction Service at ${host}${code ? `: ${CONNECTION_FAILURES[code] ?? 'connection failed'}` : ''}`;
		const description =
			req.method === 'POST' || req.method === 'PUT'
				? 'The request was not retried because the service may already have acted on it; check before running it again.'
				: 'Check the Base URL of the credential and that the service is reachable from n8n.';
		// Not under `code`: NodeApiError would swap our message for its generic text of that code.
		return new NodeApiError(this.ctx.getNode(), { connectionError: code ?? 'UNKNOWN' }, { message, description, itemIndex: req.itemIndex });
	}
}

function safeHost(url: string): string {
	try {
		return new URL(url).host;
	} catch {
		return 'the service';
	}
}

function errorMessage(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

/**
 * Finds a Node.js connection error code (ECONNREFUSED, ECONNRESET, …) on an error thrown by n8n's
 * request helper, which may wrap the original error in `cause` (or `context.cause`, or `reason`).
 */
export function connectionErrorCode(error: unknown): string | undefined {
	const seen = new Set<unknown>();
	const queue: unknown[] = [error];
	while (queue.length) {
		const e = queue.shift();
		if (!e || typeof e !== 'object' || seen.has(e)) continue;
		seen.add(e);
		const o = e as IDataObject;
		for (const key of ['code', 'errno']) {
			const v = o[key];
			if (typeof v === 'string' && (NOT_SENT_CODES.has(v) || MAYBE_SENT_CODES.has(v))) return v;
		}
		queue.push(o.cause, o.reason, o.error, (o.context as IDataObject | undefined)?.cause);
	}
	if (/timeout of \d+ms exceeded/i.test(errorMessage(error))) return 'ECONNABORTED';
	if (/socket hang up/i.test(errorMessage(error))) return 'ECONNRESET';
	return undefined;
}

/**
 * Parses a `Retry-After` header: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
 *
 * @returns the wait in ms (≥ 0), or undefined when absent or unreadable
 */
export function parseRetryAfter(value: string | undefined): number | undefined {
	if (!value) return undefined;
	if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Math.round(parseFloat(value) * 1000);
	const date = Date.parse(value);
	return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function lowerCaseHeaders(headers: IDataObject | undefined): Record<string, string> {
	const out: Record<string, string> = {};
	for (const [k, v] of Object.entries(headers ?? {})) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
	return out;
}

function toBuffer(body: unknown): Buffer {
	if (Buffer.isBuffer(body)) return body;
	if (body instanceof ArrayBuffer) return Buffer.from(body);
	if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
	if (typeof body === 'string') return Buffer.from(body, 'utf8');
	if (body === undefined || body === null) return Buffer.alloc(0);
	return Buffer.from(JSON.stringify(body), 'utf8');
}

/** Answers are read as bytes (so downloads stay intact) and parsed here; empty bodies give undefined. */
function parseJsonBody(body: unknown): unknown {
	if (body === undefined || body === null) return undefined;
	if (typeof body === 'object' && !Buffer.isBuffer(body) && !(body instanceof ArrayBuffer) && !ArrayBuffer.isView(body)) {
		return body;
	}
	const text = toBuffer(body).toString('utf8');
	if (!text.trim()) return undefined;
	try {
		return JSON.parse(text);
	} catch {
		return text;
	}
}
