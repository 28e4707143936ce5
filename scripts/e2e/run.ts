/**
 * End to end, as users deploy it: invoice mails in a real mailbox, n8n 2.x in queue mode (main +
 * workers, PostgreSQL, Redis) with this package installed as a community package, the service
 * emulator, and an ERP table in PostgreSQL — all on loopback, all throwaway.
 *
 *   npx tsx scripts/e2e/run.ts                      # 200 mails, 2 workers (about 300+ documents)
 *   npx tsx scripts/e2e/run.ts --mails 20           # a quick run
 *   npx tsx scripts/e2e/run.ts --compare-workers    # the same load with 1 worker, then with 2
 *
 * Options: --mails N (default 200), --compare-workers, --worker-concurrency N (each worker's
 * `--concurrency`, default 10 as n8n's), --rate R (mails delivered per second; default 0: all at
 * once, as fast as Dovecot takes them, which measures what the deployment can do), --processing-ms A and --processing-max-ms B (the emulator's job time is drawn from
 * [A, B], default 3000–6000), --seed N, --timeout S (the whole run, default 1500), --no-install
 * (use the installs as they are, fail if missing), --no-build, --keep (keep the throwaway folder:
 * logs, xlsx files, data), --verbose (print every server's output), --fault-round (see below),
 * --faults SPEC (the fault round's random errors, emulator --random-faults; default
 * "*:429:0.03,GET:503:0.05,POST:502:0.01").
 *
 * Fault round (`--fault-round`): the service answers 3 % of requests 429, 5 % of GETs 503 and 1 % of
 * POSTs 502; while worker-1 holds executions it is killed (SIGKILL to its process group) and started
 * again 5 s later (--fault-restart same: in its own user folder, as a restarted host; fresh: in a new
 * one, as a new container — then main's queue recovery runs every minute instead of n8n's 180). It
 * reports what n8n did with the executions the dead worker held, retries every failed or crashed
 * execution as a user would (the Executions list's Retry, through the REST API as the owner), and
 * checks that in the end no document is lost, none written twice, none extracted twice.
 *
 * Steps: scripts/e2e/install.sh (Dovecot, PostgreSQL, Redis from Debian when missing) and
 * scripts/n8n/install.sh 2 (n8n 2.41.1 on Node 24, cached) → build and pack the package →
 * PostgreSQL (databases `n8n` and `erp`, table `invoices`), Redis, Dovecot (user + maildir) and the
 * emulator → a user folder per n8n process with the package unpacked into .n8n/nodes → credentials
 * (IMAP, Postgres, Extraction Service Token API) and examples/workflows/e2e-email-to-postgres.json
 * imported with the n8n CLI, the workflow published (activated) → `n8n start` + `n8n worker` ×2 →
 * the planned mails APPENDed over IMAP → wait until every document has its row and no execution
 * is left → checks. The last line:
 *
 *   e2e: <mails> mails, <docs> documents, <rows> rows, <missing> missing, <duplicates> duplicates, <workers> workers, <seconds> s, <docs_per_min> docs/min
 *
 * Exit code 0 only when every check passed. Every server is stopped and the throwaway folder removed
 * on exit, on failure and on Ctrl+C. See scripts/e2e/README.md.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs as parseArgv } from 'node:util';

import { launchEmulator, type EmulatorProcess } from '../../emulator/launch';
import { readFirstSheet } from '../../test/n8n/xlsx';
import { mimeMessage, planMails, plannedDocuments, type PlannedMail } from './mail';
import { cleanUpNow, freePort, installExitHooks, removeAtExit, sleep, tail, waitUntil, type Service } from './processes';
import {
	buildAndPack,
	installN8n,
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
} from './services';

const WORKFLOW_FILE = path.join(ROOT, 'examples', 'workflows', 'e2e-email-to-postgres.json');
const WORKFLOW_ID = 'e2eMailToErp01';
/** Credential ids the workflow references (≤ 16 characters, as n8n's import requires). */
const CREDENTIALS = {
	imap: { id: 'e2eImapCred1', name: 'Invoices Mailbox', type: 'imap' },
	postgres: { id: 'e2ePostgresCred1', name: 'ERP Database', type: 'postgres' },
	token: { id: 'esTokenCred1', name: 'Extraction Service Token API', type: 'extractionServiceTokenApi' },
};
const DATA_PREFIX = '/home/node/.n8n-files/';
const PLACEHOLDER_SCHEMA = '00000000-0000-0000-0000-000000000000';
const SEEDED_INVOICE_SCHEMA = '3f0c1a52-7d4e-4c1b-9a51-2b6f0e8d9c41';

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

interface Options {
	mails: number;
	compareWorkers: boolean;
	workerConcurrency: number;
	rate: number;
	processingMs: number;
	processingMaxMs: number;
	seed: number;
	timeoutS: number;
	install: boolean;
	build: boolean;
	keep: boolean;
	verbose: boolean;
	/** The fault round instead of the plain load: random 429/5xx from the service and worker-1 killed mid-run. */
	faultRound: boolean;
	/** The emulator's `--random-faults` spec in the fault round. */
	faults: string;
	/** How the killed worker comes back: `same` user folder (its event log and crash journal), or a `fresh` one (a new container). */
	faultRestart: 'same' | 'fresh';
}

/** Errors the service answers at random in the fault round (emulator `--random-faults`). */
const DEFAULT_FAULTS = '*:429:0.03,GET:503:0.05,POST:502:0.01';

/** Reads the command line with Node's `util.parseArgs` (strict: an unknown flag is an error). */
function parseArgs(argv: string[]): Options {
	const { values: v } = parseArgv({
		args: argv,
		strict: true,
		options: {
			mails: { type: 'string' },
			'compare-workers': { type: 'boolean' },
			'worker-concurrency': { type: 'string' },
			rate: { type: 'string' },
			'processing-ms': { type: 'string' },
			'processing-max-ms': { type: 'string' },
			seed: { type: 'string' },
			timeout: { type: 'string' },
			'no-install': { type: 'boolean' },
			'no-build': { type: 'boolean' },
			keep: { type: 'boolean' },
			verbose: { type: 'boolean' },
			'fault-round': { type: 'boolean' },
			faults: { type: 'string' },
			'fault-restart': { type: 'string' },
			help: { type: 'boolean', short: 'h' },
		},
	});
	if (v.help) {
		console.log(readFileSync(__filename, 'utf8').split('*/')[0]);
		process.exit(0);
	}
	const num = (name: string, value: string | undefined, dflt: number, min = 0): number => {
		if (value === undefined) return dflt;
		const n = Number(value);
		if (!Number.isFinite(n) || n < min) throw new Error(`--${name} needs a number ≥ ${min}, got ${value}`);
		return n;
	};
	const processingMs = num('processing-ms', v['processing-ms'], 3000);
	return {
		mails: Math.floor(num('mails', v.mails, 200, 1)),
		compareWorkers: v['compare-workers'] === true,
		workerConcurrency: Math.floor(num('worker-concurrency', v['worker-concurrency'], 10, 1)),
		rate: num('rate', v.rate, 0),
		processingMs,
		processingMaxMs: num('processing-max-ms', v['processing-max-ms'], Math.max(6000, processingMs)),
		seed: Math.floor(num('seed', v.seed, 20261122)),
		timeoutS: num('timeout', v.timeout, 1500, 60),
		install: v['no-install'] !== true,
		build: v['no-build'] !== true,
		keep: v.keep === true,
		verbose: v.verbose === true,
		faultRound: v['fault-round'] === true,
		faults: v.faults ?? DEFAULT_FAULTS,
		faultRestart: v['fault-restart'] === 'fresh' ? 'fresh' : 'same',
	};
	if (v['fault-restart'] !== undefined && !['same', 'fresh'].includes(v['fault-restart'] as string)) throw new Error(`--fault-restart must be same or fresh, got ${v['fault-restart']}`);
}

const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

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

interface CheckResult {
	name: string;
	ok: boolean;
	detail: string;
}
const results: CheckResult[] = [];

function check(name: string, ok: boolean, detail: string): void {
	results.push({ name, ok, detail });
	console.log(`${ok ? 'PASS' : 'FAIL'} ${name}: ${detail}`);
}

// ---------------------------------------------------------------------------------------------
// the deployment

interface Deployment {
	/** The packed package, for a worker started later in a fresh folder. */
	tarball: string;
	root: string;
	logDir: string;
	filesDir: string;
	postgres: Postgres;
	redis: { port: number; service: Service };
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
	/** When the IMAP trigger last talked to Dovecot as far as we know: its login, or main's last "Enqueued execution". */
	triggerActiveAt: number;
}

/** The workflow as imported: id set, files paths and the schema pointed at this deployment. */
function prepareWorkflow(filesDir: string): Record<string, unknown> {
	const wf = JSON.parse(readFileSync(WORKFLOW_FILE, 'utf8')) as { nodes: Array<{ parameters?: unknown }> } & Record<string, unknown>;
	const rewrite = (value: unknown): unknown => {
		if (typeof value === 'string') {
			if (value === PLACEHOLDER_SCHEMA) return SEEDED_INVOICE_SCHEMA;
			return value.split(DATA_PREFIX).join(`${filesDir}/`);
		}
		if (Array.isArray(value)) return value.map(rewrite);
		if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, x]) => [k, rewrite(x)]));
		return value;
	};
	return { ...wf, id: WORKFLOW_ID, active: false, nodes: wf.nodes.map((n) => ({ ...n, parameters: rewrite(n.parameters ?? {}) })) };
}

/** Fails with `what` and the tail of n8n's output when an n8n CLI command did not exit 0. */
function cliOk(what: string, r: { code: number | null; stdout: string; stderr: string; timedOut: boolean }): void {
	if (r.code !== 0) throw new Error(`${what} ${r.timedOut ? 'timed out' : `failed (exit ${r.code})`}:\n${tail(`${r.stdout}\n${r.stderr}`, 30)}`);
}

async function deploy(opts: Options, tarball: string, line: N8nShared['line'], tools: Awaited<ReturnType<typeof installTools>>['tools']): Promise<Deployment> {
	const root = makeRunRoot('n8n-es-e2e-');
	removeAtExit(root, opts.keep);
	const logDir = path.join(root, 'logs');
	const filesDir = path.join(root, 'files');
	mkdirSync(logDir, { recursive: true });
	mkdirSync(path.join(filesDir, 'erp'), { recursive: true });
	console.log(`Throwaway folder: ${root}${opts.keep ? ' (kept)' : ''}`);

	const [postgres, redis, dovecot, emulator] = await timed('servers (PostgreSQL, Redis, Dovecot, emulator)', () =>
		Promise.all([
			startPostgres(tools, root, logDir),
			startRedis(tools, root, logDir),
			startDovecot(tools, root, logDir),
			launchEmulator({ processingMs: opts.processingMs, processingMaxMs: opts.processingMaxMs, quiet: true, randomFaults: opts.faultRound ? opts.faults : undefined }),
		]),
	);
	console.log(`PostgreSQL 127.0.0.1:${postgres.port}, Redis 127.0.0.1:${redis.port}, Dovecot IMAP 127.0.0.1:${dovecot.port}, emulator ${emulator.url} (jobs ${opts.processingMs}–${opts.processingMaxMs} ms)`);

	const n8nDb = { port: postgres.port, database: 'n8n', user: 'n8n', password: randomBytes(12).toString('hex') };
	const erpPassword = randomBytes(12).toString('hex');
	await postgres.sql(
		'postgres',
		`CREATE ROLE n8n LOGIN PASSWORD '${n8nDb.password}'; CREATE DATABASE n8n OWNER n8n;
		 CREATE ROLE erp LOGIN PASSWORD '${erpPassword}'; CREATE DATABASE erp OWNER erp;`,
	);
	await postgres.sql('erp', `SET ROLE erp; ${ERP_TABLE_SQL}`);

	const shared: N8nShared = { line, encryptionKey: randomBytes(24).toString('hex'), postgres: n8nDb, redisPort: redis.port, filesDir };
	const mainPort = await freePort();
	const main = await prepareN8nProcess('main', shared, root, tarball, async () => ({
		N8N_PORT: String(mainPort),
		N8N_LISTEN_ADDRESS: '127.0.0.1',
		N8N_HOST: '127.0.0.1',
		// n8n's default is 180 minutes: a run cannot wait for that
		...(opts.faultRound && opts.faultRestart === 'fresh' ? { N8N_EXECUTIONS_QUEUE_RECOVERY_INTERVAL: '1' } : {}),
	}));
	const workers: N8nProcess[] = [];
	for (const name of ['worker-1', 'worker-2']) workers.push(await prepareWorker(name, shared, root, tarball));

	// credentials and the workflow, with the n8n CLI (the first command migrates n8n's database)
	const credsFile = path.join(root, 'credentials.json');
	writeFileSync(
		credsFile,
		JSON.stringify([
			{ ...CREDENTIALS.imap, data: { user: dovecot.user, password: dovecot.password, host: '127.0.0.1', port: dovecot.port, secure: false, allowUnauthorizedCerts: false } },
			{ ...CREDENTIALS.postgres, data: { host: '127.0.0.1', port: postgres.port, database: 'erp', user: 'erp', password: erpPassword, ssl: 'disable', maxConnections: 20 } },
			{ ...CREDENTIALS.token, data: { baseUrl: emulator.url, token: emulator.token } },
		]),
	);
	await timed('n8n database migrations + import credentials', async () => cliOk('n8n import:credentials', await main.cli(['import:credentials', `--input=${credsFile}`], 300_000)));
	const wfFile = path.join(root, 'workflow.json');
	writeFileSync(wfFile, JSON.stringify(prepareWorkflow(filesDir), null, 2));
	await timed('import + publish the workflow', async () => {
		cliOk('n8n import:workflow', await main.cli(['import:workflow', `--input=${wfFile}`]));
		cliOk('n8n publish:workflow', await main.cli(['publish:workflow', `--id=${WORKFLOW_ID}`]));
	});

	const workerExecutions = new Map<string, Set<string>>();
	const d: Deployment = { tarball, root, logDir, filesDir, postgres, redis, dovecot, emulator, shared, main, workers, workerExecutions, workerFinished: new Map(), mainUrl: `http://127.0.0.1:${mainPort}`, triggerActiveAt: Date.now() };

	await timed('n8n main start (trigger active)', async () => {
		const logins = countLogins(dovecot);
		const svc = startN8n(main, shared, ['start'], logDir, opts.verbose);
		svc.onLine((l) => {
			if (/Enqueued execution \d+/.test(l)) d.triggerActiveAt = Date.now();
		});
		await svc.waitForLine(/Editor is now accessible via/, 180_000);
		await waitUntil('n8n main /healthz/readiness', 60_000, async () => ((await fetch(`http://127.0.0.1:${mainPort}/healthz/readiness`)).ok ? true : undefined));
		// the IMAP trigger runs in main: its login shows in Dovecot's log
		await waitUntil('the Email Trigger (IMAP) to log in to Dovecot', 60_000, async () => (countLogins(dovecot) > logins ? true : undefined));
		d.triggerActiveAt = Date.now();
	});
	console.log(`n8n ${line.version} main on http://127.0.0.1:${mainPort} (queue mode); the workflow is active, its IMAP trigger logged in`);
	return d;
}

/** A worker's user folder (the package in it) and environment: its health server on a free loopback port. */
async function prepareWorker(name: string, shared: N8nShared, root: string, tarball: string): Promise<N8nProcess> {
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
	const svc = startN8n(w, d.shared, ['worker', `--concurrency=${opts.workerConcurrency}`], d.logDir, opts.verbose);
	svc.onLine((l) => {
		const m = /Worker (started|finished) execution (\d+)/.exec(l);
		if (m) (m[1] === 'started' ? started : finished).add(m[2]);
	});
	await svc.waitForLine(/n8n worker is now ready/, 180_000);
	const port = w.env.QUEUE_HEALTH_CHECK_PORT;
	await waitUntil(`${w.name} /healthz/readiness`, 60_000, async () => ((await fetch(`http://127.0.0.1:${port}/healthz/readiness`)).ok ? true : undefined));
}

// ---------------------------------------------------------------------------------------------
// one load phase: deliver, wait, measure, check

interface PhaseResult {
	label: string;
	workersRunning: number;
	mails: number;
	docs: number;
	rows: number;
	missing: number;
	duplicates: number;
	workersUsed: number;
	seconds: number;
	docsPerMin: number;
	executions: number;
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
	status: string;
	mode: string;
	retry_of: string | null;
	retry_success_id: string | null;
	started_ms: number | null;
	stopped_ms: number | null;
}

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

async function phaseExecutions(d: Deployment, afterId: number): Promise<ExecutionRow[]> {
	return await d.postgres.json<ExecutionRow[]>(
		'n8n',
		`select json_agg(e order by e.id) from (select id::text as id, status, mode, "retryOf" as retry_of, "retrySuccessId" as retry_success_id,
		   (extract(epoch from "startedAt") * 1000)::bigint as started_ms, (extract(epoch from "stoppedAt") * 1000)::bigint as stopped_ms
		   from execution_entity where "workflowId" = '${WORKFLOW_ID}' and id > ${afterId}) e`,
	);
}

/** APPENDs the mails at `rate` per second (0: as fast as the server takes them). */
async function deliver(d: Deployment, mails: PlannedMail[], rate: number): Promise<void> {
	const client = await d.dovecot.connect();
	try {
		const t0 = Date.now();
		for (const [i, mail] of mails.entries()) {
			if (rate > 0) {
				const due = t0 + (i * 1000) / rate;
				if (due > Date.now()) await sleep(due - Date.now());
			}
			await client.append('INBOX', mimeMessage(mail, `${d.dovecot.user}@e2e.invalid`, new Date()));
		}
	} finally {
		await client.close();
	}
}

async function runPhase(d: Deployment, opts: Options, label: string, tag: string, deadline: number): Promise<PhaseResult> {
	const workersRunning = d.workers.filter((w) => w.service && !w.service.exited()).length;
	console.log(`\n=== ${label}: ${opts.mails} mails, ${workersRunning} worker(s) × concurrency ${opts.workerConcurrency} ===`);
	const mails = await planMails(opts.mails, opts.seed, tag);
	const docs = plannedDocuments(mails);
	const skipped = mails.reduce((n, m) => n + m.attachments.filter((a) => a.kind === 'skip').length, 0);
	console.log(`${mails.length} mails: ${docs.length} documents (${docs.filter((x) => x.attachment.mimeType === 'application/pdf').length} PDF, ${docs.filter((x) => x.attachment.mimeType === 'image/png').length} PNG) and ${skipped} attachments to skip; ${mails.filter((m) => !m.attachments.some((a) => a.kind === 'document')).length} mails without a document`);
	const beforeExec = await maxExecutionId(d);
	const requestsBefore = d.emulator.requests.length;
	const workerStartedBefore = new Map([...d.workerExecutions].map(([k, s]) => [k, new Set(s)]));
	const messageIds = mails.map((m) => m.messageId);

	// n8n's IMAP trigger (imapflow) goes back to IDLE only 15 s (autoIdleDelay) after its last
	// command: before that it hears of no new mail. A trigger that has run for a while is idle; so
	// that a phase does not measure that start-up deafness, the load starts once it is.
	const idleAt = d.triggerActiveAt + TRIGGER_IDLE_DELAY_MS;
	if (idleAt > Date.now()) {
		console.log(`waiting ${secs(idleAt - Date.now())} for the IMAP trigger to be back in IDLE (imapflow's autoIdleDelay, 15 s after its last command)`);
		await sleep(idleAt - Date.now());
	}
	const t0 = Date.now();
	await deliver(d, mails, opts.rate);
	const deliveredMs = Date.now() - t0;
	console.log(`delivered ${mails.length} mails by IMAP APPEND in ${secs(deliveredMs)}`);

	// the fault round: kill worker-1 while it holds executions, start it again
	const chaos = opts.faultRound ? killAndRestartWorker(d, d.workers[0], opts, beforeExec) : Promise.resolve(undefined);

	// every document has a row, then no execution of the workflow is left running or queued (the
	// fault round: or nothing has changed for 20 s once all are final, or for 4 minutes, or 7 minutes
	// have passed: it reports, it does not hang)
	let lastReport = 0;
	const settle = async (limit: number): Promise<ExecutionRow[]> => {
		let lastChange = Date.now();
		let lastKey = '';
		return await waitUntil(
			`all ${docs.length} documents of ${label} to reach the ERP table and its executions to end`,
			Math.max(10_000, limit - Date.now()),
			async () => {
				const rows = await phaseRows(d, messageIds);
				const ex = await phaseExecutions(d, beforeExec);
				const by = (st: string): number => ex.filter((e) => e.status === st).length;
				const key = `${rows.length}|${ex.map((e) => e.status).join(',')}`;
				if (key !== lastKey) (lastKey = key), (lastChange = Date.now());
				if (Date.now() - lastReport > 15_000) {
					lastReport = Date.now();
					console.log(`  … ${secs(Date.now() - t0)}: ${rows.length}/${docs.length} rows; executions: ${by('success')} success, ${by('running')} running, ${by('new')} queued, ${by('error') + by('crashed')} failed`);
				}
				const allFinal = ex.length > 0 && ex.every((e) => !['new', 'running', 'waiting'].includes(e.status));
				if (rows.length >= docs.length && allFinal) return ex;
				if (opts.faultRound && (allFinal || Date.now() - lastChange > 240_000) && Date.now() - lastChange > 20_000) return ex;
				if (opts.faultRound && Date.now() > limit - 1000) return ex;
				return undefined;
			},
			250,
		);
	};
	let executions = await settle(opts.faultRound ? Math.min(deadline, Date.now() + 420_000) : deadline);
	const killed = await chaos;
	let firstPassRows = -1;
	if (opts.faultRound) {
		// what a user does next: the Executions list → Retry, for each failed or crashed execution
		firstPassRows = (await phaseRows(d, messageIds)).length;
		const retried = new Set<string>();
		for (let round = 1; round <= 3; round++) {
			const toRetry = (await phaseExecutions(d, beforeExec)).filter((e) => ['error', 'crashed'].includes(e.status) && !retried.has(e.id));
			if (toRetry.length === 0) break;
			const cookie = await ownerSession(d);
			for (const e of toRetry) {
				retried.add(e.id);
				console.log(`fault round: retry of execution ${e.id} (${e.status}) → ${await retryExecution(d, cookie, e.id)}`);
			}
			executions = await settle(Math.min(deadline, Date.now() + 300_000));
		}
	}
	await sleep(3000); // anything late (a duplicate) would show now
	const rows = await phaseRows(d, messageIds);
	const finalExecutions = await phaseExecutions(d, beforeExec);
	const allRowsAt = rows.length ? Math.max(...rows.map((r) => Number(r.stored_ms))) : Date.now();
	const seconds = Math.max(0.001, (allRowsAt - t0) / 1000);

	// rows against the plan
	const expected = new Map(docs.map((x) => [`${x.mail.messageId}\u0000${x.attachment.fileName}`, x.attachment]));
	const seen = new Map<string, number>();
	for (const r of rows) seen.set(`${r.message_id}\u0000${r.file_name}`, (seen.get(`${r.message_id}\u0000${r.file_name}`) ?? 0) + 1);
	const missing = [...expected.keys()].filter((k) => !seen.has(k));
	const unexpected = [...seen.keys()].filter((k) => !expected.has(k));
	const duplicates = [...seen.values()].reduce((n, c) => n + (c - 1), 0);
	const workersUsed = [...d.workerExecutions].filter(([name, s]) => [...s].some((id) => !workerStartedBefore.get(name)?.has(id))).length;

	const result: PhaseResult = {
		label,
		workersRunning,
		mails: mails.length,
		docs: docs.length,
		rows: rows.length,
		missing: missing.length,
		duplicates,
		workersUsed,
		seconds,
		docsPerMin: (docs.length / seconds) * 60,
		executions: finalExecutions.length,
	};
	console.log(
		`${label}: ${result.rows} rows in ${secs(seconds * 1000)} from the first APPEND to the last row (${result.docsPerMin.toFixed(0)} docs/min), ${result.executions} executions (${(mails.length / Math.max(1, result.executions)).toFixed(1)} mails each)`,
	);

	// checks
	check(`${label}: every document has exactly one row`, rows.length === docs.length && missing.length === 0 && duplicates === 0 && unexpected.length === 0,
		`${docs.length} documents, ${rows.length} rows, ${missing.length} missing${missing.length ? ` (e.g. ${missing.slice(0, 3).map((k) => k.replace('\u0000', ' ')).join(', ')})` : ''}, ${duplicates} duplicates, ${unexpected.length} unexpected${unexpected.length ? ` (e.g. ${unexpected.slice(0, 3).map((k) => k.replace('\u0000', ' ')).join(', ')})` : ''}`);
	const wrong = rows.filter((r) => {
		const a = expected.get(`${r.message_id}\u0000${r.file_name}`);
		if (r.status !== 'FINISHED') return true;
		if (!a?.expected) return false;
		return r.invoice_number !== a.expected.invoice_number || Number(r.total_amount) !== a.expected.total_amount || r.currency !== a.expected.currency;
	});
	check(`${label}: each row holds its document's extracted fields`, wrong.length === 0,
		wrong.length ? `${wrong.length} rows wrong, e.g. ${JSON.stringify(wrong[0])}` : `all FINISHED; every PDF row has its invoice number, total and currency`);
	const notSuccess = finalExecutions.filter((e) => e.status !== 'success');
	const stuck = finalExecutions.filter((e) => ['new', 'running', 'waiting'].includes(e.status));
	check(`${label}: no execution stuck (running or queued at the end)`, stuck.length === 0, stuck.length ? `stuck: ${stuck.map((e) => `${e.id} ${e.status}`).join(', ')}` : 'none');
	const unrecovered = notSuccess.filter((e) => !['new', 'running', 'waiting'].includes(e.status) && !e.retry_success_id);
	if (opts.faultRound) {
		check(`${label}: every failed execution succeeded on retry`, unrecovered.length === 0 && executions.length > 0,
			`${notSuccess.length} failed or crashed (${notSuccess.map((e) => `${e.id} ${e.status}${e.retry_success_id ? ` → retried as ${e.retry_success_id}` : ''}`).join(', ') || 'none'})`);
		// the service's log: extractions created in this phase (a 2xx to POST /extract/), against the documents
		const creates = d.emulator.requests.slice(requestsBefore).filter((q) => q.method === 'POST' && q.path === '/extract/' && q.status >= 200 && q.status < 300);
		const keys = creates.map((q) => {
			const meta = q.body?.kind === 'form' ? q.body.fields.metadata : undefined;
			try {
				return String((JSON.parse(Array.isArray(meta) ? meta[0] : (meta ?? '{}')) as { n8nJobKey?: string }).n8nJobKey ?? '');
			} catch {
				return '';
			}
		});
		const twice = keys.length - new Set(keys).size;
		check(`${label}: no document was extracted (and billed) twice`, twice === 0 && creates.length <= docs.length,
			`${creates.length} extractions created for ${docs.length} documents, ${twice} for a document already extracted (Reuse Existing Job: a retry waits for the jobs that exist)`);
	} else {
		check(`${label}: every execution succeeded`, notSuccess.length === 0 && executions.length > 0,
		`${finalExecutions.length} executions of the workflow${notSuccess.length ? `; not success: ${notSuccess.map((e) => `${e.id} ${e.status}`).slice(0, 5).join(', ')}` : ', all success'} (mode ${[...new Set(finalExecutions.map((e) => e.mode))].join('/')})`);
	}
	// which worker ran what: n8n keeps no worker id in its execution records; each worker logs "Worker started execution N"
	const ranBy = new Map<string, string[]>();
	for (const [name, s] of d.workerExecutions) for (const id of s) if (!workerStartedBefore.get(name)?.has(id)) ranBy.set(id, [...(ranBy.get(id) ?? []), name]);
	const unclaimed = finalExecutions.filter((e) => !ranBy.has(e.id));
	const twice = [...ranBy].filter(([, names]) => names.length > 1);
	const perWorker = [...d.workerExecutions.keys()].map((name) => `${name} ${[...ranBy.values()].filter((n) => n.includes(name)).length}`);
	if (!killed) {
		check(`${label}: each execution ran on exactly one worker`, unclaimed.length === 0 && twice.length === 0,
			`${perWorker.join(', ')}${unclaimed.length ? `; in no worker's log: ${unclaimed.map((e) => e.id).slice(0, 5).join(', ')}` : ''}${twice.length ? `; on two: ${twice.map(([id]) => id).join(', ')}` : ''}`);
		check(`${label}: ${workersRunning === 2 ? 'both workers' : 'the worker'} ran executions`, workersUsed === workersRunning, `${workersUsed} of ${workersRunning} running workers started executions of this phase`);
	} else {
		reportHeldExecutions(d, killed, finalExecutions, rows);
		console.log(`fault round: before the retries ${firstPassRows} of ${docs.length} documents had a row`);
		// a failed execution is accounted for when its mails' documents are the missing ones
		const failedIds = new Set(notSuccess.map((e) => e.id));
		const rowsOfFailed = rows.filter((r) => r.n8n_execution_id && failedIds.has(r.n8n_execution_id)).length;
		console.log(`fault round: ${notSuccess.length} executions did not succeed (${notSuccess.map((e) => `${e.id} ${e.status}`).join(', ') || 'none'}); ${missing.length} documents have no row; rows written by failed executions: ${rowsOfFailed}`);
		await printExecutionErrors(d, notSuccess.map((e) => e.id));
	}
	// the spreadsheets: one per execution, their rows = the table's rows
	const sheetRows = await readPhaseSheets(d, finalExecutions.map((e) => e.id));
	const tableIds = new Set(rows.map((r) => r.extraction_id));
	const sheetIds = sheetRows.rows.map((r) => String(r.extraction_id));
	const sheetMismatch = sheetRows.rows.filter((r) => {
		const t = rows.find((x) => x.extraction_id === r.extraction_id);
		return !t || t.message_id !== r.message_id || t.file_name !== r.file_name || String(t.invoice_number ?? '') !== String(r.invoice_number ?? '');
	});
	check(`${label}: the spreadsheets' rows equal the table's rows`,
		sheetIds.length === rows.length && new Set(sheetIds).size === sheetIds.length && sheetIds.every((id) => tableIds.has(id)) && sheetMismatch.length === 0,
		`${sheetRows.files} batch-*.xlsx files (of ${finalExecutions.length} executions) with ${sheetIds.length} rows, ${new Set(sheetIds).size} distinct extraction ids; table ${rows.length} rows${sheetMismatch.length ? `; ${sheetMismatch.length} rows differ` : ''}`);
	const box = await d.dovecot.connect();
	const status = await box.status('INBOX');
	await box.close();
	check(`${label}: the trigger read every mail`, status.unseen === 0, `INBOX: ${status.messages} messages, ${status.unseen} unseen`);
	return result;
}

/** What the fault round did: the worker killed, when, and the executions it held then. */
interface Killed {
	worker: string;
	pid: number;
	at: number;
	held: string[];
	restartedAt?: number;
}

/**
 * The fault round's chaos: waits (at most 90 s) until `w` holds at least two executions of this
 * phase (started, not finished, by its own log), kills its whole process group with SIGKILL (the
 * worker and its task runner: a machine that dies), and starts it again 5 s later.
 */
async function killAndRestartWorker(d: Deployment, w: N8nProcess, opts: Options, afterExec: number): Promise<Killed | undefined> {
	const held = (): string[] => {
		const started = d.workerExecutions.get(w.name) ?? new Set<string>();
		const finished = d.workerFinished.get(w.name) ?? new Set<string>();
		return [...started].filter((id) => Number(id) > afterExec && !finished.has(id));
	};
	try {
		await waitUntil(`${w.name} to hold two executions`, 90_000, async () => (held().length >= 2 ? true : undefined), 100);
	} catch (err) {
		console.log(`fault round: ${(err as Error).message}; killing it anyway`);
	}
	const killed: Killed = { worker: w.name, pid: w.service?.pid ?? -1, at: Date.now(), held: held() };
	console.log(`fault round: SIGKILL to ${w.name} (pid ${killed.pid} and its task runner) while it holds executions ${killed.held.join(', ') || '(none)'}`);
	await w.service?.kill();
	await sleep(5000);
	if (opts.faultRestart === 'fresh') {
		// a new container: a new user folder (no event log, no crash journal), same name in our books
		const fresh = await prepareWorker(`${w.name}-fresh`, d.shared, d.root, d.tarball);
		const i = d.workers.indexOf(w);
		w = { ...fresh, name: w.name, service: undefined };
		d.workers[i] = w;
		w.cli = fresh.cli;
	}
	await startWorker(d, w, opts);
	killed.restartedAt = Date.now();
	console.log(`fault round: ${w.name} started again (pid ${w.service?.pid}, ${opts.faultRestart === 'fresh' ? 'in a fresh user folder' : 'in its own user folder'}) ${secs(killed.restartedAt - killed.at)} after the kill`);
	return killed;
}

let ownerCookie: string | undefined;

/** The owner account (POST /rest/owner/setup, once) and its session cookie, for the REST calls a user's editor makes. */
async function ownerSession(d: Deployment): Promise<string> {
	if (ownerCookie) return ownerCookie;
	const res = await fetch(`${d.mainUrl}/rest/owner/setup`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ email: 'owner@e2e.invalid', firstName: 'E2E', lastName: 'Owner', password: `E2e-${randomBytes(9).toString('hex')}` }),
		signal: AbortSignal.timeout(30_000),
	});
	if (res.status !== 200) throw new Error(`POST /rest/owner/setup → ${res.status}: ${(await res.text()).slice(0, 300)}`);
	ownerCookie = res.headers
		.getSetCookie()
		.map((c) => c.split(';')[0])
		.join('; ');
	return ownerCookie;
}

/** The editor's "Retry" of an execution (POST /rest/executions/:id/retry, the workflow as it was then); returns a short outcome. */
async function retryExecution(d: Deployment, cookie: string, id: string): Promise<string> {
	const res = await fetch(`${d.mainUrl}/rest/executions/${id}/retry`, {
		method: 'POST',
		headers: { 'content-type': 'application/json', cookie },
		body: JSON.stringify({ loadWorkflow: false }),
		signal: AbortSignal.timeout(60_000),
	});
	const text = await res.text();
	return `${res.status} ${text.slice(0, 160)}`;
}

/** Lines of the n8n logs (main and workers, both incarnations of a restarted worker) that name execution `id`. */
function logLinesAbout(d: Deployment, id: string): string[] {
	const out: string[] = [];
	for (const p of [d.main, ...d.workers]) {
		const file = path.join(d.logDir, `${p.name}.log`);
		if (!existsSync(file)) continue;
		for (const line of readFileSync(file, 'utf8').split('\n')) {
			if (new RegExp(`\\b(execution|Execution) ${id}\\b|"executionId":"?${id}\\b|unfinished executions: (\\d+, )*${id}\\b`).test(line)) out.push(`${p.name}: ${line.slice(0, 220)}`);
		}
	}
	return out;
}

/** What became of each execution the killed worker held: its record, who ran it again, its rows. */
function reportHeldExecutions(d: Deployment, killed: Killed, executions: ExecutionRow[], rows: ErpRow[]): void {
	console.log(`\nfault round: what n8n did with the ${killed.held.length} executions ${killed.worker} held when it was killed`);
	for (const id of killed.held) {
		const e = executions.find((x) => x.id === id);
		const r = rows.filter((x) => x.n8n_execution_id === id).length;
		console.log(`  execution ${id}: status ${e?.status ?? '?'}, rows stored by it ${r}`);
		for (const l of logLinesAbout(d, id)) console.log(`    ${l}`);
	}
}

/**
 * The error of each failed execution, from n8n's execution data. n8n stores it in the `flatted`
 * format (one array; every string stands at its own index and is referred to by that index), so
 * the first object with `message` and `name` is resolved by hand.
 */
async function printExecutionErrors(d: Deployment, ids: string[]): Promise<void> {
	for (const id of ids.slice(0, 10)) {
		const raw = (await d.postgres.sql('n8n', `select data from execution_data where "executionId" = ${Number(id)}`)).trim();
		let text = '(no error found in its data)';
		try {
			const flat = JSON.parse(raw) as unknown[];
			const at = (ref: unknown): unknown => (typeof ref === 'string' && /^\d+$/.test(ref) ? flat[Number(ref)] : ref);
			const err = flat.find((x): x is Record<string, unknown> => !!x && typeof x === 'object' && 'message' in x && ('name' in x || 'description' in x || 'stack' in x));
			if (err) text = `${String(at(err.name) ?? 'Error')}: ${String(at(err.message))}${err.description ? ` (${String(at(err.description)).slice(0, 160)})` : ''}`;
		} catch {
			/* not flatted JSON */
		}
		console.log(`  execution ${id}: ${text}`);
	}
}

/** The rows of the batch spreadsheets the phase's executions wrote (`files/erp/batch-<id>.xlsx`). */
async function readPhaseSheets(d: Deployment, executionIds: string[]): Promise<{ files: number; rows: Array<Record<string, unknown>> }> {
	const dir = path.join(d.filesDir, 'erp');
	const names = new Set(executionIds.map((id) => `batch-${id}.xlsx`));
	const files = existsSync(dir) ? readdirSync(dir).filter((f) => names.has(f)) : [];
	const rows: Array<Record<string, unknown>> = [];
	for (const f of files) rows.push(...(await readFirstSheet(readFileSync(path.join(dir, f)))).records);
	return { files: files.length, rows };
}

// ---------------------------------------------------------------------------------------------

async function main(): Promise<number> {
	const opts = parseArgs(process.argv.slice(2));
	const t0 = Date.now();
	const deadline = t0 + opts.timeoutS * 1000;
	installExitHooks((sig) => console.error(`\n${sig}: stopping every server and removing the throwaway folder`));
	// the whole run is bounded: past the deadline everything is stopped
	const killer = setTimeout(() => {
		console.error(`\nthe run exceeded --timeout ${opts.timeoutS} s: stopping`);
		cleanUpNow();
		process.exit(1);
	}, opts.timeoutS * 1000 + 60_000);
	killer.unref();

	const tools = await timed('install: Dovecot, PostgreSQL, Redis (scripts/e2e/install.sh)', () => installTools());
	const n8n = await timed('install: n8n 2.x (scripts/n8n/install.sh 2)', () => installN8n(opts.install));
	const cold = tools.installed || n8n.installed;
	console.log(`Installs: ${tools.installed ? 'Debian packages installed now' : 'Debian packages present'}, n8n ${n8n.line.version} ${n8n.installed ? 'installed now' : 'cached'} → a ${cold ? 'COLD' : 'WARM'} run`);
	const packDir = makeRunRoot('n8n-es-e2e-pack-');
	removeAtExit(packDir);
	const { tarball } = await timed('build + pack the package', () => buildAndPack(opts.build, packDir));

	const d = await deploy(opts, tarball, n8n.line, tools.tools);
	const tRun = Date.now();
	const phases: PhaseResult[] = [];
	const runTag = Date.now().toString(36).toUpperCase();
	if (opts.compareWorkers && !opts.faultRound) {
		await timed('start worker-1', () => startWorker(d, d.workers[0], opts));
		phases.push(await timed('load with 1 worker', () => runPhase(d, opts, '1 worker', `E2E${runTag}A`, deadline)));
		await timed('start worker-2', () => startWorker(d, d.workers[1], opts));
	} else {
		await timed('start worker-1 and worker-2', () => Promise.all(d.workers.map((w) => startWorker(d, w, opts))).then(() => undefined));
	}
	const listening = listeningSockets([d.postgres.service.pid, d.redis.service.pid, d.dovecot.service.pid, d.emulator.pid, ...[d.main, ...d.workers].map((p) => p.service?.pid ?? 0)].filter((p) => p > 0));
	const exposed = listening.filter((s) => !/^(127\.\d+\.\d+\.\d+|\[::1\]|\[::ffff:127\.\d+\.\d+\.\d+\]):\d+$/.test(s.local));
	check('every server listens on loopback only', exposed.length === 0, `${listening.length} listening sockets${exposed.length ? `; NOT loopback: ${exposed.map((s) => `${s.local} (pid ${s.pid})`).join(', ')}` : ', all on 127.0.0.1'}`);
	const full = await timed(opts.faultRound ? 'fault round with 2 workers' : 'load with 2 workers', () =>
		runPhase(d, opts, opts.faultRound ? 'fault round' : '2 workers', `E2E${runTag}B`, deadline),
	);
	phases.push(full);
	const runMs = Date.now() - tRun;

	// stop n8n first (workers, then main), then the servers; all within bounded waits
	await timed('stop everything', async () => {
		await Promise.all(d.workers.map((w) => w.service?.stop(30_000)));
		await d.main.service?.stop(30_000);
		await Promise.all([d.dovecot.service.stop(), d.postgres.service.stop(), d.redis.service.stop(), d.emulator.stop()]);
		cleanUpNow();
	});

	console.log('\n=== timings ===');
	for (const [label, ms] of timings) console.log(`${label.padEnd(52)} ${secs(ms)}`);
	console.log(`${'load phases (workers started + delivery + processing)'.padEnd(52)} ${secs(runMs)}`);
	console.log(`${`whole run (${cold ? 'cold: something was installed' : 'warm: everything installed'})`.padEnd(52)} ${secs(Date.now() - t0)}`);
	if (opts.compareWorkers && phases.length === 2) {
		const [one, two] = phases;
		console.log(
			`\nthroughput, same load (${one.mails} mails, ${one.docs} documents each): 1 worker ${secs(one.seconds * 1000)}, ${one.docsPerMin.toFixed(0)} docs/min; ` +
				`2 workers ${secs(two.seconds * 1000)}, ${two.docsPerMin.toFixed(0)} docs/min (×${(two.docsPerMin / one.docsPerMin).toFixed(2)})`,
		);
	}
	const failed = results.filter((r) => !r.ok);
	console.log(`\nchecks: ${results.length - failed.length} passed, ${failed.length} failed${failed.length ? ` (${failed.map((f) => f.name).join('; ')})` : ''}`);
	console.log(
		`e2e: ${full.mails} mails, ${full.docs} documents, ${full.rows} rows, ${full.missing} missing, ${full.duplicates} duplicates, ${full.workersUsed} workers, ${full.seconds.toFixed(1)} s, ${full.docsPerMin.toFixed(0)} docs/min`,
	);
	if (opts.faultRound) {
		// the fault round reports; it fails only on what must never happen: a document written twice,
		// or an execution left running or queued for good
		const ok = full.duplicates === 0 && !results.some((r) => !r.ok && /stuck|twice/.test(r.name));
		console.log(`fault round: ${ok ? 'no document written or extracted twice, no execution stuck' : 'FAILED'}; ${full.missing} documents lost (random faults ${opts.faults}, worker restarted in ${opts.faultRestart === 'fresh' ? 'a fresh' : 'its own'} user folder)`);
		return ok ? 0 : 1;
	}
	// the closing line's claims, asserted
	const minimum = opts.mails >= 200 ? { mails: 200, docs: 300 } : { mails: opts.mails, docs: 1 };
	const ok =
		failed.length === 0 &&
		full.mails >= minimum.mails &&
		full.docs >= minimum.docs &&
		full.rows === full.docs &&
		full.missing === 0 &&
		full.duplicates === 0 &&
		full.workersUsed === 2;
	if (!ok) console.error(`e2e FAILED${full.docs < minimum.docs ? ` (only ${full.docs} documents, at least ${minimum.docs} needed)` : ''}`);
	return ok ? 0 : 1;
}

main().then(
	(code) => {
		cleanUpNow();
		process.exit(code);
	},
	(err: unknown) => {
		console.error(`\ne2e FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
		cleanUpNow();
		process.exit(1);
	},
);
