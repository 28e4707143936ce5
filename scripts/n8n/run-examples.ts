/**
 * Runs every workflow of examples/workflows/ in REAL n8n servers, with this package installed the
 * way n8n installs a community package, against the service emulator, and checks the outputs with
 * test/n8n/checks.ts.
 *
 *   npm run test:n8n                                   # both lines: n8n 1.x on Node 20, n8n 2.x on Node 24
 *   npx tsx scripts/n8n/run-examples.ts --line 1       # one line (repeatable: --line 1 --line 2)
 *   npx tsx scripts/n8n/run-examples.ts --workflow extract-invoice.json --keep
 *
 * Options: --line N, --workflow FILE (repeatable), --no-install (use the cache as it is), --no-build,
 * --examples DIR (a folder with workflows/ and files/ instead of examples/, to try the runner),
 * --keep (keep the throwaway n8n user folders, each run's output in runs/), --processing-ms N
 * (emulator job time, default 2000), --timeout S (per `n8n execute`, default 300), --verbose
 * (print n8n's output), --no-trigger (skip the activated trigger runs), --trigger-poll S (their poll
 * interval, default 10; 60 = Every Minute), --trigger-timeout S (each one's bound, default 150 + 6 × poll),
 * --trigger-slow-poll (opt-in: also one poll slower than the interval; see the README),
 * --no-trigger-durable (skip the second one, with n8n's durable poll cursors on).
 *
 * Per line: scripts/n8n/install.sh LINE (cached) → throwaway N8N_USER_FOLDER → the package, packed
 * with `npm pack` and unpacked into .n8n/nodes/node_modules/ as n8n's community package installer
 * does → credentials imported (`n8n import:credentials`) → every node type checked against
 * `n8n export:nodes` → workflows imported (`n8n import:workflow`) → each workflow run with
 * `n8n execute --id=… --rawOutput` → the last JSON document of stdout (the IRun) goes to its check.
 * After line 2: trigger-finished-extractions.json ACTIVATED in a running `n8n start` of line 2
 * (trigger-run.ts), counted as one more result of that line; then the same once more in another
 * `n8n start` with n8n's durable poll cursors on (trigger-run.ts's DURABLE_CURSORS_ENV), one more
 * result again.
 * See scripts/n8n/README.md.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs as parseArgv } from 'node:util';

import type { LoggedRequest } from '../../emulator';
import { launchEmulator, type EmulatorProcess } from '../../emulator/launch';
import { checks } from '../../test/n8n/checks';
import { N8nRun, type Json, type N8nRunInfo } from '../../test/n8n/run';
import { cleanUpNow as cleanUpEditorProcesses } from '../editor/processes';
import {
	DEFAULT_SOURCE,
	loadExample,
	loadExamples,
	prepareWorkflow,
	type Example,
	type ExampleSource,
} from './examples';
import { pollTimesEvery, runActivatedTrigger, TRIGGER_FILE, UPLOAD_FILE } from './trigger-run';
import { QUIET_N8N_ENV } from './env';

const ROOT = path.resolve(__dirname, '..', '..');
let SOURCE: ExampleSource = DEFAULT_SOURCE;
const INSTALL_SH = path.join(__dirname, 'install.sh');
const PACKAGE_NAME = 'n8n-nodes-extraction-service';

/** Credentials the example workflows reference (ids ≤ 16 characters, as n8n's import requires). */
const API_CREDENTIAL = {
	id: 'esApiCredential1',
	name: 'Extraction Service API',
	type: 'extractionServiceApi',
};
const TOKEN_CREDENTIAL = {
	id: 'esTokenCred1',
	name: 'Extraction Service Token API',
	type: 'extractionServiceTokenApi',
};

/** Node types `n8n execute` can start from (n8n's findCliWorkflowStart, 1.123 and 2.41). */
const CLI_START_TYPES = [
	'n8n-nodes-base.executeWorkflowTrigger',
	'@n8n/n8n-nodes-langchain.manualChatTrigger',
	'n8n-nodes-base.manualTrigger',
	'n8n-nodes-base.start',
];

// ---------------------------------------------------------------------------------------------
// options

interface Options {
	lines: string[];
	workflows: string[];
	install: boolean;
	build: boolean;
	keep: boolean;
	processingMs: number;
	timeoutS: number;
	verbose: boolean;
	/** The activated trigger run after line 2 (trigger-run.ts). */
	trigger: boolean;
	triggerPollS: number;
	triggerTimeoutS: number;
	/** Opt-in: a poll slower than the interval (fails with n8n 2.41 today, see the README). */
	triggerSlowPoll: boolean;
	/** The activated trigger run once more with n8n's durable poll cursors on (default; --no-trigger-durable skips it). */
	triggerDurable: boolean;
}

/** Reads the command line with Node's `util.parseArgs` (strict: an unknown flag is an error). */
function parseArgs(argv: string[]): Options {
	const { values: v } = parseArgv({
		args: argv,
		strict: true,
		options: {
			line: { type: 'string', multiple: true },
			workflow: { type: 'string', multiple: true },
			examples: { type: 'string' },
			'no-install': { type: 'boolean' },
			'no-build': { type: 'boolean' },
			keep: { type: 'boolean' },
			verbose: { type: 'boolean' },
			'processing-ms': { type: 'string' },
			timeout: { type: 'string' },
			'no-trigger': { type: 'boolean' },
			'trigger-poll': { type: 'string' },
			'trigger-timeout': { type: 'string' },
			'trigger-slow-poll': { type: 'boolean' },
			'no-trigger-durable': { type: 'boolean' },
			help: { type: 'boolean', short: 'h' },
		},
	});
	if (v.help) {
		console.log(readFileSync(__filename, 'utf8').split('*/')[0]);
		process.exit(0);
	}
	if (v.examples) {
		// another examples folder (with workflows/ and files/), for trying the runner itself
		SOURCE = {
			workflowsDir: path.resolve(v.examples, 'workflows'),
			filesDir: path.resolve(v.examples, 'files'),
		};
	}
	const o: Options = {
		lines: (v.line ?? []).flatMap((l) => l.split(',')),
		workflows: (v.workflow ?? []).map((w) => path.basename(w)),
		install: !v['no-install'],
		build: !v['no-build'],
		keep: v.keep === true,
		processingMs: v['processing-ms'] !== undefined ? Number(v['processing-ms']) : 2000,
		timeoutS: v.timeout !== undefined ? Number(v.timeout) : 300,
		verbose: v.verbose === true,
		trigger: !v['no-trigger'],
		triggerPollS: v['trigger-poll'] !== undefined ? Number(v['trigger-poll']) : 10,
		triggerTimeoutS: 0,
		triggerSlowPoll: v['trigger-slow-poll'] === true,
		triggerDurable: !v['no-trigger-durable'],
	};
	// the trigger run waits for about six polls (activation, outage, firing, two more) plus setup
	pollTimesEvery(o.triggerPollS); // throws for an interval that does not divide a minute
	o.triggerTimeoutS =
		v['trigger-timeout'] !== undefined ? Number(v['trigger-timeout']) : 150 + 6 * o.triggerPollS;
	if (o.lines.length === 0) o.lines = ['1', '2'];
	for (const l of o.lines)
		if (l !== '1' && l !== '2') throw new Error(`--line must be 1 or 2, got ${l}`);
	return o;
}

// ---------------------------------------------------------------------------------------------
// child processes: each in its own process group, all killed on exit (normal, error or signal)

const children = new Set<ChildProcess>();

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
	if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
	try {
		process.kill(-child.pid, signal);
	} catch {
		try {
			child.kill(signal);
		} catch {
			/* already gone */
		}
	}
}

function killAllChildren(): void {
	for (const child of children) killGroup(child, 'SIGKILL');
}

/** Throwaway folders, removed on any exit (a signal included) unless --keep. */
const throwaway = new Set<string>();

function cleanUp(): void {
	killAllChildren();
	// the trigger run's n8n server (started with scripts/editor/processes.ts) and its folder
	cleanUpEditorProcesses();
	for (const dir of throwaway) rmSync(dir, { recursive: true, force: true });
	throwaway.clear();
}

process.on('exit', cleanUp);
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
	process.on(sig, () => {
		console.error(`\n${sig}: stopping the emulator and n8n`);
		cleanUp();
		process.exit(130);
	});
}

interface Done {
	code: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
	ms: number;
	timedOut: boolean;
}

/** Runs a command to its end (own process group; killed after timeoutMs). */
function run(
	cmd: string,
	args: string[],
	opts: {
		cwd?: string;
		env?: NodeJS.ProcessEnv;
		timeoutMs?: number;
		echo?: boolean;
		prefix?: string;
	} = {},
): Promise<Done> {
	const t0 = Date.now();
	return new Promise((resolve, reject) => {
		const child = spawn(cmd, args, {
			cwd: opts.cwd ?? ROOT,
			env: opts.env ?? process.env,
			stdio: ['ignore', 'pipe', 'pipe'],
			detached: true,
		});
		children.add(child);
		let stdout = '';
		let stderr = '';
		let timedOut = false;
		const echo = (chunk: string): void => {
			if (opts.echo) process.stderr.write(chunk.replace(/^(?=.)/gm, opts.prefix ?? ''));
		};
		child.stdout!.setEncoding('utf8').on('data', (c: string) => {
			stdout += c;
			echo(c);
		});
		child.stderr!.setEncoding('utf8').on('data', (c: string) => {
			stderr += c;
			echo(c);
		});
		const timer = opts.timeoutMs
			? setTimeout(() => {
					timedOut = true;
					killGroup(child, 'SIGTERM');
					setTimeout(() => killGroup(child, 'SIGKILL'), 5000).unref();
				}, opts.timeoutMs)
			: undefined;
		child.on('error', (err) => {
			children.delete(child);
			if (timer) clearTimeout(timer);
			reject(err);
		});
		child.on('close', (code, signal) => {
			children.delete(child);
			if (timer) clearTimeout(timer);
			// n8n can leave helpers (task runners) in its group: end them with it
			killGroup(child, 'SIGKILL');
			resolve({ code, signal, stdout, stderr, ms: Date.now() - t0, timedOut });
		});
	});
}

function tail(text: string, lines = 25): string {
	return text.trimEnd().split('\n').slice(-lines).join('\n');
}

const secs = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;

// ---------------------------------------------------------------------------------------------
// the package, as n8n's community package installer lays it out

/**
 * `npm pack` of the package (only what `files` publishes), unpacked into
 * USER/.n8n/nodes/node_modules/NAME with dev/peer/optional dependencies removed from its
 * package.json, as n8n's CommunityPackagesService.downloadPackage does. n8n-workflow then resolves
 * to the server's own copy (n8n puts its module paths on NODE_PATH). A symlink to the work tree
 * would instead resolve it from this repo's node_modules (a devDependency of some other version).
 */
async function packPackage(tmp: string): Promise<string> {
	const r = await run(
		'npm',
		['pack', '--pack-destination', tmp, '--ignore-scripts', '--json', '--loglevel=error'],
		{ cwd: ROOT },
	);
	if (r.code !== 0) throw new Error(`npm pack failed:\n${tail(r.stderr || r.stdout)}`);
	const [{ filename }] = JSON.parse(r.stdout) as Array<{ filename: string }>;
	return path.join(tmp, filename);
}

async function installPackageInto(userFolder: string, tarball: string): Promise<void> {
	const nodesDir = path.join(userFolder, '.n8n', 'nodes');
	const pkgDir = path.join(nodesDir, 'node_modules', PACKAGE_NAME);
	mkdirSync(pkgDir, { recursive: true });
	const r = await run('tar', ['-xzf', tarball, '-C', pkgDir, '--strip-components=1']);
	if (r.code !== 0) throw new Error(`tar failed: ${r.stderr}`);
	const pkgJsonPath = path.join(pkgDir, 'package.json');
	const {
		devDependencies: _d,
		peerDependencies: _p,
		optionalDependencies: _o,
		...pkg
	} = JSON.parse(readFileSync(pkgJsonPath, 'utf8')) as Json;
	writeFileSync(pkgJsonPath, JSON.stringify(pkg, null, 2));
	if (pkg.dependencies && Object.keys(pkg.dependencies as Json).length > 0) {
		// the installer's own flags (n8n 1.123 community-packages.service.js)
		const i = await run(
			'npm',
			[
				'install',
				'--audit=false',
				'--fund=false',
				'--bin-links=false',
				'--install-strategy=shallow',
				'--ignore-scripts=true',
				'--package-lock=false',
			],
			{ cwd: pkgDir },
		);
		if (i.code !== 0)
			throw new Error(`npm install of the package's dependencies failed:\n${tail(i.stderr)}`);
	}
	writeFileSync(
		path.join(nodesDir, 'package.json'),
		JSON.stringify(
			{ name: 'installed-nodes', private: true, dependencies: { [PACKAGE_NAME]: pkg.version } },
			null,
			2,
		),
	);
}

// ---------------------------------------------------------------------------------------------
// workflows: the imported copy (never the original; see examples.ts)

/** Why `n8n execute` cannot run the example (undefined when it can). */
function whyNotExecutable(example: Example): string | undefined {
	if (example.workflow.nodes.some((n) => CLI_START_TYPES.includes(n.type))) return undefined;
	const triggers = example.workflow.nodes
		.filter((n) => /trigger/i.test(n.type))
		.map((n) => `"${n.name}" (${n.type})`);
	return (
		`it has no node \`n8n execute\` can start from (${CLI_START_TYPES.join(', ')})` +
		(triggers.length ? `; it starts with ${triggers.join(', ')}` : '')
	);
}

/** node type → type versions this n8n has (from `n8n export:nodes`). */
type KnownTypes = Map<string, number[]>;

function readKnownTypes(file: string): KnownTypes {
	const list = JSON.parse(readFileSync(file, 'utf8')) as Array<{
		name: string;
		version: number | number[];
	}>;
	const known: KnownTypes = new Map();
	for (const d of list)
		known.set(d.name, [
			...(known.get(d.name) ?? []),
			...(Array.isArray(d.version) ? d.version : [d.version]),
		]);
	return known;
}

/** Nodes of the workflow whose type or typeVersion this n8n does not have. */
function unknownTypes(example: Example, known: KnownTypes, version: string): string[] {
	const problems: string[] = [];
	for (const n of example.workflow.nodes) {
		const versions = known.get(n.type);
		const tv = typeof n.typeVersion === 'number' ? n.typeVersion : 1;
		if (!versions) problems.push(`n8n ${version} has no node type ${n.type} (node "${n.name}")`);
		else if (!versions.includes(tv))
			problems.push(
				`n8n ${version} has ${n.type} only in versions ${versions.join(', ')}, node "${n.name}" uses typeVersion ${tv}`,
			);
	}
	return problems;
}

// ---------------------------------------------------------------------------------------------
// one line

interface LineInfo {
	line: string;
	version: string;
	dir: string;
	nodeBin: string;
	n8nBin: string;
	/** what this line needs to start at all (install.sh says why) */
	env: Record<string, string>;
}

interface WorkflowResult {
	file: string;
	ok: boolean;
	ms?: number;
	/** What `ms` measured, for the report (default "execute"). */
	msLabel?: string;
	message?: string;
	/** e.g. "not executed: …" */
	note?: string;
}

interface LineResult {
	line: string;
	label: string;
	ok: boolean;
	why?: string;
	version?: string;
	nodeVersion?: string;
	timings: Record<string, number>;
	workflows: WorkflowResult[];
	/** The installed line, once install.sh described it. */
	info?: LineInfo;
	/** The activated trigger runs' `trigger: …` lines (line 2; the durable run's says `durable cursors`). */
	triggerLines: string[];
}

const LABELS: Record<string, string> = {
	'1': 'n8n 1.x on Node 20 (this machine)',
	'2': 'n8n 2.x on Node 24 (npm package `node`)',
};

async function installLine(line: string, opts: Options, result: LineResult): Promise<LineInfo> {
	const args = [INSTALL_SH, ...(opts.install ? [] : ['--no-install']), line];
	console.log(`[line ${line}] install: bash scripts/n8n/install.sh ${args.slice(1).join(' ')}`);
	const r = await run('bash', args, { echo: true, prefix: `[line ${line}]   ` });
	result.timings.install = r.ms;
	if (r.code !== 0) {
		// the output was shown above; name the cause in one line
		const lines = r.stderr.split('\n');
		const cause =
			lines.find(
				(l) => /npm error (notarget|404|code E)/.test(l) && !/npm error code ETARGET/.test(l),
			) ??
			lines.filter((l) => l.trim() && !/A complete log/.test(l)).at(-1) ??
			'';
		throw new Error(`install.sh ${line} failed (exit ${r.code}): ${cause.trim()}`);
	}
	const infoLine = r.stdout.split('\n').find((l) => l.startsWith('N8N_LINE '));
	if (!infoLine) throw new Error(`install.sh printed no N8N_LINE line:\n${tail(r.stdout)}`);
	return JSON.parse(infoLine.slice('N8N_LINE '.length)) as LineInfo;
}

/** A port nothing listens on now (for n8n 2.x's task broker, 5679 by default). */
function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const srv = net.createServer();
		srv.once('error', reject);
		srv.listen(0, '127.0.0.1', () => {
			const { port } = srv.address() as net.AddressInfo;
			srv.close(() => resolve(port));
		});
	});
}

function n8nEnv(
	info: LineInfo,
	userFolder: string,
	filesDir: string,
	brokerPort: number,
): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = {
		...process.env,
		PATH: `${path.dirname(info.nodeBin)}${path.delimiter}${process.env.PATH ?? ''}`,
		N8N_USER_FOLDER: userFolder,
		...QUIET_N8N_ENV,
		N8N_ENCRYPTION_KEY: randomBytes(24).toString('hex'),
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		// Read/Write Files from Disk may only touch this folder (n8n 2.x restricts it to ~/.n8n-files
		// by default; 1.x allows everything but ~/.n8n unless this is set)
		N8N_RESTRICT_FILE_ACCESS_TO: filesDir,
		// n8n 2.x starts a task broker for Code nodes on 5679 even for `n8n execute`: never collide
		// with an n8n the developer has running
		N8N_RUNNERS_BROKER_PORT: String(brokerPort),
		DB_TYPE: 'sqlite',
		NODE_ENV: 'production',
		// e.g. line 1: N8N_EXPRESSION_ENGINE=legacy (isolated-vm is not built on Node 20)
		...info.env,
	};
	// Left at n8n's defaults on purpose, as users get them: N8N_BLOCK_ENV_ACCESS_IN_NODE (2.x blocks
	// `$env` in expressions; examples must not use it), the 'vm' expression engine on line 2.
	// the emulator's URLs must not go through a proxy
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
	return env;
}

/** One request of the emulator's log as `POST /v0/extract → 400 (api, multipart/form-data, 2844 B)`. */
function describeRequest(r: LoggedRequest): string {
	const qs = Object.keys(r.query).length
		? `?${new URLSearchParams(r.query as Record<string, string>).toString()}`
		: '';
	const body = r.bodyBytes ? `, ${r.contentType?.split(';')[0] ?? 'body'} ${r.bodyBytes} B` : '';
	return `${r.method} ${r.path}${qs} → ${r.status} (${r.origin}${body})`;
}

/** The emulator's requests from index `from` on (the last 30), for a failure message. */
function describeRequestsSince(emulator: EmulatorProcess, from: number): string {
	const requests = emulator.requests.slice(from);
	if (requests.length === 0) return '\n  (no request reached the emulator)';
	return `\n  emulator requests during this run:\n${requests
		.slice(-30)
		.map((q) => `    ${describeRequest(q)}`)
		.join('\n')}`;
}

/** The last JSON document in stdout (n8n 2.x prints log lines before it). */
function lastJsonDocument(stdout: string): Json | undefined {
	const lines = stdout.split('\n');
	const starts: number[] = [];
	const ends: number[] = [];
	lines.forEach((l, i) => {
		if (l.startsWith('{')) starts.push(i);
		if (l.trimEnd().endsWith('}')) ends.push(i);
	});
	for (const s of starts.reverse()) {
		for (const e of [...ends].reverse()) {
			if (e < s) break;
			try {
				const doc = JSON.parse(lines.slice(s, e + 1).join('\n')) as unknown;
				if (doc && typeof doc === 'object' && !Array.isArray(doc)) return doc as Json;
			} catch {
				/* not this slice */
			}
		}
	}
	return undefined;
}

/** `what failed (exit N)` or `what timed out`, with the tail of n8n's output. */
function commandFailure(what: string, r: Done): string {
	return `${what} ${r.timedOut ? 'timed out' : `failed (exit ${r.code}${r.signal ? `, ${r.signal}` : ''})`}:\n${tail(`${r.stdout}\n${r.stderr}`, 30)}`;
}

/** The line's result when it cannot run at all: every workflow fails with `why`. */
function failLine(result: LineResult, examples: Example[], why: string): LineResult {
	result.why = why;
	result.workflows = examples.map((e) => ({
		file: e.file,
		ok: false,
		message: `line ${result.line} did not run: ${why.split('\n')[0]}`,
	}));
	return result;
}

/** A line's throwaway n8n user folder, with the package installed, and how to run n8n in it. */
interface LineContext {
	line: string;
	info: LineInfo;
	opts: Options;
	emulator: EmulatorProcess;
	/** N8N_USER_FOLDER. */
	userFolder: string;
	/** Where the examples' `/home/node/.n8n-files/…` files go (the only folder Read/Write Files from Disk may use). */
	filesDir: string;
	/** Runs `n8n <args>` in the user folder; default timeout 180 s. */
	n8n(args: string[], timeoutMs?: number): Promise<Done>;
}

/** Step 1: install.sh for the line (see installLine); records and prints its n8n and Node versions. */
async function installAndDescribeLine(
	line: string,
	opts: Options,
	result: LineResult,
): Promise<LineInfo> {
	const info = await installLine(line, opts, result);
	result.version = info.version;
	result.nodeVersion = spawnSync(info.nodeBin, ['--version'], { encoding: 'utf8' }).stdout.trim();
	const env = Object.entries(info.env).map(([k, v]) => `${k}=${v}`);
	console.log(
		`[line ${line}] n8n ${info.version} on Node ${result.nodeVersion} (${info.dir})${env.length ? `, with ${env.join(' ')}` : ''}`,
	);
	return info;
}

/** Step 2: a throwaway user folder (removed on exit unless --keep) with its files folder. */
function createUserFolder(line: string, opts: Options): { userFolder: string; filesDir: string } {
	const userFolder = mkdtempSync(path.join(os.tmpdir(), `n8n-es-line${line}-`));
	if (!opts.keep) throwaway.add(userFolder);
	const filesDir = path.join(userFolder, 'files');
	mkdirSync(filesDir, { recursive: true });
	return { userFolder, filesDir };
}

/** Step 2 (continued): the package installed into the user folder, and n8n's environment for it. */
async function prepareUserFolder(
	line: string,
	info: LineInfo,
	opts: Options,
	emulator: EmulatorProcess,
	folder: { userFolder: string; filesDir: string },
	tarball: string,
): Promise<LineContext> {
	await installPackageInto(folder.userFolder, tarball);
	const env = n8nEnv(info, folder.userFolder, folder.filesDir, await freePort());
	const n8n = (args: string[], timeoutMs = 180_000): Promise<Done> =>
		run(info.nodeBin, [info.n8nBin, ...args], {
			cwd: folder.userFolder,
			env,
			timeoutMs,
			echo: opts.verbose,
			prefix: `[line ${line}] n8n| `,
		});
	return { line, info, opts, emulator, ...folder, n8n };
}

/**
 * Step 3: the two credentials, pointing at the emulator (plain data; n8n encrypts it on import).
 * The first n8n command also creates the database: its time is reported as "n8n start".
 *
 * @throws Error when the import fails
 */
async function importCredentials(ctx: LineContext, result: LineResult): Promise<void> {
	const { url, apiKey, token } = ctx.emulator;
	const credsFile = path.join(ctx.userFolder, 'credentials.json');
	writeFileSync(
		credsFile,
		JSON.stringify([
			{ ...API_CREDENTIAL, data: { baseUrl: url, apiKey } },
			{ ...TOKEN_CREDENTIAL, data: { baseUrl: url, token } },
		]),
	);
	const c = await ctx.n8n(['import:credentials', `--input=${credsFile}`]);
	result.timings.start = c.ms;
	if (c.code !== 0) throw new Error(commandFailure('n8n import:credentials', c));
}

/**
 * Step 4: the node types (and type versions) this n8n has, from `n8n export:nodes`.
 *
 * @throws Error when the export fails or n8n did not load this package
 */
async function loadNodeTypes(ctx: LineContext, result: LineResult): Promise<KnownTypes> {
	const typesFile = path.join(ctx.userFolder, 'node-types.json');
	const t = await ctx.n8n(['export:nodes', `--output=${typesFile}`]);
	result.timings.nodeTypes = t.ms;
	if (t.code !== 0 || !existsSync(typesFile))
		throw new Error(commandFailure('n8n export:nodes', t));
	const known = readKnownTypes(typesFile);
	const ours = [...known.keys()].filter((k) => k.startsWith(`${PACKAGE_NAME}.`));
	console.log(
		`[line ${ctx.line}] n8n loaded the package: ${ours.join(', ') || 'NO node type of it'}`,
	);
	if (ours.length === 0)
		throw new Error(
			`n8n ${ctx.info.version} did not load ${PACKAGE_NAME} from ${path.join(ctx.userFolder, '.n8n', 'nodes')}`,
		);
	return known;
}

/**
 * Step 5: a prepared copy of every example (see prepareWorkflow), imported with one
 * `n8n import:workflow --separate`.
 *
 * @returns the imported copy of each example, by file name
 * @throws Error when the import fails
 */
async function importWorkflows(
	ctx: LineContext,
	examples: Example[],
	result: LineResult,
): Promise<Map<string, Example['workflow']>> {
	const wfDir = path.join(ctx.userFolder, 'workflows');
	mkdirSync(wfDir);
	const copies = new Map(
		examples.map((e) => [e.file, prepareWorkflow(e, SOURCE, ctx.filesDir, ctx.emulator.filesUrl)]),
	);
	for (const e of examples)
		writeFileSync(path.join(wfDir, `${e.id}.json`), JSON.stringify(copies.get(e.file), null, 2));
	if (examples.length > 0) {
		const w = await ctx.n8n(['import:workflow', '--separate', `--input=${wfDir}`]);
		result.timings.import = w.ms;
		if (w.code !== 0) throw new Error(commandFailure('n8n import:workflow', w));
	}
	return copies;
}

/** What a check gets about one example's run, besides n8n's output. */
type RunInfo = Omit<N8nRunInfo, 'raw' | 'notExecuted'>;

/**
 * Step 6 for one example: its node types are checked, then it is executed and its check run on the
 * output, or, when `n8n execute` cannot start it, its check runs without an execution.
 */
async function runExample(
	ctx: LineContext,
	example: Example,
	workflow: Example['workflow'],
	known: KnownTypes,
): Promise<WorkflowResult> {
	const typeProblems = unknownTypes(example, known, ctx.info.version);
	if (typeProblems.length > 0)
		return { file: example.file, ok: false, message: typeProblems.join('\n') };
	const runInfo: RunInfo = {
		workflowFile: example.file,
		line: ctx.line,
		n8nVersion: ctx.info.version,
		filesDir: ctx.filesDir,
		n8nFolder: path.join(ctx.userFolder, '.n8n'),
		emulator: { url: ctx.emulator.url, filesUrl: ctx.emulator.filesUrl },
		workflow,
	};
	const notExecutable = whyNotExecutable(example);
	return notExecutable
		? await checkWithoutExecution(example, runInfo, notExecutable)
		: await executeAndCheck(ctx, example, runInfo);
}

/** Step 6 when the example cannot be executed: imported and every node type known; its check decides whether that is enough. */
async function checkWithoutExecution(
	example: Example,
	runInfo: RunInfo,
	why: string,
): Promise<WorkflowResult> {
	const wr: WorkflowResult = { file: example.file, ok: false, note: `not executed: ${why}` };
	const check = checks[example.file];
	if (!check) {
		wr.message = `no check for ${example.file}: add one to test/n8n/checks.ts (the workflow is not executed: ${why})`;
		return wr;
	}
	try {
		await check(new N8nRun({ ...runInfo, raw: {}, notExecuted: why }));
		wr.ok = true;
	} catch (err) {
		wr.message = (err as Error).message;
	}
	return wr;
}

/**
 * Step 6: `n8n execute --id=… --rawOutput`, then the example's check on the last JSON document of
 * stdout (the IRun). A failure message carries the workflow error, n8n's exit code and the emulator
 * requests of the run. With --keep, stdout and stderr are saved in the user folder's runs/.
 */
async function executeAndCheck(
	ctx: LineContext,
	example: Example,
	runInfo: RunInfo,
): Promise<WorkflowResult> {
	const before = ctx.emulator.requests.length;
	const r = await ctx.n8n(
		['execute', `--id=${example.id}`, '--rawOutput'],
		ctx.opts.timeoutS * 1000,
	);
	const wr: WorkflowResult = { file: example.file, ok: false, ms: r.ms };
	if (ctx.opts.keep) {
		const base = path.join(ctx.userFolder, 'runs', example.file.replace(/\.json$/, ''));
		mkdirSync(path.dirname(base), { recursive: true });
		writeFileSync(`${base}.stdout.txt`, r.stdout);
		writeFileSync(`${base}.stderr.txt`, r.stderr);
	}
	const doc = lastJsonDocument(r.stdout);
	if (!doc) {
		wr.message = `${commandFailure('n8n execute', r)}\n  (no JSON document in stdout)${describeRequestsSince(ctx.emulator, before)}`;
		return wr;
	}
	const check = checks[example.file];
	if (!check) {
		const err = (doc.data as { resultData?: { error?: { message?: string } } } | undefined)
			?.resultData?.error;
		wr.message = `no check for ${example.file}: add one to test/n8n/checks.ts${err ? ` (and the run failed: ${err.message ?? ''})` : ''}`;
		return wr;
	}
	const runObj = new N8nRun({ ...runInfo, raw: doc });
	try {
		await check(runObj);
		wr.ok = true;
	} catch (err) {
		const wfError = runObj.error
			? `\n  workflow error: ${runObj.error.message ?? ''}${runObj.error.description ? ` (${runObj.error.description})` : ''}`
			: '';
		wr.message = `${(err as Error).message}${wfError}${r.code !== 0 ? `\n  n8n execute exit code ${r.code}` : ''}${describeRequestsSince(ctx.emulator, before)}`;
	}
	return wr;
}

/**
 * One n8n line: install, prepare a user folder, import the credentials, read the node types, import
 * the workflows, then run every example and its check. A step that fails fails every workflow of
 * the line with its reason; the user folder is removed at the end unless --keep.
 */
async function runLine(
	line: string,
	opts: Options,
	examples: Example[],
	tarball: string,
	emulator: EmulatorProcess,
): Promise<LineResult> {
	const result: LineResult = {
		line,
		label: LABELS[line],
		ok: false,
		timings: {},
		workflows: [],
		triggerLines: [],
	};
	let info: LineInfo;
	try {
		info = await installAndDescribeLine(line, opts, result);
		result.info = info;
	} catch (err) {
		return failLine(result, examples, (err as Error).message);
	}
	const folder = createUserFolder(line, opts);
	try {
		const ctx = await prepareUserFolder(line, info, opts, emulator, folder, tarball);
		await importCredentials(ctx, result);
		const known = await loadNodeTypes(ctx, result);
		const copies = await importWorkflows(ctx, examples, result);
		let execMs = 0;
		for (const e of examples) {
			const wr = await runExample(ctx, e, copies.get(e.file)!, known);
			result.workflows.push(wr);
			execMs += wr.ms ?? 0;
		}
		result.timings.execute = execMs;
		result.ok = result.workflows.every((w) => w.ok);
		return result;
	} catch (err) {
		return failLine(result, examples, (err as Error).message);
	} finally {
		if (opts.keep) console.log(`[line ${line}] kept user folder ${folder.userFolder}`);
		else rmSync(folder.userFolder, { recursive: true, force: true });
	}
}

// ---------------------------------------------------------------------------------------------
// the trigger example, activated in a running n8n 2.x (trigger-run.ts)

/** Whether to run it: not --no-trigger, and the trigger example is among the workflows run. */
function wantsTrigger(opts: Options): boolean {
	if (!opts.trigger) return false;
	if (opts.workflows.length > 0) return opts.workflows.includes(TRIGGER_FILE);
	return (
		existsSync(path.join(SOURCE.workflowsDir, TRIGGER_FILE)) &&
		existsSync(path.join(SOURCE.workflowsDir, UPLOAD_FILE))
	);
}

/**
 * A trigger run after line 2, added to that line's results as one more workflow: with n8n's default
 * settings, or (`durable`) with its durable poll cursors on.
 */
async function addTriggerRun(
	r: LineResult,
	opts: Options,
	tarball: string,
	durable: boolean,
): Promise<void> {
	const file = `${TRIGGER_FILE} (activated in n8n start${durable ? ', durable cursors' : ''})`;
	if (!r.info) {
		r.workflows.push({
			file,
			ok: false,
			message: `line 2 is not installed: ${r.why?.split('\n')[0] ?? ''}`,
		});
		r.ok = false;
		return;
	}
	console.log(
		`[line 2] activated trigger${durable ? ', durable poll cursors on' : ''}: ${TRIGGER_FILE} in \`n8n start\`, jobs from ${UPLOAD_FILE} and the emulator`,
	);
	const t = await runActivatedTrigger({
		info: r.info,
		tarball,
		source: SOURCE,
		upload: loadExample(SOURCE, UPLOAD_FILE),
		trigger: loadExample(SOURCE, TRIGGER_FILE),
		pollSeconds: opts.triggerPollS,
		faults: true,
		slowPoll: opts.triggerSlowPoll,
		durable,
		timeoutS: opts.triggerTimeoutS,
		keep: opts.keep,
		verbose: opts.verbose,
	});
	r.timings[durable ? 'triggerDurable' : 'trigger'] = t.ms;
	if (t.line) {
		r.triggerLines.push(t.line);
		console.log(t.line);
	}
	const phases = Object.entries(t.timings)
		.map(([k, v]) => `${k} ${secs(v)}`)
		.join(', ');
	r.workflows.push({ file, ok: t.ok, ms: t.ms, msLabel: 'run', note: phases, message: t.message });
	r.ok = r.ok && t.ok;
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
	const opts = parseArgs(process.argv.slice(2));
	const t0 = Date.now();
	const examples = loadExamples(SOURCE, opts.workflows);
	console.log(
		`Example workflows: ${examples.map((e) => `${e.file} (id ${e.id})`).join(', ') || 'none'}`,
	);
	const unchecked = examples.filter((e) => !checks[e.file]).map((e) => e.file);
	if (unchecked.length)
		console.log(`Without a check in test/n8n/checks.ts (will fail): ${unchecked.join(', ')}`);

	if (opts.build) {
		const b = await run('npm', ['run', 'build', '--silent'], { cwd: ROOT });
		console.log(`Build: ${b.code === 0 ? 'ok' : 'FAILED'} (${secs(b.ms)})`);
		if (b.code !== 0) {
			console.error(tail(`${b.stdout}\n${b.stderr}`, 40));
			return 1;
		}
	}
	const tmp = mkdtempSync(path.join(os.tmpdir(), 'n8n-es-pack-'));
	throwaway.add(tmp);
	const emulatorT0 = Date.now();
	let emulator: EmulatorProcess | undefined;
	const results: LineResult[] = [];
	try {
		const tarball = await packPackage(tmp);
		console.log(`Package: ${path.basename(tarball)}`);
		emulator = await launchEmulator({ processingMs: opts.processingMs });
		console.log(
			`Emulator: ${emulator.url} (files ${emulator.filesUrl}), ready in ${secs(Date.now() - emulatorT0)}`,
		);
		for (const line of opts.lines) {
			console.log(`\n=== line ${line}: ${LABELS[line]} ===`);
			const lt0 = Date.now();
			const r = await runLine(line, opts, examples, tarball, emulator);
			if (line === '2' && wantsTrigger(opts)) {
				await addTriggerRun(r, opts, tarball, false);
				if (opts.triggerDurable) await addTriggerRun(r, opts, tarball, true);
			}
			r.timings.total = Date.now() - lt0;
			results.push(r);
			if (r.why) console.log(`[line ${line}] FAILED: ${r.why}`);
			for (const w of r.workflows) {
				console.log(
					`[line ${line}] ${w.ok ? 'PASS' : 'FAIL'} ${w.file}${w.ms !== undefined ? ` (${w.msLabel ?? 'execute'} ${secs(w.ms)})` : ''}${w.ok && w.note ? ` (${w.note})` : ''}` +
						`${w.message ? `\n  ${w.message.replace(/\n/g, '\n  ')}` : ''}`,
				);
			}
			const t = r.timings;
			console.log(
				`[line ${line}] ${r.ok ? 'PASS' : 'FAIL'} — install ${t.install !== undefined ? secs(t.install) : '-'}, ` +
					`n8n start (db + credentials) ${t.start !== undefined ? secs(t.start) : '-'}, node types ${t.nodeTypes !== undefined ? secs(t.nodeTypes) : '-'}, import ${t.import !== undefined ? secs(t.import) : '-'}, ` +
					`execute ${t.execute !== undefined ? secs(t.execute) : '-'}${t.trigger !== undefined ? `, activated trigger ${secs(t.trigger)}` : ''}` +
					`${t.triggerDurable !== undefined ? `, with durable cursors ${secs(t.triggerDurable)}` : ''}, line total ${secs(t.total)}`,
			);
		}
	} finally {
		await emulator?.stop();
		rmSync(tmp, { recursive: true, force: true });
	}

	console.log('\n=== summary ===');
	for (const r of results) {
		console.log(
			`line ${r.line} (${r.version ? `n8n ${r.version}, Node ${r.nodeVersion}` : r.label}): ${r.ok ? 'PASS' : 'FAIL'}${r.why ? ` — ${r.why.split('\n')[0]}` : ''}`,
		);
		for (const w of r.workflows) console.log(`  ${w.ok ? 'PASS' : 'FAIL'} ${w.file}`);
		for (const l of r.triggerLines) console.log(`  ${l}`);
	}
	const all = results.flatMap((r) => r.workflows);
	const passed = all.filter((w) => w.ok).length;
	console.log(`Total time ${secs(Date.now() - t0)}`);
	console.log(`n8n: ${passed} passed, ${all.length - passed} failed`);
	return results.length > 0 && results.every((r) => r.ok) && all.length > 0 ? 0 : 1;
}

main().then(
	(code) => {
		cleanUp();
		process.exit(code);
	},
	(err: unknown) => {
		console.error(err instanceof Error ? (err.stack ?? err.message) : err);
		cleanUp();
		process.exit(1);
	},
);
