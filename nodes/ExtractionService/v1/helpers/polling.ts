import { sleep } from 'n8n-workflow';

import { CancelledError } from '../../../shared/transport/sleep';
import { PollLearner, scheduleIndex } from './poll-learning';

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
export const DEFAULT_POLL_TIMING: PollTiming = {
	firstDelayMs: 2_000,
	maxDelayMs: 5_000,
	growth: 1.25,
	jitter: 0.1,
};

/**
 * Delay before poll number `n` (0-based): 2 s growing by `growth` to the 5 s cap, each raised by
 * up to `jitter` and never above the cap, so it always stays within the advised 2–5 s.
 */
export function pollDelay(
	n: number,
	timing: PollTiming = DEFAULT_POLL_TIMING,
	random = Math.random,
): number {
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
	/**
	 * Most polls of the execution started at once (default `DEFAULT_POLLS_IN_FLIGHT`): the others
	 * wait in the scheduler as their due time only, not as requests queued for a slot.
	 */
	maxInFlight?: number;
	/**
	 * The kind of a job created in this execution (its resource name), whose polls teach the
	 * execution how long such jobs take and whose first poll waits for it (`poll-learning.ts`).
	 * Unset for a job read, not created (Get, Reuse Existing Job): its age is not known.
	 */
	learnAs?: string;
}

/** Most polls in flight at once when the options do not say (twice the default Concurrency). */
export const DEFAULT_POLLS_IN_FLIGHT = 10;

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
 * last poll starts `LAST_POLL_MARGIN_MS` before the deadline (its reads are cut at the deadline). A
 * poll that fails in a skippable way is skipped, and any poll failing at the deadline ends the wait
 * as timed out: the last good state is kept either way, so a job's id is never lost to a bad answer.
 *
 * Every job waiting under the same `signal` (one execution) shares one `PollScheduler`: one loop
 * wakes for the next poll due, whatever the number of jobs.
 *
 * @param initial the resource as created (returned at once if already final)
 * @throws CancelledError when `signal` aborts; the fetch's own errors when not skippable before the deadline
 */
export async function pollUntilFinal<T>(
	initial: T,
	options: PollOptions<T>,
): Promise<PollResult<T>> {
	let scheduler = SCHEDULERS.get(options.signal);
	if (!scheduler) SCHEDULERS.set(options.signal, (scheduler = new PollScheduler(options.signal)));
	return await scheduler.wait(initial, options);
}

/** One scheduler per execution, by its abort signal. */
const SCHEDULERS = new WeakMap<AbortSignal, PollScheduler>();

/** Longest single sleep of the scheduler's loop (ms): a stopped execution is noticed within it. */
const SLICE_MS = 200;

/** A job waiting in a `PollScheduler`: its state, the poll number, when its next poll is due (epoch ms), and its promise. */
interface Waiting<T> {
	options: PollOptions<T>;
	resource: T;
	n: number;
	due: number;
	/** When the wait began (epoch ms): the polls' times since the create are noted from it. */
	since: number;
	/** Whether the first wait was learned (`PollLearner.firstPollMs`): then no poll is skipped. */
	learned: boolean;
	/** Whether the job's first poll was skipped (`PollLearner.skips`). */
	skipped: boolean;
	/** Whether the job keeps today's schedule whatever is learned (`PollLearner.scout`). */
	scout: boolean;
	lastFailure?: unknown;
	resolve: (result: PollResult<T>) => void;
	reject: (error: unknown) => void;
}

/**
 * The waiting jobs of one execution, polled from one loop: a job is its state and the time of its
 * next poll, kept in a heap by that time; the loop sleeps until the earliest is due (at most
 * `SLICE_MS` at a time, so a stop is noticed), starts every poll that is due, and reschedules each
 * job when its poll has answered. Polls go through the client's concurrency limit like any request
 * (reads before creates, `transport/concurrency.ts`). Timing and outcome rules: `pollUntilFinal`.
 */
export class PollScheduler {
	private readonly heap: Array<Waiting<unknown>> = [];

	private looping = false;

	private inFlight = 0;

	private maxInFlight = DEFAULT_POLLS_IN_FLIGHT;

	/** How long this execution's jobs took, per kind: it times their first polls. */
	private readonly learner = new PollLearner((n) => {
		let at = 0;
		for (let i = 0; i <= n; i++) at += pollDelay(i, DEFAULT_POLL_TIMING, () => 0);
		return at;
	});

	constructor(private readonly signal: AbortSignal) {}

	/** Adds a job and resolves when it is final or timed out (see `pollUntilFinal`). */
	async wait<T>(initial: T, options: PollOptions<T>): Promise<PollResult<T>> {
		if (options.maxInFlight !== undefined) this.maxInFlight = Math.max(1, options.maxInFlight);
		return await new Promise<PollResult<T>>((resolve, reject) => {
			const since = Date.now();
			this.schedule({
				options,
				resource: initial,
				n: 0,
				due: 0,
				since,
				learned: false,
				skipped: false,
				scout: false,
				resolve,
				reject,
			} as Waiting<T>);
		});
	}

	/**
	 * Settles a job that is final or out of time, or puts it in the heap for its next poll, due
	 * today's wait (or the learned first one) after now.
	 */
	private schedule<T>(job: Waiting<T>): void {
		const { options } = job;
		if (options.isFinal(job.resource))
			return job.resolve({ resource: job.resource, timedOut: false });
		if (this.signal.aborted) return job.reject(new CancelledError());
		const left = options.deadline - Date.now();
		// The last poll starts a little before the deadline, so it has time to be answered; once
		// inside that margin, the poll just made was the last.
		if (left <= 0 || (job.n > 0 && left <= LAST_POLL_MARGIN_MS))
			return job.resolve({ resource: job.resource, timedOut: true, lastFailure: job.lastFailure });
		// The first wait is today's, or as long as this execution's jobs of the kind took; the next
		// ones are today's (`poll-learning.ts`: never more polls than today).
		let delay = pollDelay(job.n, options.timing);
		if (job.n === 0 && options.learnAs !== undefined) {
			job.scout = this.learner.scout(options.learnAs);
			const learned = job.scout ? undefined : this.learner.firstPollMs(options.learnAs, delay);
			job.learned = learned !== undefined && learned > delay;
			delay = learned ?? delay;
		}
		job.due = Date.now() + Math.min(delay, Math.max(0, left - LAST_POLL_MARGIN_MS));
		this.push(job as Waiting<unknown>);
		if (!this.looping) void this.loop();
	}

	/** Sleeps until the next poll is due and starts the due ones, while jobs wait. */
	private async loop(): Promise<void> {
		this.looping = true;
		try {
			while (this.heap.length > 0) {
				if (this.signal.aborted) {
					for (const job of this.heap.splice(0)) job.reject(new CancelledError());
					return;
				}
				this.startDue();
				if (this.heap.length === 0) break;
				// Until the next is due, or (all slots taken) until a poll ends and starts it.
				await sleep(Math.max(1, Math.min(this.heap[0].due - Date.now(), SLICE_MS)));
			}
		} finally {
			this.looping = false;
		}
	}

	/**
	 * Starts the polls that are due, as far as `maxInFlight` allows. A poll whose time came so late
	 * (a busy machine, all slots taken) that it would start inside the last `LAST_POLL_MARGIN_MS`
	 * is not started: the wait ends as timed out, as it would have after that poll. A first poll the
	 * execution's jobs show would find the job running is skipped (`PollLearner.skips`) while a full
	 * step is left before the deadline: the job waits for its next poll time.
	 */
	private startDue(): void {
		const now = Date.now();
		while (
			this.heap.length > 0 &&
			this.heap[0].due <= now &&
			this.inFlight < this.maxInFlight &&
			!this.signal.aborted
		) {
			const job = this.pop();
			const { options } = job;
			if (job.n > 0 && options.deadline - now < LAST_POLL_MARGIN_MS)
				job.resolve({ resource: job.resource, timedOut: true, lastFailure: job.lastFailure });
			else if (this.skips(job, now)) {
				// The first poll only (n is 0, no answer yet): the next comes today's next wait after now.
				job.skipped = true;
				job.n++;
				this.schedule(job);
			} else void this.poll(job);
		}
	}

	/** Whether the poll of `job` due now is skipped (see `startDue`). */
	private skips(job: Waiting<unknown>, now: number): boolean {
		const { learnAs, deadline, timing = DEFAULT_POLL_TIMING } = job.options;
		return (
			learnAs !== undefined &&
			// The first poll only: the polls after it stay 2–5 s apart, as §v0-3 rule 3 advises.
			job.n === 0 &&
			!job.learned &&
			!job.scout &&
			deadline - now > LAST_POLL_MARGIN_MS + timing.maxDelayMs &&
			// Ages within today's jitter count as the same age (a poll's wait varies by that much).
			this.learner.skips(learnAs, (now - job.since) / (1 + timing.jitter), false)
		);
	}

	/** One poll of a job, then its next step (and the next due poll in its slot). */
	private async poll<T>(job: Waiting<T>): Promise<void> {
		const { options } = job;
		this.inFlight++;
		let failed: unknown;
		const startedAt = Date.now();
		try {
			job.resource = await options.fetch(options.deadline);
			job.lastFailure = undefined;
			if (options.learnAs !== undefined) {
				const final = options.isFinal(job.resource);
				this.learner.note(
					options.learnAs,
					startedAt - job.since,
					final,
					scheduleIndex(job.n, final, job),
				);
			}
		} catch (error) {
			if (this.signal.aborted || !(Date.now() >= options.deadline || options.isSkippable?.(error)))
				failed = error ?? new Error('The poll failed');
			else job.lastFailure = error;
		} finally {
			this.inFlight--;
		}
		if (failed !== undefined) job.reject(failed);
		else {
			job.n++;
			this.schedule(job);
		}
		this.startDue();
	}

	private push(job: Waiting<unknown>): void {
		const heap = this.heap;
		heap.push(job);
		for (let i = heap.length - 1; i > 0;) {
			const parent = (i - 1) >> 1;
			if (heap[parent].due <= heap[i].due) break;
			[heap[parent], heap[i]] = [heap[i], heap[parent]];
			i = parent;
		}
	}

	private pop(): Waiting<unknown> {
		const heap = this.heap;
		const top = heap[0];
		const last = heap.pop() as Waiting<unknown>;
		if (heap.length > 0) {
			heap[0] = last;
			for (let i = 0; ;) {
				const left = 2 * i + 1;
				const right = left + 1;
				let smallest = i;
				if (left < heap.length && heap[left].due < heap[smallest].due) smallest = left;
				if (right < heap.length && heap[right].due < heap[smallest].due) smallest = right;
				if (smallest === i) break;
				[heap[smallest], heap[i]] = [heap[i], heap[smallest]];
				i = smallest;
			}
		}
		return top;
	}
}
