/**
 * End to end, as users deploy it: invoice mails in a real mailbox, n8n 2.x in queue mode (main +
 * workers, PostgreSQL, Redis) with this package installed as a community package, the service
 * emulator, and an ERP table in PostgreSQL — all on loopback, all throwaway.
 *
 *   npx tsx scripts/e2e/run.ts                      # flow 1, flow 2, the fault round, the editor
 *   npx tsx scripts/e2e/run.ts --phases flow1 --mails 20 --no-editor   # a quick run
 *   npx tsx scripts/e2e/run.ts --compare-workers    # flow 1's load with 1 worker, then with 2
 *
 * The workflows (examples/workflows/, all published in the same n8n):
 * - flow 1, e2e-email-to-postgres.json: Email Trigger (IMAP, INBOX) → Extraction → Create waiting
 *   inside the node → Postgres upsert + a spreadsheet per execution;
 * - flow 2, e2e-email-upload-without-waiting.json (Email Trigger on the folder "Async" → Create
 *   without waiting, metadata source + message id) and e2e-finished-extractions-to-postgres.json
 *   (Extraction Service Trigger, Extraction Finished, polling every 10 s → the same upsert + sheet);
 * - e2e-retry-failed-execution.json, the Error Workflow of the three: retries a failed or crashed
 *   execution once through n8n's public API (an API key with the scope execution:retry).
 *
 * Phases (--phases, default flow1,flow2,fault1,fault2): `flow1` / `flow2` deliver --mails mails to
 * the flow's folder and assert every document has exactly one correct row, every execution
 * succeeded on one worker, both workers ran some, no document was extracted twice, the
 * spreadsheets equal the table; `fault1` / `fault2` (the fault round) do the same with
 * --fault-mails mails while the service answers --faults at random and worker-1 is killed (SIGKILL
 * to its process group) while it holds executions and started again 5 s later (--fault-restart
 * same: in its own user folder, a restarted host; fresh: a new one, a new container). Then every
 * execution still failed is retried as a user would (the Executions list's Retry), and each failed
 * execution's recovery is reported. With `same` the round asserts 0 missing, 0 duplicates, 0
 * documents extracted twice; with `fresh` it reports the losses (n8n empties the executions a dead
 * worker held, see the README) and asserts only that nothing was written or extracted twice.
 * Then (unless --no-editor) n8n's editor in Debian's Chromium against the same main instance
 * (scripts/editor/on-server.ts).
 *
 * Options: --mails N (default 200), --fault-mails N (default 100), --phases LIST,
 * --compare-workers, --worker-concurrency N (default 10 as n8n's), --rate R (mails delivered per
 * second; default 0: all at once), --processing-ms A and --processing-max-ms B (the emulator's job
 * time, default 3000–6000), --seed N, --timeout S (the whole run, default 1800), --no-install,
 * --no-build, --keep (keep the throwaway folder), --verbose (every server's output), --faults SPEC
 * (default "*:429:0.03,GET:503:0.05,POST:502:0.01"), --fault-restart same|fresh, --no-editor.
 *
 * The last lines (each asserted):
 *
 *   e2e flow 2: <mails> mails, <docs> documents, <rows> rows, <missing> missing, <duplicates> duplicates, <workers> workers, <seconds> s, <docs_per_min> docs/min
 *   e2e fault round: …
 *   e2e: <mails> mails, <docs> documents, <rows> rows, <missing> missing, <duplicates> duplicates, <workers> workers, <seconds> s, <docs_per_min> docs/min
 *
 * (the last one is flow 1). Exit code 0 only when every check passed. Every server is stopped and
 * the throwaway folder removed on exit, on failure and on Ctrl+C. See scripts/e2e/README.md.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { launchEmulator, type EmulatorProcess } from '../../emulator/launch';
import { runEditorOnServer } from '../editor/on-server';
import { mimeMessage, planMails, plannedDocuments, type PlannedMail } from './mail';
import {
	numberFlag,
	readArgs,
	usageError,
	RUNNER_FLAGS,
	runnerOptions,
	type RunnerOptions,
} from '../lib/args';
import { Checks } from '../lib/checks';
import { buildAndPack, installLine, n8nImport, TOKEN_CREDENTIAL } from '../lib/n8n';
import { freePort } from '../lib/ports';
import {
	cleanUpNow,
	commandError,
	removeAtExit,
	runMain,
	secs,
	sleep,
	waitUntil,
	type Done,
} from '../lib/processes';
import { DATA_PREFIX, PLACEHOLDER_SCHEMA, SEEDED_INVOICE_SCHEMA } from '../n8n/examples';
import { pollTimesEvery } from '../n8n/trigger-run';
import { readFirstSheet } from '../n8n/xlsx';
import {
	installTools,
	listeningSockets,
	makeRunRoot,
	prepareN8nProcess,
	ROOT,
	startDovecot,
	startN8n,
	startPostgres,
	startRedis,
	type Dovecot,
	type N8nProcess,
	type N8nShared,
	type Postgres,
	type Redis,
} from './services';

const WORKFLOWS_DIR = path.join(ROOT, 'examples', 'workflows');

/** One path from mail to ERP row: its workflows and where its mails and extractions are told apart. */
interface Flow {
	name: 'flow 1' | 'flow 2';
	/** The IMAP folder its Email Trigger watches (the example says INBOX; the copy is pointed here). */
	mailbox: string;
	/** Its workflows (file in examples/workflows, id of the imported copy); all are published. */
	workflows: Array<{ file: string; id: string }>;
	/** The workflow whose executions write the rows and the spreadsheets. */
	storeWorkflowId: string;
	/** `metadata.source` of the extractions it creates. */
	source: string;
}
const FLOW_1: Flow = {
	name: 'flow 1',
	mailbox: 'INBOX',
	workflows: [{ file: 'e2e-email-to-postgres.json', id: 'e2eMailToErp01' }],
	storeWorkflowId: 'e2eMailToErp01',
	source: 'email',
};
const FLOW_2: Flow = {
	name: 'flow 2',
	mailbox: 'Async',
	workflows: [
		{ file: 'e2e-email-upload-without-waiting.json', id: 'e2eMailUpload01' },
		{ file: 'e2e-finished-extractions-to-postgres.json', id: 'e2eStoreFinish1' },
	],
	storeWorkflowId: 'e2eStoreFinish1',
	source: 'email-async',
};
/** The Error Workflow of the flows' workflows: a failed or crashed execution is retried once. */
const RETRY_WORKFLOW = { file: 'e2e-retry-failed-execution.json', id: 'e2eRetryFailed1' };
/** Where the examples say n8n is (the Error Workflow's URL); pointed at main. */
const EXAMPLE_N8N_URL = 'http://localhost:5678';
/** Poll Times of the Extraction Service Trigger in the run: every 10 s (n8n's shortest: one 6-field cron per 10 s). */
const TRIGGER_POLL_SECONDS = 10;

/** Credential ids the workflows reference (≤ 16 characters, as n8n's import requires). */
const CREDENTIALS = {
	imap: { id: 'e2eImapCred1', name: 'Invoices Mailbox', type: 'imap' },
	postgres: { id: 'e2ePostgresCred1', name: 'ERP Database', type: 'postgres' },
	token: TOKEN_CREDENTIAL,
	n8nApi: { id: 'e2eN8nApiCred1', name: 'n8n API', type: 'n8nApi' },
};

/** imapflow's autoIdleDelay (15 s) and a margin: how long after its last command the IMAP trigger is in IDLE again. */
const TRIGGER_IDLE_DELAY_MS = 16_500;

/** The ERP table (the workflow's sticky note shows the same). */
const ERP_TABLE_SQL = `
CREATE TABLE invoices (
  extraction_id text PRIMARY KEY,
  message_id text NOT NULL,
  file_name text NOT NULL,
  invoice_number text,
  invoice_date text,
  vendor_name text,
  customer_name text,
  total_amount numeric(14,2),
  currency text,
  due_date text,
  status text NOT NULL,
  n8n_execution_id text,
  stored_at timestamptz NOT NULL DEFAULT now()
);`;

// ---------------------------------------------------------------------------------------------
// options

type Phase = 'flow1' | 'flow2' | 'fault1' | 'fault2';
const PHASES: Phase[] = ['flow1', 'flow2', 'fault1', 'fault2'];

interface Options extends RunnerOptions {
	mails: number;
	/** Mails per flow in the fault round. */
	faultMails: number;
	phases: Phase[];
	compareWorkers: boolean;
	workerConcurrency: number;
	rate: number;
	processingMs: number;
	processingMaxMs: number;
	seed: number;
	timeoutS: number;
	/** The emulator's `--random-faults` spec in the fault round. */
	faults: string;
	/** How the killed worker comes back: `same` user folder (its event log and crash journal), or a `fresh` one (a new container). */
	faultRestart: 'same' | 'fresh';
	/** Run the editor's browser steps against main at the end. */
	editor: boolean;
}

/** Errors the service answers at random in the fault round (emulator `--random-faults`). */
const DEFAULT_FAULTS = '*:429:0.03,GET:503:0.05,POST:502:0.01';

/** Reads the command line (scripts/lib/args.ts). */
function parseArgs(): Options {
	const { values: v } = readArgs(__filename, {
		mails: { type: 'string' },
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
	const phases = (v.phases ?? PHASES.join(','))
		.split(',')
		.map((x) => x.trim())
		.filter(Boolean);
	for (const ph of phases)
		if (!PHASES.includes(ph as Phase))
			usageError(`--phases: "${ph}" is not one of ${PHASES.join(', ')}`);
	const processingMs = numberFlag('processing-ms', v['processing-ms'], 3000);
	return {
		mails: numberFlag('mails', v.mails, 200, 1, true),
		faultMails: numberFlag('fault-mails', v['fault-mails'], 100, 1, true),
		phases: PHASES.filter((ph) => phases.includes(ph)),
		compareWorkers: v['compare-workers'] === true,
		workerConcurrency: numberFlag('worker-concurrency', v['worker-concurrency'], 10, 1, true),
		rate: numberFlag('rate', v.rate, 0),
		processingMs,
		processingMaxMs: numberFlag(
			'processing-max-ms',
			v['processing-max-ms'],
			Math.max(6000, processingMs),
		),
		seed: numberFlag('seed', v.seed, 20261122, 0, true),
		timeoutS: numberFlag('timeout', v.timeout, 1800, 60),
		...runnerOptions(v),
		faults: v.faults ?? DEFAULT_FAULTS,
		faultRestart: v['fault-restart'] === 'fresh' ? 'fresh' : 'same',
		editor: v['no-editor'] !== true,
	};
}

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

// ---------------------------------------------------------------------------------------------
// checks: each one named, collected, printed, counted

const checks = new Checks();
const check = checks.check.bind(checks);

// ---------------------------------------------------------------------------------------------
// the deployment

interface Deployment {
	/** The packed package, for a worker started later in a fresh folder. */
	tarball: string;
	root: string;
	logDir: string;
	filesDir: string;
	postgres: Postgres;
	redis: Redis;
	dovecot: Dovecot;
	emulator: EmulatorProcess;
	shared: N8nShared;
	main: N8nProcess;
	workers: N8nProcess[];
	/** Execution ids each worker logged as started ("Worker started execution N"), by worker name. */
	workerExecutions: Map<string, Set<string>>;
	/** Execution ids each worker logged as finished ("Worker finished execution N"). */
	workerFinished: Map<string, Set<string>>;
	mainUrl: string;
	/** When an IMAP trigger last talked to Dovecot as far as we know: its login, or main's last "Enqueued execution". */
	triggerActiveAt: number;
	/** The owner account (set up after main started). */
	owner: { email: string; password: string; cookie: string };
}

/**
 * The copy of an example workflow n8n imports: its id set, the placeholder schema pointed at the
 * emulator's Invoice schema, `/home/node/.n8n-files/` at the run's files folder, the n8n URL at main;
 * for a flow's workflow also the IMAP folder, the trigger's Poll Times (every 10 s) and the Error
 * Workflow.
 */
function prepareWorkflow(
	file: string,
	id: string,
	filesDir: string,
	mainUrl: string,
	flow?: Flow,
): Record<string, unknown> {
	const wf = JSON.parse(readFileSync(path.join(WORKFLOWS_DIR, file), 'utf8')) as {
		nodes: Array<{ type: string; parameters?: Record<string, unknown> }>;
		settings?: Record<string, unknown>;
	} & Record<string, unknown>;
	const rewrite = (value: unknown): unknown => {
		if (typeof value === 'string') {
			if (value === PLACEHOLDER_SCHEMA) return SEEDED_INVOICE_SCHEMA;
			return value.split(DATA_PREFIX).join(`${filesDir}/`).split(EXAMPLE_N8N_URL).join(mainUrl);
		}
		if (Array.isArray(value)) return value.map(rewrite);
		if (value && typeof value === 'object')
			return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, rewrite(x)]));
		return value;
	};
	const nodes = wf.nodes.map((n) => {
		const parameters = rewrite(n.parameters ?? {}) as Record<string, unknown>;
		if (flow && n.type === 'n8n-nodes-base.emailReadImap') parameters.mailbox = flow.mailbox;
		if (flow && n.type === 'n8n-nodes-extraction-service.extractionServiceTrigger')
			parameters.pollTimes = pollTimesEvery(TRIGGER_POLL_SECONDS);
		return { ...n, parameters };
	});
	const settings = flow
		? { ...(wf.settings ?? {}), errorWorkflow: RETRY_WORKFLOW.id }
		: wf.settings;
	return { ...wf, id, active: false, nodes, settings };
}

/** Throws commandError when an n8n CLI command did not exit 0. */
function cliOk(what: string, r: Done): void {
	if (r.code !== 0) throw commandError(what, r);
}

async function deploy(
	opts: Options,
	tarball: string,
	line: N8nShared['line'],
	tools: Awaited<ReturnType<typeof installTools>>['tools'],
): Promise<Deployment> {
	const root = makeRunRoot('n8n-es-e2e-');
	removeAtExit(root, opts.keep);
	const logDir = path.join(root, 'logs');
	const filesDir = path.join(root, 'files');
	mkdirSync(logDir, { recursive: true });
	mkdirSync(path.join(filesDir, 'erp'), { recursive: true });
	console.log(`Throwaway folder: ${root}${opts.keep ? ' (kept)' : ''}`);

	const [postgres, redis, dovecot, emulator] = await timed(
		'servers (PostgreSQL, Redis, Dovecot, emulator)',
		() =>
			Promise.all([
				startPostgres(tools, root, logDir),
				startRedis(tools, root, logDir),
				startDovecot(tools, root, logDir),
				launchEmulator({
					processingMs: opts.processingMs,
					processingMaxMs: opts.processingMaxMs,
					quiet: true,
				}),
			]),
	);
	console.log(
		`PostgreSQL 127.0.0.1:${postgres.port}, Redis 127.0.0.1:${redis.port}, Dovecot IMAP 127.0.0.1:${dovecot.port}, emulator ${emulator.url} (jobs ${opts.processingMs}–${opts.processingMaxMs} ms)`,
	);
	// flow 2's folder beside INBOX
	const box = await dovecot.connect();
	await box.mailboxCreate(FLOW_2.mailbox);
	await box.logout();

	const n8nDb = {
		port: postgres.port,
		database: 'n8n',
		user: 'n8n',
		password: randomBytes(12).toString('hex'),
	};
	const erpPassword = randomBytes(12).toString('hex');
	await postgres.sql(
		'postgres',
		`CREATE ROLE n8n LOGIN PASSWORD '${n8nDb.password}'; CREATE DATABASE n8n OWNER n8n;
		 CREATE ROLE erp LOGIN PASSWORD '${erpPassword}'; CREATE DATABASE erp OWNER erp;`,
	);
	await postgres.sql('erp', `SET ROLE erp; ${ERP_TABLE_SQL}`);

	const shared: N8nShared = {
		line,
		encryptionKey: randomBytes(24).toString('hex'),
		postgres: n8nDb,
		redisPort: redis.port,
		filesDir,
	};
	const mainPort = await freePort();
	const mainUrl = `http://127.0.0.1:${mainPort}`;
	const main = await prepareN8nProcess('main', shared, root, tarball, async () => ({
		N8N_PORT: String(mainPort),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_HOST: '127.0.0.1',
		// n8n's default is 180 minutes: a run cannot wait for that
		...(opts.faultRestart === 'fresh' ? { N8N_EXECUTIONS_QUEUE_RECOVERY_INTERVAL: '1' } : {}),
	}));
	const workers: N8nProcess[] = [];
	for (const name of ['worker-1', 'worker-2'])
		workers.push(await prepareWorker(name, shared, root, tarball));

	// credentials and the workflows, with the n8n CLI (the first command migrates n8n's database)
	const credentials = [
		{
			...CREDENTIALS.imap,
			data: {
				user: dovecot.user,
				password: dovecot.password,
				host: '127.0.0.1',
				port: dovecot.port,
				secure: false,
				allowUnauthorizedCerts: false,
			},
		},
		{
			...CREDENTIALS.postgres,
			data: {
				host: '127.0.0.1',
				port: postgres.port,
				database: 'erp',
				user: 'erp',
				password: erpPassword,
				ssl: 'disable',
				maxConnections: 20,
			},
		},
		{ ...CREDENTIALS.token, data: { baseUrl: emulator.url, token: emulator.token } },
	];
	await timed('n8n database migrations + import credentials', () =>
		n8nImport(main.cli, 'credentials', path.join(root, 'credentials.json'), credentials, 300_000),
	);
	const wfDir = path.join(root, 'workflows');
	mkdirSync(wfDir);
	for (const flow of [FLOW_1, FLOW_2])
		for (const w of flow.workflows)
			writeFileSync(
				path.join(wfDir, `${w.id}.json`),
				JSON.stringify(prepareWorkflow(w.file, w.id, filesDir, mainUrl, flow), null, 2),
			);
	writeFileSync(
		path.join(wfDir, `${RETRY_WORKFLOW.id}.json`),
		JSON.stringify(
			prepareWorkflow(RETRY_WORKFLOW.file, RETRY_WORKFLOW.id, filesDir, mainUrl),
			null,
			2,
		),
	);
	await timed('import + publish the workflows', async () => {
		cliOk(
			'n8n import:workflow',
			await main.cli(['import:workflow', '--separate', `--input=${wfDir}`]),
		);
		// all published (activated): n8n 2.x runs an Error Workflow only when it is published too
		for (const id of [...FLOW_1.workflows, ...FLOW_2.workflows, RETRY_WORKFLOW].map((w) => w.id))
			cliOk(`n8n publish:workflow --id=${id}`, await main.cli(['publish:workflow', `--id=${id}`]));
	});

	const workerExecutions = new Map<string, Set<string>>();
	const d: Deployment = {
		tarball,
		root,
		logDir,
		filesDir,
		postgres,
		redis,
		dovecot,
		emulator,
		shared,
		main,
		workers,
		workerExecutions,
		workerFinished: new Map(),
		mainUrl,
		triggerActiveAt: Date.now(),
		owner: {
			email: 'owner@e2e.invalid',
			password: `E2e-${randomBytes(9).toString('hex')}`,
			cookie: '',
		},
	};

	await timed('n8n main start (triggers active)', async () => {
		const logins = countLogins(dovecot);
		const svc = startN8n(main, shared, ['start'], logDir, opts.verbose);
		svc.onLine((l) => {
			if (/Enqueued execution \d+/.test(l)) d.triggerActiveAt = Date.now();
		});
		await svc.waitForLine(/Editor is now accessible via/, 180_000);
		await waitUntil('n8n main /healthz/readiness', 60_000, async () =>
			(await fetch(`${mainUrl}/healthz/readiness`)).ok ? true : undefined,
		);
		// the IMAP triggers run in main: their logins show in Dovecot's log (one per flow)
		await waitUntil('both Email Triggers (IMAP) to log in to Dovecot', 60_000, async () =>
			countLogins(dovecot) >= logins + 2 ? true : undefined,
		);
		d.triggerActiveAt = Date.now();
	});
	console.log(
		`n8n ${line.version} main on ${mainUrl} (queue mode); the workflows are active, both IMAP triggers logged in`,
	);
	await timed('owner, API key, n8n API credential', () => setUpOwnerAndApiKey(d));
	return d;
}

/**
 * The owner account (POST /rest/owner/setup), an API key with the scope `execution:retry` (POST
 * /rest/api-keys, as the Settings page does), and the "n8n API" credential of the Error Workflow
 * imported with it (the running main reads credentials from the database when a node needs them).
 */
async function setUpOwnerAndApiKey(d: Deployment): Promise<void> {
	const res = await fetch(`${d.mainUrl}/rest/owner/setup`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({
			email: d.owner.email,
			firstName: 'E2E',
			lastName: 'Owner',
			password: d.owner.password,
		}),
		signal: AbortSignal.timeout(30_000),
	});
	const text = await res.text();
	// n8n answers 200 "n8n is starting up" to every path before it is ready: the owner must be in the answer
	if (res.status !== 200 || !text.includes(d.owner.email))
		throw new Error(`POST /rest/owner/setup → ${res.status}: ${text.slice(0, 300)}`);
	d.owner.cookie = res.headers
		.getSetCookie()
		.map((c) => c.split(';')[0])
		.join('; ');
	const key = await fetch(`${d.mainUrl}/rest/api-keys`, {
		method: 'POST',
		headers: { 'content-type': 'application/json', cookie: d.owner.cookie },
		body: JSON.stringify({
			label: 'Error Workflow retries',
			scopes: ['execution:retry'],
			expiresAt: null,
		}),
		signal: AbortSignal.timeout(30_000),
	});
	const body = (await key.json().catch(() => ({}))) as {
		data?: { rawApiKey?: string; apiKey?: string };
	};
	const apiKey = body.data?.rawApiKey ?? body.data?.apiKey;
	if (key.status !== 200 || !apiKey || apiKey.includes('*'))
		throw new Error(`POST /rest/api-keys → ${key.status}: no usable key in the answer`);
	await n8nImport(d.main.cli, 'credentials', path.join(d.root, 'credentials-n8n-api.json'), [
		{ ...CREDENTIALS.n8nApi, data: { apiKey, baseUrl: `${d.mainUrl}/api/v1` } },
	]);
}

/** A worker's user folder (the package in it) and environment: its health server on a free loopback port. */
async function prepareWorker(
	name: string,
	shared: N8nShared,
	root: string,
	tarball: string,
): Promise<N8nProcess> {
	const healthPort = await freePort();
	return await prepareN8nProcess(name, shared, root, tarball, async () => ({
		QUEUE_HEALTH_CHECK_ACTIVE: 'true',
		QUEUE_HEALTH_CHECK_PORT: String(healthPort),
		N8N_WORKER_SERVER_ADDRESS: '127.0.0.1',
	}));
}

function countLogins(dovecot: Dovecot): number {
	return (dovecot.service.output().match(/imap-login: Info: Login: user=</g) ?? []).length;
}

/** Starts worker `w` (`n8n worker --concurrency=N`) and waits until it is ready. */
async function startWorker(d: Deployment, w: N8nProcess, opts: Options): Promise<void> {
	const started = d.workerExecutions.get(w.name) ?? new Set<string>();
	d.workerExecutions.set(w.name, started);
	const finished = d.workerFinished.get(w.name) ?? new Set<string>();
	d.workerFinished.set(w.name, finished);
	const svc = startN8n(
		w,
		d.shared,
		['worker', `--concurrency=${opts.workerConcurrency}`],
		d.logDir,
		opts.verbose,
	);
	svc.onLine((l) => {
		const m = /Worker (started|finished) execution (\d+)/.exec(l);
		if (m) (m[1] === 'started' ? started : finished).add(m[2]);
	});
	await svc.waitForLine(/n8n worker is now ready/, 180_000);
	const port = w.env.QUEUE_HEALTH_CHECK_PORT;
	await waitUntil(`${w.name} /healthz/readiness`, 60_000, async () =>
		(await fetch(`http://127.0.0.1:${port}/healthz/readiness`)).ok ? true : undefined,
	);
}

// ---------------------------------------------------------------------------------------------
// one load phase: deliver, wait, measure, check

/** What one phase runs: a flow, its mails, with or without the fault round's chaos. */
interface PhaseSpec {
	flow: Flow;
	label: string;
	/** Makes the phase's Message-IDs unique. */
	tag: string;
	mails: number;
	fault: boolean;
}

interface PhaseResult {
	label: string;
	flow: Flow;
	fault: boolean;
	workersRunning: number;
	mails: number;
	docs: number;
	rows: number;
	missing: number;
	duplicates: number;
	/** Documents the service created an extraction for more than once. */
	extractedTwice: number;
	workersUsed: number;
	seconds: number;
	docsPerMin: number;
	executions: number;
	/** The fault round: how each failed execution was recovered (or not). */
	recoveries: Recovery[];
	killed?: Killed;
}

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
	retry_success_id: string | null;
	/** n8n's own flag: the run ended without an error (a Retry of it is refused with 409). */
	finished: boolean;
	started_ms: number | null;
	stopped_ms: number | null;
}

const FINAL = (e: ExecutionRow): boolean => !['new', 'running', 'waiting'].includes(e.status);
const FAILED = (e: ExecutionRow): boolean => ['error', 'crashed'].includes(e.status);

async function maxExecutionId(d: Deployment): Promise<number> {
	const out = await d.postgres.sql('n8n', 'select coalesce(max(id), 0) from execution_entity');
	return Number(out.trim());
}

async function phaseRows(d: Deployment, messageIds: string[]): Promise<ErpRow[]> {
	const list = messageIds.map((m) => `'${m.replace(/'/g, "''")}'`).join(',');
	return await d.postgres.json<ErpRow[]>(
		'erp',
		`select json_agg(r) from (select extraction_id, message_id, file_name, invoice_number, total_amount, currency, status, n8n_execution_id,
		   (extract(epoch from stored_at) * 1000)::bigint as stored_ms from invoices where message_id in (${list})) r`,
	);
}

/** Executions of the given workflows with an id above `afterId`, oldest first. */
async function executionsOf(
	d: Deployment,
	workflowIds: string[],
	afterId: number,
): Promise<ExecutionRow[]> {
	return await d.postgres.json<ExecutionRow[]>(
		'n8n',
		`select json_agg(e order by e.id) from (select id::text as id, "workflowId" as workflow_id, status, mode, "retryOf" as retry_of, "retrySuccessId" as retry_success_id, finished,
		   (extract(epoch from "startedAt") * 1000)::bigint as started_ms, (extract(epoch from "stoppedAt") * 1000)::bigint as stopped_ms
		   from execution_entity where "workflowId" in (${workflowIds.map((w) => `'${w}'`).join(',')}) and id > ${afterId}) e`,
	);
}

/** APPENDs the mails to `mailbox` at `rate` per second (0: as fast as the server takes them). */
async function deliver(
	d: Deployment,
	mailbox: string,
	mails: PlannedMail[],
	rate: number,
): Promise<void> {
	const client = await d.dovecot.connect();
	try {
		const t0 = Date.now();
		for (const [i, mail] of mails.entries()) {
			if (rate > 0) {
				const due = t0 + (i * 1000) / rate;
				if (due > Date.now()) await sleep(due - Date.now());
			}
			await client.append(
				mailbox,
				await mimeMessage(mail, `${d.dovecot.user}@e2e.invalid`, new Date()),
			);
		}
	} finally {
		await client.logout();
	}
}

/** The `n8nJobKey` of each extraction created (a 2xx to POST /extract/) among `requests` whose metadata `source` is `source`. */
function createdJobKeys(requests: EmulatorProcess['requests'], source: string): string[] {
	const keys: string[] = [];
	for (const q of requests) {
		if (q.method !== 'POST' || q.path !== '/extract/' || q.status < 200 || q.status >= 300)
			continue;
		const meta = q.body?.kind === 'form' ? q.body.fields.metadata : undefined;
		try {
			const m = JSON.parse(Array.isArray(meta) ? meta[0] : (meta ?? '{}')) as {
				n8nJobKey?: string;
				source?: string;
			};
			if (m.source === source) keys.push(String(m.n8nJobKey ?? ''));
		} catch {
			/* not JSON: not ours */
		}
	}
	return keys;
}

async function runPhase(
	d: Deployment,
	opts: Options,
	spec: PhaseSpec,
	deadline: number,
): Promise<PhaseResult> {
	const { flow, label } = spec;
	const flowIds = flow.workflows.map((w) => w.id);
	const workersRunning = d.workers.filter((w) => w.service && !w.service.exited()).length;
	console.log(
		`\n=== ${label}: ${spec.mails} mails into ${flow.mailbox}, ${workersRunning} worker(s) × concurrency ${opts.workerConcurrency}${spec.fault ? `; the service answers ${opts.faults} at random, worker-1 is killed` : ''} ===`,
	);
	const mails = await planMails(spec.mails, opts.seed + (spec.fault ? 7 : 0), spec.tag);
	const docs = plannedDocuments(mails);
	const skipped = mails.reduce(
		(n, m) => n + m.attachments.filter((x) => x.kind === 'skip').length,
		0,
	);
	console.log(
		`${mails.length} mails: ${docs.length} documents (${docs.filter((x) => x.attachment.mimeType === 'application/pdf').length} PDF, ${docs.filter((x) => x.attachment.mimeType === 'image/png').length} PNG) and ${skipped} attachments to skip; ${mails.filter((m) => !m.attachments.some((x) => x.kind === 'document')).length} mails without a document`,
	);
	const beforeExec = await maxExecutionId(d);
	const requestsBefore = d.emulator.requests.length;
	const workerStartedBefore = new Map([...d.workerExecutions].map(([k, set]) => [k, new Set(set)]));
	const messageIds = mails.map((m) => m.messageId);

	// n8n's IMAP trigger (imapflow) goes back to IDLE only 15 s (autoIdleDelay) after its last
	// command: before that it hears of no new mail. So that a phase does not measure that deafness,
	// the load starts once the triggers are idle.
	const idleAt = d.triggerActiveAt + TRIGGER_IDLE_DELAY_MS;
	if (idleAt > Date.now()) {
		console.log(
			`waiting ${secs(idleAt - Date.now())} for the IMAP triggers to be back in IDLE (imapflow's autoIdleDelay, 15 s after its last command)`,
		);
		await sleep(idleAt - Date.now());
	}
	if (spec.fault) await d.emulator.setRandomFaults(opts.faults);
	const t0 = Date.now();
	await deliver(d, flow.mailbox, mails, opts.rate);
	console.log(`delivered ${mails.length} mails by IMAP APPEND in ${secs(Date.now() - t0)}`);

	// the fault round: kill worker-1 while it holds executions of this flow, start it again
	const chaos = spec.fault
		? killAndRestartWorker(d, d.workers[0], opts, beforeExec)
		: Promise.resolve(undefined);

	// every document has a row and no execution of the flow (nor of the Error Workflow) is left
	// running or queued, nothing having changed for a moment; the fault round also ends when all
	// are final and nothing has changed for 25 s (what is missing then is retried by hand), or
	// after 4 minutes without change: it reports, it does not hang
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
				if (key !== lastKey) {
					lastKey = key;
					lastChange = Date.now();
				}
				if (Date.now() - lastReport > 15_000) {
					lastReport = Date.now();
					console.log(
						`  … ${secs(Date.now() - t0)}: ${rows.length}/${docs.length} rows; executions: ${by('success')} success, ${by('running')} running, ${by('new')} queued, ${by('error') + by('crashed')} failed`,
					);
				}
				const allFinal = ex.length > 0 && ex.every(FINAL);
				const quiet = Date.now() - lastChange;
				if (rows.length >= docs.length && allFinal && quiet > (spec.fault ? 5000 : 0)) return true;
				if (spec.fault && ((allFinal && quiet > 25_000) || quiet > 240_000)) return true;
				if (spec.fault && Date.now() > limit - 1000) return true;
				return undefined;
			},
			250,
		);
	};
	await settle(spec.fault ? Math.min(deadline, Date.now() + 420_000) : deadline);
	const killed = await chaos;
	const userRetried = new Set<string>();
	if (spec.fault) {
		await d.emulator.setRandomFaults('off');
		// what a user does next: the Executions list → Retry, for each execution still failed (the
		// last of its retries), except those n8n emptied (nothing left to retry)
		for (let round = 1; round <= 3; round++) {
			const ex = await executionsOf(d, flowIds, beforeExec);
			const retriedIds = new Set(ex.map((e) => e.retry_of).filter((x): x is string => !!x));
			// (a retry n8n marks finished ran every node: a Retry of it is refused, see recoveriesOf)
			const leaves = ex.filter(
				(e) => FAILED(e) && !e.finished && !retriedIds.has(e.id) && !userRetried.has(e.id),
			);
			const toRetry: ExecutionRow[] = [];
			for (const e of leaves)
				if (!/processed too many times/.test(await executionError(d, e.id))) toRetry.push(e);
			if (toRetry.length === 0) break;
			for (const e of toRetry) {
				userRetried.add(e.id);
				console.log(
					`fault round: a user's Retry of execution ${e.id} (${e.status}) → ${await retryExecution(d, e.id)}`,
				);
			}
			await settle(Math.min(deadline, Date.now() + 300_000));
		}
	}
	await sleep(3000); // anything late (a duplicate) would show now
	const rows = await phaseRows(d, messageIds);
	const finalExecutions = await executionsOf(d, flowIds, beforeExec);
	const errorWorkflowRuns = await executionsOf(d, [RETRY_WORKFLOW.id], beforeExec);
	const allRowsAt = rows.length ? Math.max(...rows.map((r) => Number(r.stored_ms))) : Date.now();
	const seconds = Math.max(0.001, (allRowsAt - t0) / 1000);

	// rows against the plan
	const expected = new Map(
		docs.map((x) => [`${x.mail.messageId}\u0000${x.attachment.fileName}`, x.attachment]),
	);
	const seen = new Map<string, number>();
	for (const r of rows)
		seen.set(
			`${r.message_id}\u0000${r.file_name}`,
			(seen.get(`${r.message_id}\u0000${r.file_name}`) ?? 0) + 1,
		);
	const missing = [...expected.keys()].filter((k) => !seen.has(k));
	const unexpected = [...seen.keys()].filter((k) => !expected.has(k));
	const duplicates = [...seen.values()].reduce((n, c) => n + (c - 1), 0);
	const workersUsed = [...d.workerExecutions].filter(([name, set]) =>
		[...set].some((id) => !workerStartedBefore.get(name)?.has(id)),
	).length;
	const keys = createdJobKeys(d.emulator.requests.slice(requestsBefore), flow.source);
	const extractedTwice = keys.length - new Set(keys).size;

	const result: PhaseResult = {
		label,
		flow,
		fault: spec.fault,
		workersRunning,
		mails: mails.length,
		docs: docs.length,
		rows: rows.length,
		missing: missing.length,
		duplicates,
		extractedTwice,
		workersUsed,
		seconds,
		docsPerMin: (docs.length / seconds) * 60,
		executions: finalExecutions.length,
		recoveries: [],
		killed,
	};
	console.log(
		`${label}: ${result.rows} rows in ${secs(seconds * 1000)} from the first APPEND to the last row (${result.docsPerMin.toFixed(0)} docs/min), ${result.executions} executions of the flow's workflows`,
	);

	// checks
	check(
		`${label}: every document has exactly one row`,
		rows.length === docs.length &&
			missing.length === 0 &&
			duplicates === 0 &&
			unexpected.length === 0,
		`${docs.length} documents, ${rows.length} rows, ${missing.length} missing${
			missing.length
				? ` (e.g. ${missing
						.slice(0, 3)
						.map((k) => k.replace('\u0000', ' '))
						.join(', ')})`
				: ''
		}, ${duplicates} duplicates, ${unexpected.length} unexpected${
			unexpected.length
				? ` (e.g. ${unexpected
						.slice(0, 3)
						.map((k) => k.replace('\u0000', ' '))
						.join(', ')})`
				: ''
		}`,
	);
	const wrong = rows.filter((r) => {
		const att = expected.get(`${r.message_id}\u0000${r.file_name}`);
		if (r.status !== 'FINISHED') return true;
		if (!att?.expected) return false;
		return (
			r.invoice_number !== att.expected.invoice_number ||
			Number(r.total_amount) !== att.expected.total_amount ||
			r.currency !== att.expected.currency
		);
	});
	check(
		`${label}: each row holds its document's extracted fields`,
		wrong.length === 0,
		wrong.length
			? `${wrong.length} rows wrong, e.g. ${JSON.stringify(wrong[0])}`
			: `all FINISHED; every PDF row has its invoice number, total and currency`,
	);
	check(
		`${label}: no document was extracted (and billed) twice`,
		extractedTwice === 0 && (spec.fault ? keys.length <= docs.length : keys.length === docs.length),
		`${keys.length} extractions created for ${docs.length} documents, ${extractedTwice} for a document already extracted (the emulator's log, by each extraction's n8nJobKey)`,
	);
	const stuck = [...finalExecutions, ...errorWorkflowRuns].filter((e) => !FINAL(e));
	check(
		`${label}: no execution stuck (running or queued at the end)`,
		stuck.length === 0,
		stuck.length ? `stuck: ${stuck.map((e) => `${e.id} ${e.status}`).join(', ')}` : 'none',
	);
	if (spec.fault) {
		result.recoveries = recoveriesOf(finalExecutions, killed, userRetried);
		await reportFaultPhase(d, result, finalExecutions, errorWorkflowRuns, rows);
		const unrecovered = result.recoveries.filter((r) => r.how === 'not recovered');
		// each failed execution's own retry chain must have run to the end (a retry of a stopped
		// execution counts by n8n's `finished` flag, see ranToTheEnd), and its documents have rows
		check(
			`${label}: every failed execution was recovered by a retry that ran to the end`,
			unrecovered.length === 0 && missing.length === 0,
			`${result.recoveries.length} failed, crashed or stopped; ${summarizeRecoveries(result.recoveries)}${unrecovered.length ? `; ${unrecovered.map((u) => u.id).join(', ')} without a successful retry of its own, ${missing.length} documents missing` : ''}`,
		);
	} else {
		const notSuccess = finalExecutions.filter((e) => e.status !== 'success');
		check(
			`${label}: every execution succeeded`,
			notSuccess.length === 0 && finalExecutions.length > 0,
			`${finalExecutions.length} executions of ${flowIds.join(' + ')}${
				notSuccess.length
					? `; not success: ${notSuccess
							.map((e) => `${e.id} ${e.status}`)
							.slice(0, 5)
							.join(', ')}`
					: ', all success'
			} (mode ${[...new Set(finalExecutions.map((e) => e.mode))].join('/')}); Error Workflow runs: ${errorWorkflowRuns.length}`,
		);
		// which worker ran what: n8n keeps no worker id in its execution records; each worker logs "Worker started execution N"
		const ranBy = new Map<string, string[]>();
		for (const [name, set] of d.workerExecutions)
			for (const id of set)
				if (!workerStartedBefore.get(name)?.has(id))
					ranBy.set(id, [...(ranBy.get(id) ?? []), name]);
		const unclaimed = finalExecutions.filter((e) => !ranBy.has(e.id));
		const twice = [...ranBy].filter(
			([id, names]) => names.length > 1 && finalExecutions.some((e) => e.id === id),
		);
		const perWorker = [...d.workerExecutions.keys()].map(
			(name) => `${name} ${finalExecutions.filter((e) => ranBy.get(e.id)?.includes(name)).length}`,
		);
		check(
			`${label}: each execution ran on exactly one worker`,
			unclaimed.length === 0 && twice.length === 0,
			`${perWorker.join(', ')}${
				unclaimed.length
					? `; in no worker's log: ${unclaimed
							.map((e) => e.id)
							.slice(0, 5)
							.join(', ')}`
					: ''
			}${twice.length ? `; on two: ${twice.map(([id]) => id).join(', ')}` : ''}`,
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
	// the spreadsheets: one per execution of the storing workflow, their rows = the table's rows
	const sheetRows = await readPhaseSheets(
		d,
		finalExecutions.filter((e) => e.workflow_id === flow.storeWorkflowId).map((e) => e.id),
	);
	const tableIds = new Set(rows.map((r) => r.extraction_id));
	const sheetIds = [...new Set(sheetRows.rows.map((r) => String(r.extraction_id)))];
	const sheetMismatch = sheetRows.rows.filter((r) => {
		const t = rows.find((x) => x.extraction_id === r.extraction_id);
		return (
			!t ||
			t.message_id !== r.message_id ||
			t.file_name !== r.file_name ||
			String(t.invoice_number ?? '') !== String(r.invoice_number ?? '')
		);
	});
	// a retried execution writes its batch again (as the upsert rewrites its rows): in the fault round an id may be in two sheets
	const sheetOk =
		sheetIds.length === rows.length && (spec.fault || sheetRows.rows.length === rows.length);
	check(
		`${label}: the spreadsheets' rows equal the table's rows`,
		sheetOk && sheetIds.every((id) => tableIds.has(id)) && sheetMismatch.length === 0,
		`${sheetRows.files} batch-*.xlsx files with ${sheetRows.rows.length} rows, ${sheetIds.length} distinct extraction ids; table ${rows.length} rows${sheetMismatch.length ? `; ${sheetMismatch.length} rows differ` : ''}`,
	);
	const box = await d.dovecot.connect();
	const status = await box.status(flow.mailbox, { messages: true, unseen: true });
	await box.logout();
	check(
		`${label}: the trigger read every mail`,
		status && status.unseen === 0,
		`${flow.mailbox}: ${status && status.messages} messages, ${status && status.unseen} unseen`,
	);
	return result;
}

/** What the fault round did: the worker killed, when, and the executions it held then. */
interface Killed {
	worker: string;
	pid: number;
	at: number;
	held: string[];
	restartedAt?: number;
	/** Held executions a user stopped and retried (they still showed as running or queued). */
	stopped: string[];
	/** Of `held`: the jobs it had taken from the queue but not started (found in Bull after the restart). */
	taken: string[];
}

/**
 * The fault round's chaos: waits (at most 90 s) until `w` holds at least two executions of this
 * phase (started, not finished, by its own log), kills its whole process group with SIGKILL (the
 * worker and its task runner: a machine that dies), and starts it again 5 s later.
 */
async function killAndRestartWorker(
	d: Deployment,
	w: N8nProcess,
	opts: Options,
	afterExec: number,
): Promise<Killed | undefined> {
	const held = (): string[] => {
		const started = d.workerExecutions.get(w.name) ?? new Set<string>();
		const finished = d.workerFinished.get(w.name) ?? new Set<string>();
		return [...started].filter((id) => Number(id) > afterExec && !finished.has(id));
	};
	try {
		await waitUntil(
			`${w.name} to hold two executions`,
			90_000,
			async () => (held().length >= 2 ? true : undefined),
			100,
		);
	} catch (err) {
		console.log(`fault round: ${(err as Error).message}; killing it anyway`);
	}
	const killed: Killed = {
		worker: w.name,
		pid: w.service?.pid ?? -1,
		at: Date.now(),
		held: held(),
		stopped: [],
		taken: [],
	};
	const startedByDead = new Set(d.workerExecutions.get(w.name) ?? []);
	console.log(
		`fault round: SIGKILL to ${w.name} (pid ${killed.pid} and its task runner) while it holds executions ${killed.held.join(', ') || '(none)'}`,
	);
	await w.service?.kill();
	await sleep(5000);
	if (opts.faultRestart === 'fresh') {
		// a new container: a new user folder (no event log, no crash journal), same name in our books
		const fresh = await prepareWorker(
			`${w.name}-fresh-${Date.now().toString(36)}`,
			d.shared,
			d.root,
			d.tarball,
		);
		const i = d.workers.indexOf(w);
		w = { ...fresh, name: w.name, service: undefined };
		d.workers[i] = w;
	}
	await startWorker(d, w, opts);
	killed.restartedAt = Date.now();
	console.log(
		`fault round: ${w.name} started again (pid ${w.service?.pid}, ${opts.faultRestart === 'fresh' ? 'in a fresh user folder' : 'in its own user folder'}) ${secs(killed.restartedAt - killed.at)} after the kill`,
	);
	// What an operator who saw the worker die does, within n8n's window (before the dead worker's
	// queue jobs stall, 60 s lock + 30 s check after the kill, and n8n empties their executions):
	// in the Executions list, each execution the dead worker held that still shows as running is
	// stopped (Stop: the queue job is removed, the execution kept as canceled with its data) and
	// retried. A crashed one (the restarted worker recovered it from its event log) is left to the
	// Error Workflow.
	await sleep(3000);
	// The dead worker may also have taken jobs from the queue that it had not started yet (no
	// "Worker started" line): Bull still holds them as active under its lock, and n8n shows them as
	// queued until the stalled-job check fails them and empties them like the others (seen: 37
	// documents lost that way). They are the active jobs no live worker has started.
	// (Read twice, 1 s apart: a job a live worker takes this instant is started within milliseconds.)
	const activeBefore = new Set(await d.redis.activeExecutions());
	await sleep(1000);
	const startedByLive = new Set<string>();
	for (const x of d.workers)
		for (const id of d.workerExecutions.get(x.name) ?? [])
			if (x.name !== w.name || !startedByDead.has(id)) startedByLive.add(id);
	const activeNow = await d.redis.activeExecutions();
	console.log(
		`fault round: Bull's active jobs ${secs(Date.now() - killed.at)} after the kill: executions ${activeNow.filter((id) => Number(id) > afterExec).join(', ') || '(none)'} (the dead worker's started ones: ${killed.held.join(', ') || 'none'})`,
	);
	for (const id of activeNow) {
		if (
			Number(id) <= afterExec ||
			!activeBefore.has(id) ||
			killed.held.includes(id) ||
			startedByLive.has(id)
		)
			continue;
		killed.held.push(id);
		killed.taken.push(id);
		console.log(
			`fault round: execution ${id} was taken from the queue by ${w.name} but not started when it died (Bull: active, under the dead worker's lock; n8n shows it as queued)`,
		);
	}
	const now = await executionsOf(
		d,
		[...FLOW_1.workflows, ...FLOW_2.workflows].map((x) => x.id),
		afterExec,
	);
	for (const id of killed.held) {
		const e = now.find((x) => x.id === id);
		if (!e || !['running', 'new'].includes(e.status)) continue;
		const stop = await restCall(d, 'POST', `/rest/executions/${id}/stop`);
		killed.stopped.push(id);
		console.log(
			`fault round: execution ${id} still shows as ${e.status === 'new' ? 'queued' : 'running'} ${secs(Date.now() - killed.at)} after the kill: a user's Stop → ${stop}; Retry → ${await retryExecution(d, id)}`,
		);
	}
	return killed;
}

/** A REST call of the editor, as the owner; returns a short outcome (`status body…`). */
async function restCall(
	d: Deployment,
	method: string,
	urlPath: string,
	body?: unknown,
): Promise<string> {
	const res = await fetch(`${d.mainUrl}${urlPath}`, {
		method,
		headers: { 'content-type': 'application/json', cookie: d.owner.cookie },
		body: body === undefined ? undefined : JSON.stringify(body),
		signal: AbortSignal.timeout(60_000),
	});
	return `${res.status} ${(await res.text()).slice(0, 160)}`;
}

/** The editor's "Retry" of an execution (POST /rest/executions/:id/retry, the workflow as it was then); returns a short outcome. */
async function retryExecution(d: Deployment, id: string): Promise<string> {
	return await restCall(d, 'POST', `/rest/executions/${id}/retry`, { loadWorkflow: false });
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
 * Whether a retry ran every node: status `success`, or n8n's `finished` flag. A Retry of a stopped
 * execution that no node event was saved for (the worker died first: no `lastNodeExecuted`) keeps
 * the Stop's ManualExecutionCancelledError in its data (n8n 2.41's ExecutionService.retry clears
 * the error only when `lastNodeExecuted` is set), so n8n stores it as `error` although it ran to
 * the end with `finished: true` and answers a further Retry with 409 "The execution succeeded".
 */
function ranToTheEnd(e: ExecutionRow): boolean {
	return e.status === 'success' || e.finished === true;
}

/**
 * Sorts the failed executions that are not themselves retries: each is recovered when some retry
 * in its chain (retryOf links) ran to the end (`ranToTheEnd`) — by the Error Workflow (a retry the
 * run did not start) or by a user's Retry (one the run started).
 */
function recoveriesOf(
	executions: ExecutionRow[],
	killed: Killed | undefined,
	userRetried: Set<string>,
): Recovery[] {
	const childrenOf = (id: string): ExecutionRow[] => executions.filter((e) => e.retry_of === id);
	const out: Recovery[] = [];
	const userRetriedAll = new Set([...userRetried, ...(killed?.stopped ?? [])]);
	for (const root of executions.filter(
		(e) => (FAILED(e) || e.status === 'canceled') && !e.retry_of,
	)) {
		const chain: string[] = [];
		let how: Recovery['how'] = 'not recovered';
		const walk = (e: ExecutionRow, byUser: boolean): void => {
			for (const c of childrenOf(e.id)) {
				const user = byUser || userRetriedAll.has(e.id);
				chain.push(
					`${c.id} ${c.status}${c.status !== 'success' && c.finished ? ' but finished' : ''}${userRetriedAll.has(e.id) ? ' (user)' : ' (Error Workflow)'}`,
				);
				if (ranToTheEnd(c) && how === 'not recovered')
					how = !user
						? 'retried by the Error Workflow'
						: killed?.stopped.includes(root.id)
							? "a user's Stop + Retry"
							: "a user's Retry";
				walk(c, user);
			}
		};
		walk(root, false);
		out.push({
			id: root.id,
			status: root.status,
			cause: killed?.held.includes(root.id) ? 'held by the killed worker' : 'failed',
			how,
			chain,
		});
	}
	return out;
}

function summarizeRecoveries(list: Recovery[]): string {
	const count = (how: Recovery['how'], cause?: Recovery['cause']): number =>
		list.filter((r) => r.how === how && (!cause || r.cause === cause)).length;
	return `${count('retried by the Error Workflow')} retried by the Error Workflow (${count('retried by the Error Workflow', 'held by the killed worker')} held by the killed worker), ${count("a user's Stop + Retry")} by a user's Stop + Retry (held, still running or queued), ${count("a user's Retry")} by a user's Retry, ${count('not recovered')} not recovered`;
}

/** Lines of the n8n logs (main and workers, both incarnations of a restarted worker) that name execution `id`. */
function logLinesAbout(d: Deployment, id: string): string[] {
	const out: string[] = [];
	for (const name of readdirSync(d.logDir).filter((f) => /^(main|worker-\d)/.test(f))) {
		for (const line of readFileSync(path.join(d.logDir, name), 'utf8').split('\n')) {
			if (
				new RegExp(
					`\\b(execution|Execution) ${id}\\b|"executionId":"?${id}\\b|unfinished executions: (\\d+, )*${id}\\b`,
				).test(line)
			)
				out.push(`${name.replace(/\.log$/, '')}: ${line.slice(0, 200)}`);
		}
	}
	return out;
}

/** The fault round's report: the executions the dead worker held, each failed execution's error and recovery, the Error Workflow's runs. */
async function reportFaultPhase(
	d: Deployment,
	r: PhaseResult,
	executions: ExecutionRow[],
	errorWorkflowRuns: ExecutionRow[],
	rows: ErpRow[],
): Promise<void> {
	if (r.killed) {
		console.log(
			`\n${r.label}: what n8n did with the ${r.killed.held.length} executions ${r.killed.worker} held when it was killed`,
		);
		for (const id of r.killed.held) {
			const e = executions.find((x) => x.id === id);
			console.log(
				`  execution ${id}${r.killed.taken.includes(id) ? ' (taken from the queue, not started)' : ''}: status ${e?.status ?? '?'}, rows stored by it ${rows.filter((x) => x.n8n_execution_id === id).length}`,
			);
			for (const l of logLinesAbout(d, id).slice(0, 8)) console.log(`    ${l}`);
		}
	}
	console.log(`${r.label}: failed or crashed executions and their recovery`);
	for (const rec of r.recoveries) {
		console.log(
			`  execution ${rec.id} (${rec.cause}): ${rec.status}: ${await executionError(d, rec.id)} → ${rec.how}${rec.chain.length ? ` [${rec.chain.join(' → ')}]` : ''}`,
		);
		// a retry that did not succeed: what n8n recorded, and what main and the workers logged of it
		for (const link of rec.chain) {
			const e = executions.find((x) => x.id === link.split(' ')[0]);
			if (!e || e.status === 'success') continue;
			console.log(
				`    retry ${e.id}: status ${e.status}, finished ${e.finished}, ${await executionError(d, e.id)}`,
			);
			for (const l of logLinesAbout(d, e.id).slice(0, 6)) console.log(`      ${l}`);
		}
	}
	const ewBy = (st: string): number => errorWorkflowRuns.filter((e) => e.status === st).length;
	console.log(
		`${r.label}: the Error Workflow ran ${errorWorkflowRuns.length} times (${ewBy('success')} success, ${ewBy('error') + ewBy('crashed')} failed)`,
	);
}

/**
 * The error of an execution, from n8n's execution data. n8n stores it in the `flatted` format (one
 * array; every string stands at its own index and is referred to by that index), so the first
 * object with `message` is resolved by hand.
 */
async function executionError(d: Deployment, id: string): Promise<string> {
	const raw = (
		await d.postgres.sql(
			'n8n',
			`select data from execution_data where "executionId" = ${Number(id)}`,
		)
	).trim();
	try {
		const flat = JSON.parse(raw) as unknown[];
		const at = (ref: unknown): unknown =>
			typeof ref === 'string' && /^\d+$/.test(ref) ? flat[Number(ref)] : ref;
		const err = flat.find(
			(x): x is Record<string, unknown> =>
				!!x &&
				typeof x === 'object' &&
				'message' in x &&
				('name' in x || 'description' in x || 'stack' in x),
		);
		if (err) return `${String(at(err.name) ?? 'Error')}: ${String(at(err.message)).slice(0, 200)}`;
	} catch {
		/* not flatted JSON */
	}
	return '(no error in its data)';
}

/** The rows of the batch spreadsheets the given executions wrote (`files/erp/batch-<id>.xlsx`). */
async function readPhaseSheets(
	d: Deployment,
	executionIds: string[],
): Promise<{ files: number; rows: Array<Record<string, unknown>> }> {
	const dir = path.join(d.filesDir, 'erp');
	const names = new Set(executionIds.map((id) => `batch-${id}.xlsx`));
	const files = existsSync(dir) ? readdirSync(dir).filter((f) => names.has(f)) : [];
	const rows: Array<Record<string, unknown>> = [];
	for (const f of files)
		rows.push(...(await readFirstSheet(readFileSync(path.join(dir, f)))).records);
	return { files: files.length, rows };
}

// ---------------------------------------------------------------------------------------------

/**
 * n8n's editor in Debian's Chromium against this deployment's main instance (queue mode): the
 * browser steps of scripts/editor/steps.ts through scripts/editor/on-server.ts, signed in as
 * the owner; each step is a check. Screenshots go to the throwaway folder (the README's come from
 * `npm run test:editor`).
 */
async function runEditor(
	d: Deployment,
	opts: Options,
): Promise<{ passed: number; failed: number }> {
	const steps = await runEditorOnServer(
		{
			url: d.mainUrl,
			owner: { email: d.owner.email, password: d.owner.password },
			cli: (args, ms) => d.main.cli(args, ms),
			emulator: d.emulator,
		},
		{
			screenshotsDir: path.join(d.root, 'editor-screenshots'),
			failuresDir: path.join(ROOT, '.tmp', 'editor'),
			verbose: opts.verbose,
			timeoutMs: 300_000,
			log: (l) => console.log(`  editor: ${l}`),
		},
	);
	for (const st of steps)
		check(`editor (queue-mode main): ${st.name}`, st.ok, st.ok ? 'ok' : (st.message ?? 'failed'));
	return { passed: steps.filter((x) => x.ok).length, failed: steps.filter((x) => !x.ok).length };
}

const lineOf = (r: PhaseResult): string =>
	`${r.mails} mails, ${r.docs} documents, ${r.rows} rows, ${r.missing} missing, ${r.duplicates} duplicates, ${r.workersUsed} workers, ${r.seconds.toFixed(1)} s, ${r.docsPerMin.toFixed(0)} docs/min`;

async function main(): Promise<number> {
	const opts = parseArgs();
	const t0 = Date.now();
	const deadline = t0 + opts.timeoutS * 1000;
	// the whole run is bounded: past the deadline everything is stopped
	const killer = setTimeout(
		() => {
			console.error(`\nthe run exceeded --timeout ${opts.timeoutS} s: stopping`);
			cleanUpNow();
			process.exit(1);
		},
		opts.timeoutS * 1000 + 60_000,
	);
	killer.unref();

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
	const phase = async (spec: Omit<PhaseSpec, 'tag'>, suffix: string): Promise<PhaseResult> => {
		const r = await timed(spec.label, () =>
			runPhase(d, opts, { ...spec, tag: `E2E${runTag}${suffix}` }, deadline),
		);
		phases.push(r);
		return r;
	};
	const plan: Phase[] = opts.compareWorkers ? ['flow1'] : opts.phases;
	if (opts.compareWorkers) {
		await timed('start worker-1', () => startWorker(d, d.workers[0], opts));
		await phase({ flow: FLOW_1, label: 'flow 1, 1 worker', mails: opts.mails, fault: false }, 'A');
		await timed('start worker-2', () => startWorker(d, d.workers[1], opts));
	} else {
		await timed('start worker-1 and worker-2', () =>
			Promise.all(d.workers.map((w) => startWorker(d, w, opts))).then(() => undefined),
		);
	}
	const listening = listeningSockets(
		[
			d.postgres.service.pid,
			d.redis.service.pid,
			d.dovecot.service.pid,
			d.emulator.pid,
			...[d.main, ...d.workers].map((p) => p.service?.pid ?? 0),
		].filter((p) => p > 0),
	);
	const exposed = listening.filter(
		(x) => !/^(127\.\d+\.\d+\.\d+|\[::1\]|\[::ffff:127\.\d+\.\d+\.\d+\]):\d+$/.test(x.local),
	);
	check(
		'every server listens on loopback only',
		exposed.length === 0,
		`${listening.length} listening sockets${exposed.length ? `; NOT loopback: ${exposed.map((x) => `${x.local} (pid ${x.pid})`).join(', ')}` : ', all on 127.0.0.1'}`,
	);
	const specs: Record<Phase, Omit<PhaseSpec, 'tag'>> = {
		flow1: {
			flow: FLOW_1,
			label: opts.compareWorkers ? 'flow 1, 2 workers' : 'flow 1',
			mails: opts.mails,
			fault: false,
		},
		flow2: { flow: FLOW_2, label: 'flow 2', mails: opts.mails, fault: false },
		fault1: { flow: FLOW_1, label: 'fault round, flow 1', mails: opts.faultMails, fault: true },
		fault2: { flow: FLOW_2, label: 'fault round, flow 2', mails: opts.faultMails, fault: true },
	};
	for (const ph of plan) await phase(specs[ph], ph.toUpperCase());
	const runMs = Date.now() - tRun;

	// the editor in a real browser, on the same main instance (queue mode)
	let editor: { passed: number; failed: number } | undefined;
	if (opts.editor && !opts.compareWorkers)
		editor = await timed('the editor in Chromium (same server)', () => runEditor(d, opts));

	// stop n8n first (workers, then main), then the servers; all within bounded waits
	await timed('stop everything', async () => {
		await Promise.all(d.workers.map((w) => w.service?.stop(30_000)));
		await d.main.service?.stop(30_000);
		await Promise.all([
			d.dovecot.service.stop(),
			d.postgres.service.stop(),
			d.redis.service.stop(),
			d.emulator.stop(),
		]);
		cleanUpNow();
	});

	console.log('\n=== timings ===');
	for (const [label, ms] of timings) console.log(`${label.padEnd(52)} ${secs(ms)}`);
	console.log(
		`${'load phases (workers started + delivery + processing)'.padEnd(52)} ${secs(runMs)}`,
	);
	console.log(
		`${`whole run (${cold ? 'cold: something was installed' : 'warm: everything installed'})`.padEnd(52)} ${secs(Date.now() - t0)}`,
	);
	if (opts.compareWorkers && phases.length === 2) {
		const [one, two] = phases;
		console.log(
			`\nthroughput, same load (${one.mails} mails, ${one.docs} documents each): 1 worker ${secs(one.seconds * 1000)}, ${one.docsPerMin.toFixed(0)} docs/min; ` +
				`2 workers ${secs(two.seconds * 1000)}, ${two.docsPerMin.toFixed(0)} docs/min (×${(two.docsPerMin / one.docsPerMin).toFixed(2)})`,
		);
	}
	const failed = checks.failed;
	console.log(`\n${checks.summary('', true)}`);

	// the closing lines, their claims asserted
	const minimum = opts.mails >= 200 ? { mails: 200, docs: 300 } : { mails: opts.mails, docs: 1 };
	const clean = (r: PhaseResult): boolean =>
		r.mails >= minimum.mails &&
		r.docs >= minimum.docs &&
		r.rows === r.docs &&
		r.missing === 0 &&
		r.duplicates === 0 &&
		r.extractedTwice === 0 &&
		(r.mails < 200 || r.workersUsed === r.workersRunning);
	let ok = failed.length === 0;
	const flow2 = phases.find((r) => r.flow === FLOW_2 && !r.fault);
	if (flow2) {
		console.log(
			`e2e flow 2: ${lineOf(flow2)} (upload without waiting + Extraction Service Trigger)`,
		);
		ok &&= clean(flow2);
	}
	const faults = phases.filter((r) => r.fault);
	if (faults.length) {
		const all = faults.flatMap((r) => r.recoveries);
		const parts = faults.map(
			(r) =>
				`${r.flow.name} ${r.docs} documents ${r.rows} rows ${r.missing} missing ${r.duplicates} duplicates ${r.extractedTwice} extracted twice`,
		);
		console.log(
			`e2e fault round: ${parts.join('; ')}; ${faults.filter((r) => r.killed).length} worker kills (restarted in ${opts.faultRestart === 'fresh' ? 'a fresh' : 'its own'} user folder), random faults ${opts.faults}; ${all.length} failed executions: ${summarizeRecoveries(all)}`,
		);
		// nothing written or extracted twice, nothing lost
		for (const r of faults)
			ok &&= r.duplicates === 0 && r.extractedTwice === 0 && r.missing === 0 && r.rows === r.docs;
	}
	if (editor)
		console.log(
			`e2e editor: ${editor.passed} passed, ${editor.failed} failed (n8n's editor in Chromium, on the queue-mode main instance)`,
		);
	const flow1 = [...phases].reverse().find((r) => r.flow === FLOW_1 && !r.fault);
	if (flow1) {
		console.log(`e2e: ${lineOf(flow1)}`);
		ok &&= clean(flow1);
	}
	if (!ok) console.error('e2e FAILED');
	return ok ? 0 : 1;
}

runMain(main, {
	label: 'e2e',
	onSignal: (sig) =>
		console.error(`\n${sig}: stopping every server and removing the throwaway folder`),
});
