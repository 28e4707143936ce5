/**
 * The retry policy (`docs/service-api.md` §node, Retries): which failed attempts are tried again,
 * and after how long.
 *
 * - Safe requests (GET, DELETE: every poll) are retried on 429, 5xx and connection errors.
 * - A create (POST/PUT) is retried only when the service certainly did not act on it: 429, or a
 *   connection refused before anything was sent — never after a timeout or a 5xx, so nothing is
 *   billed twice.
 * - The delay is exponential backoff with ±20 % jitter, or the service's `Retry-After`.
 */
import type { AttemptOutcome } from './attempt';
import { lowerCaseHeaders } from './body';
import {
	MAYBE_SENT_CODES,
	NOT_SENT_CODES,
	connectionErrorCode,
	parseRetryAfter,
} from './connection';
import type { ClientSettings, ServiceRequest } from './types';

/** What a failed attempt means for the next one. */
export interface FailureVerdict {
	/** Whether the request may be sent again (within Max Retries and its deadline). */
	retryable: boolean;
	/** How long the service asked to wait (ms, its `Retry-After`), if it said. */
	retryAfterMs?: number;
	/** The connection error's code (ECONNRESET, …), when no answer came. */
	code?: string;
}

/**
 * Whether a failed attempt (an answer ≥ 400, or no answer) may be retried: 429 always; 5xx and
 * connection failures for safe requests; for creates, only when nothing was sent.
 */
export function classify(req: ServiceRequest, outcome: AttemptOutcome): FailureVerdict {
	const safe = req.method === 'GET' || req.method === 'DELETE';
	if (!outcome.response) {
		const code = outcome.timedOut ? 'ETIMEDOUT' : connectionErrorCode(outcome.error);
		return {
			retryable:
				code !== undefined && (NOT_SENT_CODES.has(code) || (safe && MAYBE_SENT_CODES.has(code))),
			code,
		};
	}
	const status = outcome.response.statusCode;
	return {
		retryable: status === 429 || (safe && status >= 500),
		retryAfterMs: parseRetryAfter(lowerCaseHeaders(outcome.response.headers)['retry-after']),
	};
}

/**
 * The wait before retry number `attempt + 1` (ms): the service's Retry-After when given, else
 * exponential backoff (`retryBaseDelayMs` × 2^attempt, ±20 % jitter); at most `retryMaxDelayMs`
 * and the time left to `deadline` (epoch ms).
 */
export function retryDelay(
	settings: ClientSettings,
	attempt: number,
	retryAfterMs: number | undefined,
	deadline: number | undefined,
): number {
	const backoff = settings.retryBaseDelayMs * 2 ** attempt * (0.8 + Math.random() * 0.4);
	let delay = Math.min(retryAfterMs ?? backoff, settings.retryMaxDelayMs);
	if (deadline !== undefined) delay = Math.min(delay, Math.max(0, deadline - Date.now()));
	return delay;
}

/** Whether retry number `attempt + 1` would still start before the request's deadline. */
export function canWait(
	settings: ClientSettings,
	req: ServiceRequest,
	attempt: number,
	retryAfterMs: number | undefined,
): boolean {
	if (req.deadline === undefined) return true;
	const earliest =
		Date.now() +
		Math.min(
			retryAfterMs ?? settings.retryBaseDelayMs * 2 ** attempt * 0.8,
			settings.retryMaxDelayMs,
		);
	return earliest < req.deadline;
}
