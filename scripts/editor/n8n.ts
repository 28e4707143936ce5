/**
 * A real n8n server on a free loopback port in a throwaway user folder (the line, the package and
 * n8n's environment from scripts/lib/n8n.ts), the fixtures imported with its CLI, and its owner
 * account set up over REST: for the editor test, the activated trigger and Data table runs, the MCP run.
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

/** n8n's environment (scripts/lib/n8n.ts's n8nEnv) for a server on loopback, cookies over plain http. */
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
 * an array of them, or none) imported with the CLI; the first command also creates the database.
 *
 * @returns how long each import took
 * @throws Error when an import fails
 */
export async function importFixtures(
	ctx: N8nContext,
	emulator: Pick<EmulatorProcess, 'url' | 'apiKey' | 'token'>,
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
	ctx.port = await freePort();
	ctx.url = `http://127.0.0.1:${ctx.port}`;
	Object.assign(ctx.env, {
		N8N_PORT: String(ctx.port),
		N8N_EDITOR_BASE_URL: ctx.url,
		N8N_RUNNERS_BROKER_PORT: String(await freePort()),
	});
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
		if (healthy && (await answers('/rest/settings', hasSettings)))
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
	const { cookie, text, json } = await n8nCall(url, 'POST', '/rest/owner/setup', { body: owner });
	if ((json as { data?: { email?: unknown } } | undefined)?.data?.email !== owner.email)
		throw new Error(
			`POST /rest/owner/setup → 200 without the owner (is n8n still starting up?): ${text.slice(0, 300)}`,
		);
	return cookie;
}
