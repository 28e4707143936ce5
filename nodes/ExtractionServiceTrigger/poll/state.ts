import type { IDataObject } from 'n8n-workflow';

import type { Unreadable } from './lists';
import { markOf, packMarks, unpackMarks } from './marks';

/**
 * What the trigger keeps between polls, in n8n's workflow static data of the node
 * (`getWorkflowStaticData('node')`; n8n saves it with the workflow on activation and when a poll
 * emits items, and with durable cursors together with the poll's execution).
 *
 * Rules that keep every job firing exactly once:
 * - a poll changes the static data only after every request of the poll succeeded, right before it
 *   returns (`saveState`): a poll that throws (401, 5xx after retries, a timeout, an unusable
 *   answer) leaves the previous state untouched, so the next good poll reads the same items again;
 *   the one exception is a job's own read by id (`EventList.jobs`): one that fails leaves that job
 *   unhandled with a count of failures (`fails`) while the others fire and the poll commits,
 *   and after `MAX_READ_FAILURES` polls in a row it is dropped and reported once (`UnreadReport`);
 * - the state records the configuration it was made for (`fingerprint`: event, filters, Include
 *   Existing Since, Base URL); another configuration starts afresh from "now" (no replay);
 * - the state holds no history of fired ids: only those of the last minutes (at most about 1,000)
 *   and of unfinished jobs, as compact marks (`marks.ts`, about 9 bytes each): a few KB.
 */

/** Bumped when the shape changes; a state of another version starts afresh. */
export const STATE_VERSION = 2;

/**
 * Jobs to report (`pollTrigger`): dropped because their read by id failed `MAX_READ_FAILURES`
 * polls in a row, kept until a poll with nothing to output reports them once (issue 31 item 6).
 */
export interface UnreadReport {
	/** At most `MAX_UNREAD_KEPT` jobs, each with its last failure. */
	unread?: Unreadable[];
	/** How many more were dropped beyond those (named by count only). */
	unreadMore?: number;
}

/** Most jobs to report a state names (`UnreadReport`): it stays small whatever fails. */
export const MAX_UNREAD_KEPT = 20;

/** Version of a `window` state (version 2 states are taken over, see `loadState`). */
export const WINDOW_STATE_VERSION = 3;

/**
 * State of a `window` event (`window.ts`): the `/v0` lists, read by creation time
 * (`docs/service-api.md` §trigger).
 */
export interface WindowState extends UnreadReport {
	v: typeof WINDOW_STATE_VERSION;
	strategy: 'window';
	fingerprint: string;
	/** The window's start, in the service's own time (ISO 8601): each poll reads the items created at or after it. */
	from: string;
	/** Marks (`marks.ts`; key: `created_at` in epoch ms) of the items handled in the window. */
	seen: string;
	/** Ids of the jobs behind the window still unfinished: read by id at every poll. */
	follow: string[];
	/** Polls in a row a job's read by id failed, by id (`MAX_READ_FAILURES`). */
	fails?: Record<string, number>;
	/** Marks of the unfinished jobs a version 2 state followed, taken over by the next poll. */
	legacy?: string;
	/** How many items the list held created before `from`, as the last poll left it (absent: not known). */
	older?: number;
}

/** Version of a `scan` state (version 2 states are taken over, see `loadScan`). */
export const SCAN_STATE_VERSION = 3;

/**
 * State of a `scan` event (`scan.ts`): the unversioned extraction list, which has no dates
 * (`docs/service-api.md` §trigger). Marks are keyed by when the trigger first met the extraction
 * (epoch ms, n8n's clock).
 */
export interface ScanState extends UnreadReport {
	v: typeof SCAN_STATE_VERSION;
	strategy: 'scan';
	fingerprint: string;
	/**
	 * The newest `created_at` the trigger read (epoch ms; at activation n8n's clock): an extraction
	 * that cannot be told new by where it is listed fires only if created at most 10 minutes before it.
	 */
	edge: number;
	/** Marks of the extractions handled lately (the last 10 minutes, at most `MAX_SEEN`). */
	head: string;
	/** Marks of the extractions of the head still unfinished. */
	pending: string;
	/** Marks of the extractions just behind the head at each end of the list: where a poll stops reading. */
	old: string;
	/** Ids of unfinished extractions behind the head: read by id at every poll. */
	follow: string[];
	/** Polls in a row a job's read by id failed, by id (`MAX_READ_FAILURES`). */
	fails?: Record<string, number>;
}

export type TriggerState = WindowState | ScanState;

const isStringArray = (v: unknown): v is string[] =>
	Array.isArray(v) && v.every((x) => typeof x === 'string');
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/**
 * Reads the state from the node's static data when it is one this version wrote for the same
 * configuration; anything else (nothing yet, another event or filters, another version, damaged
 * data) reads as undefined: the poll then starts afresh.
 *
 * @returns a plain copy, safe to change before `saveState`
 */
export function loadState(data: IDataObject, fingerprint: string): TriggerState | undefined {
	const state = loadPlace(data, fingerprint);
	if (!state) return undefined;
	const unread = Array.isArray(data.unread)
		? (data.unread as unknown[]).filter(
				(entry): entry is Unreadable =>
					typeof entry === 'object' &&
					entry !== null &&
					typeof (entry as IDataObject).id === 'string' &&
					typeof (entry as IDataObject).error === 'string',
			)
		: [];
	return {
		...state,
		...(unread.length > 0
			? { unread: unread.slice(0, MAX_UNREAD_KEPT).map(({ id, error }) => ({ id, error })) }
			: {}),
		...(isCount(data.unreadMore) && data.unreadMore > 0 ? { unreadMore: data.unreadMore } : {}),
	};
}

/** `loadState` without the jobs to report. */
function loadPlace(data: IDataObject, fingerprint: string): TriggerState | undefined {
	if (data.strategy === 'window' && sameButFilters(data.fingerprint, fingerprint))
		return loadWindow(data, fingerprint);
	if (data.strategy === 'scan' && sameButFilters(data.fingerprint, fingerprint)) {
		return loadScan(data, fingerprint);
	}
	return undefined;
}

/**
 * A `scan` state: one of this version, or one of version 2 (the ids of the newest handled
 * extractions in `edge`, `created_at` of the newest in `t`), taken over: its edge is where the
 * next poll stops reading, and only extractions created after `t` fire; its unfinished ones
 * (marked by place) are found again as the first poll reads the list from its far end.
 */
function loadScan(data: IDataObject, fingerprint: string): ScanState | undefined {
	const base = { v: SCAN_STATE_VERSION, strategy: 'scan', fingerprint } as const;
	if (data.v === STATE_VERSION) {
		if (!isStringArray(data.edge)) return undefined;
		const t = typeof data.t === 'number' && Number.isFinite(data.t) ? data.t : Date.now();
		return {
			...base,
			// Only extractions created after the newest the old state handled fire (`scan.ts` allows 10 minutes).
			edge: t + 10 * 60_000 + 1,
			head: '',
			pending: '',
			old: packMarks(data.edge.map((id) => markOf(id, 0))),
			follow: [],
		};
	}
	if (
		data.v !== SCAN_STATE_VERSION ||
		typeof data.edge !== 'number' ||
		![data.head, data.pending, data.old].every((text) => unpackMarks(text)) ||
		!isStringArray(data.follow)
	)
		return undefined;
	return {
		...base,
		edge: data.edge,
		head: data.head as string,
		pending: data.pending as string,
		old: data.old as string,
		follow: [...data.follow],
		...readFails(data.fails),
	};
}

/** The `fails` of a saved state (counts by id), or nothing. */
function readFails(value: unknown): { fails?: Record<string, number> } {
	const fails: Record<string, number> = {};
	if (value && typeof value === 'object' && !Array.isArray(value))
		for (const [id, n] of Object.entries(value as IDataObject)) if (isCount(n)) fails[id] = n;
	return Object.keys(fails).length > 0 ? { fails } : {};
}

/**
 * Writes the state into the node's static data, key by key and only where it changed (n8n saves
 * the workflow when its static data changed), and removes every other key (of another strategy
 * or an earlier version) but `keep` (the running poll's mark).
 */
export function saveState(data: IDataObject, state: TriggerState, keep: string[] = []): void {
	const values = state as unknown as IDataObject;
	for (const key of Object.keys(data))
		if (values[key] === undefined && !keep.includes(key)) delete data[key];
	for (const [key, next] of Object.entries(values))
		if (next !== undefined && JSON.stringify(data[key]) !== JSON.stringify(next))
			data[key] = next as IDataObject[keyof IDataObject];
}

/**
 * A `window` state: one of this version, or one of version 2 (cursor `from`, the items handled at
 * it in `tail`, the unfinished jobs in `pending`), taken over: the window starts at its cursor, the
 * handled items are its `seen`, and its unfinished jobs are looked for by the next poll (`legacy`).
 */
function loadWindow(data: IDataObject, fingerprint: string): WindowState | undefined {
	if (typeof data.from !== 'string' || Number.isNaN(Date.parse(data.from))) return undefined;
	const base = {
		v: WINDOW_STATE_VERSION,
		strategy: 'window',
		fingerprint,
		from: data.from,
	} as const;
	if (data.v === STATE_VERSION) {
		if (!unpackMarks(data.tail) || !unpackMarks(data.pending)) return undefined;
		return {
			...base,
			seen: data.tail as string,
			follow: [],
			...(data.pending ? { legacy: data.pending as string } : {}),
		};
	}
	if (data.v !== WINDOW_STATE_VERSION || !unpackMarks(data.seen) || !isStringArray(data.follow))
		return undefined;
	return {
		...base,
		seen: data.seen as string,
		follow: [...data.follow],
		...readFails(data.fails),
		...(typeof data.legacy === 'string' && unpackMarks(data.legacy) ? { legacy: data.legacy } : {}),
		// Counted with the filters of the state (a filter edit counts afresh).
		...(isCount(data.older) && data.fingerprint === fingerprint ? { older: data.older } : {}),
	};
}

/**
 * Whether a saved fingerprint is for the same event, Include Existing Since and Base URL, whatever
 * its filters: a `window` state holds ids and the service's dates, true of any filter, so a filter
 * edit goes on from it (issue 31 item 8) — jobs created since that the new filters match fire.
 */
function sameButFilters(saved: unknown, fingerprint: string): boolean {
	if (typeof saved !== 'string') return false;
	try {
		const strip = (text: string) => JSON.stringify({ ...JSON.parse(text), filters: null });
		return strip(saved) === strip(fingerprint);
	} catch {
		return false;
	}
}
