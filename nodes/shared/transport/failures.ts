/**
 * The errors of attempts that failed (`docs/service-api.md` §node, Retries and Errors): an answer
 * ≥ 400 not retried (worded by `errorForStatus`), no answer (a connection failure or a timeout), a
 * request held by the service's Retry-After, a cancelled execution.
 */
import type { IN8nHttpFullResponse, INode } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { TransientError, nestedDeeperThan } from './answers';
import type { AttemptOutcome } from './attempt';
import { MAX_ERROR_BODY_BYTES, decodeBody, lowerCaseHeaders, toBuffer } from './body';
import {
	CONNECTION_FAILURES,
	connectionErrorCode,
	errorMessage,
	parseRetryAfter,
	safeHost,
} from './connection';
import { errorForStatus } from './errors';
import { UploadReadError } from './multipart-stream';
import { redactDeep } from './redact';
import { CancelledError } from './sleep';
import type { ClientSettings, ServiceRequest } from './types';

/**
 * The error for an answer ≥ 400 that is not retried (`errorForStatus`), its body decoded and
 * stripped of `secrets`; a body cut at `MAX_ERROR_BODY_BYTES` says so.
 */
export function failedAnswerError(
	node: INode,
	req: ServiceRequest,
	response: IN8nHttpFullResponse,
	secrets: readonly string[],
	retryAfterMs: number | undefined,
	cut: boolean | undefined,
): NodeApiError {
	const raw = toBuffer(response.body);
	const headers = lowerCaseHeaders(response.headers);
	const text = decodeBody(raw, headers['content-type']) ?? raw.toString('utf8');
	// Parsed first, then redacted: a secret written with JSON escapes is plain once parsed.
	const body = redactDeep(parseErrorBody(text), secrets);
	const error = errorForStatus(
		node,
		response.statusCode,
		body,
		req,
		retryAfterMs !== undefined ? Math.round(retryAfterMs / 1000) : undefined,
	);
	// A failure the service asked to wait for says until when (a 429, a 5xx with Retry-After).
	const status = response.statusCode;
	if (retryAfterMs !== undefined && (status === 429 || status >= 500))
		error.message = `${error.message}; it asks for no requests until ${isoSecond(Date.now() + retryAfterMs)}`;
	// Said after the service's text, which the error caps: a cut answer says so, always.
	if (cut)
		error.description = [
			error.description,
			`The service's answer was longer than ${MAX_ERROR_BODY_BYTES / 1024} KiB: only its start was read.`,
		]
			.filter(Boolean)
			.join(' ');
	return error;
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

/**
 * The error for an attempt that got no answer: a timeout (its own Request Timeout, or the wait's
 * deadline), or a connection failure worded per code. A create's error says it was not retried.
 *
 * @param ownTimeout whether the attempt's own timer ran out
 * @returns a `TransientError` when the failure has a network code (a poll may try again), else a
 *   NodeApiError; a NodeOperationError thrown inside the attempt as it is
 */
export function connectionError(
	node: INode,
	requestTimeoutMs: number,
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
			? `The request to ${host} timed out after ${Math.round(requestTimeoutMs / 1000)} s`
			: `Could not reach the Extraction Service at ${host}${code ? `: ${CONNECTION_FAILURES[code] ?? 'connection failed'}` : ''}`;
	const description =
		req.method === 'POST' || req.method === 'PUT'
			? 'The request was not retried because the service may already have acted on it; check before running it again.'
			: 'Check the Base URL of the credential and that the service is reachable from n8n.';
	// Not under `code`: NodeApiError would swap our message for its generic text of that code.
	// A failure with a network code may pass (`TransientError`); anything else is definitive.
	return new (code !== undefined ? TransientError : NodeApiError)(
		node,
		{ connectionError: code ?? 'UNKNOWN' },
		{ message, description, itemIndex: req.itemIndex },
	);
}

/** "The execution was cancelled" for a `CancelledError`; any other error as it is. */
export function cancelledError(node: INode, error: unknown, itemIndex: number): Error {
	if (error instanceof CancelledError)
		return new NodeOperationError(node, 'The execution was cancelled', { itemIndex });
	return error as Error;
}

/**
 * The error of a request not sent because the service asked for no requests until `until` (epoch
 * ms, its `Retry-After`), longer than the node waits before a retry or past the request's
 * deadline. A `TransientError`: a poll tries again at its next time (and waits again, if still held).
 */
export function rateLimitedError(
	node: INode,
	req: ServiceRequest,
	until: number,
	status: number,
	retryMaxDelayMs: number,
): NodeApiError {
	const when = isoSecond(until);
	const longer =
		until - Date.now() > retryMaxDelayMs
			? `longer than the node waits before a retry (${Math.round(retryMaxDelayMs / 1000)} s)`
			: 'past the time this request may take (Wait Timeout)';
	const created = req.method === 'POST' || req.method === 'PUT' ? ' Nothing was created.' : '';
	return new TransientError(
		node,
		{ status },
		{
			message: `The service asks for no requests until ${when} (HTTP ${status})`,
			description: `Its Retry-After is ${longer}, so the request was not sent.${created} Run the workflow again after that time, or lower the Concurrency option so fewer requests are sent at once.`,
			httpCode: String(status),
			itemIndex: req.itemIndex,
		},
	);
}

/**
 * The error of an attempt that is not retried: `failedAnswerError` for an answer,
 * `connectionError` for none.
 *
 * @param url the URL the attempt was sent to
 */
export function failedAttemptError(
	node: INode,
	settings: ClientSettings,
	req: ServiceRequest,
	url: string,
	outcome: AttemptOutcome,
	secrets: readonly string[],
): Error {
	const { response } = outcome;
	if (outcome.local) return uploadError(node, req, outcome.error);
	if (!response) {
		const code = outcome.timedOut ? 'ETIMEDOUT' : connectionErrorCode(outcome.error);
		return connectionError(
			node,
			settings.requestTimeoutMs,
			outcome.error,
			code,
			req,
			url,
			outcome.timedOut,
		);
	}
	const retryAfterMs = parseRetryAfter(lowerCaseHeaders(response.headers)['retry-after']);
	return failedAnswerError(node, req, response, secrets, retryAfterMs, outcome.cut);
}

/**
 * The error of a request whose body could not be built or read (an `UploadReadError`: the file's
 * storage failed, or it did not hold the size its metadata gives). Nothing, or not the whole body,
 * was sent: the service created nothing.
 */
function uploadError(node: INode, req: ServiceRequest, error: unknown): NodeOperationError {
	const file = error instanceof UploadReadError ? ` (${error.fileName})` : '';
	return new NodeOperationError(
		node,
		`Could not read the file to upload${file}: ${errorMessage(error) || 'the read failed'}`,
		{
			description:
				'The upload stopped before the file was sent whole, so the service created nothing. Check the binary property (the file n8n stored for this item) and run the workflow again.',
			itemIndex: req.itemIndex,
		},
	);
}

/** Epoch ms as an ISO 8601 instant to the second, rounded up ("2026-11-28T17:00:00Z"). */
function isoSecond(ms: number): string {
	return new Date(Math.ceil(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
