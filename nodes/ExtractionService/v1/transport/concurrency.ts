/**
 * A counting semaphore: at most `size` tasks run at once; the rest queue in arrival order.
 *
 * n8n Cloud lets a community node import p-limit, but a package without runtime dependencies cannot
 * count on it being resolvable on a self-hosted n8n, so this ~20-line limiter stays local.
 */
export class Semaphore {
	private active = 0;

	private readonly waiting: Array<() => void> = [];

	/** @param size tasks allowed at once (values below 1 count as 1) */
	constructor(private readonly size: number) {}

	/** Runs `task` once a slot is free and frees the slot when it settles. */
	async run<T>(task: () => Promise<T>): Promise<T> {
		if (this.active >= Math.max(1, this.size)) {
			await new Promise<void>((resolve) => this.waiting.push(resolve));
		} else {
			this.active++;
		}
		try {
			return await task();
		} finally {
			const next = this.waiting.shift();
			if (next) next();
			else this.active--;
		}
	}
}
