/**
 * One benchmark measurement in a fresh process ("the node process"): runs the compiled node
 * (dist/, what n8n loads) inside n8n-core's WorkflowExecute (scripts/engine.ts) against an
 * emulator started by bench/run.ts, and prints one line `RESULT {json}`.
 *
 *   node --expose-gc --import tsx bench/worker.ts <kind> '<json config>'
 *
 * kinds: throughput (measure 1), store + upload (measure 3), cpu (measure 4), scale (measure 6).
 * The environment (N8N_DEFAULT_BINARY_DATA_MODE, N8N_USER_FOLDER) is set by bench/run.ts before
 * n8n-core loads.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import type {
	IBinaryData,
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
} from 'n8n-workflow';
import { sleep } from 'n8n-workflow';

import {
	binaryProperty,
	loadTypes,
	runWorkflow,
	shutdownEngine,
	singleNodeWorkflow,
	type RunOptions,
} from '../scripts/engine';

const ROOT = path.join(__dirname, '..');
const SAMPLE_PDF = readFileSync(path.join(ROOT, 'examples', 'files', 'invoice.pdf'));
const INVOICE_SCHEMA = '3f0c1a52-7d4e-4c1b-9a51-2b6f0e8d9c41';
const NODE_NAME = 'Extraction Service';

interface Service {
	url: string;
	apiKey: string;
}

export interface ThroughputConfig extends Service {
	mode: 'concurrent' | 'sequential';
	items: number;
	/** The node's Concurrency option (requests in flight); default: not set (5). */
	concurrency?: number;
}

export interface ThroughputResult {
	mode: 'concurrent' | 'sequential';
	items: number;
	/** Wall time of the execution(s), ms: from the start of the first to the end of the last. */
	wallMs: number;
	/** Sequential: wall time of each single-item execution, ms. */
	perExecutionMs: number[];
	ids: string[];
	/** Output items whose status is not FINISHED, or the execution error. */
	failures: string[];
	startedAt: number;
	endedAt: number;
}

export interface UploadConfig extends Service {
	binaryFile: string;
}

export interface UploadResult {
	/** RSS just before the execution (after a warm-up upload and gc), bytes. */
	baselineRss: number;
	/** Highest RSS seen by the 20 ms sampler during the execution, bytes. */
	sampledPeakRss: number;
	/** Kernel's peak RSS (VmHWM, reset right before the execution), bytes; 0 if unavailable. */
	hwmPeakRss: number;
	samples: number;
	wallMs: number;
	documentId: string;
	pageCount: number;
	error?: string;
}

export interface CpuConfig extends Service {
	items: number;
	warmupItems: number;
}

export interface CpuResult {
	items: number;
	/** process.cpuUsage() user+system of this process across the node's execution, µs. */
	nodeRunCpuUs: number;
	nodeRunUserUs: number;
	nodeRunSystemUs: number;
	nodeRunWallMs: number;
	/** Same for the same items through a pass-through node (engine + item handling only), µs. */
	emptyRunCpuUs: number;
	emptyRunWallMs: number;
	failures: string[];
}

export interface ScaleConfig extends Service {
	items: number;
}

export interface ScaleResult {
	items: number;
	/** RSS just before the execution (after a 20-item warm-up and gc), bytes. */
	baselineRss: number;
	/** Highest RSS seen by the 20 ms sampler during the execution, bytes. */
	sampledPeakRss: number;
	/** Kernel's peak RSS (VmHWM, reset right before the execution), bytes; 0 if unavailable. */
	hwmPeakRss: number;
	wallMs: number;
	startedAt: number;
	endedAt: number;
	ids: string[];
	failures: string[];
}

/**
 * Measure 6's yardstick (`BENCH_SCALE_NODE=requests-only`): a node that does nothing but the node's
 * requests — per item, the same number of GETs of one finished extract through n8n's
 * `httpRequestWithAuthentication`, 2 s then 2.5 s apart as the node's polls, at most 5 in flight —
 * and outputs the last answer. What n8n's own request path costs, without the node's code.
 */
class RequestsOnly implements INodeType {
	description = {
		displayName: 'Requests Only',
		name: 'extractionService',
		group: ['transform'],
		version: [1, 2],
		defaultVersion: 2,
		description: 'Benchmark yardstick',
		defaults: { name: NODE_NAME },
		inputs: ['main'],
		outputs: ['main'],
		credentials: [{ name: 'extractionServiceApi', required: true }],
		properties: [],
	} as unknown as INodeType['description'];

	constructor(
		private readonly extractId: string,
		private readonly requestsPerItem: number,
	) {}

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		const self = RequestsOnly.current!;
		const { baseUrl } = await this.getCredentials('extractionServiceApi');
		let active = 0;
		const queue: Array<() => void> = [];
		const get = async (): Promise<IDataObject> => {
			if (active >= 5) await new Promise<void>((resolve) => queue.push(resolve));
			else active++;
			try {
				return (await this.helpers.httpRequestWithAuthentication.call(
					this,
					'extractionServiceApi',
					{
						method: 'GET',
						url: `${String(baseUrl)}/v0/extract/${self.extractId}`,
						json: true,
					},
				)) as IDataObject;
			} finally {
				const next = queue.shift();
				if (next) next();
				else active--;
			}
		};
		const output = await Promise.all(
			this.getInputData().map(async () => {
				let job: IDataObject = { status: 'FINISHED', id: self.extractId };
				for (let n = 0; n < self.requestsPerItem; n++) {
					if (n > 0) await sleep(1500 + 500 * n);
					job = await get();
				}
				return { json: job };
			}),
		);
		return [output];
	}

	/** The instance whose settings `execute` reads (n8n calls `execute` with its own `this`). */
	static current?: RequestsOnly;
}

/** A 67-byte PNG, the smallest image the service takes: what is measured is the node, not the file. */
const TINY_PNG = Buffer.from(
	'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg==',
	'base64',
);

const credentials = (s: Service) => ({
	extractionServiceApi: { baseUrl: s.url, apiKey: s.apiKey },
});

const extractParams = {
	resource: 'extract',
	operation: 'create',
	source: 'binary',
	binaryPropertyName: 'data',
	schemaId: INVOICE_SCHEMA,
	waitForCompletion: true,
};

async function invoiceItems(n: number, prefix: string): Promise<INodeExecutionData[]> {
	const items: INodeExecutionData[] = [];
	for (let i = 0; i < n; i++) {
		items.push({
			json: { i },
			binary: { data: await binaryProperty(SAMPLE_PDF, `${prefix}-${i}.pdf`, 'application/pdf') },
		});
	}
	return items;
}

function failuresOf(
	output: INodeExecutionData[],
	error: Error | undefined,
	expected: number,
): string[] {
	const failures: string[] = [];
	if (error) failures.push(`execution error: ${error.message}`);
	if (!error && output.length !== expected)
		failures.push(`${output.length} output items instead of ${expected}`);
	for (const item of output)
		if (item.json.status !== 'FINISHED')
			failures.push(`item ${String(item.json.id)}: ${String(item.json.status ?? item.json.error)}`);
	return failures;
}

async function run(options: Omit<RunOptions, 'types'>, types: RunOptions['types']) {
	return await runWorkflow({ ...options, types });
}

/** Measure 1: 50 documents through Extract → Create, concurrently (one execution) or one after another. */
async function throughput(config: ThroughputConfig): Promise<ThroughputResult> {
	const types = loadTypes('dist');
	const items = await invoiceItems(config.items, config.mode);
	const workflow = singleNodeWorkflow(
		config.concurrency
			? { ...extractParams, options: { concurrency: config.concurrency } }
			: extractParams,
	);
	const ids: string[] = [];
	const failures: string[] = [];
	const perExecutionMs: number[] = [];
	const startedAt = Date.now();
	if (config.mode === 'concurrent') {
		const result = await run(
			{ workflow, startNode: NODE_NAME, input: items, credentials: credentials(config) },
			types,
		);
		const output = result.output(NODE_NAME);
		ids.push(...output.map((item) => String(item.json.id)));
		failures.push(...failuresOf(output, result.error, items.length));
	} else {
		for (const item of items) {
			const t0 = Date.now();
			const result = await run(
				{ workflow, startNode: NODE_NAME, input: [item], credentials: credentials(config) },
				types,
			);
			perExecutionMs.push(Date.now() - t0);
			const output = result.output(NODE_NAME);
			ids.push(...output.map((o) => String(o.json.id)));
			failures.push(...failuresOf(output, result.error, 1));
		}
	}
	const endedAt = Date.now();
	return {
		mode: config.mode,
		items: config.items,
		wallMs: endedAt - startedAt,
		perExecutionMs,
		ids,
		failures,
		startedAt,
		endedAt,
	};
}

/** Measure 3, step 1: stores the big file as n8n binary data (filesystem mode) and writes its IBinaryData JSON. */
async function store(config: {
	file: string;
	fileName: string;
	out: string;
}): Promise<{ id: string; bytes: number }> {
	const binary = await binaryProperty(
		readFileSync(config.file),
		config.fileName,
		'application/pdf',
	);
	writeFileSync(config.out, JSON.stringify(binary));
	return { id: String(binary.id), bytes: Number(binary.bytes ?? 0) };
}

const readHwm = (): number => {
	try {
		const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
		return m ? Number(m[1]) * 1024 : 0;
	} catch {
		return 0;
	}
};

const resetHwm = (): boolean => {
	try {
		writeFileSync('/proc/self/clear_refs', '5');
		return true;
	} catch {
		return false;
	}
};

const gc = async (): Promise<void> => {
	const collect = (globalThis as { gc?: () => void }).gc;
	for (let i = 0; i < 3; i++) {
		collect?.();
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
};

/** Measure 3, step 2: Document → Upload of the stored file, with RSS sampled every 20 ms. */
async function upload(config: UploadConfig): Promise<UploadResult> {
	const types = loadTypes('dist');
	const workflow = singleNodeWorkflow({
		resource: 'document',
		operation: 'upload',
		binaryPropertyName: 'data',
	});
	// Warm-up: a small upload loads every module of the path (HTTP client, multipart) before measuring.
	const warm = await run(
		{
			workflow,
			startNode: NODE_NAME,
			input: await invoiceItems(1, 'warmup'),
			credentials: credentials(config),
		},
		types,
	);
	if (warm.error) throw warm.error;
	const binary = JSON.parse(readFileSync(config.binaryFile, 'utf8')) as IBinaryData;

	await gc();
	const baselineRss = process.memoryUsage.rss();
	const hwmReset = resetHwm();
	let sampledPeakRss = baselineRss;
	let samples = 0;
	const sampler = setInterval(() => {
		samples++;
		sampledPeakRss = Math.max(sampledPeakRss, process.memoryUsage.rss());
	}, 20);
	const t0 = Date.now();
	const result = await run(
		{
			workflow,
			startNode: NODE_NAME,
			input: [{ json: {}, binary: { data: binary } }],
			credentials: credentials(config),
		},
		types,
	);
	const wallMs = Date.now() - t0;
	clearInterval(sampler);
	sampledPeakRss = Math.max(sampledPeakRss, process.memoryUsage.rss());
	const hwmPeakRss = hwmReset ? readHwm() : 0;
	const document = result.output(NODE_NAME)[0]?.json ?? {};
	return {
		baselineRss,
		sampledPeakRss,
		hwmPeakRss,
		samples,
		wallMs,
		documentId: String(document.id ?? ''),
		pageCount: Number(document.page_count ?? -1),
		error: result.error?.message,
	};
}

/** Measure 4: CPU of the process across a 500-item Extract → Create execution, and across an empty run. */
async function cpu(config: CpuConfig): Promise<CpuResult> {
	const types = loadTypes('dist');
	const nodeWorkflow = singleNodeWorkflow(extractParams);
	// Any type other than ours is the harness's pass-through node: the engine's own per-item cost.
	const emptyWorkflow: RunOptions['workflow'] = {
		nodes: [
			{
				id: 'c7d1e2f3-0a1b-4c2d-8e3f-4a5b6c7d8e9f',
				name: 'Empty',
				type: 'n8n-nodes-base.noOp',
				typeVersion: 1,
				position: [0, 0],
				parameters: {},
			},
		],
		connections: {},
	};
	const warmup = await invoiceItems(config.warmupItems, 'warmup');
	const items = await invoiceItems(config.items, 'cpu');
	const creds = credentials(config);

	const warmNode = await run(
		{ workflow: nodeWorkflow, startNode: NODE_NAME, input: warmup, credentials: creds },
		types,
	);
	if (warmNode.error) throw warmNode.error;
	await run(
		{ workflow: emptyWorkflow, startNode: 'Empty', input: warmup, credentials: creds },
		types,
	);

	await gc();
	let c0 = process.cpuUsage();
	let t0 = Date.now();
	await run(
		{ workflow: emptyWorkflow, startNode: 'Empty', input: items, credentials: creds },
		types,
	);
	const empty = process.cpuUsage(c0);
	const emptyRunWallMs = Date.now() - t0;

	await gc();
	c0 = process.cpuUsage();
	t0 = Date.now();
	const result = await run(
		{ workflow: nodeWorkflow, startNode: NODE_NAME, input: items, credentials: creds },
		types,
	);
	const used = process.cpuUsage(c0);
	const nodeRunWallMs = Date.now() - t0;
	return {
		items: config.items,
		nodeRunCpuUs: used.user + used.system,
		nodeRunUserUs: used.user,
		nodeRunSystemUs: used.system,
		nodeRunWallMs,
		emptyRunCpuUs: empty.user + empty.system,
		emptyRunWallMs,
		failures: failuresOf(result.output(NODE_NAME), result.error, items.length),
	};
}

/** Measure 6: one execution of `items` tiny PNGs through Extract → Create with Wait for Completion, RSS sampled every 20 ms. */
async function scale(config: ScaleConfig): Promise<ScaleResult> {
	let types = loadTypes('dist');
	const workflow = singleNodeWorkflow(extractParams);
	const pngs = async (n: number, prefix: string): Promise<INodeExecutionData[]> => {
		const items: INodeExecutionData[] = [];
		for (let i = 0; i < n; i++)
			items.push({
				json: { i },
				binary: { data: await binaryProperty(TINY_PNG, `${prefix}-${i}.png`, 'image/png') },
			});
		return items;
	};
	const warm = await run(
		{
			workflow,
			startNode: NODE_NAME,
			input: await pngs(20, 'warmup'),
			credentials: credentials(config),
		},
		types,
	);
	if (warm.error) throw warm.error;
	// The yardstick (see RequestsOnly): BENCH_SCALE_NODE=requests-only[:n], n GETs an item (default 3).
	const yardstick = /^requests-only(?::(\d+))?$/.exec(process.env.BENCH_SCALE_NODE ?? '');
	if (yardstick) {
		const node = new RequestsOnly(
			String(warm.output(NODE_NAME)[0]?.json.id),
			Number(yardstick[1] ?? 3),
		);
		RequestsOnly.current = node;
		types = { ...types, node };
		const warmYardstick = await run(
			{
				workflow,
				startNode: NODE_NAME,
				input: await pngs(20, 'warmup-yardstick'),
				credentials: credentials(config),
			},
			types,
		);
		if (warmYardstick.error) throw warmYardstick.error;
	}
	const items = await pngs(config.items, 'scale');
	await gc();
	const baselineRss = process.memoryUsage.rss();
	const hwmReset = resetHwm();
	let sampledPeakRss = baselineRss;
	const sampler = setInterval(() => {
		sampledPeakRss = Math.max(sampledPeakRss, process.memoryUsage.rss());
	}, 20);
	const startedAt = Date.now();
	const result = await run(
		{ workflow, startNode: NODE_NAME, input: items, credentials: credentials(config) },
		types,
	);
	const endedAt = Date.now();
	clearInterval(sampler);
	sampledPeakRss = Math.max(sampledPeakRss, process.memoryUsage.rss());
	const hwmPeakRss = hwmReset ? readHwm() : 0;
	const output = result.output(NODE_NAME);
	return {
		items: config.items,
		baselineRss,
		sampledPeakRss,
		hwmPeakRss,
		wallMs: endedAt - startedAt,
		startedAt,
		endedAt,
		ids: output.map((item) => String(item.json.id)),
		failures: failuresOf(output, result.error, items.length).slice(0, 20),
	};
}

async function main(): Promise<void> {
	const [kind, json] = process.argv.slice(2);
	const config = JSON.parse(json ?? '{}');
	let result: unknown;
	if (kind === 'throughput') result = await throughput(config as ThroughputConfig);
	else if (kind === 'store')
		result = await store(config as { file: string; fileName: string; out: string });
	else if (kind === 'upload') result = await upload(config as UploadConfig);
	else if (kind === 'cpu') result = await cpu(config as CpuConfig);
	else if (kind === 'scale') result = await scale(config as ScaleConfig);
	else throw new Error(`unknown worker kind ${kind}`);
	// Written and flushed before the process exits (a long line, e.g. 10,000 ids, is cut otherwise).
	await new Promise<void>((resolve) =>
		process.stdout.write(`RESULT ${JSON.stringify(result)}\n`, () => resolve()),
	);
	await shutdownEngine();
}

main().then(
	() => process.exit(0),
	(error: Error) => {
		console.error(error.stack ?? error.message);
		process.exit(1);
	},
);
