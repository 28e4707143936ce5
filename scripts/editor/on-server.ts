/**
 * The editor test against an n8n main instance that is ALREADY running: the standalone run
 * (scripts/editor/run.ts: its own `n8n start` with SQLite) and the queue-mode deployment of
 * scripts/e2e/run.ts (PostgreSQL, Redis, main + workers) both call {@link runEditorOnServer}.
 *
 * What it does on the running server: imports the fixture's two credentials (pointing at the
 * service emulator) and test/editor/workflow.json with the server's own n8n CLI (`import:credentials`,
 * `import:workflow`; ids `edEsApiCred01`, `edEsTokenCred01`, `edExtractionUi1`, which no other runner
 * of this repository uses), checks through the REST API, signed in as the owner, that the running
 * main serves them (no restart needed: n8n reads workflows and credentials from its database on
 * each request), then Debian's Chromium through playwright-core signs in as that owner and runs
 * the steps of scripts/editor/steps.ts. The browser is always closed before it returns.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import type { LoggedRequest } from '../../emulator';
import { editorStepNames, runEditorSteps, type StepResult } from './steps';
import {
	CHROMIUM_ARGS,
	CHROMIUM_PATH,
	chromium,
	ensureChromium,
	type Browser,
	type Page,
} from './playwright';

export type { StepResult } from './steps';

const ROOT = path.resolve(__dirname, '..', '..');
/** The fixture workflow: its id, and its nodes' credential ids and names, are what gets imported. */
export const EDITOR_WORKFLOW_FILE = path.join(ROOT, 'test', 'editor', 'workflow.json');
const VIEWPORT = { width: 1400, height: 900 };

/** A running n8n main instance the editor steps can use. */
export interface EditorServer {
	/** main's base URL, e.g. http://127.0.0.1:5678 (no trailing slash needed) */
	url: string;
	/** an owner account that ALREADY exists on that server (the caller did POST /rest/owner/setup) */
	owner: { email: string; password: string };
	/** runs the n8n CLI with that server's environment (same database, encryption key); resolves with exit code and output */
	cli(
		args: string[],
		timeoutMs?: number,
	): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }>;
	/**
	 * The service emulator the credentials point at. `requests`, when given, is the emulator's live
	 * request log (emulator/launch.ts's `EmulatorProcess.requests`, so an EmulatorProcess can be
	 * passed as it is); without it the credentials point at a small recording proxy in front of
	 * `url`, started and stopped here, whose log the steps check instead.
	 */
	emulator: { url: string; token: string; apiKey: string; requests?: LoggedRequest[] };
}

/** How {@link runEditorOnServer} runs. */
export interface EditorRunOptions {
	/** Where the documentation screenshots go (e.g. docs/images/); undefined: none are taken. */
	screenshotsDir?: string;
	/** Where a failing step's screenshot goes (`failed-N-<step>.png`). */
	failuresDir: string;
	/** Print the page's console errors as they happen. */
	verbose?: boolean;
	/**
	 * The whole call's limit, ms (imports, browser start, steps). When it passes, the browser is
	 * closed: the running step and the ones after it fail, with the reason in their message.
	 */
	timeoutMs: number;
	/** Progress lines; default console.log. */
	log?: (line: string) => void;
	/** Aborting it stops the run like the timeout does (the browser is closed). */
	signal?: AbortSignal;
	/** Filled with the phases' durations, ms: `import`, `check import`, `browser tools`, `browser start`, `browser steps`. */
	timings?: Record<string, number>;
}

/** The credentials of the fixture workflow, as n8n's `import:credentials` reads them. */
interface CredentialImport {
	id: string;
	name: string;
	type: string;
	data: Record<string, string>;
}

interface FixtureWorkflow {
	id: string;
	nodes: Array<{
		name: string;
		parameters?: { resource?: string };
		credentials?: Record<string, { id: string; name: string }>;
	}>;
}

const secs = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;
const tail = (text: string, lines = 30): string =>
	text.trimEnd().split('\n').slice(-lines).join('\n');

/**
 * The credentials the fixture's nodes reference (by id and name, as in the file), with data
 * pointing at `baseUrl`: the API key credential (`extractionServiceApi`) and the token credential
 * (`extractionServiceTokenApi`).
 *
 * @throws Error when a node references another credential type
 */
export function fixtureCredentials(
	workflow: FixtureWorkflow,
	baseUrl: string,
	secrets: { apiKey: string; token: string },
): CredentialImport[] {
	const byId = new Map<string, CredentialImport>();
	for (const node of workflow.nodes) {
		for (const [type, ref] of Object.entries(node.credentials ?? {})) {
			const data: Record<string, string> | undefined =
				type === 'extractionServiceApi'
					? { baseUrl, apiKey: secrets.apiKey }
					: type === 'extractionServiceTokenApi'
						? { baseUrl, token: secrets.token }
						: undefined;
			if (!data)
				throw new Error(
					`${EDITOR_WORKFLOW_FILE}: node "${node.name}" uses a ${type} credential, which the editor test cannot fill in`,
				);
			byId.set(ref.id, { id: ref.id, name: ref.name, type, data });
		}
	}
	return [...byId.values()];
}

/** The fixture's node doing `resource` (Extraction → Create or Extract → Create). */
function nodeOf(workflow: FixtureWorkflow, resource: string): FixtureWorkflow['nodes'][number] {
	const node = workflow.nodes.find((n) => n.parameters?.resource === resource);
	if (!node) throw new Error(`${EDITOR_WORKFLOW_FILE} has no node with resource "${resource}"`);
	return node;
}

// ---------------------------------------------------------------------------------------------
// a recording proxy, for callers without the emulator's request log

interface RecordingProxy {
	url: string;
	requests: LoggedRequest[];
	close(): Promise<void>;
}

/**
 * An HTTP proxy on a free loopback port that forwards every request to `target` (method, path,
 * headers with Host rewritten, body) and logs it the way the emulator does (method, path, query,
 * headers, status; status 0 when the emulator could not be reached, the client then gets 502).
 */
function startRecordingProxy(target: string): Promise<RecordingProxy> {
	const to = new URL(target);
	const requests: LoggedRequest[] = [];
	const server = http.createServer((req, res) => {
		const at = Date.now();
		const u = new URL(req.url ?? '/', 'http://proxy.invalid');
		const query: Record<string, string | string[]> = {};
		for (const key of new Set(u.searchParams.keys())) {
			const all = u.searchParams.getAll(key);
			query[key] = all.length === 1 ? all[0] : all;
		}
		const headers: Record<string, string> = {};
		for (const [k, v] of Object.entries(req.headers))
			if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
		let bodyBytes = 0;
		const record = (status: number): void =>
			void requests.push({
				origin: 'api',
				method: req.method ?? 'GET',
				path: u.pathname,
				query,
				headers,
				contentType: headers['content-type'],
				bodyBytes,
				status,
				at,
			});
		const upstream = http.request(
			{
				host: to.hostname,
				port: to.port || 80,
				method: req.method,
				path: req.url,
				headers: { ...req.headers, host: to.host },
			},
			(up) => {
				res.writeHead(up.statusCode ?? 502, up.headers);
				up.pipe(res);
				up.on('end', () => record(up.statusCode ?? 0));
			},
		);
		upstream.on('error', (err) => {
			record(0);
			if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
			res.end(`recording proxy: ${target} did not answer: ${err.message}`);
		});
		req.on('data', (chunk: Buffer) => (bodyBytes += chunk.length));
		req.pipe(upstream);
	});
	return new Promise((resolve, reject) => {
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address() as { port: number };
			resolve({
				url: `http://127.0.0.1:${port}`,
				requests,
				close: () =>
					new Promise<void>((done) => {
						server.closeAllConnections();
						server.close(() => done());
					}),
			});
		});
	});
}

// ---------------------------------------------------------------------------------------------
// import and check

/** Fails with `what` and the tail of the CLI's output unless it exited 0. */
function cliOk(
	what: string,
	r: { code: number | null; stdout: string; stderr: string; timedOut: boolean },
): void {
	if (r.code !== 0)
		throw new Error(
			`${what} ${r.timedOut ? 'timed out' : `failed (exit ${r.code})`}:\n${tail(`${r.stdout}\n${r.stderr}`)}`,
		);
}

/**
 * Signs in as the owner through the REST API (POST /rest/login) and checks that the running
 * server serves the imported workflow and credentials (GET /rest/workflows/:id, GET
 * /rest/credentials/:id, each 200).
 */
async function checkImported(
	server: EditorServer,
	workflowId: string,
	credentialIds: string[],
): Promise<string> {
	const base = server.url.replace(/\/+$/, '');
	const login = await fetch(`${base}/rest/login`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({
			emailOrLdapLoginId: server.owner.email,
			password: server.owner.password,
		}),
		signal: AbortSignal.timeout(30_000),
	});
	if (login.status !== 200)
		throw new Error(
			`POST /rest/login as ${server.owner.email} → ${login.status}: ${(await login.text()).slice(0, 300)} (is server.owner set up on ${base}?)`,
		);
	const cookie = login.headers
		.getSetCookie()
		.map((c) => c.split(';')[0])
		.join('; ');
	for (const item of [
		`workflows/${workflowId}`,
		...credentialIds.map((id) => `credentials/${id}`),
	]) {
		const res = await fetch(`${base}/rest/${item}`, {
			headers: { cookie },
			signal: AbortSignal.timeout(30_000),
		});
		if (res.status !== 200)
			throw new Error(
				`imported, but the running server does not serve it: GET /rest/${item} → ${res.status}: ${(await res.text()).slice(0, 300)}`,
			);
	}
	return cookie;
}

/**
 * The editor session holding the workflow's write lock (n8n 2.x collaboration: the first browser
 * session that opens a workflow may edit it, every other one opens it read-only; the lock lives in
 * main's cache — Redis in queue mode — for 2 minutes after its last heartbeat), or undefined.
 */
async function writeLockHolder(
	server: EditorServer,
	cookie: string,
	workflowId: string,
): Promise<string | undefined> {
	const res = await fetch(
		`${server.url.replace(/\/+$/, '')}/rest/workflows/${workflowId}/collaboration/write-lock`,
		{ headers: { cookie }, signal: AbortSignal.timeout(10_000) },
	);
	if (res.status !== 200)
		throw new Error(
			`GET /rest/workflows/${workflowId}/collaboration/write-lock → ${res.status}: ${(await res.text()).slice(0, 300)}`,
		);
	const lock = ((await res.json()) as { data?: { clientId?: string } | null }).data;
	return lock ? (lock.clientId ?? 'a session') : undefined;
}

/** Polls {@link writeLockHolder} every second until the lock is free or `timeoutMs` passes; whether it is free. */
async function waitForWriteLock(
	server: EditorServer,
	cookie: string,
	workflowId: string,
	timeoutMs: number,
): Promise<boolean> {
	const end = Date.now() + timeoutMs;
	for (;;) {
		if (!(await writeLockHolder(server, cookie, workflowId))) return true;
		if (Date.now() > end) return false;
		await new Promise((resolve) => setTimeout(resolve, 1000));
	}
}

/**
 * Imports the fixture's credentials (pointing at `baseUrl`) and workflow with `server.cli`, from
 * files in a throwaway folder (removed afterwards). Both imports upsert by id: running it again on
 * the same server updates them.
 */
async function importFixture(
	server: EditorServer,
	workflow: FixtureWorkflow,
	credentials: CredentialImport[],
	timeLeft: () => number,
): Promise<void> {
	const dir = mkdtempSync(path.join(os.tmpdir(), 'n8n-es-editor-import-'));
	try {
		const credsFile = path.join(dir, 'credentials.json');
		writeFileSync(credsFile, JSON.stringify(credentials, null, 2));
		cliOk(
			'n8n import:credentials',
			await server.cli(['import:credentials', `--input=${credsFile}`], timeLeft()),
		);
		const wfFile = path.join(dir, 'workflow.json');
		writeFileSync(wfFile, JSON.stringify(workflow, null, 2));
		cliOk(
			'n8n import:workflow',
			await server.cli(['import:workflow', `--input=${wfFile}`], timeLeft()),
		);
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

/**
 * Leaves the workflow the way a user does (the editor navigates to the workflow list), so that the
 * editor gives up its write lock, and checks that it did (up to 10 s). A lock left behind only
 * delays the next run on this server (it waits for the lock), so this logs instead of failing.
 */
async function leaveWorkflow(
	page: Page,
	server: EditorServer,
	cookie: string,
	workflowId: string,
	log: (line: string) => void,
): Promise<void> {
	try {
		const t0 = Date.now();
		await page.goto('/home/workflows', { waitUntil: 'domcontentloaded', timeout: 30_000 });
		const free = await waitForWriteLock(server, cookie, workflowId, 10_000);
		log(
			free
				? `Left the workflow: write lock released (${secs(Date.now() - t0)})`
				: `Left the workflow, but its write lock is still held (n8n drops it within 2 min)`,
		);
	} catch (err) {
		log(`warning: leaving the workflow: ${(err as Error).message.split('\n')[0]}`);
	}
}

// ---------------------------------------------------------------------------------------------

/**
 * Runs the editor test (scripts/editor/steps.ts) against a running n8n main instance.
 *
 * Imports test/editor/workflow.json and its two credentials with `server.cli`
 * (`import:credentials`, then `import:workflow`; ids `edEsApiCred01`, `edEsTokenCred01`,
 * `edExtractionUi1`; the credentials' Base URL is `server.emulator.url`, or the recording proxy's
 * when `server.emulator.requests` is not given), checks over REST as `server.owner` that the server
 * serves them, makes sure of Chromium (ensureChromium: apt-get when missing) and playwright-core,
 * launches the browser (headless, 1400×900, `server.url` as base URL), and runs the steps: sign in
 * as `server.owner`, open the Extraction → Create panel, the Schema list, pick a schema, the
 * credential's Test, the Extract → Create panel. The imported workflow and credentials stay on the
 * server.
 *
 * Never throws for a failing run: a setup failure (an import, the REST check, the browser) makes
 * every step fail as "not run: setup failed: …"; a timeout or an abort closes the browser and the
 * steps still running or not yet run fail with the reason.
 *
 * @returns one result per step of scripts/editor/steps.ts, in order (`ms` per step)
 */
export async function runEditorOnServer(
	server: EditorServer,
	opts: EditorRunOptions,
): Promise<StepResult[]> {
	const log = opts.log ?? ((line: string): void => console.log(line));
	const timings = opts.timings ?? {};
	const deadline = Date.now() + opts.timeoutMs;
	const timeLeft = (): number => Math.max(1000, deadline - Date.now());

	const stop = new AbortController();
	let browser: Browser | undefined;
	stop.signal.addEventListener('abort', () => void browser?.close().catch(() => undefined), {
		once: true,
	});
	const timer = setTimeout(
		() => stop.abort(new Error(`the editor run took longer than ${secs(opts.timeoutMs)}`)),
		opts.timeoutMs,
	);
	const onAbort = (): void =>
		stop.abort(
			new Error(
				`aborted${opts.signal?.reason ? `: ${String((opts.signal.reason as Error).message ?? opts.signal.reason)}` : ''}`,
			),
		);
	if (opts.signal?.aborted) onAbort();
	opts.signal?.addEventListener('abort', onAbort, { once: true });
	const stopped = (): string | undefined =>
		stop.signal.aborted ? (stop.signal.reason as Error).message : undefined;
	const checkStopped = (): void => {
		const why = stopped();
		if (why) throw new Error(why);
	};
	const phase = async <T>(name: string, fn: () => Promise<T> | T): Promise<T> => {
		checkStopped();
		const t0 = Date.now();
		const value = await fn();
		timings[name] = Date.now() - t0;
		checkStopped();
		return value;
	};

	let proxy: RecordingProxy | undefined;
	try {
		const workflow = JSON.parse(readFileSync(EDITOR_WORKFLOW_FILE, 'utf8')) as FixtureWorkflow;
		const extraction = nodeOf(workflow, 'extraction');
		const extract = nodeOf(workflow, 'extract');
		const tokenCredentialName = extraction.credentials?.extractionServiceTokenApi?.name;
		if (!tokenCredentialName)
			throw new Error(
				`${EDITOR_WORKFLOW_FILE}: node "${extraction.name}" has no extractionServiceTokenApi credential`,
			);

		let requests = server.emulator.requests;
		let baseUrl = server.emulator.url.replace(/\/+$/, '');
		if (!requests) {
			proxy = await startRecordingProxy(baseUrl);
			requests = proxy.requests;
			log(`Emulator: ${baseUrl}, through a recording proxy on ${proxy.url} (no request log given)`);
			baseUrl = proxy.url;
		}
		const credentials = fixtureCredentials(workflow, baseUrl, server.emulator);
		await phase('import', () => importFixture(server, workflow, credentials, timeLeft));
		log(
			`Imported ${credentials.map((c) => c.id).join(', ')} and workflow ${workflow.id} into ${server.url} (${secs(timings.import)})`,
		);
		const cookie = await phase('check import', () =>
			checkImported(
				server,
				workflow.id,
				credentials.map((c) => c.id),
			),
		);
		log(`The running server serves them (${secs(timings['check import'])})`);
		// an earlier run's browser (closed without leaving the workflow) may still hold the write lock:
		// this session would then get the workflow read-only, without its credentials
		const holder = await writeLockHolder(server, cookie, workflow.id);
		if (holder) {
			log(
				`Workflow ${workflow.id} is still write-locked by an earlier editor session (${holder}; n8n keeps the lock up to 2 min): waiting`,
			);
			const free = await phase('wait for the write lock', () =>
				waitForWriteLock(server, cookie, workflow.id, Math.min(150_000, timeLeft() - 60_000)),
			);
			if (!free)
				throw new Error(
					`workflow ${workflow.id} stayed write-locked by another editor session (${holder}): the editor would open it read-only`,
				);
			log(`Write lock free after ${secs(timings['wait for the write lock'])}`);
		}

		await phase('browser tools', () => log(`Chromium: ${ensureChromium(log)} (${CHROMIUM_PATH})`));

		const page = await phase('browser start', async () => {
			// signals are the caller's business (opts.signal); playwright's own handlers would close the
			// browser and exit at once
			browser = await chromium.launch({
				executablePath: CHROMIUM_PATH,
				headless: true,
				args: CHROMIUM_ARGS,
				timeout: Math.min(60_000, timeLeft()),
				handleSIGINT: false,
				handleSIGTERM: false,
				handleSIGHUP: false,
			});
			if (stop.signal.aborted) await browser.close();
			checkStopped();
			const context = await browser.newContext({
				viewport: VIEWPORT,
				baseURL: server.url,
				locale: 'en-US',
			});
			const p = await context.newPage();
			p.setDefaultTimeout(15_000);
			p.setDefaultNavigationTimeout(60_000);
			return p;
		});
		const pageErrors: string[] = [];
		page.on('pageerror', (err) => pageErrors.push(err.message));
		if (opts.verbose)
			page.on('console', (m) => m.type() === 'error' && log(`[browser console] ${m.text()}`));
		log(
			`Browser: Chromium ${browser!.version()}, ${VIEWPORT.width}×${VIEWPORT.height}, on ${server.url}`,
		);

		const t0 = Date.now();
		const running = runEditorSteps({
			page,
			owner: server.owner,
			workflowId: workflow.id,
			nodes: { extractionCreate: extraction.name, extractCreate: extract.name },
			tokenCredentialName,
			emulatorRequests: requests,
			screenshotsDir: opts.screenshotsDir,
			failuresDir: opts.failuresDir,
			log,
		});
		// after a timeout or an abort the browser is closed and the steps fail fast; should one hang
		// anyway, give up on it 20 s later
		const givenUp = new Promise<undefined>((resolve) => {
			const giveUp = (): void => void setTimeout(() => resolve(undefined), 20_000).unref();
			if (stop.signal.aborted) giveUp();
			else stop.signal.addEventListener('abort', giveUp, { once: true });
		});
		const results = await Promise.race([running, givenUp]);
		timings['browser steps'] = Date.now() - t0;
		const why = stopped();
		if (!why) await leaveWorkflow(page, server, cookie, workflow.id, log);
		if (!results)
			return editorStepNames().map((name) => ({
				name,
				ok: false,
				ms: 0,
				message: `${why}; the steps did not end after the browser was closed`,
			}));
		if (why) for (const r of results) if (!r.ok) r.message = `${why}: ${r.message ?? ''}`;
		if (results.some((r) => !r.ok) && pageErrors.length)
			log(`Errors in the page:\n  ${pageErrors.slice(-5).join('\n  ')}`);
		return results;
	} catch (err) {
		return setupFailed(err, log);
	} finally {
		clearTimeout(timer);
		opts.signal?.removeEventListener('abort', onAbort);
		await Promise.race([
			browser?.close().catch(() => undefined),
			new Promise((resolve) => setTimeout(resolve, 15_000).unref()),
		]);
		await proxy?.close();
	}
}

/** Every step failed as not run, when the setup failed with `err` (logged). */
export function setupFailed(err: unknown, log: (line: string) => void): StepResult[] {
	const why = (err as Error).message;
	log(`Setup FAILED: ${why}`);
	return editorStepNames().map((name) => ({
		name,
		ok: false,
		ms: 0,
		message: `not run: setup failed: ${why.split('\n')[0]}`,
	}));
}
