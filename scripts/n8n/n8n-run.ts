/** What a check in checks.ts receives: one `n8n execute --rawOutput` of an example, and readers of it. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

export type Json = Record<string, unknown>;

/** One item of a node's output, as n8n stores it in the run data. */
export interface RunItem {
	json: Json;
	/** `data`: base64 (n8n 1.x); `id`: `<mode>:<path>` of a file (2.x's filesystem-v2). */
	binary?: Record<string, { fileName?: string; mimeType?: string; data?: string; id?: string }>;
}

/** One run of one node (`runData[nodeName][i]`). */
export interface NodeRun {
	error?: NodeError;
	data?: { main?: Array<RunItem[] | null> };
}

export interface N8nRunInfo {
	/** File name in examples/workflows/, e.g. 'extract-invoice.json'. */
	workflowFile: string;
	/** '1' or '2' and the exact n8n version. */
	line: string;
	n8nVersion: string;
	/** The IRun n8n printed (`{}` when the workflow was not executed). */
	raw: Json;
	/** The folder n8n may read and write (`/home/node/.n8n-files/…` paths point here). */
	filesDir: string;
	emulator: { url: string; filesUrl: string };
	/** $N8N_USER_FOLDER/.n8n: binary data in filesystem mode lives under it. */
	n8nFolder: string;
	/** The imported copy of the workflow (paths and URLs rewritten, id set). */
	workflow: Json & { nodes: Array<Json & { name: string; type: string }> };
	/** Why `n8n execute` cannot run it (then it was only imported and type-checked; reading outputs throws). */
	notExecuted?: string;
}

export class N8nRun {
	declare readonly workflowFile: string;
	declare readonly line: string;
	declare readonly n8nVersion: string;
	declare readonly raw: Json;
	declare readonly filesDir: string;
	declare readonly emulator: N8nRunInfo['emulator'];
	declare readonly n8nFolder: string;
	declare readonly workflow: N8nRunInfo['workflow'];
	declare readonly notExecuted?: string;

	constructor(info: N8nRunInfo) {
		Object.assign(this, info);
	}

	/** Whether `n8n execute` ran the workflow. */
	get executed(): boolean {
		return this.notExecuted === undefined;
	}

	/** `resultData.runData`: node name → runs. */
	get runData(): Record<string, NodeRun[]> {
		if (this.notExecuted !== undefined)
			throw new Error(`${this.workflowFile} was not executed: ${this.notExecuted}`);
		return (this.raw as RawRun).data?.resultData?.runData ?? {};
	}

	/** The workflow-level error n8n reports, if any (a node error stops the run and lands here). */
	get error(): NodeError | undefined {
		return (this.raw as RawRun).data?.resultData?.error ?? undefined;
	}

	/** The last run of a node; throws when the node did not run or failed. */
	nodeRun(nodeName: string, runIndex = -1): NodeRun {
		const runs = this.runData[nodeName] ?? [];
		const run = runs.at(runIndex);
		if (!run) {
			const ran = Object.keys(this.runData).map((n) => `"${n}"`);
			const e = this.error;
			const where = e?.node?.name ? ` in "${e.node.name}"` : '';
			throw new Error(
				`node "${nodeName}" has no run ${runIndex} (it ran ${runs.length} time(s); nodes that ran: ${ran.join(', ') || 'none'})` +
					(e ? `; workflow error${where}: ${describeError(e)}` : ''),
			);
		}
		if (run.error) throw new Error(`node "${nodeName}" failed: ${describeError(run.error)}`);
		return run;
	}

	/** Items a node put on one of its main outputs (default: output 0 of its last run). */
	items(nodeName: string, outputIndex = 0, runIndex = -1): RunItem[] {
		return this.nodeRun(nodeName, runIndex).data?.main?.[outputIndex] ?? [];
	}

	/** The `json` of each item a node put on one of its main outputs. */
	json(nodeName: string, outputIndex = 0, runIndex = -1): Json[] {
		return this.items(nodeName, outputIndex, runIndex).map((i) => i.json);
	}

	/**
	 * The bytes of a binary property of one output item: in the run data (n8n 1.x, base64) or in a
	 * file of n8n's folder (2.x: `id` is `filesystem-v2:<path under storage/>`).
	 */
	binaryData(nodeName: string, property = 'data', itemIndex = 0, outputIndex = 0): Buffer {
		const items = this.items(nodeName, outputIndex);
		const bin = items[itemIndex]?.binary?.[property];
		const what = `binary "${property}" of "${nodeName}" item ${itemIndex}`;
		if (!bin) throw new Error(`no ${what} (items: ${preview(items.map((i) => i.binary))})`);
		if (!bin.id) {
			if (typeof bin.data !== 'string') throw new Error(`${what} has no data`);
			return Buffer.from(bin.data, 'base64');
		}
		const [mode, rel] = bin.id.split(/:(.*)/s, 2);
		const dir = { 'filesystem-v2': 'storage', filesystem: 'binaryData' }[mode];
		if (!dir) throw new Error(`${what} is in mode ${mode}, which this test cannot read`);
		return this.readFile(path.join(dir, rel), this.n8nFolder);
	}

	/** A file under filesDir (for workflows that write files); throws when it is missing. */
	readFile(relativePath: string, dir = this.filesDir): Buffer {
		const file = path.join(dir, relativePath);
		if (!existsSync(file)) throw new Error(`expected file ${file} does not exist`);
		return readFileSync(file);
	}
}

type NodeError = { message?: string; description?: string; node?: { name?: string } };
type RawRun = {
	data?: { resultData?: { runData?: Record<string, NodeRun[]>; error?: NodeError } };
};

/** `message (description)` of an error n8n reports. */
export function describeError(e: NodeError): string {
	return `${e.message ?? JSON.stringify(e)}${e.description ? ` (${e.description})` : ''}`;
}

/** A check: throws (with a message that says what was wrong) when the run's output is not right. */
export type Check = (run: N8nRun) => void | Promise<void>;

/** Throws `what: expected …, got …` unless both are the same JSON. */
export function expectEqual(actual: unknown, expected: unknown, what: string): void {
	if (JSON.stringify(actual) !== JSON.stringify(expected))
		throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}

/** Throws `message` unless `condition` holds. */
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
