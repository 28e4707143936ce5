/**
 * Shared steps of the trigger's named history tests (test/trigger-window.test.ts for documents and
 * parsings, test/trigger-extractions.test.ts for extractions): polls on the simulated clock of
 * ./trigger-model.ts, what fired, and an answer held in the middle of a poll.
 */
import type { IDataObject, INodeParameters } from 'n8n-workflow';

import { startEmulator, type Emulator, type LoggedRequest } from '../../emulator';
import { createTriggerHarness, type PollRun, type TriggerHarness } from '../../scripts/engine';
import { time } from './trigger-model';

const MINUTE = 60_000;

/** An emulator on the simulated clock, an hour after the last test's, and a trigger of `event` (not activated). */
export async function start(
	event: string,
	durableCursors = false,
	parameters: INodeParameters = {},
): Promise<{ emulator: Emulator; harness: TriggerHarness }> {
	time.now += 60 * MINUTE;
	const emulator = await startEmulator({ quiet: true, processingMs: 0, clock: () => time.now });
	return { emulator, harness: harnessFor(emulator, event, durableCursors, parameters) };
}

/** A trigger of `event` on `emulator`, from `staticData` when given (a workflow saved and edited). */
export function harnessFor(
	emulator: Emulator,
	event: string,
	durableCursors: boolean,
	parameters: INodeParameters = {},
	staticData?: IDataObject,
): TriggerHarness {
	const baseUrl = `${emulator.url}/`;
	return createTriggerHarness({
		parameters: { event, ...parameters },
		typeVersion: 2,
		durableCursors,
		credentials: {
			extractionServiceApi: { baseUrl, apiKey: emulator.apiKey },
			extractionServiceTokenApi: { baseUrl, token: emulator.token },
		},
		...(staticData ? { staticData: { 'node:Extraction Service Trigger': staticData } } : {}),
	});
}

/** Activates the trigger a simulated minute later; the activation must not fail. */
export async function activated(harness: TriggerHarness): Promise<PollRun> {
	time.now += MINUTE;
	const run = await harness.activate();
	expect(run.error?.message).toBeUndefined();
	return run;
}

/** `n` scheduled polls, each a simulated minute after the last. */
export async function polls(harness: TriggerHarness, n: number): Promise<PollRun[]> {
	const runs: PollRun[] = [];
	for (let i = 0; i < n; i++) {
		time.now += MINUTE;
		runs.push(await harness.poll());
	}
	return runs;
}

export const ids = (run: PollRun) => run.items.map((item) => String(item.json.id));
export const sorted = (values: string[]) => [...values].sort();
export const errors = (runs: PollRun[]) =>
	runs.flatMap((run) => (run.error ? [run.error.message] : []));

/** No poll failed, and each of `made` fired exactly once, nothing else. */
export function expectEachOnce(runs: PollRun[], made: string[]): void {
	expect(errors(runs)).toEqual([]);
	expect(sorted(runs.flatMap(ids))).toEqual(sorted(made));
}

/**
 * Holds the answer to the first `GET path` whose query passes `test` (given the requests logged
 * before it) until `release()`; `arrived` resolves when that request has come. The emulator logs a
 * request before it takes a fault, so the last entry of its log is the request being answered.
 */
export function holdWhen(
	emulator: Emulator,
	path: string,
	test: (query: LoggedRequest['query'], before: LoggedRequest[]) => boolean,
): { arrived: Promise<void>; release: () => void } {
	let arrive!: () => void;
	let open!: () => void;
	const arrived = new Promise<void>((resolve) => (arrive = resolve));
	const gate = new Promise<void>((resolve) => (open = resolve));
	let held = false;
	const until = async (): Promise<void> => {
		const log = emulator.requests;
		if (held || !test(log[log.length - 1].query, log.slice(0, -1))) return;
		held = true;
		arrive();
		await gate;
	};
	emulator.injectFaults({ method: 'GET', path }, [{ forever: true, until }]);
	return {
		arrived,
		release: () => {
			emulator.clearFaults();
			open();
		},
	};
}
