/**
 * The editor test against an n8n main instance that is ALREADY running: the standalone run
 * (scripts/editor/run.ts, `n8n start` with SQLite) and the queue-mode deployment of
 * scripts/e2e/run.ts both call {@link runEditorOnServer}. It imports test/editor/workflow.json and
 * its two credentials with the server's own CLI (ids `edEsApiCred01`, `edEsTokenCred01`,
 * `edExtractionUi1`, used by no other runner), checks over REST as the owner that main serves them
 * (n8n reads them from its database per request: no restart), then runs the steps of
 * scripts/editor/steps.ts in Chromium. The browser is always closed before it returns.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { LoggedRequest } from '../../emulator';
import { n8nImport } from '../lib/n8n';
import { n8nCall } from '../lib/n8n-server';
import { ROOT, secs, waitUntil, WaitTimeout, type Done } from '../lib/processes';
import { CHROMIUM_ARGS, CHROMIUM_PATH, chromium, ensureChromium, type Browser } from './playwright';
import { editorStepNames, runEditorSteps, type StepResult } from './steps';

/** The fixture workflow: its id, and its nodes' credential ids and names, are what gets imported. */
const EDITOR_WORKFLOW_FILE = path.join(ROOT, 'test', 'editor', 'workflow.json');
const VIEWPORT = { width: 1400, height: 900 };

/** A running n8n main instance the editor steps can use. */
export interface EditorServer {
	/** main's base URL, e.g. http://127.0.0.1:5678 */
	url: string;
	/** an owner account that ALREADY exists on that server (the caller did POST /rest/owner/setup) */
	owner: { email: string; password: string };
	/** runs the n8n CLI with that server's environment (same database, encryption key) */
	cli(args: string[], timeoutMs?: number): Promise<Done>;
	/** The emulator the credentials point at, and its live request log (an EmulatorProcess as it is). */
	emulator: { url: string; token: string; apiKey: string; requests: LoggedRequest[] };
}

/** How {@link runEditorOnServer} runs. */
export interface EditorRunOptions {
	/** Where the documentation screenshots go (e.g. docs/images/); undefined: none are taken. */
	screenshotsDir?: string;
	/** Where a failing step's screenshot goes (`failed-N-<step>.png`). */
	failuresDir: string;
	/** Print the page's console errors as they happen. */
	verbose?: boolean;
	/** The whole call's limit, ms: then the browser is closed and the steps left fail with the reason. */
	timeoutMs: number;
	/** Progress lines; default console.log. */
	log?: (line: string) => void;
	/** Aborting it stops the run like the timeout does. */
	signal?: AbortSignal;
	/** Filled with the phases' durations, ms (`import`, `check import`, `browser start`, …). */
	timings?: Record<string, number>;
}

interface FixtureWorkflow {
	id: string;
	nodes: Array<{
		name: string;
		parameters?: { resource?: string };
		credentials?: Record<string, { id: string; name: string }>;
	}>;
}

/**
 * The credentials the fixture's nodes reference (by id and name, as in the file), with data
 * pointing at the emulator.
 *
 * @throws Error when a node references a credential type other than the node's two
 */
function fixtureCredentials(workflow: FixtureWorkflow, emulator: EditorServer['emulator']) {
	const baseUrl = emulator.url.replace(/\/+$/, '');
	const data: Record<string, Record<string, string>> = {
		extractionServiceApi: { baseUrl, apiKey: emulator.apiKey },
		extractionServiceTokenApi: { baseUrl, token: emulator.token },
	};
	const byId = workflow.nodes.flatMap((node) =>
		Object.entries(node.credentials ?? {}).map(([type, { id, name }]) => {
			if (!data[type])
				throw new Error(
					`${EDITOR_WORKFLOW_FILE}: node "${node.name}" uses a ${type} credential, which the editor test cannot fill in`,
				);
			return [id, { id, name, type, data: data[type] }] as const;
		}),
	);
	return [...new Map(byId).values()];
}

/** The fixture's node doing `resource` (Extraction → Create or Extract → Create). */
function nodeOf(workflow: FixtureWorkflow, resource: string): FixtureWorkflow['nodes'][number] {
	const node = workflow.nodes.find((n) => n.parameters?.resource === resource);
	if (!node) throw new Error(`${EDITOR_WORKFLOW_FILE} has no node with resource "${resource}"`);
	return node;
}

/** Signs in as the owner (POST /rest/login); the session cookie. */
async function signIn(server: EditorServer): Promise<string> {
	const { email, password } = server.owner;
	const body = { emailOrLdapLoginId: email, password };
	const answer = await n8nCall(server.url, 'POST', '/rest/login', { body }).catch((err: Error) => {
		throw new Error(
			`${err.message} (signing in as ${email}: is server.owner set up on ${server.url}?)`,
		);
	});
	return answer.cookie;
}

/**
 * The workflow's write lock (n8n 2.x collaboration: the first session that opens a workflow may
 * edit it, any other one gets it read-only; the lock lives in main's cache, Redis in queue mode,
 * for 2 minutes after its last heartbeat): `holder()` is the editor session holding it, or
 * undefined; `freed(ms)` waits (polling every second) until nobody holds it, whether it got free.
 */
function writeLock(server: EditorServer, cookie: string, workflowId: string) {
	const route = `/rest/workflows/${workflowId}/collaboration/write-lock`;
	const holder = async (): Promise<string | undefined> => {
		const { json } = await n8nCall(server.url, 'GET', route, { cookie });
		const lock = (json as { data?: { clientId?: string } | null }).data;
		return lock ? (lock.clientId ?? 'a session') : undefined;
	};
	const free = async () => !(await holder());
	const freed = (timeoutMs: number): Promise<boolean> =>
		waitUntil('the write lock', timeoutMs, free, 1000).catch((err: unknown) => {
			if (err instanceof WaitTimeout) return false;
			throw err;
		});
	return { holder, freed };
}

/**
 * Runs the editor test (scripts/editor/steps.ts) against a running n8n main instance: imports the
 * fixture and its credentials (Base URL `server.emulator.url`) with `server.cli` (both imports
 * upsert by id), checks over REST as `server.owner` that the server serves them, waits for a
 * write lock an earlier run left, makes sure of Chromium, launches it (headless, 1400×900) and
 * runs the steps. The imported workflow and credentials stay on the server.
 *
 * Never throws for a failing run: a setup failure makes every step fail as "not run: setup
 * failed: …"; a timeout or an abort closes the browser and the steps left fail with the reason.
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

	// A listener of its own keeps the timeout signal: Node 20 collects one that only an
	// AbortSignal.any holds, and it never fires (nodejs/node#57736; nodes/shared/transport/attempt.ts).
	const overall = AbortSignal.timeout(opts.timeoutMs);
	overall.addEventListener('abort', () => undefined, { once: true });
	const stop = AbortSignal.any([overall, opts.signal ?? []].flat());
	let browser: Browser | undefined;
	stop.addEventListener('abort', () => void browser?.close().catch(() => undefined));
	const stopped = (): string | undefined => {
		if (!stop.aborted) return undefined;
		const reason = stop.reason as Error | string;
		if (reason instanceof Error && reason.name === 'TimeoutError')
			return `the editor run took longer than ${secs(opts.timeoutMs)}`;
		return `aborted: ${reason instanceof Error ? reason.message : reason}`;
	};
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

	try {
		const workflow = JSON.parse(readFileSync(EDITOR_WORKFLOW_FILE, 'utf8')) as FixtureWorkflow;
		const extraction = nodeOf(workflow, 'extraction');
		const extract = nodeOf(workflow, 'extract');
		const tokenCredentialName = extraction.credentials?.extractionServiceTokenApi?.name;
		if (!tokenCredentialName)
			throw new Error(
				`${EDITOR_WORKFLOW_FILE}: node "${extraction.name}" has no extractionServiceTokenApi credential`,
			);
		const credentials = fixtureCredentials(workflow, server.emulator);
		await phase('import', async () => {
			const dir = mkdtempSync(path.join(os.tmpdir(), 'n8n-es-editor-import-'));
			try {
				const cli = server.cli.bind(server);
				await n8nImport(cli, 'credentials', path.join(dir, 'c.json'), credentials, timeLeft());
				await n8nImport(cli, 'workflow', path.join(dir, 'w.json'), workflow, timeLeft());
			} finally {
				rmSync(dir, { recursive: true, force: true });
			}
		});
		log(
			`Imported ${credentials.map((c) => c.id).join(', ')} and workflow ${workflow.id} into ${server.url} (${secs(timings.import)})`,
		);
		const cookie = await phase('check import', async () => {
			const c = await signIn(server);
			const routes = [
				`/rest/workflows/${workflow.id}`,
				...credentials.map((x) => `/rest/credentials/${x.id}`),
			];
			for (const route of routes)
				await n8nCall(server.url, 'GET', route, { cookie: c }).catch((err: Error) => {
					throw new Error(`imported, but the running server does not serve it: ${err.message}`);
				});
			return c;
		});
		log(`The running server serves them (${secs(timings['check import'])})`);
		// an earlier run's browser (closed without leaving the workflow) may still hold the write lock:
		// this session would then get the workflow read-only, without its credentials
		const lock = writeLock(server, cookie, workflow.id);
		const holder = await lock.holder();
		if (holder) {
			log(
				`Workflow ${workflow.id} is still write-locked by an earlier editor session (${holder}; n8n keeps the lock up to 2 min): waiting`,
			);
			const free = await phase('wait for the write lock', () =>
				lock.freed(Math.min(150_000, timeLeft() - 60_000)),
			);
			if (!free)
				throw new Error(
					`workflow ${workflow.id} stayed write-locked by another editor session (${holder}): the editor would open it read-only`,
				);
			log(`Write lock free after ${secs(timings['wait for the write lock'])}`);
		}

		await phase('browser tools', () => log(`Chromium: ${ensureChromium(log)} (${CHROMIUM_PATH})`));
		const page = await phase('browser start', async () => {
			// signals are the caller's (opts.signal): playwright's own handlers would close and exit
			browser = await chromium.launch({
				executablePath: CHROMIUM_PATH,
				headless: true,
				args: CHROMIUM_ARGS,
				timeout: Math.min(60_000, timeLeft()),
				handleSIGINT: false,
				handleSIGTERM: false,
				handleSIGHUP: false,
			});
			if (stop.aborted) await browser.close();
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
			emulatorRequests: server.emulator.requests,
			screenshotsDir: opts.screenshotsDir,
			failuresDir: opts.failuresDir,
			log,
		});
		// after a timeout or an abort the browser is closed and the steps fail fast; should one hang
		// anyway, give up on it 20 s later
		const givenUp = new Promise<undefined>((resolve) => {
			const giveUp = (): void => void setTimeout(() => resolve(undefined), 20_000).unref();
			if (stop.aborted) giveUp();
			else stop.addEventListener('abort', giveUp, { once: true });
		});
		const results = await Promise.race([running, givenUp]);
		timings['browser steps'] = Date.now() - t0;
		const why = stopped();
		if (!why) {
			// leave the workflow as a user does, so that the editor gives up its write lock (one left
			// behind only delays the next run on this server)
			try {
				const t1 = Date.now();
				await page.goto('/home/workflows', { waitUntil: 'domcontentloaded', timeout: 30_000 });
				const free = await lock.freed(10_000);
				log(
					free
						? `Left the workflow: write lock released (${secs(Date.now() - t1)})`
						: `Left the workflow, but its write lock is still held (n8n drops it within 2 min)`,
				);
			} catch (err) {
				log(`warning: leaving the workflow: ${(err as Error).message.split('\n')[0]}`);
			}
		}
		if (!results) return notRun(`${why}; the steps did not end after the browser was closed`);
		if (why) for (const r of results) if (!r.ok) r.message = `${why}: ${r.message ?? ''}`;
		if (results.some((r) => !r.ok) && pageErrors.length)
			log(`Errors in the page:\n  ${pageErrors.slice(-5).join('\n  ')}`);
		return results;
	} catch (err) {
		return setupFailed(err, log);
	} finally {
		await Promise.race([
			browser?.close().catch(() => undefined),
			new Promise((resolve) => setTimeout(resolve, 15_000).unref()),
		]);
	}
}

function notRun(message: string): StepResult[] {
	return editorStepNames().map((name) => ({ name, ok: false, ms: 0, message }));
}

/** Every step failed as not run, when the setup failed with `err` (logged). */
export function setupFailed(err: unknown, log: (line: string) => void): StepResult[] {
	const why = (err as Error).message;
	log(`Setup FAILED: ${why}`);
	return notRun(`not run: setup failed: ${why.split('\n')[0]}`);
}
