/**
 * `npm run bench` (= `npm run build && tsx bench/run.ts`): how the node's waiting and uploading
 * compare with the way other n8n document nodes work (one item after another), in one run on this
 * machine. Results and their interpretation: BENCHMARKS.md.
 *
 * Processes: this orchestrator; the emulator as a child process (its CLI, `--log-requests`, on
 * 127.0.0.1), so its memory and CPU stay out of the node's figures; and one fresh worker process
 * per measurement (bench/worker.ts) running the compiled node in n8n-core's WorkflowExecute with
 * n8n's filesystem binary data mode.
 *
 *   1. Wall time, 50 documents, Extract → Create (binary, Invoice schema, Wait for Completion, default
 *      options): one execution with 50 items (the node's concurrent mode) vs the baseline, 50
 *      single-item executions in a row. Targets: concurrent ≤ T + 5 s, ratio ≥ 25×.
 *   2. Requests per job from the emulator's request log: polls per job ≤ ⌈T / 2 s⌉ + 2; consecutive
 *      polls of a job (and creation → first poll) ≥ 2 s apart, ≤ 5 s + 0.5 s slack.
 *   3. Peak RSS growth of the node process during a 200 MiB Document → Upload. Target ≤ 64 MiB.
 *   4. CPU time per item of the node process, 500 items, T = 500 ms, minus an empty run.
 *   6. Thousands of items in one execution (--scale-items, default 1000,5000,10000): tiny PNGs through
 *      Extract → Create with Wait for Completion, T = 3 s (--scale-processing-ms): peak RSS growth per
 *      item (target ≤ 16 KiB at 5,000), the median delay from a job finishing to the poll that saw it
 *      (target ≤ 3 s), creation → first poll, and every item output (10,000 in one execution).
 *   5. The Extraction Service Trigger at scale (bench/trigger.ts, a process of its own, simulated
 *      clock, a poll a minute): requests of a poll with nothing new at backlogs of 100 to 50,000
 *      (≤ 3); a burst of 3,000 unfinished jobs (each fires once); 500 jobs a minute for 10 minutes
 *      (each fires at the first poll after it finished); the saved state (≤ 32 KB).
 *
 * Options: --processing-ms <T> (6000) --items <n> (50) --reps <n> (3) --sequential-items <n> (= items;
 * fewer is extrapolated and labelled so) --upload-mib <n> (200) --cpu-items <n> (500)
 * --cpu-processing-ms <n> (500) --scale-items <n,n,…> (1000,5000,10000) --scale-processing-ms <n> (3000)
 * --only <1,2,3,4,5,6> --help
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { LoggedRequest } from '../emulator';
import { launchEmulator, type EmulatorProcess } from '../emulator/launch';
import { numberFlag, readArgs } from '../scripts/lib/args';
import { removeAtExit, runMain } from '../scripts/lib/processes';
import { runWorker } from './children';
import { writeLargePdf } from './pdf';
import type { CpuResult, ScaleResult, ThroughputResult, UploadResult } from './worker';

interface Options {
	processingMs: number;
	items: number;
	reps: number;
	sequentialItems: number;
	uploadMiB: number;
	cpuItems: number;
	cpuProcessingMs: number;
	only: Set<number>;
	scaleItems: number[];
	scaleProcessingMs: number;
}

/** Reads the command line (scripts/lib/args.ts; `--help` prints the header of this file). */
function parseOptions(): Options {
	const text = { type: 'string' } as const;
	const { values } = readArgs(__filename, {
		'processing-ms': text,
		items: text,
		reps: text,
		'sequential-items': text,
		'upload-mib': text,
		'cpu-items': text,
		'cpu-processing-ms': text,
		only: text,
		'scale-items': text,
		'scale-processing-ms': text,
	});
	const num = (flag: string, value: string | undefined, dflt: number): number =>
		numberFlag(flag, value, dflt, 1);
	const items = num('items', values.items, 50);
	return {
		processingMs: num('processing-ms', values['processing-ms'], 6000),
		items,
		reps: num('reps', values.reps, 3),
		sequentialItems: Math.min(num('sequential-items', values['sequential-items'], items), items),
		uploadMiB: num('upload-mib', values['upload-mib'], 200),
		cpuItems: num('cpu-items', values['cpu-items'], 500),
		cpuProcessingMs: num('cpu-processing-ms', values['cpu-processing-ms'], 500),
		only: new Set((values.only ?? '1,2,3,4,5,6').split(',').map(Number)),
		scaleItems: (values['scale-items'] ?? '1000,5000,10000')
			.split(',')
			.map((x) => num('scale-items', x, 1000)),
		scaleProcessingMs: num('scale-processing-ms', values['scale-processing-ms'], 3000),
	};
}

// ---------------------------------------------------------------------------------------------
// Output helpers

const MiB = 1024 * 1024;
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

function verdict(pass: boolean, text: string): void {
	const line = `${pass ? 'PASS' : 'FAIL'}  ${text}`;
	verdicts.push(line);
	console.log(`  ${line}`);
}

const log = (text = ''): void => console.log(text);

// ---------------------------------------------------------------------------------------------
// Child processes

/** The emulator as a child process (its memory and CPU stay out of the node's figures), jobs taking `processingMs`. */
async function startEmulator(processingMs: number): Promise<EmulatorProcess> {
	const emulator = await launchEmulator({ processingMs, quiet: true, readyTimeoutMs: 30_000 });
	log(`  emulator child pid ${emulator.pid} at ${emulator.url}`);
	return emulator;
}

// ---------------------------------------------------------------------------------------------
// Environment of the worker processes

function workerEnv(userFolder: string): NodeJS.ProcessEnv {
	return {
		...process.env,
		// Set before n8n-core loads in the worker: binary data as files on disk (n8n's own default
		// outside queue mode), the input path of a real n8n server.
		N8N_DEFAULT_BINARY_DATA_MODE: 'filesystem',
		N8N_USER_FOLDER: userFolder,
	};
}

// ---------------------------------------------------------------------------------------------
// Measures 1 and 2

interface JobTimes {
	id: string;
	createdAt: number;
	finalAt: number;
}

async function extractTimes(
	emulator: EmulatorProcess,
	ids: string[],
): Promise<Map<string, JobTimes>> {
	const out = new Map<string, JobTimes>();
	for (const id of ids) {
		const response = await fetch(`${emulator.url}/v0/extract/${id}`, {
			headers: { 'X-API-Key': emulator.apiKey },
		});
		const body = (await response.json()) as {
			created_at: string;
			updated_at: string;
			status: string;
		};
		out.set(id, {
			id,
			createdAt: Date.parse(body.created_at),
			finalAt: Date.parse(body.updated_at),
		});
	}
	return out;
}

async function measureThroughput(options: Options, tmp: string): Promise<void> {
	const T = options.processingMs;
	log(
		`\n== Measures 1 + 2: ${options.items} documents, Extract → Create (binary source, schema Invoice, Wait for Completion on, default options), T = ${T} ms`,
	);
	const emulator = await startEmulator(T);
	const env = workerEnv(path.join(tmp, 'n8n-throughput'));
	const service = { url: emulator.url, apiKey: emulator.apiKey };
	try {
		const concurrent: ThroughputResult[] = [];
		for (let rep = 1; rep <= options.reps; rep++) {
			const r = await runWorker<ThroughputResult>(
				['throughput', JSON.stringify({ ...service, mode: 'concurrent', items: options.items })],
				env,
				180_000,
			);
			concurrent.push(r);
			log(
				`  concurrent run ${rep}/${options.reps}: one execution with ${r.items} items: ${s1(r.wallMs)}${r.failures.length ? `  FAILURES: ${r.failures.slice(0, 3).join('; ')}` : ''}`,
			);
		}
		const one = await runWorker<ThroughputResult>(
			[
				'throughput',
				JSON.stringify({ ...service, mode: 'concurrent', items: options.items, concurrency: 1 }),
			],
			env,
			180_000,
		);
		log(
			`  for comparison, option Concurrency = 1 (one request in flight; still one execution with ${one.items} items): ${s1(one.wallMs)}${one.failures.length ? `  FAILURES: ${one.failures.slice(0, 3).join('; ')}` : ''}`,
		);
		log(
			`  baseline (one item after another, the way other n8n document nodes work): ${options.sequentialItems} single-item executions in a row, each waiting for its job…`,
		);
		const sequential = await runWorker<ThroughputResult>(
			[
				'throughput',
				JSON.stringify({ ...service, mode: 'sequential', items: options.sequentialItems }),
			],
			env,
			options.sequentialItems * 60_000,
		);
		const extrapolated = options.sequentialItems < options.items;
		const sequentialWall = extrapolated
			? (sequential.wallMs / sequential.items) * options.items
			: sequential.wallMs;
		log(
			`  baseline, sequential: ${sequential.items} executions: ${s1(sequential.wallMs)}; per execution ${summary(sequential.perExecutionMs, s1)}${sequential.failures.length ? `  FAILURES: ${sequential.failures.slice(0, 3).join('; ')}` : ''}`,
		);
		if (extrapolated)
			log(
				`  EXTRAPOLATED: baseline for ${options.items} items = ${s1(sequential.wallMs)} / ${sequential.items} × ${options.items} = ${s1(sequentialWall)}`,
			);

		await emulator.settle();
		const requests: LoggedRequest[] = emulator.requests.slice();

		// ---- Measure 1
		const concurrentWalls = concurrent.map((r) => r.wallMs);
		const concurrentMedian = median(concurrentWalls);
		const ratios = concurrentWalls.map((w) => sequentialWall / w);
		log(`\n  Measure 1 — wall time, ${options.items} documents`);
		log(
			`    node, concurrent (1 execution, ${options.items} items):   ${summary(concurrentWalls, s1)}`,
		);
		log(
			`    node, concurrent, option Concurrency = 1:  ${s1(one.wallMs)} (n=1; not sequential: waiting jobs hold no request slot)`,
		);
		log(
			`    baseline, sequential (${options.items} executions):        ${s1(sequentialWall)}${extrapolated ? ' (extrapolated)' : ''} (n=1)`,
		);
		log(
			`    ratio baseline / concurrent:             ${summary(ratios, (v) => `${v.toFixed(1)}×`)}`,
		);
		const lastCreates = concurrent.map((r) => {
			const ats = requests
				.filter(
					(q) =>
						q.method === 'POST' &&
						q.path === '/v0/extract' &&
						q.at >= r.startedAt &&
						q.at <= r.endedAt,
				)
				.map((q) => q.at);
			return Math.max(...ats) - r.startedAt;
		});
		log(
			`    concurrent: execution start → last create (POST) received: ${summary(lastCreates, s1)}; the rest is T + the wait until the next poll`,
		);
		const allFailures = [
			...concurrent.flatMap((r) => r.failures),
			...one.failures,
			...sequential.failures,
		];
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
		const times = await extractTimes(emulator, ids);
		const pollsById = new Map<string, number[]>();
		for (const r of requests) {
			const m = /^\/v0\/extract\/([0-9a-f-]{36})$/.exec(r.path);
			if (r.origin === 'api' && r.method === 'GET' && m)
				pollsById.set(m[1], [...(pollsById.get(m[1]) ?? []), r.at]);
		}
		const pollCounts: number[] = [];
		const gaps: number[] = [];
		const firstGaps: number[] = [];
		const latencies: number[] = [];
		for (const id of ids) {
			const polls = (pollsById.get(id) ?? []).sort((a, b) => a - b);
			const t = times.get(id)!;
			pollCounts.push(polls.length);
			if (polls.length) {
				firstGaps.push(polls[0] - t.createdAt);
				latencies.push(polls[polls.length - 1] - t.finalAt);
			}
			for (let i = 1; i < polls.length; i++) gaps.push(polls[i] - polls[i - 1]);
		}
		// Every API request of the measured executions, divided by the number of jobs.
		const windows = [...concurrent, one, sequential].map((r) => [r.startedAt, r.endedAt + 1000]);
		const inWindows = requests.filter(
			(r) => r.origin === 'api' && windows.some(([a, b]) => r.at >= a && r.at <= b),
		);
		const posts = inWindows.filter((r) => r.method === 'POST' && r.path === '/v0/extract').length;
		const others = inWindows.filter(
			(r) =>
				!(r.method === 'POST' && r.path === '/v0/extract') &&
				!/^\/v0\/extract\/[0-9a-f-]{36}$/.test(r.path),
		);
		const bound = Math.ceil(T / 2000) + 2;
		const slack = 500;
		log(
			`\n  Measure 2 — requests per job (emulator request log, ${ids.length} jobs: ${concurrent.length + 1}×${options.items} concurrent + ${sequential.items} sequential)`,
		);
		log(
			`    API requests in the runs: ${inWindows.length} = ${posts} creates (POST /v0/extract) + ${inWindows.length - posts - others.length} polls (GET /v0/extract/{id}) + ${others.length} other → ${(inWindows.length / ids.length).toFixed(2)} requests per job`,
		);
		log(`    polls per job:                           ${summary(pollCounts, (v) => v.toFixed(1))}`);
		log(`    creation → first poll:                   ${summary(firstGaps, s1)}`);
		log(`    between consecutive polls of a job:      ${summary(gaps, s1)}`);
		log(
			`    final state → the poll that saw it:      ${summary(latencies, s1)}  (how late the node notices; not a target)`,
		);
		verdict(
			Math.max(...pollCounts) <= bound && Math.min(...pollCounts) >= 1,
			`polls per job ≤ ⌈T / 2 s⌉ + 2 = ${bound}: max ${Math.max(...pollCounts)}`,
		);
		const minGap = Math.min(...gaps, ...firstGaps);
		const maxGap = gaps.length ? Math.max(...gaps) : 0;
		verdict(
			minGap >= 2000 && maxGap <= 5000 + slack,
			`no request while a job's next poll is not due: polls ≥ 2 s apart (min ${s1(minGap)}, incl. creation → first poll) and ≤ 5 s + ${slack} ms (max ${gaps.length ? s1(maxGap) : 'n/a: one poll per job'})`,
		);
		verdict(others.length === 0, `no requests besides creates and polls: ${others.length}`);
	} finally {
		await emulator.stop();
	}
}

// ---------------------------------------------------------------------------------------------
// Measure 3

async function sha256OfDownload(
	emulator: EmulatorProcess,
	documentId: string,
): Promise<{ sha256: string; bytes: number }> {
	const redirect = await fetch(`${emulator.url}/v0/documents/${documentId}/download`, {
		headers: { 'X-API-Key': emulator.apiKey },
		redirect: 'manual',
	});
	const location = redirect.headers.get('location');
	if (redirect.status !== 302 || !location)
		throw new Error(`download of ${documentId}: HTTP ${redirect.status}`);
	const file = await fetch(new URL(location, emulator.url));
	const hash = createHash('sha256');
	let bytes = 0;
	for await (const chunk of file.body as unknown as AsyncIterable<Uint8Array>) {
		hash.update(chunk);
		bytes += chunk.length;
	}
	return { sha256: hash.digest('hex'), bytes };
}

async function measureUpload(options: Options, tmp: string): Promise<void> {
	const size = options.uploadMiB * MiB;
	log(
		`\n== Measure 3: memory of one ${options.uploadMiB} MiB PDF upload, Document → Upload, n8n filesystem binary data mode`,
	);
	const file = path.join(tmp, 'large.pdf');
	const t0 = Date.now();
	const pdf = await writeLargePdf(file, size);
	log(`  generated ${file}: ${pdf.size} bytes, one page, in ${s1(Date.now() - t0)}`);
	const env = workerEnv(path.join(tmp, 'n8n-upload'));
	const binaryFile = path.join(tmp, 'binary.json');
	// Stored by a separate process, as a previous node (Read Files) would have stored it.
	const stored = await runWorker<{ id: string; bytes: number }>(
		['store', JSON.stringify({ file, fileName: 'large.pdf', out: binaryFile })],
		env,
		120_000,
	);
	log(`  stored as n8n binary data ${stored.id} (${stored.bytes} bytes) by a separate process`);

	const emulator = await startEmulator(options.processingMs);
	try {
		const results: UploadResult[] = [];
		for (let rep = 1; rep <= options.reps; rep++) {
			const r = await runWorker<UploadResult>(
				['upload', JSON.stringify({ url: emulator.url, apiKey: emulator.apiKey, binaryFile })],
				env,
				300_000,
			);
			results.push(r);
			const peak = Math.max(r.sampledPeakRss, r.hwmPeakRss);
			log(
				`  upload ${rep}/${options.reps}: ${s1(r.wallMs)}, RSS before ${mib(r.baselineRss)}, peak ${mib(peak)} (sampler ${mib(r.sampledPeakRss)} over ${r.samples} samples, kernel VmHWM ${r.hwmPeakRss ? mib(r.hwmPeakRss) : 'n/a'}) → growth ${mib(peak - r.baselineRss)}; document ${r.documentId}, ${r.pageCount} page(s)${r.error ? `  ERROR: ${r.error}` : ''}`,
			);
		}
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

		const growth = results.map((r) => Math.max(r.sampledPeakRss, r.hwmPeakRss) - r.baselineRss);
		log(
			`\n  Measure 3 — peak RSS growth of the node process during the upload: ${summary(growth, mib)}`,
		);
		log(
			`    upload wall time: ${summary(
				results.map((r) => r.wallMs),
				s1,
			)}`,
		);
		verdict(
			results.every((r) => !r.error && r.pageCount === 1) && intact,
			'every upload answered 201 with the document, stored byte for byte',
		);
		verdict(median(growth) <= 64 * MiB, `peak RSS growth ≤ 64 MiB: median ${mib(median(growth))}`);
	} finally {
		await emulator.stop();
	}
}

// ---------------------------------------------------------------------------------------------
// Measure 4

async function measureCpu(options: Options, tmp: string): Promise<void> {
	const T = options.cpuProcessingMs;
	log(
		`\n== Measure 4: CPU time per item of the node process, ${options.cpuItems} items, Extract → Create with Wait for Completion, T = ${T} ms`,
	);
	const emulator = await startEmulator(T);
	const env = workerEnv(path.join(tmp, 'n8n-cpu'));
	try {
		const results: CpuResult[] = [];
		for (let rep = 1; rep <= options.reps; rep++) {
			const before = Date.now();
			const r = await runWorker<CpuResult>(
				[
					'cpu',
					JSON.stringify({
						url: emulator.url,
						apiKey: emulator.apiKey,
						items: options.cpuItems,
						warmupItems: 20,
					}),
				],
				env,
				300_000,
			);
			results.push(r);
			await emulator.settle();
			const requests = emulator.requests.filter((q) => q.origin === 'api' && q.at >= before).length;
			log(
				`  run ${rep}/${options.reps}: node run ${(r.nodeRunCpuUs / 1000).toFixed(0)} ms CPU (user ${(r.nodeRunUserUs / 1000).toFixed(0)}, system ${(r.nodeRunSystemUs / 1000).toFixed(0)}) in ${s1(r.nodeRunWallMs)}; empty run ${(r.emptyRunCpuUs / 1000).toFixed(0)} ms CPU in ${s1(r.emptyRunWallMs)}; ${requests} API requests incl. ${20} warm-up items${r.failures.length ? `  FAILURES: ${r.failures.slice(0, 3).join('; ')}` : ''}`,
			);
		}
		const perItemRaw = results.map((r) => r.nodeRunCpuUs / r.items);
		const perItemEmpty = results.map((r) => r.emptyRunCpuUs / r.items);
		const perItemNet = results.map((r) => (r.nodeRunCpuUs - r.emptyRunCpuUs) / r.items);
		const us = (v: number): string => `${(v / 1000).toFixed(2)} ms`;
		log(`\n  Measure 4 — CPU time per item (user + system of the node process)`);
		log(`    node execution / item:                   ${summary(perItemRaw, us)}`);
		log(`    empty execution (pass-through) / item:   ${summary(perItemEmpty, us)}`);
		log(`    node's own cost / item (difference):     ${summary(perItemNet, us)}`);
		verdict(
			results.every((r) => r.failures.length === 0),
			`every job FINISHED (${results.length}×${options.cpuItems} items)`,
		);
	} finally {
		await emulator.stop();
	}
}

// ---------------------------------------------------------------------------------------------

// ---------------------------------------------------------------------------------------------
// 6. Thousands of items

/** Runs the scale worker for each size and judges memory per item and how soon finished jobs are seen. */
async function measureScale(options: Options, tmp: string): Promise<void> {
	const T = options.scaleProcessingMs;
	log(
		`\n== 6. Thousands of items in one execution: tiny PNGs, Extract → Create, Wait for Completion, T = ${T} ms`,
	);
	for (const items of options.scaleItems) {
		const emulator = await startEmulator(T);
		try {
			const r = await runWorker<ScaleResult>(
				['scale', JSON.stringify({ url: emulator.url, apiKey: emulator.apiKey, items })],
				workerEnv(path.join(tmp, 'n8n-scale')),
				1_800_000,
			);
			await emulator.settle();
			const requests = emulator.requests.filter(
				(q) => q.origin === 'api' && q.at >= r.startedAt && q.at <= r.endedAt + 1000,
			);
			const created = new Map<string, number>();
			const polls = new Map<string, number[]>();
			for (const q of requests) {
				const m = /^\/v0\/extract\/([0-9a-f-]{36})$/.exec(q.path);
				if (q.method === 'GET' && m) polls.set(m[1], [...(polls.get(m[1]) ?? []), q.at]);
			}
			const times = await extractTimes(emulator, r.ids);
			const seen: number[] = [];
			const firstPoll: number[] = [];
			for (const [id, t] of times) {
				created.set(id, t.createdAt);
				const at = (polls.get(id) ?? []).sort((a, b) => a - b);
				if (at.length === 0) continue;
				seen.push(at[at.length - 1] - t.finalAt);
				firstPoll.push(at[0] - t.createdAt);
			}
			const peak = Math.max(r.sampledPeakRss, r.hwmPeakRss);
			const perItem = (peak - r.baselineRss) / items;
			log(
				`  ${items} items: wall ${s1(r.wallMs)}; peak RSS growth ${((peak - r.baselineRss) / MiB).toFixed(1)} MiB = ${(perItem / 1024).toFixed(1)} KiB an item; finished → seen ${summary(seen, s1)}; created → first poll ${summary(firstPoll, s1)}; ${r.ids.length} output items${r.failures.length ? `; FAILURES ${r.failures.slice(0, 3).join(' | ')}` : ''}`,
			);
			verdict(
				r.failures.length === 0 && r.ids.length === items,
				`scale ${items}: every item output, FINISHED, in one execution (${r.ids.length} of ${items})`,
			);
			if (items === 5000) {
				verdict(
					perItem <= 16 * 1024,
					`scale 5000: peak RSS growth ≤ 16 KiB an item: ${(perItem / 1024).toFixed(1)} KiB`,
				);
				verdict(
					median(seen) <= 3000,
					`scale 5000: median finished → seen ≤ 3 s: ${s1(median(seen))}`,
				);
			}
		} finally {
			await emulator.stop();
		}
	}
}

// ---------------------------------------------------------------------------------------------
// 5. The trigger at scale

interface TriggerRow {
	case: string;
	errors: string[];
	maxBytes: number;
	backlog?: number;
	idleRequests?: number;
	missing?: number;
	repeated?: number;
	maxLagPolls?: number;
}

/** Runs bench/trigger.ts on the compiled node and judges its rows (targets in the file's header). */
async function measureTrigger(): Promise<void> {
	log(
		'\n== 5. The trigger at scale (bench/trigger.ts: simulated clock, a poll a minute, compiled node)',
	);
	const r = await runWorker<{
		backlog: TriggerRow[];
		burst: TriggerRow[];
		sustained: TriggerRow[];
		seconds: number;
	}>(['--from', 'dist'], process.env, 1_800_000, 'trigger.ts');
	const all = [...r.backlog, ...r.burst, ...r.sustained];
	const idle = Math.max(...r.backlog.map((row) => row.idleRequests ?? 0));
	const largest = Math.max(...all.map((row) => row.maxBytes));
	const lost = [...r.burst, ...r.sustained].reduce((n, row) => n + (row.missing ?? 0), 0);
	const twice = [...r.burst, ...r.sustained].reduce((n, row) => n + (row.repeated ?? 0), 0);
	const lag = Math.max(...r.sustained.map((row) => row.maxLagPolls ?? 0));
	const errors = all.flatMap((row) => row.errors.map((e) => `${row.case}: ${e}`));
	verdict(
		idle <= 3,
		`trigger: a poll with nothing new made at most ${idle} requests at backlogs up to ${Math.max(...r.backlog.map((row) => row.backlog ?? 0))} (target ≤ 3)`,
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

async function main(): Promise<number> {
	const options = parseOptions();
	const tmp = mkdtempSync(path.join(os.tmpdir(), 'extraction-bench-'));
	removeAtExit(tmp);
	for (const dir of ['n8n-throughput', 'n8n-upload', 'n8n-cpu', 'n8n-scale'])
		mkdirSync(path.join(tmp, dir));
	const started = Date.now();
	log('Extraction Service node — benchmarks (npm run bench)');
	log(
		`date ${new Date().toISOString()}; node ${process.version}; ${os.cpus().length} CPUs (nproc), ${os.cpus()[0]?.model ?? '?'}; ${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB RAM; ${os.platform()} ${os.release()}`,
	);
	log(
		`options: T = ${options.processingMs} ms, ${options.items} documents, ${options.reps} repetitions, sequential baseline on ${options.sequentialItems} items, upload ${options.uploadMiB} MiB, CPU ${options.cpuItems} items at T = ${options.cpuProcessingMs} ms`,
	);
	if (options.only.has(1) || options.only.has(2)) await measureThroughput(options, tmp);
	if (options.only.has(3)) await measureUpload(options, tmp);
	if (options.only.has(4)) await measureCpu(options, tmp);
	if (options.only.has(5)) await measureTrigger();
	if (options.only.has(6)) await measureScale(options, tmp);
	log(`\n== Summary (${s1(Date.now() - started)} in all)`);
	for (const line of verdicts) log(`  ${line}`);
	return 0;
}

runMain(main, { label: 'bench' });
