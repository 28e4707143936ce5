/**
 * Runs every workflow of examples/workflows/ in REAL n8n servers, with this package installed the
 * way n8n installs a community package, against the service emulator, and checks the outputs with
 * scripts/n8n/checks.ts.
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
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { LoggedRequest } from '../../emulator';
import { launchEmulator, type EmulatorProcess } from '../../emulator/launch';
import { numberFlag, readArgs, RUNNER_FLAGS, runnerOptions, type RunnerOptions } from '../lib/args';
import {
	API_CREDENTIAL,
	buildAndPack,
	installLine,
	installPackageInto,
	lastJsonDocument,
	n8nCli,
	n8nEnv,
	n8nImport,
	PACKAGE_NAME,
	TOKEN_CREDENTIAL,
	type LineInfo,
} from '../lib/n8n';
import { freePort } from '../lib/ports';
import { commandError, removeAtExit, runMain, secs, type Done } from '../lib/processes';
import { checks } from './checks';
import {
	DEFAULT_SOURCE,
	loadExample,
	loadExamples,
	prepareWorkflow,
	type Example,
	type ExampleSource,
} from './examples';
import { N8nRun, type Json, type N8nRunInfo } from './n8n-run';
import { pollTimesEvery, runActivatedTrigger, TRIGGER_FILE, UPLOAD_FILE } from './trigger-run';

let SOURCE: ExampleSource = DEFAULT_SOURCE;

/** Node types `n8n execute` can start from (n8n's findCliWorkflowStart, 1.123 and 2.41). */
const CLI_START_TYPES = [
	'n8n-nodes-base.executeWorkflowTrigger',
	'@n8n/n8n-nodes-langchain.manualChatTrigger',
	'n8n-nodes-base.manualTrigger',
	'n8n-nodes-base.start',
];

// ---------------------------------------------------------------------------------------------
// options

interface Options extends RunnerOptions {
	lines: string[];
	workflows: string[];
	processingMs: number;
	timeoutS: number;
	/** The activated trigger run after line 2 (trigger-run.ts). */
	trigger: boolean;
	triggerPollS: number;
	triggerTimeoutS: number;
	/** Opt-in: a poll slower than the interval (fails with n8n 2.41 today, see the README). */
	triggerSlowPoll: boolean;
	/** The activated trigger run once more with n8n's durable poll cursors on (default; --no-trigger-durable skips it). */
	triggerDurable: boolean;
}

/** Reads the command line (scripts/lib/args.ts). */
function parseArgs(): Options {
	const { values: v } = readArgs(__filename, {
		line: { type: 'string', multiple: true },
		workflow: { type: 'string', multiple: true },
		examples: { type: 'string' },
		...RUNNER_FLAGS,
		'processing-ms': { type: 'string' },
		timeout: { type: 'string' },
		'no-trigger': { type: 'boolean' },
		'trigger-poll': { type: 'string' },
		'trigger-timeout': { type: 'string' },
		'trigger-slow-poll': { type: 'boolean' },
		'no-trigger-durable': { type: 'boolean' },
	});
	if (v.examples) {
		// another examples folder (with workflows/ and files/), for trying the runner itself
		SOURCE = {
			workflowsDir: path.resolve(v.examples, 'workflows'),
			filesDir: path.resolve(v.examples, 'files'),
		};
	}
	const triggerPollS = numberFlag('trigger-poll', v['trigger-poll'], 10, 1);
	const o: Options = {
		lines: (v.line ?? []).flatMap((l) => l.split(',')),
		workflows: (v.workflow ?? []).map((w) => path.basename(w)),
		...runnerOptions(v),
		processingMs: numberFlag('processing-ms', v['processing-ms'], 2000),
		timeoutS: numberFlag('timeout', v.timeout, 300, 1),
		trigger: !v['no-trigger'],
		triggerPollS,
		// the trigger run waits for about six polls (activation, outage, firing, two more) plus setup
		triggerTimeoutS: numberFlag('trigger-timeout', v['trigger-timeout'], 150 + 6 * triggerPollS, 1),
		triggerSlowPoll: v['trigger-slow-poll'] === true,
		triggerDurable: !v['no-trigger-durable'],
	};
	pollTimesEvery(o.triggerPollS); // throws for an interval that does not divide a minute
	if (o.lines.length === 0) o.lines = ['1', '2'];
	for (const l of o.lines)
		if (l !== '1' && l !== '2') throw new Error(`--line must be 1 or 2, got ${l}`);
	return o;
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
	console.log(
		`[line ${line}] install: bash scripts/n8n/install.sh ${opts.install ? '' : '--no-install '}${line}`,
	);
	const { info, ms } = await installLine(line, {
		install: opts.install,
		echo: `[line ${line}]   `,
	});
	result.timings.install = ms;
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
	removeAtExit(userFolder, opts.keep);
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
	const env = n8nEnv({ line: info, ...folder, brokerPort: await freePort() });
	const n8n = n8nCli(
		info,
		folder.userFolder,
		env,
		opts.verbose ? `[line ${line}] n8n| ` : undefined,
	);
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
	const c = await n8nImport(ctx.n8n, 'credentials', path.join(ctx.userFolder, 'credentials.json'), [
		{ ...API_CREDENTIAL, data: { baseUrl: url, apiKey } },
		{ ...TOKEN_CREDENTIAL, data: { baseUrl: url, token } },
	]);
	result.timings.start = c.ms;
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
	if (t.code !== 0 || !existsSync(typesFile)) throw commandError('n8n export:nodes', t);
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
		if (w.code !== 0) throw commandError('n8n import:workflow', w);
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
		wr.message = `no check for ${example.file}: add one to scripts/n8n/checks.ts (the workflow is not executed: ${why})`;
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
	const doc = lastJsonDocument(r.stdout) as Json | undefined;
	if (!doc) {
		wr.message = `${commandError('n8n execute', r).message}\n  (no JSON document in stdout)${describeRequestsSince(ctx.emulator, before)}`;
		return wr;
	}
	const check = checks[example.file];
	if (!check) {
		const err = (doc.data as { resultData?: { error?: { message?: string } } } | undefined)
			?.resultData?.error;
		wr.message = `no check for ${example.file}: add one to scripts/n8n/checks.ts${err ? ` (and the run failed: ${err.message ?? ''})` : ''}`;
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
	const opts = parseArgs();
	const t0 = Date.now();
	const examples = loadExamples(SOURCE, opts.workflows);
	console.log(
		`Example workflows: ${examples.map((e) => `${e.file} (id ${e.id})`).join(', ') || 'none'}`,
	);
	const unchecked = examples.filter((e) => !checks[e.file]).map((e) => e.file);
	if (unchecked.length)
		console.log(`Without a check in scripts/n8n/checks.ts (will fail): ${unchecked.join(', ')}`);

	const tmp = mkdtempSync(path.join(os.tmpdir(), 'n8n-es-pack-'));
	removeAtExit(tmp);
	const emulatorT0 = Date.now();
	let emulator: EmulatorProcess | undefined;
	const results: LineResult[] = [];
	try {
		const { tarball, buildMs } = await buildAndPack(tmp, opts.build);
		if (buildMs !== undefined) console.log(`Build: ok (${secs(buildMs)})`);
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

runMain(main, {
	label: 'test:n8n',
	onSignal: (sig) => console.error(`\n${sig}: stopping the emulator and n8n`),
});
