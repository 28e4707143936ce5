/**
 * `npm run bench` (= `npm run build && tsx bench/run.ts`): how the node's waiting and uploading
 * compare with the way other n8n document nodes work (one item after another), on this machine.
 * Each measure prints its figures and PASS/FAIL lines, then a summary; details and results in
 * BENCHMARKS.md. The emulator runs as a child process (its CLI, `--log-requests`) and each
 * measurement in a fresh worker (bench/worker.ts: the compiled node in n8n-core's WorkflowExecute,
 * n8n's filesystem binary data mode), so the node's figures are its own.
 *
 *   1+2. 50 documents through Extract → Create: one execution vs 50 single-item executions in a row
 *        (concurrent ≤ T + 5 s, ratio ≥ 25×); polls per job ≤ ⌈T / 2 s⌉ + 2, 2 s to 5.5 s apart.
 *   3. Peak RSS growth of the node process during a 200 MiB Document → Upload: ≤ 64 MiB.
 *   4. CPU time per item of the node process, 500 items at T = 500 ms, minus an empty run.
 *   5. The trigger at scale (bench/trigger.ts, simulated clock): a quiet poll ≤ 10 requests
 *      (extractions), ≤ 10 (documents, parsings: docs/service-api.md §trigger), each job fires once
 *      and at the first poll after it finished, saved state ≤ 32 KB.
 *   6. Thousands of tiny PNGs in one execution (issues 20, 33), each N of --scale-items by each job
 *      time of --scale-times, a yardstick at the node's request count beside each row: every item
 *      output; 5,000 at 3 s and 6 s: ≤ 1.3 polls a job, finished → seen ≤ 1.5 s (median), node
 *      ≤ 4 KiB an item over the yardstick; 50 at 6 s: ≤ 2 polls a job; wide times: ≤ 2 polls a job,
 *      0 jobs seen later than today's poll schedule + one step; 5,000 at 3 s: ≤ 16 KiB an item,
 *      finished → seen ≤ 3 s (issue 20). Default 50 and 5,000 items (about 10 minutes here); all
 *      of issue 33's rows: --scale-items 50,1000,5000 (about 15 minutes).
 *   7. Check Against Schema against Ajv (bench/schema-check.ts, in-process, no emulator): ≥ 10,000
 *      generated cases, 0 disagreements; a new seed each run, printed.
 *   8. The trigger's model-based test (bench/trigger-model.ts): ≥ 2,000 generated histories per
 *      event (--model-runs), 0 failures; a new seed each run, printed (about an hour).
 *   9. Memory of a large Document → Download (--download-mib, 300 MiB) against a 1 MiB one, n8n
 *      filesystem binary data mode: the file streams into the store, peak RSS grows ≤ 64 MiB more.
 *  10. The transport against generated fault sequences (bench/transport-faults.ts): --fault-runs
 *      per request kind (create, poll, list, download), 0 counterexamples; seed printed (about 40 min).
 *
 * Options: --processing-ms <T> (6000) --items <n> (50) --reps <n> (3) --sequential-items <n> (= items;
 * fewer is extrapolated and labelled so) --upload-mib <n> (200) --cpu-items <n> (500)
 * --cpu-processing-ms <n> (500) --scale-items <n,n,…> (50,5000) --scale-times <ms|min-max,…>
 * (3000,6000,3000-30000; a range draws each job's time from it, seeded) --scale-seed <n> (random)
 * --scale-yardstick <post|form|off> (post) --scale-processing-ms <n> (= --scale-times n)
 * --scale-gc <default|steady> (default; steady: measure 6's workers run with V8's
 * --predictable-gc-schedule --single-threaded-gc, see `SCALE_GC`)
 * --schema-cases <n> (10000) --schema-seed <n> (random) --model-runs <n> (2000)
 * --download-mib <n> (300) --fault-runs <n> (2000) --only <1,2,3,4,5,6,7,8,9,10> --help
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, openAsBlob } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { LoggedRequest } from '../emulator';
import { launchEmulator, type EmulatorProcess } from '../emulator/launch';
import { numberFlag, readArgs, usageError } from '../scripts/lib/args';
import { installLine } from '../scripts/lib/n8n';
import { removeAtExit, ROOT, runMain, startService } from '../scripts/lib/processes';
import { writeLargePdf } from './pdf';
import { checkAgainstAjv } from './schema-check';
import type { TriggerResult } from './trigger';
import type {
	CpuResult,
	DownloadResult,
	ScaleResult,
	ThroughputResult,
	UploadResult,
} from './worker';

/** Each numeric flag and its default. */
const NUMBERS = {
	'processing-ms': 6000,
	items: 50,
	reps: 3,
	'upload-mib': 200,
	'cpu-items': 500,
	'cpu-processing-ms': 500,
	'scale-processing-ms': 3000,
	'schema-cases': 10_000,
	'model-runs': 2000,
	'download-mib': 300,
	'fault-runs': 2000,
};

/** Reads the command line (scripts/lib/args.ts; `--help` prints the header of this file). */
function parseOptions() {
	const flags = [
		...Object.keys(NUMBERS),
		'sequential-items',
		'only',
		'scale-items',
		'scale-times',
		'scale-seed',
		'scale-yardstick',
		'scale-gc',
		'schema-seed',
	];
	const text = { type: 'string' } as const;
	const { values } = readArgs(__filename, Object.fromEntries(flags.map((flag) => [flag, text])));
	const given = values as Record<string, string | undefined>;
	const num = (flag: string, dflt = NUMBERS[flag as keyof typeof NUMBERS], value = given[flag]) =>
		numberFlag(flag, value, dflt, 1);
	/** A list of numbers, e.g. `--only 1,2`. */
	const list = (flag: string, dflt: string) =>
		(given[flag] ?? dflt).split(',').map((value) => num(flag, 0, value));
	const items = num('items');
	return {
		processingMs: num('processing-ms'),
		items,
		reps: num('reps'),
		sequentialItems: Math.min(num('sequential-items', items), items),
		uploadMiB: num('upload-mib'),
		downloadMiB: num('download-mib'),
		faultRuns: num('fault-runs'),
		cpuItems: num('cpu-items'),
		cpuProcessingMs: num('cpu-processing-ms'),
		only: new Set(list('only', '1,2,3,4,5,6,7,8,9,10')),
		scaleItems: list('scale-items', '50,5000'),
		// --scale-processing-ms T (the flag before issue 33) is --scale-times T.
		scaleTimes: scaleTimes(
			given['scale-times'] ??
				(given['scale-processing-ms']
					? String(num('scale-processing-ms'))
					: '3000,6000,3000-30000'),
		),
		scaleSeed:
			given['scale-seed'] === undefined
				? Math.floor(Math.random() * 2 ** 31)
				: numberFlag('scale-seed', given['scale-seed'], 0, 0, true),
		scaleYardstick: yardstickFlag(given['scale-yardstick'] ?? 'post'),
		scaleGc: scaleGcFlag(given['scale-gc'] ?? 'default'),
		schemaCases: num('schema-cases'),
		modelRuns: num('model-runs'),
		schemaSeed:
			given['schema-seed'] === undefined
				? Math.floor(Math.random() * 2 ** 31)
				: numberFlag('schema-seed', given['schema-seed'], 0, 0, true),
	};
}
type Options = ReturnType<typeof parseOptions>;

/** `--scale-yardstick`: the create of measure 6's yardstick (`post`, `form`), or `off`. */
function yardstickFlag(value: string): 'post' | 'form' | 'off' {
	if (value === 'post' || value === 'form' || value === 'off') return value;
	return usageError(`--scale-yardstick: post, form or off, not ${value}`);
}

/**
 * `--scale-gc`: V8 flags of measure 6's workers. `default` is n8n's own V8 (the peak RSS then moves
 * with when the old generation is collected, which on a shared machine depends on the load: the
 * same row's peak moves by 10 – 30 KiB an item from run to run). `steady` fixes V8's heap growing
 * (`--predictable-gc-schedule`: heap growing 30 %, semi-space 4 MiB, no memory reducer) and marks
 * on the main thread (`--single-threaded-gc`), so a peak depends on what is allocated and kept, not
 * on timing: for comparing the node with the yardstick, not for the KiB n8n would show.
 */
const SCALE_GC = {
	default: [],
	steady: ['--predictable-gc-schedule', '--single-threaded-gc'],
} as const;

/** `--scale-gc`: `default` or `steady` (`SCALE_GC`). */
function scaleGcFlag(value: string): keyof typeof SCALE_GC {
	if (value === 'default' || value === 'steady') return value;
	return usageError(`--scale-gc: default or steady, not ${value}`);
}

/** V8 flags of the next bench/worker.ts processes (measure 6 sets them: `SCALE_GC`). */
let workerV8Flags: readonly string[] = [];

const MiB = 1024 * 1024;
/** Every PASS/FAIL line so far, repeated in the summary. */
const verdicts: string[] = [];

function median(values: number[]): number {
	const s = [...values].sort((a, b) => a - b);
	const m = Math.floor(s.length / 2);
	return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** "median X (range A–B, n=N)" with a unit and a formatter. */
function summary(values: number[], format: (v: number) => string): string {
	if (values.length === 0) return 'n/a';
	if (values.length === 1) return `${format(values[0])} (n=1)`;
	return `median ${format(median(values))} (range ${format(Math.min(...values))} – ${format(Math.max(...values))}, n=${values.length})`;
}

const s1 = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;
const mib = (bytes: number): string => `${(bytes / MiB).toFixed(1)} MiB`;
/** `  FAILURES: a; b; c` after a run's line (the first three), or nothing. */
const failed = (failures: string[], lead = '  FAILURES: ', separator = '; '): string =>
	failures.length ? `${lead}${failures.slice(0, 3).join(separator)}` : '';

function verdict(pass: boolean, text: string): void {
	const line = `${pass ? 'PASS' : 'FAIL'}  ${text}`;
	verdicts.push(line);
	console.log(`  ${line}`);
}

/** Prints each argument on a line of its own. */
const log = (...lines: string[]): void => console.log(lines.join('\n'));

/** The throwaway folder of this run (removed at exit). */
const tmp = mkdtempSync(path.join(os.tmpdir(), 'extraction-bench-'));
removeAtExit(tmp);

/**
 * Runs `bench/<script> <args>` in a fresh process (a child of scripts/lib/processes.ts, like the
 * emulator) and returns the JSON of its `RESULT {json}` line; stderr is passed through. A measure's
 * worker (`worker.ts <kind> <config>`) keeps binary data as files on disk (n8n's own default outside
 * queue mode, the input path of a real n8n server) in the measure's user folder, set before n8n-core
 * loads.
 *
 * @throws Error when the worker exits without a result or after `timeoutMs` (it is then killed)
 */
async function runWorker<T>(
	args: string[],
	timeoutMs: number,
	script = 'worker.ts',
	nodeBin = process.execPath,
): Promise<T> {
	const env = { ...process.env };
	if (script === 'worker.ts') {
		const userFolder = path.join(tmp, `n8n-${args[0] === 'store' ? 'upload' : args[0]}`);
		mkdirSync(userFolder, { recursive: true });
		Object.assign(env, { N8N_DEFAULT_BINARY_DATA_MODE: 'filesystem', N8N_USER_FOLDER: userFolder });
	}
	// `node --import tsx`: one process (the tsx CLI would add a parent process).
	const v8 = script === 'worker.ts' ? workerV8Flags : [];
	const argv = [...v8, '--expose-gc', '--import', 'tsx', path.join(ROOT, 'bench', script), ...args];
	const child = startService('worker', nodeBin, argv, { env });
	// The node's MaxListenersExceededWarning (see BENCHMARKS.md) is counted, not repeated.
	let listenerWarnings = 0;
	let result: T | undefined;
	child.onLine((line, stream) => {
		if (stream === 'stdout') {
			if (line.startsWith('RESULT ')) result = JSON.parse(line.slice(7)) as T;
			else if (line.trim()) process.stdout.write(`    [worker] ${line}\n`);
		} else if (/MaxListenersExceededWarning/.test(line)) listenerWarnings++;
		else if (!/^(\(Use `node --trace-warnings|\[worker exited)/.test(line))
			process.stderr.write(`${line}\n`);
	});
	const timer = setTimeout(() => void child.kill(), timeoutMs);
	const { code, signal } = await child.done;
	clearTimeout(timer);
	if (listenerWarnings)
		log(
			`    [worker] stderr: ${listenerWarnings} × MaxListenersExceededWarning (abort listeners on the node's AbortSignal)`,
		);
	if (result === undefined)
		throw new Error(
			`worker ${args[0]} ${signal ? `ended by ${signal} (timeout ${timeoutMs} ms)` : `exited with ${code}`} without a result`,
		);
	return result;
}

/** Runs worker.ts's `kind` on `config`, with the emulator's URL and API key added to it. */
type Work = <T>(kind: string, config: object, timeoutMs: number) => Promise<T>;

/**
 * Runs `task` with the emulator as a child process (its memory and CPU stay out of the node's
 * figures), jobs taking `processingMs`, and stops it after.
 */
async function withEmulator(
	processingMs: number,
	task: (emulator: EmulatorProcess, work: Work) => Promise<void>,
): Promise<void> {
	const emulator = await launchEmulator({ processingMs, quiet: true, readyTimeoutMs: 30_000 });
	log(`  emulator child pid ${emulator.pid} at ${emulator.url}`);
	const service = { url: emulator.url, apiKey: emulator.apiKey };
	const work: Work = async (kind, config, timeoutMs) =>
		await runWorker([kind, JSON.stringify({ ...service, ...config })], timeoutMs);
	try {
		await task(emulator, work);
	} finally {
		await emulator.stop();
	}
}

/** The results of `reps` runs of `once`, which gets "1/3", "2/3", … to print. */
async function repeat<T>(reps: number, once: (rep: string) => Promise<T>): Promise<T[]> {
	const results: T[] = [];
	for (let rep = 1; rep <= reps; rep++) results.push(await once(`${rep}/${reps}`));
	return results;
}

/**
 * Each job's creation and final time (read from the service) and its polls (the emulator's log of
 * `GET /v0/extract/{id}`, in order).
 */
async function jobTimes(emulator: EmulatorProcess, requests: LoggedRequest[], ids: string[]) {
	const polls = new Map<string, number[]>();
	for (const r of requests) {
		const m = /^\/v0\/extract\/([0-9a-f-]{36})$/.exec(r.path);
		if (r.origin === 'api' && r.method === 'GET' && m)
			polls.set(m[1], [...(polls.get(m[1]) ?? []), r.at]);
	}
	const firstPoll: number[] = [];
	const seen: number[] = [];
	const jobs = [];
	for (const id of ids) {
		const response = await fetch(`${emulator.url}/v0/extract/${id}`, {
			headers: { 'X-API-Key': emulator.apiKey },
		});
		const body = (await response.json()) as { created_at: string; updated_at: string };
		const at = (polls.get(id) ?? []).sort((a, b) => a - b);
		if (at.length) {
			firstPoll.push(at[0] - Date.parse(body.created_at));
			seen.push(at[at.length - 1] - Date.parse(body.updated_at));
		}
		jobs.push(at);
	}
	return { polls: jobs, firstPoll, seen };
}

/** Measures 1 and 2: wall time against the one-after-another baseline, and the polls of each job. */
async function measureThroughput(options: Options): Promise<void> {
	const T = options.processingMs;
	log(
		`\n== Measures 1 + 2: ${options.items} documents, Extract → Create (binary source, schema Invoice, Wait for Completion on, default options), T = ${T} ms`,
	);
	await withEmulator(T, async (emulator, work) => {
		const run = async (config: object, timeoutMs = 180_000) =>
			await work<ThroughputResult>('throughput', config, timeoutMs);
		const concurrent = await repeat(options.reps, async (rep) => {
			const r = await run({ mode: 'concurrent', items: options.items });
			log(
				`  concurrent run ${rep}: one execution with ${r.items} items: ${s1(r.wallMs)}${failed(r.failures)}`,
			);
			return r;
		});
		const one = await run({ mode: 'concurrent', items: options.items, concurrency: 1 });
		log(
			`  for comparison, option Concurrency = 1 (one request in flight; still one execution with ${one.items} items): ${s1(one.wallMs)}${failed(one.failures)}`,
			`  baseline (one item after another, the way other n8n document nodes work): ${options.sequentialItems} single-item executions in a row, each waiting for its job…`,
		);
		const sequential = await run(
			{ mode: 'sequential', items: options.sequentialItems },
			options.sequentialItems * 60_000,
		);
		const extrapolated = options.sequentialItems < options.items;
		const sequentialWall = extrapolated
			? (sequential.wallMs / sequential.items) * options.items
			: sequential.wallMs;
		log(
			`  baseline, sequential: ${sequential.items} executions: ${s1(sequential.wallMs)}; per execution ${summary(sequential.perExecutionMs, s1)}${failed(sequential.failures)}`,
		);
		if (extrapolated)
			log(
				`  EXTRAPOLATED: baseline for ${options.items} items = ${s1(sequential.wallMs)} / ${sequential.items} × ${options.items} = ${s1(sequentialWall)}`,
			);

		await emulator.settle();
		const requests: LoggedRequest[] = emulator.requests.slice();
		const isCreate = (q: LoggedRequest) => q.method === 'POST' && q.path === '/v0/extract';

		// ---- Measure 1
		const concurrentWalls = concurrent.map((r) => r.wallMs);
		const concurrentMedian = median(concurrentWalls);
		const ratios = concurrentWalls.map((w) => sequentialWall / w);
		log(
			`\n  Measure 1 — wall time, ${options.items} documents`,
			`    node, concurrent (1 execution, ${options.items} items):   ${summary(concurrentWalls, s1)}`,
			`    node, concurrent, option Concurrency = 1:  ${s1(one.wallMs)} (n=1; not sequential: waiting jobs hold no request slot)`,
			`    baseline, sequential (${options.items} executions):        ${s1(sequentialWall)}${extrapolated ? ' (extrapolated)' : ''} (n=1)`,
			`    ratio baseline / concurrent:             ${summary(ratios, (v) => `${v.toFixed(1)}×`)}`,
		);
		const lastCreates = concurrent.map((r) => {
			const ats = requests
				.filter((q) => isCreate(q) && q.at >= r.startedAt && q.at <= r.endedAt)
				.map((q) => q.at);
			return Math.max(...ats) - r.startedAt;
		});
		log(
			`    concurrent: execution start → last create (POST) received: ${summary(lastCreates, s1)}; the rest is T + the wait until the next poll`,
		);
		const allFailures = [concurrent, [one, sequential]].flat().flatMap((r) => r.failures);
		verdict(
			allFailures.length === 0,
			`every job FINISHED (${(concurrent.length + 1) * options.items + sequential.items} jobs)${allFailures.length ? `: ${allFailures.length} failures` : ''}`,
		);
		verdict(
			concurrentMedian <= T + 5000,
			`concurrent wall time ≤ T + 5 s = ${s1(T + 5000)}: median ${s1(concurrentMedian)}`,
		);
		verdict(median(ratios) >= 25, `ratio ≥ 25×: median ${median(ratios).toFixed(1)}×`);

		// ---- Measure 2
		const ids = [...concurrent.flatMap((r) => r.ids), ...one.ids, ...sequential.ids];
		const { polls, firstPoll, seen } = await jobTimes(emulator, requests, ids);
		const pollCounts = polls.map((at) => at.length);
		const gaps = polls.flatMap((at) => at.slice(1).map((t, i) => t - at[i]));
		// Every API request of the measured executions, divided by the number of jobs.
		const windows = [...concurrent, one, sequential].map((r) => [r.startedAt, r.endedAt + 1000]);
		const inWindows = requests.filter(
			(r) => r.origin === 'api' && windows.some(([a, b]) => r.at >= a && r.at <= b),
		);
		const posts = inWindows.filter(isCreate).length;
		const others = inWindows.filter(
			(r) => !isCreate(r) && !/^\/v0\/extract\/[0-9a-f-]{36}$/.test(r.path),
		);
		const bound = Math.ceil(T / 2000) + 2;
		const slack = 500;
		log(
			`\n  Measure 2 — requests per job (emulator request log, ${ids.length} jobs: ${concurrent.length + 1}×${options.items} concurrent + ${sequential.items} sequential)`,
			`    API requests in the runs: ${inWindows.length} = ${posts} creates (POST /v0/extract) + ${inWindows.length - posts - others.length} polls (GET /v0/extract/{id}) + ${others.length} other → ${(inWindows.length / ids.length).toFixed(2)} requests per job`,
			`    polls per job:                           ${summary(pollCounts, (v) => v.toFixed(1))}`,
			`    creation → first poll:                   ${summary(firstPoll, s1)}`,
			`    between consecutive polls of a job:      ${summary(gaps, s1)}`,
			`    final state → the poll that saw it:      ${summary(seen, s1)}  (how late the node notices; not a target)`,
		);
		verdict(
			Math.max(...pollCounts) <= bound && Math.min(...pollCounts) >= 1,
			`polls per job ≤ ⌈T / 2 s⌉ + 2 = ${bound}: max ${Math.max(...pollCounts)}`,
		);
		const minGap = Math.min(...gaps, ...firstPoll);
		const maxGap = gaps.length ? Math.max(...gaps) : 0;
		verdict(
			minGap >= 2000 && maxGap <= 5000 + slack,
			`no request while a job's next poll is not due: polls ≥ 2 s apart (min ${s1(minGap)}, incl. creation → first poll) and ≤ 5 s + ${slack} ms (max ${gaps.length ? s1(maxGap) : 'n/a: one poll per job'})`,
		);
		verdict(others.length === 0, `no requests besides creates and polls: ${others.length}`);
	});
}

/** The SHA-256 and size of a stored document's file, downloaded through its redirect. */
async function sha256OfDownload(emulator: EmulatorProcess, documentId: string) {
	const url = `${emulator.url}/v0/documents/${documentId}/download`;
	const response = await fetch(url, { headers: { 'X-API-Key': emulator.apiKey } });
	if (!response.ok) throw new Error(`download of ${documentId}: HTTP ${response.status}`);
	// Read whole: this is the orchestrator, not the measured node process.
	const file = Buffer.from(await response.arrayBuffer());
	return { sha256: createHash('sha256').update(file).digest('hex'), bytes: file.length };
}

/** Measure 3: peak RSS growth of the node process during a large Document → Upload. */
async function measureUpload(options: Options): Promise<void> {
	const size = options.uploadMiB * MiB;
	log(
		`\n== Measure 3: memory of one ${options.uploadMiB} MiB PDF upload, Document → Upload, n8n filesystem binary data mode`,
	);
	const file = path.join(tmp, 'large.pdf');
	const t0 = Date.now();
	const pdf = await writeLargePdf(file, size);
	log(`  generated ${file}: ${pdf.size} bytes, one page, in ${s1(Date.now() - t0)}`);
	const binaryFile = path.join(tmp, 'binary.json');
	// Stored by a separate process, as a previous node (Read Files) would have stored it.
	const config = JSON.stringify({ file, fileName: 'large.pdf', out: binaryFile });
	const stored = await runWorker<{ id: string; bytes: number }>(['store', config], 120_000);
	log(`  stored as n8n binary data ${stored.id} (${stored.bytes} bytes) by a separate process`);

	await withEmulator(options.processingMs, async (emulator, work) => {
		const results = await repeat(options.reps, async (rep) => {
			const r = await work<UploadResult>('upload', { binaryFile }, 300_000);
			log(
				`  upload ${rep}: ${s1(r.wallMs)}, RSS before ${mib(r.baselineRss)}, peak ${mib(r.baselineRss + r.growth)} (sampler ${mib(r.sampledPeakRss)} over ${r.samples} samples, kernel VmHWM ${r.hwmPeakRss ? mib(r.hwmPeakRss) : 'n/a'}) → growth ${mib(r.growth)}; document ${r.documentId}, ${r.pageCount} page(s)${r.error ? `  ERROR: ${r.error}` : ''}`,
			);
			return r;
		});
		await emulator.settle();
		const uploads = emulator.requests.filter(
			(r) => r.method === 'POST' && r.path === '/v0/documents' && r.bodyBytes >= size,
		);
		log(
			`  request bodies received by the emulator: ${uploads.map((r) => `${r.bodyBytes} bytes, ${r.headers['content-length'] ? `Content-Length ${r.headers['content-length']}` : `Transfer-Encoding ${r.headers['transfer-encoding'] ?? '?'}`}`).join('; ')}`,
		);
		const check = results[0]?.documentId
			? await sha256OfDownload(emulator, results[0].documentId)
			: undefined;
		const intact = check?.sha256 === pdf.sha256 && check.bytes === pdf.size;
		log(
			`  stored file of upload 1: ${check ? `${check.bytes} bytes, sha256 ${intact ? 'equal to' : 'DIFFERENT from'} the generated file` : 'not available'}`,
		);

		const growth = results.map((r) => r.growth);
		const walls = results.map((r) => r.wallMs);
		log(
			`\n  Measure 3 — peak RSS growth of the node process during the upload: ${summary(growth, mib)}`,
			`    upload wall time: ${summary(walls, s1)}`,
		);
		verdict(
			results.every((r) => !r.error && r.pageCount === 1) && intact,
			'every upload answered 201 with the document, stored byte for byte',
		);
		verdict(median(growth) <= 64 * MiB, `peak RSS growth ≤ 64 MiB: median ${mib(median(growth))}`);
	});
}

/** Measure 4: CPU time per item of the node process, against an empty execution's. */
async function measureCpu(options: Options): Promise<void> {
	const T = options.cpuProcessingMs;
	log(
		`\n== Measure 4: CPU time per item of the node process, ${options.cpuItems} items, Extract → Create with Wait for Completion, T = ${T} ms`,
	);
	await withEmulator(T, async (emulator, work) => {
		const ms = (us: number, digits = 0): string => (us / 1000).toFixed(digits);
		const results = await repeat(options.reps, async (rep) => {
			const before = Date.now();
			const config = { items: options.cpuItems, warmupItems: 20 };
			const r = await work<CpuResult>('cpu', config, 300_000);
			await emulator.settle();
			const requests = emulator.requests.filter((q) => q.origin === 'api' && q.at >= before).length;
			const { node, empty } = r;
			log(
				`  run ${rep}: node run ${ms(node.total)} ms CPU (user ${ms(node.user)}, system ${ms(node.system)}) in ${s1(node.wallMs)}; empty run ${ms(empty.total)} ms CPU in ${s1(empty.wallMs)}; ${requests} API requests incl. 20 warm-up items${failed(r.failures)}`,
			);
			return r;
		});
		const perItem = (cpuUs: (r: CpuResult) => number) => {
			const values = results.map((r) => cpuUs(r) / r.items);
			return summary(values, (us) => `${ms(us, 2)} ms`);
		};
		log(
			`\n  Measure 4 — CPU time per item (user + system of the node process)`,
			`    node execution / item:                   ${perItem((r) => r.node.total)}`,
			`    empty execution (pass-through) / item:   ${perItem((r) => r.empty.total)}`,
			`    node's own cost / item (difference):     ${perItem((r) => r.node.total - r.empty.total)}`,
		);
		verdict(
			results.every((r) => r.failures.length === 0),
			`every job FINISHED (${results.length}×${options.cpuItems} items)`,
		);
	});
}

/** The value below which `share` of `values` lie (nearest rank); NaN for none. */
function quantile(values: number[], share: number): number {
	if (values.length === 0) return Number.NaN;
	const s = [...values].sort((a, b) => a - b);
	return s[Math.min(s.length - 1, Math.max(0, Math.ceil(share * s.length) - 1))];
}

const mean = (values: number[]): number =>
	values.length ? values.reduce((a, b) => a + b, 0) / values.length : Number.NaN;

/**
 * Today's wait before poll number `n` (0-based), ms: `pollDelay` in
 * nodes/ExtractionService/v1/helpers/polling.ts with `DEFAULT_POLL_TIMING` (2 s growing by 1.25 to
 * the 5 s cap), without its upward jitter (up to +10 %): the earliest today's schedule polls. The
 * grid after a create: 2 s, 4.5 s, 7.6 s, 11.5 s, 16.4 s, 21.4 s, then every 5 s.
 */
const todayWait = (n: number, jitter = 0): number =>
	Math.min(2000 * 1.25 ** n * (1 + jitter), 5000);

/**
 * When today's schedule would have seen a job final `finishMs` after its create: the first poll of
 * today's grid at or after it (`seenMs`, from the create), how many polls that is, and the gap to
 * the grid's next poll (`stepMs`). With `jitter` 0.1, today's latest grid: every wait at its
 * largest jitter (`pollDelay` raises each by up to 10 %, never above 5 s).
 */
function todaySeen(
	finishMs: number,
	jitter = 0,
): { seenMs: number; polls: number; stepMs: number } {
	let at = 0;
	for (let n = 0; ; n++) {
		at += todayWait(n, jitter);
		if (at >= finishMs) return { seenMs: at, polls: n + 1, stepMs: todayWait(n + 1, jitter) };
	}
}

/** A measure-6 job time: fixed (`minMs` = `maxMs`) or drawn per job from [minMs, maxMs]. */
interface ScaleTime {
	label: string;
	minMs: number;
	maxMs: number;
}

/** `--scale-times 3000,6000,3000-30000`: a fixed time in ms, or a range drawn per job. */
function scaleTimes(spec: string): ScaleTime[] {
	return spec.split(',').map((part) => {
		const [min, max = min] = part.split('-').map((v) => numberFlag('scale-times', v, 0, 1, true));
		if (max < min) usageError(`--scale-times: ${part} is not a range from low to high`);
		const label = min === max ? `fixed ${min / 1000} s` : `wide ${min / 1000}–${max / 1000} s`;
		return { label, minMs: min, maxMs: max };
	});
}

/**
 * Each job's creation and final time (`created_at`, `updated_at` of its final state, read from the
 * service after the run, 16 at a time) and its polls (`GET /v0/extract/{id}` in `requests`), ms.
 */
async function scaleJobs(emulator: EmulatorProcess, requests: LoggedRequest[], ids: string[]) {
	const polls = new Map<string, number[]>();
	for (const r of requests) {
		const m = /^\/v0\/extract\/([0-9a-f-]{36})$/.exec(r.path);
		if (r.origin === 'api' && r.method === 'GET' && m) {
			const at = polls.get(m[1]);
			if (at) at.push(r.at);
			else polls.set(m[1], [r.at]);
		}
	}
	const jobs: Array<{ created: number; final: number; status: string; polls: number[] }> = [];
	for (let i = 0; i < ids.length; i += 16)
		jobs.push(
			...(await Promise.all(
				ids.slice(i, i + 16).map(async (id) => {
					const response = await fetch(`${emulator.url}/v0/extract/${id}`, {
						headers: { 'X-API-Key': emulator.apiKey },
					});
					const body = (await response.json()) as Record<string, string>;
					return {
						created: Date.parse(body.created_at),
						final: Date.parse(body.updated_at),
						status: String(body.status),
						polls: (polls.get(id) ?? []).sort((a, b) => a - b),
					};
				}),
			)),
		);
	return jobs;
}

/** The API requests of a run in the emulator's log: its window (start to end + 1 s), by kind. */
function runRequests(emulator: EmulatorProcess, r: ScaleResult) {
	const requests = emulator.requests.filter(
		(q) => q.origin === 'api' && q.at >= r.startedAt && q.at <= r.endedAt + 1000,
	);
	const creates = requests.filter((q) => q.method === 'POST' && q.path === '/v0/extract').length;
	const polls = requests.filter(
		(q) => q.method === 'GET' && /^\/v0\/extract\/[0-9a-f-]{36}$/.test(q.path),
	).length;
	return { requests, creates, polls, others: requests.length - creates - polls };
}

/** One row of measure 6: the node's figures, and the yardstick's at the node's request count. */
interface ScaleRow {
	items: number;
	time: string;
	wallMs: number;
	requestsPerJob: number;
	pollsMean: number;
	pollsMax: number;
	todayPolls: number;
	seenMedian: number;
	seenP90: number;
	seenMax: number;
	firstPollMedian: number;
	laterMax: number;
	laterP99: number;
	laterThanStep: number;
	/** Jobs seen later than today's latest grid (every wait +10 %) + one step. */
	laterThanLatest: number;
	kibPerItem: number;
	yardstick?: { spec: string; requestsPerJob: number; kibPerItem: number; wallMs: number };
}

const f2 = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : 'n/a');

/**
 * Measure 6 (issues 20, 33): one execution of N tiny PNGs through Extract → Create with Wait for
 * Completion for each N of `--scale-items` and each job time of `--scale-times` (each row against a
 * fresh emulator), and beside each, the yardstick (`bench/worker.ts` `requestsOnly`) at the node's
 * request count: a create and the node's GETs a job. Judges polls a job, how soon finished jobs are
 * seen, how much later than today's poll schedule (`todaySeen`), and memory against the yardstick.
 */
async function measureScale(options: Options): Promise<void> {
	const { scaleItems, scaleSeed } = options;
	const envNode = process.env.BENCH_SCALE_NODE;
	log(
		`\n== 6. Thousands of items in one execution: tiny PNGs, Extract → Create, Wait for Completion; items ${scaleItems.join(', ')}; job times ${options.scaleTimes.map((t) => t.label).join(', ')}`,
		`  wide job times: each job's metadata emulator_processing_ms, drawn per item uniformly (mulberry32, seed ${scaleSeed}; replay: --scale-seed ${scaleSeed}); the emulator's processing-ms is the range's low end (warm-up jobs)`,
		`  today's schedule: polls at 2 s, 4.5 s, 7.6 s, 11.5 s, 16.4 s, 21.4 s, then every 5 s after the create (polling.ts pollDelay without jitter); "later" = seen − today's seen, from the job's created_at`,
		envNode
			? `  BENCH_SCALE_NODE=${envNode}: the rows are that yardstick, not the node (no yardstick beside them)`
			: `  yardstick beside each row: ${options.scaleYardstick === 'off' ? 'off' : `requests-only:${options.scaleYardstick}+x, x = the node's GETs a job, first GET at the node's median created → first poll, then today's gaps (2.5 s, 3.1 s … 5 s)`}`,
		`  worker V8 flags (--scale-gc ${options.scaleGc}): ${SCALE_GC[options.scaleGc].join(' ') || 'none'}`,
	);
	workerV8Flags = SCALE_GC[options.scaleGc];
	const rows: ScaleRow[] = [];
	for (const time of options.scaleTimes)
		for (const items of scaleItems) {
			const wide = time.maxMs > time.minMs ? { ...time, seed: scaleSeed } : undefined;
			await withEmulator(time.minMs, async (emulator, work) => {
				const r = await work<ScaleResult>('scale', { items, wide }, 1_800_000);
				await emulator.settle();
				const q = runRequests(emulator, r);
				const jobs = await scaleJobs(emulator, q.requests, r.ids);
				const polls = jobs.map((j) => j.polls.length);
				const seen = jobs.filter((j) => j.polls.length).map((j) => j.polls.at(-1)! - j.final);
				const firstPoll = jobs.filter((j) => j.polls.length).map((j) => j.polls[0] - j.created);
				const today = jobs.map((j) => ({ job: j, ...todaySeen(j.final - j.created) }));
				const later = today
					.filter((t) => t.job.polls.length)
					.map((t) => ({ by: t.job.polls.at(-1)! - t.job.created - t.seenMs, step: t.stepMs }));
				const latest = jobs
					.filter((j) => j.polls.length)
					.map((j) => ({ j, ...todaySeen(j.final - j.created, 0.1) }))
					.filter((t) => t.j.polls.at(-1)! - t.j.created - t.seenMs > t.stepMs).length;
				const row: ScaleRow = {
					items,
					time: time.label,
					wallMs: r.wallMs,
					requestsPerJob: q.requests.length / items,
					pollsMean: mean(polls),
					pollsMax: Math.max(...polls),
					todayPolls: mean(today.map((t) => t.polls)),
					seenMedian: median(seen),
					seenP90: quantile(seen, 0.9),
					seenMax: Math.max(...seen),
					firstPollMedian: median(firstPoll),
					laterMax: Math.max(...later.map((l) => l.by)),
					laterP99: quantile(
						later.map((l) => l.by),
						0.99,
					),
					laterThanStep: later.filter((l) => l.by > l.step).length,
					laterThanLatest: latest,
					kibPerItem: r.growth / items / 1024,
				};
				const notFinal = jobs.filter((j) => j.status !== 'FINISHED').length;
				log(
					`  ${r.node} ${items} items, ${time.label}: wall ${s1(r.wallMs)}; ${q.requests.length} API requests = ${q.creates} creates + ${q.polls} polls + ${q.others} other → ${f2(row.requestsPerJob)} requests a job; polls a job mean ${f2(row.pollsMean)}, max ${row.pollsMax} (today's grid: ${f2(row.todayPolls)})`,
					`    finished → seen median ${s1(row.seenMedian)}, p90 ${s1(row.seenP90)}, max ${s1(row.seenMax)}; created → first poll median ${s1(row.firstPollMedian)}; seen − today's seen max ${s1(row.laterMax)}, p99 ${s1(row.laterP99)}; ${row.laterThanStep} jobs later than today's seen + one step (${row.laterThanLatest} than today's latest, every wait +10 %, + one step)`,
					`    peak RSS growth ${mib(r.growth)} = ${row.kibPerItem.toFixed(1)} KiB an item (RSS before ${mib(r.baselineRss)}); ${r.ids.length} output items${notFinal ? `, ${notFinal} jobs not FINISHED when read after` : ''}${failed(r.failures, '; FAILURES ', ' | ')}`,
				);
				if (!envNode && options.scaleYardstick !== 'off') {
					const gets = Math.max(0, row.requestsPerJob - 1);
					const spec = `requests-only:${options.scaleYardstick}+${gets.toFixed(3)}`;
					const firstGetMs = Math.round(row.firstPollMedian);
					const y = await work<ScaleResult>('scale', { items, node: spec, firstGetMs }, 1_800_000);
					await emulator.settle();
					const yq = runRequests(emulator, y);
					row.yardstick = {
						spec,
						requestsPerJob: yq.requests.length / items,
						kibPerItem: y.growth / items / 1024,
						wallMs: y.wallMs,
					};
					log(
						`    yardstick ${spec} (first GET ${s1(firstGetMs)} after the create): wall ${s1(y.wallMs)}; ${yq.requests.length} API requests = ${yq.creates} creates + ${yq.polls} GETs + ${yq.others} other → ${f2(row.yardstick.requestsPerJob)} a job; peak RSS growth ${mib(y.growth)} = ${row.yardstick.kibPerItem.toFixed(1)} KiB an item → node over yardstick ${(row.kibPerItem - row.yardstick.kibPerItem).toFixed(1)} KiB an item${y.ids.length === items ? '' : `; ${y.ids.length} output items`}`,
					);
				}
				rows.push(row);
				judgeScaleRow(row, r, time);
			});
		}
	workerV8Flags = [];
	log(
		'\n  Measure 6 — table (node | yardstick at the node’s request count)',
		'  | N | Job times | Wall | Requests a job | Polls a job: mean, max (today’s grid) | Finished → seen: median, p90, max | Created → first poll (median) | Seen − today’s seen: max, p99; jobs > one step later (than today’s latest) | Peak RSS growth an item | Yardstick (its requests a job): an item | Node over yardstick |',
		'  |---|---|---|---|---|---|---|---|---|---|---|',
		...rows.map((w) => {
			const y = w.yardstick;
			return `  | ${w.items.toLocaleString('en-US')} | ${w.time} | ${s1(w.wallMs)} | ${f2(w.requestsPerJob)} | ${f2(w.pollsMean)}, ${w.pollsMax} (${f2(w.todayPolls)}) | ${s1(w.seenMedian)}, ${s1(w.seenP90)}, ${s1(w.seenMax)} | ${s1(w.firstPollMedian)} | ${s1(w.laterMax)}, ${s1(w.laterP99)}; ${w.laterThanStep} (${w.laterThanLatest}) | ${w.kibPerItem.toFixed(1)} KiB | ${y ? `${y.kibPerItem.toFixed(1)} KiB (${f2(y.requestsPerJob)})` : '—'} | ${y ? `${(w.kibPerItem - y.kibPerItem).toFixed(1)} KiB` : '—'} |`;
		}),
	);
}

/** The PASS/FAIL lines of one measure-6 row (issue 20's and issue 33's targets). */
function judgeScaleRow(row: ScaleRow, r: ScaleResult, time: ScaleTime): void {
	const { items } = row;
	const name = `scale ${items}, ${time.label}`;
	const wide = time.maxMs > time.minMs;
	const fixed = (ms: number) => !wide && time.minMs === ms;
	verdict(
		r.failures.length === 0 && r.ids.length === items,
		`${name}: every item output, FINISHED, in one execution (${r.ids.length} of ${items})`,
	);
	if (items === 5000 && fixed(3000)) {
		verdict(
			row.kibPerItem <= 16,
			`${name}: peak RSS growth ≤ 16 KiB an item (issue 20): ${row.kibPerItem.toFixed(1)} KiB`,
		);
		verdict(
			row.seenMedian <= 3000,
			`${name}: median finished → seen ≤ 3 s (issue 20): ${s1(row.seenMedian)}`,
		);
	}
	if (items === 5000 && (fixed(3000) || fixed(6000))) {
		verdict(row.pollsMean <= 1.3, `${name}: ≤ 1.3 polls a job: ${f2(row.pollsMean)}`);
		verdict(
			row.seenMedian <= 1500,
			`${name}: finished → seen median ≤ 1.5 s: ${s1(row.seenMedian)}`,
		);
	}
	if (items === 50 && fixed(6000))
		verdict(
			row.pollsMean <= 2,
			`${name}: ≤ 2 polls a job: mean ${f2(row.pollsMean)} (max ${row.pollsMax})`,
		);
	if (items === 5000 && row.yardstick) {
		const over = row.kibPerItem - row.yardstick.kibPerItem;
		verdict(
			over <= 4,
			`${name}: node ≤ 4 KiB an item over the yardstick at its request count (${row.yardstick.spec}): ${row.kibPerItem.toFixed(1)} − ${row.yardstick.kibPerItem.toFixed(1)} = ${over.toFixed(1)} KiB`,
		);
	}
	if (wide) {
		verdict(
			row.pollsMean <= 2,
			`${name}: ≤ 2 polls a job: mean ${f2(row.pollsMean)} (max ${row.pollsMax})`,
		);
		verdict(
			row.laterThanLatest === 0,
			`${name}: 0 jobs later than today's latest seen (every wait +10 %) + one step: ${row.laterThanLatest} (${row.laterThanStep} than the grid without jitter; max ${s1(row.laterMax)} later than it)`,
		);
	}
}

/** Runs bench/trigger.ts on the compiled node and judges its rows (targets in the file's header). */
async function measureTrigger(): Promise<void> {
	log(
		'\n== 5. The trigger at scale (bench/trigger.ts: simulated clock, a poll a minute, compiled node)',
	);
	const r = await runWorker<TriggerResult>(['--from', 'dist'], 1_800_000, 'trigger.ts');
	const all = [...r.backlog, ...r.burst, ...r.sustained];
	const loaded = [...r.burst, ...r.sustained];
	const most = <R>(rows: R[], value: (row: R) => number) => Math.max(...rows.map(value));
	// docs/service-api.md §trigger: extractions read each end to its first old one (the head's pages
	// and one more at the new end, one at the other: ≤ 10, points 14–20); the /v0 events read their
	// window whole (one count and ≤ 9 pages: ≤ 10).
	const idleOf = (extractions: boolean) =>
		most(
			r.backlog.filter((row) => row.case.startsWith('Extraction') === extractions),
			(row) => row.idleRequests,
		);
	const [idle, idleWindow] = [idleOf(true), idleOf(false)];
	const largest = most(all, (row) => row.maxBytes);
	const lost = loaded.reduce((n, row) => n + row.missing, 0);
	const twice = loaded.reduce((n, row) => n + row.repeated, 0);
	const lag = most(r.sustained, (row) => row.maxLagPolls);
	const errors = all.flatMap((row) => row.errors.map((e) => `${row.case}: ${e}`));
	verdict(
		idle <= 10,
		`trigger: extractions: a poll with nothing new made at most ${idle} requests at backlogs up to ${most(r.backlog, (row) => row.backlog)} (target ≤ 10)`,
	);
	verdict(
		idleWindow <= 10,
		`trigger: documents, parsings: a poll with nothing new made at most ${idleWindow} requests, the backlog created in the 10 minutes before (target ≤ 10)`,
	);
	verdict(
		lost === 0 && twice === 0,
		`trigger: bursts and sustained load: ${lost} jobs never fired, ${twice} fired twice (target 0)`,
	);
	verdict(
		lag === 0,
		`trigger: sustained load: at most ${lag} polls late (target 0: each fires at the first poll after it finished)`,
	);
	verdict(largest <= 32 * 1024, `trigger: saved state at most ${largest} B (target ≤ 32 KB)`);
	verdict(
		errors.length === 0,
		`trigger: ${errors.length} poll errors${errors.length ? ` (${errors.slice(0, 2).join(' | ')})` : ''} (in ${r.seconds} s)`,
	);
}

/** What bench/trigger-model.ts prints on its RESULT line. */
interface ModelResult {
	profile: string;
	seed: number;
	outcomes: Array<{
		event: string;
		runs: number;
		failed: boolean;
		path?: string;
		replayPath?: string;
	}>;
	seconds: number;
}

/** Uploads a generated PDF of `bytes` to the emulator as a document (its own API); returns the id. */
async function uploadToEmulator(emulator: EmulatorProcess, file: string, fileName: string) {
	const form = new FormData();
	form.append('file', await openAsBlob(file, { type: 'application/pdf' }), fileName);
	const response = await fetch(`${emulator.url}/v0/documents`, {
		method: 'POST',
		headers: { 'X-API-Key': emulator.apiKey },
		body: form,
	});
	const document = (await response.json()) as { id?: string };
	if (!response.ok || !document.id)
		throw new Error(`upload of ${fileName}: HTTP ${response.status}`);
	return document.id;
}

/**
 * Measure 9 (issue 32): peak RSS growth of the node process during a large Document → Download
 * against a 1 MiB one, n8n filesystem binary data mode: the file streams into n8n's store.
 */
async function measureDownload(options: Options): Promise<void> {
	log(
		`\n== Measure 9: memory of a ${options.downloadMiB} MiB Document → Download against a 1 MiB one, n8n filesystem binary data mode`,
	);
	const large = path.join(tmp, 'download-large.pdf');
	const small = path.join(tmp, 'download-small.pdf');
	const pdf = await writeLargePdf(large, options.downloadMiB * MiB);
	const tiny = await writeLargePdf(small, MiB);
	await withEmulator(options.processingMs, async (emulator, work) => {
		const largeId = await uploadToEmulator(emulator, large, 'large.pdf');
		const smallId = await uploadToEmulator(emulator, small, 'small.pdf');
		const sizes = { [largeId]: pdf.size, [smallId]: tiny.size };
		const growth: Record<string, number[]> = { [largeId]: [], [smallId]: [] };
		let intact = true;
		for (let rep = 1; rep <= options.reps; rep++)
			for (const id of [smallId, largeId]) {
				const r = await work<DownloadResult>(
					'download',
					{ documentId: id, warmupId: smallId },
					600_000,
				);
				growth[id].push(r.growth);
				intact &&= !r.error && r.bytes === sizes[id] && r.stored === 'by id';
				log(
					`  download ${rep}, ${(sizes[id] / MiB).toFixed(0)} MiB: ${s1(r.wallMs)}, RSS before ${mib(r.baselineRss)}, peak ${mib(r.baselineRss + r.growth)} → growth ${mib(r.growth)}; stored ${r.bytes} bytes ${r.stored}${r.error ? `  ERROR: ${r.error}` : ''}`,
				);
			}
		const over = median(growth[largeId]) - median(growth[smallId]);
		log(
			`\n  Measure 9 — peak RSS growth: ${options.downloadMiB} MiB ${summary(growth[largeId], mib)}; 1 MiB ${summary(growth[smallId], mib)}; the large one over the small one (medians) ${mib(over)}`,
		);
		verdict(intact, "every download stored whole, in n8n's binary data store (by id)");
		verdict(
			over <= 64 * MiB,
			`a ${options.downloadMiB} MiB download grows peak RSS ≤ 64 MiB over a 1 MiB one: ${mib(over)}`,
		);
	});
}

/** What bench/transport-faults.ts prints on its RESULT line. */
interface FaultsResult {
	seed: number;
	runs: number;
	outcomes: Array<{ kind: string; runs: number; counterexamples: number }>;
	counterexamples: Array<{ kind: string; scenario: unknown; violations: string[] }>;
	seconds: number;
}

/** Measure 10 (issue 32): the transport against generated fault sequences (bench/transport-faults.ts). */
async function measureTransportFaults(options: Options): Promise<void> {
	log(
		`\n== 10. The transport against generated fault sequences (bench/transport-faults.ts, ${options.faultRuns} per request kind)`,
	);
	const r = await runWorker<FaultsResult>(
		['--runs', String(options.faultRuns)],
		6 * 3_600_000,
		'transport-faults.ts',
	);
	const total = r.outcomes.reduce((n, o) => n + o.runs, 0);
	const least = Math.min(...r.outcomes.map((o) => o.runs));
	verdict(
		r.counterexamples.length === 0 && least >= Math.min(2000, options.faultRuns),
		`transport faults: ${total} scenarios, at least ${least} per kind, ${r.counterexamples.length} counterexamples${
			r.counterexamples.length
				? ` (${r.counterexamples
						.map((c) => `${c.kind}: ${c.violations[0]}`)
						.join('; ')
						.slice(0, 500)})`
				: ''
		}, seed ${r.seed} (target 0, ≥ 2,000 per kind; in ${r.seconds} s)`,
	);
}

/** Measure 8: the trigger's model-based test on many generated histories per event (bench/trigger-model.ts). */
async function measureTriggerModel(options: Options): Promise<void> {
	log(
		`\n== 8. The trigger against generated histories (bench/trigger-model.ts, profile ordinary, ${options.modelRuns} histories per event)`,
	);
	// On n8n 2.x's Node 24 (scripts/n8n/install.sh, cached): its AsyncLocalStorage needs no async
	// hooks, which take a quarter of the time of a history on Node 20; about twice as fast here.
	const { info } = await installLine('2');
	log(`  on Node 24 (${info.nodeBin})`);
	const r = await runWorker<ModelResult>(
		['--profile', 'ordinary', '--runs', String(options.modelRuns), '--keep-going'],
		6 * 3_600_000,
		'trigger-model.ts',
		info.nodeBin,
	);
	const total = r.outcomes.reduce((n, o) => n + o.runs, 0);
	const failed = r.outcomes.filter((o) => o.failed);
	const least = Math.min(...r.outcomes.map((o) => o.runs));
	verdict(
		failed.length === 0 && least >= Math.min(2000, options.modelRuns),
		`trigger model: ${total} histories, at least ${least} per event, ${failed.length} failing events${failed.length ? ` (${failed.map((o) => `${o.event} --path "${o.path}" --replay-path "${o.replayPath}"`).join('; ')})` : ''}, seed ${r.seed} (target 0 failures, ≥ 2,000 per event; in ${r.seconds} s)`,
	);
}

/** Measure 7: the checker's verdicts against Ajv's on generated cases (bench/schema-check.ts). */
function measureSchemaCheck(options: Options): void {
	log(
		`\n== 7. Check Against Schema against Ajv: ${options.schemaCases} generated cases, seed ${options.schemaSeed} (replay: --only 7 --schema-seed ${options.schemaSeed})`,
	);
	const r = checkAgainstAjv(options.schemaCases, options.schemaSeed);
	log(
		`  ${r.cases} cases in ${s1(r.wallMs)}: Ajv valid ${r.valid}, invalid ${r.cases - r.valid}; checker complete ${r.complete}, with a warning (keywords not evaluated) ${r.warned}; disagreements ${r.disagreements}`,
	);
	for (const example of r.examples)
		log(
			`  DISAGREEMENT: ${example.problems.join('; ')}`,
			`    definition ${JSON.stringify(example.case.definition)}`,
			`    data ${JSON.stringify(example.case.data)}`,
		);
	verdict(
		r.cases >= 10_000 && r.disagreements === 0,
		`schema check: ≥ 10,000 generated cases, 0 disagreements with Ajv: ${r.cases} cases, ${r.disagreements} disagreements (seed ${r.seed})`,
	);
}

async function main(): Promise<number> {
	const options = parseOptions();
	const started = Date.now();
	log(
		'Extraction Service node — benchmarks (npm run bench)',
		`date ${new Date().toISOString()}; node ${process.version}; ${os.cpus().length} CPUs (nproc), ${os.cpus()[0]?.model ?? '?'}; ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM; ${os.platform()} ${os.release()}`,
		`options: T = ${options.processingMs} ms, ${options.items} documents, ${options.reps} repetitions, sequential baseline on ${options.sequentialItems} items, upload ${options.uploadMiB} MiB, CPU ${options.cpuItems} items at T = ${options.cpuProcessingMs} ms`,
	);
	if (options.only.has(1) || options.only.has(2)) await measureThroughput(options);
	if (options.only.has(3)) await measureUpload(options);
	if (options.only.has(4)) await measureCpu(options);
	if (options.only.has(5)) await measureTrigger();
	if (options.only.has(6)) await measureScale(options);
	if (options.only.has(7)) measureSchemaCheck(options);
	if (options.only.has(8)) await measureTriggerModel(options);
	if (options.only.has(9)) await measureDownload(options);
	if (options.only.has(10)) await measureTransportFaults(options);
	log(`\n== Summary (${s1(Date.now() - started)} in all)`);
	for (const line of verdicts) log(`  ${line}`);
	return 0;
}

runMain(main, { label: 'bench' });
