import { sleep } from 'n8n-workflow';

/** Thrown by `cancellableSleep` when its signal aborts. */
export class CancelledError extends Error {
	constructor() {
		super('Cancelled');
		this.name = 'CancelledError';
	}
}

/** Longest single `sleep` call: a cancellation is noticed within this many ms. */
const SLICE_MS = 200;

/**
 * Waits `ms` milliseconds, or less if `signal` aborts. n8n Cloud forbids timers in nodes, and
 * `sleepWithAbort` is missing from n8n-workflow before 1.100 and after 2.33, so this builds the wait
 * from `sleep` (present on every line) in slices of at most 200 ms and checks the signal between
 * slices: a stopped execution ends every wait within 200 ms. No abort listener is added, so a
 * hundred waiting jobs do not pile listeners on the execution's one signal.
 *
 * @param ms wait in milliseconds (≤ 0 returns at once)
 * @param signal aborts the wait
 * @throws CancelledError when `signal` is or becomes aborted
 */
export async function cancellableSleep(ms: number, signal?: AbortSignal): Promise<void> {
	const end = Date.now() + ms;
	for (let left = ms; ; left = end - Date.now()) {
		if (signal?.aborted) throw new CancelledError();
		if (left <= 0) return;
		await sleep(Math.min(left, SLICE_MS));
	}
}
