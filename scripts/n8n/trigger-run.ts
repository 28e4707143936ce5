/**
 * trigger-finished-extractions.json ACTIVATED in a running n8n 2.x (`n8n execute` cannot start a
 * polling trigger), upload-without-waiting.json making jobs for it; run by run-examples.ts after
 * line 2, checked by trigger-check.ts. Steps (scripts/n8n/README.md says why each):
 * 1. emulator, user folder, both workflows published before `n8n start` (Poll Times every 10 s);
 * 2. jobs FINISHED before the activation (must never fire); 3. `n8n start`, the activation poll;
 * 4. after it: the upload workflow run on the server, a slow job, one ending ERROR, one without the
 *    key; 5. one poll failed with 503s and two jobs made during the outage (5b, opt-in: a poll
 *    slower than the interval); 6. until every job fired, two more polls, then the executions read.
 * `durable`: the same with n8n's durable poll cursors on (DURABLE_CURSORS_ENV), also checking that
 * the publication reached "published" and that n8n keeps the cursor in `poller_state`.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import type { Emulator, LoggedRequest } from '../../emulator';
import {
	importFixtures,
	runInServer,
	type N8nContext,
	type ServerRunOptions,
	type ServerRunResult,
} from '../lib/n8n-server';
import {
	commandError,
	runCommand,
	secs,
	sleep,
	tail,
	waitUntil,
	WaitTimeout,
} from '../lib/processes';
import { createExtraction, emulatorCall, prepareWorkflow, type Example } from './examples';
import type { Json } from './n8n-run';
import {
	evaluateTrigger,
	triggerLine,
	type CreatedJob,
	type FiredExecution,
	type TriggerObservation,
} from './trigger-check';

export const UPLOAD_FILE = 'upload-without-waiting.json';
export const TRIGGER_FILE = 'trigger-finished-extractions.json';

const MANUAL_TRIGGER = "When clicking 'Execute workflow'";
const UPLOAD_NODE = 'Upload Attachments';
const ROW_NODE = 'Invoice Row';
const KEY = 'batch';
const FILES = ['invoice.pdf', 'invoice-2.pdf'] as const;

/** n8n 2.41's durable poll cursors: all four are needed (the README has the table of why). */
const DURABLE_CURSORS_ENV = {
	N8N_SCHEDULER_ENABLED: 'true',
	N8N_SCHEDULER_POLL_TRIGGERS_ENABLED: 'true',
	N8N_USE_WORKFLOW_PUBLICATION_SERVICE: 'true',
	N8N_POLLER_DURABLE_CURSORS_ENABLED: 'true',
} as const;

/** Processing time of every job at the emulator (the slow one: SLOW_MS). */
const PROCESSING_MS = 1500;
const SLOW_MS = 14_000;

export interface TriggerRunOptions extends ServerRunOptions {
	upload: Example;
	trigger: Example;
	/** Seconds between polls: 10 (one custom cron per 10 s) … 60 (the example's Every Minute). */
	pollSeconds: number;
	/** One poll slower than the interval, two jobs finished just before (step 5b). */
	slowPoll?: boolean;
	/** n8n's durable poll cursors on (DURABLE_CURSORS_ENV). */
	durable?: boolean;
	/** Bound of the whole run. */
	timeoutS: number;
}

/**
 * Poll Times that poll every `seconds`: n8n refuses one cron firing more than once a minute
 * (n8n-workflow's isSubMinuteCron) but checks each entry alone, so one entry per second mark
 * (`0 * * * * *`, `10 * * * * *`, …) polls every `seconds`. 60: Every Minute.
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

/** The trigger's list requests (`GET /extract/?meta_key=batch`): one or more per poll. */
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
 * What the emulator saw, in seconds after `since`: the polls (list requests less than 3 s apart are
 * one poll, e.g. a request and its retries) and the extractions created.
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

/** A row of n8n's `poller_state` table (durable cursors). */
interface PollerState {
	nodeId: string;
	cursor: Json | null;
	consecutiveErrors: number;
	backoffUntil: string | null;
}

/**
 * The workflow's `poller_state` rows (REST does not show them), read from the server's SQLite
 * database with line 2's Node (`node:sqlite`, read-only) while n8n runs.
 *
 * @throws Error when the database cannot be read (no such table: not n8n 2.41's schema)
 */
async function readPollerState(ctx: N8nContext, workflowId: string): Promise<PollerState[]> {
	const script = [
		"const { DatabaseSync } = require('node:sqlite');",
		'const db = new DatabaseSync(process.argv[1], { readOnly: true, timeout: 5000 });',
		'const rows = db.prepare(\'SELECT "nodeId", "cursor", "consecutiveErrors", "backoffUntil" FROM poller_state WHERE "workflowId" = ?\').all(process.argv[2]);',
		'process.stdout.write(JSON.stringify(rows.map((r) => ({ ...r, cursor: JSON.parse(r.cursor) }))));',
	].join('\n');
	const dbFile = path.join(ctx.userFolder, '.n8n', 'database.sqlite');
	const args = ['--no-warnings', '-e', script, dbFile, workflowId];
	const r = await runCommand(ctx.info.nodeBin, args, { cwd: ctx.userFolder, timeoutMs: 30_000 });
	if (r.code !== 0) throw commandError(`reading poller_state from ${dbFile}`, r);
	return JSON.parse(r.stdout) as PollerState[];
}

/** The rows in short: each node's cursor (a list's length, a long string's), failures and backoff. */
function describePollerState(rows: PollerState[]): string {
	const short = (x: unknown): string => {
		if (Array.isArray(x)) return `[${x.length}]`;
		if (typeof x === 'string') return x.length > 24 ? `(${x.length} chars)` : x;
		if (x !== null && typeof x === 'object') return `{${Object.keys(x).length}}`;
		return String(x);
	};
	const cursor = (c: Json | null): string =>
		Object.entries(c ?? {})
			.filter(([k]) => k !== 'fingerprint')
			.map(([k, x]) => `${k} ${short(x)}`)
			.join(', ') || 'empty';
	const one = (r: PollerState): string =>
		`node ${r.nodeId}: ${cursor(r.cursor)}; ${r.consecutiveErrors} failed poll(s) in a row${r.backoffUntil ? `, backoff until ${r.backoffUntil}` : ''}`;
	return rows.map(one).join('; ') || 'no row';
}

/** The run, as described at the top of this file. Never throws: a failure is in the result. */
export function runActivatedTrigger(o: TriggerRunOptions): Promise<ServerRunResult> {
	const deadline = Date.now() + o.timeoutS * 1000;
	const run = {
		...o,
		tag: o.durable ? 'trigger durable' : 'trigger',
		processingMs: PROCESSING_MS,
		env: o.durable ? DURABLE_CURSORS_ENV : {},
	};
	return runInServer(run, async ({ emu, ctx, filesDir, start, publish, log, result }) => {
		const { timings } = result;
		const pollMs = o.pollSeconds * 1000;
		/** `ms`, or less: what is left of the run's time. */
		const upTo = (ms: number): number => Math.max(0, Math.min(ms, deadline - Date.now()));
		/** Waits until `done()` holds, for at most `ms` and never past the run's deadline. */
		const waitFor = (
			what: string,
			done: () => boolean | Promise<boolean>,
			ms: number,
			detail?: () => string,
			everyMs = 500,
		) => waitUntil(what, upTo(ms), done, everyMs, detail);
		const mark = (name: string, since: number): void => void (timings[name] = Date.now() - since);

		// 1. workflows, credentials; the trigger published
		let t = Date.now();
		const upload = prepareWorkflow(o.upload, o.source, filesDir, emu.filesUrl);
		const trigger = prepareWorkflow(o.trigger, o.source, filesDir, emu.filesUrl);
		const triggerNode = trigger.nodes.find(
			(n) => n.type === 'n8n-nodes-extraction-service.extractionServiceTrigger',
		);
		if (!triggerNode?.parameters)
			throw new Error(`${TRIGGER_FILE} has no Extraction Service Trigger node`);
		triggerNode.parameters.pollTimes = pollTimesEvery(o.pollSeconds);
		const jobs: Pick<TriggerObservation, 'before' | 'expected' | 'mustNotFire'> = {
			before: [],
			expected: [],
			mustNotFire: [],
		};
		/** An extraction at the emulator (the seeded Invoice schema), with the key when `batch`. */
		const create = async (
			list: CreatedJob[],
			file: string,
			batch: string | undefined,
			role: string,
			extra: Json = {},
		): Promise<void> => {
			const bytes = readFileSync(path.join(o.source.filesDir, file));
			const metadata = batch ? { [KEY]: batch, ...extra } : { source: 'elsewhere' };
			list.push({ id: await createExtraction(emu, file, bytes, metadata), file, batch, role });
		};

		// 2. (meanwhile) jobs that finish before the activation: never to fire
		const createBefore = (async () => {
			for (const [file, batch] of [
				['invoice.pdf', 'old-1'],
				['invoice-2.pdf', 'old-1'],
				['invoice.pdf', undefined],
			] as const)
				await create(jobs.before, file, batch, `old, ${batch ? 'with' : 'without'} the key`);
			await waitFor(
				'the jobs made before the activation to finish',
				async () => {
					const calls = jobs.before.map((j) => emulatorCall(emu, 'GET', `/extract/${j.id}/`, 200));
					return (await Promise.all(calls)).every((j) => j.status === 'FINISHED');
				},
				30_000,
			);
		})();
		const [, imported] = await Promise.all([
			createBefore,
			importFixtures(ctx, emu, [upload, trigger]),
		]);
		const pub = await publish(o.trigger.id, 120_000);
		timings.import = imported.credentialsMs + imported.workflowMs + pub.ms;
		mark('setup', t);
		log(
			`${jobs.before.length} extractions finished before the activation; workflows imported, "${o.trigger.name}" published (${secs(timings.setup)})${o.durable ? `; durable poll cursors on (${Object.keys(DURABLE_CURSORS_ENV).join(', ')})` : ''}`,
		);

		// 3. n8n start: the activation (its first poll) happens at start
		const startedAt = Date.now();
		const { server, rest } = await start(upTo(120_000));
		await waitFor(
			'the activation poll (the first GET /extract/?meta_key=batch)',
			() => listRequests(emu, startedAt).length > 0,
			60_000,
			() => tail(server.output(), 15),
		);
		// the activation poll's reads by id follow its list request
		await sleep(1000);
		mark('start', startedAt);
		log(
			`n8n ${o.info.version} started, trigger activated, polls every ${o.pollSeconds}s (${secs(timings.start)})`,
		);
		const logCursor = async (when: string): Promise<void> => {
			if (!o.durable) return;
			const rows = await readPollerState(ctx, o.trigger.id).then(
				describePollerState,
				(e: Error) => `unreadable (${e.message})`,
			);
			log(`durable cursor (poller_state) ${when}: ${rows}`);
		};
		if (o.durable) {
			// the flags took effect: published through the outbox, the cursor kept in poller_state
			const publication = await rest.published(o.trigger.id, upTo(30_000));
			const rows = await readPollerState(ctx, o.trigger.id);
			if (!rows.some((r) => r.nodeId === triggerNode.id))
				throw new Error(
					`no poller_state row for the trigger node ${String(triggerNode.id)}: n8n's durable poll cursors are not on (rows: ${describePollerState(rows)})`,
				);
			const triggers = (publication.triggers ?? []) as Json[];
			log(
				`publication status: published (${triggers.map((x) => `${String(x.nodeId)} ${String(x.status)}`).join(', ')})`,
			);
			await logCursor('after the activation');
		}

		// 4. jobs after the activation: the upload workflow run on the server, and some of our own
		t = Date.now();
		const uploaded = await rest.run(o.upload, MANUAL_TRIGGER, upTo(60_000));
		for (const item of uploaded.run.json(UPLOAD_NODE))
			jobs.expected.push({
				id: String(item.id),
				file: String(item.document_name),
				batch: String((item.metadata as Json | undefined)?.[KEY]),
				role: `"${o.upload.name}" (execution ${uploaded.id})`,
			});
		const slow = `slow (${SLOW_MS / 1000}s, pending over polls)`;
		await create(jobs.expected, 'invoice-2.pdf', 'slow-1', slow, {
			emulator_processing_ms: SLOW_MS,
		});
		await create(jobs.mustNotFire, 'invoice.pdf', 'err-1', 'ends ERROR', {
			emulator_outcome: 'ERROR',
		});
		await create(jobs.mustNotFire, 'invoice.pdf', undefined, 'without the key');
		log(
			`created after the activation: ${jobs.expected.length} to fire (${jobs.expected.length - 1} by "${o.upload.name}" run on the server), ${jobs.mustNotFire.length} not to fire (ERROR, no key)`,
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
		/** Waits for a poll after now, then 1.5 s (its reads by id) before what comes next. */
		const afterNextPoll = async (why: string): Promise<void> => {
			const since = Date.now();
			await waitFor(why, () => listRequests(emu, since).length > 0, pollMs + 15_000);
			await sleep(1500);
		};

		// 5. a failing poll: 503 for the list request and its 3 retries, injected right after a poll
		await afterNextPoll('a poll to inject the 503s after');
		const injectedAt = Date.now();
		emu.injectFaults(
			{ method: 'GET', path: '/extract/' },
			Array.from({ length: 4 }, () => ({ status: 503, retryAfter: '1' })),
		);
		for (const file of FILES)
			await create(jobs.expected, file, 'outage-1', 'created during the outage');
		const served503 = () => listRequests(emu, injectedAt).filter((r) => r.status === 503).length;
		await waitFor(
			'the failing poll (4 × 503 on GET /extract/)',
			() => served503() >= 4,
			pollMs + 20_000,
			() => `${served503()} served`,
		);
		await waitFor(
			'n8n to record the failed poll',
			async () => (await readExecutions(), failedExecutions > 0),
			20_000,
			() => 'no failed execution of the trigger workflow',
		);
		log(
			`one poll failed (4 × 503, Retry-After 1): n8n recorded ${failedExecutions} failed execution(s); the workflow stays active; 2 jobs created during the outage`,
		);
		await logCursor('after the failed poll');

		// 5b. a poll slower than the interval: the next poll starts while it still runs
		if (o.slowPoll) {
			await afterNextPoll('a poll to delay the next one after');
			for (const file of FILES)
				await create(jobs.expected, file, 'overlap-1', 'finished before a slow poll');
			await sleep(PROCESSING_MS + 1000);
			const delayMs = pollMs + 4000;
			emu.injectFaults({ method: 'GET', path: '/extract/' }, [{ delayMs }]);
			log(
				`the next poll's list request is answered after ${secs(delayMs)}: the poll after it starts while it runs; 2 jobs finished just before`,
			);
		}

		// 6. every job fires (when not, the counts still say what did); then two more polls for a late duplicate
		const unfired = await waitFor(
			'every job to fire',
			async () => (await readExecutions(), jobs.expected.every((j) => firedIds.has(j.id))),
			SLOW_MS + 3 * pollMs + 20_000,
			() => {
				const left = jobs.expected.filter((j) => !firedIds.has(j.id));
				return `not fired yet: ${left.map((j) => `${j.id} (${j.role})`).join(', ') || 'none'}`;
			},
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
			);
			await sleep(2000);
		}
		await readExecutions();
		await logCursor('at the end');

		const { counts, problems } = evaluateTrigger({
			...jobs,
			executions: [...parsed.values()],
			failedExecutions,
			faultInjected: true,
		});
		result.line = triggerLine(counts).replace(
			/^trigger:/,
			o.durable ? 'trigger (durable cursors):' : 'trigger:',
		);
		log(
			`${parsed.size} successful executions of "${o.trigger.name}", ${failedExecutions} failed (the injected outage)`,
		);
		if (unfired) problems.unshift(unfired);
		if (problems.length > 0)
			result.message = `${problems.join('\n')}\n${describeTimeline(emu, startedAt)}`;
	});
}
