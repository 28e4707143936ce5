/**
 * The Extraction Service node in a REAL n8n 2.x editor, driven by Debian's Chromium through
 * playwright-core: signs in, opens the node's panels, picks a schema from its Schema list, tests
 * the token credential, and takes the screenshots of docs/images/. The last line is
 * `editor: N passed, M failed` (exit 0 only when every step passed). See scripts/editor/README.md.
 *
 *   npx tsx scripts/editor/run.ts                  # everything (installs what is missing)
 *   npx tsx scripts/editor/run.ts --no-build --keep --verbose
 *
 * Options: --no-install (use the n8n cache as it is, fail if missing), --no-build (use dist/ as it
 * is), --no-screenshots (do not write docs/images/), --screenshots DIR (write them elsewhere),
 * --keep (keep the throwaway n8n user folder), --verbose (print n8n's and the emulator's output),
 * --timeout S (the whole run, default 600).
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { launchEmulator } from '../../emulator/launch';
import { numberFlag, readArgs, RUNNER_FLAGS, runnerOptions } from '../lib/args';
import { buildAndPack, installLine } from '../lib/n8n';
import { OWNER, prepareN8n } from '../lib/n8n-server';
import { cleanUpNow, removeAtExit, ROOT, runMain, secs, tail } from '../lib/processes';
import { runEditorOnServer, setupFailed } from './on-server';
import { editorStepNames, type StepResult } from './steps';

const { values: v } = readArgs(__filename, {
	...RUNNER_FLAGS,
	'no-screenshots': { type: 'boolean' },
	screenshots: { type: 'string' },
	timeout: { type: 'string' },
});
const opts = {
	...runnerOptions(v),
	screenshotsDir: v['no-screenshots']
		? undefined
		: path.resolve(v.screenshots ?? path.join(ROOT, 'docs', 'images')),
	timeoutS: numberFlag('timeout', v.timeout, 600, 1),
};
const log = (line: string): void => console.log(line);
const echo = (prefix: string): string | undefined => (opts.verbose ? prefix : undefined);
/** Aborted on a signal: runEditorOnServer then closes its browser and the steps fail fast. */
const abort = new AbortController();

let closingLinePrinted = false;
/** The one closing line `editor: N passed, M failed` (only the first call prints). */
function printClosingLine(passed: number, failed: number): void {
	if (!closingLinePrinted) console.log(`editor: ${passed} passed, ${failed} failed`);
	closingLinePrinted = true;
}

/**
 * Sets everything up (n8n line 2, the package, the emulator, `n8n start`, the owner) and runs the
 * steps through runEditorOnServer, as against the e2e runner's queue-mode main. What was started
 * is stopped at exit (scripts/lib/processes.ts).
 */
async function runAll(timings: Record<string, number>, deadlineAt: number): Promise<StepResult[]> {
	const timed = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
		const t0 = Date.now();
		const value = await fn();
		timings[name] = Date.now() - t0;
		if (abort.signal.aborted) throw new Error(`stopped: ${String(abort.signal.reason)}`);
		return value;
	};
	try {
		const { info } = await timed('n8n install (cached)', () =>
			installLine('2', { install: opts.install, echo: echo('[install] ') }),
		);
		log(`n8n ${info.version} on ${info.nodeBin}`);
		const userFolder = mkdtempSync(path.join(os.tmpdir(), 'n8n-es-editor-'));
		removeAtExit(userFolder, opts.keep);
		const { tarball, buildMs, n8n } = await timed('pack + install package', async () => {
			const packed = await buildAndPack(userFolder, opts.build);
			const n8nEcho = { echo: echo('[n8n] ') };
			return { ...packed, n8n: await prepareN8n(info, userFolder, packed.tarball, n8nEcho) };
		});
		if (buildMs !== undefined) log(`Build: ok (${secs(buildMs)})`);
		log(`Package: ${path.basename(tarball)} → ${userFolder}`);
		const emulator = await timed('emulator', () =>
			launchEmulator({ processingMs: 2000, quiet: !opts.verbose }),
		);
		log(`Emulator: ${emulator.url}`);
		const { ctx } = n8n;
		const label = 'n8n start (creates the database) + owner setup';
		const { server } = await timed(label, () => n8n.start(180_000));
		log(`n8n: ${ctx.url} ready in ${secs(timings[label])}, owner ${OWNER.email}`);
		const results = await runEditorOnServer(
			{ url: ctx.url, owner: OWNER, cli: ctx.cli, emulator },
			{
				screenshotsDir: opts.screenshotsDir,
				failuresDir: path.join(ROOT, '.tmp', 'editor'),
				verbose: opts.verbose,
				timeoutMs: Math.max(10_000, deadlineAt - Date.now() - 15_000),
				log,
				signal: abort.signal,
				timings,
			},
		);
		if (results.some((r) => !r.ok) && !opts.verbose)
			log(`n8n's last output:\n${tail(server.output(), 15)}`);
		return results;
	} catch (err) {
		return setupFailed(err, log);
	}
}

async function main(): Promise<number> {
	const t0 = Date.now();
	const deadline = setTimeout(() => {
		console.error(`\nThe run took longer than --timeout ${opts.timeoutS} s: stopping everything`);
		printClosingLine(0, editorStepNames().length);
		cleanUpNow();
		process.exit(1);
	}, opts.timeoutS * 1000);
	const timings: Record<string, number> = {};
	const results = await runAll(timings, t0 + opts.timeoutS * 1000).finally(() =>
		clearTimeout(deadline),
	);
	console.log('\n=== editor steps ===');
	for (const r of results) {
		console.log(`${r.ok ? 'PASS' : 'FAIL'} ${r.name}${r.ms ? ` (${secs(r.ms)})` : ''}`);
		if (r.message) console.log(`  ${r.message.replace(/\n/g, '\n  ')}`);
		if (r.failureScreenshot)
			console.log(`  screenshot: ${path.relative(ROOT, r.failureScreenshot)}`);
	}
	const phases = Object.entries(timings).map(([k, ms]) => `${k} ${secs(ms)}`);
	console.log(`Timings: ${phases.join(', ')}`);
	console.log(`Total time ${secs(Date.now() - t0)}`);
	const passed = results.filter((r) => r.ok).length;
	printClosingLine(passed, results.length - passed);
	return passed === results.length && results.length > 0 ? 0 : 1;
}

let finished: Promise<number> | undefined;
runMain(
	() =>
		(finished = main().catch((err: unknown) => {
			printClosingLine(0, editorStepNames().length);
			throw err;
		})),
	{
		label: 'editor',
		onSignal: async (sig) => {
			console.error(`\n${sig}: stopping the browser, n8n and the emulator`);
			abort.abort(`stopped by ${sig}`);
			// the browser closes and the steps fail fast: let main print its report if it can
			const late = new Promise((resolve) => setTimeout(resolve, 25_000).unref());
			await Promise.race([finished, late]);
			printClosingLine(0, editorStepNames().length);
		},
	},
);
