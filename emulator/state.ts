/**
 * Time-based job states, shared by v0 parsings and extracts (§v0-3) and unversioned
 * extractions (§unversioned-3). No timers: the state is computed from the clock whenever a
 * resource is read.
 *
 * Transitions are "not shown" in both references; the emulator's rule: a job created at t0 with a
 * processing time P is queued (`IN_QUEUE` / `CREATED`) during [t0, t0 + 0.2·P), running
 * (`IN_PROGRESS`) until t0 + P, and final once t0 + P has passed AND the text extraction of its file
 * has completed. A job that depends on another one (the extract created from a document) mirrors the
 * state of that job while it runs, then runs for its own P and has no queued phase of its own.
 *
 * All times here are on the base clock (`AppContext.clock`, which never goes back), so a job's phase
 * only moves forward and a clock offset of the service (`Emulator.setClockOffset`) neither finishes
 * nor stalls it; a job's `shift` turns them into the service's times when they are shown.
 * A held job (`Emulator.seedJobs` with `hold`, or `emulator_hold` in a create request's metadata) is
 * `IN_PROGRESS` until released, final from its release on (once its file is analysed).
 */
import { lookup } from './http';
import type { FinalStatus, Job } from './store';
import type { PageContent } from './pdf';

export type Phase = 'queued' | 'running' | 'final';

export interface Outcome {
	status: FinalStatus;
	error: string | null;
}

export interface JobState {
	phase: Phase;
	/** When the job entered its current phase (→ `updated_at`). */
	updatedAt: number;
	/** When the job started running, and when it is planned to end (for progress steps). */
	runningFrom: number;
	plannedEnd: number;
	/** Set when final. */
	finalAt?: number;
	outcome?: Outcome;
}

/**
 * Makes a held job final from `now` (base clock, epoch ms), with `outcome` instead of its own when
 * given. A job that is not held is left as it is.
 */
export function release(job: Job, now: number, outcome?: FinalStatus): void {
	if (!job.held) return;
	job.held = false;
	job.releasedAt = now;
	if (outcome)
		job.controls = {
			...job.controls,
			outcome,
			message: outcome === 'ERROR' ? SEEDED_FAILURE : undefined,
		};
}

/** The error text of a seeded or released job that ends ERROR by `release`'s outcome. */
export const SEEDED_FAILURE = 'Seeded failure';

/**
 * The job `id` of `map` read by id (`GET /v0/parsing/{id}` §v0-4.7, `/v0/extract/{id}` §v0-4.9,
 * `/extract/{id}/` §unversioned-4.3), else 404 naming `resource`: the read that uses up an
 * `emulator_hold: n` releases the job, at the read's time `now`.
 */
export function readJob<T extends { job: Job }>(
	map: Map<string, T>,
	id: string,
	resource: string,
	now: number,
): T {
	const record = lookup(map, id, resource);
	const { job } = record;
	if (job.readsLeft !== undefined && --job.readsLeft <= 0) release(job, now);
	return record;
}

/** Share of the processing time spent queued. */
const QUEUED_SHARE = 0.2;

/** The state of `job` at `now` (base clock, epoch ms; all times of the state are on the base clock). */
export function jobState(job: Job, now: number): JobState {
	if (job.held)
		return {
			phase: 'running',
			updatedAt: job.createdAt,
			runningFrom: job.createdAt,
			plannedEnd: Number.POSITIVE_INFINITY,
		};
	if (!job.after)
		return timeline(job, job.createdAt, job.createdAt + QUEUED_SHARE * job.durationMs, now);
	const dep = jobState(job.after, now);
	if (dep.phase !== 'final')
		return {
			...dep,
			plannedEnd: dep.plannedEnd + job.durationMs,
			finalAt: undefined,
			outcome: undefined,
		};
	if (dep.outcome?.status === 'ERROR') {
		// A job whose prerequisite failed fails at the same moment, with the same message.
		return {
			phase: 'final',
			updatedAt: dep.updatedAt,
			runningFrom: dep.runningFrom,
			plannedEnd: dep.updatedAt,
			finalAt: dep.updatedAt,
			outcome: dep.outcome,
		};
	}
	return timeline(job, dep.finalAt as number, dep.runningFrom, now);
}

function timeline(job: Job, start: number, runningFrom: number, now: number): JobState {
	// A released job ends at its release (after its prerequisite), not after its processing time.
	const plannedEnd =
		job.releasedAt === undefined ? start + job.durationMs : Math.max(start, job.releasedAt);
	if (now < runningFrom && job.releasedAt === undefined)
		return { phase: 'queued', updatedAt: job.createdAt, runningFrom, plannedEnd };
	const analyzedAt = job.source.analyzedAt;
	const finalAt = analyzedAt === undefined ? undefined : Math.max(plannedEnd, analyzedAt);
	if (finalAt === undefined || now < finalAt)
		return { phase: 'running', updatedAt: runningFrom, runningFrom, plannedEnd };
	return {
		phase: 'final',
		updatedAt: finalAt,
		runningFrom,
		plannedEnd,
		finalAt,
		outcome: jobOutcome(job),
	};
}

/**
 * The `status` value of a job: `queuedLabel` (v0 `IN_QUEUE`, unversioned `CREATED`), `IN_PROGRESS`,
 * then the final status (§v0-3, §unversioned-3).
 */
export function statusLabel(state: JobState, queuedLabel: string): string {
	if (state.phase === 'queued') return queuedLabel;
	if (state.phase === 'running') return 'IN_PROGRESS';
	return state.outcome?.status ?? 'ERROR';
}

/** Message of a parsing that ends `PARTIAL_FINISHED` (§v0-3 rule 2). */
export const PARTIAL_ERROR = '1 page(s) could not be processed';

/** The final status of a job (meaningful once final). */
export function jobOutcome(job: Job): Outcome {
	const { controls, source } = job;
	if (controls.outcome === 'ERROR')
		return {
			status: 'ERROR',
			error:
				controls.message ??
				`Emulated processing failure: ${controls.reason ?? 'emulator_outcome is ERROR'}`,
		};
	if (source.kind === 'other') return { status: 'ERROR', error: 'Unsupported file type' };
	if (source.analysisError)
		return { status: 'ERROR', error: `The document could not be read: ${source.analysisError}` };
	if (controls.outcome === 'PARTIAL_FINISHED' && job.allowPartial)
		return { status: 'PARTIAL_FINISHED', error: PARTIAL_ERROR };
	return { status: 'FINISHED', error: null };
}

/**
 * The pages a final job processed successfully: all of them, except the last page of a parsing that
 * ended `PARTIAL_FINISHED` (the emulated failed page).
 */
export function processedPages(job: Job, outcome: Outcome): PageContent[] {
	const pages = job.source.pages ?? [];
	if (outcome.status === 'ERROR') return [];
	if (outcome.status === 'PARTIAL_FINISHED') return pages.slice(0, -1);
	return pages;
}
