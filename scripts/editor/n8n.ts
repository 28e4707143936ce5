/**
 * A real n8n server for the editor test: the installed line (scripts/n8n/install.sh), a throwaway
 * N8N_USER_FOLDER with this package installed as n8n's community package installer lays it out,
 * the credentials and workflow imported with the n8n CLI, `n8n start` on a free loopback port, and
 * the owner account set up through the REST API.
 *
 * The package layout and the CLI imports follow scripts/n8n/run-examples.ts (see
 * scripts/n8n/README.md for why: a symlink would load n8n-workflow from this repo's node_modules).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import type { EmulatorProcess } from '../../emulator/launch';
import { runCommand, startService, tail, type Done, type Service } from './processes';
import { QUIET_N8N_ENV } from '../n8n/env';

const ROOT = path.resolve(__dirname, '..', '..');
const INSTALL_SH = path.join(ROOT, 'scripts', 'n8n', 'install.sh');
export const PACKAGE_NAME = 'n8n-nodes-extraction-service';

/** What install.sh prints for a line (`N8N_LINE {json}`). */
export interface LineInfo {
	line: string;
	version: string;
	dir: string;
	nodeBin: string;
	n8nBin: string;
	env: Record<string, string>;
}

/** The credentials of the example workflows (ids and names), for scripts/n8n/trigger-run.ts; the editor test imports its own (scripts/editor/on-server.ts). */
export const API_CREDENTIAL = {
	id: 'esApiCredential1',
	name: 'Extraction Service API',
	type: 'extractionServiceApi',
};
export const TOKEN_CREDENTIAL = {
	id: 'esTokenCred1',
	name: 'Extraction Service Token API',
	type: 'extractionServiceTokenApi',
};

/** The owner account the test sets up and signs in with. */
export const OWNER = {
	email: 'owner@example.com',
	firstName: 'Editor',
	lastName: 'Test',
	password: 'EditorTest-2024',
};

/** A TCP port nothing listens on now (loopback). */
export function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const srv = net.createServer();
		srv.once('error', reject);
		srv.listen(0, '127.0.0.1', () => {
			const { port } = srv.address() as net.AddressInfo;
			srv.close(() => resolve(port));
		});
	});
}

const secs = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;

function failure(what: string, r: Done): Error {
	return new Error(
		`${what} ${r.timedOut ? 'timed out' : `failed (exit ${r.code}${r.signal ? `, ${r.signal}` : ''})`}:\n${tail(`${r.stdout}\n${r.stderr}`, 30)}`,
	);
}

/**
 * `bash scripts/n8n/install.sh LINE`: installs the line into the cache when needed (minutes, once),
 * then describes it.
 *
 * @throws Error when the install fails or prints no N8N_LINE
 */
export async function installLine(
	line: string,
	install: boolean,
	echo?: (chunk: string) => void,
): Promise<LineInfo & { ms: number }> {
	const r = await runCommand('bash', [INSTALL_SH, ...(install ? [] : ['--no-install']), line], {
		cwd: ROOT,
		timeoutMs: 1_800_000,
		echo,
	});
	if (r.code !== 0) throw failure(`scripts/n8n/install.sh ${line}`, r);
	const infoLine = r.stdout.split('\n').find((l) => l.startsWith('N8N_LINE '));
	if (!infoLine) throw new Error(`install.sh printed no N8N_LINE line:\n${tail(r.stdout)}`);
	return { ...(JSON.parse(infoLine.slice('N8N_LINE '.length)) as LineInfo), ms: r.ms };
}

/** `npm run build` of the package (dist/). */
export async function buildPackage(): Promise<number> {
	const r = await runCommand('npm', ['run', 'build', '--silent'], {
		cwd: ROOT,
		timeoutMs: 300_000,
	});
	if (r.code !== 0) throw failure('npm run build', r);
	return r.ms;
}

/** `npm pack` into `dir` (only what `files` publishes); returns the tarball's path. */
export async function packPackage(dir: string): Promise<string> {
	const r = await runCommand(
		'npm',
		['pack', '--pack-destination', dir, '--ignore-scripts', '--json', '--loglevel=error'],
		{ cwd: ROOT, timeoutMs: 120_000 },
	);
	if (r.code !== 0) throw failure('npm pack', r);
	const [{ filename }] = JSON.parse(r.stdout) as Array<{ filename: string }>;
	return path.join(dir, path.basename(filename));
}

/**
 * The tarball unpacked into USER/.n8n/nodes/node_modules/NAME with dev/peer/optional dependencies
 * removed from its package.json, as n8n's CommunityPackagesService.downloadPackage leaves it (the
 * package has no runtime dependencies to install).
 */
export async function installPackageInto(userFolder: string, tarball: string): Promise<void> {
	const nodesDir = path.join(userFolder, '.n8n', 'nodes');
	const pkgDir = path.join(nodesDir, 'node_modules', PACKAGE_NAME);
	mkdirSync(pkgDir, { recursive: true });
	const r = await runCommand('tar', ['-xzf', tarball, '-C', pkgDir, '--strip-components=1'], {
		cwd: ROOT,
		timeoutMs: 60_000,
	});
	if (r.code !== 0) throw failure('tar', r);
	const pkgJsonPath = path.join(pkgDir, 'package.json');
	const {
		devDependencies: _d,
		peerDependencies: _p,
		optionalDependencies: _o,
		...pkg
	} = JSON.parse(readFileSync(pkgJsonPath, 'utf8')) as Record<string, unknown>;
	if (pkg.dependencies && Object.keys(pkg.dependencies).length > 0) {
		throw new Error(
			`${PACKAGE_NAME} now has runtime dependencies; the editor test does not install them (scripts/n8n/run-examples.ts shows how)`,
		);
	}
	writeFileSync(pkgJsonPath, JSON.stringify(pkg, null, 2));
	writeFileSync(
		path.join(nodesDir, 'package.json'),
		JSON.stringify(
			{ name: 'installed-nodes', private: true, dependencies: { [PACKAGE_NAME]: pkg.version } },
			null,
			2,
		),
	);
}

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
	verbose?: (chunk: string) => void,
): Promise<N8nContext> {
	const port = await freePort();
	const brokerPort = await freePort();
	const filesDir = path.join(userFolder, 'files');
	mkdirSync(filesDir, { recursive: true });
	const env: NodeJS.ProcessEnv = {
		...process.env,
		PATH: `${path.dirname(info.nodeBin)}${path.delimiter}${process.env.PATH ?? ''}`,
		N8N_USER_FOLDER: userFolder,
		N8N_PORT: String(port),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_HOST: '127.0.0.1',
		N8N_PROTOCOL: 'http',
		N8N_EDITOR_BASE_URL: `http://127.0.0.1:${port}`,
		// the session cookie over plain http
		N8N_SECURE_COOKIE: 'false',
		...QUIET_N8N_ENV,
		N8N_HIRING_BANNER_ENABLED: 'false',
		N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
		// no calls to api.n8n.io (unreachable here): the verified-packages list and the dynamic banners
		N8N_VERIFIED_PACKAGES_ENABLED: 'false',
		N8N_DYNAMIC_BANNERS_ENABLED: 'false',
		N8N_ENCRYPTION_KEY: randomBytes(24).toString('hex'),
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		N8N_RESTRICT_FILE_ACCESS_TO: filesDir,
		// n8n 2.x starts a task broker on 5679: never collide with an n8n the developer has running
		N8N_RUNNERS_BROKER_PORT: String(brokerPort),
		DB_TYPE: 'sqlite',
		NODE_ENV: 'production',
		...info.env,
	};
	// the emulator and the editor are on loopback: no proxy
	for (const k of [
		'HTTP_PROXY',
		'HTTPS_PROXY',
		'http_proxy',
		'https_proxy',
		'ALL_PROXY',
		'all_proxy',
	])
		delete env[k];
	env.NO_PROXY = env.no_proxy = '127.0.0.1,localhost';
	const cli = (args: string[], timeoutMs = 180_000): Promise<Done> =>
		runCommand(info.nodeBin, [info.n8nBin, ...args], {
			cwd: userFolder,
			env,
			timeoutMs,
			echo: verbose,
		});
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
	const credsFile = path.join(ctx.userFolder, 'credentials.json');
	writeFileSync(
		credsFile,
		JSON.stringify([
			{ ...API_CREDENTIAL, data: { baseUrl: emulator.url, apiKey: emulator.apiKey } },
			{ ...TOKEN_CREDENTIAL, data: { baseUrl: emulator.url, token: emulator.token } },
		]),
	);
	const c = await ctx.cli(['import:credentials', `--input=${credsFile}`]);
	if (c.code !== 0) throw failure('n8n import:credentials', c);
	const wfFile = path.join(ctx.userFolder, 'workflow.json');
	writeFileSync(wfFile, JSON.stringify(workflow, null, 2));
	const w = await ctx.cli(['import:workflow', `--input=${wfFile}`]);
	if (w.code !== 0) throw failure('n8n import:workflow', w);
	return { credentialsMs: c.ms, workflowMs: w.ms };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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
	echo?: (chunk: string) => void,
): Promise<Service & { ms: number }> {
	const t0 = Date.now();
	await takeFreshPorts(ctx);
	const server = startService(ctx.info.nodeBin, [ctx.info.n8nBin, 'start'], {
		cwd: ctx.userFolder,
		env: ctx.env,
		echo,
	});
	const listening = new RegExp(`n8n ready on \\S+, port ${ctx.port}\\b`);
	let healthy = false;
	let sawListening = false;
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
		// remembered: the line comes before the migrations, whose output may push it out of the kept tail
		sawListening ||= listening.test(server.output());
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
