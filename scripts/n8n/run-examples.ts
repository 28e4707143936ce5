/**
 * Runs every workflow of examples/workflows/ in REAL n8n servers (the package installed as n8n
 * installs a community package) against the service emulator, checked by scripts/n8n/checks.ts;
 * after line 2, in `n8n start`: the trigger example activated (trigger-run.ts, also with durable
 * poll cursors) and the Data table example (data-table-run.ts). The last line is
 * `n8n: N passed, M failed`. See scripts/n8n/README.md.
 *
 *   npm run test:n8n                                   # both lines: n8n 1.x on Node 20, 2.x on Node 24
 *   npx tsx scripts/n8n/run-examples.ts --line 2 --workflow extract-invoice.json --keep
 *
 * Options: --line N, --workflow FILE (repeatable), --no-install (use the cache as it is), --no-build,
 * --examples DIR (with workflows/ and files/, to try the runner), --keep (keep the user folders,
 * each run's output in runs/), --processing-ms N (emulator job time, default 2000), --timeout S
 * (per `n8n execute`, default 300), --verbose (n8n's output), --no-trigger (skip the activated
 * trigger runs), --trigger-poll S (10; 60 = Every Minute), --trigger-timeout S (each, default
 * 150 + 6 × poll), --trigger-slow-poll (opt-in, see the README), --no-trigger-durable.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { launchEmulator, type EmulatorProcess } from '../../emulator/launch';
import { numberFlag, readArgs, RUNNER_FLAGS, runnerOptions } from '../lib/args';
import {
	buildAndPack,
	installLine,
	lastJsonDocument,
	PACKAGE_NAME,
	type LineInfo,
} from '../lib/n8n';
import {
	importFixtures,
	prepareN8n,
	type PackagedN8n,
	type ServerRunResult,
} from '../lib/n8n-server';
import { commandError, removeAtExit, runMain, secs } from '../lib/processes';
import { describePatches, newerPatches } from '../lib/n8n-patches';
import { checks } from './checks';
import { DATA_TABLE_FILE, runDataTableExample } from './data-table-run';
import {
	DEFAULT_SOURCE,
	loadExample,
	loadExamples,
	prepareWorkflow,
	requestLine,
	type Example,
} from './examples';
import { describeError, N8nRun, type Json, type N8nRunInfo } from './n8n-run';
import { pollTimesEvery, runActivatedTrigger, TRIGGER_FILE, UPLOAD_FILE } from './trigger-run';

let SOURCE = DEFAULT_SOURCE;

/** Node types `n8n execute` can start from (n8n's findCliWorkflowStart, 1.123 and 2.41). */
const CLI_START_TYPES = [
	'n8n-nodes-base.executeWorkflowTrigger',
	'@n8n/n8n-nodes-langchain.manualChatTrigger',
	'n8n-nodes-base.manualTrigger',
	'n8n-nodes-base.start',
];

/** Examples `n8n execute` does not run although it could start them, and why (they run elsewhere). */
const NOT_BY_CLI: Record<string, string> = {
	[DATA_TABLE_FILE]:
		'Data tables need n8n start (n8n execute loads no backend module); it runs after line 2',
	'e2e-email-review-to-postgres.json':
		'its Execute Workflow Trigger is the review entry the workflow calls itself, once per incomplete document (with no document it has nothing to do); it runs in npm run test:e2e (review phase)',
};

/** Examples for a newer n8n than line 1, and what they need: on line 1 their node types must be missing. */
const NOT_ON_LINE_1: Record<string, string> = {
	'ai-agent-with-approval.json': 'n8n 2.6+ (Chat node 1.3, Chat approval tool)',
};

type Options = ReturnType<typeof parseArgs>;

function parseArgs() {
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
	if (v.examples)
		SOURCE = {
			workflowsDir: path.resolve(v.examples, 'workflows'),
			filesDir: path.resolve(v.examples, 'files'),
		};
	const triggerPollS = numberFlag('trigger-poll', v['trigger-poll'], 10, 1);
	pollTimesEvery(triggerPollS); // throws for an interval that does not divide a minute
	const lines = (v.line ?? ['1', '2']).flatMap((l) => l.split(','));
	for (const l of lines)
		if (l !== '1' && l !== '2') throw new Error(`--line must be 1 or 2, got ${l}`);
	return {
		lines,
		workflows: (v.workflow ?? []).map((w) => path.basename(w)),
		...runnerOptions(v),
		processingMs: numberFlag('processing-ms', v['processing-ms'], 2000),
		timeoutS: numberFlag('timeout', v.timeout, 300, 1),
		trigger: !v['no-trigger'],
		triggerPollS,
		// about six polls (activation, outage, firing, two more) plus setup
		triggerTimeoutS: numberFlag('trigger-timeout', v['trigger-timeout'], 150 + 6 * triggerPollS, 1),
		triggerSlowPoll: v['trigger-slow-poll'] === true,
		triggerDurable: !v['no-trigger-durable'],
	};
}

/** Why `n8n execute` cannot run the example (undefined when it can). */
function whyNotExecutable(example: Example): string | undefined {
	if (NOT_BY_CLI[example.file]) return NOT_BY_CLI[example.file];
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

/** Nodes of the workflow whose type or typeVersion this n8n does not have. */
function unknownTypes(example: Example, known: KnownTypes, version: string): string[] {
	return example.workflow.nodes.flatMap((n) => {
		const versions = known.get(n.type);
		const tv = typeof n.typeVersion === 'number' ? n.typeVersion : 1;
		if (!versions) return [`n8n ${version} has no node type ${n.type} (node "${n.name}")`];
		if (versions.includes(tv)) return [];
		return [
			`n8n ${version} has ${n.type} only in versions ${versions.join(', ')}, node "${n.name}" uses typeVersion ${tv}`,
		];
	});
}

interface WorkflowResult {
	file: string;
	ok: boolean;
	ms?: number;
	/** What `ms` measured (default "execute"). */
	msLabel?: string;
	message?: string;
	/** e.g. "not executed: …" (printed when it passed). */
	note?: string;
}

interface LineResult {
	line: string;
	ok: boolean;
	why?: string;
	nodeVersion?: string;
	timings: Record<string, number>;
	workflows: WorkflowResult[];
	/** The installed line, once install.sh described it. */
	info?: LineInfo;
	/** The result lines of the runs in `n8n start` (`trigger: …`, `data table: …`). */
	resultLines: string[];
}

const LABELS: Record<string, string> = {
	'1': 'n8n 1.x on Node 20 (this machine)',
	'2': 'n8n 2.x on Node 24 (npm package `node`)',
};

/** The emulator's requests from index `from` on (the last 30), for a failure message. */
function describeRequestsSince(emulator: EmulatorProcess, from: number): string {
	const requests = emulator.requests.slice(from).slice(-30);
	if (requests.length === 0) return '\n  (no request reached the emulator)';
	const one = (r: (typeof requests)[number]): string => {
		const body = r.bodyBytes ? `, ${r.contentType?.split(';')[0] ?? 'body'} ${r.bodyBytes} B` : '';
		return `    ${requestLine(r)} (${r.origin}${body})`;
	};
	return `\n  emulator requests during this run:\n${requests.map(one).join('\n')}`;
}

/** A line's user folder with the package installed (its n8n not started: `ctx.cli` runs the examples). */
type LineContext = PackagedN8n & { line: string; opts: Options; emulator: EmulatorProcess };

/** `undefined` when the check passes on `run`, else its message (or that there is none). */
async function failureOf(file: string, run: N8nRun): Promise<string | undefined> {
	if (!checks[file]) return `no check for ${file}: add one to scripts/n8n/checks.ts`;
	try {
		await checks[file](run);
		return undefined;
	} catch (err) {
		return (err as Error).message;
	}
}

/**
 * One example: its node types checked, then `n8n execute --id=… --rawOutput` and its check on the
 * last JSON document of stdout (the IRun), or, when `n8n execute` cannot start it, its check
 * without an execution. A failure message gives the workflow error, n8n's exit code and the
 * emulator's requests of the run.
 */
async function runExample(
	ctx: LineContext,
	example: Example,
	workflow: Example['workflow'],
	known: KnownTypes,
): Promise<WorkflowResult> {
	const { file } = example;
	const { info: n8nInfo, userFolder, cli } = ctx.ctx;
	const typeProblems = unknownTypes(example, known, n8nInfo.version);
	const needs = ctx.line === '1' ? NOT_ON_LINE_1[file] : undefined;
	if (needs)
		return typeProblems.length > 0
			? { file, ok: true, note: `not on n8n ${n8nInfo.version}: needs ${needs}` }
			: { file, ok: false, message: `n8n ${n8nInfo.version} has every node type: run it here` };
	if (typeProblems.length > 0) return { file, ok: false, message: typeProblems.join('\n') };
	const info: Omit<N8nRunInfo, 'raw'> = {
		workflowFile: file,
		line: ctx.line,
		n8nVersion: n8nInfo.version,
		filesDir: ctx.filesDir,
		n8nFolder: path.join(userFolder, '.n8n'),
		emulator: { url: ctx.emulator.url, filesUrl: ctx.emulator.filesUrl },
		workflow,
	};
	const why = whyNotExecutable(example);
	if (why) {
		const note = `not executed: ${why}`;
		const failure = await failureOf(file, new N8nRun({ ...info, raw: {}, notExecuted: why }));
		if (failure === undefined) return { file, ok: true, note };
		return { file, ok: false, message: `${failure} (${note})` };
	}
	const before = ctx.emulator.requests.length;
	const execute = ['execute', `--id=${example.id}`, '--rawOutput'];
	const r = await cli(execute, ctx.opts.timeoutS * 1000);
	if (ctx.opts.keep) {
		const base = path.join(userFolder, 'runs', file.replace(/\.json$/, ''));
		mkdirSync(path.dirname(base), { recursive: true });
		writeFileSync(`${base}.stdout.txt`, r.stdout);
		writeFileSync(`${base}.stderr.txt`, r.stderr);
	}
	const requests = describeRequestsSince(ctx.emulator, before);
	const doc = lastJsonDocument(r.stdout) as Json | undefined;
	if (!doc) {
		const message = `${commandError('n8n execute', r).message}\n  (no JSON document in stdout)${requests}`;
		return { file, ok: false, ms: r.ms, message };
	}
	const run = new N8nRun({ ...info, raw: doc });
	const failure = await failureOf(file, run);
	if (failure === undefined) return { file, ok: true, ms: r.ms };
	const wfError = run.error ? `\n  workflow error: ${describeError(run.error)}` : '';
	const exit = r.code !== 0 ? `\n  n8n execute exit code ${r.code}` : '';
	return { file, ok: false, ms: r.ms, message: `${failure}${wfError}${exit}${requests}` };
}

/**
 * One n8n line: install, a user folder with the package, the credentials (the first n8n command,
 * which also creates the database: "n8n start"), the node types, the workflows imported (a copy of
 * each, see examples.ts), then every example. A failing step fails every workflow of the line.
 */
async function runLine(
	line: string,
	opts: Options,
	examples: Example[],
	tarball: string,
	emulator: EmulatorProcess,
): Promise<LineResult> {
	const result: LineResult = { line, ok: false, timings: {}, workflows: [], resultLines: [] };
	const userFolder = mkdtempSync(path.join(os.tmpdir(), `n8n-es-line${line}-`));
	removeAtExit(userFolder, opts.keep);
	try {
		const flags = opts.install ? '' : '--no-install ';
		console.log(`[line ${line}] install: bash scripts/n8n/install.sh ${flags}${line}`);
		const { info, ms } = await installLine(line, {
			install: opts.install,
			echo: `[line ${line}]   `,
		});
		result.timings.install = ms;
		result.info = info;
		result.nodeVersion = spawnSync(info.nodeBin, ['--version'], { encoding: 'utf8' }).stdout.trim();
		const lineEnv = Object.entries(info.env).map(([k, v]) => `${k}=${v}`);
		console.log(
			`[line ${line}] n8n ${info.version} on Node ${result.nodeVersion} (${info.dir})${lineEnv.length ? `, with ${lineEnv.join(' ')}` : ''}`,
		);
		const echo = opts.verbose ? `[line ${line}] n8n| ` : undefined;

		const packaged = await prepareN8n(info, userFolder, tarball, { echo });
		const ctx: LineContext = Object.assign(packaged, { line, opts, emulator });
		const n8n = ctx.ctx.cli;
		const imported = await importFixtures(ctx.ctx, emulator);
		result.timings['n8n start (db + credentials)'] = imported.credentialsMs;

		const typesFile = path.join(userFolder, 'node-types.json');
		const t = await n8n(['export:nodes', `--output=${typesFile}`]);
		result.timings['node types'] = t.ms;
		if (t.code !== 0 || !existsSync(typesFile)) throw commandError('n8n export:nodes', t);
		const known: KnownTypes = new Map();
		const list = JSON.parse(readFileSync(typesFile, 'utf8')) as Array<{
			name: string;
			version: number | number[];
		}>;
		for (const d of list) known.set(d.name, [...(known.get(d.name) ?? []), ...[d.version].flat()]);
		const ours = [...known.keys()].filter((k) => k.startsWith(`${PACKAGE_NAME}.`));
		console.log(
			`[line ${line}] n8n loaded the package: ${ours.join(', ') || 'NO node type of it'}`,
		);
		if (ours.length === 0)
			throw new Error(
				`n8n ${info.version} did not load ${PACKAGE_NAME} from ${userFolder}/.n8n/nodes`,
			);

		const wfDir = path.join(userFolder, 'workflows');
		mkdirSync(wfDir);
		const copies = examples.map((e) => prepareWorkflow(e, SOURCE, ctx.filesDir, emulator.filesUrl));
		for (const [i, e] of examples.entries())
			writeFileSync(path.join(wfDir, `${e.id}.json`), JSON.stringify(copies[i], null, 2));
		if (examples.length > 0) {
			const w = await n8n(['import:workflow', '--separate', `--input=${wfDir}`]);
			result.timings.import = w.ms;
			if (w.code !== 0) throw commandError('n8n import:workflow', w);
		}

		result.timings.execute = 0;
		for (const [i, e] of examples.entries()) {
			const wr = await runExample(ctx, e, copies[i], known);
			result.workflows.push(wr);
			result.timings.execute += wr.ms ?? 0;
		}
		result.ok = result.workflows.every((w) => w.ok);
	} catch (err) {
		result.why = (err as Error).message;
		const message = `line ${line} did not run: ${result.why.split('\n')[0]}`;
		result.workflows = examples.map((e) => ({ file: e.file, ok: false, message }));
	} finally {
		if (opts.keep) console.log(`[line ${line}] kept user folder ${userFolder}`);
		else rmSync(userFolder, { recursive: true, force: true });
	}
	return result;
}

/** The runs in `n8n start` after line 2, each one more result of that line. */
async function addServerRuns(r: LineResult, opts: Options, tarball: string): Promise<void> {
	const has = (file: string): boolean => existsSync(path.join(SOURCE.workflowsDir, file));
	const wanted = (file: string): boolean =>
		opts.workflows.length > 0 ? opts.workflows.includes(file) : has(file);
	const { keep, verbose } = opts;
	const common = { info: r.info!, tarball, source: SOURCE, keep, verbose };
	const trigger = (durable: boolean) => () =>
		runActivatedTrigger({
			...common,
			upload: loadExample(SOURCE, UPLOAD_FILE),
			trigger: loadExample(SOURCE, TRIGGER_FILE),
			pollSeconds: opts.triggerPollS,
			slowPoll: opts.triggerSlowPoll,
			durable,
			timeoutS: opts.triggerTimeoutS,
		});
	const runs: Array<[file: string, timing: string, run: () => Promise<ServerRunResult>]> = [];
	if (opts.trigger && wanted(TRIGGER_FILE) && has(UPLOAD_FILE)) {
		runs.push([`${TRIGGER_FILE} (activated in n8n start)`, 'activated trigger', trigger(false)]);
		if (opts.triggerDurable)
			runs.push([
				`${TRIGGER_FILE} (activated in n8n start, durable cursors)`,
				'with durable cursors',
				trigger(true),
			]);
	}
	if (wanted(DATA_TABLE_FILE)) {
		const example = loadExample(SOURCE, DATA_TABLE_FILE);
		const run = () => runDataTableExample({ ...common, example });
		runs.push([`${DATA_TABLE_FILE} (in n8n start)`, 'data table', run]);
	}
	for (const [file, timing, run] of runs) {
		if (!r.info) {
			const message = `line 2 is not installed: ${r.why?.split('\n')[0] ?? ''}`;
			r.workflows.push({ file, ok: false, message });
			r.ok = false;
			continue;
		}
		console.log(`[line 2] ${file}`);
		const t = await run();
		r.timings[timing] = t.ms;
		if (t.line) {
			r.resultLines.push(t.line);
			console.log(t.line);
		}
		const note = describeTimings(t.timings);
		r.workflows.push({ file, ok: t.ok, ms: t.ms, msLabel: 'run', note, message: t.message });
		r.ok = r.ok && t.ok;
	}
}

/** The line's timings in one line (the phases it got to). */
function describeTimings(t: Record<string, number>): string {
	return Object.entries(t)
		.map(([phase, ms]) => `${phase} ${secs(ms)}`)
		.join(', ');
}

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
	let emulator: EmulatorProcess | undefined;
	const results: LineResult[] = [];
	try {
		const { tarball, buildMs } = await buildAndPack(tmp, opts.build);
		if (buildMs !== undefined) console.log(`Build: ok (${secs(buildMs)})`);
		console.log(`Package: ${path.basename(tarball)}`);
		const emulatorT0 = Date.now();
		emulator = await launchEmulator({ processingMs: opts.processingMs });
		console.log(
			`Emulator: ${emulator.url} (files ${emulator.filesUrl}), ready in ${secs(Date.now() - emulatorT0)}`,
		);
		for (const line of opts.lines) {
			console.log(`\n=== line ${line}: ${LABELS[line]} ===`);
			const lt0 = Date.now();
			const r = await runLine(line, opts, examples, tarball, emulator);
			if (line === '2') await addServerRuns(r, opts, tarball);
			r.timings['line total'] = Date.now() - lt0;
			results.push(r);
			if (r.why) console.log(`[line ${line}] FAILED: ${r.why}`);
			for (const w of r.workflows) {
				const ms = w.ms !== undefined ? ` (${w.msLabel ?? 'execute'} ${secs(w.ms)})` : '';
				const note = w.ok && w.note ? ` (${w.note})` : '';
				const message = w.message ? `\n  ${w.message.replace(/\n/g, '\n  ')}` : '';
				console.log(`[line ${line}] ${w.ok ? 'PASS' : 'FAIL'} ${w.file}${ms}${note}${message}`);
			}
			console.log(`[line ${line}] ${r.ok ? 'PASS' : 'FAIL'} — ${describeTimings(r.timings)}`);
		}
	} finally {
		await emulator?.stop();
		rmSync(tmp, { recursive: true, force: true });
	}

	console.log('\n=== summary ===');
	for (const r of results) {
		console.log(
			`line ${r.line} (${r.info ? `n8n ${r.info.version}, Node ${r.nodeVersion}` : LABELS[r.line]}): ${r.ok ? 'PASS' : 'FAIL'}${r.why ? ` — ${r.why.split('\n')[0]}` : ''}`,
		);
		for (const w of r.workflows) console.log(`  ${w.ok ? 'PASS' : 'FAIL'} ${w.file}`);
		for (const l of r.resultLines) console.log(`  ${l}`);
		// Issue 33: whether a newer patch of this line installs now (a notice, not a failure).
		if (r.info) {
			const current = r.info.version;
			const notice = await newerPatches(current).then(
				(patches) => describePatches(current, patches),
				(error: unknown) =>
					`could not check for newer patches of n8n ${current}: ${error instanceof Error ? error.message : String(error)}`,
			);
			console.log(`  ${notice}`);
		}
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
