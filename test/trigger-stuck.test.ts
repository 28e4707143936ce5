/**
 * Issue 31 item 6: one job whose read by id keeps failing does not hold the others back. Built from
 * the model's shrunk counterexample (docs/trigger-histories.md, Item 6: profile `hostile:stuck`,
 * `{classic, newest-first, existing 0, existingHeld 2}`, `Stuck(…)`): two jobs followed since
 * activation; one finishes and its read by id answers 500 forever; the other finishes later. The
 * trigger is polled through n8n-core's poll path (`createTriggerHarness`) against the emulator in
 * this process, on the model's simulated clock (a poll is a minute later; retry waits move it).
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { startEmulator, type Emulator } from '../emulator';
import { createTriggerHarness, type PollRun, type TriggerHarness } from '../scripts/engine';
import { installSimulatedTime, time } from './helpers/trigger-model';

const MINUTE = 60_000;

let restore: (() => void) | undefined;
beforeAll(() => {
	restore = installSimulatedTime();
});
afterAll(() => restore?.());

const EVENTS = [
	{ event: 'extractionFinished', kind: 'extraction', read: (id: string) => `/extract/${id}/` },
	{ event: 'parsingFinished', kind: 'parsing', read: (id: string) => `/v0/parsing/${id}` },
] as const;

/** An emulator on the simulated clock and an activated trigger of `event`. */
async function start(
	event: string,
	durableCursors: boolean,
	options: INodeParameters = {},
): Promise<{ emulator: Emulator; harness: TriggerHarness }> {
	time.now += 60 * MINUTE;
	const emulator = await startEmulator({ quiet: true, processingMs: 0, clock: () => time.now });
	const baseUrl = `${emulator.url}/`;
	const harness = createTriggerHarness({
		parameters: { event, options },
		typeVersion: 2,
		durableCursors,
		credentials: {
			extractionServiceApi: { baseUrl, apiKey: emulator.apiKey },
			extractionServiceTokenApi: { baseUrl, token: emulator.token },
		},
	});
	return { emulator, harness };
}

/** One scheduled poll, a simulated minute after the last. */
async function poll(harness: TriggerHarness): Promise<PollRun> {
	time.now += MINUTE;
	return await harness.poll();
}

const ids = (run: PollRun) => run.items.map((item) => String(item.json.id));

describe.each(EVENTS)('$event: a job whose read by id keeps failing', ({ event, kind, read }) => {
	it.each([false, true])(
		'does not hold the others back: they fire, the stuck one is reported once naming it, and later jobs fire (durable cursors %s)',
		async (durable) => {
			const { emulator, harness } = await start(event, durable);
			try {
				const [stuck, other] = emulator.seedJobs(kind, 2, { hold: true });
				time.now += MINUTE;
				expect((await harness.activate()).error).toBeUndefined();

				emulator.injectFaults({ method: 'GET', path: read(stuck) }, [
					{ status: 500, forever: true },
				]);
				emulator.releaseJobs([stuck]);
				const runs: PollRun[] = [await poll(harness)];
				emulator.releaseJobs([other]);
				for (let n = 0; n < 8; n++) runs.push(await poll(harness));
				const [later] = emulator.seedJobs(kind, 1);
				for (let n = 0; n < 3; n++) runs.push(await poll(harness));

				const fired = runs.flatMap(ids);
				expect(fired.sort()).toEqual([other, later].sort());
				const errors = runs.flatMap((run) => (run.error ? [run.error] : []));
				expect(errors).toHaveLength(1);
				const [error] = errors;
				expect(error.message).toBe(
					`The trigger could not read ${kind} ${stuck} 3 polls in a row and stopped following it: it does not fire`,
				);
				const text = `${error.message}\n${String(error.description ?? '')}`;
				expect(text).toContain(stuck);
				expect(text.toLowerCase()).toContain(kind);
				expect(text).toMatch(/500/);
				for (const secret of [emulator.apiKey, emulator.token]) expect(text).not.toContain(secret);
				// The state n8n saves stays small (an attempt count per job, the report until made).
				expect(JSON.stringify(harness.staticData()).length).toBeLessThan(32 * 1024);
			} finally {
				await emulator.close();
			}
		},
	);

	it('reported on the first poll with nothing to output when others fire at every poll meanwhile; reported once', async () => {
		const { emulator, harness } = await start(event, false);
		try {
			const [stuck] = emulator.seedJobs(kind, 1, { hold: true });
			time.now += MINUTE;
			expect((await harness.activate()).error).toBeUndefined();
			emulator.injectFaults({ method: 'GET', path: read(stuck) }, [{ status: 500, forever: true }]);
			emulator.releaseJobs([stuck]);
			const made: string[] = [];
			const runs: PollRun[] = [];
			for (let n = 0; n < 5; n++) {
				made.push(...emulator.seedJobs(kind, 1));
				runs.push(await poll(harness));
			}
			for (let n = 0; n < 4; n++) runs.push(await poll(harness));
			expect(runs.flatMap(ids)).toEqual(made);
			expect(runs.map((run) => (run.error ? 'error' : run.items.length))).toEqual([
				1,
				1,
				1,
				1,
				1,
				'error',
				0,
				0,
				0,
			]);
			expect(runs[5].error?.message).toContain(stuck);
		} finally {
			await emulator.close();
		}
	});

	it('with Include Existing Since (the stuck one ahead of the cursor): reported once, not met again as new', async () => {
		// The model's counterexample: parsingFinished, seed 3103, path "16:0:0:1:0:0:0:2:10:7",
		// replay path "M:B": `{classic, newest-first, 0, 1, includeExisting}`, Stuck(0), Poll ×3.
		const since = new Date(time.now + 60 * MINUTE).toISOString();
		const { emulator, harness } = await start(event, false, { includeExistingSince: since });
		try {
			time.now += 2 * MINUTE;
			const [stuck] = emulator.seedJobs(kind, 1, { hold: true });
			time.now += MINUTE;
			expect((await harness.activate()).error).toBeUndefined();
			emulator.injectFaults({ method: 'GET', path: read(stuck) }, [{ status: 500, forever: true }]);
			emulator.releaseJobs([stuck]);
			const runs: PollRun[] = [];
			for (let n = 0; n < 8; n++) runs.push(await poll(harness));
			expect(runs.flatMap(ids)).toEqual([]);
			const errors = runs.flatMap((run) => (run.error ? [run.error.message] : []));
			expect(errors).toHaveLength(1);
			expect(errors[0]).toContain(stuck);
		} finally {
			await emulator.close();
		}
	});

	it('a read that fails in one poll only leaves that job for the next poll; the others fire now, each once', async () => {
		const { emulator, harness } = await start(event, false);
		try {
			const [flaky, other] = emulator.seedJobs(kind, 2, { hold: true });
			time.now += MINUTE;
			expect((await harness.activate()).error).toBeUndefined();
			// More 500s than the client's retries: this poll's read of it fails.
			emulator.injectFaults(
				{ method: 'GET', path: read(flaky) },
				Array.from({ length: 6 }, () => ({ status: 500 })),
			);
			emulator.releaseJobs([flaky, other]);
			const first = await poll(harness);
			expect(first.error).toBeUndefined();
			expect(ids(first)).toEqual([other]);
			emulator.clearFaults();
			const second = await poll(harness);
			expect(second.error).toBeUndefined();
			expect(ids(second)).toEqual([flaky]);
			const third = await poll(harness);
			expect(third.error).toBeUndefined();
			expect(third.items).toEqual([]);
			expect((first.items[0].json as IDataObject).status).toBe('FINISHED');
		} finally {
			await emulator.close();
		}
	});

	// Found by the model: profile hostile:stuck, parsingFinished, seed 3112, path "11:1" (two stuck
	// jobs, durable cursors): the second report made the trigger forget the first, which was reported
	// again at the next poll.
	it('two stuck jobs with durable cursors (a failed poll commits nothing): each is reported once, in the same process', async () => {
		const { emulator, harness } = await start(event, true);
		try {
			const stuck = emulator.seedJobs(kind, 2, { hold: true });
			time.now += MINUTE;
			expect((await harness.activate()).error).toBeUndefined();
			emulator.injectFaults({ method: 'GET', path: read(stuck[0]) }, [
				{ status: 500, forever: true },
			]);
			emulator.releaseJobs([stuck[0]]);
			await poll(harness);
			emulator.injectFaults({ method: 'GET', path: read(stuck[1]) }, [
				{ status: 500, forever: true },
			]);
			emulator.releaseJobs([stuck[1]]);
			const runs: PollRun[] = [];
			for (let n = 0; n < 8; n++) runs.push(await poll(harness));
			const named = runs.flatMap((run) =>
				run.error ? stuck.filter((id) => run.error?.message.includes(id)) : [],
			);
			expect(named.sort()).toEqual([...stuck].sort());
			expect(runs.flatMap(ids)).toEqual([]);
		} finally {
			await emulator.close();
		}
	});
});
