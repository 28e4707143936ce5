/**
 * The emulator's per-job processing-time range (`processingMaxMs`, `--processing-max-ms`) that the
 * end-to-end run (scripts/e2e/run.ts) uses to make jobs overlap and finish out of order, and the
 * random faults of its fault round.
 */
import { FaultQueue, parseRandomFaults } from '../../emulator/faults';
import { Store } from '../../emulator/store';

describe('emulator processing-time range', () => {
	it('draws each job time between processingMs and processingMaxMs', () => {
		const store = new Store(100, 3000);
		store.processingMaxMs = 6000;
		const draws = Array.from({ length: 400 }, () => store.jobProcessingMs());
		expect(Math.min(...draws)).toBeGreaterThanOrEqual(3000);
		expect(Math.max(...draws)).toBeLessThanOrEqual(6000);
		// spread over the range, not one value
		expect(new Set(draws.map((d) => Math.floor(d / 1000))).size).toBeGreaterThanOrEqual(3);
	});

	it('keeps one fixed time without a range, or with a maximum not above the minimum', () => {
		const store = new Store(100, 2500);
		expect(store.jobProcessingMs()).toBe(2500);
		store.processingMaxMs = 1000;
		expect(store.jobProcessingMs()).toBe(2500);
	});
});

describe('emulator random faults (--random-faults)', () => {
	it('reads METHOD:STATUS:PROBABILITY entries, 429 with Retry-After 1', () => {
		expect(parseRandomFaults('*:429:0.03, GET:503:0.05')).toEqual([
			{ method: undefined, status: 429, probability: 0.03, retryAfter: '1' },
			{ method: 'GET', status: 503, probability: 0.05, retryAfter: undefined },
		]);
		expect(() => parseRandomFaults('GET:503')).toThrow(/METHOD:STATUS:PROBABILITY/);
	});

	it('answers matching requests at about the given rate, after queued faults', () => {
		const queue = new FaultQueue();
		queue.random = parseRandomFaults('GET:503:0.5');
		expect(
			Array.from({ length: 200 }, () => queue.take('POST', '/extract/')).every(
				(f) => f === undefined,
			),
		).toBe(true);
		const hits = Array.from({ length: 400 }, () => queue.take('GET', '/extract/x/')).filter(
			(f) => f?.status === 503,
		).length;
		expect(hits).toBeGreaterThan(140);
		expect(hits).toBeLessThan(260);
		queue.random = parseRandomFaults('GET:503:1');
		queue.add({ method: 'GET', path: '/a' }, [{ status: 429 }]);
		expect(queue.take('GET', '/a')?.status).toBe(429);
		expect(queue.take('GET', '/a')?.status).toBe(503);
	});
});

describe('emulator random faults switched at runtime (launchEmulator().setRandomFaults)', () => {
	it('starts faultless, fails every GET after "GET:503:1", and stops again after "off"', async () => {
		const { launchEmulator } = await import('../../emulator/launch');
		const emulator = await launchEmulator({ processingMs: 10, quiet: true });
		try {
			const get = async (): Promise<number> =>
				(await fetch(`${emulator.url}/extract/`, { headers: { authorization: emulator.token } }))
					.status;
			expect(await get()).toBe(200);
			await emulator.setRandomFaults('GET:503:1');
			expect([await get(), await get()]).toEqual([503, 503]);
			await emulator.setRandomFaults('off');
			expect(await get()).toBe(200);
			await expect(emulator.setRandomFaults('GET:999:1')).rejects.toThrow(/refused/);
		} finally {
			await emulator.stop();
		}
	}, 60_000);
});
