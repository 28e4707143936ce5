/**
 * Measure 5 of `npm run bench`: the Extraction Service Trigger at scale, through n8n-core's poll path
 * (`createTriggerHarness`: PollContext + PollTriggerExecutor), against the emulator in the same
 * process, on a simulated clock: a poll is a minute of the service's time, taken at once. `Date.now`
 * of this process and the emulator's clock are the simulated clock, so jobs finish when the
 * simulated minutes say, and nothing depends on this machine's speed.
 *
 * Scenarios (each on a fresh emulator):
 *   A. Backlog: N final jobs created over the last 10 minutes before activation (N = --backlogs),
 *      for Extraction Finished (both list orders), Parsing Finished and Document Uploaded: requests
 *      of a poll with nothing new (target ≤ 3), then of a poll with 100 new jobs.
 *   B. Burst: 3,000 jobs (--burst) created unfinished, unfinished for 5 polls, then finished at once:
 *      each fires once (missing, repeated), the polls it takes.
 *   C. Sustained: 500 jobs a minute (--rate) for --minutes minutes, each taking 0–2 minutes: each
 *      fires at the first poll after it finished (lag in polls).
 *   Every scenario: the size of the trigger's static data after each poll (target ≤ 32 KB).
 *
 * Run alone: `npx tsx bench/trigger.ts [--from source|dist] [--backlogs 100,1000,10000,50000]
 * [--burst 3000] [--rate 500] [--minutes 10] [--scenarios A,B,C]`. It prints its tables and a
 * `RESULT {json}` line (bench/run.ts reads it).
 */
import type { IDataObject } from 'n8n-workflow';

import { startEmulator, type Emulator } from '../emulator';
import {
	createTriggerHarness,
	loadTriggerType,
	loadTypes,
	type TriggerHarness,
} from '../scripts/engine';
import { readArgs } from '../scripts/lib/args';
import { runMain } from '../scripts/lib/processes';

/** The simulated clock (epoch ms): advanced by the scenarios, read by the emulator and the node. */
let simulated = Date.parse('2026-11-01T08:00:00.000Z');
const realNow = Date.now.bind(Date);
Date.now = () => simulated;
const MINUTE = 60_000;

interface Options {
	from: 'source' | 'dist';
	backlogs: number[];
	burst: number;
	rate: number;
	minutes: number;
	scenarios: Set<string>;
}

function parseOptions(argv: string[]): Options {
	const { values } = readArgs(
		__filename,
		{
			from: { type: 'string' },
			backlogs: { type: 'string' },
			burst: { type: 'string' },
			rate: { type: 'string' },
			minutes: { type: 'string' },
			scenarios: { type: 'string' },
		},
		false,
		argv,
	);
	const list = (text: string) => text.split(',').map((x) => Number(x.trim()));
	return {
		from: values.from === 'source' ? 'source' : 'dist',
		backlogs: list(values.backlogs ?? '100,1000,10000,50000'),
		burst: Number(values.burst ?? 3000),
		rate: Number(values.rate ?? 500),
		minutes: Number(values.minutes ?? 10),
		scenarios: new Set((values.scenarios ?? 'A,B,C').split(',')),
	};
}

type EventCase = {
	label: string;
	event: string;
	kind?: 'extraction' | 'parsing';
	order?: 'newest-first' | 'oldest-first';
};

const CASES: EventCase[] = [
	{
		label: 'Extraction Finished, newest first',
		event: 'extractionFinished',
		kind: 'extraction',
		order: 'newest-first',
	},
	{
		label: 'Extraction Finished, oldest first',
		event: 'extractionFinished',
		kind: 'extraction',
		order: 'oldest-first',
	},
	{ label: 'Parsing Finished', event: 'parsingFinished', kind: 'parsing' },
	{ label: 'Document Uploaded', event: 'documentUploaded' },
];

/** A fresh emulator on the simulated clock. */
async function emulatorFor(
	order: 'newest-first' | 'oldest-first' = 'newest-first',
): Promise<Emulator> {
	return await startEmulator({
		quiet: true,
		processingMs: 0,
		listOrder: order,
		clock: () => simulated,
		credits: 10_000_000,
	} as Parameters<typeof startEmulator>[0]);
}

/** Creates `n` final jobs (or documents) now. */
function seed(emulator: Emulator, kase: EventCase, n: number, options: IDataObject = {}): string[] {
	if (!kase.kind) return emulator.seedDocuments(n);
	return emulator.seedJobs(kase.kind, n, options);
}

let triggerFrom: 'source' | 'dist' = 'dist';

function harnessFor(emulator: Emulator, event: string): TriggerHarness {
	const credentials = {
		extractionServiceApi: { baseUrl: emulator.url, apiKey: emulator.apiKey },
		extractionServiceTokenApi: { baseUrl: emulator.url, token: emulator.token },
	};
	return createTriggerHarness({
		parameters: { event },
		credentials,
		types: {
			trigger: loadTriggerType(triggerFrom),
			credentials: loadTypes(triggerFrom).credentials,
		},
	});
}

/** One poll a simulated minute after the last: its fired ids, requests and static data size. */
async function pollAfterAMinute(
	emulator: Emulator,
	harness: TriggerHarness,
): Promise<{ fired: string[]; requests: number; bytes: number; error?: string }> {
	simulated += MINUTE;
	emulator.clearLog();
	const run = await harness.poll();
	return {
		fired: run.items.map((item) => String(item.json.id)),
		requests: emulator.requests.length,
		bytes: JSON.stringify(harness.staticData()).length,
		...(run.error ? { error: run.error.message } : {}),
	};
}

interface BacklogRow {
	case: string;
	backlog: number;
	idleRequests: number;
	newRequests: number;
	newFired: number;
	maxBytes: number;
	errors: string[];
}

async function scenarioBacklog(options: Options): Promise<BacklogRow[]> {
	const rows: BacklogRow[] = [];
	for (const kase of CASES) {
		for (const backlog of options.backlogs) {
			const emulator = await emulatorFor(kase.order);
			try {
				for (let minute = 0; minute < 10; minute++) {
					seed(emulator, kase, Math.ceil(backlog / 10));
					simulated += MINUTE;
				}
				const harness = harnessFor(emulator, kase.event);
				const errors: string[] = [];
				const activation = await harness.activate();
				if (activation.error) errors.push(activation.error.message);
				let maxBytes = JSON.stringify(harness.staticData()).length;
				let idle = 0;
				for (let n = 0; n < 3; n++) {
					const poll = await pollAfterAMinute(emulator, harness);
					idle = Math.max(idle, poll.requests);
					maxBytes = Math.max(maxBytes, poll.bytes);
					if (poll.error) errors.push(poll.error);
				}
				const fresh = seed(emulator, kase, 100);
				const poll = await pollAfterAMinute(emulator, harness);
				maxBytes = Math.max(maxBytes, poll.bytes);
				if (poll.error) errors.push(poll.error);
				const newFired = poll.fired.filter((id) => fresh.includes(id)).length;
				rows.push({
					case: kase.label,
					backlog,
					idleRequests: idle,
					newRequests: poll.requests,
					newFired,
					maxBytes,
					errors,
				});
				console.log(
					`  A ${kase.label}, backlog ${backlog}: nothing new ${idle} requests; 100 new: ${poll.requests} requests, ${newFired} fired; static data ≤ ${maxBytes} B${errors.length ? `; ERRORS ${errors.join(' | ')}` : ''}`,
				);
			} finally {
				await emulator.close();
			}
		}
	}
	return rows;
}

interface BurstRow {
	case: string;
	burst: number;
	missing: number;
	repeated: number;
	pollsToDrain: number;
	maxBytes: number;
	errors: string[];
}

async function scenarioBurst(options: Options): Promise<BurstRow[]> {
	const rows: BurstRow[] = [];
	for (const kase of CASES.filter((c) => c.kind)) {
		const emulator = await emulatorFor(kase.order);
		try {
			seed(emulator, kase, 1000); // some history
			simulated += MINUTE;
			const harness = harnessFor(emulator, kase.event);
			const errors: string[] = [];
			await harness.activate();
			const burst = emulator.seedJobs(kase.kind as 'extraction' | 'parsing', options.burst, {
				hold: true,
			});
			const fired: string[] = [];
			let maxBytes = 0;
			for (let n = 0; n < 5; n++) {
				const poll = await pollAfterAMinute(emulator, harness);
				fired.push(...poll.fired);
				maxBytes = Math.max(maxBytes, poll.bytes);
				if (poll.error) errors.push(poll.error);
			}
			emulator.releaseJobs();
			let polls = 0;
			for (; polls < 20 && !burst.every((id) => fired.includes(id));) {
				polls++;
				const poll = await pollAfterAMinute(emulator, harness);
				fired.push(...poll.fired);
				maxBytes = Math.max(maxBytes, poll.bytes);
				if (poll.error) errors.push(poll.error);
			}
			for (let n = 0; n < 2; n++) fired.push(...(await pollAfterAMinute(emulator, harness)).fired);
			const counts = new Map<string, number>();
			for (const id of fired) counts.set(id, (counts.get(id) ?? 0) + 1);
			const missing = burst.filter((id) => !counts.has(id)).length;
			const repeated =
				[...counts.values()].filter((c) => c > 1).length +
				[...counts.keys()].filter((id) => !burst.includes(id)).length;
			rows.push({
				case: kase.label,
				burst: options.burst,
				missing,
				repeated,
				pollsToDrain: polls,
				maxBytes,
				errors,
			});
			console.log(
				`  B ${kase.label}: burst ${options.burst} unfinished for 5 polls: ${missing} never fired, ${repeated} fired twice or unexpected, drained in ${polls} polls after they finished; static data ≤ ${maxBytes} B${errors.length ? `; ERRORS ${errors.join(' | ')}` : ''}`,
			);
		} finally {
			await emulator.close();
		}
	}
	return rows;
}

interface SustainedRow {
	case: string;
	rate: number;
	minutes: number;
	jobs: number;
	missing: number;
	repeated: number;
	late: number;
	maxLagPolls: number;
	maxRequests: number;
	maxBytes: number;
	errors: string[];
}

async function scenarioSustained(options: Options): Promise<SustainedRow[]> {
	const rows: SustainedRow[] = [];
	for (const kase of CASES.filter((c) => c.kind)) {
		const emulator = await emulatorFor(kase.order);
		try {
			seed(emulator, kase, 1000);
			simulated += MINUTE;
			const harness = harnessFor(emulator, kase.event);
			await harness.activate();
			const finishAt = new Map<string, number>();
			const firedAt = new Map<string, number[]>();
			const errors: string[] = [];
			let maxRequests = 0;
			let maxBytes = 0;
			const pollTimes: number[] = [];
			const total = options.minutes + 4; // then polls to let the last ones finish
			for (let minute = 0; minute < total; minute++) {
				if (minute < options.minutes) {
					// The minute's jobs, created at spread times, each taking 0–2 minutes.
					for (let slice = 0; slice < 10; slice++) {
						const processingMs = ((minute * 10 + slice) * 7919) % (2 * MINUTE);
						for (const id of emulator.seedJobs(
							kase.kind as 'extraction' | 'parsing',
							options.rate / 10,
							{ processingMs },
						))
							finishAt.set(id, simulated + processingMs);
						simulated += MINUTE / 10;
					}
					simulated -= MINUTE; // pollAfterAMinute moves it on again
				}
				const poll = await pollAfterAMinute(emulator, harness);
				pollTimes.push(simulated);
				for (const id of poll.fired) firedAt.set(id, [...(firedAt.get(id) ?? []), simulated]);
				maxRequests = Math.max(maxRequests, poll.requests);
				maxBytes = Math.max(maxBytes, poll.bytes);
				if (poll.error) errors.push(poll.error);
			}
			let missing = 0;
			let repeated = 0;
			let late = 0;
			let maxLag = 0;
			for (const [id, finish] of finishAt) {
				const times = firedAt.get(id) ?? [];
				if (times.length === 0) {
					missing++;
					continue;
				}
				if (times.length > 1) repeated++;
				const due = pollTimes.findIndex((t) => t >= finish);
				const lag = pollTimes.indexOf(times[0]) - due;
				if (lag > 0) late++;
				maxLag = Math.max(maxLag, lag);
			}
			rows.push({
				case: kase.label,
				rate: options.rate,
				minutes: options.minutes,
				jobs: finishAt.size,
				missing,
				repeated,
				late,
				maxLagPolls: maxLag,
				maxRequests,
				maxBytes,
				errors,
			});
			console.log(
				`  C ${kase.label}: ${options.rate} a minute for ${options.minutes} minutes (${finishAt.size} jobs): ${missing} never fired, ${repeated} twice, ${late} after the first poll after they finished (max ${maxLag} polls late); ≤ ${maxRequests} requests a poll; static data ≤ ${maxBytes} B${errors.length ? `; ERRORS ${errors.slice(0, 3).join(' | ')}` : ''}`,
			);
		} finally {
			await emulator.close();
		}
	}
	return rows;
}

async function main(): Promise<number> {
	const options = parseOptions(process.argv.slice(2));
	triggerFrom = options.from;
	const started = realNow();
	console.log(
		`== Measure 5: the trigger at scale (simulated clock, a poll a minute; node from ${options.from})`,
	);
	const result: IDataObject = {};
	if (options.scenarios.has('A'))
		result.backlog = (await scenarioBacklog(options)) as unknown as IDataObject[];
	if (options.scenarios.has('B'))
		result.burst = (await scenarioBurst(options)) as unknown as IDataObject[];
	if (options.scenarios.has('C'))
		result.sustained = (await scenarioSustained(options)) as unknown as IDataObject[];
	result.seconds = Math.round((realNow() - started) / 100) / 10;
	console.log(`RESULT ${JSON.stringify(result)}`);
	return 0;
}

if (require.main === module) runMain(main, { label: 'bench trigger' });
