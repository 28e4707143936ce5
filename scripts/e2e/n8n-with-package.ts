/**
 * What the agent and MCP runs (agent.ts, mcp.ts) share: n8n 2.x with this package installed as a
 * community package, the service emulator with one extraction to find, one example workflow
 * imported and published, `n8n start` (SQLite, one main instance), and the closing summary.
 */
import path from 'node:path';

import { launchEmulator, type EmulatorProcess } from '../../emulator/launch';
import { makePdf } from '../../emulator/sample-pdf';
import type { RunnerOptions } from '../lib/args';
import { Checks } from '../lib/checks';
import { buildAndPack, installLine, n8nImport } from '../lib/n8n';
import { importFixtures, prepareN8n, type N8nContext } from '../lib/n8n-server';
import { cleanUpNow, removeAtExit, runMain, secs, tail } from '../lib/processes';
import {
	createExtraction as createPdfExtraction,
	DEFAULT_SOURCE,
	loadExample,
	prepareWorkflow,
	type Example,
} from '../n8n/examples';
import { makeRunRoot } from './services';

/**
 * One extraction of a one-page PDF invoice (the seeded Invoice schema), created at the emulator
 * directly.
 *
 * @param lines the invoice's text lines after its title
 * @returns its id
 */
export async function createExtraction(
	emulator: EmulatorProcess,
	documentName: string,
	lines: string[],
): Promise<string> {
	const pdf = await makePdf([[{ text: 'INVOICE', bold: true, size: 20 }, '', ...lines]]);
	return createPdfExtraction(emulator, documentName, pdf);
}

/** What {@link runPublished} gives a run's body. */
export interface Published {
	emulator: EmulatorProcess;
	/** The imported copy of the example. */
	workflow: Example['workflow'];
	ctx: N8nContext;
	/** Records and prints one check (lib/checks.ts). */
	check: Checks['check'];
}

/**
 * The main of a run (runMain, `label`): n8n 2.x (scripts/n8n/install.sh 2) with the packed package,
 * the emulator, the example `exampleFile` imported as it is with the two Extraction Service
 * credentials and `credentials` (more of them, with their data), published (`n8n
 * publish:workflow`) and live: `n8n start`, the owner set up, and n8n reporting the workflow
 * "published". N8N_COMMUNITY_PACKAGES_ALLOW_TOOL_USAGE=true: only then does n8n offer community
 * nodes as tools. Then `body`; then everything stopped, n8n's output printed (all of it with
 * --verbose, its end when a check failed), the checks' summary and the closing line: `okLine` when
 * every check passed and `done`, else `<label>: FAILED (…)`. Exit code 0 only in the first case; a
 * step that throws ends the run with `<label> FAILED: …` (with n8n's output where it has some).
 *
 * @param beforeImport runs once the emulator is up: what the run needs there, and the credentials
 *   the example names that are not the Extraction Service's
 */
export function runPublished(
	label: string,
	opts: RunnerOptions,
	exampleFile: string,
	beforeImport: (
		emulator: EmulatorProcess,
		example: Example,
	) => Promise<{ credentials?: object[] }>,
	body: (run: Published) => Promise<{ done: boolean; okLine: string }>,
): void {
	const main = async (): Promise<number> => {
		const t0 = Date.now();
		const line = await installLine('2', { install: opts.install });
		const { info } = line;
		console.log(
			`n8n ${info.version} ${line.installed ? 'installed now' : 'cached'} (${secs(line.ms)})`,
		);
		const root = makeRunRoot(`n8n-es-${label}-`);
		removeAtExit(root, opts.keep);
		console.log(`Throwaway folder: ${root}${opts.keep ? ' (kept)' : ''}`);
		const { tarball, ms: packMs } = await buildAndPack(root, opts.build);
		console.log(`build + pack: ${secs(packMs)}`);

		const emulator = await launchEmulator({ processingMs: 300, quiet: !opts.verbose });
		const example = loadExample(DEFAULT_SOURCE, exampleFile);
		const { credentials = [] } = await beforeImport(emulator, example);
		const n8n = await prepareN8n(info, path.join(root, 'n8n'), tarball, {
			echo: opts.verbose ? 'n8n| ' : undefined,
			env: { N8N_COMMUNITY_PACKAGES_ALLOW_TOOL_USAGE: 'true' },
		});
		const { ctx } = n8n;
		const workflow = prepareWorkflow(example, DEFAULT_SOURCE, n8n.filesDir, emulator.filesUrl);
		const tSetup = Date.now();
		await importFixtures(ctx, emulator, workflow);
		if (credentials.length)
			await n8nImport(
				ctx.cli,
				'credentials',
				path.join(root, 'more-credentials.json'),
				credentials,
			);
		await n8n.publish(example.id);
		console.log(
			`"${example.name}" and its credentials imported, the workflow published (${secs(Date.now() - tSetup)})`,
		);

		const tStart = Date.now();
		const { server, rest } = await n8n.start(180_000);
		await rest.published(example.id, 120_000).catch((err: Error) => {
			throw new Error(`${err.message}\n${tail(server.output(), 30)}`);
		});
		console.log(
			`n8n ${info.version} started on ${ctx.url}, the workflow published (${secs(Date.now() - tStart)})`,
		);

		const checks = new Checks();
		const check = checks.check.bind(checks);
		const { done, okLine } = await body({ emulator, workflow, ctx, check });
		if (opts.verbose || checks.failed.length > 0)
			console.log(`n8n's output ends:\n${tail(server.output(), opts.verbose ? 200 : 30)}`);
		await server.stop();
		await emulator.stop();
		cleanUpNow();
		const ok = checks.failed.length === 0 && done;
		console.log(`\n${checks.summary(`; whole run ${secs(Date.now() - t0)}`)}`);
		console.log(ok ? okLine : `${label}: FAILED (${checks.failed.map((f) => f.name).join('; ')})`);
		return ok ? 0 : 1;
	};
	runMain(main, {
		label,
		onSignal: (sig) =>
			console.error(`\n${sig}: stopping every server and removing the throwaway folder`),
	});
}
