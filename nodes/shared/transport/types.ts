/**
 * The shapes the transport's modules share: a request as operations describe it, its answer, the
 * execution-wide settings, and what a module needs of the client (`Requester`), so that no module
 * imports the client itself (`docs/service-api.md` §node).
 */
import type {
	IDataObject,
	IExecuteFunctions,
	IHttpRequestMethods,
	ILoadOptionsFunctions,
	INode,
	IPollFunctions,
} from 'n8n-workflow';

import type { ApiFamily } from './families';
import type { StreamedMultipart } from './multipart-stream';

/** What a request expects back. */
export type Expected =
	/** A JSON object (most reads and creates). */
	| 'object'
	/** A JSON object or a list of JSON objects (creates that may answer a list, e.g. a list of URLs). */
	| 'objects'
	/** Nothing, or any JSON (Delete: the success body is not shown). HTML is still refused. */
	| 'nothing'
	/** Bytes (downloads): kept as they are, redirects allowed. */
	| 'binary';

/** The n8n contexts the client runs in: an execution, a list search, a trigger's poll. */
export type Context = IExecuteFunctions | ILoadOptionsFunctions | IPollFunctions;

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

/**
 * A downloaded file's body (`download.ts`): the answer's stream, read by whoever stores it
 * (`helpers/downloads.ts`), or its bytes on an n8n line that buffered them.
 */
export type DownloadBody = Buffer | (AsyncIterable<Uint8Array | string> & object);

/** Execution-wide transport settings, from the operation's Options. */
export interface ClientSettings {
	/** Requests in flight at once, all items together (waiting between polls holds no slot). */
	concurrency: number;
	/** Retries of one request after a retryable failure (`retry.ts`). */
	maxRetries: number;
	/** Timeout of one HTTP attempt, in ms. */
	requestTimeoutMs: number;
	/** Base delay of the exponential retry backoff, in ms (doubles per retry, ±20 % jitter). */
	retryBaseDelayMs: number;
	/** Upper bound of one retry delay, in ms (a longer Retry-After is not waited for, `retry.ts`). */
	retryMaxDelayMs: number;
}

/** Default of Concurrency (requests in flight at once). */
export const DEFAULT_CONCURRENCY = 5;
/** Default of Max Retries. */
export const DEFAULT_MAX_RETRIES = 3;
/** Default of Request Timeout, in seconds. */
export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 300;

/** The settings of a client made without Options (the trigger, list searches). */
export const DEFAULT_CLIENT_SETTINGS: ClientSettings = {
	concurrency: DEFAULT_CONCURRENCY,
	maxRetries: DEFAULT_MAX_RETRIES,
	requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_SECONDS * 1000,
	retryBaseDelayMs: 1_000,
	retryMaxDelayMs: 30_000,
};

/** What lists and downloads need of the client (`ExtractionServiceClient` is one). */
export interface Requester {
	/** The node, for the errors of answers. */
	readonly node: INode;
	/** A request's checked 2xx body (see `ExtractionServiceClient.request`). */
	request<T = IDataObject>(req: ServiceRequest): Promise<T>;
	/** A request's checked answer (see `ExtractionServiceClient.send`). */
	send<T = unknown>(req: ServiceRequest): Promise<ServiceResponse<T>>;
	/** A family's Base URL, checked (see `ExtractionServiceClient.baseUrl`). */
	baseUrl(family: ApiFamily, itemIndex?: number): Promise<string>;
}
