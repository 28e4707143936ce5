/**
 * Job states of v0 parsings and extracts (§v0-3) and unversioned extractions (§unversioned-3),
 * computed from the clock whenever a resource is read (no timers). The transitions are "not shown";
 * the emulator's rule: a job created at t0 with processing time P is queued for 0.2·P, running until
 * t0 + P, and final once t0 + P has passed AND its file's text extraction is done. A job that follows
 * another (an extract made from a document) mirrors it, then runs for its own P. Times are on the base
 * clock (never goes back), so a clock offset neither finishes nor stalls a job. A held job runs until
 * released (README: *Test controls*).
 */
import { lookup } from './http';
import type { FinalStatus, Job } from './store';
import type { PageContent } from './pdf';

export interface Outcome {
	status: FinalStatus;
	error: string | null;
}

export interface JobState {
	phase: 'queued' | 'running' | 'final';
	/** When the job entered its current phase (→ `updated_at`). */
	updatedAt: number;
	/** When it started running and is planned to end (for progress steps). */
	runningFrom: number;
	plannedEnd: number;
	finalAt?: number;
	outcome?: Outcome;
}

/** The error text of a job made ERROR by a seed or `release`'s outcome. */
export const SEEDED_FAILURE = 'Seeded failure';

/** Makes a held job final from `now` (base clock), with `outcome` instead of its own when given. */
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

/**
 * The job `id` of `map` read by id (§v0-4.7, §v0-4.9, §unversioned-4.3), else 404: the read that
 * uses up an `emulator_hold: n` releases the job at `now`.
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

/** The state of `job` at `now` (base clock). */
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
	// A job whose prerequisite failed fails at the same moment, with the same message.
	if (dep.outcome?.status === 'ERROR')
		return { ...dep, plannedEnd: dep.updatedAt, finalAt: dep.updatedAt };
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

/** `status`: `queuedLabel` (v0 `IN_QUEUE`, unversioned `CREATED`), `IN_PROGRESS`, then the final status. */
export function statusLabel(state: JobState, queuedLabel: string): string {
	if (state.phase === 'queued') return queuedLabel;
	if (state.phase === 'running') return 'IN_PROGRESS';
	return state.outcome?.status ?? 'ERROR';
}

function jobOutcome(job: Job): Outcome {
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
		// §v0-3 rule 2
		return { status: 'PARTIAL_FINISHED', error: '1 page(s) could not be processed' };
	return { status: 'FINISHED', error: null };
}

/** The pages a job processed: none unless final and not ERROR; PARTIAL_FINISHED lost its last page. */
export function processedPages(job: Job, outcome: Outcome | undefined): PageContent[] {
	const pages = job.source.pages ?? [];
	if (!outcome || outcome.status === 'ERROR') return [];
	return outcome.status === 'PARTIAL_FINISHED' ? pages.slice(0, -1) : pages;
}
