import type { IDataObject, INode, JsonObject } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

/**
 * How the node reads what the service sends back. Nothing from the network is trusted: a 2xx answer
 * must be the JSON the request expects, a redirect outside a download is an error, and every text
 * the service sends is stripped of the credential's secrets and capped before it reaches an error or
 * an item (README "Errors and retries", the guarantees this module keeps).
 */

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

/** Longest service text put into an error (characters). */
export const MAX_SERVICE_TEXT = 500;

/** Longest string kept in the service body attached to an error (characters). */
const MAX_BODY_STRING = 1_000;

/** Largest service body attached to an error as it is (characters of JSON); larger ones are summarised. */
const MAX_BODY_JSON = 10_000;

/** What is put where a secret stood. */
export const REDACTED = '[redacted]';

/**
 * A failure that may pass (`§node`, Retries): 429, 5xx, a connection failure or a timeout. A poll
 * tries again later. Shown by n8n as the NodeApiError it is (`name` stays `NodeApiError`).
 */
export class TransientError extends NodeApiError {
	override name = 'NodeApiError';
}

/**
 * A 2xx/3xx answer the node cannot use (`§node`, Checked answers): HTML, not JSON, the wrong shape,
 * a redirect. A poll tries again later (a proxy glitch); any other request fails at once.
 */
export class UnusableAnswerError extends NodeApiError {
	override name = 'NodeApiError';
}

/**
 * Whether a poll may skip this failure and try again at its next time: a `TransientError` or an
 * `UnusableAnswerError`. Anything else (4xx, bad input) is definitive.
 */
export function isRetryLater(error: unknown): boolean {
	return error instanceof TransientError || error instanceof UnusableAnswerError;
}

/**
 * Removes secrets from a text: each secret, and its URL-encoded form, becomes `[redacted]`.
 *
 * @param secrets the credential's secret values (see `ExtractionServiceClient`)
 */
export function redactText(text: string, secrets: readonly string[]): string {
	let out = text;
	for (const secret of secrets) {
		out = out.split(secret).join(REDACTED);
		const encoded = encodeURIComponent(secret);
		if (encoded !== secret) out = out.split(encoded).join(REDACTED);
	}
	return out;
}

/**
 * Sets `key` on `out` as an own data property, whatever the key: a field named `__proto__` in a
 * service answer (parsed JSON has it as an own property) stays data instead of replacing the
 * object's prototype.
 */
export function setOwn(out: IDataObject, key: string, value: unknown): void {
	Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A parsed JSON value with every string (keys included) passed through `redactText` (`__proto__` keys kept as data). */
export function redactDeep<T>(value: T, secrets: readonly string[]): T {
	if (secrets.length === 0) return value;
	if (typeof value === 'string') return redactText(value, secrets) as T;
	if (Array.isArray(value)) return value.map((v) => redactDeep(v, secrets)) as T;
	if (value && typeof value === 'object') {
		const out: IDataObject = {};
		for (const [k, v] of Object.entries(value as IDataObject))
			setOwn(out, redactText(k, secrets), redactDeep(v, secrets));
		return out as T;
	}
	return value;
}

/**
 * Deepest nesting of objects and lists a JSON answer may have (the node walks answers to redact
 * secrets and to cap error bodies; a service's data is a few levels deep).
 */
export const MAX_JSON_DEPTH = 256;

/** Whether a parsed JSON value nests objects or lists deeper than `max` levels (walked without recursion). */
export function nestedDeeperThan(value: unknown, max: number = MAX_JSON_DEPTH): boolean {
	const stack: Array<[unknown, number]> = [[value, 1]];
	while (stack.length > 0) {
		const [current, depth] = stack.pop() as [unknown, number];
		if (!current || typeof current !== 'object') continue;
		if (depth > max) return true;
		for (const child of Object.values(current as IDataObject))
			if (child && typeof child === 'object') stack.push([child, depth + 1]);
	}
	return false;
}

/**
 * The key an id is matched by: its text, trimmed, in lower case. Ids are UUIDs (`§v0-1 rule 2`,
 * `§unversioned-1 rule 4`), whose hex digits have no letter case (RFC 9562 §4): a service may answer
 * the id it was asked for in upper case. Used wherever the node matches ids (an answer against the
 * id asked for, a list's items against those already read); outputs keep the id as the service sent
 * it (`§node`, Checked answers).
 *
 * @param id an id as the service or the user gave it (string or number)
 * @returns the key, '' for undefined or null
 */
export function idKey(id: unknown): string {
	return id === undefined || id === null ? '' : String(id).trim().toLowerCase();
}

/**
 * The encoding a body's byte-order mark names (UTF-8 `EF BB BF`, UTF-16 `FE FF` / `FF FE`), which
 * wins over the charset a `Content-Type` declares (WHATWG Encoding standard, "decode": a proxy may
 * label UTF-8 bytes ISO-8859-1).
 */
function encodingOfBom(bytes: Uint8Array): string | undefined {
	if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
	if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
	if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
	return undefined;
}

/**
 * The text of a body (`§node`, Checked answers): decoded by the encoding its byte-order mark names,
 * else by the charset its `Content-Type` declares, else as UTF-8; the mark itself is dropped.
 *
 * @param bytes the body as received
 * @param contentType the `Content-Type` header ('' when absent)
 * @returns the text, or undefined when the body has no mark and the declared charset is not one
 *   the WHATWG Encoding standard knows (the caller names it in its error)
 */
export function decodeBody(bytes: Uint8Array, contentType = ''): string | undefined {
	const label =
		encodingOfBom(bytes) ?? /charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1] ?? 'utf-8';
	let decoder: TextDecoder;
	try {
		decoder = new TextDecoder(label);
	} catch {
		return undefined;
	}
	return decoder.decode(bytes).replace(/^\uFEFF/, '');
}

/** Cuts a text to `max` characters, saying how much was left out. */
export function capText(text: string, max = MAX_SERVICE_TEXT): string {
	return text.length <= max
		? text
		: `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** Whether a text looks like an HTML page (a login portal, a proxy's error page, a web site). */
export function looksLikeHtml(text: string, contentType = ''): boolean {
	return /html/i.test(contentType) || /^\s*</.test(text);
}

/** The readable text of an HTML page: its title, or its text without tags, on one line. */
export function htmlText(html: string): string {
	const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
	const text = (
		title ?? html.replace(/<(script|style)[\s\S]*?<\/\1>/gi, ' ').replace(/<[^>]*>/g, ' ')
	)
		.replace(/\s+/g, ' ')
		.trim();
	return text;
}

/**
 * A service body made safe to attach to an error (NodeApiError keeps it as its cause, which n8n
 * stores with the execution): strings capped, and a body too large as a whole replaced by a summary.
 */
export function boundedBody(body: unknown, status: number): JsonObject {
	if (!body || typeof body !== 'object' || Array.isArray(body)) {
		return typeof body === 'string' && body
			? { status, body: capText(body, MAX_BODY_STRING) }
			: { status };
	}
	const capped = capStrings(body as IDataObject);
	const json = JSON.stringify(capped);
	return json.length <= MAX_BODY_JSON
		? (capped as JsonObject)
		: { status, body: capText(json, MAX_BODY_STRING) };
}

function capStrings(value: IDataObject): IDataObject {
	const out: IDataObject = {};
	for (const [k, v] of Object.entries(value)) {
		if (typeof v === 'string') setOwn(out, k, capText(v, MAX_BODY_STRING));
		else if (Array.isArray(v))
			setOwn(
				out,
				k,
				v.map((e) => (typeof e === 'string' ? capText(e, MAX_BODY_STRING) : e)),
			);
		else if (v && typeof v === 'object') setOwn(out, k, capStrings(v as IDataObject));
		else setOwn(out, k, v);
	}
	return out;
}

/** What the node knows of an answer when it refuses it. */
export interface RefusedAnswer {
	status: number;
	method: string;
	itemIndex: number;
	/** Name of the resource a create makes or a read asks for ("Extract"), for the messages. */
	resourceName?: string;
	/** Id of the resource the request is about (a Get, a poll, a Delete), named in the error. */
	resourceId?: string;
}

/** "It answered the request for Extract 1f2e…." when the request is about one resource, else undefined. */
function aboutResource(answer: RefusedAnswer): string | undefined {
	return answer.resourceId
		? `It answered the request for ${answer.resourceName ?? 'the resource'} ${answer.resourceId}.`
		: undefined;
}

/** Advice for an answer that does not come from the service's API. */
const CHECK_BASE_URL =
	'Check the Base URL of the credential: it must be the address the service answers its API on (scheme, host and port, no path).';

/**
 * The error for an answer the node cannot use (empty, null, not JSON, HTML, too deep, too large, the
 * wrong shape): names what came back, the resource the request was about (`resourceId`: a job's id,
 * so no error loses it) and, for a create, says the job may exist already. Carries the item index.
 * An `UnusableAnswerError`.
 *
 * @param what what came back, e.g. `an empty answer`, `null`, `an answer without "id"`
 * @param sample a short, already redacted sample of the answer, shown in the description
 */
export function unusableAnswerError(
	node: INode,
	answer: RefusedAnswer,
	what: string,
	expected: string,
	sample?: string,
): NodeApiError {
	const created = answer.method === 'POST' || answer.method === 'PUT';
	const parts = [
		aboutResource(answer),
		created
			? `The request was accepted (HTTP ${answer.status}), so the ${answer.resourceName ?? 'resource'} may already exist at the service: check with Get Many before running the workflow again.`
			: undefined,
		sample ? `The answer began: ${capText(sample, 200)}` : undefined,
		CHECK_BASE_URL,
	];
	return new UnusableAnswerError(
		node,
		{ status: answer.status },
		{
			message: `The service answered HTTP ${answer.status} with ${what} instead of ${expected}`,
			description: parts.filter(Boolean).join(' '),
			httpCode: String(answer.status),
			itemIndex: answer.itemIndex,
		},
	);
}

/**
 * The error for a 3xx answer outside a download: names the status, the origin of `Location` (never
 * its path or query, which may carry a signature) and the resource the request was about. An
 * `UnusableAnswerError`.
 *
 * @param location the Location header, resolved against `requestUrl`
 */
export function redirectError(
	node: INode,
	answer: RefusedAnswer,
	location: string | undefined,
	requestUrl: string,
): NodeApiError {
	let target = 'an address it did not give';
	if (location) {
		try {
			target = new URL(location, requestUrl).origin;
		} catch {
			target = 'an unreadable address';
		}
	}
	return new UnusableAnswerError(
		node,
		{ status: answer.status },
		{
			message: `The service answered HTTP ${answer.status}, a redirect to ${target}`,
			description: [
				aboutResource(answer),
				`The node follows redirects only for downloads. ${CHECK_BASE_URL} A redirect from http:// to https:// means the Base URL should start with https://.`,
			]
				.filter(Boolean)
				.join(' '),
			httpCode: String(answer.status),
			itemIndex: answer.itemIndex,
		},
	);
}

/**
 * Parses the body of a 2xx answer as the request expects it (`§node`, Checked answers). Parsed JSON
 * keeps a field named `__proto__` as an own data property (JSON.parse does; `redactDeep` and
 * `boundedBody` copy it with `setOwn`).
 *
 * @param text the body as text (already decoded by `decodeBody` and redacted)
 * @returns the parsed JSON (undefined for an empty body with `nothing`)
 * @throws NodeApiError (unusable) for an empty body, HTML, text that is not JSON, JSON nested
 *   deeper than `MAX_JSON_DEPTH` levels, or the wrong shape; each names the resource the request was
 *   about (`answer.resourceId`) and carries `answer.itemIndex`
 */
export function parseAnswer(
	node: INode,
	answer: RefusedAnswer,
	text: string,
	contentType: string,
	expected: Exclude<Expected, 'binary'>,
): unknown {
	const wanted =
		expected === 'objects'
			? 'a JSON object or list'
			: expected === 'nothing'
				? 'JSON or nothing'
				: 'a JSON object';
	if (!text.trim()) {
		if (expected === 'nothing') return undefined;
		throw unusableAnswerError(node, answer, 'an empty answer', wanted);
	}
	if (looksLikeHtml(text, contentType)) {
		throw unusableAnswerError(node, answer, 'an HTML page', 'JSON', htmlText(text));
	}
	let parsed: unknown;
	try {
		parsed = JSON.parse(text);
	} catch (error) {
		// V8 gives up on JSON nested beyond its stack with a RangeError.
		if (error instanceof RangeError)
			throw unusableAnswerError(
				node,
				answer,
				`JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
				wanted,
			);
		throw unusableAnswerError(node, answer, 'text that is not JSON', wanted, text);
	}
	if (nestedDeeperThan(parsed))
		throw unusableAnswerError(
			node,
			answer,
			`JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
			wanted,
		);
	if (expected === 'nothing') return parsed;
	const isObject = (v: unknown) => !!v && typeof v === 'object' && !Array.isArray(v);
	if (isObject(parsed)) return parsed;
	if (expected === 'objects' && Array.isArray(parsed) && parsed.every(isObject)) return parsed;
	const what =
		parsed === null ? 'null' : Array.isArray(parsed) ? 'a JSON list' : `a JSON ${typeof parsed}`;
	throw unusableAnswerError(node, answer, what, wanted, text);
}
