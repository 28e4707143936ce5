import type { IDataObject } from 'n8n-workflow';

import type { Unreadable } from './lists';
import { unpackMarks } from './marks';

/**
 * What the trigger keeps between polls, in n8n's workflow static data of the node
 * (`getWorkflowStaticData('node')`, saved with the workflow, or with the poll's execution under
 * durable cursors): changed only by a poll that succeeded, right before it returns (`saveState`;
 * `docs/service-api.md` §trigger points 1, 5, 13); a few KB of marks (`marks.ts`), no history.
 */

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

/** Version of the state: bumped when its shape changes; a state of another version starts afresh. */
export const STATE_VERSION = 3;

/**
 * State of a `window` event (`window.ts`): the `/v0` lists, read by creation time
 * (`docs/service-api.md` §trigger).
 */
export interface WindowState extends UnreadReport {
	v: typeof STATE_VERSION;
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
	/** How many items the list held created before `from`, as the last poll left it (absent: not known). */
	older?: number;
}

/**
 * State of a `scan` event (`scan.ts`): the unversioned extraction list, which has no dates
 * (`docs/service-api.md` §trigger). Marks are keyed by when the trigger first met the extraction
 * (epoch ms, n8n's clock).
 */
export interface ScanState extends UnreadReport {
	v: typeof STATE_VERSION;
	strategy: 'scan';
	fingerprint: string;
	/**
	 * The newest `created_at` the trigger read (epoch ms; at activation n8n's clock): an extraction
	 * that cannot be told new by where it is listed fires only if created at most 10 minutes before it.
	 */
	edge: number;
	/** Marks of the extractions handled lately (the last 10 minutes, at most `MAX_HEAD` an end). */
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
	if (data.v !== STATE_VERSION || !sameButFilters(data.fingerprint, fingerprint)) return undefined;
	const state =
		data.strategy === 'window'
			? loadWindow(data, fingerprint)
			: data.strategy === 'scan'
				? loadScan(data, fingerprint)
				: undefined;
	if (!state) return undefined;
	const unread = (Array.isArray(data.unread) ? (data.unread as IDataObject[]) : [])
		.filter((entry) => typeof entry?.id === 'string' && typeof entry.error === 'string')
		.slice(0, MAX_UNREAD_KEPT)
		.map((entry) => ({ id: entry.id as string, error: entry.error as string }));
	return {
		...state,
		...(unread.length > 0 ? { unread } : {}),
		...(isCount(data.unreadMore) && data.unreadMore > 0 ? { unreadMore: data.unreadMore } : {}),
	};
}

/** A `scan` state, or undefined. */
function loadScan(data: IDataObject, fingerprint: string): ScanState | undefined {
	if (
		typeof data.edge !== 'number' ||
		![data.head, data.pending, data.old].every((text) => unpackMarks(text)) ||
		!isStringArray(data.follow)
	)
		return undefined;
	return {
		v: STATE_VERSION,
		strategy: 'scan',
		fingerprint,
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

/** A `window` state, or undefined. */
function loadWindow(data: IDataObject, fingerprint: string): WindowState | undefined {
	if (
		typeof data.from !== 'string' ||
		Number.isNaN(Date.parse(data.from)) ||
		!unpackMarks(data.seen) ||
		!isStringArray(data.follow)
	)
		return undefined;
	return {
		v: STATE_VERSION,
		strategy: 'window',
		fingerprint,
		from: data.from,
		seen: data.seen as string,
		follow: [...data.follow],
		...readFails(data.fails),
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
