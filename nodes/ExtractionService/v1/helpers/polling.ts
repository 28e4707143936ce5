import { cancellableSleep } from '../transport/sleep';

/** Timing of Wait for Completion. All durations in ms. */
export interface PollTiming {
	/** First wait after creation (`§v0-3 rule 3`: 2 to 5 s between polls). */
	firstDelayMs: number;
	/** Cap of the growing wait. */
	maxDelayMs: number;
	/** Growth factor per poll. */
	growth: number;
	/** Upward jitter as a fraction (0.2 = up to +20 %), so many jobs do not poll in lockstep. */
	jitter: number;
}

/**
 * 2 s, 2.5 s, 3.1 s, 3.9 s, 4.9 s, then 5 s. A gentle growth keeps the delay between a job
 * finishing and the node seeing it short for typical jobs of a few seconds (bench measure 1), while
 * long jobs still settle at one poll every 5 s.
 */
export const DEFAULT_POLL_TIMING: PollTiming = { firstDelayMs: 2_000, maxDelayMs: 5_000, growth: 1.25, jitter: 0.1 };

/**
 * Delay before poll number `n` (0-based): 2 s growing by `growth` to the 5 s cap, each raised by
 * up to `jitter` and never above the cap, so it always stays within the advised 2–5 s.
 */
export function pollDelay(n: number, timing: PollTiming = DEFAULT_POLL_TIMING, random = Math.random): number {
	const base = Math.min(timing.firstDelayMs * timing.growth ** n, timing.maxDelayMs);
	return Math.min(base * (1 + random() * timing.jitter), timing.maxDelayMs);
}

/** How long before the deadline the last poll starts (ms): a poll sent at the deadline could not be answered. */
export const LAST_POLL_MARGIN_MS = 1_000;

export interface PollOptions<T> {
	/** Reads the job once; `deadline` (epoch ms) bounds the read, its retries and its attempts. */
	fetch: (deadline: number) => Promise<T>;
	isFinal: (resource: T) => boolean;
	/** Epoch ms after which polling stops and the result is reported as timed out. */
	deadline: number;
	signal: AbortSignal;
	/**
	 * Errors for which this poll is skipped and the next one tried (transient failures, answers
	 * that cannot be used); any other error ends the wait.
	 */
	isSkippable?: (error: unknown) => boolean;
	timing?: PollTiming;
}

export interface PollResult<T> {
	/** The last state read successfully (the initial one if no poll succeeded). */
	resource: T;
	timedOut: boolean;
	/** The failure of the last poll, when it failed (skipped, or cut off by the deadline). */
	lastFailure?: unknown;
}

/**
 * Polls a job until `isFinal` holds or the deadline passes (`§v0-3 rule 3`,
 * `§unversioned-3 rule 1`). The wait before each poll follows `pollDelay`, shortened so the
 * last poll starts `LAST_POLL_MARGIN_MS` before the deadline (its reads are cut at the deadline). A poll that fails in a skippable way is skipped, and any poll
 * failing at the deadline ends the wait as timed out: the last good state is kept either way, so a
 * job's id is never lost to a bad answer.
 *
 * @param initial the resource as created (returned at once if already final)
 * @throws CancelledError when `signal` aborts; the fetch's own errors when not skippable before the deadline
 */
export async function pollUntilFinal<T>(initial: T, options: PollOptions<T>): Promise<PollResult<T>> {
	let resource = initial;
	let lastFailure: unknown;
	for (let n = 0; !options.isFinal(resource); n++) {
		const left = options.deadline - Date.now();
		if (left <= 0) return { resource, timedOut: true, lastFailure };
		// The last poll starts a little before the deadline, so it has time to be answered; once
		// inside that margin, the poll just made was the last.
		if (n > 0 && left <= LAST_POLL_MARGIN_MS) return { resource, timedOut: true, lastFailure };
		await cancellableSleep(Math.min(pollDelay(n, options.timing), Math.max(0, left - LAST_POLL_MARGIN_MS)), options.signal);
		const polled = await options.fetch(options.deadline).then(
			(value) => ({ value }),
			(error: unknown) => ({ error }),
		);
		if ('value' in polled) {
			resource = polled.value;
			lastFailure = undefined;
		} else if (!options.signal.aborted && (Date.now() >= options.deadline || options.isSkippable?.(polled.error))) {
			lastFailure = polled.error;
		} else {
			throw polled.error;
		}
	}
	return { resource, timedOut: false };
}
