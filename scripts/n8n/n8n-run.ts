/**
 * What a check in checks.ts receives: one execution of one example workflow in a real n8n server,
 * as `n8n execute --id=… --rawOutput` printed it, with helpers to read node outputs.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export type Json = Record<string, unknown>;

/** One item of a node's output, as n8n stores it in the run data. */
export interface RunItem {
	json: Json;
	binary?: Record<
		string,
		{
			mimeType?: string;
			fileName?: string;
			fileExtension?: string;
			fileSize?: string;
			data?: string;
			id?: string;
		}
	>;
	pairedItem?: unknown;
	error?: unknown;
}

/** One run of one node (`runData[nodeName][i]`). */
export interface NodeRun {
	startTime?: number;
	executionTime?: number;
	executionStatus?: string;
	error?: { message?: string; description?: string; [k: string]: unknown };
	data?: { main?: Array<RunItem[] | null> };
}

export interface N8nRunInfo {
	/** File name in examples/workflows/, e.g. 'extract-invoice.json'. */
	workflowFile: string;
	/** '1' or '2' (which n8n line ran it) and the exact n8n version. */
	line: string;
	n8nVersion: string;
	/** The whole IRun object n8n printed (`{}` when the workflow was not executed). */
	raw: Json;
	/** The folder n8n may read and write: example files are copied here, `/home/node/.n8n-files/…` paths point here. */
	filesDir: string;
	/** The emulator the workflow ran against. */
	emulator: { url: string; filesUrl: string };
	/** n8n's own folder ($N8N_USER_FOLDER/.n8n): binary data in filesystem mode lives under it. */
	n8nFolder: string;
	/** The copy of the workflow that was imported (paths and URLs rewritten, id set). */
	workflow: Json & { nodes: Array<Json & { name: string; type: string }> };
	/**
	 * Set when `n8n execute` cannot run the workflow (no Manual Trigger, e.g. a chat-triggered AI
	 * agent): then it was only imported, and every node type and typeVersion it uses was found in
	 * this n8n (the runner checks that before any check). Reading outputs then throws.
	 */
	notExecuted?: string;
}

export class N8nRun implements N8nRunInfo {
	readonly workflowFile: string;
	readonly line: string;
	readonly n8nVersion: string;
	readonly raw: Json;
	readonly filesDir: string;
	readonly emulator: { url: string; filesUrl: string };
	readonly n8nFolder: string;
	readonly workflow: N8nRunInfo['workflow'];
	readonly notExecuted?: string;

	constructor(info: N8nRunInfo) {
		this.workflowFile = info.workflowFile;
		this.line = info.line;
		this.n8nVersion = info.n8nVersion;
		this.raw = info.raw;
		this.filesDir = info.filesDir;
		this.emulator = info.emulator;
		this.n8nFolder = info.n8nFolder;
		this.workflow = info.workflow;
		this.notExecuted = info.notExecuted;
	}

	/** Whether `n8n execute` ran the workflow. */
	get executed(): boolean {
		return this.notExecuted === undefined;
	}

	/** `resultData.runData`: node name → runs. */
	get runData(): Record<string, NodeRun[]> {
		if (this.notExecuted !== undefined)
			throw new Error(`${this.workflowFile} was not executed: ${this.notExecuted}`);
		const data = this.raw.data as
			{ resultData?: { runData?: Record<string, NodeRun[]> } } | undefined;
		return data?.resultData?.runData ?? {};
	}

	/** The workflow-level error n8n reports, if any (a node error stops the run and lands here). */
	get error(): { message?: string; description?: string; node?: { name?: string } } | undefined {
		const data = this.raw.data as { resultData?: { error?: { message?: string } } } | undefined;
		return data?.resultData?.error ?? undefined;
	}

	/** Names of the nodes that ran. */
	get executedNodes(): string[] {
		return Object.keys(this.runData);
	}

	/** The last run of a node; throws when the node did not run. */
	nodeRun(nodeName: string, runIndex = -1): NodeRun {
		const runs = this.runData[nodeName];
		if (!runs || runs.length === 0) {
			throw new Error(
				`node "${nodeName}" did not run (nodes that ran: ${this.executedNodes.map((n) => `"${n}"`).join(', ') || 'none'})${this.describeError()}`,
			);
		}
		const run = runs.at(runIndex);
		if (!run)
			throw new Error(`node "${nodeName}" has no run ${runIndex} (it ran ${runs.length} time(s))`);
		if (run.error)
			throw new Error(
				`node "${nodeName}" failed: ${run.error.message ?? JSON.stringify(run.error)}${run.error.description ? ` (${run.error.description})` : ''}`,
			);
		return run;
	}

	/** Items a node put on one of its main outputs (default: output 0 of its last run). */
	items(nodeName: string, outputIndex = 0, runIndex = -1): RunItem[] {
		const run = this.nodeRun(nodeName, runIndex);
		return run.data?.main?.[outputIndex] ?? [];
	}

	/** The `json` of each item a node put on one of its main outputs. */
	json(nodeName: string, outputIndex = 0, runIndex = -1): Json[] {
		return this.items(nodeName, outputIndex, runIndex).map((i) => i.json);
	}

	/**
	 * The bytes of a binary property of one output item. n8n 1.x keeps them in the run data (base64,
	 * mode 'default'); n8n 2.x stores them on disk (mode 'filesystem-v2', `id` points to the file).
	 */
	binaryData(nodeName: string, property = 'data', itemIndex = 0, outputIndex = 0): Buffer {
		const items = this.items(nodeName, outputIndex);
		const item = items[itemIndex];
		if (!item)
			throw new Error(`node "${nodeName}" has no item ${itemIndex} (it output ${items.length})`);
		const bin = item.binary?.[property];
		if (!bin)
			throw new Error(
				`item ${itemIndex} of "${nodeName}" has no binary "${property}" (it has: ${Object.keys(item.binary ?? {}).join(', ') || 'none'})`,
			);
		const id = bin.id;
		if (id) {
			const [mode, rel] = id.split(/:(.*)/s, 2);
			const file =
				mode === 'filesystem-v2'
					? path.join(this.n8nFolder, 'storage', rel)
					: mode === 'filesystem'
						? path.join(this.n8nFolder, 'binaryData', rel)
						: undefined;
			if (!file)
				throw new Error(
					`binary "${property}" of "${nodeName}" is in mode ${mode}, which this test cannot read`,
				);
			if (!existsSync(file))
				throw new Error(`binary "${property}" of "${nodeName}": ${file} does not exist`);
			return readFileSync(file);
		}
		if (typeof bin.data !== 'string')
			throw new Error(`binary "${property}" of "${nodeName}" has no data`);
		return Buffer.from(bin.data, 'base64');
	}

	/** A file under filesDir (for workflows that write files); throws when it is missing. */
	readFile(relativePath: string): Buffer {
		const file = path.join(this.filesDir, relativePath);
		if (!existsSync(file)) throw new Error(`expected file ${file} was not written`);
		return readFileSync(file);
	}

	private describeError(): string {
		const e = this.error;
		if (!e) return '';
		return `; workflow error${e.node?.name ? ` in "${e.node.name}"` : ''}: ${e.message ?? JSON.stringify(e)}${e.description ? ` (${e.description})` : ''}`;
	}
}

/** A check: throws (with a message that says what was wrong) when the run's output is not right. */
export type Check = (run: N8nRun) => void | Promise<void>;

/** Small assertion helpers with readable messages. */
export function expectEqual(actual: unknown, expected: unknown, what: string): void {
	if (JSON.stringify(actual) !== JSON.stringify(expected)) {
		throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
	}
}

export function expectTrue(condition: unknown, message: string): asserts condition {
	if (!condition) throw new Error(message);
}

/** Value at a dotted path (`result.invoice_number`) of an object. */
export function at(obj: unknown, dottedPath: string): unknown {
	let cur: unknown = obj;
	for (const key of dottedPath.split('.')) {
		if (cur === null || typeof cur !== 'object') return undefined;
		cur = (cur as Record<string, unknown>)[key];
	}
	return cur;
}

/** Short JSON for messages. */
export function preview(value: unknown, max = 600): string {
	const s = JSON.stringify(value);
	return s === undefined ? 'undefined' : s.length > max ? `${s.slice(0, max)}…` : s;
}
