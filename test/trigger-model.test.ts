/**
 * The trigger's model-based test (issue 31): generated histories of the service, run against the
 * emulator in this process with the trigger polled through n8n-core's poll path, on a simulated
 * clock (test/helpers/trigger-model.ts says what a history may do and what is checked).
 *
 * `npm test` runs the ordinary profile (what the README promises and holds today) with a fixed seed
 * and a fixed number of histories per event. The hostile profile (everything issue 31 lists) runs
 * with `npx tsx bench/trigger-model.ts --profile hostile`; what it finds is in
 * docs/trigger-histories.md. A failure here prints the shrunk history and its `seed` / `path`:
 * `npx tsx bench/trigger-model.ts --events <event> --seed <seed> --path "<path>"` replays it.
 */
import fc from 'fast-check';

import { startEmulator } from '../emulator';
import { shutdownEngine } from '../scripts/engine';
import {
	EVENT_NAMES,
	ORDINARY,
	PROFILES,
	historyProperty,
	installSimulatedTime,
	stats,
	time,
} from './helpers/trigger-model';

/** The seed of `npm test`'s histories (fixed: the same histories at every run). */
const SEED = 31;

let restore: (() => void) | undefined;
beforeAll(() => {
	restore = installSimulatedTime();
});
afterAll(async () => {
	restore?.();
	await shutdownEngine();
});

describe('the emulator controls the model uses', () => {
	it('countOffset, itemFields and deleteRecords', async () => {
		const emulator = await startEmulator({ quiet: true, processingMs: 0, clock: () => time.now });
		try {
			const [kept, gone] = emulator.seedJobs('parsing', 2);
			emulator.deleteRecords([gone]);
			emulator.setListQuirks({ countOffset: 2, itemFields: ['id', 'status'] });
			const answer = await fetch(`${emulator.url}/v0/parsing`, {
				headers: { 'X-API-Key': emulator.apiKey },
			});
			const page = (await answer.json()) as { count: number; results: object[] };
			expect(page.count).toBe(3);
			expect(page.results).toEqual([{ id: kept, status: 'FINISHED' }]);
			const read = await fetch(`${emulator.url}/v0/parsing/${gone}`, {
				headers: { 'X-API-Key': emulator.apiKey },
			});
			expect(read.status).toBe(404);
		} finally {
			await emulator.close();
		}
	});
});

describe(`generated histories, profile ${ORDINARY.name} (seed ${SEED}, ${ORDINARY.runs} per event)`, () => {
	it.each(EVENT_NAMES)(
		'%s: each job final after activation fires once, nothing older fires, errors only where the README reports them, state ≤ 32 KB',
		async (event) => {
			const before = { ...stats };
			await fc.assert(historyProperty(ORDINARY, event), { seed: SEED, numRuns: ORDINARY.runs });
			// The histories did something: jobs made, polls run, jobs fired.
			expect(stats.jobs - before.jobs).toBeGreaterThan(ORDINARY.runs * 10);
			expect(stats.polls - before.polls).toBeGreaterThan(ORDINARY.runs * 3);
			expect(stats.fired - before.fired).toBeGreaterThan(ORDINARY.runs);
		},
		120_000,
	);
});

/**
 * Counterexamples the generated histories found, each replayed as fast-check shrank it (its seed,
 * path and the commands' replay path), so that each stays a named test (docs/trigger-histories.md).
 */
describe('counterexamples the model found', () => {
	it.each([
		{
			name: 'extractionFinished: classic, oldest-first, 19 existing (2 unfinished), pages capped at 20 then 100, an n8n restart — the restart fired extractions that existed (old scan, measure 8)',
			profile: 'ordinary',
			event: 'extractionFinished',
			seed: 569705569,
			path: '139:0:4:4:9:9:1:1:1:4',
			replayPath: 'FCH:F',
		},
		{
			name: 'extractionFailed: durable cursors, a final extraction deleted, two n8n restarts — the report that the edge was lost came twice (old scan, measure 8)',
			profile: 'ordinary',
			event: 'extractionFailed',
			seed: 569705569,
			path: '1307:1:2:5:12:11:10:10:10:10:11:11:11',
			replayPath: '9:B',
		},
		{
			name: 'extractionFinished: Include Existing Since, one extraction created after activation and dated 2 minutes before it (listed late), pages capped at 20 — it never fired (new scan: `start` was Include Existing Since, not 10 minutes before activation)',
			profile: 'hostile:late',
			event: 'extractionFinished',
			seed: 3200,
			path: '34:0:0:4:3:2:3:3:2:2:2:2:2:2:2:4:3:2:2:2:3:3',
			replayPath: 'HAj:F',
		},
		{
			name: "extractionFinished: classic, oldest-first, 101 existing, pages of 101 whatever is asked, one new — an existing extraction fired (new scan: the 101st of page 1, met by each end, was left out of both ends' old ones)",
			profile: 'hostile',
			event: 'extractionFinished',
			seed: 3400,
			path: '9:0:6:1:1:2:2:2:4:4:4:3:3:4:3:3:3:3:3',
			replayPath: 'i:B',
		},
	] as const)(
		'$name',
		async ({ profile, event, seed, path, replayPath }) => {
			await fc.assert(historyProperty(PROFILES[profile], event, replayPath), {
				seed,
				path,
				numRuns: 1,
			});
		},
		120_000,
	);
});
