/**
 * The retry policy (`docs/service-api.md` §node, Retries): which failed attempts are tried again,
 * and after how long.
 *
 * - Safe requests (GET, DELETE: every poll) are retried on 429, 5xx and connection errors.
 * - A create (POST/PUT) is retried only when the service certainly did not act on it: 429, or a
 *   connection refused before anything was sent — never after a timeout or a 5xx, so nothing is
 *   billed twice.
 * - The delay is exponential backoff with ±20 % jitter. A `Retry-After` (429, 5xx; seconds or an
 *   HTTP date) holds every request of the family until that time (`Hold`): one that would have to
 *   wait longer than `retryMaxDelayMs`, or past its deadline, fails at once saying when.
 */
import type { AttemptOutcome } from './attempt';
import { lowerCaseHeaders } from './body';
import {
	MAYBE_SENT_CODES,
	NOT_SENT_CODES,
	connectionErrorCode,
	parseRetryAfter,
} from './connection';
import type { ApiFamily } from './families';
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
	if (outcome.local) return { retryable: false };
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
 * The backoff before retry number `attempt + 1` when the service said nothing (ms):
 * `retryBaseDelayMs` × 2^attempt, ±20 % jitter, at most `retryMaxDelayMs` and the time left to
 * `deadline` (epoch ms).
 */
export function retryDelay(
	settings: ClientSettings,
	attempt: number,
	deadline: number | undefined,
): number {
	const backoff = settings.retryBaseDelayMs * 2 ** attempt * (0.8 + Math.random() * 0.4);
	const delay = Math.min(backoff, settings.retryMaxDelayMs);
	return deadline === undefined ? delay : Math.min(delay, Math.max(0, deadline - Date.now()));
}

/** Whether retry number `attempt + 1` would still start before the request's deadline (backoff only). */
export function canWait(settings: ClientSettings, req: ServiceRequest, attempt: number): boolean {
	if (req.deadline === undefined) return true;
	const earliest =
		Date.now() + Math.min(settings.retryBaseDelayMs * 2 ** attempt * 0.8, settings.retryMaxDelayMs);
	return earliest < req.deadline;
}

/** The time before which the service asked for no request of a family (`Retry-After`). */
export interface Hold {
	/** Epoch ms. */
	until: number;
	/** The status that asked it (429, 503, …). */
	status: number;
}

/** The holds of one client, per family: the latest time each family's Retry-After asked for. */
export class Holds {
	private readonly byFamily = new Map<ApiFamily, Hold>();

	/**
	 * Notes the Retry-After of a failed answer (≥ 400) as a hold on the family. Called before the
	 * attempt gives its concurrency slot back, so no request queued behind it is sent in between.
	 */
	note(family: ApiFamily, outcome: AttemptOutcome): void {
		const response = outcome.response;
		if (!response || response.statusCode < 400) return;
		const wait = parseRetryAfter(lowerCaseHeaders(response.headers)['retry-after']);
		if (wait === undefined) return;
		const until = Date.now() + wait;
		const held = this.byFamily.get(family);
		if (!held || held.until < until)
			this.byFamily.set(family, { until, status: response.statusCode });
	}

	/**
	 * How long a request must wait for its family's hold before it is sent (ms, 0: none).
	 *
	 * @returns the hold itself when it ends after `retryMaxDelayMs` from now or at or after the
	 *   request's deadline: the request is not sent and fails saying when (`rateLimitedError`)
	 */
	wait(settings: ClientSettings, req: ServiceRequest): number | Hold {
		const hold = this.byFamily.get(req.family);
		const wait = hold ? hold.until - Date.now() : 0;
		if (!hold || wait <= 0) return 0;
		const late = req.deadline !== undefined && hold.until >= req.deadline;
		return wait > settings.retryMaxDelayMs || late ? hold : wait;
	}
}
