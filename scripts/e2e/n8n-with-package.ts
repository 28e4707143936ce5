/**
 * What the agent and MCP runs (agent.ts, mcp.ts) share: n8n 2.x with this package installed as a
 * community package, the service emulator with one extraction to find, one example workflow
 * imported and published, `n8n start` (SQLite, one main instance), and the closing summary.
 */
import path from 'node:path';

import type { LoggedRequest } from '../../emulator';
import { launchEmulator, type EmulatorProcess } from '../../emulator/launch';
import { makePdf } from '../../emulator/sample-pdf';
import {
	createContext,
	importFixtures,
	OWNER,
	setupOwner,
	startServer,
	type N8nContext,
} from '../editor/n8n';
import type { RunnerOptions } from '../lib/args';
import type { Checks } from '../lib/checks';
import { buildAndPack, installLine, installPackageInto, n8nImport } from '../lib/n8n';
import {
	cleanUpNow,
	commandError,
	removeAtExit,
	secs,
	tail,
	waitUntil,
	type Service,
} from '../lib/processes';
import {
	DEFAULT_SOURCE,
	loadExample,
	prepareWorkflow,
	SEEDED_INVOICE_SCHEMA,
	type Example,
} from '../n8n/examples';
import { makeRunRoot } from './services';

export interface Published {
	emulator: EmulatorProcess;
	/** The imported copy of the example. */
	workflow: Example['workflow'];
	ctx: N8nContext;
	server: Service;
	/** When the run started (Date.now()). */
	t0: number;
	/** Stops n8n and the emulator and removes the throwaway folder. */
	stop(): Promise<void>;
}

/** An emulator request in one line: `GET /extract/?search=x → 200`. */
export const requestLine = (q: LoggedRequest): string => {
	const query = new URLSearchParams(q.query as Record<string, string>).toString();
	return `${q.method} ${q.path}${query ? `?${query}` : ''} → ${q.status}`;
};

/**
 * One extraction of a one-page PDF invoice (the seeded Invoice schema), created at the emulator
 * directly (`§unversioned-4.1`).
 *
 * @param lines the invoice's text lines after its title
 * @returns its id
 * @throws Error when the emulator does not answer 201 with an id
 */
export async function createExtraction(
	emulator: EmulatorProcess,
	documentName: string,
	lines: string[],
): Promise<string> {
	const pdf = await makePdf([[{ text: 'INVOICE', bold: true, size: 20 }, '', ...lines]]);
	const form = new FormData();
	form.append(
		'document',
		new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }),
		documentName,
	);
	form.append('server', 'EU-1');
	form.append('schema', SEEDED_INVOICE_SCHEMA);
	const res = await fetch(`${emulator.url}/extract/`, {
		method: 'POST',
		headers: { authorization: emulator.token },
		body: form,
		signal: AbortSignal.timeout(30_000),
	});
	const body = (await res.json()) as { id?: string };
	if (res.status !== 201 || !body.id)
		throw new Error(
			`creating the extraction at the emulator: ${res.status} ${JSON.stringify(body).slice(0, 300)}`,
		);
	return body.id;
}

/**
 * n8n 2.x (scripts/n8n/install.sh 2) with the packed package, the emulator, the example
 * `exampleFile` imported as it is with the two Extraction Service credentials and `credentials`
 * (more of them, with their data), published (`n8n publish:workflow`) and live: `n8n start`, the
 * owner set up, and n8n reporting the workflow "published" (2.41 activates published workflows
 * through an outbox consumed after start, so its production URLs come some time after ready).
 * N8N_COMMUNITY_PACKAGES_ALLOW_TOOL_USAGE=true: only then does n8n offer community nodes as tools.
 *
 * @param beforeImport runs once the emulator is up: what the run needs there, and the credentials
 *   the example names that are not the Extraction Service's
 * @throws Error when a step fails (with n8n's output where it has some)
 */
export async function startPublished(
	label: string,
	opts: RunnerOptions,
	exampleFile: string,
	beforeImport: (
		emulator: EmulatorProcess,
		example: Example,
	) => Promise<{ credentials?: object[] }>,
): Promise<Published> {
	const t0 = Date.now();
	const n8n = await installLine('2', { install: opts.install });
	console.log(
		`n8n ${n8n.info.version} ${n8n.installed ? 'installed now' : 'cached'} (${secs(n8n.ms)})`,
	);
	const root = makeRunRoot(`n8n-es-${label}-`);
	removeAtExit(root, opts.keep);
	console.log(`Throwaway folder: ${root}${opts.keep ? ' (kept)' : ''}`);
	const { tarball, ms: packMs } = await buildAndPack(root, opts.build);
	console.log(`build + pack: ${secs(packMs)}`);

	const emulator = await launchEmulator({ processingMs: 300, quiet: !opts.verbose });
	const example = loadExample(DEFAULT_SOURCE, exampleFile);
	const { credentials = [] } = await beforeImport(emulator, example);
	const userFolder = path.join(root, 'n8n');
	const workflow = prepareWorkflow(
		example,
		DEFAULT_SOURCE,
		path.join(userFolder, 'files'),
		emulator.filesUrl,
	);
	const echo = opts.verbose ? 'n8n| ' : undefined;
	const ctx = await createContext(n8n.info, userFolder, echo);
	ctx.env.N8N_COMMUNITY_PACKAGES_ALLOW_TOOL_USAGE = 'true';
	await installPackageInto(userFolder, tarball);
	const tSetup = Date.now();
	await importFixtures(ctx, emulator, workflow);
	if (credentials.length)
		await n8nImport(ctx.cli, 'credentials', path.join(root, 'more-credentials.json'), credentials);
	const published = await ctx.cli(['publish:workflow', `--id=${example.id}`]);
	if (published.code !== 0) throw commandError('n8n publish:workflow', published);
	console.log(
		`"${example.name}" and its credentials imported, the workflow published (${secs(Date.now() - tSetup)})`,
	);

	const tStart = Date.now();
	const server = await startServer(ctx, 180_000, echo);
	const cookie = await setupOwner(ctx.url, OWNER);
	let status = '';
	const statusUrl = `${ctx.url}/rest/workflows/${example.id}/publication-status`;
	await waitUntil('n8n to report the workflow "published"', 120_000, async () => {
		const res = await fetch(statusUrl, {
			headers: { cookie },
			signal: AbortSignal.timeout(30_000),
		});
		status = `${res.status} ${await res.text()}`;
		return /"status":"published"/.test(status) ? status : undefined;
	}).catch((err: Error) => {
		throw new Error(`${err.message}; last: ${status.slice(0, 300)}\n${tail(server.output(), 30)}`);
	});
	console.log(
		`n8n ${n8n.info.version} started on ${ctx.url}, the workflow published (${secs(Date.now() - tStart)})`,
	);
	return {
		emulator,
		workflow,
		ctx,
		server,
		t0,
		stop: async () => {
			await server.stop();
			await emulator.stop();
			cleanUpNow();
		},
	};
}

/**
 * Stops everything, prints n8n's output (all of it with --verbose, its end when a check failed),
 * the checks' summary and the closing line: `okLine` when every check passed and `done`, else
 * `<label>: FAILED (…)`.
 *
 * @returns the exit code (0 only when every check passed and `done`)
 */
export async function finish(
	run: Published,
	checks: Checks,
	opts: RunnerOptions,
	label: string,
	done: boolean,
	okLine: string,
): Promise<number> {
	if (opts.verbose || checks.failed.length > 0)
		console.log(`n8n's output ends:\n${tail(run.server.output(), opts.verbose ? 200 : 30)}`);
	await run.stop();
	const ok = checks.failed.length === 0 && done;
	console.log(`\n${checks.summary(`; whole run ${secs(Date.now() - run.t0)}`)}`);
	console.log(ok ? okLine : `${label}: FAILED (${checks.failed.map((f) => f.name).join('; ')})`);
	return ok ? 0 : 1;
}
