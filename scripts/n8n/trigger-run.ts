/**
 * The trigger example ACTIVATED in a running n8n 2.x server (not `n8n execute`, which cannot start a
 * polling trigger): examples/workflows/trigger-finished-extractions.json, with
 * upload-without-waiting.json creating the jobs it waits for. Called by run-examples.ts after line 2
 * (`--no-trigger` skips it); checked by trigger-check.ts. See scripts/n8n/README.md.
 *
 * 1. An emulator in this process (emulator/index.ts: its faults and logs are needed), n8n line 2 in
 *    a throwaway user folder with the package installed (scripts/editor/n8n.ts, the editor test's
 *    server launcher), both workflows and the credentials imported, the trigger workflow published
 *    (`n8n publish:workflow`, 2.x's `update:workflow --active=true`) before `n8n start`. Its Poll
 *    Times become one custom cron per 10 s (see pollTimesEvery).
 * 2. Before the activation: extractions created and FINISHED (with and without the key). They must
 *    never fire.
 * 3. `n8n start`, the owner set up over REST; the activation poll is seen at the emulator.
 * 4. Jobs created after the activation: the upload workflow run on the server
 *    (POST /rest/workflows/:id/run: two extractions with `batch`), one slow extraction (pending over
 *    several polls), one that ends ERROR and one without the key (neither may fire).
 * 5. A failing poll: right after a poll, four 503s are queued for `GET /extract/` (the first request
 *    and its three retries), and two more jobs are created during the outage.
 *    5b. Opt-in (`slowPoll`, the runner's --trigger-slow-poll): one poll slower than the interval,
 *    two jobs finished just before it. Fails with n8n 2.41 today (duplicates; see the README).
 * 6. Waits (bounded) until every job fired, then two more polls, and reads the executions of the
 *    trigger workflow over REST (each one's "Invoice Row" output, flatted-parsed as the editor does).
 * Server and emulator are always stopped; every wait has a deadline within the run's timeout.
 *
 * With `durable` (the runner's second run; `--no-trigger-durable` skips it): the same run in its
 * own user folder with n8n's durable poll cursors on (DURABLE_CURSORS_ENV): the workflow
 * published through n8n's publication service (its outbox, at start), polls run by the durable
 * scheduler, each poll on its own copy of the node's static data (n8n's `poller_state` row),
 * committed with the poll's execution. The run also checks that the publication reached
 * "published" and that n8n keeps the trigger's cursor in `poller_state` (so the flags took effect).
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

import { startEmulator, type Emulator, type LoggedRequest } from '../../emulator';
import { N8nRun, type Json } from './n8n-run';
import {
	evaluateTrigger,
	triggerLine,
	type CreatedJob,
	type FiredExecution,
	type TriggerCounts,
} from './trigger-check';
import {
	createContext,
	importFixtures,
	OWNER,
	setupOwner,
	startServer,
	type N8nContext,
} from '../editor/n8n';
import { installPackageInto, type LineInfo } from '../lib/n8n';
import { removeAtExit, runCommand, secs, sleep, tail, type Service } from '../lib/processes';
import {
	prepareWorkflow,
	SEEDED_INVOICE_SCHEMA,
	type Example,
	type ExampleSource,
} from './examples';

export const UPLOAD_FILE = 'upload-without-waiting.json';
export const TRIGGER_FILE = 'trigger-finished-extractions.json';

/** Names in the two examples. */
const MANUAL_TRIGGER = "When clicking 'Execute workflow'";
const UPLOAD_NODE = 'Upload Attachments';
const ROW_NODE = 'Invoice Row';
const KEY = 'batch';

/**
 * n8n 2.41's durable poll cursors (all four needed; read in n8n's compiled code, see the README):
 * - N8N_SCHEDULER_ENABLED: the durable scheduler (@n8n/scheduler: jobs and tasks in the database,
 *   on SQLite too, claimed one pass at a time) on the main instance;
 * - N8N_SCHEDULER_POLL_TRIGGERS_ENABLED: poll triggers run as its tasks instead of in-process crons;
 * - N8N_USE_WORKFLOW_PUBLICATION_SERVICE: without it the scheduler does not take poll triggers at
 *   all (n8n logs a warning); workflows are activated through the publication outbox, and a
 *   workflow published before `n8n start` (`n8n publish:workflow`, activeVersionId set) is enqueued
 *   by the publication reconciler at start ("published workflows that no publication reported
 *   trigger statuses for");
 * - N8N_POLLER_DURABLE_CURSORS_ENABLED: each poll gets its own copy of the node's static data from
 *   the `poller_state` table, committed with the poll's execution (or alone when the poll returns
 *   null); without the three others n8n logs that it stays off.
 * No license and no other database: single main on SQLite is the leader and runs all of it.
 */
export const DURABLE_CURSORS_ENV = {
	N8N_SCHEDULER_ENABLED: 'true',
	N8N_SCHEDULER_POLL_TRIGGERS_ENABLED: 'true',
	N8N_USE_WORKFLOW_PUBLICATION_SERVICE: 'true',
	N8N_POLLER_DURABLE_CURSORS_ENABLED: 'true',
} as const;

/** Processing time of every job at the emulator (the slow one: SLOW_MS). */
const PROCESSING_MS = 1500;
const SLOW_MS = 14_000;

export interface TriggerRunOptions {
	/** Line 2 as install.sh describes it. */
	info: LineInfo;
	/** The packed package (npm pack). */
	tarball: string;
	source: ExampleSource;
	upload: Example;
	trigger: Example;
	/** Seconds between polls: 10 (one custom cron per 10 s) … 60 (the example's Every Minute). */
	pollSeconds: number;
	/** Fail one poll with 503s (step 5). */
	faults: boolean;
	/**
	 * Also make one poll slower than the interval (its list request delayed past the next poll), with
	 * two jobs finished just before: they must still fire once (step 5b; opt-in, see the README).
	 */
	slowPoll?: boolean;
	/** Run n8n with its durable poll cursors on (DURABLE_CURSORS_ENV). */
	durable?: boolean;
	/** Bound of the whole run. */
	timeoutS: number;
	keep: boolean;
	verbose: boolean;
}

export interface TriggerRunResult {
	ok: boolean;
	/** The `trigger: N created, …` line (`trigger (durable cursors): …`), when the run got that far. */
	line?: string;
	counts?: TriggerCounts;
	message?: string;
	ms: number;
	timings: Record<string, number>;
}

/**
 * Poll Times that poll every `seconds`: n8n 2.41 refuses a cron that fires more than once a minute
 * ("The polling interval is too short", n8n-workflow's isSubMinuteCron: a 6-field cron whose seconds
 * field is not one number), but checks each Poll Times entry on its own. One custom entry per second
 * mark (`0 * * * * *`, `10 * * * * *`, …) is accepted and polls every `seconds`. 60: Every Minute.
 */
export function pollTimesEvery(seconds: number): Json {
	if (seconds >= 60) return { item: [{ mode: 'everyMinute' }] };
	if (!Number.isInteger(seconds) || seconds < 1 || 60 % seconds !== 0)
		throw new Error(`--trigger-poll must divide 60 (10, 15, 20, 30, 60), got ${seconds}`);
	const item = [];
	for (let s = 0; s < 60; s += seconds)
		item.push({ mode: 'custom', cronExpression: `${s} * * * * *` });
	return { item };
}

/** Thrown when a bounded wait runs out. */
class WaitTimeout extends Error {}

/**
 * Waits until `done()` holds, checking every `everyMs`, for at most `ms` and never past `deadline`.
 *
 * @throws WaitTimeout naming `what` (and `detail()`) when the time is up
 */
async function waitFor(
	what: string,
	done: () => boolean | Promise<boolean>,
	ms: number,
	deadline: number,
	detail?: () => string,
	everyMs = 500,
): Promise<number> {
	const t0 = Date.now();
	const until = Math.min(t0 + ms, deadline);
	for (;;) {
		if (await done()) return Date.now() - t0;
		if (Date.now() >= until)
			throw new WaitTimeout(
				`timed out after ${secs(Date.now() - t0)} waiting for ${what}${detail ? `: ${detail()}` : ''}`,
			);
		await sleep(everyMs);
	}
}

// ---------------------------------------------------------------------------------------------
// the emulator

/**
 * The emulator in this process, its temporary folder (os.tmpdir() at its start) inside `dir`: a
 * Ctrl+C ends this process before the emulator's own close() could remove it, and the user folder
 * it lives in is removed then.
 */
async function startEmulatorIn(
	dir: string,
	options: Parameters<typeof startEmulator>[0],
): Promise<Emulator> {
	mkdirSync(dir, { recursive: true });
	const previous = process.env.TMPDIR;
	process.env.TMPDIR = dir;
	let started: Promise<Emulator>;
	try {
		// startEmulator makes its temporary folder synchronously, before its first await
		started = startEmulator(options);
	} finally {
		if (previous === undefined) delete process.env.TMPDIR;
		else process.env.TMPDIR = previous;
	}
	return await started;
}

/** The trigger's list requests (`GET /extract/`, its Metadata Key filter): one or more per poll. */
function listRequests(emu: Emulator, since = 0): LoggedRequest[] {
	return emu.requests.filter(
		(r) =>
			r.origin === 'api' &&
			r.method === 'GET' &&
			r.path === '/extract/' &&
			r.query.meta_key === KEY &&
			r.at >= since,
	);
}

/**
 * What the emulator saw, in seconds after `since` (n8n's start), for a failure message: the polls
 * (list requests less than 3 s apart are one poll, e.g. a request and its retries; with their
 * statuses) and the extractions created (POST /extract/).
 */
function describeTimeline(emu: Emulator, since: number): string {
	const at = (r: LoggedRequest): string => ((r.at - since) / 1000).toFixed(1);
	const polls: LoggedRequest[][] = [];
	for (const r of listRequests(emu, since)) {
		const last = polls.at(-1);
		if (last && r.at - last[last.length - 1].at < 3000) last.push(r);
		else polls.push([r]);
	}
	const created = emu.requests.filter(
		(r) => r.origin === 'api' && r.method === 'POST' && r.path === '/extract/' && r.at >= since,
	);
	return (
		`  emulator, seconds after n8n start: polls at ${polls.map((p) => `${at(p[0])} (${p.map((r) => r.status).join(' ')})`).join(', ') || 'none'}` +
		`\n  extractions created at ${created.map((r) => `${at(r)} (${r.status})`).join(', ') || 'none'}`
	);
}

/** Creates an extraction (POST /extract/, the token, the seeded Invoice schema) of an example file. */
async function createExtraction(
	emu: Emulator,
	fileBytes: Map<string, Buffer>,
	file: string,
	metadata: Json,
): Promise<string> {
	const form = new FormData();
	form.set(
		'document',
		new Blob([new Uint8Array(fileBytes.get(file)!)], { type: 'application/pdf' }),
		file,
	);
	form.set('server', 'EU-1');
	form.set('schema', SEEDED_INVOICE_SCHEMA);
	form.set('metadata', JSON.stringify(metadata));
	const res = await fetch(`${emu.url}/extract/`, {
		method: 'POST',
		headers: { authorization: emu.token },
		body: form,
		signal: AbortSignal.timeout(30_000),
	});
	const body = (await res.json()) as Json;
	if (res.status !== 201 || typeof body.id !== 'string')
		throw new Error(`POST /extract/ → ${res.status}: ${JSON.stringify(body).slice(0, 300)}`);
	return body.id;
}

/** Status of an extraction (GET /extract/{id}/). */
async function extractionStatus(emu: Emulator, id: string): Promise<string> {
	const res = await fetch(`${emu.url}/extract/${id}/`, {
		headers: { authorization: emu.token },
		signal: AbortSignal.timeout(30_000),
	});
	return String(((await res.json()) as Json).status);
}

// ---------------------------------------------------------------------------------------------
// n8n's REST API, as the owner

class Rest {
	constructor(
		private readonly url: string,
		private readonly cookie: string,
		/** n8n's own `flatted` (execution data comes flatted, as the editor gets it). */
		private readonly flatted: { parse(text: string): unknown },
	) {}

	async call(method: 'GET' | 'POST', route: string, body?: unknown): Promise<Json> {
		const res = await fetch(`${this.url}${route}`, {
			method,
			headers: {
				cookie: this.cookie,
				...(body === undefined ? {} : { 'content-type': 'application/json' }),
			},
			body: body === undefined ? undefined : JSON.stringify(body),
			signal: AbortSignal.timeout(30_000),
		});
		const text = await res.text();
		if (res.status !== 200)
			throw new Error(`${method} ${route} → ${res.status}: ${text.slice(0, 400)}`);
		const parsed = JSON.parse(text) as { data?: Json };
		return (parsed.data ?? parsed) as Json;
	}

	/** Summaries of a workflow's executions (newest first, up to 100). */
	async executions(
		workflowId: string,
	): Promise<Array<{ id: string; status: string; mode: string }>> {
		const filter = encodeURIComponent(JSON.stringify({ workflowId }));
		const list = await this.call('GET', `/rest/executions?filter=${filter}&limit=100`);
		return ((list.results ?? []) as Json[]).map((e) => ({
			id: String(e.id),
			status: String(e.status),
			mode: String(e.mode),
		}));
	}

	/** One execution with its run data, read as a check reads `n8n execute`'s output. */
	async execution(id: string): Promise<{ status: string; mode: string; run: N8nRun }> {
		const e = await this.call('GET', `/rest/executions/${id}`);
		const data = typeof e.data === 'string' ? this.flatted.parse(e.data) : e.data;
		const workflow = (e.workflowData ?? { nodes: [] }) as N8nRun['workflow'];
		const run = new N8nRun({
			workflowFile: '',
			line: '2',
			n8nVersion: '',
			raw: { data },
			filesDir: '',
			n8nFolder: '',
			emulator: { url: '', filesUrl: '' },
			workflow,
		});
		return { status: String(e.status), mode: String(e.mode), run };
	}

	/** The workflow's static data as saved in the database. */
	async staticData(workflowId: string): Promise<Json> {
		return ((await this.call('GET', `/rest/workflows/${workflowId}`)).staticData ?? {}) as Json;
	}

	/** The publication's status (`GET /rest/workflows/:id/publication-status`, only with the publication service on). */
	async publicationStatus(workflowId: string): Promise<{ status: string; triggers: Json[] }> {
		const s = await this.call('GET', `/rest/workflows/${workflowId}/publication-status`);
		return { status: String(s.status), triggers: (s.triggers ?? []) as Json[] };
	}
}

/**
 * One node's state (its static data) in short, whatever the trigger's state format: each key with
 * its value, a list's length, or a long string's length (`fingerprint` left out).
 */
function describeNodeState(v: unknown): string {
	const entries = Object.entries((v ?? {}) as Json).filter(([k]) => k !== 'fingerprint');
	if (entries.length === 0) return 'empty';
	const short = (x: unknown): string => {
		if (Array.isArray(x)) return `[${x.length}]`;
		if (typeof x === 'string') return x.length > 24 ? `(${x.length} chars)` : x;
		if (x !== null && typeof x === 'object') return `{${Object.keys(x).length}}`;
		return String(x);
	};
	return entries.map(([k, x]) => `${k} ${short(x)}`).join(', ');
}

/** Static data in one line: per node key, the trigger's state in short. */
function describeStaticData(data: Json): string {
	const nodes = Object.entries(data).filter(([k]) => k.startsWith('node:'));
	if (nodes.length === 0) return `${JSON.stringify(data)} (no node state)`;
	return nodes.map(([k, v]) => `${k}: ${describeNodeState(v)}`).join('; ');
}

/** A row of n8n's `poller_state` table (durable cursors): the node's cursor and its failures in a row. */
interface PollerState {
	nodeId: string;
	cursor: Json;
	consecutiveErrors: number;
	backoffUntil: string | null;
}

/**
 * The workflow's rows of `poller_state`, where n8n keeps the durable cursors (REST does not show
 * them), read from the server's SQLite database with line 2's Node (its built-in `node:sqlite`,
 * read-only) while n8n runs.
 *
 * @throws Error when the database cannot be read (no such table: not n8n 2.41's schema)
 */
async function readPollerState(ctx: N8nContext, workflowId: string): Promise<PollerState[]> {
	const script = [
		"const { DatabaseSync } = require('node:sqlite');",
		'const db = new DatabaseSync(process.argv[1], { readOnly: true, timeout: 5000 });',
		'const rows = db.prepare(\'SELECT "nodeId", "cursor", "consecutiveErrors", "backoffUntil" FROM poller_state WHERE "workflowId" = ?\').all(process.argv[2]);',
		'process.stdout.write(JSON.stringify(rows));',
	].join('\n');
	const dbFile = path.join(ctx.userFolder, '.n8n', 'database.sqlite');
	const r = await runCommand(
		ctx.info.nodeBin,
		['--no-warnings', '-e', script, dbFile, workflowId],
		{ cwd: ctx.userFolder, timeoutMs: 30_000 },
	);
	if (r.code !== 0)
		throw new Error(
			`reading poller_state from ${dbFile} failed (exit ${r.code}): ${tail(r.stderr, 5)}`,
		);
	return (JSON.parse(r.stdout) as Array<Omit<PollerState, 'cursor'> & { cursor: string }>).map(
		(row) => ({ ...row, cursor: JSON.parse(row.cursor) as Json }),
	);
}

/** The poller_state rows in one line. */
function describePollerState(rows: PollerState[]): string {
	if (rows.length === 0) return 'no row';
	return rows
		.map(
			(r) =>
				`node ${r.nodeId}: ${describeNodeState(r.cursor)}; ${r.consecutiveErrors} failed poll(s) in a row${r.backoffUntil ? `, backoff until ${r.backoffUntil}` : ''}`,
		)
		.join('; ');
}

// ---------------------------------------------------------------------------------------------

/** The run, as described at the top of this file. Never throws: a failure is in the result. */
export async function runActivatedTrigger(o: TriggerRunOptions): Promise<TriggerRunResult> {
	const t0 = Date.now();
	const deadline = t0 + o.timeoutS * 1000;
	const timings: Record<string, number> = {};
	const tag = o.durable ? 'trigger durable' : 'trigger';
	const log = (m: string): void => console.log(`[${tag}] ${m}`);
	const echo = o.verbose ? `[${tag}] n8n| ` : undefined;
	const pollMs = o.pollSeconds * 1000;
	let emulator: Emulator | undefined;
	let server: Service | undefined;
	const userFolder = mkdtempSync(
		path.join(os.tmpdir(), o.durable ? 'n8n-es-trigger-durable-' : 'n8n-es-trigger-'),
	);
	removeAtExit(userFolder, o.keep);
	const result: TriggerRunResult = { ok: false, ms: 0, timings };
	const mark = (name: string, since: number): void => void (timings[name] = Date.now() - since);
	try {
		// 1. emulator, user folder, package, workflows, credentials; the trigger published
		let t = Date.now();
		const emu = (emulator = await startEmulatorIn(path.join(userFolder, 'emulator-tmp'), {
			processingMs: PROCESSING_MS,
			quiet: !o.verbose,
		}));
		const ctx = await createContext(o.info, userFolder, echo);
		// the CLI commands too: the database is the server's, whose mode they must not contradict
		if (o.durable) Object.assign(ctx.env, DURABLE_CURSORS_ENV);
		await installPackageInto(userFolder, o.tarball);
		const filesDir = path.join(userFolder, 'files');
		const upload = prepareWorkflow(o.upload, o.source, filesDir, emu.filesUrl);
		const trigger = prepareWorkflow(o.trigger, o.source, filesDir, emu.filesUrl);
		const triggerNode = trigger.nodes.find(
			(n) => n.type === 'n8n-nodes-extraction-service.extractionServiceTrigger',
		);
		if (!triggerNode?.parameters)
			throw new Error(`${TRIGGER_FILE} has no Extraction Service Trigger node`);
		triggerNode.parameters.pollTimes = pollTimesEvery(o.pollSeconds);
		const fileBytes = new Map(
			['invoice.pdf', 'invoice-2.pdf'].map((f) => [
				f,
				readFileSync(path.join(o.source.filesDir, f)),
			]),
		);

		// 2. (meanwhile) jobs that finish before the activation: never to fire
		const before: CreatedJob[] = [];
		const createBefore = (async () => {
			for (const [file, batch] of [
				['invoice.pdf', 'old-1'],
				['invoice-2.pdf', 'old-1'],
				['invoice.pdf', undefined],
			] as const) {
				const id = await createExtraction(
					emu,
					fileBytes,
					file,
					batch ? { [KEY]: batch } : { source: 'elsewhere' },
				);
				before.push({
					id,
					file,
					batch,
					role: batch ? 'old, with the key' : 'old, without the key',
				});
			}
			await waitFor(
				'the jobs made before the activation to finish',
				async () =>
					(await Promise.all(before.map((j) => extractionStatus(emu, j.id)))).every(
						(s) => s === 'FINISHED',
					),
				30_000,
				deadline,
			);
		})();
		const [, imported] = await Promise.all([
			createBefore,
			importFixtures(ctx, emu, [upload, trigger]),
		]);
		const pub = await ctx.cli(['publish:workflow', `--id=${o.trigger.id}`], 120_000);
		if (pub.code !== 0)
			throw new Error(
				`n8n publish:workflow failed (exit ${pub.code}):\n${tail(`${pub.stdout}\n${pub.stderr}`, 20)}`,
			);
		timings.import = imported.credentialsMs + imported.workflowMs + pub.ms;
		mark('setup', t);
		log(
			`${before.length} extractions finished before the activation; workflows imported, "${o.trigger.name}" published (${secs(timings.setup)})${o.durable ? `; durable poll cursors on (${Object.keys(DURABLE_CURSORS_ENV).join(', ')})` : ''}`,
		);

		// 3. n8n start: the activation (its first poll) happens at start
		t = Date.now();
		const startedAt = Date.now();
		server = await startServer(ctx, Math.min(120_000, deadline - Date.now()), echo);
		const cookie = await setupOwner(ctx.url, OWNER);
		const flatted = createRequire(path.join(o.info.dir, 'node_modules', 'n8n', 'package.json'))(
			'flatted',
		) as { parse(text: string): unknown };
		const rest = new Rest(ctx.url, cookie, flatted);
		const srv = server;
		const serverTail = () => tail(srv.output(), 15);
		await waitFor(
			'the activation poll (the first GET /extract/?meta_key=batch)',
			() => listRequests(emu, startedAt).length > 0,
			60_000,
			deadline,
			serverTail,
		);
		// the activation poll's reads by id follow its list request
		await sleep(1000);
		mark('start', t);
		log(
			`n8n ${o.info.version} started, trigger activated, polls every ${o.pollSeconds}s (${secs(timings.start)})`,
		);
		log(
			`static data in the database after the activation: ${describeStaticData(await rest.staticData(o.trigger.id))}`,
		);
		const pollerState = async (): Promise<PollerState[]> =>
			await readPollerState(ctx, o.trigger.id);
		if (o.durable) {
			// the flags took effect: published through the outbox, the cursor kept in poller_state
			let publication: Awaited<ReturnType<Rest['publicationStatus']>> | undefined;
			const published = async (): Promise<boolean> =>
				(publication = await rest.publicationStatus(o.trigger.id)).status === 'published';
			await waitFor(
				'the publication to be "published"',
				published,
				30_000,
				deadline,
				() =>
					`status ${publication?.status ?? '?'}, triggers ${JSON.stringify(publication?.triggers ?? [])}`,
			);
			const rows = await pollerState();
			if (!rows.some((r) => r.nodeId === triggerNode.id))
				throw new Error(
					`no poller_state row for the trigger node ${String(triggerNode.id)}: n8n's durable poll cursors are not on (rows: ${describePollerState(rows)})`,
				);
			log(
				`publication status: ${publication?.status} (${(publication?.triggers ?? []).map((x) => `${String(x.nodeId)} ${String(x.status)}`).join(', ')})`,
			);
			log(`durable cursor (poller_state) after the activation: ${describePollerState(rows)}`);
		}

		// 4. jobs after the activation: the upload workflow run on the server, and some of our own
		t = Date.now();
		const expected: CreatedJob[] = [];
		const mustNotFire: CreatedJob[] = [];
		const started = await rest.call('POST', `/rest/workflows/${o.upload.id}/run`, {
			triggerToStartFrom: { name: MANUAL_TRIGGER },
		});
		const uploadExecution = String(started.executionId ?? '');
		if (!uploadExecution)
			throw new Error(
				`POST /rest/workflows/${o.upload.id}/run gave no executionId: ${JSON.stringify(started).slice(0, 300)}`,
			);
		let uploadRun: Awaited<ReturnType<Rest['execution']>> | undefined;
		await waitFor(
			`execution ${uploadExecution} of "${o.upload.name}"`,
			async () => {
				uploadRun = await rest.execution(uploadExecution).catch(() => undefined);
				return (
					uploadRun !== undefined &&
					!['new', 'running', 'waiting', 'unknown'].includes(uploadRun.status)
				);
			},
			60_000,
			deadline,
			() => `status ${uploadRun?.status ?? 'unknown'}`,
		);
		if (uploadRun?.status !== 'success')
			throw new Error(
				`"${o.upload.name}" ended ${uploadRun?.status}: ${JSON.stringify(uploadRun?.run.error ?? {}).slice(0, 400)}`,
			);
		for (const item of uploadRun.run.json(UPLOAD_NODE)) {
			expected.push({
				id: String(item.id),
				file: String(item.document_name),
				batch: String((item.metadata as Json | undefined)?.[KEY]),
				role: `"${o.upload.name}" (execution ${uploadExecution})`,
			});
		}
		expected.push({
			id: await createExtraction(emu, fileBytes, 'invoice-2.pdf', {
				[KEY]: 'slow-1',
				emulator_processing_ms: SLOW_MS,
			}),
			file: 'invoice-2.pdf',
			batch: 'slow-1',
			role: `slow (${SLOW_MS / 1000}s, pending over polls)`,
		});
		mustNotFire.push({
			id: await createExtraction(emu, fileBytes, 'invoice.pdf', {
				[KEY]: 'err-1',
				emulator_outcome: 'ERROR',
			}),
			file: 'invoice.pdf',
			batch: 'err-1',
			role: 'ends ERROR',
		});
		mustNotFire.push({
			id: await createExtraction(emu, fileBytes, 'invoice.pdf', { source: 'elsewhere' }),
			file: 'invoice.pdf',
			role: 'without the key',
		});
		log(
			`created after the activation: ${expected.length} to fire (${uploadRun.run.json(UPLOAD_NODE).length} by "${o.upload.name}" run on the server), ${mustNotFire.length} not to fire (ERROR, no key)`,
		);

		const firedIds = new Set<string>();
		const parsed = new Map<string, FiredExecution>();
		let failedExecutions = 0;
		/** Reads the trigger workflow's executions; each successful one is parsed once. */
		const readExecutions = async (): Promise<void> => {
			const list = await rest.executions(o.trigger.id);
			failedExecutions = list.filter((e) => e.status === 'error' || e.status === 'crashed').length;
			for (const e of list) {
				if (e.status !== 'success' || parsed.has(e.id)) continue;
				const x = await rest.execution(e.id);
				const rows = x.run.json(ROW_NODE);
				parsed.set(e.id, { id: e.id, mode: x.mode, rows });
				for (const row of rows) firedIds.add(String(row.extraction_id));
			}
		};
		const allFired = async (): Promise<boolean> => {
			await readExecutions();
			return expected.every((j) => firedIds.has(j.id));
		};
		const notYet = () =>
			`not fired yet: ${
				expected
					.filter((j) => !firedIds.has(j.id))
					.map((j) => `${j.id} (${j.role})`)
					.join(', ') || 'none'
			}`;

		// 5. a failing poll: 503 for the list request and its 3 retries, injected right after a poll
		if (o.faults) {
			const since = Date.now();
			await waitFor(
				'a poll to inject the 503s after',
				() => listRequests(emu, since).length > 0,
				pollMs + 15_000,
				deadline,
			);
			await sleep(1500);
			const injectedAt = Date.now();
			emu.injectFaults(
				{ method: 'GET', path: '/extract/' },
				Array.from({ length: 4 }, () => ({ status: 503, retryAfter: '1' })),
			);
			for (const file of ['invoice.pdf', 'invoice-2.pdf']) {
				expected.push({
					id: await createExtraction(emu, fileBytes, file, { [KEY]: 'outage-1' }),
					file,
					batch: 'outage-1',
					role: 'created during the outage',
				});
			}
			const served503 = () => listRequests(emu, injectedAt).filter((r) => r.status === 503).length;
			await waitFor(
				'the failing poll (4 × 503 on GET /extract/)',
				() => served503() >= 4,
				pollMs + 20_000,
				deadline,
				() => `${served503()} served`,
			);
			await waitFor(
				'n8n to record the failed poll',
				async () => (await readExecutions(), failedExecutions > 0),
				20_000,
				deadline,
				() => 'no failed execution of the trigger workflow',
			);
			log(
				`one poll failed (4 × 503, Retry-After 1): n8n recorded ${failedExecutions} failed execution(s); the workflow stays active; 2 jobs created during the outage`,
			);
			if (o.durable)
				log(
					`durable cursor (poller_state) after the failed poll: ${await pollerState().then(describePollerState, (e: Error) => `unreadable (${e.message})`)}`,
				);
		}

		// 5b. a poll slower than the interval: the next poll starts while it still runs
		if (o.slowPoll) {
			const since = Date.now();
			await waitFor(
				'a poll to delay the next one after',
				() => listRequests(emu, since).length > 0,
				pollMs + 15_000,
				deadline,
			);
			await sleep(1500);
			for (const file of ['invoice.pdf', 'invoice-2.pdf']) {
				expected.push({
					id: await createExtraction(emu, fileBytes, file, { [KEY]: 'overlap-1' }),
					file,
					batch: 'overlap-1',
					role: 'finished before a slow poll',
				});
			}
			await sleep(PROCESSING_MS + 1000);
			const delayMs = pollMs + 4000;
			emu.injectFaults({ method: 'GET', path: '/extract/' }, [{ delayMs }]);
			log(
				`the next poll's list request is answered after ${secs(delayMs)}: the poll after it starts while it runs; 2 jobs finished just before`,
			);
		}

		// 6. every job fires (when not, the counts still say what did); then two more polls to catch a late duplicate
		const unfired = await waitFor(
			'every job to fire',
			allFired,
			SLOW_MS + 3 * pollMs + 20_000,
			deadline,
			notYet,
			2000,
		).then(
			() => undefined,
			(err: unknown) => {
				if (err instanceof WaitTimeout) return err.message;
				throw err;
			},
		);
		mark('fire', t);
		if (!unfired) {
			const lastFire = Date.now();
			await waitFor(
				'two more polls',
				() => listRequests(emu, lastFire).filter((r) => r.status === 200).length >= 2,
				2 * pollMs + 15_000,
				deadline,
			);
			await sleep(2000);
		}
		await readExecutions();
		log(
			`static data in the database at the end: ${describeStaticData(await rest.staticData(o.trigger.id))}`,
		);
		if (o.durable)
			log(
				`durable cursor (poller_state) at the end: ${await pollerState().then(describePollerState, (e: Error) => `unreadable (${e.message})`)}`,
			);

		const { counts, problems } = evaluateTrigger({
			before,
			expected,
			mustNotFire,
			executions: [...parsed.values()],
			failedExecutions,
			faultInjected: o.faults,
		});
		result.counts = counts;
		result.line = o.durable
			? triggerLine(counts).replace(/^trigger:/, 'trigger (durable cursors):')
			: triggerLine(counts);
		log(
			`${parsed.size} successful executions of "${o.trigger.name}", ${failedExecutions} failed (the injected outage)`,
		);
		if (unfired) problems.unshift(unfired);
		if (problems.length > 0)
			result.message = `${problems.join('\n')}\n${describeTimeline(emu, startedAt)}`;
		else result.ok = true;
	} catch (err) {
		result.message = (err as Error).message;
		if (server && !(err instanceof WaitTimeout) && o.verbose)
			result.message += `\n  n8n output:\n${tail(server.output(), 20)}`;
	} finally {
		const t = Date.now();
		await server?.stop(10_000);
		await emulator?.close();
		mark('stop', t);
		result.ms = Date.now() - t0;
		if (o.keep) log(`kept user folder ${userFolder}`);
	}
	return result;
}
