/**
 * End to end, as users deploy it: invoice mails in a real mailbox, n8n 2.x in queue mode (main +
 * two workers, PostgreSQL, Redis) with this package installed, the service emulator, an SMTP server
 * and an ERP table in PostgreSQL — all on loopback, all throwaway. See scripts/e2e/README.md.
 *
 *   npx tsx scripts/e2e/run.ts                      # every phase, then the editor
 *   npx tsx scripts/e2e/run.ts --phases flow1 --mails 20 --no-editor   # a quick run
 *   npx tsx scripts/e2e/run.ts --compare-workers    # flow 1's load with 1 worker, then with 2
 *
 * Phases (--phases, default flow1,flow2,review,fault1,fault2): flow 1 and 2 each get --mails mails
 * (200); review --review-mails (40), some documents unreadable in part, each review form answered
 * as a person would (review.ts); the fault round --fault-mails (100) per flow while the service errs
 * at random (--faults) and worker-1 is killed and restarted (--fault-restart same|fresh). Checked:
 * every document has exactly one correct row, none extracted twice, every execution succeeded on
 * one worker (or was recovered), the spreadsheets equal the table; then n8n's editor in Chromium.
 * Also: --worker-concurrency N, --rate R (mails/s), --processing-ms A --processing-max-ms B,
 * --seed N, --timeout S, --no-editor, --no-install, --no-build, --keep, --verbose.
 *
 * The last lines, each asserted (exit code 0 only when every check passed; the last one is flow 1):
 *
 *   e2e flow 2: <mails> mails, <docs> documents, <rows> rows, 0 missing, 0 duplicates, <workers> workers, <seconds> s, <n> docs/min
 *   e2e review: <mails> mails, <docs> documents, <complete> complete, <reviewed> reviewed, <rows> rows, 0 missing, 0 duplicates
 *   e2e fault round: …
 *   e2e editor: <passed> passed, 0 failed …
 *   e2e: <mails> mails, <docs> documents, <rows> rows, 0 missing, 0 duplicates, <workers> workers, <seconds> s, <n> docs/min
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { launchEmulator, type EmulatorProcess } from '../../emulator/launch';
import { runEditorOnServer } from '../editor/on-server';
import { numberFlag, readArgs, usageError, RUNNER_FLAGS, runnerOptions } from '../lib/args';
import { Checks } from '../lib/checks';
import { Rest, setupOwner } from '../lib/n8n-server';
import { buildAndPack, installLine, n8nImport, TOKEN_CREDENTIAL, type LineInfo } from '../lib/n8n';
import { freePort } from '../lib/ports';
import {
	cleanUpNow,
	commandError,
	removeAtExit,
	ROOT,
	runMain,
	secs,
	sleep,
	waitUntil,
} from '../lib/processes';
import { DATA_PREFIX, PLACEHOLDER_SCHEMA, SEEDED_INVOICE_SCHEMA } from '../n8n/examples';
import { pollTimesEvery } from '../n8n/trigger-run';
import { readFirstSheet } from '../n8n/xlsx';
import { CHECKED_FIELDS, extracted, mimeMessage, planMails, type PlannedAttachment } from './mail';
import { checkReviews, createReviewSchema, deleteReviewSchema, startReviewer } from './review';
import {
	installTools,
	listeningSockets,
	makeRunRoot,
	prepareN8nProcess,
	startDovecot,
	startN8n,
	startPostgres,
	startRedis,
	startSmtp,
	type N8nProcess,
	type N8nShared,
	type Tools,
} from './services';

/** One path from mail to ERP row: its workflows and where its mails and extractions are told apart. */
interface Flow {
	name: 'flow 1' | 'flow 2' | 'review';
	/** The IMAP folder its Email Trigger watches (the example says INBOX; the copy is pointed here). */
	mailbox: string;
	/** Its workflows (file in examples/workflows, id of the imported copy); all are published. */
	workflows: Array<{ file: string; id: string }>;
	/** The workflow whose executions write the spreadsheets (the review example writes none). */
	sheetsBy?: string;
	/** `metadata.source` of the extractions it creates. */
	source: string;
}
const FLOW_1: Flow = {
	name: 'flow 1',
	mailbox: 'INBOX',
	workflows: [{ file: 'e2e-email-to-postgres.json', id: 'e2eMailToErp01' }],
	sheetsBy: 'e2eMailToErp01',
	source: 'email',
};
const FLOW_2: Flow = {
	name: 'flow 2',
	mailbox: 'Async',
	workflows: [
		{ file: 'e2e-email-upload-without-waiting.json', id: 'e2eMailUpload01' },
		{ file: 'e2e-finished-extractions-to-postgres.json', id: 'e2eStoreFinish1' },
	],
	sheetsBy: 'e2eStoreFinish1',
	source: 'email-async',
};
const REVIEW: Flow = {
	name: 'review',
	mailbox: 'Review',
	workflows: [{ file: 'e2e-email-review-to-postgres.json', id: 'e2eMailReview01' }],
	source: 'email-review',
};
const FLOWS = [FLOW_1, FLOW_2, REVIEW];
const FLOW_WORKFLOW_IDS = FLOWS.flatMap((f) => f.workflows.map((w) => w.id));
/** The Error Workflow of the flows' workflows: a failed or crashed execution is retried once. */
const RETRY_WORKFLOW = { file: 'e2e-retry-failed-execution.json', id: 'e2eRetryFailed1' };
/** Where the examples say n8n is (the Error Workflow's URL); pointed at main. */
const EXAMPLE_N8N_URL = 'http://localhost:5678';
/** Dovecot's users: the invoices mailbox the triggers read, and the person the review mails go to. */
const MAIL_USERS = ['invoices', 'reviewer'];
/** Share of the review phase's PDFs that lack one checked field's line. */
const INCOMPLETE_SHARE = 0.4;
/** Credential ids the workflows reference (≤ 16 characters, as n8n's import requires). */
const CREDENTIALS = {
	imap: { id: 'e2eImapCred1', name: 'Invoices Mailbox', type: 'imap' },
	postgres: { id: 'e2ePostgresCred1', name: 'ERP Database', type: 'postgres' },
	smtp: { id: 'e2eSmtpCred1', name: 'Review Mail (SMTP)', type: 'smtp' },
	n8nApi: { id: 'e2eN8nApiCred1', name: 'n8n API', type: 'n8nApi' },
};
const OWNER = { email: 'owner@e2e.invalid', firstName: 'E2E', lastName: 'Owner' };
/** imapflow's autoIdleDelay (15 s) and a margin: how long after its last command the IMAP trigger is in IDLE again. */
const TRIGGER_IDLE_DELAY_MS = 16_500;

type Example = Record<string, unknown> & {
	nodes: Array<{ type: string; parameters?: Record<string, unknown> }>;
	settings?: Record<string, unknown>;
};
const readExample = (file: string): Example =>
	JSON.parse(readFileSync(path.join(ROOT, 'examples', 'workflows', file), 'utf8')) as Example;

/** The ERP table: the SQL flow 1's sticky note gives users. */
function erpTableSql(): string {
	const notes = readExample(FLOW_1.workflows[0].file).nodes.map((n) => n.parameters?.content);
	const sql = /```sql\n([^`]*)```/.exec(notes.join('\n'))?.[1];
	if (!sql) throw new Error(`no \`\`\`sql block in ${FLOW_1.workflows[0].file}'s sticky notes`);
	return sql;
}

// ---------------------------------------------------------------------------------------------
// options

const PHASES = ['flow1', 'flow2', 'review', 'fault1', 'fault2'] as const;
type Phase = (typeof PHASES)[number];

/** Reads the command line (scripts/lib/args.ts). */
function parseArgs() {
	const { values: v } = readArgs(__filename, {
		mails: { type: 'string' },
		'review-mails': { type: 'string' },
		'fault-mails': { type: 'string' },
		phases: { type: 'string' },
		'compare-workers': { type: 'boolean' },
		'worker-concurrency': { type: 'string' },
		rate: { type: 'string' },
		'processing-ms': { type: 'string' },
		'processing-max-ms': { type: 'string' },
		seed: { type: 'string' },
		timeout: { type: 'string' },
		...RUNNER_FLAGS,
		faults: { type: 'string' },
		'fault-restart': { type: 'string' },
		'no-editor': { type: 'boolean' },
	});
	if (v['fault-restart'] !== undefined && !['same', 'fresh'].includes(v['fault-restart']))
		usageError(`--fault-restart must be same or fresh, got ${v['fault-restart']}`);
	const phases = (v.phases ?? PHASES.join(',')).split(',').map((x) => x.trim());
	for (const ph of phases.filter(Boolean))
		if (!PHASES.includes(ph as Phase))
			usageError(`--phases: "${ph}" is not one of ${PHASES.join(', ')}`);
	const processingMs = numberFlag('processing-ms', v['processing-ms'], 3000);
	const maxMsDefault = Math.max(6000, processingMs);
	const timeoutS = numberFlag('timeout', v.timeout, 1800, 60);
	return {
		mails: numberFlag('mails', v.mails, 200, 1, true),
		reviewMails: numberFlag('review-mails', v['review-mails'], 40, 1, true),
		faultMails: numberFlag('fault-mails', v['fault-mails'], 100, 1, true),
		phases: PHASES.filter((ph) => phases.includes(ph)),
		compareWorkers: v['compare-workers'] === true,
		workerConcurrency: numberFlag('worker-concurrency', v['worker-concurrency'], 10, 1, true),
		rate: numberFlag('rate', v.rate, 0),
		processingMs,
		processingMaxMs: numberFlag('processing-max-ms', v['processing-max-ms'], maxMsDefault),
		seed: numberFlag('seed', v.seed, 20261122, 0, true),
		timeoutS,
		/** When the phases must end (--timeout from now). */
		deadline: Date.now() + timeoutS * 1000,
		...runnerOptions(v),
		/** The emulator's `--random-faults` spec in the fault round. */
		faults: v.faults ?? '*:429:0.03,GET:503:0.05,POST:502:0.01',
		/** How the killed worker comes back: `same` user folder (its event log and crash journal), or a `fresh` one (a new container). */
		faultRestart: v['fault-restart'] === 'fresh' ? ('fresh' as const) : ('same' as const),
		editor: v['no-editor'] !== true,
	};
}
type Options = ReturnType<typeof parseArgs>;

/** Timings of the run's steps, printed at the end (cold = something was installed). */
const timings: Array<[string, number]> = [];
async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
	const t0 = Date.now();
	try {
		return await fn();
	} finally {
		timings.push([label, Date.now() - t0]);
	}
}

const checks = new Checks();
const check = checks.check.bind(checks);
const hex = (): string => randomBytes(12).toString('hex');

/** ` (e.g. a, b, c)`: the first three of a list of document keys, or nothing. */
const eg = (keys: string[]): string => {
	const first = keys.slice(0, 3).map((k) => k.replace('\u0000', ' '));
	return first.length ? ` (e.g. ${first.join(', ')})` : '';
};

// ---------------------------------------------------------------------------------------------
// the deployment

type Deployment = Awaited<ReturnType<typeof deploy>>;

/**
 * The copy of an example n8n imports: id, schema, files folder and n8n URL set; for a flow's
 * workflow also the IMAP folder, the trigger's Poll Times (every 10 s, n8n's shortest), the Error Workflow.
 */
function prepareWorkflow(
	w: { file: string; id: string },
	shared: N8nShared,
	schema: string,
	flow?: Flow,
): Record<string, unknown> {
	const wf = readExample(w.file);
	const filesDir = `${shared.filesDir}/`;
	const rewrite = (value: unknown): unknown => {
		if (value === PLACEHOLDER_SCHEMA) return schema;
		if (typeof value === 'string')
			return value.replaceAll(DATA_PREFIX, filesDir).replaceAll(EXAMPLE_N8N_URL, shared.mainUrl);
		if (Array.isArray(value)) return value.map(rewrite);
		if (value && typeof value === 'object')
			return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, rewrite(x)]));
		return value;
	};
	const nodes = wf.nodes.map((n) => {
		const parameters = rewrite(n.parameters ?? {}) as Record<string, unknown>;
		if (flow && n.type === 'n8n-nodes-base.emailReadImap') parameters.mailbox = flow.mailbox;
		if (flow && n.type === 'n8n-nodes-extraction-service.extractionServiceTrigger')
			parameters.pollTimes = pollTimesEvery(10);
		return { ...n, parameters };
	});
	const settings = flow ? { ...wf.settings, errorWorkflow: RETRY_WORKFLOW.id } : wf.settings;
	return { ...wf, id: w.id, active: false, nodes, settings };
}

async function deploy(opts: Options, tarball: string, line: LineInfo, tools: Tools) {
	const root = makeRunRoot('n8n-es-e2e-');
	removeAtExit(root, opts.keep);
	const logDir = path.join(root, 'logs');
	const filesDir = path.join(root, 'files');
	mkdirSync(logDir, { recursive: true });
	mkdirSync(path.join(filesDir, 'erp'), { recursive: true });
	console.log(`Throwaway folder: ${root}${opts.keep ? ' (kept)' : ''}`);

	const { processingMs, processingMaxMs } = opts;
	const [postgres, redis, dovecot, emulator] = await timed(
		'servers (PostgreSQL, Redis, Dovecot, emulator)',
		() =>
			Promise.all([
				startPostgres(tools, root, logDir),
				startRedis(tools, root, logDir),
				startDovecot(tools, root, logDir, MAIL_USERS),
				launchEmulator({ processingMs, processingMaxMs, quiet: true }),
			]),
	);
	const smtp = await startSmtp(dovecot, MAIL_USERS);
	console.log(
		`PostgreSQL 127.0.0.1:${postgres.port}, Redis 127.0.0.1:${redis.port}, Dovecot IMAP 127.0.0.1:${dovecot.port}, SMTP 127.0.0.1:${smtp.port}, emulator ${emulator.url} (jobs ${processingMs}–${processingMaxMs} ms)`,
	);
	const box = await dovecot.connect();
	for (const flow of FLOWS) if (flow.mailbox !== 'INBOX') await box.mailboxCreate(flow.mailbox);
	await box.logout();
	const reviewSchema = await createReviewSchema(emulator);

	const n8nDb = { port: postgres.port, database: 'n8n', user: 'n8n', password: hex() };
	const erpDb = { port: postgres.port, database: 'erp', user: 'erp', password: hex() };
	await postgres.sql(
		'postgres',
		`CREATE ROLE n8n LOGIN PASSWORD '${n8nDb.password}'; CREATE DATABASE n8n OWNER n8n;
		 CREATE ROLE erp LOGIN PASSWORD '${erpDb.password}'; CREATE DATABASE erp OWNER erp;`,
	);
	await postgres.sql('erp', `SET ROLE erp; ${erpTableSql()}`);

	const mainPort = await freePort();
	const mainUrl = `http://127.0.0.1:${mainPort}`;
	const shared: N8nShared = {
		line,
		encryptionKey: randomBytes(24).toString('hex'),
		postgres: n8nDb,
		redisPort: redis.port,
		filesDir,
		mainUrl,
		root,
		tarball,
	};
	const main = await prepareN8nProcess('main', shared, {
		N8N_PORT: String(mainPort),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_HOST: '127.0.0.1',
		// n8n's default is 180 minutes: a run cannot wait for that
		...(opts.faultRestart === 'fresh' ? { N8N_EXECUTIONS_QUEUE_RECOVERY_INTERVAL: '1' } : {}),
	});
	const workers: Worker[] = [];
	for (const name of ['worker-1', 'worker-2']) workers.push(await prepareWorker(name, shared));

	// credentials and the workflows, with the n8n CLI (the first command migrates n8n's database)
	const local = { host: '127.0.0.1', secure: false };
	type Login = { user: string; password: string; port: number };
	const login = ({ user, password, port }: Login) => ({ ...local, user, password, port });
	const erp = { host: '127.0.0.1', ...erpDb, ssl: 'disable', maxConnections: 20 };
	const credentials = [
		{ ...CREDENTIALS.imap, data: login(dovecot) },
		{ ...CREDENTIALS.postgres, data: erp },
		{ ...CREDENTIALS.smtp, data: login(smtp) },
		{ ...TOKEN_CREDENTIAL, data: { baseUrl: emulator.url, token: emulator.token } },
	];
	await timed('n8n database migrations + import credentials', () =>
		n8nImport(main.cli, 'credentials', path.join(root, 'credentials.json'), credentials, 300_000),
	);
	const imports = [
		...FLOWS.flatMap((flow) => flow.workflows.map((w) => ({ w, flow }))),
		{ w: RETRY_WORKFLOW, flow: undefined },
	];
	const copies = imports.map(({ w, flow }) =>
		prepareWorkflow(w, shared, flow === REVIEW ? reviewSchema : SEEDED_INVOICE_SCHEMA, flow),
	);
	await timed('import + publish the workflows', async () => {
		await n8nImport(main.cli, 'workflow', path.join(root, 'workflows.json'), copies);
		// all published (activated): n8n 2.x runs an Error Workflow only when it is published too
		for (const { w } of imports) {
			const r = await main.cli(['publish:workflow', `--id=${w.id}`]);
			if (r.code !== 0) throw commandError(`n8n publish:workflow --id=${w.id}`, r);
		}
	});

	// triggerActiveAt: when an IMAP trigger last talked to Dovecot as far as we know (its login, or
	// main's last "Enqueued execution")
	const d = {
		root,
		postgres,
		redis,
		dovecot,
		smtp,
		emulator,
		shared,
		main,
		workers,
		mainUrl,
		reviewSchema,
		triggerActiveAt: Date.now(),
		/** The owner account (set up after main started). */
		owner: { ...OWNER, password: `E2e-${hex()}` },
	};

	await timed('n8n main start (triggers active)', async () => {
		// the IMAP triggers run in main: their logins show in Dovecot's log (one per flow)
		const logins = (): number =>
			(dovecot.service.output().match(/imap-login: Info: Login: user=<invoices>/g) ?? []).length;
		const before = logins();
		await startN8n(main, shared, ['start'], opts.verbose, (l) => {
			if (/Enqueued execution \d+/.test(l)) d.triggerActiveAt = Date.now();
		});
		const allIn = (): boolean => logins() >= before + FLOWS.length;
		await waitUntil('every Email Trigger (IMAP) to log in to Dovecot', 60_000, allIn);
		d.triggerActiveAt = Date.now();
	});
	console.log(
		`n8n ${line.version} main on ${mainUrl} (queue mode); the workflows are active, the ${FLOWS.length} IMAP triggers logged in`,
	);
	// the owner (main's REST API as the owner), an API key with the scope `execution:retry` (as the
	// Settings page makes it) and the Error Workflow's "n8n API" credential with it
	const rest = await timed('owner, API key, n8n API credential', async () => {
		const { userFolder, env, cli } = main;
		const ctx = { info: line, userFolder, port: mainPort, url: mainUrl, env, cli };
		const owner = new Rest(ctx, await setupOwner(mainUrl, d.owner));
		const body = { label: 'Error Workflow retries', scopes: ['execution:retry'], expiresAt: null };
		const key = await owner.call('POST', '/rest/api-keys', body);
		const apiKey = String(key.rawApiKey ?? key.apiKey ?? '');
		if (!apiKey || apiKey.includes('*'))
			throw new Error(`POST /rest/api-keys → 200: no usable key in the answer`);
		await n8nImport(cli, 'credentials', path.join(root, 'credentials-n8n-api.json'), [
			{ ...CREDENTIALS.n8nApi, data: { apiKey, baseUrl: `${mainUrl}/api/v1` } },
		]);
		return owner;
	});
	// (the same object: main's log lines update d.triggerActiveAt)
	return Object.assign(d, { rest });
}

/** A worker, and the execution ids it logged as started or finished ("Worker started execution N"). */
type Worker = N8nProcess & { started: Set<string>; finished: Set<string> };

/** A worker's user folder (the package in it) and environment: its health server on a free loopback port. */
async function prepareWorker(name: string, shared: N8nShared): Promise<Worker> {
	const w = await prepareN8nProcess(name, shared, {
		QUEUE_HEALTH_CHECK_ACTIVE: 'true',
		QUEUE_HEALTH_CHECK_PORT: String(await freePort()),
		N8N_WORKER_SERVER_ADDRESS: '127.0.0.1',
	});
	return { ...w, started: new Set(), finished: new Set() };
}

/** Starts worker `w` (`n8n worker --concurrency=N`) and waits until it is ready; its log tells which executions it started and finished. */
async function startWorker(d: Deployment, w: Worker, opts: Options): Promise<void> {
	const args = ['worker', `--concurrency=${opts.workerConcurrency}`];
	await startN8n(w, d.shared, args, opts.verbose, (l) => {
		const m = /Worker (started|finished) execution (\d+)/.exec(l);
		if (m) (m[1] === 'started' ? w.started : w.finished).add(m[2]);
	});
}

// ---------------------------------------------------------------------------------------------
// one load phase: deliver, wait, measure, check

/** What one phase runs: a flow, its mails, with or without the fault round's chaos. */
type PhaseSpec = { flow: Flow; label: string; mails: number; fault?: boolean };

interface ErpRow {
	extraction_id: string;
	message_id: string;
	file_name: string;
	invoice_number: string | null;
	total_amount: string | number | null;
	currency: string | null;
	status: string;
	n8n_execution_id: string | null;
	stored_ms: number;
}

interface ExecutionRow {
	id: string;
	workflow_id: string;
	status: string;
	mode: string;
	retry_of: string | null;
	/** n8n's own flag: the run ended without an error (a Retry of it is refused with 409). */
	finished: boolean;
}

const FINAL = (e: ExecutionRow): boolean => !['new', 'running', 'waiting'].includes(e.status);
const FAILED = (e: ExecutionRow): boolean => ['error', 'crashed'].includes(e.status);
const docKey = (messageId: string, fileName: string): string => `${messageId}\u0000${fileName}`;
const quoted = (values: string[]): string =>
	values.map((v) => `'${v.replace(/'/g, "''")}'`).join(',');

async function phaseRows(d: Deployment, messageIds: string[]): Promise<ErpRow[]> {
	return await d.postgres.json<ErpRow[]>(
		'erp',
		`select json_agg(r) from (select extraction_id, message_id, file_name, invoice_number, total_amount, currency, status, n8n_execution_id,
		   (extract(epoch from stored_at) * 1000)::bigint as stored_ms from invoices where message_id in (${quoted(messageIds)})) r`,
	);
}

/** Executions of the given workflows with an id above `afterId`, oldest first. */
async function executionsOf(d: Deployment, workflowIds: string[], afterId: number) {
	return await d.postgres.json<ExecutionRow[]>(
		'n8n',
		`select json_agg(e order by e.id::bigint) from (select id::text as id, "workflowId" as workflow_id, status, mode, "retryOf" as retry_of, finished
		   from execution_entity where "workflowId" in (${quoted(workflowIds)}) and id > ${afterId}) e`,
	);
}

type ExtractMetadata = { n8nJobKey?: string; source?: string };

/** The `n8nJobKey` of each extraction created (a 2xx to POST /extract/) among `requests` whose metadata `source` is `source`. */
function createdJobKeys(requests: EmulatorProcess['requests'], source: string): string[] {
	return requests.flatMap((q) => {
		if (q.method !== 'POST' || q.path !== '/extract/' || q.status < 200 || q.status >= 300)
			return [];
		const meta = q.body?.kind === 'form' ? q.body.fields.metadata : undefined;
		try {
			const m = JSON.parse(Array.isArray(meta) ? meta[0] : (meta ?? '{}')) as ExtractMetadata;
			return m.source === source ? [String(m.n8nJobKey ?? '')] : [];
		} catch {
			return []; // not JSON: not ours
		}
	});
}

/** What a document's row must hold: what the service read, or where a person reviewed it, the invoice itself. */
function expectedRow(a: PlannedAttachment | undefined, review: boolean): string {
	if (!a) return 'no such document';
	const reviewed = review && a.unreadable.length > 0;
	const values = reviewed ? a.invoice : extracted(a);
	const status = reviewed ? 'REVIEWED' : 'FINISHED';
	return JSON.stringify([...CHECKED_FIELDS.map((f) => values?.[f]), status]);
}

/** A row as expectedRow describes one. */
function actualRow(r: ErpRow): string {
	const total = r.total_amount === null ? null : Number(r.total_amount);
	return JSON.stringify([r.invoice_number, total, r.currency, r.status]);
}

async function runPhase(d: Deployment, opts: Options, spec: PhaseSpec, tag: string) {
	const { flow, label, fault } = spec;
	const review = flow === REVIEW;
	const flowIds = flow.workflows.map((w) => w.id);
	const workersRunning = d.workers.filter((w) => w.service && !w.service.exited()).length;
	console.log(
		`\n=== ${label}: ${spec.mails} mails into ${flow.mailbox}, ${workersRunning} worker(s) × concurrency ${opts.workerConcurrency}${fault ? `; the service answers ${opts.faults} at random, worker-1 is killed` : ''} ===`,
	);
	const seed = opts.seed + (fault ? 7 : review ? 3 : 0);
	const { mails, docs } = await planMails(spec.mails, seed, tag, review ? INCOMPLETE_SHARE : 0);
	const count = (what: (a: PlannedAttachment) => boolean): number =>
		mails.reduce((n, m) => n + m.attachments.filter(what).length, 0);
	console.log(
		`${mails.length} mails: ${docs.length} documents (${count((a) => a.mimeType === 'application/pdf')} PDF, ${count((a) => a.kind === 'document' && a.mimeType === 'image/png')} PNG; ${count((a) => a.kind === 'document' && a.unreadable.length > 0)} with fields the service cannot read) and ${count((a) => a.kind === 'skip')} attachments to skip; ${mails.filter((m) => !m.attachments.some((x) => x.kind === 'document')).length} mails without a document`,
	);
	const maxId = await d.postgres.sql('n8n', 'select coalesce(max(id), 0) from execution_entity');
	const beforeExec = Number(maxId.trim());
	const requestsBefore = d.emulator.requests.length;
	const startedBefore = new Map(d.workers.map((w) => [w.name, new Set(w.started)]));
	const messageIds = mails.map((m) => m.messageId);

	// the IMAP triggers hear of new mail only once back in IDLE (imapflow's autoIdleDelay): not measured
	const idleAt = d.triggerActiveAt + TRIGGER_IDLE_DELAY_MS;
	if (idleAt > Date.now()) {
		console.log(
			`waiting ${secs(idleAt - Date.now())} for the IMAP triggers to be back in IDLE (imapflow's autoIdleDelay, 15 s after its last command)`,
		);
		await sleep(idleAt - Date.now());
	}
	if (fault) await d.emulator.setRandomFaults(opts.faults);
	const reviewer = review ? startReviewer(await d.dovecot.connect('reviewer'), docs) : undefined;
	// IMAP APPEND at --rate mails per second (0: as fast as Dovecot takes them)
	const t0 = Date.now();
	const client = await d.dovecot.connect();
	for (const [i, mail] of mails.entries()) {
		if (opts.rate > 0) await sleep(t0 + (i * 1000) / opts.rate - Date.now());
		await client.append(flow.mailbox, await mimeMessage(mail, `${d.dovecot.user}@e2e.invalid`));
	}
	await client.logout();
	console.log(`delivered ${mails.length} mails by IMAP APPEND in ${secs(Date.now() - t0)}`);

	// the fault round: kill worker-1 while it holds executions of this flow, start it again
	const chaos = fault ? killAndRestartWorker(d, d.workers[0], opts, beforeExec) : undefined;

	// every document has a row and no execution of the flow (nor of the Error Workflow) is left
	// running, queued or waiting, nothing having changed for a moment; the fault round also ends when
	// all are final and nothing has changed for 25 s (what is missing then is retried by hand); any
	// phase after 4 minutes without change: it reports, it does not hang
	let lastReport = 0;
	const settle = async (limit: number): Promise<void> => {
		let lastChange = Date.now();
		let lastKey = '';
		await waitUntil(
			`all ${docs.length} documents of ${label} to reach the ERP table and its executions to end`,
			Math.max(10_000, limit - Date.now()),
			async () => {
				const rows = await phaseRows(d, messageIds);
				const ex = await executionsOf(d, [...flowIds, RETRY_WORKFLOW.id], beforeExec);
				const by = (st: string): number => ex.filter((e) => e.status === st).length;
				const key = `${rows.length}|${ex.map((e) => e.status).join(',')}`;
				if (key !== lastKey) [lastKey, lastChange] = [key, Date.now()];
				if (Date.now() - lastReport > 15_000) {
					lastReport = Date.now();
					console.log(
						`  … ${secs(Date.now() - t0)}: ${rows.length}/${docs.length} rows; executions: ${by('success')} success, ${by('running')} running, ${by('new')} queued, ${by('waiting')} waiting, ${by('error') + by('crashed')} failed${reviewer ? `; ${reviewer.reviews.length} reviews answered` : ''}`,
					);
				}
				const allFinal = ex.length > 0 && ex.every(FINAL);
				const quiet = Date.now() - lastChange;
				if (rows.length >= docs.length && allFinal && quiet > (fault ? 5000 : 0)) return true;
				if (fault && ((allFinal && quiet > 25_000) || Date.now() > limit - 1000)) return true;
				return quiet > 240_000;
			},
			250,
		);
	};
	await settle(fault ? Math.min(opts.deadline, Date.now() + 420_000) : opts.deadline);
	const killed = await chaos;
	const userRetried = new Set<string>();
	if (fault) {
		await d.emulator.setRandomFaults('off');
		// what a user does next: the Executions list → Retry, for each execution still failed (the
		// last of its retries); one n8n emptied (nothing left to retry: a retry held by the killed
		// worker, "processed too many times") is retried from the execution it was a retry of
		for (let round = 1; round <= 3; round++) {
			const ex = await executionsOf(d, flowIds, beforeExec);
			const retriedIds = new Set(ex.map((e) => e.retry_of));
			// (a retry n8n marks finished ran every node: a Retry of it is refused, see recoveriesOf)
			const toRetry = new Map<string, ExecutionRow>();
			for (const e of ex) {
				if (!FAILED(e) || e.finished || retriedIds.has(e.id)) continue;
				const emptied = /processed too many times/.test(await executionError(d, e.id));
				const target = emptied ? ex.find((x) => x.id === e.retry_of) : e;
				if (target && !userRetried.has(target.id)) toRetry.set(target.id, target);
			}
			if (toRetry.size === 0) break;
			for (const e of toRetry.values()) {
				userRetried.add(e.id);
				console.log(
					`fault round: a user's Retry of execution ${e.id} (${e.status}) → ${await executionAction(d, e.id, 'retry')}`,
				);
			}
			await settle(Math.min(opts.deadline, Date.now() + 300_000));
		}
	}
	const reviews = (await reviewer?.stop()) ?? [];
	await sleep(3000); // anything late (a duplicate) would show now
	const rows = await phaseRows(d, messageIds);
	const executions = await executionsOf(d, flowIds, beforeExec);
	const errorWorkflowRuns = await executionsOf(d, [RETRY_WORKFLOW.id], beforeExec);
	const allRowsAt = rows.length ? Math.max(...rows.map((r) => Number(r.stored_ms))) : Date.now();
	const seconds = Math.max(0.001, (allRowsAt - t0) / 1000);

	// rows against the plan
	const expected = new Map(
		docs.map((x) => [docKey(x.mail.messageId, x.attachment.fileName), x.attachment]),
	);
	const expectedOf = (r: ErpRow): string =>
		expectedRow(expected.get(docKey(r.message_id, r.file_name)), review);
	const rowKeys = rows.map((r) => docKey(r.message_id, r.file_name));
	const present = new Set(rowKeys);
	const missing = [...expected.keys()].filter((k) => !present.has(k));
	const unexpected = [...present].filter((k) => !expected.has(k));
	const duplicates = rowKeys.length - present.size;
	// which worker ran what: n8n keeps no worker id in its execution records; each worker logs "Worker started execution N"
	const ranBy = new Map<string, string[]>();
	for (const { name, started } of d.workers)
		for (const id of started)
			if (!startedBefore.get(name)?.has(id)) ranBy.set(id, [...(ranBy.get(id) ?? []), name]);
	const workersUsed = new Set([...ranBy.values()].flat()).size;
	const keys = createdJobKeys(d.emulator.requests.slice(requestsBefore), flow.source);
	const extractedTwice = keys.length - new Set(keys).size;

	const docsPerMin = (docs.length / seconds) * 60;
	const complete = rows.filter((r) => r.status === 'FINISHED').length;
	const reviewed = rows.filter((r) => r.status === 'REVIEWED').length;
	console.log(
		`${label}: ${rows.length} rows in ${secs(seconds * 1000)} from the first APPEND to the last row (${docsPerMin.toFixed(0)} docs/min), ${executions.length} executions of the flow's workflows`,
	);

	check(
		`${label}: every document has exactly one row`,
		rows.length === docs.length && missing.length + duplicates + unexpected.length === 0,
		`${docs.length} documents, ${rows.length} rows, ${missing.length} missing${eg(missing)}, ${duplicates} duplicates, ${unexpected.length} unexpected${eg(unexpected)}`,
	);
	const wrong = rows.filter((r) => actualRow(r) !== expectedOf(r));
	check(
		review
			? `${label}: each row holds the extracted fields, or where a person reviewed the document their values`
			: `${label}: each row holds its document's extracted fields`,
		wrong.length === 0,
		wrong.length
			? `${wrong.length} rows wrong, e.g. ${JSON.stringify(wrong[0])} (expected ${expectedOf(wrong[0])})`
			: review
				? `${complete} FINISHED with the extracted number, total and currency; ${reviewed} REVIEWED with what the person entered`
				: `all FINISHED; every row has its document's invoice number, total and currency (null on the scans)`,
	);
	check(
		`${label}: no document was extracted (and billed) twice`,
		extractedTwice === 0 && (fault ? keys.length <= docs.length : keys.length === docs.length),
		`${keys.length} extractions created for ${docs.length} documents, ${extractedTwice} for a document already extracted (the emulator's log, by each extraction's n8nJobKey)`,
	);
	const stuck = [...executions, ...errorWorkflowRuns].filter((e) => !FINAL(e));
	check(
		`${label}: no execution stuck (running, queued or waiting at the end)`,
		stuck.length === 0,
		stuck.length ? `stuck: ${stuck.map((e) => `${e.id} ${e.status}`).join(', ')}` : 'none',
	);
	const recoveries = fault ? recoveriesOf(executions, killed, userRetried) : [];
	if (fault) {
		await reportFaultPhase(d, label, killed, recoveries, executions, errorWorkflowRuns, rows);
		const unrecovered = recoveries.filter((r) => r.how === 'not recovered');
		// each failed execution's own retry chain must have run to the end (a retry of a stopped
		// execution counts by n8n's `finished` flag, see recoveriesOf), and its documents have rows
		check(
			`${label}: every failed execution was recovered by a retry that ran to the end`,
			unrecovered.length === 0 && missing.length === 0,
			`${recoveries.length} failed, crashed or stopped; ${summarizeRecoveries(recoveries)}${unrecovered.length ? `; ${unrecovered.map((u) => u.id).join(', ')} without a successful retry of its own, ${missing.length} documents missing` : ''}`,
		);
	} else {
		const notSuccess = executions.filter((e) => e.status !== 'success');
		const ids = (list: ExecutionRow[]): string =>
			list
				.slice(0, 5)
				.map((e) => `${e.id}${e.status === 'success' ? '' : ` ${e.status}`}`)
				.join(', ');
		check(
			`${label}: every execution succeeded`,
			notSuccess.length === 0 && executions.length > 0,
			`${executions.length} executions of ${flowIds.join(' + ')}${notSuccess.length ? `; not success: ${ids(notSuccess)}` : ', all success'} (mode ${[...new Set(executions.map((e) => e.mode))].join('/')}); Error Workflow runs: ${errorWorkflowRuns.length}`,
		);
		const unclaimed = executions.filter((e) => !ranBy.has(e.id));
		const twice = executions.filter((e) => (ranBy.get(e.id)?.length ?? 0) > 1);
		const perWorker = d.workers.map(
			({ name }) => `${name} ${executions.filter((e) => ranBy.get(e.id)?.includes(name)).length}`,
		);
		check(
			`${label}: each execution ran on exactly one worker`,
			unclaimed.length === 0 && twice.length === 0,
			`${perWorker.join(', ')}${unclaimed.length ? `; in no worker's log: ${ids(unclaimed)}` : ''}${twice.length ? `; on two: ${ids(twice)}` : ''}`,
		);
		// (a small load may fit in one worker's slots: asserted at the closing line's size, 200 mails)
		const used = `${workersUsed} of ${workersRunning} running workers started executions of this phase`;
		if (spec.mails >= 200)
			check(
				`${label}: ${workersRunning === 2 ? 'both workers' : 'the worker'} ran executions`,
				workersUsed === workersRunning,
				used,
			);
		else console.log(`INFO ${label}: ${used} (asserted from 200 mails)`);
	}
	if (flow.sheetsBy) {
		// the spreadsheets: one per execution of the storing workflow (files/erp/batch-<id>.xlsx),
		// their rows = the table's rows
		const dir = path.join(d.shared.filesDir, 'erp');
		const names = executions.filter((e) => e.workflow_id === flow.sheetsBy).map((e) => e.id);
		const files = names.map((id) => path.join(dir, `batch-${id}.xlsx`)).filter(existsSync);
		const sheets = { files: files.length, rows: [] as Array<Record<string, unknown>> };
		for (const f of files) sheets.rows.push(...(await readFirstSheet(readFileSync(f))).records);
		const tableIds = new Set(rows.map((r) => r.extraction_id));
		const sheetIds = [...new Set(sheets.rows.map((r) => String(r.extraction_id)))];
		const rowKey = (r: ErpRow | Record<string, unknown>): string =>
			JSON.stringify([r.extraction_id, r.message_id, r.file_name, String(r.invoice_number ?? '')]);
		const tableKeys = new Set(rows.map(rowKey));
		const differ = sheets.rows.filter((r) => !tableKeys.has(rowKey(r)));
		// a retried execution writes its batch again (as the upsert rewrites its rows): in the fault round an id may be in two sheets
		check(
			`${label}: the spreadsheets' rows equal the table's rows`,
			sheetIds.length === rows.length &&
				(fault || sheets.rows.length === rows.length) &&
				sheetIds.every((id) => tableIds.has(id)) &&
				differ.length === 0,
			`${sheets.files} batch-*.xlsx files with ${sheets.rows.length} rows, ${sheetIds.length} distinct extraction ids; table ${rows.length} rows${differ.length ? `; ${differ.length} rows differ` : ''}`,
		);
	}
	if (reviewer) checkReviews(check, docs, reviews);
	const box = await d.dovecot.connect();
	const status = await box.status(flow.mailbox, { messages: true, unseen: true });
	await box.logout();
	check(
		`${label}: the trigger read every mail`,
		status && status.unseen === 0,
		`${flow.mailbox}: ${status && status.messages} messages, ${status && status.unseen} unseen`,
	);
	return {
		...spec,
		mails: mails.length,
		workersRunning,
		docs: docs.length,
		rows: rows.length,
		missing: missing.length,
		duplicates,
		extractedTwice,
		workersUsed,
		seconds,
		docsPerMin,
		complete,
		reviewed,
		reviews,
		recoveries,
		killed,
	};
}
type PhaseResult = Awaited<ReturnType<typeof runPhase>>;

// ---------------------------------------------------------------------------------------------
// the fault round

/** What the fault round did: the worker killed, when, and the executions it held then. */
type Killed = Awaited<ReturnType<typeof killAndRestartWorker>>;

/** The fault round's chaos: once `w` holds two executions (≤ 90 s), SIGKILL to its process group (a machine that dies); 5 s later it starts again. */
async function killAndRestartWorker(d: Deployment, w: Worker, opts: Options, after: number) {
	const held = (): string[] =>
		[...w.started].filter((id) => Number(id) > after && !w.finished.has(id));
	const holdsTwo = (): boolean => held().length >= 2;
	try {
		await waitUntil(`${w.name} to hold two executions`, 90_000, holdsTwo, 100);
	} catch (err) {
		console.log(`fault round: ${(err as Error).message}; killing it anyway`);
	}
	const killed = {
		worker: w.name,
		at: Date.now(),
		held: held(),
		/** Held executions a user stopped and retried (they still showed as running or queued). */
		stopped: [] as string[],
		/** Of `held`: the jobs it had taken from the queue but not started (found in Bull after the restart). */
		taken: [] as string[],
	};
	const startedByDead = new Set(w.started);
	console.log(
		`fault round: SIGKILL to ${w.name} (pid ${w.service?.pid} and its task runner) while it holds executions ${killed.held.join(', ') || '(none)'}`,
	);
	await w.service?.kill();
	await sleep(5000);
	if (opts.faultRestart === 'fresh') {
		// a new container: a new user folder (no event log, no crash journal), same name in our books
		const fresh = await prepareWorker(`${w.name}-fresh-${Date.now().toString(36)}`, d.shared);
		const { started, finished } = w;
		w = d.workers[d.workers.indexOf(w)] = { ...fresh, name: w.name, started, finished };
	}
	await startWorker(d, w, opts);
	console.log(
		`fault round: ${w.name} started again (pid ${w.service?.pid}, ${opts.faultRestart === 'fresh' ? 'in a fresh user folder' : 'in its own user folder'}) ${secs(Date.now() - killed.at)} after the kill`,
	);
	// What an operator who saw the worker die does before n8n empties the executions it held (its
	// queue jobs stall 60 s lock + 30 s check after the kill): Stop + Retry each one still shown as
	// running, or as queued — a job it had taken but not started, still active in Bull under its
	// lock (seen: 37 documents lost that way). Active jobs no live worker has started, read twice
	// 1 s apart: a job a live worker takes this instant is started within milliseconds. A crashed
	// one (the restarted worker recovered it from its event log) is left to the Error Workflow.
	await sleep(3000);
	const activeBefore = new Set(await d.redis.activeExecutions());
	await sleep(1000);
	const startedByLive = new Set<string>();
	for (const x of d.workers)
		for (const id of x.started)
			if (x.name !== w.name || !startedByDead.has(id)) startedByLive.add(id);
	const activeNow = (await d.redis.activeExecutions()).filter((id) => Number(id) > after);
	console.log(
		`fault round: Bull's active jobs ${secs(Date.now() - killed.at)} after the kill: executions ${activeNow.join(', ') || '(none)'} (the dead worker's started ones: ${killed.held.join(', ') || 'none'})`,
	);
	for (const id of activeNow) {
		if (!activeBefore.has(id) || killed.held.includes(id) || startedByLive.has(id)) continue;
		killed.held.push(id);
		killed.taken.push(id);
		console.log(
			`fault round: execution ${id} was taken from the queue by ${w.name} but not started when it died (Bull: active, under the dead worker's lock; n8n shows it as queued)`,
		);
	}
	const now = await executionsOf(d, FLOW_WORKFLOW_IDS, after);
	for (const id of killed.held) {
		const e = now.find((x) => x.id === id);
		if (!e || !['running', 'new'].includes(e.status)) continue;
		const stop = await executionAction(d, id, 'stop');
		killed.stopped.push(id);
		console.log(
			`fault round: execution ${id} still shows as ${e.status === 'new' ? 'queued' : 'running'} ${secs(Date.now() - killed.at)} after the kill: a user's Stop → ${stop}; Retry → ${await executionAction(d, id, 'retry')}`,
		);
	}
	return killed;
}

/** The editor's Stop or Retry of an execution, as the owner (POST /rest/executions/:id/stop or /retry, a Retry with the workflow as it was then): `200 data…`, or the error. */
async function executionAction(d: Deployment, id: string, action: 'stop' | 'retry') {
	const body = action === 'retry' ? { loadWorkflow: false } : undefined;
	return d.rest.call('POST', `/rest/executions/${id}/${action}`, body).then(
		(data) => `200 ${JSON.stringify(data).slice(0, 160)}`,
		(err: Error) => err.message.slice(0, 200),
	);
}

/** How one failed (or crashed) execution of the fault round ended up. */
interface Recovery {
	id: string;
	status: string;
	/** Why it failed, as far as the run knows. */
	cause: 'held by the killed worker' | 'failed';
	how:
		'retried by the Error Workflow' | "a user's Retry" | "a user's Stop + Retry" | 'not recovered';
	/** The executions of its retry chain, `id status`. */
	chain: string[];
}

/**
 * Sorts the failed executions that are not themselves retries: each is recovered when some retry
 * in its chain (retryOf links) ran to the end — by the Error Workflow (a retry the run did not
 * start) or by a user's Retry (one the run started). Ran to the end: success, or n8n's `finished`
 * flag (n8n stores a Retry of a stopped execution with no node event saved as `error` although it
 * ran: see the README's fault round).
 */
function recoveriesOf(
	executions: ExecutionRow[],
	killed: Killed | undefined,
	userRetried: Set<string>,
): Recovery[] {
	const byUser = new Set([...userRetried, ...(killed?.stopped ?? [])]);
	const roots = executions.filter((e) => (FAILED(e) || e.status === 'canceled') && !e.retry_of);
	return roots.map((root) => {
		const chain: string[] = [];
		let how: Recovery['how'] = 'not recovered';
		const walk = (e: ExecutionRow, userChain: boolean): void => {
			for (const c of executions.filter((x) => x.retry_of === e.id)) {
				const user = userChain || byUser.has(e.id);
				chain.push(
					`${c.id} ${c.status}${c.status !== 'success' && c.finished ? ' but finished' : ''}${byUser.has(e.id) ? ' (user)' : ' (Error Workflow)'}`,
				);
				if ((c.status === 'success' || c.finished) && how === 'not recovered')
					how = !user
						? 'retried by the Error Workflow'
						: killed?.stopped.includes(root.id)
							? "a user's Stop + Retry"
							: "a user's Retry";
				walk(c, user);
			}
		};
		walk(root, false);
		const cause = killed?.held.includes(root.id) ? 'held by the killed worker' : 'failed';
		return { id: root.id, status: root.status, cause, how, chain };
	});
}

function summarizeRecoveries(list: Recovery[]): string {
	const count = (how: Recovery['how'], cause?: Recovery['cause']): number =>
		list.filter((r) => r.how === how && (!cause || r.cause === cause)).length;
	return `${count('retried by the Error Workflow')} retried by the Error Workflow (${count('retried by the Error Workflow', 'held by the killed worker')} held by the killed worker), ${count("a user's Stop + Retry")} by a user's Stop + Retry (held, still running or queued), ${count("a user's Retry")} by a user's Retry, ${count('not recovered')} not recovered`;
}

/** Lines of the n8n logs (main and workers, both incarnations of a restarted worker) that name execution `id`, indented. */
function logLinesAbout(d: Deployment, id: string, most: number, indent: string): string {
	const logDir = path.join(d.root, 'logs');
	const about = new RegExp(
		`\\b(execution|Execution) ${id}\\b|"executionId":"?${id}\\b|unfinished executions: (\\d+, )*${id}\\b`,
	);
	const lines = readdirSync(logDir)
		.filter((f) => /^(main|worker-\d)/.test(f))
		.flatMap((name) =>
			readFileSync(path.join(logDir, name), 'utf8')
				.split('\n')
				.filter((line) => about.test(line))
				.map((line) => `\n${indent}${name.replace(/\.log$/, '')}: ${line.slice(0, 200)}`),
		);
	return lines.slice(0, most).join('');
}

/** The fault round's report: the executions the dead worker held, each failed execution's error and recovery, the Error Workflow's runs. */
async function reportFaultPhase(
	d: Deployment,
	label: string,
	killed: Killed | undefined,
	recoveries: Recovery[],
	executions: ExecutionRow[],
	errorWorkflowRuns: ExecutionRow[],
	rows: ErpRow[],
): Promise<void> {
	const held = killed?.held ?? [];
	console.log(`\n${label}: what n8n did with the ${held.length} executions ${killed?.worker} held`);
	for (const id of held)
		console.log(
			`  execution ${id}${killed?.taken.includes(id) ? ' (taken from the queue, not started)' : ''}: status ${executions.find((x) => x.id === id)?.status ?? '?'}, rows stored by it ${rows.filter((x) => x.n8n_execution_id === id).length}${logLinesAbout(d, id, 8, '    ')}`,
		);
	console.log(`${label}: failed or crashed executions and their recovery`);
	for (const rec of recoveries) {
		console.log(
			`  execution ${rec.id} (${rec.cause}): ${rec.status}: ${await executionError(d, rec.id)} → ${rec.how}${rec.chain.length ? ` [${rec.chain.join(' → ')}]` : ''}`,
		);
		// a retry that did not succeed: what n8n recorded, and what main and the workers logged of it
		for (const e of executions.filter((x) => rec.chain.some((c) => c.startsWith(`${x.id} `))))
			if (e.status !== 'success')
				console.log(
					`    retry ${e.id}: status ${e.status}, finished ${e.finished}, ${await executionError(d, e.id)}${logLinesAbout(d, e.id, 6, '      ')}`,
				);
	}
	const ewBy = (st: string): number => errorWorkflowRuns.filter((e) => e.status === st).length;
	console.log(
		`${label}: the Error Workflow ran ${errorWorkflowRuns.length} times (${ewBy('success')} success, ${ewBy('error') + ewBy('crashed')} failed)`,
	);
}

/** The error n8n stored with an execution (its run data's, as the editor reads it): `name: message`. */
async function executionError(d: Deployment, id: string): Promise<string> {
	const err = await d.rest.execution(id).then(
		({ run }) => run.error,
		() => undefined,
	);
	const name = (err as { name?: string } | undefined)?.name ?? 'Error';
	return err ? `${name}: ${String(err.message).slice(0, 200)}` : '(no error in its data)';
}

// ---------------------------------------------------------------------------------------------

const lineOf = (r: PhaseResult): string =>
	`${r.mails} mails, ${r.docs} documents, ${r.rows} rows, ${r.missing} missing, ${r.duplicates} duplicates, ${r.workersUsed} workers, ${r.seconds.toFixed(1)} s, ${r.docsPerMin.toFixed(0)} docs/min`;

async function main(): Promise<number> {
	const opts = parseArgs();
	const t0 = Date.now();
	// the whole run is bounded: a minute past the deadline everything is stopped
	const stop = (): void => {
		console.error(`\nthe run exceeded --timeout ${opts.timeoutS} s: stopping`);
		cleanUpNow();
		process.exit(1);
	};
	setTimeout(stop, opts.deadline + 60_000 - t0).unref();

	const tools = await timed('install: Dovecot, PostgreSQL, Redis (scripts/e2e/install.sh)', () =>
		installTools(),
	);
	const n8n = await timed('install: n8n 2.x (scripts/n8n/install.sh 2)', () =>
		installLine('2', { install: opts.install }),
	);
	const cold = tools.installed || n8n.installed;
	console.log(
		`Installs: ${tools.installed ? 'Debian packages installed now' : 'Debian packages present'}, n8n ${n8n.info.version} ${n8n.installed ? 'installed now' : 'cached'} → a ${cold ? 'COLD' : 'WARM'} run`,
	);
	const packDir = makeRunRoot('n8n-es-e2e-pack-');
	removeAtExit(packDir);
	const { tarball } = await timed('build + pack the package', () =>
		buildAndPack(packDir, opts.build),
	);

	const d = await deploy(opts, tarball, n8n.info, tools.tools);
	const tRun = Date.now();
	const phases: PhaseResult[] = [];
	const runTag = Date.now().toString(36).toUpperCase();
	const phase = async (spec: PhaseSpec, suffix: string): Promise<void> => {
		const tag = `E2E${runTag}${suffix}`;
		phases.push(await timed(spec.label, () => runPhase(d, opts, spec, tag)));
	};
	if (opts.compareWorkers) {
		await timed('start worker-1', () => startWorker(d, d.workers[0], opts));
		await phase({ flow: FLOW_1, label: 'flow 1, 1 worker', mails: opts.mails }, 'A');
		await timed('start worker-2', () => startWorker(d, d.workers[1], opts));
	} else {
		await timed('start worker-1 and worker-2', async () => {
			await Promise.all(d.workers.map((w) => startWorker(d, w, opts)));
		});
	}
	// this process (the SMTP server) and every server it started, with their children
	const listening = listeningSockets([process.pid]);
	const exposed = listening.filter(
		(x) => !/^(127\.\d+\.\d+\.\d+|\[::1\]|\[::ffff:127\.\d+\.\d+\.\d+\]):\d+$/.test(x.local),
	);
	check(
		'every server listens on loopback only',
		exposed.length === 0,
		`${listening.length} listening sockets${exposed.length ? `; NOT loopback: ${exposed.map((x) => `${x.local} (pid ${x.pid})`).join(', ')}` : ', all on 127.0.0.1'}`,
	);
	const mails = opts.mails;
	const specs: Record<Phase, PhaseSpec> = {
		flow1: { flow: FLOW_1, label: `flow 1${opts.compareWorkers ? ', 2 workers' : ''}`, mails },
		flow2: { flow: FLOW_2, label: 'flow 2', mails },
		review: { flow: REVIEW, label: 'review', mails: opts.reviewMails },
		fault1: { flow: FLOW_1, label: 'fault round, flow 1', mails: opts.faultMails, fault: true },
		fault2: { flow: FLOW_2, label: 'fault round, flow 2', mails: opts.faultMails, fault: true },
	};
	for (const ph of opts.compareWorkers ? ['flow1' as const] : opts.phases)
		await phase(specs[ph], ph.toUpperCase());
	const runMs = Date.now() - tRun;

	// n8n's editor in Debian's Chromium on the same main instance (queue mode), signed in as the
	// owner: the steps of scripts/editor/steps.ts, each a check; screenshots in the throwaway folder.
	// Its Schema list must show exactly the seeded schemas: the review phase's own is deleted first.
	const editor = opts.editor && !opts.compareWorkers;
	if (editor) await deleteReviewSchema(d.emulator, d.reviewSchema);
	const steps = editor
		? await timed('the editor in Chromium (same server)', () =>
				runEditorOnServer(
					{ url: d.mainUrl, owner: d.owner, cli: d.main.cli, emulator: d.emulator },
					{
						screenshotsDir: path.join(d.root, 'editor-screenshots'),
						failuresDir: path.join(ROOT, '.tmp', 'editor'),
						verbose: opts.verbose,
						timeoutMs: 300_000,
						log: (l) => console.log(`  editor: ${l}`),
					},
				),
			)
		: [];
	for (const st of steps)
		check(`editor (queue-mode main): ${st.name}`, st.ok, st.ok ? 'ok' : (st.message ?? 'failed'));

	// stop n8n first (workers, then main), then the servers; all within bounded waits
	await timed('stop everything', async () => {
		await Promise.all(d.workers.map((w) => w.service?.stop(30_000)));
		await d.main.service?.stop(30_000);
		const servers = [d.dovecot.service, d.postgres.service, d.redis.service, d.smtp, d.emulator];
		await Promise.all(servers.map((s) => s.stop()));
		cleanUpNow();
	});

	const whole = `whole run (${cold ? 'cold: something was installed' : 'warm: everything installed'})`;
	console.log('\n=== timings ===');
	timings.push(['load phases (workers started + delivery + processing)', runMs]);
	timings.push([whole, Date.now() - t0]);
	for (const [label, ms] of timings) console.log(`${label.padEnd(52)} ${secs(ms)}`);
	if (opts.compareWorkers && phases.length === 2) {
		const [one, two] = phases;
		console.log(
			`\nthroughput, same load (${one.mails} mails, ${one.docs} documents each): 1 worker ${secs(one.seconds * 1000)}, ${one.docsPerMin.toFixed(0)} docs/min; ` +
				`2 workers ${secs(two.seconds * 1000)}, ${two.docsPerMin.toFixed(0)} docs/min (×${(two.docsPerMin / one.docsPerMin).toFixed(2)})`,
		);
	}
	let ok = checks.failed.length === 0;
	console.log(`\n${checks.summary('', true)}`);

	// the closing lines, their claims asserted: nothing lost, written or extracted twice
	const intact = (r: PhaseResult): boolean =>
		r.rows === r.docs && r.missing === 0 && r.duplicates === 0 && r.extractedTwice === 0;
	const minimum = opts.mails >= 200 ? { mails: 200, docs: 300 } : { mails: opts.mails, docs: 1 };
	const clean = (r: PhaseResult): boolean =>
		intact(r) &&
		r.mails >= minimum.mails &&
		r.docs >= minimum.docs &&
		(r.mails < 200 || r.workersUsed === r.workersRunning);
	const ofFlow = (flow: Flow): PhaseResult | undefined =>
		[...phases].reverse().find((r) => r.flow === flow && !r.fault);
	/** Prints a closing line; the run fails unless its claims hold. */
	const closing = (line: string, claims: boolean): void => {
		console.log(line);
		ok &&= claims;
	};
	const [flow1, flow2, rev] = [FLOW_1, FLOW_2, REVIEW].map(ofFlow);
	if (flow2)
		closing(
			`e2e flow 2: ${lineOf(flow2)} (upload without waiting + Extraction Service Trigger)`,
			clean(flow2),
		);
	if (rev)
		closing(
			`e2e review: ${rev.mails} mails, ${rev.docs} documents, ${rev.complete} complete, ${rev.reviewed} reviewed, ${rev.rows} rows, ${rev.missing} missing, ${rev.duplicates} duplicates (${rev.reviews.length} review forms answered over HTTP)`,
			intact(rev) &&
				rev.complete > 0 &&
				rev.reviewed > 0 &&
				rev.complete + rev.reviewed === rev.docs &&
				rev.reviews.length === rev.reviewed,
		);
	const faults = phases.filter((r) => r.fault);
	if (faults.length) {
		const all = faults.flatMap((r) => r.recoveries);
		const parts = faults.map(
			(r) =>
				`${r.flow.name} ${r.docs} documents ${r.rows} rows ${r.missing} missing ${r.duplicates} duplicates ${r.extractedTwice} extracted twice`,
		);
		closing(
			`e2e fault round: ${parts.join('; ')}; ${faults.filter((r) => r.killed).length} worker kills (restarted in ${opts.faultRestart === 'fresh' ? 'a fresh' : 'its own'} user folder), random faults ${opts.faults}; ${all.length} failed executions: ${summarizeRecoveries(all)}`,
			faults.every(intact),
		);
	}
	if (steps.length)
		console.log(
			`e2e editor: ${steps.filter((x) => x.ok).length} passed, ${steps.filter((x) => !x.ok).length} failed (n8n's editor in Chromium, on the queue-mode main instance)`,
		);
	if (flow1) closing(`e2e: ${lineOf(flow1)}`, clean(flow1));
	if (!ok) console.error('e2e FAILED');
	return ok ? 0 : 1;
}

runMain(main, {
	label: 'e2e',
	onSignal: (sig) =>
		console.error(`\n${sig}: stopping every server and removing the throwaway folder`),
});
