/**
 * The Extraction Service node in a REAL n8n 2.x editor, driven by Debian's Chromium through
 * playwright-core: signs in, opens a workflow, picks a schema from the node's Schema list, tests the
 * token credential, and takes the screenshots of docs/images/.
 *
 *   npx tsx scripts/editor/run.ts                  # everything (installs what is missing)
 *   npx tsx scripts/editor/run.ts --no-build --keep --verbose
 *
 * Options: --no-install (use the n8n cache as it is, fail if missing), --no-build (use dist/ as it
 * is), --no-screenshots (do not write docs/images/), --screenshots DIR (write them elsewhere),
 * --keep (keep the throwaway n8n user folder), --verbose (print n8n's and the emulator's output),
 * --timeout S (the whole run, default 600).
 *
 * What it does: n8n line 2 (scripts/n8n/install.sh 2, cached) → `npm run build`, `npm pack`, the
 * package unpacked into a throwaway N8N_USER_FOLDER as n8n's community package installer does → the
 * service emulator (emulator/launch.ts) → `n8n start` (SQLite) on a free loopback port → the owner
 * account (POST /rest/owner/setup) → runEditorOnServer (scripts/editor/on-server.ts, the same
 * function scripts/e2e/run.ts calls with its queue-mode main): credentials and
 * test/editor/workflow.json imported with the n8n CLI into the running server, Chromium
 * (`apt-get install -y chromium` when /usr/bin/chromium is missing) and playwright-core, the
 * browser steps of scripts/editor/steps.ts. The server, the emulator and the browser are always
 * stopped; failure screenshots go to .tmp/editor/. The last line is `editor: N passed, M failed`; the exit code is 0 only when every
 * step passed. See scripts/editor/README.md.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { launchEmulator, type EmulatorProcess } from '../../emulator/launch';
import { editorStepNames, type StepResult } from './steps';
import { numberFlag, readArgs, RUNNER_FLAGS, runnerOptions, type RunnerOptions } from '../lib/args';
import { buildAndPack, installLine, installPackageInto } from '../lib/n8n';
import {
	cleanUpNow,
	removeAtExit,
	ROOT,
	runMain,
	secs,
	tail,
	type Service,
} from '../lib/processes';
import { createContext, OWNER, setupOwner, startServer } from './n8n';
import { runEditorOnServer, setupFailed } from './on-server';

const FAILURES_DIR = path.join(ROOT, '.tmp', 'editor');
/** The n8n line the editor test runs on (n8n 2.x on Node 24; see scripts/n8n/README.md). */
const LINE = '2';

interface Options extends RunnerOptions {
	screenshotsDir?: string;
	timeoutS: number;
}

/** Reads the command line (scripts/lib/args.ts). */
function parseArgs(): Options {
	const { values: v } = readArgs(__filename, {
		...RUNNER_FLAGS,
		'no-screenshots': { type: 'boolean' },
		screenshots: { type: 'string' },
		timeout: { type: 'string' },
	});
	return {
		...runnerOptions(v),
		screenshotsDir: v['no-screenshots']
			? undefined
			: path.resolve(v.screenshots ?? path.join(ROOT, 'docs', 'images')),
		timeoutS: numberFlag('timeout', v.timeout, 600, 1),
	};
}

const log = (line: string): void => console.log(line);
const prefixed = (prefix: string, on: boolean): string | undefined => (on ? prefix : undefined);

/** Resolves with `promise`, or rejects after `ms` saying what did not finish. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	return Promise.race([
		promise.finally(() => clearTimeout(timer)),
		new Promise<never>((_, reject) => {
			timer = setTimeout(() => reject(new Error(`${what} did not finish within ${secs(ms)}`)), ms);
		}),
	]);
}

/** Everything started for the run, stopped in `stopAll` whatever happened. */
interface Running {
	/** Set by a signal: setup stops at its next phase. */
	stopping?: NodeJS.Signals;
	emulator?: EmulatorProcess;
	server?: Service;
	/** Aborted on a signal: runEditorOnServer then closes its browser. */
	abort: AbortController;
	/** runEditorOnServer, while it runs (it closes the browser before it resolves). */
	editor?: Promise<StepResult[]>;
}

/** Stops the browser (through runEditorOnServer), the n8n server and the emulator (each bounded in time). */
async function stopAll(running: Running): Promise<void> {
	running.abort.abort(new Error(running.stopping ? `stopped by ${running.stopping}` : 'stopping'));
	await within<unknown>(running.editor ?? Promise.resolve(), 25_000, 'closing the browser').catch(
		(err: Error) => log(`warning: ${err.message}`),
	);
	await within(running.server?.stop(10_000) ?? Promise.resolve(), 20_000, 'stopping n8n').catch(
		(err: Error) => log(`warning: ${err.message}`),
	);
	await within(
		running.emulator?.stop() ?? Promise.resolve(),
		15_000,
		'stopping the emulator',
	).catch((err: Error) => log(`warning: ${err.message}`));
}

/** Sets everything up and runs the steps; the steps' results (all "not run" when setup failed). */
async function runAll(
	opts: Options,
	running: Running,
	timings: Record<string, number>,
	deadlineAt: number,
): Promise<StepResult[]> {
	const mark = (name: string, t0: number): void => {
		timings[name] = Date.now() - t0;
		if (running.stopping) throw new Error(`stopped by ${running.stopping}`);
	};
	try {
		let t0 = Date.now();
		const { info } = await installLine(LINE, {
			install: opts.install,
			echo: prefixed('[install] ', opts.verbose),
		});
		mark('n8n install (cached)', t0);
		log(`n8n ${info.version} on ${info.nodeBin}`);

		t0 = Date.now();
		const tmp = mkdtempSync(path.join(os.tmpdir(), 'n8n-es-editor-pack-'));
		removeAtExit(tmp);
		const { tarball, buildMs } = await buildAndPack(tmp, opts.build);
		if (buildMs !== undefined) log(`Build: ok (${secs(buildMs)})`);
		const userFolder = mkdtempSync(path.join(os.tmpdir(), 'n8n-es-editor-'));
		removeAtExit(userFolder, opts.keep);
		await installPackageInto(userFolder, tarball);
		mark('pack + install package', t0);
		log(`Package: ${path.basename(tarball)} → ${userFolder}`);

		t0 = Date.now();
		running.emulator = await launchEmulator({ processingMs: 2000, quiet: !opts.verbose });
		mark('emulator', t0);
		log(`Emulator: ${running.emulator.url}`);

		const ctx = await createContext(info, userFolder, prefixed('[n8n cli] ', opts.verbose));
		running.server = await startServer(ctx, 180_000, prefixed('[n8n] ', opts.verbose));
		mark(
			'n8n start (creates the database)',
			Date.now() - (running.server as Service & { ms: number }).ms,
		);
		log(`n8n: ${ctx.url} ready in ${secs(timings['n8n start (creates the database)'])}`);
		t0 = Date.now();
		await setupOwner(ctx.url, OWNER);
		mark('owner setup', t0);
		log(`Owner: ${OWNER.email}`);

		// the same path as against the e2e runner's queue-mode main: import into the running server, browser, steps
		running.editor = runEditorOnServer(
			{
				url: ctx.url,
				owner: { email: OWNER.email, password: OWNER.password },
				cli: ctx.cli,
				emulator: running.emulator,
			},
			{
				screenshotsDir: opts.screenshotsDir,
				failuresDir: FAILURES_DIR,
				verbose: opts.verbose,
				timeoutMs: Math.max(10_000, deadlineAt - Date.now() - 15_000),
				log,
				signal: running.abort.signal,
				timings,
			},
		);
		const results = await running.editor;
		if (results.some((r) => !r.ok) && !opts.verbose)
			log(`n8n's last output:\n${tail(running.server.output(), 15)}`);
		return results;
	} catch (err) {
		return setupFailed(err, log);
	}
}

let closingLinePrinted = false;

/** Prints the one closing line `editor: N passed, M failed` (only the first call prints). */
function printClosingLine(passed: number, failed: number): void {
	if (closingLinePrinted) return;
	closingLinePrinted = true;
	console.log(`editor: ${passed} passed, ${failed} failed`);
}

const running: Running = { abort: new AbortController() };
let mainDone: () => void = () => undefined;
const mainFinished = new Promise<void>((resolve) => (mainDone = resolve));

async function main(): Promise<number> {
	const opts = parseArgs();
	const t0 = Date.now();
	const deadline = setTimeout(() => {
		console.error(`\nThe run took longer than --timeout ${opts.timeoutS} s: stopping everything`);
		printClosingLine(0, editorStepNames().length);
		cleanUpNow();
		process.exit(1);
	}, opts.timeoutS * 1000);

	const timings: Record<string, number> = {};
	let results: StepResult[];
	try {
		results = await runAll(opts, running, timings, t0 + opts.timeoutS * 1000);
	} finally {
		const s0 = Date.now();
		await stopAll(running);
		timings.stop = Date.now() - s0;
		clearTimeout(deadline);
	}

	console.log('\n=== editor steps ===');
	for (const r of results) {
		console.log(`${r.ok ? 'PASS' : 'FAIL'} ${r.name}${r.ms ? ` (${secs(r.ms)})` : ''}`);
		if (r.message) console.log(`  ${r.message.replace(/\n/g, '\n  ')}`);
		if (r.failureScreenshot)
			console.log(`  screenshot: ${path.relative(ROOT, r.failureScreenshot)}`);
	}
	console.log(
		`Timings: ${Object.entries(timings)
			.map(([k, v]) => `${k} ${secs(v)}`)
			.join(', ')}`,
	);
	console.log(`Total time ${secs(Date.now() - t0)}`);
	const passed = results.filter((r) => r.ok).length;
	printClosingLine(passed, results.length - passed);
	mainDone();
	return passed === results.length && results.length > 0 ? 0 : 1;
}

runMain(
	() =>
		main().catch((err: unknown) => {
			printClosingLine(0, editorStepNames().length);
			throw err;
		}),
	{
		label: 'editor',
		onSignal: async (sig) => {
			console.error(`\n${sig}: stopping the browser, n8n and the emulator`);
			running.stopping = sig;
			await stopAll(running);
			// the steps fail fast once the browser is gone: let main print its report if it can
			await Promise.race([
				mainFinished,
				new Promise((resolve) => setTimeout(resolve, 5000).unref()),
			]);
			printClosingLine(0, editorStepNames().length);
		},
	},
);
