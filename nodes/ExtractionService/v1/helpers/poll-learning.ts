/**
 * What the jobs of one execution show about how long a kind of job takes (issue 33,
 * `docs/service-api.md` §node, Polling): every poll of a job created in the execution is noted with
 * its time since the create was answered and whether the job was final, and a new job's first poll
 * waits until the time by which such jobs have been seen final (`firstPollMs`).
 *
 * Only the first wait changes: the polls after it keep today's gaps (2.5 s growing to 5 s), so the
 * k-th poll of a job never comes before the k-th poll of today's schedule (a job is never polled more
 * often than today), and a job slower than the learned time is seen less than one gap later than
 * today's schedule would have seen it. The first wait is learned only while the jobs on today's
 * schedule take alike, and is capped by the fastest of them (`firstPollMs`). A job's first poll on
 * today's schedule is skipped when the execution's jobs of the kind were seen running at that age
 * or later (`skips`; the scheduler skips no other poll). All times in ms.
 */

/** Polls of each kind (final, still running) remembered: the most recent ones. */
export const MAX_NOTED = 200;

/** Jobs of a kind seen final before their times are used. */
export const MIN_FINISHED = 5;

/**
 * One job in this many keeps today's schedule, without a learned first wait or a skipped poll (a
 * scout): the jobs on it show whether the kind's jobs still take alike (`firstPollMs`).
 */
export const SCOUT_EVERY = 20;

/** The share of jobs seen final by a time taken as "by then they are final" (`firstPollMs`). */
const FINISHED_QUANTILE = 0.1;

/** The share of polls that found a job still running below which the running ones are ignored. */
const RUNNING_QUANTILE = 0.9;

/** One job in this many polls first halfway between the running and the final time (a probe). */
export const PROBE_EVERY = 5;

/** The value below which `share` of `values` lie (nearest rank); undefined for none. */
function quantile(values: number[], share: number): number | undefined {
	if (values.length === 0) return undefined;
	const sorted = [...values].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))];
}

/** The polls of one kind of job: times since the create at which jobs were final, or running. */
class KindTimes {
	readonly finished: number[] = [];

	readonly running: number[] = [];

	/**
	 * The polls of today's schedule (0-based) at which jobs on it (first wait not learned:
	 * `scheduleIndex`) were seen final: counted, not timed, so a busy machine's late polls do not
	 * move them.
	 */
	readonly onSchedule: number[] = [];

	/** The polls of today's schedule at which jobs on it were seen still running (as `onSchedule`). */
	readonly runningOnSchedule: number[] = [];

	/** The largest of `running` (undefined: to be computed again). */
	latestRunning?: number = -Infinity;

	/** First polls timed so far (every `PROBE_EVERY`-th is a probe). */
	timed = 0;

	/** Jobs started so far (every `SCOUT_EVERY`-th is a scout). */
	started = 0;

	note(elapsedMs: number, final: boolean, scheduleIndex: number | undefined): void {
		const add = (list: number[], value: number) => {
			list.push(value);
			if (list.length > MAX_NOTED) list.shift();
		};
		add(final ? this.finished : this.running, elapsedMs);
		if (scheduleIndex !== undefined)
			add(final ? this.onSchedule : this.runningOnSchedule, scheduleIndex);
		if (!final) this.latestRunning = undefined;
	}
}

/** The times of the jobs of one execution, per kind (e.g. "Extract"). */
export class PollLearner {
	private readonly kinds = new Map<string, KindTimes>();

	/**
	 * @param scheduleMs the time of today's poll number `n` (0-based) after the create, without
	 *   jitter (ms): 2,000, 4,500, 7,625, …
	 */
	constructor(private readonly scheduleMs: (n: number) => number) {}

	/**
	 * Notes one poll of a job created in this execution.
	 *
	 * @param kind the job kind (its resource name)
	 * @param elapsedMs time from the create's answer to the poll's start
	 * @param final whether the poll found the job final
	 * @param scheduleIndex for a job on today's schedule (its first wait not learned), the number of
	 *   this poll on it (0-based, `scheduleIndex`); undefined for any other job
	 */
	note(kind: string, elapsedMs: number, final: boolean, scheduleIndex: number | undefined): void {
		let times = this.kinds.get(kind);
		if (!times) this.kinds.set(kind, (times = new KindTimes()));
		times.note(elapsedMs, final, scheduleIndex);
	}

	/**
	 * When to poll a new job of `kind` first (ms after its create was answered), at least `todayMs`
	 * (today's first wait): undefined until `MIN_FINISHED` jobs of the kind were seen final.
	 *
	 * The time by which the jobs are final is the low quantile of the times they were seen final at
	 * (`finished`): the first poll goes there. Polls there only ever confirm it, so one job in
	 * `PROBE_EVERY` probes lower, halfway down to the high quantile of the times jobs were still
	 * running below it (`running`): final there, the finished times move down; running, the running
	 * ones move up. For jobs of one time the first poll settles just after it, with at most one probe
	 * in `PROBE_EVERY` polling twice.
	 *
	 * A job seen final at its learned first poll only says it was final by then, so with job times
	 * spread wide those times climb (bench measure 6: to 14–19 s for jobs of 3–30 s). So the first
	 * wait is learned only while the jobs on today's schedule (not learned, `scheduleIndex`:
	 * `onSchedule`, `runningOnSchedule`) were final at one poll of it or two next to each other —
	 * jobs that take alike — and it is never later than today's poll after the one that saw the fastest of them: a job as
	 * fast as that one is seen at most one of today's steps after today's schedule would see it.
	 * Jobs whose times spread wider keep today's schedule (with its skipped polls, `skips`).
	 */
	firstPollMs(kind: string, todayMs: number): number | undefined {
		const times = this.kinds.get(kind);
		if (!times || times.finished.length < MIN_FINISHED || times.onSchedule.length < MIN_FINISHED)
			return undefined;
		const fastest = Math.min(...times.onSchedule);
		// Alike: every job on today's schedule final by the poll after the fastest one's (one seen
		// running at a poll is final at the next at the earliest).
		const slowest = Math.max(...times.onSchedule, ...times.runningOnSchedule.map((n) => n + 1));
		if (slowest - fastest > 1) return undefined;
		const latest = this.scheduleMs(fastest + 1);
		const finished = quantile(times.finished, FINISHED_QUANTILE) as number;
		const running = quantile(
			times.running.filter((t) => t < finished),
			RUNNING_QUANTILE,
		);
		const probe = times.timed++ % PROBE_EVERY === 0 && running !== undefined;
		return Math.max(todayMs, Math.min(latest, probe ? (running + finished) / 2 : finished));
	}

	/**
	 * Whether a new job of `kind` is a scout: once `MIN_FINISHED` jobs of the kind were seen final
	 * (before, nothing is learned anyway), every `SCOUT_EVERY`-th. A scout keeps today's schedule,
	 * with no learned first wait and no skipped poll.
	 */
	scout(kind: string): boolean {
		const times = this.kinds.get(kind);
		if (!times || times.finished.length < MIN_FINISHED) return false;
		return times.started++ % SCOUT_EVERY === 0;
	}

	/**
	 * Whether a poll of today's schedule (for a job whose first wait was today's, not learned), due
	 * `ageMs` after the job's create was answered, is skipped — the job then waits for its next poll
	 * of today's schedule: when a job of the kind was seen still running at that age or later, and
	 * the job's previous poll was not skipped (`skippedLast`). So the job is never polled more often
	 * than today, its k-th poll comes no earlier than today's k-th, and between two of today's poll
	 * times it is polled at least once: it is seen at most one of today's steps after today's
	 * schedule would have seen it. Jobs created together thus leave the polls that show nothing but
	 * "running" to the oldest among them. The scheduler asks for a job's first poll only: the polls
	 * after it stay 2–5 s apart, as the reference advises (`docs/service-api.md` §v0-3 rule 3).
	 */
	skips(kind: string, ageMs: number, skippedLast: boolean): boolean {
		const times = this.kinds.get(kind);
		if (!times || skippedLast) return false;
		times.latestRunning ??= Math.max(-Infinity, ...times.running);
		return times.latestRunning >= ageMs;
	}
}

/**
 * The number on today's schedule (0-based) of poll `n` of a job, as `PollLearner.note` takes it, for
 * a job whose first wait was today's (not learned); undefined for a learned one. A job whose first
 * poll was skipped is on today's schedule from its next poll on (`n` counts the skipped one), except
 * that this next poll finding it final is not counted: it may have been final at the skipped one.
 * Found running there, the job's later polls count, so jobs created together, whose first polls are
 * nearly all skipped, teach the first wait as soon as they are final (bench measure 6: 6 s jobs
 * created in the first 15 s of 5,000 polled twice while only scouts taught it).
 *
 * @param n the poll's number, skipped polls counted (the scheduler's `n`)
 * @param final whether the poll found the job final
 * @param job whether the job's first wait was learned, and whether its first poll was skipped
 */
export function scheduleIndex(
	n: number,
	final: boolean,
	job: { learned: boolean; skipped: boolean },
): number | undefined {
	if (job.learned || (job.skipped && final && n <= 1)) return undefined;
	return n;
}

/**
 * The key a created job's polls are learned under (`PollLearner`): its kind, and the page count of
 * its document where the create's answer gives it (a parsing's `document.page_count`, §v0-2.3; an
 * extract's `parsing.document.page_count`, §v0-2.4) in buckets 1, 2, 3–4, 5–8, … — where a
 * service's time grows with pages, jobs of one bucket take alike. An extraction's answer
 * (§unversioned-2.1) names no page count: its kind alone.
 *
 * @param kind the job kind's resource name (e.g. "Extract")
 * @param created the create's answer
 * @returns e.g. "Extract", "Extract:3-4", "Parsing:1"
 */
export function learningKey(kind: string, created: Record<string, unknown>): string {
	const asObject = (value: unknown) =>
		value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
	const document = asObject(created.document) ?? asObject(asObject(created.parsing)?.document);
	const pages = document?.page_count;
	if (typeof pages !== 'number' || !Number.isInteger(pages) || pages < 1) return kind;
	if (pages <= 2) return `${kind}:${pages}`;
	const high = 2 ** Math.ceil(Math.log2(pages));
	return `${kind}:${high / 2 + 1}-${high}`;
}
