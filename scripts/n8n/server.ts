/**
 * A running n8n 2.x for the examples `n8n execute` cannot show (trigger-run.ts, data-table-run.ts):
 * an emulator in this process, a throwaway user folder with the package installed, and then
 * `n8n start` with the owner signed in, reached over n8n's REST API as the editor does.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

import { startEmulator, type Emulator } from '../../emulator';
import {
	createContext,
	n8nCall,
	OWNER,
	setupOwner,
	startServer,
	type N8nContext,
} from '../editor/n8n';
import { installPackageInto, type LineInfo } from '../lib/n8n';
import { removeAtExit, tail, waitUntil, type Service } from '../lib/processes';
import type { ExampleSource } from './examples';
import { N8nRun, type Json } from './n8n-run';

/** What run-examples.ts gives a run in `n8n start`. */
export interface ServerRunOptions {
	/** Line 2 as install.sh describes it. */
	info: LineInfo;
	/** The packed package (npm pack). */
	tarball: string;
	source: ExampleSource;
	keep: boolean;
	verbose: boolean;
}

/** What a run in `n8n start` reports (it never throws: a failure is in `message`). */
export interface ServerRunResult {
	ok: boolean;
	/** Its result line (`trigger: …`, `data table: …`), when it got that far. */
	line?: string;
	message?: string;
	ms: number;
	timings: Record<string, number>;
}

/** What {@link runInServer} gives its body. */
export interface ServerRun {
	emu: Emulator;
	/** `ctx.cli` runs n8n's CLI in the user folder. */
	ctx: N8nContext;
	/** The only folder Read/Write Files from Disk may use. */
	filesDir: string;
	/** `n8n start` in the user folder, the owner set up; its REST API as the owner. */
	start(timeoutMs: number): Promise<{ server: Service; rest: Rest }>;
	log(message: string): void;
	/** The result so far: the body sets its `line`, and `message` for a failure it does not throw. */
	result: ServerRunResult;
}

/**
 * One run in its own `n8n start`: an emulator and a user folder with the package, then `body`,
 * which starts the server when it needs it; both are stopped at the end. An error the body throws
 * is the result's message (with n8n's last output when `verbose`).
 *
 * @param o.tag prefixes its log lines; `env`: the server's and the CLI's settings beyond n8nEnv's
 */
export async function runInServer(
	o: ServerRunOptions & {
		tag: string;
		prefix: string;
		processingMs: number;
		env?: Record<string, string>;
	},
	body: (run: ServerRun) => Promise<void>,
): Promise<ServerRunResult> {
	const t0 = Date.now();
	const result: ServerRunResult = { ok: false, ms: 0, timings: {} };
	const log = (m: string): void => console.log(`[${o.tag}] ${m}`);
	const echo = o.verbose ? `[${o.tag}] n8n| ` : undefined;
	const userFolder = mkdtempSync(path.join(os.tmpdir(), o.prefix));
	removeAtExit(userFolder, o.keep);
	let emu: Emulator | undefined;
	let server: Service | undefined;
	try {
		// the emulator's temporary folder inside the user folder: a Ctrl+C that ends this process before
		// emu.close() still leaves nothing behind (startEmulator makes it before its first await)
		const tmp = path.join(userFolder, 'emulator-tmp');
		mkdirSync(tmp);
		const { TMPDIR } = process.env;
		process.env.TMPDIR = tmp;
		const started = startEmulator({ processingMs: o.processingMs, quiet: echo === undefined });
		if (TMPDIR === undefined) delete process.env.TMPDIR;
		else process.env.TMPDIR = TMPDIR;
		emu = await started;
		const ctx = await createContext(o.info, userFolder, echo);
		// the CLI commands too: the database is the server's, whose mode they must not contradict
		Object.assign(ctx.env, o.env);
		await installPackageInto(userFolder, o.tarball);
		result.timings.folder = Date.now() - t0;
		const start = async (timeoutMs: number) => {
			server = await startServer(ctx, timeoutMs, echo);
			return { server, rest: new Rest(ctx, await setupOwner(ctx.url, OWNER)) };
		};
		await body({ emu, ctx, filesDir: path.join(userFolder, 'files'), start, log, result });
		result.ok = result.message === undefined;
	} catch (err) {
		result.message = (err as Error).message;
		if (server && o.verbose) result.message += `\n  n8n output:\n${tail(server.output(), 20)}`;
	} finally {
		const t = Date.now();
		await server?.stop(10_000);
		await emu?.close();
		result.timings.stop = Date.now() - t;
		result.ms = Date.now() - t0;
		if (o.keep) log(`kept user folder ${userFolder}`);
	}
	return result;
}

/** n8n's REST API (`/rest/…`) with the owner's session cookie. */
export class Rest {
	/** n8n's own `flatted`: execution data comes flatted, as the editor gets it. */
	private readonly flatted: { parse(text: string): unknown };

	constructor(
		private readonly ctx: N8nContext,
		private readonly cookie: string,
	) {
		const n8nPackage = path.join(ctx.info.dir, 'node_modules', 'n8n', 'package.json');
		this.flatted = createRequire(n8nPackage)('flatted') as Rest['flatted'];
	}

	/** One call; its `data` (or the whole answer without one). @throws Error unless 200 */
	async call(method: 'GET' | 'POST', route: string, body?: unknown): Promise<Json> {
		const { text, json } = await n8nCall(this.ctx.url, method, route, {
			cookie: this.cookie,
			body,
		});
		if (json === undefined)
			throw new Error(`${method} ${route} → 200, not JSON: ${text.slice(0, 400)}`);
		return ((json as { data?: Json }).data ?? json) as Json;
	}

	/** Summaries of a workflow's executions (newest first, up to 100). */
	async executions(
		workflowId: string,
	): Promise<Array<{ id: string; status: string; mode: string }>> {
		const filter = encodeURIComponent(JSON.stringify({ workflowId }));
		const list = await this.call('GET', `/rest/executions?filter=${filter}&limit=100`);
		return ((list.results ?? []) as Json[]).map((e) => ({
			id: String(e.id),
			status: String(e.status),
			mode: String(e.mode),
		}));
	}

	/** One execution with its run data, read as a check reads `n8n execute`'s output. */
	async execution(id: string): Promise<{ status: string; mode: string; run: N8nRun }> {
		const e = await this.call('GET', `/rest/executions/${id}`);
		const data = typeof e.data === 'string' ? this.flatted.parse(e.data) : e.data;
		const run = new N8nRun({
			workflowFile: '',
			line: '2',
			n8nVersion: '',
			raw: { data },
			filesDir: '',
			n8nFolder: '',
			emulator: { url: '', filesUrl: '' },
			workflow: (e.workflowData ?? { nodes: [] }) as N8nRun['workflow'],
		});
		return { status: String(e.status), mode: String(e.mode), run };
	}

	/**
	 * Runs a workflow on the server from its trigger `startNode` (`POST /rest/workflows/:id/run`, as
	 * the editor's Execute button) and waits for the execution to end.
	 *
	 * @throws Error when it does not start, does not end within `timeoutMs`, or does not succeed
	 */
	async run(workflow: { id: string; name: string }, startNode: string, timeoutMs: number) {
		const started = await this.call('POST', `/rest/workflows/${workflow.id}/run`, {
			triggerToStartFrom: { name: startNode },
		});
		const id = String(started.executionId ?? '');
		if (!id) throw new Error(`"${workflow.name}" did not start: ${JSON.stringify(started)}`);
		let last: Awaited<ReturnType<Rest['execution']>> | undefined;
		await waitUntil(
			`execution ${id} of "${workflow.name}"`,
			timeoutMs,
			async () => {
				last = await this.execution(id);
				return ['new', 'running', 'waiting', 'unknown'].includes(last.status) ? undefined : true;
			},
			500,
			() => `status ${last?.status ?? 'unknown'}`,
		);
		if (last?.status !== 'success')
			throw new Error(
				`"${workflow.name}" (execution ${id}) ended ${last?.status}: ${JSON.stringify(last?.run.error ?? {}).slice(0, 400)}`,
			);
		return { id, run: last.run };
	}
}
