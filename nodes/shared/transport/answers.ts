import type { IDataObject, IN8nHttpFullResponse, INode } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { MAX_ANSWER_BYTES, decodeBody, lowerCaseHeaders, toBuffer } from './body';
import { topLevelIds } from './ids';
import { redactParsed, redactText } from './redact';
import type { Expected, ServiceRequest, ServiceResponse } from './types';

export type { Expected } from './types';

/**
 * How the node reads what the service sends back. Nothing from the network is trusted: a 2xx answer
 * must be the JSON the request expects, a redirect outside a download is an error, and every text
 * the service sends is stripped of the credential's secrets and capped before it reaches an error or
 * an item (README "Errors and retries", the guarantees this module keeps).
 */

/** Longest service text put into an error (characters). */
export const MAX_SERVICE_TEXT = 500;

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

/** What the node knows of an answer when it refuses it. */
export interface RefusedAnswer {
	status: number;
	method: string;
	itemIndex: number;
	/** Name of the resource a create makes or a read asks for ("Extract"), for the messages. */
	resourceName?: string;
	/** Id of the resource the request is about (a Get, a poll, a Delete), named in the error. */
	resourceId?: string;
	/** Ids of the resources a refused create's answer names at its top (`topLevelIds`), if any. */
	namedIds?: string[];
}

/** "It answered the request for Extract 1f2e…." when the request is about one resource, else undefined. */
function aboutResource(answer: RefusedAnswer): string | undefined {
	const name = answer.resourceName ?? 'the resource';
	if (answer.namedIds?.length) return `The answer names ${name} ${answer.namedIds.join(', ')}.`;
	return answer.resourceId
		? `It answered the request for ${name} ${answer.resourceId}.`
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
	// A job the service created is named, though its answer cannot be used (`topLevelIds`).
	const tooDeep = () =>
		unusableAnswerError(
			node,
			{ ...answer, namedIds: topLevelIds(text) },
			`JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
			wanted,
		);
	let parsed: unknown;
	try {
		parsed = JSON.parse(text);
	} catch (error) {
		// V8 gives up on JSON nested beyond its stack with a RangeError.
		if (error instanceof RangeError) throw tooDeep();
		throw unusableAnswerError(node, answer, 'text that is not JSON', wanted, text);
	}
	if (nestedDeeperThan(parsed)) throw tooDeep();
	if (expected === 'nothing') return parsed;
	const isObject = (v: unknown) => !!v && typeof v === 'object' && !Array.isArray(v);
	if (isObject(parsed)) return parsed;
	if (expected === 'objects' && Array.isArray(parsed) && parsed.every(isObject)) return parsed;
	const what =
		parsed === null ? 'null' : Array.isArray(parsed) ? 'a JSON list' : `a JSON ${typeof parsed}`;
	throw unusableAnswerError(node, answer, what, wanted, text);
}

/**
 * The checked body of a 2xx (or, for binary, 3xx) answer (`§node`, Checked answers): decoded,
 * secrets removed from its text and, once parsed, from its strings (escaped secrets included),
 * shape per `req.expect`.
 *
 * @param url the URL that gave the answer
 * @param cut whether the body went on beyond `MAX_ANSWER_BYTES`
 * @throws NodeApiError (unusable) for a 3xx outside binary, an answer cut at its cap, a charset
 *   the node cannot read, or the wrong shape (`parseAnswer`)
 */
export function checkAnswer<T>(
	node: INode,
	req: ServiceRequest,
	url: string,
	response: IN8nHttpFullResponse,
	secrets: readonly string[],
	cut = false,
): ServiceResponse<T> {
	const headers = lowerCaseHeaders(response.headers);
	const expected = req.expect ?? (req.method === 'DELETE' ? 'nothing' : 'object');
	const refused = { ...req, status: response.statusCode };
	const base = { statusCode: response.statusCode, headers, url };
	// A download's body as it came: a stream (`attempt.ts`) or, for a 3xx, the bytes read.
	if (expected === 'binary') return { ...base, body: response.body as T };
	if (response.statusCode >= 300) throw redirectError(node, refused, headers.location, url);
	if (cut)
		throw unusableAnswerError(
			node,
			refused,
			`an answer larger than ${MAX_ANSWER_BYTES / (1024 * 1024)} MiB`,
			expected === 'objects' ? 'a JSON object or list' : 'a JSON object',
		);
	const decoded = decodeBody(toBuffer(response.body), headers['content-type']);
	if (decoded === undefined)
		throw unusableAnswerError(
			node,
			refused,
			`an answer in a charset it cannot read (${capText(headers['content-type'] ?? '', 100)})`,
			'UTF-8 or another standard charset',
		);
	const text = redactText(decoded, secrets);
	const body = parseAnswer(node, refused, text, headers['content-type'] ?? '', expected);
	return { ...base, body: redactParsed(body, secrets) as T };
}
