/**
 * What a failed connection means (`§node`, Retries): whether the request reached the service, the
 * words for each code, the code itself however n8n wrapped it, and the service's `Retry-After`.
 */
import type { IDataObject } from 'n8n-workflow';

/** Connection error codes that mean the request never reached the service. */
export const NOT_SENT_CODES = new Set([
	'ECONNREFUSED',
	'ENOTFOUND',
	'EAI_AGAIN',
	'EHOSTUNREACH',
	'ENETUNREACH',
]);
/** Connection error codes after which the service may or may not have acted. */
export const MAYBE_SENT_CODES = new Set([
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
export const CONNECTION_FAILURES: Record<string, string> = {
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

/** An error's message, whatever was thrown. */
export function errorMessage(error: unknown): string {
	return error instanceof Error ? error.message : String(error);
}

/** The host of a URL for messages (`host:port`), or "the service". */
export function safeHost(url: string): string {
	try {
		return new URL(url).host;
	} catch {
		return 'the service';
	}
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
