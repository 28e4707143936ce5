/**
 * One benchmark measurement in a fresh process ("the node process"): runs the compiled node
 * (dist/, what n8n loads) inside n8n-core's WorkflowExecute (scripts/engine.ts) against an
 * emulator started by bench/run.ts, and prints one line `RESULT {json}`.
 *
 *   node --expose-gc --import tsx bench/worker.ts <kind> '<json config>'
 *
 * kinds: throughput (measure 1), store + upload (measure 3), cpu (measure 4), scale (measure 6),
 * download (measure 9).
 * bench/run.ts sets the environment (N8N_DEFAULT_BINARY_DATA_MODE, N8N_USER_FOLDER) before n8n-core
 * loads.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import type {
	IBinaryData,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	INodeExecutionData,
} from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import type { EmulatorReady } from '../emulator/launch';
import { Semaphore } from '../nodes/shared/transport/concurrency';
import { streamedMultipart } from '../nodes/shared/transport/multipart-stream';
import {
	binaryProperty,
	loadTypes,
	runWorkflow,
	shutdownEngine,
	singleNodeWorkflow,
	type EngineTypes,
	type RunOptions,
	type RunResult,
} from '../scripts/engine';
import { runMain } from '../scripts/lib/processes';
import { seededRandom } from '../scripts/lib/random';

const SAMPLE_PDF = readFileSync(path.join(__dirname, '..', 'examples', 'files', 'invoice.pdf'));
/** A 67-byte PNG, the smallest image the service takes: what is measured is the node, not the file. */
const TINY_PNG = Buffer.from(
	'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg==',
	'base64',
);
const NODE_NAME = 'Extraction Service';

/** The emulator the measure runs against. */
type Service = Pick<EmulatorReady, 'url' | 'apiKey'>;

const extractParams = {
	resource: 'extract',
	operation: 'create',
	source: 'binary',
	binaryPropertyName: 'data',
	schemaId: '3f0c1a52-7d4e-4c1b-9a51-2b6f0e8d9c41', // the emulator's seeded Invoice schema
	waitForCompletion: true,
};

let types: EngineTypes = loadTypes('dist');

/** One execution of `workflow` from `startNode` over `input`, with the service's API key. */
async function run(
	service: Service,
	workflow: RunOptions['workflow'],
	input: INodeExecutionData[],
	startNode = NODE_NAME,
) {
	const credentials = { extractionServiceApi: { baseUrl: service.url, apiKey: service.apiKey } };
	return await runWorkflow({ workflow, startNode, input, credentials, types });
}

/** A warm-up execution (it loads every module of the path before measuring); throws its error. */
async function warmUp(...args: Parameters<typeof run>) {
	const warm = await run(...args);
	if (warm.error) throw warm.error;
	return warm;
}

/** `n` items, each with the sample invoice (or the tiny PNG) as binary `data`. */
async function fileItems(n: number, prefix: string, png = false): Promise<INodeExecutionData[]> {
	const [file, ext, mimeType] = png
		? [TINY_PNG, 'png', 'image/png']
		: [SAMPLE_PDF, 'pdf', 'application/pdf'];
	const items: INodeExecutionData[] = [];
	for (let i = 0; i < n; i++) {
		const data = await binaryProperty(file, `${prefix}-${i}.${ext}`, mimeType);
		items.push({ json: { i }, binary: { data } });
	}
	return items;
}

/** A run's output items whose status is not FINISHED, a missing item count, or its error. */
function failuresOf({ output, error }: RunResult, expected: number): string[] {
	const failures: string[] = [];
	if (error) failures.push(`execution error: ${error.message}`);
	else if (output(NODE_NAME).length !== expected)
		failures.push(`${output(NODE_NAME).length} output items instead of ${expected}`);
	for (const item of output(NODE_NAME))
		if (item.json.status !== 'FINISHED')
			failures.push(`item ${String(item.json.id)}: ${String(item.json.status ?? item.json.error)}`);
	return failures;
}

const gc = async (): Promise<void> => {
	for (let i = 0; i < 3; i++) {
		(globalThis as { gc?: () => void }).gc?.();
		await sleep(50);
	}
};

/** The kernel's peak RSS (VmHWM) since the last reset, bytes; 0 without /proc. */
function peakRss(reset = false): number {
	try {
		if (reset) writeFileSync('/proc/self/clear_refs', '5');
		const kB = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
		return Number(kB ?? 0) * 1024;
	} catch {
		return 0;
	}
}

/**
 * Runs `task` after a gc with RSS sampled every 20 ms: RSS just before it (`baselineRss`), the
 * highest sample, the kernel's peak (VmHWM, reset right before; 0 if unavailable), and the growth
 * to the higher of the two peaks, bytes.
 */
async function withRssSampled<T>(task: () => Promise<T>) {
	await gc();
	const baselineRss = process.memoryUsage.rss();
	const hwmReset = peakRss(true) > 0;
	let sampledPeakRss = baselineRss;
	let samples = 0;
	const sampler = setInterval(() => {
		samples++;
		sampledPeakRss = Math.max(sampledPeakRss, process.memoryUsage.rss());
	}, 20);
	const startedAt = Date.now();
	const result = await task();
	const endedAt = Date.now();
	clearInterval(sampler);
	sampledPeakRss = Math.max(sampledPeakRss, process.memoryUsage.rss());
	const hwmPeakRss = hwmReset ? peakRss() : 0;
	const growth = Math.max(sampledPeakRss, hwmPeakRss) - baselineRss;
	const times = { startedAt, endedAt, wallMs: endedAt - startedAt };
	return { result, baselineRss, sampledPeakRss, hwmPeakRss, samples, growth, ...times };
}

/** Measure 1: Extract → Create over `items` documents, in one execution or one execution each. */
async function throughput(
	config: Service & { mode: 'concurrent' | 'sequential'; items: number; concurrency?: number },
) {
	const items = await fileItems(config.items, config.mode);
	const workflow = singleNodeWorkflow(
		config.concurrency
			? { ...extractParams, options: { concurrency: config.concurrency } }
			: extractParams,
	);
	const batches = config.mode === 'concurrent' ? [items] : items.map((item) => [item]);
	const ids: string[] = [];
	const failures: string[] = [];
	const perExecutionMs: number[] = [];
	const startedAt = Date.now();
	for (const batch of batches) {
		const t0 = Date.now();
		const result = await run(config, workflow, batch);
		if (config.mode === 'sequential') perExecutionMs.push(Date.now() - t0);
		ids.push(...result.output(NODE_NAME).map((item) => String(item.json.id)));
		failures.push(...failuresOf(result, batch.length));
	}
	const endedAt = Date.now();
	const wallMs = endedAt - startedAt;
	return { items: config.items, wallMs, perExecutionMs, ids, failures, startedAt, endedAt };
}
export type ThroughputResult = Awaited<ReturnType<typeof throughput>>;

/** Measure 3, step 1: stores the big file as n8n binary data and writes its IBinaryData JSON. */
async function store(config: { file: string; fileName: string; out: string }) {
	const bytes = readFileSync(config.file);
	const binary = await binaryProperty(bytes, config.fileName, 'application/pdf');
	writeFileSync(config.out, JSON.stringify(binary));
	return { id: String(binary.id), bytes: Number(binary.bytes ?? 0) };
}

/** Measure 3, step 2: Document → Upload of the stored file, with RSS sampled. */
async function upload(config: Service & { binaryFile: string }) {
	const workflow = singleNodeWorkflow({
		resource: 'document',
		operation: 'upload',
		binaryPropertyName: 'data',
	});
	// A small upload first: the HTTP client and multipart modules load before measuring.
	await warmUp(config, workflow, await fileItems(1, 'warmup'));
	const binary = JSON.parse(readFileSync(config.binaryFile, 'utf8')) as IBinaryData;
	const { result, ...rss } = await withRssSampled(
		async () => await run(config, workflow, [{ json: {}, binary: { data: binary } }]),
	);
	const document = result.output(NODE_NAME)[0]?.json ?? {};
	return {
		...rss,
		documentId: String(document.id ?? ''),
		pageCount: Number(document.page_count ?? -1),
		error: result.error?.message,
	};
}
export type UploadResult = Awaited<ReturnType<typeof upload>>;

/**
 * Measure 9: Document → Download of `documentId` (stored into n8n's binary data, filesystem mode),
 * with RSS sampled, after a download of `warmupId` (the HTTP client's and the binary store's
 * modules load before measuring).
 */
async function download(config: Service & { documentId: string; warmupId: string }) {
	const workflow = singleNodeWorkflow({
		resource: 'document',
		operation: 'download',
		documentId: config.documentId,
		binaryPropertyName: 'data',
	});
	const warm = singleNodeWorkflow({
		resource: 'document',
		operation: 'download',
		documentId: config.warmupId,
		binaryPropertyName: 'data',
	});
	await warmUp(config, warm, [{ json: {} }]);
	const { result, ...rss } = await withRssSampled(
		async () => await run(config, workflow, [{ json: {} }]),
	);
	const binary = result.output(NODE_NAME)[0]?.binary?.data;
	return {
		...rss,
		bytes: Number(binary?.bytes ?? 0),
		stored: binary?.id ? 'by id' : binary ? 'inline' : 'none',
		error: result.error?.message,
	};
}
export type DownloadResult = Awaited<ReturnType<typeof download>>;

/** CPU time (process.cpuUsage, µs) and wall time (ms) of `task`, after a gc. */
async function cpuOf(task: () => Promise<unknown>) {
	await gc();
	const c0 = process.cpuUsage();
	const t0 = Date.now();
	await task();
	const { user, system } = process.cpuUsage(c0);
	return { user, system, total: user + system, wallMs: Date.now() - t0 };
}

/** Measure 4: CPU of the process across an Extract → Create execution, and across an empty run. */
async function cpu(config: Service & { items: number; warmupItems: number }) {
	const nodeWorkflow = singleNodeWorkflow(extractParams);
	// Any type other than ours is the harness's pass-through node: the engine's own per-item cost.
	const emptyWorkflow = singleNodeWorkflow({}, { name: 'Empty', type: 'n8n-nodes-base.noOp' });
	const warmup = await fileItems(config.warmupItems, 'warmup');
	const items = await fileItems(config.items, 'cpu');
	await warmUp(config, nodeWorkflow, warmup);
	await warmUp(config, emptyWorkflow, warmup, 'Empty');

	const empty = await cpuOf(async () => await run(config, emptyWorkflow, items, 'Empty'));
	let result!: RunResult;
	const node = await cpuOf(async () => (result = await run(config, nodeWorkflow, items)));
	return { items: config.items, node, empty, failures: failuresOf(result, items.length) };
}
export type CpuResult = Awaited<ReturnType<typeof cpu>>;

/** The yardstick's per-item requests (`BENCH_SCALE_NODE` or the scale config's `node`). */
interface Yardstick {
	/**
	 * `post`: a multipart POST creating a job, streamed from n8n's binary store as the node sends it
	 * in this mode; `form`: the same POST with Node's native FormData (the node's in-memory path);
	 * `none`: GETs only, of one finished extract (the first yardstick, 2026-11-25).
	 */
	create: 'post' | 'form' | 'none';
	/** GETs per item after the create; a fraction gives items the floor or the ceiling (`getsOfItem`). */
	gets: number;
}

/**
 * `requests-only[:n]` (n GETs of one finished extract, default 3) or
 * `requests-only:post+x` / `requests-only:form+x` (a create, then x GETs of that job on average).
 */
function parseYardstick(spec: string | undefined): Yardstick | undefined {
	const m = /^requests-only(?::(?:(post|form)\+)?(\d+(?:\.\d+)?))?$/.exec(spec ?? '');
	if (!m) return undefined;
	const create = (m[1] ?? 'none') as Yardstick['create'];
	const gets = Number(m[2] ?? 3);
	if (create === 'none' && !Number.isInteger(gets))
		throw new Error(`${spec}: the GET-only yardstick takes a whole number of GETs`);
	return { create, gets };
}

/** GETs of item `i` when items take `gets` on average: the floor, or the ceiling for a share `gets % 1` spread evenly. */
export function getsOfItem(i: number, gets: number): number {
	const whole = Math.floor(gets);
	const share = gets - whole;
	return whole + Math.floor((i + 1) * share + 1e-9) - Math.floor(i * share + 1e-9);
}

/**
 * Measure 6's yardstick (`BENCH_SCALE_NODE=requests-only[:n]`, or the scale config's `node`): a
 * node that does nothing but requests through n8n's `httpRequestWithAuthentication`, at most 5 in
 * flight (GETs before creates, as the node's limiter), and outputs the last answer. What n8n's own
 * request path costs, without the node's code.
 *
 * - GET-only (`requests-only[:n]`): per item n GETs (default 3) of one finished extract, 2 s then
 *   2.5 s, 3 s … apart.
 * - With a create (`requests-only:post+x`, `:form+x`, issue 33): per item one multipart POST of the
 *   item's file to `/v0/extract` (fields `schema` and `document`, as the node's Extract → Create
 *   sends them), then x GETs of the job it created on average (`getsOfItem`), the first
 *   `firstGetMs` after the create's answer, the next at today's gaps of the node's polls (2.5 s,
 *   3.1 s … 5 s). `post` streams the body from n8n's binary store with the node's own
 *   `streamedMultipart` — what the node sends for a file stored by id (filesystem mode, this
 *   bench); `form` sends a native FormData of the file's bytes, what the node sends for an
 *   in-memory binary (`helpers/multipart.ts`).
 */
function requestsOnly(
	extractId: string,
	yardstick: Yardstick,
	firstGetMs: number,
): EngineTypes['node'] {
	return {
		// The node's own description, without parameters (and so without their display options).
		description: {
			...types.node.description,
			displayName: 'Requests Only',
			credentials: [{ name: 'extractionServiceApi', required: true }],
			properties: [],
		},
		async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
			const { baseUrl } = await this.getCredentials('extractionServiceApi');
			const slots = new Semaphore(5);
			const request = async (options: IHttpRequestOptions, urgent: boolean) =>
				await slots.run(
					async () =>
						(await this.helpers.httpRequestWithAuthentication.call(
							this,
							'extractionServiceApi',
							options,
						)) as unknown,
					urgent,
				);
			const get = async (id: string) =>
				(await request(
					{ method: 'GET', url: `${String(baseUrl)}/v0/extract/${id}`, json: true },
					true,
				)) as IDataObject;
			const create = async (i: number): Promise<IDataObject> => {
				const binary = this.getInputData()[i].binary?.data as IBinaryData;
				const fileName = binary.fileName ?? 'file.png';
				const answer = await slots.run(async () => {
					let body: IHttpRequestOptions['body'];
					let headers: IDataObject = { Accept: 'application/json' };
					let stream: { destroy(): void } | undefined;
					if (yardstick.create === 'post') {
						const streamed = await streamedMultipart(
							[['schema', extractParams.schemaId]],
							[
								{
									field: 'document',
									fileName,
									mimeType: binary.mimeType,
									size: Number(binary.bytes),
									open: async () => await this.helpers.getBinaryStream(binary.id as string),
								},
							],
						);
						if (!streamed) throw new Error('no Readable.from: the streamed body is not available');
						({ stream } = streamed);
						body = streamed.stream as unknown as IHttpRequestOptions['body'];
						headers = { ...headers, ...streamed.headers };
					} else {
						const form = new FormData();
						form.append('schema', extractParams.schemaId);
						const bytes = await this.helpers.getBinaryDataBuffer(i, 'data');
						form.append(
							'document',
							new Blob([bytes as Uint8Array<ArrayBuffer>], { type: binary.mimeType }),
							fileName,
						);
						body = form as unknown as IHttpRequestOptions['body'];
					}
					try {
						return (await this.helpers.httpRequestWithAuthentication.call(
							this,
							'extractionServiceApi',
							{ method: 'POST', url: `${String(baseUrl)}/v0/extract`, body, headers, json: false },
						)) as unknown;
					} finally {
						stream?.destroy();
					}
				});
				const text = Buffer.isBuffer(answer) ? answer.toString('utf8') : answer;
				return (typeof text === 'string' ? JSON.parse(text) : text) as IDataObject;
			};
			const output = await Promise.all(
				this.getInputData().map(async (_, i) => {
					if (yardstick.create === 'none') {
						let job: IDataObject = { status: 'FINISHED', id: extractId };
						for (let n = 0; n < yardstick.gets; n++) {
							if (n > 0) await sleep(1500 + 500 * n);
							job = await get(extractId);
						}
						return { json: job };
					}
					let job = await create(i);
					const id = String(job.id);
					const gets = getsOfItem(i, yardstick.gets);
					for (let n = 0; n < gets; n++) {
						// Then today's gaps, as the node's later polls (polling.ts `pollDelay`, no jitter).
						await sleep(n === 0 ? firstGetMs : Math.min(2000 * 1.25 ** n, 5000));
						job = await get(id);
					}
					return { json: job };
				}),
			);
			return [output];
		},
	} as unknown as EngineTypes['node'];
}

/**
 * Job times drawn per item: each item's `emulatorMs` is a whole ms drawn uniformly from [min, max]
 * by `seededRandom(seed)` in item order, sent as the job's metadata `emulator_processing_ms`
 * (emulator/README.md, *Test controls*).
 */
export interface WideTimes {
	minMs: number;
	maxMs: number;
	seed: number;
}

/**
 * Measure 6: one execution of `items` tiny PNGs through Extract → Create, RSS sampled. `node`
 * replaces the node by a yardstick (`requests-only…`, see `requestsOnly`; default
 * `BENCH_SCALE_NODE`); `wide` gives each job its own time through its metadata.
 */
async function scale(
	config: Service & { items: number; node?: string; firstGetMs?: number; wide?: WideTimes },
) {
	const params = config.wide
		? {
				...extractParams,
				// Warm-up items have no `emulatorMs`: their metadata is {} (not sent), their jobs take T.
				options: {
					metadata: '={{ JSON.stringify({ emulator_processing_ms: $json.emulatorMs }) }}',
				},
			}
		: extractParams;
	const workflow = singleNodeWorkflow(params);
	const warm = await warmUp(config, workflow, await fileItems(20, 'warmup', true));
	const yardstick = parseYardstick(config.node ?? process.env.BENCH_SCALE_NODE);
	if (yardstick) {
		const extractId = String(warm.output(NODE_NAME)[0]?.json.id);
		types = { ...types, node: requestsOnly(extractId, yardstick, config.firstGetMs ?? 2000) };
		await warmUp(config, workflow, await fileItems(20, 'warmup-yardstick', true));
	}
	const items = await fileItems(config.items, 'scale', true);
	if (config.wide) {
		const { minMs, maxMs, seed } = config.wide;
		const random = seededRandom(seed);
		for (const item of items) item.json.emulatorMs = Math.round(minMs + random() * (maxMs - minMs));
	}
	const { result, ...rss } = await withRssSampled(async () => await run(config, workflow, items));
	return {
		items: config.items,
		node: yardstick ? String(config.node ?? process.env.BENCH_SCALE_NODE) : 'node',
		...rss,
		ids: result.output(NODE_NAME).map((item) => String(item.json.id)),
		failures: failuresOf(result, items.length).slice(0, 20),
	};
}
export type ScaleResult = Awaited<ReturnType<typeof scale>>;

const KINDS = { throughput, store, upload, cpu, scale, download } as const;

async function main(): Promise<number> {
	const [kind, json] = process.argv.slice(2);
	const measure = KINDS[kind as keyof typeof KINDS] as (config: never) => Promise<unknown>;
	if (!measure) throw new Error(`unknown worker kind ${kind}`);
	const result = await measure(JSON.parse(json ?? '{}') as never);
	// Written and flushed before the process exits (a long line, e.g. 10,000 ids, is cut otherwise).
	await new Promise<void>((resolve) =>
		process.stdout.write(`RESULT ${JSON.stringify(result)}\n`, () => resolve()),
	);
	await shutdownEngine();
	return 0;
}

runMain(main, { label: 'bench worker' });
