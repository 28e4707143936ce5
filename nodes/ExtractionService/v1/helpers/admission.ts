/**
 * Admission of items into one execution's work: thousands of input items do not all start at once
 * (each started item reads its parameters and file and queues its create, all of it kept in memory
 * while it waits for a request slot). At most `MAX_ITEMS_ADMITTED` items are between their start
 * and the moment their job starts waiting (`waitForJob`) or the item ends; a waiting job holds no
 * place, so many jobs still wait together (`PollScheduler`).
 */

/**
 * Items admitted at once for each request slot (the node's Concurrency): enough queued creates to
 * keep every slot busy, few enough that the items not yet started cost nothing but their place in
 * the queue.
 */
export const ITEMS_ADMITTED_PER_SLOT = 4;

/** The admitted items of one execution and those waiting for a place, in input order. */
export class Admission {
	private readonly admitted = new Set<number>();

	private readonly queue: Array<() => void> = [];

	/** @param size items admitted at once (values below 1 count as 1) */
	constructor(private readonly size: number) {}

	/** Resolves when item `itemIndex` has a place. */
	async enter(itemIndex: number): Promise<void> {
		if (this.admitted.size >= Math.max(1, this.size))
			await new Promise<void>((resolve) => this.queue.push(resolve));
		this.admitted.add(itemIndex);
	}

	/** Gives item `itemIndex`'s place to the next item waiting (nothing when it holds none: safe to call twice). */
	leave(itemIndex: number): void {
		if (!this.admitted.delete(itemIndex)) return;
		this.queue.shift()?.();
	}
}

/** One admission per execution, by its abort signal. */
const ADMISSIONS = new WeakMap<AbortSignal, Admission>();

/**
 * The admission of the execution whose client has `signal`.
 *
 * @param concurrency the client's Concurrency (request slots), when the admission is made
 */
export function admissionOf(signal: AbortSignal, concurrency = 5): Admission {
	let admission = ADMISSIONS.get(signal);
	if (!admission)
		ADMISSIONS.set(signal, (admission = new Admission(ITEMS_ADMITTED_PER_SLOT * concurrency)));
	return admission;
}
