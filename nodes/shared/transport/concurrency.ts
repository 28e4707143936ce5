/**
 * A counting semaphore with two queues: at most `size` tasks run at once; waiting tasks start in
 * arrival order within their queue, `urgent` ones first (polls and reads, so that a job's poll is
 * never stuck behind thousands of creates), except that every `NORMAL_SHARE`-th free slot goes to
 * the normal queue while it has tasks, so creates keep going under a heavy poll load.
 *
 * n8n Cloud lets a community node import p-limit, but a package without runtime dependencies cannot
 * count on it being resolvable on a self-hosted n8n, and p-limit has no priorities, so this small
 * limiter stays local.
 */
export class Semaphore {
	private active = 0;

	private readonly urgent: Array<() => void> = [];

	private readonly normal: Array<() => void> = [];

	/** Slots handed out from the urgent queue since the normal queue last got one. */
	private urgentInARow = 0;

	/** @param size tasks allowed at once (values below 1 count as 1) */
	constructor(private readonly size: number) {}

	/**
	 * Runs `task` once a slot is free and frees the slot when it settles.
	 *
	 * @param urgent whether the task goes before the normal queue (see the class comment)
	 */
	async run<T>(task: () => Promise<T>, urgent = false): Promise<T> {
		if (this.active >= Math.max(1, this.size)) {
			await new Promise<void>((resolve) => (urgent ? this.urgent : this.normal).push(resolve));
		} else {
			this.active++;
		}
		try {
			return await task();
		} finally {
			const next = this.next();
			if (next) next();
			else this.active--;
		}
	}

	/** Tasks waiting for a slot. */
	get waiting(): number {
		return this.urgent.length + this.normal.length;
	}

	/** The waiting task that gets the slot just freed, if any. */
	private next(): (() => void) | undefined {
		const takeNormal =
			this.normal.length > 0 && (this.urgent.length === 0 || this.urgentInARow >= NORMAL_SHARE - 1);
		if (takeNormal) {
			this.urgentInARow = 0;
			return this.normal.shift();
		}
		const next = this.urgent.shift();
		if (next) this.urgentInARow++;
		return next;
	}
}

/**
 * Every this many freed slots, one goes to the normal queue while both queues wait: two polls for
 * each create. A job takes a little more than one poll on average, due in bursts; with one poll for
 * each create, polls went out exactly as fast as creates while creates were queued, and due polls
 * waited up to 3 s (median 0.7 – 1.6 s) behind the ones queued for a slot (issue 33, bench measure
 * 6 at 5,000 items).
 */
export const NORMAL_SHARE = 3;
