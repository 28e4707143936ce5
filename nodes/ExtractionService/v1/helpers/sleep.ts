import { sleep } from 'n8n-workflow';

/** Thrown by `cancellableSleep` when its signal aborts. */
export class CancelledError extends Error {
	constructor() {
		super('Cancelled');
		this.name = 'CancelledError';
	}
}

/** Longest single `sleep` call: a cancellation is noticed within this many ms even without an abort event. */
const SLICE_MS = 250;

/**
 * Waits `ms` milliseconds, or less if `signal` aborts. n8n Cloud forbids timers in nodes, and
 * `sleepWithAbort` is missing from n8n-workflow before 1.100 and after 2.33, so this builds the wait
 * from `sleep` (present on every line) in slices of at most 250 ms, racing each slice against the
 * abort event: a stopped execution ends the wait at once, and within 250 ms in the worst case.
 *
 * @param ms wait in milliseconds (≤ 0 returns at once)
 * @param signal aborts the wait
 * @throws CancelledError when `signal` is or becomes aborted
 */
export async function cancellableSleep(ms: number, signal?: AbortSignal): Promise<void> {
	if (signal?.aborted) throw new CancelledError();
	let onAbort: (() => void) | undefined;
	const aborted = new Promise<never>((_, reject) => {
		onAbort = () => reject(new CancelledError());
		signal?.addEventListener('abort', onAbort, { once: true });
	});
	aborted.catch(() => undefined);
	try {
		const end = Date.now() + ms;
		for (let left = ms; left > 0; left = end - Date.now()) {
			await Promise.race([sleep(Math.min(left, SLICE_MS)), aborted]);
			if (signal?.aborted) throw new CancelledError();
		}
	} finally {
		if (onAbort) signal?.removeEventListener('abort', onAbort);
	}
}
