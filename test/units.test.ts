import { Semaphore } from '../nodes/shared/transport/concurrency';
import * as polling from '../nodes/ExtractionService/v1/helpers/polling';
import { CancelledError, cancellableSleep } from '../nodes/shared/transport/sleep';
import { connectionErrorCode, parseRetryAfter } from '../nodes/shared/transport';
import { formatFieldErrors } from '../nodes/shared/transport/errors';

describe('pollDelay (§v0-3 rule 3: 2 to 5 s between polls)', () => {
	it('starts at 2 s, grows to the 5 s cap, and jitter never leaves 2–5 s', () => {
		expect(
			[0, 1, 2, 3, 4, 5, 10].map((n) =>
				Math.round(polling.pollDelay(n, polling.DEFAULT_POLL_TIMING, () => 0)),
			),
		).toEqual([2000, 2500, 3125, 3906, 4883, 5000, 5000]);
		for (let n = 0; n < 12; n++) {
			for (const r of [0, 0.25, 0.5, 0.999]) {
				const d = polling.pollDelay(n, polling.DEFAULT_POLL_TIMING, () => r);
				expect(d).toBeGreaterThanOrEqual(2000);
				expect(d).toBeLessThanOrEqual(5000);
			}
		}
		expect(polling.pollDelay(0, polling.DEFAULT_POLL_TIMING, () => 0.999)).toBeGreaterThan(2000); // jitter is real
	});
});

describe('pollUntilFinal: the last poll leaves time to be answered, and none follows the wait', () => {
	it('polls every 200 ms until the margin before the deadline, then reports a timeout; no read starts later', async () => {
		const started: number[] = [];
		const deadline = Date.now() + 2_500;
		const result = await polling.pollUntilFinal(
			{ status: 'IN_PROGRESS' },
			{
				fetch: async () => {
					started.push(Date.now());
					return { status: 'IN_PROGRESS' };
				},
				isFinal: (job) => job.status === 'FINISHED',
				deadline,
				signal: new AbortController().signal,
				timing: { firstDelayMs: 200, maxDelayMs: 200, growth: 1, jitter: 0 },
			},
		);
		const returned = Date.now();
		expect(result.timedOut).toBe(true);
		expect(started.length).toBeGreaterThanOrEqual(2);
		// Every read began at least the margin before the deadline (give or take a timer tick).
		for (const at of started)
			expect(deadline - at).toBeGreaterThanOrEqual(polling.LAST_POLL_MARGIN_MS - 50);
		await new Promise((resolve) => setTimeout(resolve, 300));
		expect(started.filter((at) => at > returned)).toEqual([]);
	});
});

describe('pollUntilFinal on a busy execution: no poll starts inside the last margin', () => {
	it('a poll whose slot frees only inside the margin is not started: the wait ends as timed out (one started there)', async () => {
		const signal = new AbortController().signal;
		const timing = { firstDelayMs: 100, maxDelayMs: 100, growth: 1, jitter: 0 };
		const deadline = Date.now() + polling.LAST_POLL_MARGIN_MS + 1_500;
		const late: number[] = [];
		let release!: () => void;
		const held = new Promise<void>((resolve) => (release = resolve));
		// A: its second poll holds the only slot until the deadline's margin has begun.
		let polls = 0;
		/** A job that never finishes, polled in the one slot the execution has, `before` each read. */
		const unfinished = (before: () => Promise<void> | void) =>
			polling.pollUntilFinal(
				{ status: 'IN_PROGRESS' },
				{
					fetch: async () => {
						await before();
						return { status: 'IN_PROGRESS' };
					},
					isFinal: () => false,
					deadline,
					signal,
					timing,
					maxInFlight: 1,
				},
			);
		const a = unfinished(async () => {
			if (++polls === 2) await held;
		});
		// B: due every 100 ms, always waiting for A's slot.
		const b = unfinished(() => {
			if (deadline - Date.now() < polling.LAST_POLL_MARGIN_MS) late.push(Date.now());
		});
		while (deadline - Date.now() >= polling.LAST_POLL_MARGIN_MS - 200)
			await new Promise((resolve) => setTimeout(resolve, 20));
		release();
		const results = await Promise.all([a, b]);
		expect({ late, timedOut: results.map((r) => r.timedOut) }).toEqual({
			late: [],
			timedOut: [true, true],
		});
	});
});

describe('parseRetryAfter (RFC 9110 §10.2.3)', () => {
	it('reads seconds and HTTP dates, and ignores garbage', () => {
		expect(parseRetryAfter('3')).toBe(3000);
		expect(parseRetryAfter(' 1.5 ')).toBe(1500);
		const inTwo = parseRetryAfter(new Date(Date.now() + 2000).toUTCString())!;
		expect(inTwo).toBeGreaterThan(500);
		expect(inTwo).toBeLessThanOrEqual(2000);
		expect(parseRetryAfter(new Date(Date.now() - 60_000).toUTCString())).toBe(0);
		expect(parseRetryAfter('soon')).toBeUndefined();
		expect(parseRetryAfter(undefined)).toBeUndefined();
	});
});

describe('connectionErrorCode', () => {
	it('finds a code however deep n8n wrapped it', () => {
		expect(connectionErrorCode({ cause: { code: 'ECONNREFUSED' } })).toBe('ECONNREFUSED');
		expect(connectionErrorCode({ context: { cause: { cause: { code: 'ECONNRESET' } } } })).toBe(
			'ECONNRESET',
		);
		expect(connectionErrorCode(new Error('timeout of 1000ms exceeded'))).toBe('ECONNABORTED');
		expect(connectionErrorCode({ code: 'EINVAL' })).toBeUndefined();
	});
});

describe('formatFieldErrors (§v0-7 and §unversioned-7 400 bodies)', () => {
	it('lists each field with its messages, detail first-class', () => {
		expect(
			formatFieldErrors({
				schema: ['Unknown schema id.'],
				metadata: 'Must be a JSON object.',
				detail: 'Bad request',
			}),
		).toBe('schema: Unknown schema id.; metadata: Must be a JSON object.; Bad request');
		expect(
			formatFieldErrors({ non_field_errors: ['Provide either document or parsing, not both.'] }),
		).toBe('Provide either document or parsing, not both.');
		expect(formatFieldErrors(undefined)).toBe('');
	});
});

describe('Semaphore', () => {
	it('never runs more than its size at once and runs everything', async () => {
		const limiter = new Semaphore(3);
		let active = 0;
		let peak = 0;
		const done = await Promise.all(
			Array.from(
				{ length: 20 },
				async (_, i) =>
					await limiter.run(async () => {
						active++;
						peak = Math.max(peak, active);
						await new Promise((resolve) => setImmediate(resolve));
						active--;
						return i;
					}),
			),
		);
		expect(done).toEqual(Array.from({ length: 20 }, (_, i) => i));
		expect(peak).toBe(3);
	});

	it('frees the slot when a task throws', async () => {
		const limiter = new Semaphore(1);
		await expect(limiter.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow(
			'boom',
		);
		await expect(limiter.run(async () => 'next')).resolves.toBe('next');
	});
});

describe('cancellableSleep', () => {
	it('ends within a slice (200 ms) with CancelledError when the signal aborts', async () => {
		const controller = new AbortController();
		const sleeping = cancellableSleep(10_000, controller.signal);
		setImmediate(() => controller.abort());
		await expect(sleeping).rejects.toBeInstanceOf(CancelledError);
	});

	it('refuses to start on an aborted signal', async () => {
		await expect(cancellableSleep(10, AbortSignal.abort())).rejects.toBeInstanceOf(CancelledError);
	});
});
