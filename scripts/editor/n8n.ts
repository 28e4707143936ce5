/**
 * A real n8n server for the editor test: the installed line (scripts/n8n/install.sh), a throwaway
 * N8N_USER_FOLDER with this package installed as n8n's community package installer lays it out,
 * the credentials and workflow imported with the n8n CLI, `n8n start` on a free loopback port, and
 * the owner account set up through the REST API.
 *
 * The line, the package and n8n's environment come from scripts/lib/n8n.ts, as for every runner.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';

import type { EmulatorProcess } from '../../emulator/launch';
import {
	API_CREDENTIAL,
	n8nCli,
	n8nEnv,
	n8nImport,
	TOKEN_CREDENTIAL,
	type LineInfo,
} from '../lib/n8n';
import { freePort } from '../lib/ports';
import { secs, sleep, startService, tail, type Done, type Service } from '../lib/processes';

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
 * n8n's environment: the user folder, a free loopback port for the editor and one for the task
 * broker, no telemetry or outside calls, cookies over plain http, plus what the line needs (its
 * N8N_LINE env).
 */
export async function createContext(
	info: LineInfo,
	userFolder: string,
	verbose?: string,
): Promise<N8nContext> {
	const port = await freePort();
	const brokerPort = await freePort();
	const filesDir = path.join(userFolder, 'files');
	mkdirSync(filesDir, { recursive: true });
	const env = n8nEnv({
		line: info,
		userFolder,
		filesDir,
		brokerPort,
		extra: {
			N8N_PORT: String(port),
			N8N_LISTEN_ADDRESS: '127.0.0.1',
			N8N_HOST: '127.0.0.1',
			N8N_PROTOCOL: 'http',
			N8N_EDITOR_BASE_URL: `http://127.0.0.1:${port}`,
			// the session cookie over plain http
			N8N_SECURE_COOKIE: 'false',
			N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
		},
	});
	const cli = n8nCli(info, userFolder, env, verbose);
	return { info, userFolder, port, url: `http://127.0.0.1:${port}`, env, cli };
}

/**
 * The two credentials (pointing at the emulator; plain data, n8n encrypts it) and the workflow (or
 * an array of workflows), imported with `n8n import:credentials` and `n8n import:workflow` before the
 * server starts. The first command also creates the database. The emulator may be a child process
 * (emulator/launch.ts) or in-process (emulator/index.ts): only its URL and secrets are used.
 *
 * @returns how long each import took
 * @throws Error when an import fails
 */
export async function importFixtures(
	ctx: N8nContext,
	emulator: Pick<EmulatorProcess, 'url' | 'apiKey' | 'token'>,
	workflow: object,
): Promise<{ credentialsMs: number; workflowMs: number }> {
	const c = await n8nImport(ctx.cli, 'credentials', path.join(ctx.userFolder, 'credentials.json'), [
		{ ...API_CREDENTIAL, data: { baseUrl: emulator.url, apiKey: emulator.apiKey } },
		{ ...TOKEN_CREDENTIAL, data: { baseUrl: emulator.url, token: emulator.token } },
	]);
	const w = await n8nImport(
		ctx.cli,
		'workflow',
		path.join(ctx.userFolder, 'workflow.json'),
		workflow,
	);
	return { credentialsMs: c.ms, workflowMs: w.ms };
}

/** GET `url` with a timeout; undefined when nothing answers. */
async function tryGet(
	url: string,
	timeoutMs = 3000,
): Promise<{ status: number; body: string } | undefined> {
	try {
		const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
		return { status: res.status, body: await res.text() };
	} catch {
		return undefined;
	}
}

/** Points the context at fresh free ports (editor and task broker) right before `n8n start`. */
async function takeFreshPorts(ctx: N8nContext): Promise<void> {
	const port = await freePort();
	ctx.port = port;
	ctx.url = `http://127.0.0.1:${port}`;
	ctx.env.N8N_PORT = String(port);
	ctx.env.N8N_EDITOR_BASE_URL = ctx.url;
	ctx.env.N8N_RUNNERS_BROKER_PORT = String(await freePort());
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
export async function startServer(
	ctx: N8nContext,
	timeoutMs: number,
	echo?: string,
): Promise<Service & { ms: number }> {
	const t0 = Date.now();
	await takeFreshPorts(ctx);
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
	const settingsJson = (r: { status: number; body: string } | undefined): boolean => {
		if (r?.status !== 200) return false;
		try {
			return typeof (JSON.parse(r.body) as { data?: unknown }).data === 'object';
		} catch {
			return false;
		}
	};
	while (Date.now() - t0 < timeoutMs) {
		if (server.exited())
			throw new Error(
				`n8n start exited (code ${server.child.exitCode ?? server.child.signalCode}) before it was ready:\n${tail(server.output(), 40)}`,
			);
		if (!healthy)
			healthy = sawListening && (await tryGet(`${ctx.url}/healthz/readiness`))?.status === 200;
		if (healthy && settingsJson(await tryGet(`${ctx.url}/rest/settings`)))
			return Object.assign(server, { ms: Date.now() - t0 });
		await sleep(500);
	}
	await server.stop(3000);
	throw new Error(
		`n8n was not ready within ${secs(timeoutMs)} (${!sawListening ? `no "n8n ready on …, port ${ctx.port}" in its output` : `/healthz/readiness ${healthy ? 'ok' : 'never 200'}`}):\n${tail(server.output(), 40)}`,
	);
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
	const res = await fetch(`${url}/rest/owner/setup`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify(owner),
		signal: AbortSignal.timeout(30_000),
	});
	const body = await res.text();
	if (res.status !== 200)
		throw new Error(`POST /rest/owner/setup → ${res.status}: ${body.slice(0, 500)}`);
	let email: unknown;
	try {
		email = (JSON.parse(body) as { data?: { email?: unknown } }).data?.email;
	} catch {
		/* not JSON: reported below */
	}
	if (email !== owner.email)
		throw new Error(
			`POST /rest/owner/setup → 200 without the owner (is n8n still starting up?): ${body.slice(0, 300)}`,
		);
	return res.headers
		.getSetCookie()
		.map((c) => c.split(';')[0])
		.join('; ');
}
