import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { fires, isFinal } from './events';
import {
	EventList,
	MAX_FIRING_PER_POLL,
	MAX_POLL_PAGES,
	MAX_TIE_PAGES,
	PAGE_SIZE,
	byCreation,
	idOf,
	readFailed,
	isoTime,
	outOfTime,
	searchBound,
	timestampMs,
	type PollEnv,
	type Unreadable,
} from './lists';
import { MarkSet, markOf, packMarks, unpackMarks, type Mark } from './marks';
import { Sketch, keyOf } from './sketch';
import { STATE_VERSION, type WindowState } from './state';

/** Most items handled at the cursor that a `window` state remembers (the items each poll reads again). */
export const TAIL_SIZE = 50;

/** Followed jobs created further apart than this (ms) are looked for in separate time ranges. */
export const CLUSTER_GAP_MS = 60_000;

/**
 * How far behind its cursor (ms, in the service's time) a poll still finds and fires items that
 * appear late (a service clock that went back, an item listed after its `created_at`); items that
 * appear further behind are reported as an error.
 */
export const MARGIN_MS = 10 * 60_000;

/** The margin is summarised a minute at a time (`sketch.ts`). */
const BUCKET_MS = 60_000;

/** What a poll found and the state to keep if it is output. */
export interface PollOutcome<S> {
	/** Resources that fire, oldest first (by `created_at`). */
	resources: IDataObject[];
	state: S;
	/**
	 * When set, the poll fails with this error after `state` is saved: something the trigger cannot
	 * recover was seen (the state records that it was reported, so the next poll goes on).
	 */
	error?: NodeOperationError;
	/**
	 * Jobs this poll stopped following because their read by id failed `MAX_READ_FAILURES` polls in
	 * a row (`readFailed`): `pollTrigger` reports them once.
	 */
	unreadable?: Unreadable[];
}

/** A listed item with its id and `created_at` in epoch ms (undefined when the item has none). */
interface Listed {
	id: string;
	item: IDataObject;
	ms?: number;
	/** Polls in a row its read by id failed, when followed (`Mark.fails`). */
	fails?: number;
}

/** The outcome of reading the items of a time range (`readRange`). */
interface RangeRead {
	/** Items inside the range, each id once. */
	items: Listed[];
	/** Whether every item of the range was read. */
	complete: boolean;
	/**
	 * For an incomplete read of a list that is sorted oldest first: the items read are every item of
	 * the range created before this moment (epoch ms).
	 */
	upTo?: number;
	/** Items per page as the service pages. */
	pageSize: number;
}

/**
 * A poll of a `/v0` event — Document Uploaded (`GET /v0/documents`, `§v0-4.2`), Parsing Finished /
 * Failed (`GET /v0/parsing`, `§v0-4.6`) — by creation time, in the service's own time.
 *
 * How "new" is decided:
 * - The cursor (`from`) is a `created_at` the service sent. Each poll lists the items created at or
 *   after it (`created_at_after`, all statuses); those the state marks as handled there (`tail`, at
 *   most `TAIL_SIZE` and the items sharing a time) are skipped, the others are new. The cursor then
 *   moves up to the `TAIL_SIZE`-th newest handled item: a poll with nothing new reads one page,
 *   whatever the list held before; k new items cost about ⌈k/page⌉ pages (and, for parsings, k reads
 *   by id: the output is the parsing as read by id, `§v0-4.7`).
 * - Every item is checked against what was asked: one dated outside the range (a date filter the
 *   service ignores) never fires, and the pages are then read from the end where the range is (the
 *   order is read from the page's own `created_at`s).
 * - A parsing seen unfinished is followed (`pending`, a mark with its `created_at`): when the cursor
 *   has passed it, the poll lists the time range of the followed ones (close ones together,
 *   `CLUSTER_GAP_MS`) and fires each that has finished; one no longer listed was deleted.
 * - What does not fit a poll (`MAX_POLL_PAGES` pages, `MAX_FIRING_PER_POLL` jobs, half of n8n's poll
 *   budget) is left for the next poll: new items are handled oldest first and the cursor stops before
 *   the first not handled. A range larger than a poll's pages is cut in time first.
 * - A service clock that went back: the poll counts the items created at or before the cursor
 *   (`created_at_before`) and compares with the count it saved; more of them means items appeared
 *   behind the cursor. The poll then fails with an error that says how many and from when, and the
 *   next poll goes on (items the clock put inside the remembered tail are still new, and fire).
 * - Activation: the cursor starts one ms after the newest item's `created_at` (from the end of the
 *   list where the newest items are), and the unfinished parsings (`status=IN_QUEUE`, `IN_PROGRESS`) are
 *   followed, so they fire when they finish; with Include Existing Since, the cursor starts there.
 *
 * @param state the previous state, or undefined at activation (or after a configuration change)
 * @param since epoch ms of Include Existing Since, if set
 * @returns the resources that fire, the next state, and an error to report after saving it
 * @throws NodeApiError for any failed request (the caller then keeps the previous state)
 */
export async function pollWindow(
	env: PollEnv,
	state: WindowState | undefined,
	since: number | undefined,
	fingerprint: string,
): Promise<PollOutcome<WindowState>> {
	const list = new EventList(env);
	if (!state) {
		const start = await activate(env, list, since, fingerprint);
		// With Include Existing Since, the activation outputs what exists since then at once.
		if (since === undefined) return { resources: [], state: start };
		state = start;
	}
	const { spec } = env;
	const from = Date.parse(state.from);
	const tail = new MarkSet(unpackMarks(state.tail));
	const pending = new MarkSet(unpackMarks(state.pending));

	const margin = new Margin(state.marginFrom, state.sketches);

	// 1. Items that appeared behind the cursor since the last poll: found in the margin and handled
	// as new; the rest (further behind, or too many to tell) reported once.
	const olderNow = state.older === undefined ? undefined : await countUpTo(list, from);
	const appeared =
		state.older !== undefined && olderNow !== undefined && olderNow > state.older
			? olderNow - state.older
			: 0;
	const late =
		appeared > 0
			? await margin.findAppeared(env, list, from, appeared)
			: { items: [] as Listed[], missing: 0 };

	// 2. The items created at or after the cursor.
	const window = await readWindow(env, list, from);
	const handled: Mark[] = [];
	const firing: Listed[] = [];
	const resources: IDataObject[] = [];
	let openFrom = window.openFrom;
	const metTail = new Set<Mark>();
	/** `created_at`s (epoch ms) of the followed jobs the window met: the cursor may pass them (they are followed). */
	const following: number[] = [];
	/** Sorts out one new item; returns false when the poll has no room left for it. */
	const sortOut = (
		entry: Listed,
		ms: number,
		followed: Mark | undefined,
		force = false,
	): boolean => {
		const status = entry.item.status;
		if (!spec.kind) {
			resources.push(entry.item);
			handled.push(markOf(entry.id, ms));
		} else if (!isFinal(spec, status) && entry.ms !== undefined) {
			if (!followed) pending.add(markOf(entry.id, ms));
			following.push(ms);
		} else if (isFinal(spec, status) && !fires(spec, status) && entry.ms !== undefined) {
			if (followed) pending.delete(followed);
			handled.push(markOf(entry.id, ms));
		} else {
			if (firing.length >= MAX_FIRING_PER_POLL && !force) return false;
			if (followed) pending.delete(followed);
			// Read by id: its output, or its date and status.
			firing.push(followed?.fails ? { ...entry, fails: followed.fails } : entry);
		}
		if (!followed) margin.add(entry.id, ms);
		return true;
	};
	// Found behind the cursor: handled now whatever the room (the next poll would not find them again).
	for (const entry of late.items) sortOut(entry, entry.ms ?? from, undefined, true);
	for (const entry of window.items.sort((a, b) => (a.ms ?? from) - (b.ms ?? from))) {
		const ms = entry.ms ?? from;
		if (ms >= openFrom) continue;
		const known = tail.find(entry.id, (key) => key === ms);
		if (known) {
			metTail.add(known);
			handled.push(known);
			continue;
		}
		const followed = pending.find(entry.id, (key) => key === ms);
		if (followed && !isFinal(spec, entry.item.status)) {
			following.push(ms); // still running
			continue;
		}
		if (!sortOut(entry, ms, followed)) {
			openFrom = ms; // the rest waits for the next poll (items are in creation order)
			break;
		}
	}
	// Remembered items the read did not reach are still remembered.
	for (const mark of tail.values())
		if (!metTail.has(mark) && mark.key >= openFrom) handled.push(mark);

	// 3. Followed jobs the cursor has passed: their time ranges.
	const resolved = spec.kind
		? await checkFollowed(env, list, pending, from, MAX_FIRING_PER_POLL - firing.length)
		: [];

	// 4. Reads by id: the jobs that fire (their output) and the new ones whose date or status is needed.
	const read = await list.jobs([
		...firing.map((entry) => entry.id),
		...resolved.map((entry) => entry.id),
	]);
	// A job whose read failed waits for the next poll (followed), the others fire (issue 31 item 6).
	const unreadable: Unreadable[] = [];
	const failed = (entry: Listed): boolean => {
		const error = list.failed.get(entry.id);
		if (error === undefined) return false;
		// Dropped: handled where it is listed, so that the next poll does not meet it as new.
		if (readFailed(pending, unreadable, { ...entry, key: entry.ms ?? from, error }))
			handled.push(markOf(entry.id, entry.ms ?? from));
		return true;
	};
	for (const entry of firing) {
		if (failed(entry)) continue;
		const job = read.get(entry.id);
		if (!job) continue; // deleted meanwhile
		const ms = timestampMs(job.created_at) ?? entry.ms ?? from;
		if (!isFinal(spec, job.status)) {
			pending.add(markOf(entry.id, ms));
			continue;
		}
		if (fires(spec, job.status)) resources.push(job);
		handled.push(markOf(entry.id, ms));
	}
	for (const entry of resolved) {
		if (failed(entry)) continue;
		const job = read.get(entry.id);
		if (job && !isFinal(spec, job.status)) pending.add(markOf(entry.id, entry.ms ?? from));
		else if (job && fires(spec, job.status)) resources.push(job);
	}

	// 5. The next cursor: up to the `TAIL_SIZE`-th newest item handled (at most half a page, so that
	// the next poll reads it in one page), never past one not handled; after a read cut short, up to
	// the newest handled, so that the next poll gets further.
	const sorted = handled.sort((a, b) => a.key - b.key);
	const tailSize = Math.max(1, Math.min(TAIL_SIZE, Math.floor(window.pageSize / 2)));
	const keys = [...sorted.map((mark) => mark.key), ...following.filter((ms) => ms < openFrom)].sort(
		(a, b) => a - b,
	);
	const next = window.hold ? from : nextCursor(keys, from, openFrom, tailSize);
	const nextTail = sorted.filter((mark) => mark.key >= next);
	// The start of the poll checked that the service applies the filter: one request suffices here.
	const older =
		next === from && olderNow !== undefined
			? olderNow
			: await countUpTo(list, next, olderNow !== undefined);
	margin.moveTo(next);
	const nextState: WindowState = {
		v: STATE_VERSION,
		strategy: 'window',
		fingerprint,
		from: isoTime(next),
		tail: packMarks(dedupeMarks(nextTail)),
		pending: packMarks(pending.values()),
		...margin.toState(),
		...(older === undefined ? {} : { older }),
	};
	if (late.missing === 0) return { resources: byCreation(resources), state: nextState, unreadable };
	// Reported once: the next poll counts the reported ones as known, and finds the others again.
	return {
		resources: [],
		state: { ...state, older: (state.older as number) + late.missing },
		error: clockError(env, late.missing, state.from),
	};
}

/**
 * The next cursor (epoch ms) from the `created_at`s (epoch ms, sorted) of the items this poll
 * handled or followed at or after the cursor: up to the
 * `tailSize`-th newest (so that the next poll reads them again in one page and finds items listed
 * a little late), never past `openFrom` (items there were not handled); after a read cut short, up
 * to the newest handled, so that the next poll gets further. Items sharing one `created_at` are
 * kept together: when they would make the tail longer than `tailSize`, the cursor moves past them
 * (one ms after) if everything there was handled — anything listed there later appears behind the
 * cursor and is found in the margin.
 */
export function nextCursor(
	sorted: number[],
	from: number,
	openFrom: number,
	tailSize: number,
): number {
	const target =
		openFrom !== Infinity
			? (sorted.at(-1) ?? from)
			: sorted.length > tailSize
				? sorted[sorted.length - tailSize]
				: from;
	let next = Math.max(from, Math.min(target, openFrom));
	const atOrAfter = (key: number) => sorted.length - lowerBound(sorted, key);
	while (atOrAfter(next) > tailSize) {
		const later = sorted[lowerBound(sorted, next + 1)] ?? next + 1;
		if (later > openFrom) break;
		next = later;
	}
	return next;
}

/** Index of the first value ≥ `key` in values sorted ascending. */
function lowerBound(sorted: number[], key: number): number {
	let lo = 0;
	let hi = sorted.length;
	while (lo < hi) {
		const mid = (lo + hi) >> 1;
		if (sorted[mid] < key) lo = mid + 1;
		else hi = mid;
	}
	return lo;
}

/**
 * Summaries (`sketch.ts`) of the ids of every item the trigger has sorted out that was created in
 * the margin behind the cursor (`MARGIN_MS`), a minute of the service's time each: items that
 * appear there later are told apart from those already handled without the state holding their ids.
 * `from` (epoch ms): the summaries are complete from this moment on (at activation, as far as the
 * poll could read).
 */
class Margin {
	private readonly buckets = new Map<number, Sketch>();
	private from: number;

	constructor(from: number | undefined, sketches: Record<string, string> | undefined) {
		this.from = from ?? Infinity;
		for (const [minute, text] of Object.entries(sketches ?? {})) {
			const sketch = Sketch.unpack(text);
			if (sketch && Number.isInteger(Number(minute))) this.buckets.set(Number(minute), sketch);
		}
	}

	/** Adds an item sorted out (by its `created_at`, epoch ms). */
	add(id: string, ms: number): void {
		const minute = Math.floor(ms / BUCKET_MS);
		let sketch = this.buckets.get(minute);
		if (!sketch) this.buckets.set(minute, (sketch = new Sketch()));
		sketch.add(id);
	}

	/**
	 * Lists the margin behind `cursor` and tells which items were never sorted out: `appeared` more
	 * items than at the last poll are dated at or before the cursor.
	 *
	 * @returns the items found (to sort out as new) and how many of `appeared` were not found (dated
	 *   before the margin, or too many in one minute to tell)
	 */
	async findAppeared(
		env: PollEnv,
		list: EventList,
		cursor: number,
		appeared: number,
	): Promise<{ items: Listed[]; missing: number }> {
		const start = Math.max(this.from, cursor - MARGIN_MS);
		if (start > cursor) return { items: [], missing: appeared };
		const read = await readRange(env, list, start, cursor, MAX_POLL_PAGES);
		const listed = new Map<number, Sketch>();
		const byKey = new Map<string, Listed>();
		for (const entry of read.items) {
			// At the cursor itself: read as new by the window, not late.
			if (entry.ms === undefined || entry.ms < start || entry.ms >= cursor) continue;
			const minute = Math.floor(entry.ms / BUCKET_MS);
			let sketch = listed.get(minute);
			if (!sketch) listed.set(minute, (sketch = new Sketch()));
			sketch.add(entry.id);
			byKey.set(keyOf(entry.id), entry);
		}
		const found: Listed[] = [];
		let unreadable = false;
		for (const minute of new Set([...listed.keys(), ...this.buckets.keys()])) {
			if (minute * BUCKET_MS + BUCKET_MS <= start) continue;
			const difference = (listed.get(minute) ?? new Sketch()).difference(
				this.buckets.get(minute) ?? new Sketch(),
			);
			if (!difference) unreadable = true;
			for (const key of difference?.added ?? []) {
				const entry = byKey.get(key);
				if (entry) found.push(entry);
			}
		}
		const missing =
			unreadable || !read.complete
				? Math.max(1, appeared - found.length)
				: Math.max(0, appeared - found.length);
		return { items: found.sort((a, b) => (a.ms ?? 0) - (b.ms ?? 0)), missing };
	}

	/** The summaries are complete from `ms` on (activation read the margin whole). */
	extendTo(ms: number): void {
		this.from = Math.min(this.from, ms);
	}

	/** Forgets the minutes that fell out of the margin behind the new cursor. */
	moveTo(cursor: number): void {
		const first = Math.floor((cursor - MARGIN_MS) / BUCKET_MS);
		for (const minute of [...this.buckets.keys()]) if (minute < first) this.buckets.delete(minute);
		if (this.from !== Infinity) this.from = Math.max(this.from, first * BUCKET_MS);
	}

	/** The state's `marginFrom` and `sketches`. */
	toState(): { marginFrom?: number; sketches: Record<string, string> } {
		const sketches: Record<string, string> = {};
		for (const [minute, sketch] of this.buckets)
			if (!sketch.empty) sketches[String(minute)] = sketch.pack();
		return { ...(this.from === Infinity ? {} : { marginFrom: this.from }), sketches };
	}
}

/**
 * The items created at or after `from`, as far as one poll reads (`MAX_POLL_PAGES` pages, its time
 * share). When the range is larger, the read is cut: in a list sorted oldest first the pages read
 * are the oldest items; otherwise a bound `created_at_before` that fits is searched for (halving,
 * each step one page request) and that range read.
 *
 * @returns the items; `openFrom`: items created at or after it may be missing (not handled this
 *   poll); `hold`: the read could not be cut, so the cursor must not move
 */
async function readWindow(
	env: PollEnv,
	list: EventList,
	from: number,
): Promise<{ items: Listed[]; openFrom: number; hold: boolean; pageSize: number }> {
	const whole = await readRange(env, list, from, undefined, MAX_POLL_PAGES);
	const pageSize = whole.pageSize;
	if (whole.complete) return { items: whole.items, openFrom: Infinity, hold: false, pageSize };
	if (whole.upTo !== undefined)
		return { items: whole.items, openFrom: whole.upTo, hold: false, pageSize };
	const newest = Math.max(...whole.items.map((entry) => entry.ms ?? from));
	const fits = async (bound: number): Promise<'fits' | 'tooMany'> => {
		const beyond = await list.pageOrEmpty(
			{ created_at_after: isoTime(from), created_at_before: isoTime(bound) },
			MAX_POLL_PAGES + 1,
			PAGE_SIZE,
		);
		return beyond.results.length === 0 ? 'fits' : 'tooMany';
	};
	// From the newest end back, doubling the step (crowded times are usually recent), then halving.
	let good = from - 1; // [from, from - 1] is empty: it fits
	let bad = newest;
	if ((await fits(newest)) === 'fits') good = newest;
	for (let step = 1; bad - good > 1 && !outOfTime(env); step *= 2) {
		const probe = newest - step;
		if (probe <= good) break;
		if ((await fits(probe)) === 'fits') {
			good = probe;
			break;
		}
		bad = probe;
	}
	const bound = await searchBound(good, bad, fits);
	const cut = bound < from ? undefined : await readRange(env, list, from, bound, MAX_POLL_PAGES);
	if (cut && !cut.complete) {
		if (cut.upTo !== undefined)
			return { items: cut.items, openFrom: cut.upTo, hold: false, pageSize };
		return { items: cut.items, openFrom: Infinity, hold: true, pageSize };
	}
	// Items dated at the bound may continue past it at a finer precision than ms: left for the next
	// poll — unless the cut brought less than a page: then the next ms holds more items than a poll's
	// pages (one `created_at` for a batch), which cannot be cut by date and is read whole.
	if (cut && cut.items.length >= pageSize)
		return { items: cut.items, openFrom: bound, hold: false, pageSize };
	// The crowded time is just after the bound: at its ms (finer times) or the next.
	const at = Math.max(from, bound);
	const tie = await readRange(env, list, at, at + 2, MAX_TIE_PAGES, true);
	if (!tie.complete) throw tieError(env, at, tie.items.length);
	const items = new Map([...(cut?.items ?? []), ...tie.items].map((entry) => [entry.id, entry]));
	return { items: [...items.values()], openFrom: at + 2, hold: false, pageSize };
}

/** The error of a poll that met more items of one `created_at` than it can read (`MAX_TIE_PAGES`, its time share). */
function tieError(env: PollEnv, at: number, read: number): NodeOperationError {
	const what = env.spec.listName.toLowerCase();
	return new NodeOperationError(
		env.node,
		`More ${what} share one created_at (${isoTime(at)}) than a poll can read (${read} read)`,
		{
			description: `The service lists them with the same time, so the trigger cannot read them in parts by date. The next poll tries again from the same place; nothing after them is output until they are read.`,
		},
	);
}

/**
 * Reads the items created in [after, before] (`created_at_after`, `created_at_before`, both
 * inclusive), checking each: an item dated outside the range is not in it (a service that ignores
 * the filter), and when page 1 shows that, the pages are read from the end of the list where the
 * range lies, as the page's own dates show the order. At most `maxPages` pages, and none started
 * after the poll's time share. With `beforeExcluded`, the range ends just before `before` (one
 * microsecond earlier).
 */
async function readRange(
	env: PollEnv,
	list: EventList,
	after: number,
	before: number | undefined,
	maxPages: number,
	beforeExcluded = false,
): Promise<RangeRead> {
	const qs: IDataObject = {
		created_at_after: isoTime(after),
		...(before === undefined
			? {}
			: { created_at_before: beforeExcluded ? justBefore(before) : isoTime(before) }),
	};
	const inside = (ms: number | undefined) =>
		ms === undefined ||
		(ms >= after && (before === undefined || ms < before || (ms === before && !beforeExcluded)));
	const found = new Map<string, Listed>();
	/** Takes a page's items; returns its dated items in page order and how many ids were new. */
	const take = (results: IDataObject[]): { dated: number[]; fresh: number; outside: number } => {
		const dated: number[] = [];
		let fresh = 0;
		let outside = 0;
		for (const item of results) {
			const id = idOf(item);
			const ms = timestampMs(item.created_at);
			if (ms !== undefined) dated.push(ms);
			if (id === undefined) continue;
			if (!inside(ms)) {
				outside++;
				continue;
			}
			if (found.has(id)) continue;
			found.set(id, { id, item, ms });
			fresh++;
		}
		return { dated, fresh, outside };
	};
	const first = await list.page(qs, 1);
	const pageSize = first.next
		? Math.max(1, first.results.length)
		: Math.max(PAGE_SIZE, first.results.length);
	const firstTaken = take(first.results);
	const order = orderOf(firstTaken.dated);
	const done = (complete: boolean, upTo?: number): RangeRead => ({
		items: [...found.values()],
		complete,
		pageSize,
		...(upTo === undefined ? {} : { upTo }),
	});

	if (
		firstTaken.outside > 0 &&
		order === 'oldest-first' &&
		first.next &&
		first.count !== undefined
	) {
		// The filter is ignored and the range is at the end: from the last page by `count` (a hint)
		// on while `next` is set, then back while a page still starts inside the range.
		let n = Math.max(2, Math.ceil(first.count / pageSize));
		let pages = 1;
		let page = await list.pageOrEmpty(qs, n, PAGE_SIZE);
		take(page.results);
		for (let forward = n; page.next && pages < maxPages && !outOfTime(env); pages++) {
			page = await list.pageOrEmpty(qs, ++forward, PAGE_SIZE);
			take(page.results);
		}
		if (page.next) return done(false);
		for (n = n - 1; n >= 2 && pages < maxPages && !outOfTime(env); n--, pages++) {
			const back = await list.pageOrEmpty(qs, n, PAGE_SIZE);
			const { dated } = take(back.results);
			if (dated.length > 0 && !inside(dated[0])) return done(true);
		}
		return done(n < 2);
	}

	let page = first;
	let taken = firstTaken;
	let pages = 1;
	// Oldest first only when the dates read so far go up somewhere and never down (one date shared by
	// every item shows no order).
	let up = order === 'oldest-first';
	let down = order === 'newest-first';
	let lastMs = taken.dated.at(-1);
	for (let n = 2; ; n++) {
		// A service that ignores the filter, listing newest first: the range ends at the first item before it.
		if (
			taken.outside > 0 &&
			order === 'newest-first' &&
			taken.dated.length > 0 &&
			!inside(taken.dated.at(-1))
		)
			return done(true);
		if (!page.next || page.results.length === 0 || taken.fresh === 0) return done(true);
		if (pages >= maxPages || outOfTime(env)) {
			// In a list sorted oldest first, everything before the last date read has been read.
			return up && !down && lastMs !== undefined && lastMs > after
				? done(false, lastMs)
				: done(false);
		}
		page = await list.pageOrEmpty(qs, n, PAGE_SIZE);
		pages++;
		taken = take(page.results);
		if (taken.dated.length > 0) {
			const seen = orderOf(lastMs === undefined ? taken.dated : [lastMs, ...taken.dated]);
			if (seen === 'oldest-first') up = true;
			else if (seen === 'newest-first') down = true;
			else if (seen === undefined && new Set(taken.dated).size > 1) up = down = true;
			lastMs = taken.dated.at(-1);
		}
	}
}

/** The order of dates as listed: one way strictly somewhere and never the other, else undefined. */
function orderOf(dated: number[]): 'newest-first' | 'oldest-first' | undefined {
	let up = false;
	let down = false;
	for (let i = 1; i < dated.length; i++) {
		if (dated[i] > dated[i - 1]) up = true;
		if (dated[i] < dated[i - 1]) down = true;
	}
	if (up === down) return undefined;
	return up ? 'oldest-first' : 'newest-first';
}

/**
 * Looks for the followed jobs created before `from` (the cursor has passed them) in their time
 * ranges, oldest first, as far as the poll's pages last: one finished fires (it is returned, to be
 * read by id), one still unfinished stays followed, one a complete read of its range did not list
 * was deleted and is forgotten. Changes `pending` in place.
 *
 * @param room how many finished jobs may still be returned in this poll
 * @returns the followed jobs that finished, as listed
 */
async function checkFollowed(
	env: PollEnv,
	list: EventList,
	pending: MarkSet,
	from: number,
	room: number,
): Promise<Listed[]> {
	const { spec } = env;
	const behind = pending
		.values()
		.filter((mark) => mark.key < from)
		.sort((a, b) => a.key - b.key);
	const finished: Listed[] = [];
	let pagesLeft = MAX_TIE_PAGES;
	for (
		let start = 0;
		start < behind.length && pagesLeft > 0 && room > finished.length && !outOfTime(env);
	) {
		let end = start;
		while (end + 1 < behind.length && behind[end + 1].key - behind[end].key <= CLUSTER_GAP_MS)
			end++;
		const cluster = behind.slice(start, end + 1);
		start = end + 1;
		// One ms past the last: a `created_at` finer than ms at that ms is still inside.
		const read = await readRange(
			env,
			list,
			cluster[0].key,
			cluster[cluster.length - 1].key + 1,
			pagesLeft,
		);
		pagesLeft -= Math.max(1, Math.ceil(read.items.length / read.pageSize));
		const met = new Set<Mark>();
		for (const entry of read.items) {
			const mark =
				entry.ms === undefined ? undefined : pending.find(entry.id, (key) => key === entry.ms);
			if (!mark) continue;
			met.add(mark);
			if (!isFinal(spec, entry.item.status) || finished.length >= room) continue;
			pending.delete(mark);
			if (fires(spec, entry.item.status))
				finished.push(mark.fails ? { ...entry, fails: mark.fails } : entry);
		}
		if (read.complete) for (const mark of cluster) if (!met.has(mark)) pending.delete(mark);
	}
	return finished;
}

/**
 * How many items the list holds created before `at` (`created_at_before` one microsecond earlier,
 * the precision of the service's times, `§v0-1 rule 2`): the `count` of a one-item page. Items at
 * `at` itself are not counted: they are at or after the cursor, read as new.
 *
 * @param filterChecked whether this poll already saw the service apply `created_at_before` (a
 *   count at another time, checked at both ends): then one request
 * @returns undefined when the service sends no count or ignores the filter (the item it shows is
 *   dated after `at`)
 */
async function countUpTo(
	list: EventList,
	at: number,
	filterChecked = false,
): Promise<number | undefined> {
	const qs = { created_at_before: justBefore(at) };
	const page = await list.page(qs, 1, 1);
	const after = (items: IDataObject[]) =>
		items.some((item) => (timestampMs(item.created_at) ?? -Infinity) >= at);
	if (page.count === undefined || after(page.results)) return undefined;
	// The other end of the list too (unless this poll already saw the service apply the filter): a
	// service that ignores the filter shows newer items at one end.
	if (
		!filterChecked &&
		page.count > 1 &&
		after((await list.pageOrEmpty(qs, page.count, 1)).results)
	)
		return undefined;
	return page.count;
}

/** The ISO 8601 time one microsecond before `ms` (epoch ms), with six fractional digits. */
export function justBefore(ms: number): string {
	return new Date(ms - 1).toISOString().replace(/Z$/, '999Z');
}

/** The error of a poll that saw items appear behind its cursor (see `pollWindow`). */
function clockError(env: PollEnv, appeared: number, from: string): NodeOperationError {
	const what = (appeared === 1 ? env.spec.resourceName : env.spec.listName).toLowerCase();
	return new NodeOperationError(
		env.node,
		`${appeared} ${what} appeared dated before the trigger's cursor (${from})`,
		{
			description: `The service listed ${appeared === 1 ? 'an item' : 'items'} created at or before ${from} after the trigger had read past that time: its clock went back, or it lists items late. They were not output. Find them with ${env.spec.resourceName} → Get Many, Created Before ${from}. The trigger goes on from here.`,
		},
	);
}

/** Marks each (hash, key) once. */
function dedupeMarks(marks: Mark[]): Mark[] {
	const seen = new Set<string>();
	return marks.filter((mark) => {
		const key = `${mark.hash}${mark.key}`;
		if (seen.has(key)) return false;
		seen.add(key);
		return true;
	});
}

/**
 * The state at activation.
 * - Without Include Existing Since: the cursor one ms after the newest item's `created_at`; the list's end holding the newest items is found from the page's dates (the
 *   last page by `count`, then on while `next` is set, when the list is oldest first).
 * - With it: the cursor at that date, nothing handled (the first poll fires what exists since).
 * - Parsings: the unfinished ones (`status=IN_QUEUE`, `IN_PROGRESS`, `MAX_POLL_PAGES` pages each)
 *   are followed, so they fire when they finish.
 */
async function activate(
	env: PollEnv,
	list: EventList,
	since: number | undefined,
	fingerprint: string,
): Promise<WindowState> {
	const { spec } = env;
	const pending = new MarkSet();
	for (const status of spec.pendingStatuses ?? []) {
		for (let n = 1; n <= MAX_POLL_PAGES; n++) {
			const page = await list.pageOrEmpty({ status }, n, PAGE_SIZE);
			for (const item of page.results) {
				const id = idOf(item);
				const ms = timestampMs(item.created_at);
				if (id !== undefined && ms !== undefined && !isFinal(spec, item.status))
					pending.add(markOf(id, ms));
			}
			if (!page.next || page.results.length === 0) break;
		}
	}
	let from = since ?? 0;
	if (since === undefined) {
		const newestEnd = await newestItems(list);
		const dated = newestEnd.filter((item) => timestampMs(item.created_at) !== undefined);
		if (dated.length > 0) {
			// Past the newest: the items sharing its `created_at` may be more than a page (a batch
			// stamped with one time); one listed there later appears behind the cursor and is found
			// in the margin.
			from = Math.max(...dated.map((item) => timestampMs(item.created_at) as number)) + 1;
		}
	}
	// The margin behind the cursor, summarised, so that items appearing there later are found.
	const margin = new Margin(from, {});
	if (since === undefined && from > 0) {
		const read = await readRange(env, list, from - MARGIN_MS, from, MAX_POLL_PAGES);
		for (const entry of read.items) if (entry.ms !== undefined) margin.add(entry.id, entry.ms);
		if (read.complete) margin.extendTo(from - MARGIN_MS);
	}
	const older = await countUpTo(list, from);
	return {
		v: STATE_VERSION,
		strategy: 'window',
		fingerprint,
		from: isoTime(from),
		tail: '',
		pending: packMarks(pending.values()),
		...margin.toState(),
		...(older === undefined ? {} : { older }),
	};
}

/** The items at the end of the list where the newest are (both ends when the dates do not tell). */
async function newestItems(list: EventList): Promise<IDataObject[]> {
	const first = await list.page({}, 1);
	if (!first.next) return first.results;
	const order = orderOf(
		first.results
			.map((item) => timestampMs(item.created_at))
			.filter((ms): ms is number => ms !== undefined),
	);
	if (order === 'newest-first') return first.results;
	const pageSize = Math.max(1, first.results.length);
	let n = first.count === undefined ? 2 : Math.max(2, Math.ceil(first.count / pageSize));
	let page = await list.pageOrEmpty({}, n, PAGE_SIZE);
	for (let pages = 1; page.next && page.results.length > 0 && pages < MAX_POLL_PAGES; pages++)
		page = await list.pageOrEmpty({}, ++n, PAGE_SIZE);
	return order === 'oldest-first' ? page.results : [...first.results, ...page.results];
}
