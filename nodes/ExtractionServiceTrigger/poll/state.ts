import type { IDataObject } from 'n8n-workflow';

/**
 * What the trigger keeps between polls, in n8n's workflow static data of the node
 * (`getWorkflowStaticData('node')`; n8n saves it with the workflow on activation and when a poll
 * emits items — a poll that emits nothing changes it in memory only, unless n8n's durable cursors
 * are on, as seen on n8n 2.41 with default settings).
 *
 * Rules that keep every job firing exactly once:
 * - a poll changes the static data only after every request of the poll succeeded, right before it
 *   returns (`saveState`): a poll that throws (401, 5xx after retries, a timeout, an unusable
 *   answer) leaves the previous state untouched, so the next good poll reads the same window again;
 * - the state records the configuration it was made for (`fingerprint`: event, filters, Include
 *   Existing Since, Base URL); another configuration starts afresh from "now" (no replay);
 * - every memory is bounded (`MAX_KNOWN`, `MAX_PENDING`), so the static data cannot grow without end.
 */

/** Bumped when the shape changes; a state of another version starts afresh. */
export const STATE_VERSION = 1;

/** Most ids remembered as handled (the scan's `known`); at about 40 bytes an id, some 400 KB at most. */
export const MAX_KNOWN = 10_000;

/** Most unfinished jobs followed at once (`pending`). */
export const MAX_PENDING = 1_000;

/** State of a `window` event (`window.ts`): the `/v0` lists, read by creation time. */
export interface WindowState {
	v: typeof STATE_VERSION;
	strategy: 'window';
	fingerprint: string;
	/**
	 * The cursor: the next poll reads items created at or after this moment (ISO 8601 UTC, sent as
	 * `created_at_after`). It trails "now" by `SKEW_MARGIN_MS`.
	 */
	after: string;
	/**
	 * Ids already handled (emitted, or present at activation) whose creation may still be at or after
	 * the cursor, each with an upper bound of its `created_at` in epoch ms; an id is forgotten once
	 * that bound is before the cursor (the window can no longer return it).
	 */
	seen: Record<string, number>;
	/** Jobs seen unfinished (ids, least recently checked first): each fires when it finishes. */
	pending: string[];
}

/** Order of the unversioned list, learnt from the `created_at` of its two ends (`scan.ts`). */
export type ListOrder = 'newest-first' | 'oldest-first' | 'unknown';

/** State of a `scan` event (`scan.ts`): the unversioned extraction list, read by id. */
export interface ScanState {
	v: typeof STATE_VERSION;
	strategy: 'scan';
	fingerprint: string;
	/** Which end of the list new extractions appear at. */
	order: ListOrder;
	/**
	 * The boundary, as a position counted from the list's oldest end: every extraction below it has
	 * been handled (the next poll reads from there towards the newest end).
	 */
	count: number;
	/** Final extractions already handled (fired, not matching, or there at activation), oldest first. */
	known: string[];
	/** Extractions seen unfinished (ids, least recently checked first): each fires when it finishes. */
	pending: string[];
	/**
	 * Where the oldest followed extraction was last listed, as a position from the list's oldest end
	 * (like `count`): a poll that follows more than it reads by id reads their pages from there.
	 * Absent when nothing is followed, or where they sit is not known (a state from before it existed).
	 */
	pendingFrom?: number;
}

export type TriggerState = WindowState | ScanState;

/** The keys the trigger writes into its static data. */
const KEYS = ['v', 'strategy', 'fingerprint', 'after', 'seen', 'pending', 'order', 'count', 'known', 'pendingFrom'] as const;

const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/**
 * Reads the state from the node's static data when it is one this version wrote for the same
 * configuration; anything else (nothing yet, another event or filters, another version, damaged
 * data) reads as undefined: the poll then starts afresh.
 *
 * @returns a plain copy, safe to change before `saveState`
 */
export function loadState(data: IDataObject, fingerprint: string): TriggerState | undefined {
	if (data.v !== STATE_VERSION || data.fingerprint !== fingerprint) return undefined;
	const pending = isStringArray(data.pending) ? [...data.pending] : undefined;
	if (!pending) return undefined;
	if (data.strategy === 'window') {
		const seen = data.seen;
		const after = typeof data.after === 'string' ? Date.parse(data.after) : NaN;
		if (Number.isNaN(after) || !seen || typeof seen !== 'object' || Array.isArray(seen)) return undefined;
		const copy: Record<string, number> = {};
		for (const [id, ms] of Object.entries(seen as IDataObject)) if (typeof ms === 'number' && Number.isFinite(ms)) copy[id] = ms;
		return { v: STATE_VERSION, strategy: 'window', fingerprint, after: String(data.after), seen: copy, pending };
	}
	if (data.strategy === 'scan') {
		const order = data.order === 'newest-first' || data.order === 'oldest-first' ? data.order : 'unknown';
		if (!isStringArray(data.known) || typeof data.count !== 'number') return undefined;
		const pendingFrom = Number.isInteger(data.pendingFrom) && (data.pendingFrom as number) >= 0 ? (data.pendingFrom as number) : undefined;
		return { v: STATE_VERSION, strategy: 'scan', fingerprint, order, count: data.count, known: [...data.known], pending, ...(pendingFrom === undefined ? {} : { pendingFrom }) };
	}
	return undefined;
}

/**
 * Writes the state into the node's static data, key by key and only where it changed (n8n saves
 * the workflow when its static data changed), and removes the keys of another strategy.
 */
export function saveState(data: IDataObject, state: TriggerState): void {
	const values = state as unknown as IDataObject;
	for (const key of KEYS) {
		const next = values[key];
		if (next === undefined) {
			if (key in data) delete data[key];
		} else if (JSON.stringify(data[key]) !== JSON.stringify(next)) {
			data[key] = next as IDataObject[keyof IDataObject];
		}
	}
}

/**
 * An ordered set of ids with a size limit: adding beyond it forgets the oldest. Used for the ids a
 * scan knows and the jobs it follows.
 */
export class BoundedIds {
	private readonly ids: Set<string>;

	/** @param initial ids, oldest first */
	constructor(
		initial: string[],
		private readonly limit: number,
	) {
		this.ids = new Set(initial);
	}

	/** Whether the id is in the set. */
	has(id: string): boolean {
		return this.ids.has(id);
	}

	/** Adds an id as the newest (a known id moves to the end). */
	add(id: string): void {
		this.ids.delete(id);
		this.ids.add(id);
	}

	/** Removes an id, if present. */
	delete(id: string): void {
		this.ids.delete(id);
	}

	/** The ids, oldest first. */
	values(): string[] {
		return [...this.ids];
	}

	/** The ids, oldest first, at most `limit` of them (the newest). */
	toArray(): string[] {
		const all = [...this.ids];
		return all.length > this.limit ? all.slice(all.length - this.limit) : all;
	}
}
