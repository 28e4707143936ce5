/**
 * The emulator's per-job processing-time range (`processingMaxMs`, `--processing-max-ms`) that the
 * end-to-end run (scripts/e2e/run.ts) uses to make jobs overlap and finish out of order.
 */
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
