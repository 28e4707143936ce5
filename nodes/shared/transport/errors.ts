/**
 * The words for the service's answers ≥ 400 (`docs/service-api.md` §node, Errors), per the status
 * tables of `§v0-7` and `§unversioned-7`, and the bounded copy of a body an error keeps.
 */
import type { IDataObject, INode, JsonObject } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { TransientError, capText, htmlText, looksLikeHtml } from './answers';
import type { ApiFamily } from './families';
import { setOwn } from './redact';

/** What the transport knows about a request when it turns a failed answer into an error. */
export interface FailedRequestInfo {
	family: ApiFamily;
	method: string;
	/** Human name of the addressed resource, e.g. "Extract" (for 404 messages). */
	resourceName?: string;
	/** Identifier in the path, if any (for 404 messages). */
	resourceId?: string;
	itemIndex?: number;
}

/**
 * Formats a Django REST style field-error body (`§v0-7` 400, `§unversioned-7` 400/403):
 * `{ field: "msg" | ["msg", …], detail?: "…" }` → `"field: msg; other: msg1, msg2"`.
 *
 * @param body parsed JSON body of the answer (anything; non-objects give "")
 * @returns one line, fields in the order the service sent them
 */
export function formatFieldErrors(body: unknown): string {
	if (typeof body === 'string') return looksLikeHtml(body) ? htmlText(body) : body.trim();
	if (!body || typeof body !== 'object' || Array.isArray(body)) return '';
	const parts: string[] = [];
	for (const [field, value] of Object.entries(body as IDataObject)) {
		const messages = Array.isArray(value) ? value.map((v) => stringify(v)) : [stringify(value)];
		if (field === 'detail' || field === 'non_field_errors') parts.push(messages.join(', '));
		else parts.push(`${field}: ${messages.join(', ')}`);
	}
	return parts.join('; ');
}

function stringify(value: unknown): string {
	if (typeof value === 'string') return value;
	if (value && typeof value === 'object') return formatFieldErrors(value) || JSON.stringify(value);
	return String(value);
}

/**
 * True when a 401 body of the token family says the token expired (`§unversioned-7`:
 * `code` and `messages[].message`).
 */
function tokenExpired(body: IDataObject): boolean {
	const texts = [body.detail, body.code];
	if (Array.isArray(body.messages)) {
		for (const m of body.messages as IDataObject[]) texts.push(m?.message);
	}
	return texts.some((t) => typeof t === 'string' && /expired/i.test(t));
}

/**
 * Builds the error a user sees for a non-2xx answer, per the status table of `§v0-7` and
 * `§unversioned-7`. The body is the service's JSON (never the request, which holds secrets),
 * already redacted by the client; its text is capped here (`MAX_SERVICE_TEXT` in messages, a bounded
 * copy as the error's cause), so a 5 MB error page cannot become a 5 MB error.
 *
 * @param node the node, for NodeApiError
 * @param status HTTP status code
 * @param body parsed answer body (object, string or undefined)
 * @param info the request it answered
 * @param retryAfterSeconds for 429, how long the service asked to wait
 * @returns a NodeApiError carrying `httpCode` and `itemIndex` (a `TransientError` for 429 and 5xx)
 */
export function errorForStatus(
	node: INode,
	status: number,
	body: unknown,
	info: FailedRequestInfo,
	retryAfterSeconds?: number,
): NodeApiError {
	const obj: IDataObject =
		body && typeof body === 'object' && !Array.isArray(body) ? (body as IDataObject) : {};
	const details = capText(formatFieldErrors(body));
	const what = info.resourceName
		? `${info.resourceName}${info.resourceId ? ` ${info.resourceId}` : ''}`
		: 'The resource';
	let message: string;
	let description: string | undefined = details || undefined;

	switch (true) {
		case status === 400:
			message = `The service rejected the request: ${details || 'invalid fields'}`;
			break;
		case status === 401 && info.family === 'unversioned':
			if (tokenExpired(obj)) {
				message = 'The token has expired';
				description = `Create a new token in the Extraction Service dashboard and update the "Extraction Service Token API" credential. Service said: ${details}`;
			} else {
				message = 'The token is missing or invalid';
				description = `Check the token of the "Extraction Service Token API" credential (it is sent without a "Bearer" prefix). Service said: ${details}`;
			}
			break;
		case status === 401:
			message = 'The API key is missing or invalid';
			description = `Check the API key of the "Extraction Service API" credential. Service said: ${details}`;
			break;
		// The service's own 403 is about credits (§unversioned-7); any other (a firewall's page, a
		// permission denial) is worded as what it is.
		case status === 403 && ('credits' in obj || /credit/i.test(details)):
			message = `Insufficient credits: ${details}`;
			description =
				"Top up the account's credits in the Extraction Service dashboard, then run the workflow again.";
			break;
		case status === 403:
			message = `Access denied (HTTP 403)${details ? `: ${details}` : ''}`;
			description =
				"The service, or something in front of it (a firewall, a proxy), refused this request. Check that the credential's key or token may do this, and that n8n may reach the service's API from where it runs.";
			break;
		case status === 404:
			message = `${what} was not found`;
			break;
		case status === 429:
			message = 'The service is rate limiting requests (HTTP 429)';
			description = `Retries were exhausted${retryAfterSeconds !== undefined ? `; the service asked to wait ${retryAfterSeconds} s` : ''}. Lower the Concurrency option or raise Max Retries.`;
			break;
		case status >= 500:
			message = `The service failed with HTTP ${status}`;
			break;
		default:
			message = `The service answered HTTP ${status}${details ? `: ${details}` : ''}`;
	}

	// 429 and 5xx may pass: a poll tries again later (`TransientError`).
	const ErrorClass = status === 429 || status >= 500 ? TransientError : NodeApiError;
	return new ErrorClass(node, boundedBody(body, status), {
		message,
		description,
		httpCode: String(status),
		itemIndex: info.itemIndex,
	});
}

/** Longest string kept in the service body attached to an error (characters). */
const MAX_BODY_STRING = 1_000;

/** Largest service body attached to an error as it is (characters of JSON); larger ones are summarised. */
const MAX_BODY_JSON = 10_000;

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

/**
 * An error as n8n expects a node's: a NodeApiError or NodeOperationError as it is (the client's),
 * anything else wrapped in a NodeOperationError (with the item's index, when given).
 */
export function asNodeError(
	node: INode,
	error: unknown,
	itemIndex?: number,
): NodeApiError | NodeOperationError {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) return error;
	return new NodeOperationError(node, error instanceof Error ? error : String(error), {
		...(itemIndex === undefined ? {} : { itemIndex }),
	});
}

/** Whether an error is the service's 404 (a page past the end, a resource deleted meanwhile). */
export function isNotFound(error: unknown): boolean {
	return error instanceof NodeApiError && String(error.httpCode) === '404';
}
