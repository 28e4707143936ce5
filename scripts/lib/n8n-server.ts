/**
 * `n8n start` with this package installed as a community package, in a throwaway user folder (the
 * environment of scripts/editor/n8n.ts's createContext), the owner signed in and n8n's REST API
 * reached as the editor reaches it: the one way the runs in a server start it (test:n8n's trigger
 * and Data table runs, scripts/n8n/server.ts; the agent and MCP runs, scripts/e2e/n8n-with-package.ts).
 */
import { createRequire } from 'node:module';
import path from 'node:path';

import {
	createContext,
	n8nCall,
	OWNER,
	setupOwner,
	startServer,
	type N8nContext,
} from '../editor/n8n';
import { N8nRun, type Json } from '../n8n/n8n-run';
import { installPackageInto, type LineInfo } from './n8n';
import { commandError, waitUntil, type Done, type Service } from './processes';

/** n8n in a user folder with the package installed, not started yet ({@link prepareN8n}). */
export interface PackagedN8n {
	/** `ctx.cli` runs n8n's CLI in the user folder. */
	ctx: N8nContext;
	/** The only folder Read/Write Files from Disk may use. */
	filesDir: string;
	/** The server, once `start` started it. */
	server?: Service;
	/** `n8n start` in the user folder, the owner set up; its REST API as the owner. */
	start(timeoutMs: number): Promise<{ server: Service; rest: Rest }>;
	/** `n8n publish:workflow --id=<id>`. @throws Error when it fails */
	publish(workflowId: string, timeoutMs?: number): Promise<Done>;
}

/**
 * The user folder's n8n environment (createContext) with `env` added (the server's and the CLI's:
 * the CLI commands share the server's database, whose mode they must not contradict), and the
 * packed package installed into it.
 *
 * @param echo n8n's output (the CLI's and the server's) is copied to stderr after this prefix
 */
export async function prepareN8n(
	info: LineInfo,
	userFolder: string,
	tarball: string,
	o: { echo?: string; env?: Record<string, string> } = {},
): Promise<PackagedN8n> {
	const ctx = await createContext(info, userFolder, o.echo);
	Object.assign(ctx.env, o.env);
	await installPackageInto(userFolder, tarball);
	const n8n: PackagedN8n = {
		ctx,
		filesDir: path.join(userFolder, 'files'),
		async start(timeoutMs) {
			const server = (n8n.server = await startServer(ctx, timeoutMs, o.echo));
			return { server, rest: new Rest(ctx, await setupOwner(ctx.url, OWNER)) };
		},
		async publish(workflowId, timeoutMs) {
			const r = await ctx.cli(['publish:workflow', `--id=${workflowId}`], timeoutMs);
			if (r.code !== 0) throw commandError('n8n publish:workflow', r);
			return r;
		},
	};
	return n8n;
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

	/**
	 * Waits until n8n reports the workflow "published" (n8n 2.41 activates published workflows
	 * through an outbox consumed after start, so a published workflow is live some time after ready).
	 *
	 * @returns its publication status (`{ status, triggers }`)
	 * @throws WaitTimeout with the last status (or error) after `timeoutMs`
	 */
	async published(workflowId: string, timeoutMs: number): Promise<Json> {
		const route = `/rest/workflows/${workflowId}/publication-status`;
		let last = 'no answer';
		const check = async () => {
			const status = await this.call('GET', route).catch((err: Error) => {
				last = err.message;
				throw err;
			});
			last = JSON.stringify(status);
			return status.status === 'published' ? status : undefined;
		};
		const what = 'n8n to report the workflow "published"';
		return waitUntil(what, timeoutMs, check, 500, () => `last: ${last.slice(0, 300)}`);
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
