/**
 * A model-based test of the Extraction Service Trigger (issue 31): generated histories of a service
 * (jobs created, finished, failed and deleted in any order; list behaviours changed mid-history;
 * transient faults; n8n restarts and filter edits; both of n8n's poll schedulers) run against the
 * emulator in this process, with the trigger polled through n8n-core's own poll path
 * (`createTriggerHarness`), on a simulated clock: `Date.now` of this process and the emulator's
 * clock are one number the history moves (a poll is a minute later; a retry's wait moves it too), so
 * no outcome depends on this machine's speed.
 *
 * The model is what the history did to the service: which jobs exist, when each was created, its
 * status, which were deleted, and which reached the event's final state after activation. It gives
 * the expected fire set. Invariants, checked at every poll and after a quiet phase (every job
 * released, faults cleared, polls until nothing more fires):
 * - every job that reached the event's final state after activation fires exactly once;
 * - nothing created and final before activation fires (unless Include Existing Since asks);
 * - a poll errors only where the README says it reports one (an injected fault that outlasted the
 *   retries; extractions: every one it handled last deleted; one `created_at` beyond 100 pages);
 * - the saved static data stays ≤ 32 KB.
 *
 * Which service behaviours a history may use is a `Profile`: `ordinary` (what the README promises
 * and holds today) and `hostile` (everything issue 31 lists). Entry points: `historyProperty` (a
 * fast-check property; `fc.assert(historyProperty(...), { seed, path })` replays one history),
 * `installSimulatedTime` (once per process, before any history).
 */

import fc from 'fast-check';
import type { IDataObject } from 'n8n-workflow';

import { startEmulator, type Emulator, type FaultSpec, type ListOrder } from '../../emulator';
import type { FinalStatus, ListQuirks } from '../../emulator';
import { createTriggerHarness, type PollRun, type TriggerHarness } from '../../scripts/engine';
import { replaceN8nSleep } from './n8n-sleep';

// ---------------------------------------------------------------------------------------------------
// Events

export type EventName =
	| 'extractionFinished'
	| 'extractionFailed'
	| 'parsingFinished'
	| 'parsingFailed'
	| 'documentUploaded';

export const EVENT_NAMES: EventName[] = [
	'extractionFinished',
	'extractionFailed',
	'parsingFinished',
	'parsingFailed',
	'documentUploaded',
];

/** What an event lists, which statuses fire it, and the outcomes its jobs may have. */
interface EventFacts {
	kind?: 'extraction' | 'parsing';
	fires: string[];
	outcomes: FinalStatus[];
	listPath: string;
	readPath: (id: string) => string;
	readPattern: RegExp;
}

const FACTS: Record<EventName, EventFacts> = {
	extractionFinished: extractionFacts(['FINISHED']),
	extractionFailed: extractionFacts(['ERROR']),
	parsingFinished: parsingFacts(['FINISHED', 'PARTIAL_FINISHED']),
	parsingFailed: parsingFacts(['ERROR']),
	documentUploaded: {
		fires: ['UPLOADED'],
		outcomes: [],
		listPath: '/v0/documents',
		readPath: (id) => `/v0/documents/${id}`,
		readPattern: /^\/v0\/documents\/[^/]+$/,
	},
};

function extractionFacts(fires: string[]): EventFacts {
	return {
		kind: 'extraction',
		fires,
		outcomes: ['FINISHED', 'ERROR'],
		listPath: '/extract/',
		readPath: (id) => `/extract/${id}/`,
		readPattern: /^\/extract\/[^/]+\/$/,
	};
}

function parsingFacts(fires: string[]): EventFacts {
	return {
		kind: 'parsing',
		fires,
		outcomes: ['FINISHED', 'PARTIAL_FINISHED', 'ERROR'],
		listPath: '/v0/parsing',
		readPath: (id) => `/v0/parsing/${id}`,
		readPattern: /^\/v0\/parsing\/[^/]+$/,
	};
}

// ---------------------------------------------------------------------------------------------------
// Profiles: the service behaviours a history may use

/** Which kinds of list quirk (`Emulator.setListQuirks`) a history may switch on. */
export type QuirkKind =
	'countCap' | 'countOff' | 'largePages' | 'ignoreDateFilter' | 'itemsWithoutDates';

export interface Profile {
	name: string;
	/** Most commands in a history (before the quiet phase). */
	maxCommands: number;
	/** Most jobs one create command makes. */
	maxCreate: number;
	/** Most jobs (final, a few unfinished) that exist before activation. */
	maxExisting: number;
	/** A create may stamp its jobs with one `created_at`, also the one of the previous create. */
	batchStamps: boolean;
	/** List order: one per history, changed by commands, or also flipping at every poll. */
	orders: 'fixed' | 'change' | 'alternate';
	/** Smallest page the service serves when it caps pages below the 100 asked (`setMaxPageSize`); 0: never capped. */
	minPageCap: number;
	quirks: QuirkKind[];
	/** Items created up to this long (ms) before the service lists them (within the 10-minute margin); 0: none. */
	lateMs: number;
	deleteFired: boolean;
	deleteUnfinished: boolean;
	/** Transient 429 / 5xx / resets on a list page or a read by id: at most this many in a row (3: the client's retries). */
	maxFaultsInRow: number;
	/** A job whose read by id fails forever. */
	stuckJob: boolean;
	restart: boolean;
	schedulers: Array<'classic' | 'durable'>;
	/**
	 * A filter edit: `lenient` counts it as a new activation (jobs final and not yet fired at the edit
	 * may be dropped, as the state's fingerprint rule says); `strict` expects nothing dropped.
	 */
	filterEdit: 'none' | 'lenient' | 'strict';
	includeExisting: boolean;
	/** Histories per event in `npm test` (the bench takes its own count). */
	runs: number;
}

/** What the README promises today and holds today. */
export const ORDINARY: Profile = {
	name: 'ordinary',
	maxCommands: 14,
	maxCreate: 60,
	maxExisting: 60,
	batchStamps: false,
	orders: 'fixed',
	minPageCap: 20,
	quirks: [],
	lateMs: 0,
	deleteFired: true,
	deleteUnfinished: true,
	maxFaultsInRow: 3,
	stuckJob: false,
	restart: true,
	schedulers: ['classic', 'durable'],
	filterEdit: 'lenient',
	includeExisting: true,
	runs: 15,
};

/** Everything issue 31 lists. */
export const HOSTILE: Profile = {
	name: 'hostile',
	maxCommands: 24,
	maxCreate: 300,
	maxExisting: 150,
	batchStamps: true,
	orders: 'alternate',
	minPageCap: 2,
	quirks: ['countCap', 'countOff', 'largePages', 'ignoreDateFilter', 'itemsWithoutDates'],
	lateMs: 9 * 60_000,
	deleteFired: true,
	deleteUnfinished: true,
	maxFaultsInRow: 5,
	stuckJob: true,
	restart: true,
	schedulers: ['classic', 'durable'],
	filterEdit: 'strict',
	includeExisting: true,
	runs: 50,
};

/**
 * The ordinary profile with one hostile behaviour added (`hostile:<name>`), so that what a run finds
 * can be told apart by cause.
 */
const FOCUSED: Record<string, Partial<Profile>> = {
	batch: { batchStamps: true },
	orders: { orders: 'change' },
	alternate: { orders: 'alternate' },
	smallPages: { minPageCap: 2 },
	countCap: { quirks: ['countCap'] },
	countOff: { quirks: ['countOff'] },
	largePages: { quirks: ['largePages'] },
	ignoreDates: { quirks: ['ignoreDateFilter'], minPageCap: 2 },
	noDates: { quirks: ['itemsWithoutDates'] },
	late: { lateMs: 9 * 60_000 },
	faults: { maxFaultsInRow: 5 },
	stuck: { stuckJob: true },
	filterEdit: { filterEdit: 'strict' },
	big: { maxCreate: 300, maxExisting: 150 },
};

export const PROFILES: Record<string, Profile> = {
	ordinary: ORDINARY,
	hostile: HOSTILE,
	...Object.fromEntries(
		Object.entries(FOCUSED).map(([name, change]) => [
			`hostile:${name}`,
			{ ...ORDINARY, ...change, name: `hostile:${name}` },
		]),
	),
};

// ---------------------------------------------------------------------------------------------------
// The simulated clock

/** The one clock of a process running histories: `Date.now`, the emulator's clock, retry waits. */
export const time = { now: Date.parse('2026-11-01T08:00:00.000Z') };

/**
 * Puts this process on the simulated clock: `Date.now` reads `time.now`, and n8n-workflow's `sleep`
 * (the client's retry waits) moves it on instead of waiting. Returns a function that undoes both.
 */
export function installSimulatedTime(): () => void {
	const realNow = Date.now;
	Date.now = () => time.now;
	const restoreSleep = replaceN8nSleep(async (ms: number) => {
		time.now += Math.max(0, ms);
		await new Promise((resolve) => setImmediate(resolve));
	});
	return () => {
		Date.now = realNow;
		restoreSleep();
	};
}

const MINUTE = 60_000;
/** What the README promises the saved state stays under. */
const STATE_LIMIT = 32 * 1024;
/** Jobs are named `job-<i>.pdf`: the filter `search: job` matches every one. */
const NAME_PREFIX = 'job';

// ---------------------------------------------------------------------------------------------------
// The model

/** One job (or document) as the history made it. */
interface ModelJob {
	id: string;
	/** `created_at` (epoch ms, service time) as the service shows it. */
	createdAt: number;
	/** Its final status once final (documents: `UPLOADED` at once); undefined while held. */
	status?: string;
	/** The outcome it will get when released. */
	outcome?: FinalStatus;
	/** Final before the trigger's first activation. */
	finalBeforeActivation: boolean;
	/** Fired before a new start (a lenient filter edit, a durable restart with no saved state): fires again only with Include Existing Since. */
	firedBeforeNewStart?: boolean;
	deleted: boolean;
	/** May fire once or not at all (dropped where the README says so, a stuck read, a race with a deletion). */
	excused: boolean;
	/** Its read by id fails forever. */
	stuck: boolean;
}

/** A violation of an invariant, with the poll it was seen at. */
class HistoryError extends Error {}

/** How a history starts: scheduler, list order, jobs before activation, Include Existing Since. */
export interface Setup {
	scheduler: 'classic' | 'durable';
	order: ListOrder;
	existing: number;
	existingHeld: number;
	includeExisting: boolean;
}

/**
 * A history in progress: the model (jobs, what fired) and the real system (emulator, harness). The
 * commands change both; polls check the invariants as they go.
 */
export class World {
	readonly jobs = new Map<string, ModelJob>();
	/** Fires by id since the last activation that started afresh (a lenient filter edit). */
	readonly fired = new Map<string, number>();
	/** Fires in all. */
	private fires = 0;
	/** Every id that ever fired. */
	readonly everFired = new Set<string>();
	readonly log: string[] = [];
	order: ListOrder;
	alternate = false;
	pageCap = 100;
	quirks: ListQuirks = {};
	filtered = false;
	/** Deletions since the last poll that did not fail (the lost-edge error may follow). */
	deletedSincePoll = false;
	/** Stuck reads (faults re-injected after the quiet phase clears the others). */
	readonly stuck: string[] = [];
	/** Times each stuck job was reported (the error naming it after its reads failed 3 polls in a row). */
	readonly reported = new Map<string, number>();
	/** Whether the list's `count` quirks changed since the last poll that did not fail. */
	countChanged = false;
	/** Times a stuck job may be reported: once, and once more after each restart with durable cursors. */
	private reportsAllowed = 1;
	polls = 0;
	private lastStamp = Number.NaN;
	private harness!: TriggerHarness;
	private since?: string;
	readonly facts: EventFacts;

	private constructor(
		readonly profile: Profile,
		readonly event: EventName,
		readonly setup: Setup,
		readonly emulator: Emulator,
	) {
		this.facts = FACTS[event];
		this.order = setup.order;
	}

	/** A fresh emulator, the jobs that exist before activation, and the activated trigger. */
	static async start(profile: Profile, event: EventName, setup: Setup): Promise<World> {
		time.now += 60 * MINUTE;
		const emulator = await startEmulator({
			quiet: true,
			processingMs: 0,
			listOrder: setup.order,
			clock: () => time.now,
			credits: 10_000_000,
		});
		const world = new World(profile, event, setup, emulator);
		try {
			const sinceAt = time.now + MINUTE;
			world.create(Math.floor(setup.existing / 2), false, 0, false);
			time.now += 2 * MINUTE;
			world.create(setup.existing - Math.floor(setup.existing / 2), false, 0, false);
			if (world.facts.kind) world.create(setup.existingHeld, true, 0, false);
			for (const job of world.jobs.values()) job.finalBeforeActivation = job.status !== undefined;
			if (setup.includeExisting) world.since = new Date(sinceAt).toISOString();
			time.now += MINUTE;
			world.harness = world.newHarness();
			await world.activate('activation');
		} catch (error) {
			await world.close();
			throw error;
		}
		return world;
	}

	async close(): Promise<void> {
		await this.emulator.close();
	}

	private newHarness(staticData?: IDataObject): TriggerHarness {
		const baseUrl = `${this.emulator.url}/`;
		return createTriggerHarness({
			parameters: {
				event: this.event,
				...(this.filtered ? { filters: { search: NAME_PREFIX } } : {}),
				...(this.since ? { options: { includeExistingSince: this.since } } : {}),
			},
			typeVersion: 2,
			durableCursors: this.setup.scheduler === 'durable',
			// n8n keeps a node's static data under `node:<name>` in the workflow's.
			staticData: staticData && { 'node:Extraction Service Trigger': staticData },
			credentials: {
				extractionServiceApi: { baseUrl, apiKey: this.emulator.apiKey },
				extractionServiceTokenApi: { baseUrl, token: this.emulator.token },
			},
		});
	}

	// ---- the service side

	/**
	 * Creates `k` jobs (documents): held unfinished, or final at once with `outcome`; each with its own
	 * `created_at` (the clock moves 1 ms before each), or all at one (`batch`: the previous create's
	 * too when the clock has not moved since). `lateMs`: listed that long after their `created_at`.
	 */
	create(k: number, held: boolean, outcomeIndex: number, batch: boolean, lateMs = 0): string[] {
		const { kind, outcomes } = this.facts;
		const outcome = kind ? outcomes[outcomeIndex % outcomes.length] : undefined;
		const ids: string[] = [];
		const make = (n: number) =>
			kind
				? this.emulator.seedJobs(kind, n, { hold: held, outcome, namePrefix: NAME_PREFIX })
				: this.emulator.seedDocuments(n, { namePrefix: NAME_PREFIX });
		if (batch && k > 0) {
			if (this.lastStamp !== time.now) time.now += 1;
			ids.push(...make(k));
		} else {
			for (let i = 0; i < k; i++) {
				time.now += 1;
				ids.push(...make(1));
			}
		}
		this.lastStamp = time.now;
		for (const id of ids) {
			if (lateMs > 0) this.emulator.backdate(id, lateMs);
			this.jobs.set(id, {
				id,
				createdAt: time.now - lateMs,
				status: held && kind ? undefined : (outcome ?? 'UPLOADED'),
				outcome,
				finalBeforeActivation: false,
				deleted: false,
				excused: false,
				stuck: false,
			});
		}
		return ids;
	}

	/** Held jobs (not deleted), oldest first. */
	held(): ModelJob[] {
		return [...this.jobs.values()].filter((job) => job.status === undefined && !job.deleted);
	}

	/** Makes `jobs` final now, with `outcome` instead of their own when given. */
	release(jobs: ModelJob[], given?: FinalStatus): void {
		if (jobs.length === 0) return;
		// PARTIAL_FINISHED exists for parsings only (an extraction released so finishes).
		const outcome = given && !this.facts.outcomes.includes(given) ? 'FINISHED' : given;
		this.emulator.releaseJobs(
			jobs.map((job) => job.id),
			outcome,
		);
		for (const job of jobs) job.status = outcome ?? job.outcome;
	}

	/** Deletes `jobs` at the service; one final and not fired yet may never fire (excused). */
	delete(jobs: ModelJob[]): void {
		if (jobs.length === 0) return;
		this.emulator.deleteRecords(jobs.map((job) => job.id));
		for (const job of jobs) {
			job.deleted = true;
			if (!this.everFired.has(job.id)) job.excused = true;
		}
		this.deletedSincePoll = true;
	}

	setOrder(order: ListOrder): void {
		this.order = order;
		this.emulator.setListOrder(order);
	}

	// ---- the trigger side

	/** One scheduled poll, a simulated minute after the last. */
	async poll(label = 'poll'): Promise<void> {
		time.now += MINUTE;
		if (this.alternate)
			this.setOrder(this.order === 'newest-first' ? 'oldest-first' : 'newest-first');
		this.polls++;
		this.emulator.clearLog();
		this.note(label, await this.harness.poll());
	}

	/**
	 * An n8n restart: a new harness from the static data n8n saved, activated again. With durable
	 * cursors, n8n saves no state until a poll outputs something (README: after a restart n8n
	 * activates again): a restart before that is a new start.
	 */
	async restart(): Promise<void> {
		const saved = this.harness.staticData();
		if (this.setup.scheduler === 'durable') {
			if (saved.fingerprint === undefined) this.newStart();
			// A report is an error, and a failed poll commits nothing: after a restart the saved state
			// may still hold it, and it may be reported once more (README).
			this.reportsAllowed++;
		}
		this.harness = this.newHarness(saved);
		time.now += MINUTE;
		await this.activate('restart');
	}

	/**
	 * A filter edit (`search: job` on or off: every job still matches): the workflow saved with its
	 * static data and activated again. `lenient`: a new start, as the fingerprint rule says.
	 */
	async editFilter(): Promise<void> {
		if (this.profile.filterEdit === 'lenient') this.newStart();
		this.filtered = !this.filtered;
		this.harness = this.newHarness(this.harness.staticData());
		time.now += MINUTE;
		await this.activate('filter edit');
	}

	/**
	 * A new activation: what fired may fire again only with Include Existing Since; what is final
	 * and has not fired may be dropped (or fire, once).
	 */
	private newStart(): void {
		for (const job of this.jobs.values()) {
			if (job.status === undefined) continue;
			if (this.everFired.has(job.id)) job.firedBeforeNewStart = true;
			else job.excused = true;
		}
		this.fired.clear();
	}

	private async activate(label: string): Promise<void> {
		this.emulator.clearLog();
		this.note(label, await this.harness.activate());
	}

	/** Records what a poll fired and checks it: once each, only what may fire, allowed errors only, state size. */
	private note(label: string, run: PollRun): void {
		const ids = run.items.map((item) => String(item.json.id));
		const faulted = this.emulator.requests.filter(
			(r) => r.origin === 'api' && (r.status === 0 || r.status === 429 || r.status >= 500),
		).length;
		this.log.push(
			`${label} #${this.polls}: ${ids.length} fired${run.error ? `, error "${run.error.message}"` : ''}${faulted ? `, ${faulted} faulted answers` : ''}`,
		);
		for (const id of ids) {
			const count = (this.fired.get(id) ?? 0) + 1;
			this.fired.set(id, count);
			this.everFired.add(id);
			this.fires++;
			const job = this.jobs.get(id);
			if (!job) this.fail(`${label}: fired ${id}, which the history never made`);
			if (job.stuck) {
				// Read faults queued before it was stuck are taken first: its read may have been
				// answered once (the emulator's request log says so); then it fires as any job.
				const answered = this.emulator.requests.some(
					(r) => r.origin === 'api' && r.path === this.facts.readPath(id) && r.status === 200,
				);
				if (!answered) this.fail(`${label}: fired ${id}, whose read by id fails forever`);
				job.stuck = false;
				this.stuck.splice(this.stuck.indexOf(id), 1);
			}
			if (count > 1) this.fail(`${label}: fired ${id} a ${count}th time`);
			if (!this.mayFire(job))
				this.fail(`${label}: fired ${id}, which may not fire (${describe(job)})`);
		}
		const bytes = JSON.stringify(this.harness.staticData()).length;
		if (bytes > STATE_LIMIT) this.fail(`${label}: the saved static data is ${bytes} bytes`);
		if (run.error) this.judgeError(label, run.error, faulted);
		else {
			this.deletedSincePoll = false;
			// A poll that fires reports what it counted behind its window at the next quiet poll.
			if (ids.length === 0) this.countChanged = false;
		}
	}

	/** Whether a job may fire: final in a status that fires, and not final before activation (unless included). */
	private mayFire(job: ModelJob): boolean {
		if (job.status === undefined || !this.facts.fires.includes(job.status)) return false;
		if (!job.finalBeforeActivation && !job.firedBeforeNewStart) return true;
		return this.since !== undefined && job.createdAt >= Date.parse(this.since);
	}

	/** An error is allowed only where the README says the trigger reports one. */
	private judgeError(label: string, error: Error, faulted: number): void {
		const message = error.message;
		const excuseUnfired = () => {
			for (const job of this.jobs.values()) if (!this.everFired.has(job.id)) job.excused = true;
		};
		// A stuck job (its read fails forever) is reported once, naming it; the others fire.
		if (/could not read .* polls in a row/.test(message)) {
			const named = this.stuck.filter((id) => message.includes(id));
			if (named.length === 0)
				this.fail(`${label}: reported jobs it could not read, none of them stuck: ${message}`);
			for (const id of named) {
				const times = (this.reported.get(id) ?? 0) + 1;
				this.reported.set(id, times);
				if (times > this.reportsAllowed)
					this.fail(`${label}: reported stuck job ${id} a ${times}th time`);
			}
			return;
		}
		// The /v0 check for items dated behind the window trusts the list's `count` (README): a
		// count whose error changed since the last good poll reads as items that appeared there.
		if (/appeared dated before the trigger's window/.test(message) && this.countChanged) return;
		// A fault that outlasted the client's retries: the poll changes nothing.
		if (faulted > 0 && !/could not find|appeared dated|could not read every/.test(message)) return;
		if (
			this.facts.kind === 'extraction' &&
			this.deletedSincePoll &&
			/could not find where it stopped/.test(message)
		) {
			excuseUnfired();
			return;
		}
		// A /v0 window longer than a poll reads (1,000 pages): it can only be when the list is.
		if (/could not read every/.test(message) && this.jobs.size > 1000 * this.smallestPage()) {
			excuseUnfired();
			return;
		}
		this.fail(`${label}: the poll failed where the README reports no error: ${message}`);
	}

	private smallestPage(): number {
		return Math.min(this.pageCap, this.quirks.pageSize ?? 100);
	}

	private fail(message: string): never {
		throw new HistoryError(`${message}\n  polls: ${this.log.slice(-12).join('\n         ')}`);
	}

	// ---- the end of a history

	/** The quiet phase: faults cleared (stuck reads stay), every held job released, polls until nothing more fires. */
	async quiet(): Promise<void> {
		this.emulator.clearFaults();
		for (const id of this.stuck) this.injectStuck(id);
		this.release(this.held().filter((job) => !job.stuck));
		let idle = 0;
		for (let n = 0; n < 40 && idle < 3; n++) {
			const before = this.firedTotal();
			await this.poll('quiet poll');
			idle =
				this.firedTotal() === before &&
				this.missing().length === 0 &&
				this.unreported().length === 0
					? idle + 1
					: 0;
		}
	}

	injectStuck(id: string): void {
		this.emulator.injectFaults({ method: 'GET', path: this.facts.readPath(id) }, [
			{ status: 500, forever: true },
		]);
	}

	private firedTotal(): number {
		return this.fires;
	}

	/** Jobs that must have fired and have not. */
	missing(): ModelJob[] {
		return [...this.jobs.values()].filter(
			(job) =>
				!job.excused &&
				!job.stuck &&
				!job.deleted &&
				this.mayFire(job) &&
				!this.everFired.has(job.id) &&
				(!job.finalBeforeActivation || this.since !== undefined),
		);
	}

	/** Stuck jobs that must be reported (in a status that fires, not deleted, not excused) and have not been. */
	unreported(): ModelJob[] {
		return [...this.jobs.values()].filter(
			(job) =>
				job.stuck &&
				this.mayFire(job) &&
				!job.deleted &&
				!job.excused &&
				!this.reported.has(job.id),
		);
	}

	/**
	 * The final invariant: every job that must fire fired (exactly once was checked at each poll);
	 * every stuck job that was not deleted was reported (once was checked at each poll).
	 */
	checkFinal(): void {
		const unreported = this.unreported();
		if (unreported.length > 0)
			this.fail(
				`${unreported.length} stuck jobs never reported after the quiet phase, e.g. ${unreported
					.slice(0, 3)
					.map(describe)
					.join('; ')}`,
			);
		const missing = this.missing();
		if (missing.length > 0)
			this.fail(
				`${missing.length} of ${this.jobs.size} jobs never fired after the quiet phase, e.g. ${missing
					.slice(0, 3)
					.map(describe)
					.join('; ')}`,
			);
	}
}

function describe(job: ModelJob | undefined): string {
	if (!job) return 'unknown';
	const flags = [
		job.status ?? 'unfinished',
		job.finalBeforeActivation ? 'final before activation' : '',
		job.deleted ? 'deleted' : '',
		job.stuck ? 'stuck' : '',
		`created ${new Date(job.createdAt).toISOString()}`,
	];
	return `${job.id.slice(0, 8)} ${flags.filter(Boolean).join(', ')}`;
}

// ---------------------------------------------------------------------------------------------------
// Commands

type Cmd = fc.AsyncCommand<World, World>;

/** Create k jobs: held or final with an outcome, own `created_at`s or one batch stamp, maybe listed late. */
class Create implements Cmd {
	constructor(
		readonly k: number,
		readonly held: boolean,
		readonly outcome: number,
		readonly batch: boolean,
		readonly lateMs: number,
	) {}
	check = () => true;
	async run(world: World): Promise<void> {
		world.create(this.k, this.held && !!world.facts.kind, this.outcome, this.batch, this.lateMs);
	}
	toString(): string {
		return `Create(${this.k}, ${this.held ? 'held' : 'final'}, outcome ${this.outcome}${this.batch ? ', batch' : ''}${this.lateMs ? `, late ${this.lateMs} ms` : ''})`;
	}
}

/** Finish (or fail) held jobs in any order: the picks index the held ones; `all` releases every one. */
class Finish implements Cmd {
	constructor(
		readonly picks: number[],
		readonly all: boolean,
		readonly outcome: FinalStatus | undefined,
	) {}
	check = (world: Readonly<World>) => world.held().some((job) => !job.stuck);
	async run(world: World): Promise<void> {
		const held = world.held().filter((job) => !job.stuck);
		const chosen = this.all ? held : pick(held, this.picks);
		world.release(chosen, this.outcome);
	}
	toString(): string {
		return `Finish(${this.all ? 'all' : `[${this.picks.join(',')}]`}${this.outcome ? `, as ${this.outcome}` : ''})`;
	}
}

/** Delete jobs: fired ones (a workflow that deletes what it handled), unfinished ones, or any final ones. */
class Delete implements Cmd {
	constructor(
		readonly which: 'fired' | 'unfinished' | 'final',
		readonly picks: number[],
	) {}
	private candidates(world: Readonly<World>): ModelJob[] {
		const live = [...world.jobs.values()].filter((job) => !job.deleted && !job.stuck);
		if (this.which === 'fired') return live.filter((job) => world.everFired.has(job.id));
		if (this.which === 'unfinished') return live.filter((job) => job.status === undefined);
		return live.filter((job) => job.status !== undefined);
	}
	check = (world: Readonly<World>) => this.candidates(world).length > 0;
	async run(world: World): Promise<void> {
		world.delete(pick(this.candidates(world), this.picks));
	}
	toString(): string {
		return `Delete(${this.which}, [${this.picks.join(',')}])`;
	}
}

/** The list's order from now on, or flipping at every poll. */
class Order implements Cmd {
	constructor(readonly order: ListOrder | 'alternate') {}
	check = () => true;
	async run(world: World): Promise<void> {
		world.alternate = this.order === 'alternate';
		if (this.order !== 'alternate') world.setOrder(this.order);
	}
	toString(): string {
		return `Order(${this.order})`;
	}
}

/** Pages capped below the 100 the trigger asks for (100: not capped). */
class PageCap implements Cmd {
	constructor(readonly size: number) {}
	check = () => true;
	async run(world: World): Promise<void> {
		world.pageCap = this.size;
		world.emulator.setMaxPageSize(this.size);
	}
	toString(): string {
		return `PageCap(${this.size})`;
	}
}

/** List quirks from now on (replacing the last set). */
class Quirks implements Cmd {
	constructor(readonly quirks: ListQuirks) {}
	check = () => true;
	async run(world: World): Promise<void> {
		const count = (q: ListQuirks) => `${q.countCap ?? ''}:${q.countOffset ?? ''}`;
		if (count(world.quirks) !== count(this.quirks)) world.countChanged = true;
		world.quirks = this.quirks;
		world.emulator.setListQuirks(this.quirks);
	}
	toString(): string {
		return `Quirks(${JSON.stringify(this.quirks)})`;
	}
}

/** Transient faults on the list (after `skip` good answers) or on a read by id. */
class Faults implements Cmd {
	constructor(
		readonly target: 'list' | 'read',
		readonly skip: number,
		readonly faults: FaultSpec[],
	) {}
	check = (world: Readonly<World>) => this.target === 'list' || !!world.facts.kind;
	async run(world: World): Promise<void> {
		const path = this.target === 'list' ? world.facts.listPath : world.facts.readPattern;
		const passes: FaultSpec[] = Array.from({ length: this.skip }, () => ({}));
		world.emulator.injectFaults({ method: 'GET', path }, [...passes, ...this.faults]);
	}
	toString(): string {
		return `Faults(${this.target}, skip ${this.skip}, ${JSON.stringify(this.faults)})`;
	}
}

/**
 * A held job that finishes now and whose read by id fails forever from now on (it cannot fire; the
 * others must).
 */
class Stuck implements Cmd {
	constructor(readonly pickIndex: number) {}
	check = (world: Readonly<World>) => world.held().some((job) => !job.stuck);
	async run(world: World): Promise<void> {
		const [job] = pick(
			world.held().filter((j) => !j.stuck),
			[this.pickIndex],
		);
		job.stuck = true;
		world.stuck.push(job.id);
		world.injectStuck(job.id);
		world.release([job]);
	}
	toString(): string {
		return `Stuck(${this.pickIndex})`;
	}
}

class Poll implements Cmd {
	check = () => true;
	async run(world: World): Promise<void> {
		await world.poll();
	}
	toString(): string {
		return 'Poll';
	}
}

class Restart implements Cmd {
	check = () => true;
	async run(world: World): Promise<void> {
		await world.restart();
	}
	toString(): string {
		return 'Restart';
	}
}

class EditFilter implements Cmd {
	check = () => true;
	async run(world: World): Promise<void> {
		await world.editFilter();
	}
	toString(): string {
		return 'EditFilter';
	}
}

/** Distinct items of `items` by indices taken modulo their number (in the order given). */
function pick<T>(items: T[], picks: number[]): T[] {
	const chosen = new Set<T>();
	for (const index of picks) if (items.length > 0) chosen.add(items[index % items.length]);
	return [...chosen];
}

/** The command arbitraries a profile allows. */
function commandArbitraries(profile: Profile): Array<fc.Arbitrary<Cmd>> {
	const picks = fc.array(fc.nat({ max: 10_000 }), { minLength: 1, maxLength: 40 });
	const outcome = fc.option(fc.constantFrom<FinalStatus>('FINISHED', 'PARTIAL_FINISHED', 'ERROR'), {
		nil: undefined,
	});
	const arbs: Array<fc.Arbitrary<Cmd>> = [
		fc
			.record({
				k: fc.integer({ min: 1, max: profile.maxCreate }),
				held: fc.boolean(),
				outcome: fc.nat({ max: 2 }),
				batch: profile.batchStamps ? fc.boolean() : fc.constant(false),
				late:
					profile.lateMs > 0
						? fc.oneof(fc.constant(0), fc.integer({ min: 1, max: profile.lateMs }))
						: fc.constant(0),
			})
			.map(({ k, held, outcome: o, batch, late }) => new Create(k, held, o, batch, late)),
		fc
			.record({ picks, all: fc.boolean(), outcome })
			.map(({ picks: p, all, outcome: o }) => new Finish(p, all, o)),
		fc.constant(new Poll()),
		fc.constant(new Poll()),
		fc.constant(new Poll()),
	];
	const deletable = [
		...(profile.deleteFired ? (['fired', 'final'] as const) : []),
		...(profile.deleteUnfinished ? (['unfinished'] as const) : []),
	];
	if (deletable.length > 0)
		arbs.push(
			fc
				.record({ which: fc.constantFrom(...deletable), picks })
				.map(({ which, picks: p }) => new Delete(which, p)),
		);
	if (profile.orders !== 'fixed')
		arbs.push(
			fc
				.constantFrom<Array<ListOrder | 'alternate'>>(
					'newest-first',
					'oldest-first',
					...(profile.orders === 'alternate' ? (['alternate'] as const) : []),
				)
				.map((order) => new Order(order)),
		);
	if (profile.minPageCap > 0)
		arbs.push(
			fc
				.oneof(fc.integer({ min: profile.minPageCap, max: 99 }), fc.constant(100))
				.map((size) => new PageCap(size)),
		);
	if (profile.quirks.length > 0)
		arbs.push(quirksArbitrary(profile.quirks).map((q) => new Quirks(q)));
	if (profile.maxFaultsInRow > 0) {
		const fault = fc.constantFrom<FaultSpec>(
			{ status: 429, retryAfter: '0' },
			{ status: 503, retryAfter: '0' },
			{ status: 500 },
			{ status: 502 },
			{ drop: true },
		);
		arbs.push(
			fc
				.record({
					target: fc.constantFrom<'list' | 'read'>('list', 'read'),
					skip: fc.nat({ max: 3 }),
					faults: fc.array(fault, { minLength: 1, maxLength: profile.maxFaultsInRow }),
				})
				.map(({ target, skip, faults }) => new Faults(target, skip, faults)),
		);
	}
	if (profile.stuckJob) arbs.push(fc.nat({ max: 1000 }).map((i) => new Stuck(i)));
	if (profile.restart) arbs.push(fc.constant(new Restart()));
	if (profile.filterEdit !== 'none') arbs.push(fc.constant(new EditFilter()));
	return arbs;
}

function quirksArbitrary(kinds: QuirkKind[]): fc.Arbitrary<ListQuirks> {
	const on = (kind: QuirkKind) => kinds.includes(kind);
	return fc
		.record({
			countCap: on('countCap')
				? fc.option(fc.integer({ min: 0, max: 300 }), { nil: undefined })
				: fc.constant(undefined),
			countOffset: on('countOff')
				? fc.option(fc.integer({ min: -2, max: 3 }), { nil: undefined })
				: fc.constant(undefined),
			pageSize: on('largePages')
				? fc.option(fc.integer({ min: 101, max: 1500 }), { nil: undefined })
				: fc.constant(undefined),
			ignoreDateFilter: on('ignoreDateFilter')
				? fc.option(fc.constant(true), { nil: undefined })
				: fc.constant(undefined),
			itemFields: on('itemsWithoutDates')
				? fc.option(fc.constant(['id', 'status']), { nil: undefined })
				: fc.constant(undefined),
		})
		.map(
			(q) => Object.fromEntries(Object.entries(q).filter(([, v]) => v !== undefined)) as ListQuirks,
		);
}

// ---------------------------------------------------------------------------------------------------
// The property

function setupArbitrary(profile: Profile): fc.Arbitrary<Setup> {
	return fc.record({
		scheduler: fc.constantFrom(...profile.schedulers),
		order: fc.constantFrom<ListOrder>('newest-first', 'oldest-first'),
		existing: fc.nat({ max: profile.maxExisting }),
		existingHeld: fc.nat({ max: 10 }),
		includeExisting: profile.includeExisting ? fc.boolean() : fc.constant(false),
	});
}

/** What the histories run so far did, in all (a check that they do something). */
export const stats = { histories: 0, commands: 0, jobs: 0, fired: 0, polls: 0 };

/**
 * The property of one event under a profile: a history (setup, commands) run against a fresh
 * emulator, then a quiet phase and the final check. Needs `installSimulatedTime()` first.
 * `replayPath`: the `replayPath` of a printed counterexample, to replay it with `{ seed, path }`.
 */
export function historyProperty(profile: Profile, event: EventName, replayPath?: string) {
	const constraints = { maxCommands: profile.maxCommands, ...(replayPath ? { replayPath } : {}) };
	return fc.asyncProperty(
		setupArbitrary(profile),
		fc.commands(commandArbitraries(profile), constraints),
		async (setup, commands) => {
			const world = await World.start(profile, event, setup);
			try {
				await fc.asyncModelRun(() => ({ model: world, real: world }), commands);
				await world.quiet();
				world.checkFinal();
			} finally {
				stats.histories++;
				stats.jobs += world.jobs.size;
				stats.fired += world.everFired.size;
				stats.polls += world.polls;
				stats.commands += [...commands].length;
				await world.close();
			}
		},
	);
}
