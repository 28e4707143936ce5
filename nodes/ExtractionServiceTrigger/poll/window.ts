import type { IDataObject } from 'n8n-workflow';

import { fires, isFinal } from './events';
import { EventList, MAX_JOB_WINDOW_PAGES, MAX_PENDING_READS, MAX_WINDOW_PAGES, byCreation, idOf, isoTime, searchBound, timestampMs, type ListRead, type PollEnv } from './lists';
import { BoundedIds, MAX_PENDING, STATE_VERSION, type WindowState } from './state';

/**
 * How far the cursor trails the poll's start (ms). It absorbs a service clock up to this much
 * behind n8n's, and items that become visible in the list up to this long after their `created_at`
 * (a slow commit); items re-read inside this margin are recognised by id (`seen`).
 */
export const SKEW_MARGIN_MS = 10 * 60_000;

/** What a poll found and the state to keep if it is output. */
export interface PollOutcome<S> {
	/** Resources that fire, oldest first (by `created_at`). */
	resources: IDataObject[];
	state: S;
}

/**
 * A poll of a `/v0` event — Document Uploaded (`GET /v0/documents`, `§v0-4.2`), Parsing Finished /
 * Failed (`GET /v0/parsing?status=`, `§v0-4.6`) — by creation time.
 *
 * How "new" is decided: by a cursor in the service's own time and ids.
 * - The poll reads the whole window `created_at_after = cursor` (both bounds of the service's date
 *   filters are inclusive) for each status that fires, and fires the ids it has not seen. The window
 *   is read whole, so the order of the list (not shown by the reference) does not matter; items seen
 *   twice (overlapping or shifting pages) are one id.
 * - The next cursor is `poll start − SKEW_MARGIN_MS`, never earlier than the current one: a service
 *   clock behind n8n's, or an item listed a little after its `created_at`, is still inside the next
 *   window, and the ids in `seen` keep it from firing twice. An id is forgotten once its `created_at`
 *   is before the cursor (no window can return it again).
 * - A window too large for one read (`count` above `MAX_WINDOW_PAGES` pages, `MAX_JOB_WINDOW_PAGES`
 *   for parsings, which are then read by id: a backlog after a pause, or a burst) is cut with `created_at_before` at a bound found by halving (counts of one-item
 *   pages); the cursor then moves to that bound, so the rest is read by the next polls, oldest
 *   first. (Inside the margin, this gives up the margin's protection for that burst: re-reading it
 *   whole at every poll would never get past it.)
 * - Jobs fire when they reach a final status, but the list filters by creation time: a parsing
 *   created long before it finishes must not fall behind the cursor unseen. So each poll first lists
 *   the unfinished parsings of the window (`status=IN_QUEUE`, `IN_PROGRESS`) and follows them by id
 *   (`pending`); one that is no longer unfinished and not in this poll's window is read by id
 *   (`§v0-4.7`, at most `MAX_PENDING_READS` a poll) and fires if its status does. The unfinished are
 *   listed *before* the finished: a parsing that finishes between the two requests is in the second.
 * - The cursor stays where it is when a read was not complete: the unfinished did not fit in one
 *   read, or a list's count went down while its pages were read (a deletion may have moved an item
 *   onto a page already read); the next poll reads the same window again.
 * - Parsings are output as read by id (`§v0-4.7`: the list items' fields beyond `id` and `status` are
 *   not shown, `§v0-4.6`); documents as listed (`§v0-4.2` lists Documents).
 * - Activation: the cursor starts at `now − SKEW_MARGIN_MS` and everything already in that window
 *   counts as seen (nothing from before the activation fires); with Include Existing Since, the
 *   cursor starts at that date and nothing counts as seen.
 *
 * @param state the previous state, or undefined at activation (or after a configuration change)
 * @param since epoch ms of Include Existing Since, if set
 * @returns the resources that fire and the next state; nothing is saved here
 * @throws NodeApiError for any failed request (the caller then keeps the previous state)
 */
export async function pollWindow(env: PollEnv, state: WindowState | undefined, since: number | undefined, fingerprint: string): Promise<PollOutcome<WindowState>> {
	const started = Date.now();
	if (!state) {
		if (since === undefined) return { resources: [], state: await baseline(env, started, fingerprint) };
		state = { v: STATE_VERSION, strategy: 'window', fingerprint, after: isoTime(since), seen: {}, pending: [] };
	}
	const { spec } = env;
	const list = new EventList(env);
	const cursor = Date.parse(state.after);
	const after = isoTime(cursor);
	const seen = { ...state.seen };
	const tracked = new BoundedIds(state.pending, MAX_PENDING);

	// 1. The unfinished jobs of the window, before the finished ones (see above).
	const listedPending = new Set<string>();
	let pendingComplete = true;
	for (const status of spec.pendingStatuses ?? []) {
		const read = await list.readAll({ status, created_at_after: after }, MAX_WINDOW_PAGES);
		if (!read.complete) pendingComplete = false;
		for (const item of read.items) listedPending.add(idOf(item) as string);
	}

	// 2. The window of each status that fires, cut in time when it is too large for one read.
	let upper: number | undefined;
	let windowComplete = true;
	const listed: IDataObject[] = [];
	const maxPages = spec.kind ? MAX_JOB_WINDOW_PAGES : MAX_WINDOW_PAGES;
	for (const status of spec.statuses ?? [undefined]) {
		const qs: IDataObject = { created_at_after: after, ...(status ? { status } : {}) };
		let read = await list.readAll(qs, maxPages);
		if (read.tooMany) {
			const bound = await fitUpperBound(list, qs, cursor, started + SKEW_MARGIN_MS, read.capacity);
			upper = Math.min(upper ?? Infinity, bound);
			read = await list.readAll({ ...qs, created_at_before: isoTime(bound) }, maxPages);
		}
		if (!read.complete) windowComplete = false;
		listed.push(...read.items);
	}

	// 3. What is new in the window, and which followed jobs must be read by id.
	const inWindow = new Set(listed.map((item) => idOf(item) as string));
	const fresh = dedupe(listed.filter((item) => seen[idOf(item) as string] === undefined));
	for (const id of listedPending) if (seen[id] === undefined && !inWindow.has(id) && !tracked.has(id)) tracked.add(id);
	for (const id of inWindow) tracked.delete(id);
	const toCheck = tracked.values().filter((id) => !listedPending.has(id)).slice(0, MAX_PENDING_READS);

	// 4. Reads by id: the new jobs (their full resource is the output) and the followed ones.
	const fullReads = spec.kind ? await list.jobs([...fresh.map((item) => idOf(item) as string), ...toCheck]) : new Map<string, IDataObject | undefined>();
	const resources: IDataObject[] = [];
	const remember = (id: string, resource: IDataObject | undefined): void => {
		seen[id] = timestampMs(resource?.created_at) ?? started + SKEW_MARGIN_MS;
	};
	for (const item of fresh) {
		const id = idOf(item) as string;
		const resource = spec.kind ? fullReads.get(id) : item;
		remember(id, resource);
		if (resource && fires(spec, resource.status)) resources.push(resource);
	}
	for (const id of toCheck) {
		const job = fullReads.get(id);
		if (job && !isFinal(spec, job.status)) {
			tracked.add(id); // still unfinished: checked again after the others
			continue;
		}
		tracked.delete(id); // finished, or deleted (404)
		if (job && fires(spec, job.status) && seen[id] === undefined) resources.push(job);
		if (job) remember(id, job);
	}

	// 5. The next cursor, and the ids it still needs.
	// A window cut in time moves the cursor to the cut, even when the cut is inside the margin: a
	// burst larger than one read cannot be read again at every poll, or the polls would not advance.
	const held = !pendingComplete || !windowComplete;
	const next = held ? cursor : Math.max(cursor, upper ?? started - SKEW_MARGIN_MS);
	for (const [id, createdMs] of Object.entries(seen)) if (createdMs < next) delete seen[id];
	return {
		resources: byCreation(resources),
		state: { v: STATE_VERSION, strategy: 'window', fingerprint, after: isoTime(next), seen, pending: tracked.toArray() },
	};
}

/**
 * The state at activation: the cursor at `now − SKEW_MARGIN_MS` (moved later if that window holds
 * more than one read can take), every item of the window's firing statuses counted as seen, and the
 * unfinished jobs of the window followed (they fire when they finish, which is after activation).
 */
async function baseline(env: PollEnv, started: number, fingerprint: string): Promise<WindowState> {
	const { spec } = env;
	const list = new EventList(env);
	let cursor = started - SKEW_MARGIN_MS;
	const statuses = spec.statuses ?? [undefined];
	const query = (status: string | undefined, from: number): IDataObject => ({ created_at_after: isoTime(from), ...(status ? { status } : {}) });

	const pending = new BoundedIds([], MAX_PENDING);
	for (const status of spec.pendingStatuses ?? []) {
		const read = await list.readAll({ status, created_at_after: isoTime(cursor) }, MAX_WINDOW_PAGES);
		for (const item of read.items) pending.add(idOf(item) as string);
	}

	const reads: ListRead[] = [];
	for (const status of statuses) reads.push(await list.readAll(query(status, cursor), MAX_WINDOW_PAGES));
	if (reads.some((read) => read.tooMany)) {
		// A burst larger than one read: start later, where the window fits (the margin shrinks).
		for (const [index, status] of statuses.entries()) {
			const capacity = reads[index].capacity;
			const start = await searchBound(started + SKEW_MARGIN_MS, cursor, async (from) => verdict(await list.count(query(status, from)), capacity));
			cursor = Math.max(cursor, start);
		}
		reads.length = 0;
		for (const status of statuses) reads.push(await list.readAll(query(status, cursor), MAX_WINDOW_PAGES));
	}
	const seen: Record<string, number> = {};
	for (const item of reads.flatMap((read) => read.items)) {
		const id = idOf(item) as string;
		seen[id] = timestampMs(item.created_at) ?? started + SKEW_MARGIN_MS;
		pending.delete(id);
	}
	return { v: STATE_VERSION, strategy: 'window', fingerprint, after: isoTime(cursor), seen, pending: pending.toArray() };
}

/**
 * The latest bound `created_at_before` at which the window from `from` fits in one read, between
 * `from` (assumed to fit) and `to` (too many).
 */
async function fitUpperBound(list: EventList, qs: IDataObject, from: number, to: number, capacity: number): Promise<number> {
	return await searchBound(from, to, async (bound) => verdict(await list.count({ ...qs, created_at_before: isoTime(bound) }), capacity));
}

/** Whether a count fits a read of `capacity` items, and is full enough (half or more) to stop halving. */
function verdict(count: number | undefined, capacity: number): 'fits' | 'enough' | 'tooMany' {
	if (count === undefined || count > capacity) return 'tooMany';
	return count * 2 >= capacity ? 'enough' : 'fits';
}

/** Items each id once (a window read per status may list an item twice if it changed status meanwhile). */
function dedupe(items: IDataObject[]): IDataObject[] {
	const ids = new Set<string>();
	return items.filter((item) => {
		const id = idOf(item) as string;
		if (ids.has(id)) return false;
		ids.add(id);
		return true;
	});
}
