/**
 * Measure 5 of `npm run bench`: the Extraction Service Trigger at scale, through n8n-core's poll path
 * (`createTriggerHarness`), against an emulator in this process on a simulated clock (`Date.now` of
 * this process and the emulator's clock): a poll is a minute of the service's time, taken at once,
 * so nothing depends on this machine's speed. Each scenario runs on a fresh emulator:
 *   A. Backlog: N final jobs over the 10 minutes before activation (N = --backlogs), for each event
 *      (Extraction Finished in both list orders): requests of a quiet poll (≤ 10), then of 100 new.
 *   B. Burst: --burst jobs unfinished for 5 polls, then finished at once: each fires once.
 *   C. Sustained: --rate jobs a minute for --minutes, each taking 0–2 minutes: each fires at the
 *      first poll after it finished.
 *   Every poll: the size of the trigger's static data (≤ 32 KB).
 *
 * Run alone: `npx tsx bench/trigger.ts [--from source|dist] [--backlogs 100,1000,10000,50000]
 * [--burst 3000] [--rate 500] [--minutes 10] [--scenarios A,B,C]`. It prints its tables and a
 * `RESULT {json}` line (bench/run.ts reads it).
 */
import { startEmulator, type Emulator, type ListOrder } from '../emulator';
import { createTriggerHarness, loadTriggerType, loadTypes } from '../scripts/engine';
import { readArgs } from '../scripts/lib/args';
import { runMain } from '../scripts/lib/processes';

/** The simulated clock (epoch ms): advanced by the scenarios, read by the emulator and the node. */
let simulated = Date.parse('2026-11-01T08:00:00.000Z');
const realNow = Date.now.bind(Date);
Date.now = () => simulated;
const MINUTE = 60_000;

function parseOptions(argv: string[]) {
	const text = { type: 'string' } as const;
	const { values } = readArgs(
		__filename,
		{ from: text, backlogs: text, burst: text, rate: text, minutes: text, scenarios: text },
		false,
		argv,
	);
	return {
		from: values.from === 'source' ? ('source' as const) : ('dist' as const),
		backlogs: (values.backlogs ?? '100,1000,10000,50000').split(',').map((x) => Number(x.trim())),
		burst: Number(values.burst ?? 3000),
		rate: Number(values.rate ?? 500),
		minutes: Number(values.minutes ?? 10),
		scenarios: new Set((values.scenarios ?? 'A,B,C').split(',')),
	};
}
type Options = ReturnType<typeof parseOptions>;

interface EventCase {
	label: string;
	event: string;
	kind?: 'extraction' | 'parsing';
	order?: ListOrder;
}

const extractionFinished = (order: ListOrder): EventCase => ({
	label: `Extraction Finished, ${order.replace('-', ' ')}`,
	event: 'extractionFinished',
	kind: 'extraction',
	order,
});

const CASES: EventCase[] = [
	extractionFinished('newest-first'),
	extractionFinished('oldest-first'),
	{ label: 'Parsing Finished', event: 'parsingFinished', kind: 'parsing' },
	{ label: 'Document Uploaded', event: 'documentUploaded' },
];
/** The cases of jobs (bursts and sustained load have no uploads). */
const JOB_CASES = CASES.filter((c) => c.kind) as Array<Required<EventCase>>;

/** Creates `n` final jobs (or documents) now. */
const seed = (emulator: Emulator, kase: EventCase, n: number): string[] =>
	kase.kind ? emulator.seedJobs(kase.kind, n) : emulator.seedDocuments(n);

let triggerFrom: 'source' | 'dist' = 'dist';

/**
 * Runs `scenario` with a fresh emulator on the simulated clock and a trigger for the case's event on
 * it, activated after `before`; the trigger's polls go through `polls`, which counts what they did.
 * The row: the case, the scenario's figures, then the largest static data and the poll errors.
 */
async function withTrigger<T>(
	kase: EventCase,
	before: (emulator: Emulator) => void,
	scenario: (polls: Polls, emulator: Emulator) => Promise<T>,
) {
	const emulator = await startEmulator({
		quiet: true,
		processingMs: 0,
		listOrder: kase.order ?? 'newest-first',
		clock: () => simulated,
		credits: 10_000_000,
	});
	try {
		before(emulator);
		const harness = createTriggerHarness({
			parameters: { event: kase.event },
			credentials: {
				extractionServiceApi: { baseUrl: emulator.url, apiKey: emulator.apiKey },
				extractionServiceTokenApi: { baseUrl: emulator.url, token: emulator.token },
			},
			types: {
				trigger: loadTriggerType(triggerFrom),
				credentials: loadTypes(triggerFrom).credentials,
			},
		});
		const polls = new Polls(emulator, harness);
		await polls.activate();
		const row = await scenario(polls, emulator);
		return { case: kase.label, ...row, maxBytes: polls.maxBytes, errors: polls.errors };
	} finally {
		await emulator.close();
	}
}

/** A trigger's polls, a simulated minute apart, and the most requests, static data and errors of any. */
class Polls {
	maxRequests = 0;
	maxBytes = 0;
	errors: string[] = [];

	constructor(
		private readonly emulator: Emulator,
		private readonly harness: ReturnType<typeof createTriggerHarness>,
	) {}

	/** The activation poll (its error counts; its requests do not). */
	async activate(): Promise<void> {
		const run = await this.harness.activate();
		if (run.error) this.errors.push(run.error.message);
		this.maxBytes = JSON.stringify(this.harness.staticData()).length;
	}

	/** One poll a simulated minute after the last: the ids it fired, and the requests it made. */
	async next(): Promise<{ fired: string[]; requests: number }> {
		simulated += MINUTE;
		this.emulator.clearLog();
		const run = await this.harness.poll();
		const requests = this.emulator.requests.length;
		this.maxRequests = Math.max(this.maxRequests, requests);
		this.maxBytes = Math.max(this.maxBytes, JSON.stringify(this.harness.staticData()).length);
		if (run.error) this.errors.push(run.error.message);
		return { fired: run.items.map((item) => String(item.json.id)), requests };
	}

	/** `n` polls: the ids they fired. */
	async several(n: number): Promise<string[]> {
		const fired: string[] = [];
		for (let i = 0; i < n; i++) fired.push(...(await this.next()).fired);
		return fired;
	}

	/** `; ERRORS a | b` (the first `n`), or nothing. */
	errorNote(n = Infinity): string {
		return this.errors.length ? `; ERRORS ${this.errors.slice(0, n).join(' | ')}` : '';
	}
}

async function scenarioBacklog(options: Options) {
	const rows = [];
	for (const kase of CASES) {
		for (const backlog of options.backlogs) {
			const history = (emulator: Emulator) => {
				for (let minute = 0; minute < 10; minute++) {
					seed(emulator, kase, Math.ceil(backlog / 10));
					simulated += MINUTE;
				}
			};
			const row = await withTrigger(kase, history, async (polls, emulator) => {
				await polls.several(3);
				const idleRequests = polls.maxRequests;
				const fresh = seed(emulator, kase, 100);
				const { requests, fired } = await polls.next();
				const newFired = fired.filter((id) => fresh.includes(id)).length;
				console.log(
					`  A ${kase.label}, backlog ${backlog}: nothing new ${idleRequests} requests; 100 new: ${requests} requests, ${newFired} fired; static data ≤ ${polls.maxBytes} B${polls.errorNote()}`,
				);
				return { backlog, idleRequests, newRequests: requests, newFired };
			});
			rows.push(row);
		}
	}
	return rows;
}

/** `scenario`'s row for each case of jobs, each after 1,000 final jobs and a simulated minute. */
async function eachJobCase<T>(
	scenario: (kase: Required<EventCase>, polls: Polls, emulator: Emulator) => Promise<T>,
) {
	const rows = [];
	for (const kase of JOB_CASES) {
		const history = (emulator: Emulator) => {
			seed(emulator, kase, 1000);
			simulated += MINUTE;
		};
		rows.push(await withTrigger(kase, history, async (...run) => await scenario(kase, ...run)));
	}
	return rows;
}

async function scenarioBurst(options: Options) {
	return await eachJobCase(async (kase, polls, emulator) => {
		const burst = emulator.seedJobs(kase.kind, options.burst, { hold: true });
		const fired = await polls.several(5);
		emulator.releaseJobs();
		let drained = 0;
		for (; drained < 20 && !burst.every((id) => fired.includes(id)); drained++)
			fired.push(...(await polls.next()).fired);
		fired.push(...(await polls.several(2)));
		const counts = new Map<string, number>();
		for (const id of fired) counts.set(id, (counts.get(id) ?? 0) + 1);
		const missing = burst.filter((id) => !counts.has(id)).length;
		const repeated =
			[...counts.values()].filter((c) => c > 1).length +
			[...counts.keys()].filter((id) => !burst.includes(id)).length;
		console.log(
			`  B ${kase.label}: burst ${options.burst} unfinished for 5 polls: ${missing} never fired, ${repeated} fired twice or unexpected, drained in ${drained} polls after they finished; static data ≤ ${polls.maxBytes} B${polls.errorNote()}`,
		);
		return { burst: options.burst, missing, repeated, pollsToDrain: drained };
	});
}

async function scenarioSustained(options: Options) {
	return await eachJobCase(async (kase, polls, emulator) => {
		const finishAt = new Map<string, number>();
		const firedAt = new Map<string, number[]>(); // the polls (indices) that fired each job
		const pollTimes: number[] = [];
		const total = options.minutes + 4; // then polls to let the last ones finish
		for (let minute = 0; minute < total; minute++) {
			if (minute < options.minutes) {
				// The minute's jobs, created at spread times, each taking 0–2 minutes.
				for (let slice = 0; slice < 10; slice++) {
					const processingMs = ((minute * 10 + slice) * 7919) % (2 * MINUTE);
					for (const id of emulator.seedJobs(kase.kind, options.rate / 10, { processingMs }))
						finishAt.set(id, simulated + processingMs);
					simulated += MINUTE / 10;
				}
				simulated -= MINUTE; // polls.next() moves it on again
			}
			const poll = await polls.next();
			const n = pollTimes.push(simulated) - 1;
			for (const id of poll.fired) firedAt.set(id, [...(firedAt.get(id) ?? []), n]);
		}
		// Each job's polls that fired it, and the first poll after it finished.
		const tally = [...finishAt].map(([id, finish]) => ({
			fired: firedAt.get(id) ?? [],
			due: pollTimes.findIndex((t) => t >= finish),
		}));
		const missing = tally.filter((job) => job.fired.length === 0).length;
		const repeated = tally.filter((job) => job.fired.length > 1).length;
		const lags = tally.filter((job) => job.fired.length).map((job) => job.fired[0] - job.due);
		const late = lags.filter((lag) => lag > 0).length;
		const maxLag = Math.max(0, ...lags);
		const { maxRequests } = polls;
		console.log(
			`  C ${kase.label}: ${options.rate} a minute for ${options.minutes} minutes (${finishAt.size} jobs): ${missing} never fired, ${repeated} twice, ${late} after the first poll after they finished (max ${maxLag} polls late); ≤ ${maxRequests} requests a poll; static data ≤ ${polls.maxBytes} B${polls.errorNote(3)}`,
		);
		const { rate, minutes } = options;
		const jobs = finishAt.size;
		return { rate, minutes, jobs, missing, repeated, late, maxLagPolls: maxLag, maxRequests };
	});
}

/** What bench/run.ts reads from the `RESULT` line. */
export interface TriggerResult {
	backlog: Awaited<ReturnType<typeof scenarioBacklog>>;
	burst: Awaited<ReturnType<typeof scenarioBurst>>;
	sustained: Awaited<ReturnType<typeof scenarioSustained>>;
	seconds: number;
}

async function main(): Promise<number> {
	const options = parseOptions(process.argv.slice(2));
	triggerFrom = options.from;
	const started = realNow();
	console.log(
		`== Measure 5: the trigger at scale (simulated clock, a poll a minute; node from ${options.from})`,
	);
	const result: Partial<TriggerResult> = {};
	if (options.scenarios.has('A')) result.backlog = await scenarioBacklog(options);
	if (options.scenarios.has('B')) result.burst = await scenarioBurst(options);
	if (options.scenarios.has('C')) result.sustained = await scenarioSustained(options);
	result.seconds = Math.round((realNow() - started) / 100) / 10;
	console.log(`RESULT ${JSON.stringify(result)}`);
	return 0;
}

if (require.main === module) runMain(main, { label: 'bench trigger' });
