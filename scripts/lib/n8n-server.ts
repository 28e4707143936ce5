/**
 * An n8n server with this package: `n8n start` with the package installed as a community package,
 * in a throwaway user folder on free loopback ports, the fixtures imported with its CLI, the owner
 * signed in and n8n's REST API reached as the editor reaches it. The one way the tooling starts
 * one: test:n8n's trigger and Data table runs ({@link runInServer}), the editor test
 * (scripts/editor/run.ts), the agent and MCP runs (scripts/e2e/n8n-with-package.ts); the e2e
 * runner's queue-mode main uses its CLI and REST helpers.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

import { startEmulator, type Emulator } from '../../emulator';
import type { ExampleSource } from '../n8n/examples';
import { N8nRun, type Json } from '../n8n/n8n-run';
import {
	API_CREDENTIAL,
	installPackageInto,
	n8nCli,
	n8nEnv,
	n8nImport,
	TOKEN_CREDENTIAL,
	type LineInfo,
} from './n8n';
import { freePort } from './ports';
import {
	commandError,
	removeAtExit,
	secs,
	sleep,
	startService,
	tail,
	waitUntil,
	type Done,
	type Service,
} from './processes';

/** The owner account the test sets up and signs in with. */
export const OWNER = {
	email: 'owner@example.com',
	firstName: 'Editor',
	lastName: 'Test',
	password: 'EditorTest-2024',
};

/** The n8n server and its CLI in one throwaway user folder. */
export interface N8nContext {
	info: LineInfo;
	userFolder: string;
	port: number;
	/** http://127.0.0.1:PORT */
	url: string;
	env: NodeJS.ProcessEnv;
	/** Runs `n8n <args>` to its end (CLI commands). */
	cli(args: string[], timeoutMs?: number): Promise<Done>;
}

/**
 * The two credentials (pointing at the emulator; plain data, n8n encrypts it) and the workflow (or
 * an array of them, or none) imported with the CLI; the first command also creates the database.
 *
 * @returns how long each import took
 * @throws Error when an import fails
 */
export async function importFixtures(
	ctx: N8nContext,
	emulator: Pick<Emulator, 'url' | 'apiKey' | 'token'>,
	workflow?: object,
): Promise<{ credentialsMs: number; workflowMs: number }> {
	const c = await n8nImport(ctx.cli, 'credentials', path.join(ctx.userFolder, 'credentials.json'), [
		{ ...API_CREDENTIAL, data: { baseUrl: emulator.url, apiKey: emulator.apiKey } },
		{ ...TOKEN_CREDENTIAL, data: { baseUrl: emulator.url, token: emulator.token } },
	]);
	if (workflow === undefined) return { credentialsMs: c.ms, workflowMs: 0 };
	const w = await n8nImport(ctx.cli, 'workflow', path.join(ctx.userFolder, 'w.json'), workflow);
	return { credentialsMs: c.ms, workflowMs: w.ms };
}

/**
 * One call to an n8n server at `url` (its REST API, its health checks), JSON in and out, with the
 * session `cookie` when given.
 *
 * @returns the answer's text, its JSON (undefined when the text is not JSON) and the cookies it set
 *   as a Cookie header (n8n's session: `n8n-auth=…`)
 * @throws Error `METHOD route → status: text` unless 200, or when nothing answers within `timeoutMs`
 */
export async function n8nCall(
	url: string,
	method: 'GET' | 'POST',
	route: string,
	o: { cookie?: string; body?: unknown; timeoutMs?: number } = {},
): Promise<{ text: string; json: unknown; cookie: string }> {
	const res = await fetch(`${url.replace(/\/+$/, '')}${route}`, {
		method,
		headers: {
			...(o.cookie === undefined ? {} : { cookie: o.cookie }),
			...(o.body === undefined ? {} : { 'content-type': 'application/json' }),
		},
		body: o.body === undefined ? undefined : JSON.stringify(o.body),
		signal: AbortSignal.timeout(o.timeoutMs ?? 30_000),
	});
	const text = await res.text();
	if (res.status !== 200)
		throw new Error(`${method} ${route} → ${res.status}: ${text.slice(0, 400)}`);
	let json: unknown;
	try {
		json = JSON.parse(text);
	} catch {
		/* not JSON: json stays undefined */
	}
	const cookie = res.headers
		.getSetCookie()
		.map((c) => c.split(';')[0])
		.join('; ');
	return { text, json, cookie };
}

/**
 * Sets up the owner account: POST /rest/owner/setup with email, firstName, lastName and password
 * (n8n's OwnerController, OwnerSetupRequestDto; the password needs 8+ characters, a digit and an
 * upper-case letter).
 *
 * @returns the session cookie n8n set (`n8n-auth=…`), for REST calls as the owner
 * @throws Error when n8n refuses, or answers without the owner's JSON (n8n still starting up
 *   answers 200 "n8n is starting up. Please wait" and sets up nothing)
 */
export async function setupOwner(url: string, owner: typeof OWNER): Promise<string> {
	const { cookie, text, json } = await n8nCall(url, 'POST', '/rest/owner/setup', { body: owner });
	if ((json as { data?: { email?: unknown } } | undefined)?.data?.email !== owner.email)
		throw new Error(
			`POST /rest/owner/setup → 200 without the owner (is n8n still starting up?): ${text.slice(0, 300)}`,
		);
	return cookie;
}

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
 * n8n's environment (lib/n8n.ts's n8nEnv) for a server on loopback, cookies over plain http,
 * community packages on, with `env` added (the server's and the CLI's: the CLI commands share the
 * server's database, whose mode they must not contradict); the packed package installed into
 * `userFolder`.
 *
 * @param echo n8n's output (the CLI's and the server's) is copied to stderr after this prefix
 */
export async function prepareN8n(
	info: LineInfo,
	userFolder: string,
	tarball: string,
	o: { echo?: string; env?: Record<string, string> } = {},
): Promise<PackagedN8n> {
	const filesDir = path.join(userFolder, 'files');
	mkdirSync(filesDir, { recursive: true });
	const env = n8nEnv({
		line: info,
		userFolder,
		filesDir,
		brokerPort: 0, // takePorts
		extra: {
			N8N_LISTEN_ADDRESS: '127.0.0.1',
			N8N_HOST: '127.0.0.1',
			N8N_PROTOCOL: 'http',
			// the session cookie over plain http
			N8N_SECURE_COOKIE: 'false',
			N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
			...o.env,
		},
	});
	const cli = n8nCli(info, userFolder, env, o.echo);
	const ctx: N8nContext = { info, userFolder, port: 0, url: '', env, cli };
	await takePorts(ctx);
	await installPackageInto(userFolder, tarball);
	const n8n: PackagedN8n = {
		ctx,
		filesDir,
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

/** Free loopback ports for the server and its task broker (the CLI's too), in `ctx` and its env. */
async function takePorts(ctx: N8nContext): Promise<void> {
	ctx.port = await freePort();
	ctx.url = `http://127.0.0.1:${ctx.port}`;
	Object.assign(ctx.env, {
		N8N_PORT: String(ctx.port),
		N8N_EDITOR_BASE_URL: ctx.url,
		N8N_RUNNERS_BROKER_PORT: String(await freePort()),
	});
}

/**
 * `n8n start` on fresh free ports (taken right before the start: ports picked when the context was
 * made may have gone to another process during the CLI imports, and a server answering there is not
 * this n8n), then waits until this n8n says it listens on its port ("n8n ready on …, port N"), GET
 * /healthz/readiness answers 200 and the REST API is up (GET /rest/settings 200 with its JSON, which
 * the editor loads first). `ctx.port`, `ctx.url` and `ctx.env` are updated.
 *
 * Not /healthz alone, nor a 200 from /rest/settings alone: n8n 2.41 listens before its database is
 * migrated and answers every path with 200 "n8n is starting up. Please wait" meanwhile, then with
 * Express's 404 until its controllers are registered; only then is /healthz/readiness 200. A POST
 * /rest/owner/setup in the first phase gets 200 and sets up nothing.
 *
 * @throws Error with n8n's output when it exits first or is not ready within `timeoutMs`
 */
async function startServer(ctx: N8nContext, timeoutMs: number, echo?: string): Promise<Service> {
	const t0 = Date.now();
	await takePorts(ctx);
	const server = startService('n8n', ctx.info.nodeBin, [ctx.info.n8nBin, 'start'], {
		cwd: ctx.userFolder,
		env: ctx.env,
		echo,
	});
	const listening = new RegExp(`n8n ready on \\S+, port ${ctx.port}\\b`);
	let healthy = false;
	// remembered: the line comes before the migrations, whose output may push it out of the kept tail
	let sawListening = false;
	server.onLine((line) => void (sawListening ||= listening.test(line)));
	/** Whether GET `route` answers 200 (within 3 s) with JSON that passes `test`. */
	const answers = (route: string, test: (json: unknown) => boolean = () => true) =>
		n8nCall(ctx.url, 'GET', route, { timeoutMs: 3000 }).then(
			({ json }) => test(json),
			() => false,
		);
	const hasSettings = (j: unknown): boolean => typeof (j as { data?: unknown })?.data === 'object';
	while (Date.now() - t0 < timeoutMs) {
		if (server.exited())
			throw new Error(
				`n8n start exited (code ${server.child.exitCode ?? server.child.signalCode}) before it was ready:\n${tail(server.output(), 40)}`,
			);
		if (!healthy) healthy = sawListening && (await answers('/healthz/readiness'));
		if (healthy && (await answers('/rest/settings', hasSettings))) return server;
		await sleep(500);
	}
	await server.stop(3000);
	throw new Error(
		`n8n was not ready within ${secs(timeoutMs)} (${!sawListening ? `no "n8n ready on …, port ${ctx.port}" in its output` : `/healthz/readiness ${healthy ? 'ok' : 'never 200'}`}):\n${tail(server.output(), 40)}`,
	);
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
				return !['new', 'running', 'waiting', 'unknown'].includes(last.status);
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

/** What {@link runInServer} gives its body: n8n with the package (started by the body), and more. */
export interface ServerRun extends PackagedN8n {
	emu: Emulator;
	log(message: string): void;
	/** The result so far: the body sets its `line`, and `message` for a failure it does not throw. */
	result: ServerRunResult;
}

/**
 * One run of test:n8n in its own `n8n start` (the examples `n8n execute` cannot show:
 * trigger-run.ts, data-table-run.ts): an emulator in this process and a user folder with the
 * package, then `body`, which starts the server when it needs it; both are stopped at the end. An
 * error the body throws is the result's message (with n8n's last output when `verbose`).
 *
 * @param o.tag prefixes its log lines and names the user folder; `env`: the server's and the CLI's
 *   settings beyond n8nEnv's
 */
export async function runInServer(
	o: ServerRunOptions & {
		tag: string;
		processingMs: number;
		env?: Record<string, string>;
	},
	body: (run: ServerRun) => Promise<void>,
): Promise<ServerRunResult> {
	const t0 = Date.now();
	const result: ServerRunResult = { ok: false, ms: 0, timings: {} };
	const log = (m: string): void => console.log(`[${o.tag}] ${m}`);
	const echo = o.verbose ? `[${o.tag}] n8n| ` : undefined;
	const userFolder = mkdtempSync(path.join(os.tmpdir(), `n8n-es-${o.tag.replace(' ', '-')}-`));
	removeAtExit(userFolder, o.keep);
	let emu: Emulator | undefined;
	let n8n: PackagedN8n | undefined;
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
		n8n = await prepareN8n(o.info, userFolder, o.tarball, { echo, env: o.env });
		result.timings.folder = Date.now() - t0;
		await body(Object.assign(n8n, { emu, log, result }));
		result.ok = result.message === undefined;
	} catch (err) {
		result.message = (err as Error).message;
		if (n8n?.server && o.verbose)
			result.message += `\n  n8n output:\n${tail(n8n.server.output(), 20)}`;
	} finally {
		const t = Date.now();
		await n8n?.server?.stop(10_000);
		await emu?.close();
		result.timings.stop = Date.now() - t;
		result.ms = Date.now() - t0;
		if (o.keep) log(`kept user folder ${userFolder}`);
	}
	return result;
}
