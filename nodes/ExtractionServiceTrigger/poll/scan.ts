import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { ListPage } from '../../ExtractionService/v1/transport';
import { fires, isFinal } from './events';
import {
	EventList,
	MAX_FIRING_PER_POLL,
	MAX_POLL_PAGES,
	MAX_TIE_PAGES,
	PAGE_SIZE,
	byCreation,
	idOf,
	outOfTime,
	readFailed,
	timestampMs,
	type PollEnv,
	type Unreadable,
} from './lists';
import { MarkSet, markOf, packMarks, unpackMarks, type Mark } from './marks';
import { STATE_VERSION, type ListOrder, type ScanState } from './state';
import type { PollOutcome } from './window';

/** How many of the newest handled extractions a state names (where the next poll goes on). */
export const EDGE_SIZE = 8;

/** Most list pages a poll reads to check the extractions it follows (`pending`). */
export const MAX_PENDING_PAGES = 50;

/** A followed extraction not met where it was looked for in this many polls in a row is forgotten (deleted). */
export const MAX_MISSES = 3;

/** Most pages read when the edge is looked for by date (every extraction of the edge was deleted). */
const MAX_SEARCH_PAGES = MAX_POLL_PAGES;

/** A page as read in this poll, with when it was read (`seq`: higher is later). */
interface ReadPage {
	seq: number;
	page: ListPage;
}

/** The pages of the list as one poll reads them: each page at most once, and the page size the service uses. */
class Pages {
	private readonly cache = new Map<number, ReadPage>();
	size = PAGE_SIZE;
	requests = 0;

	constructor(private readonly list: EventList) {}

	/** Page `n` (past the end: an empty page). */
	async get(n: number): Promise<ListPage> {
		return (await this.read(n)).page;
	}

	/**
	 * Page `n` as read after the read numbered `seq` (read again if its copy is older): a list that
	 * grows at the front while a poll reads it then shows each item on a page read later, never
	 * between two pages.
	 */
	async after(n: number, seq: number): Promise<ReadPage> {
		const cached = this.cache.get(n);
		if (cached && cached.seq > seq) return cached;
		this.cache.delete(n);
		return await this.read(n);
	}

	private async read(n: number): Promise<ReadPage> {
		const cached = this.cache.get(n);
		if (cached) return cached;
		const page = await this.list.pageOrEmpty({}, n, PAGE_SIZE);
		this.requests++;
		if (n === 1)
			this.size = page.next
				? Math.max(1, page.results.length)
				: Math.max(PAGE_SIZE, page.results.length);
		const read = { seq: this.requests, page };
		this.cache.set(n, read);
		return read;
	}

	has(n: number): boolean {
		return this.cache.has(n);
	}

	/** The page of a list index (0 = the first item the list serves). */
	pageOf(index: number): number {
		return Math.floor(index / this.size) + 1;
	}
}

/** Positions from the list's oldest end in one poll: of an item on a page, and the page of a position. */
interface Frame {
	oldestFirst: boolean;
	posOf(n: number, index: number): number;
	pageOf(pos: number): number;
}

/** Where an extraction of the edge was met: its page, index on the page, and rank in the edge (higher: newer). */
interface Hit {
	n: number;
	index: number;
	rank: number;
}

/**
 * A poll of Extraction Finished / Failed: `GET /extract/` (`§unversioned-4.1`), with the user's
 * filters. The list has no date filter and its items no date and no data (`§unversioned-2.2`), so
 * "new" is decided by place, and each extraction that fires is read by id (`§unversioned-4.3`) and
 * output like Extraction → Get.
 *
 * - The state names the newest extractions handled (`edge`, `EDGE_SIZE` ids): the list is in
 *   creation order, so everything on the far side of them is new. Each poll finds them again and
 *   reads the list's order from where they stand (the newer of two is nearer the front: newest
 *   first), on page 1 or on the page its hints point to (`at`, the edge's position from the oldest
 *   end; `order`): a poll with nothing new reads one page (newest first) or two (oldest first),
 *   whatever the list's length or its `count`. An edge standing where the order the state gave it
 *   cannot put it (that order came from dates that ran against the list) turns round
 *   (`FoundEdge.against`). When every extraction of the edge was deleted, the
 *   edge is found by date (`t`, reads by id); when that fails too, the poll reports it and goes on
 *   from the list's newest end.
 * - New extractions are handled oldest first: those final fire (if their status does) or are
 *   passed, those unfinished are followed (`pending`, a mark with their position), as far as
 *   `MAX_POLL_PAGES` pages and `MAX_FIRING_PER_POLL` extractions to fire: the edge moves to the
 *   last handled and the next poll goes on from there. Pages are read towards the newest end where
 *   that cannot skip an item (a newest-first list from page 1, an oldest-first one from the edge).
 * - Followed extractions are looked for where they were listed (their position, moved by deletions
 *   at most towards the oldest end), up to `MAX_PENDING_PAGES` pages a poll; one that finished fires
 *   (read by id), one not met `MAX_MISSES` polls in a row was deleted.
 * - Activation: the edge at the newest end; the unfinished extractions among the newest
 *   `MAX_POLL_PAGES` pages are followed; with Include Existing Since, the final ones read there
 *   created at or after it fire.
 *
 * @param state the previous state, or undefined at activation (or after a configuration change)
 * @param since epoch ms of Include Existing Since, if set (used at activation only)
 * @returns the extractions that fire (read by id, oldest first), the next state, and an error to
 *   report after saving it
 * @throws NodeApiError for any failed request (the caller then keeps the previous state)
 */
export async function pollScan(
	env: PollEnv,
	state: ScanState | undefined,
	since: number | undefined,
	fingerprint: string,
): Promise<PollOutcome<ScanState>> {
	const list = new EventList(env);
	const pages = new Pages(list);
	if (!state) return await activate(env, list, pages, since, fingerprint);
	const { spec } = env;
	const first = await pages.get(1);
	const size = pages.size;
	let pending = new MarkSet(unpackMarks(state.pending));

	// 0. An order not known yet (every date the same): the end where new extractions appeared tells it.
	if (state.front && state.back) {
		const order = await newEnd(env, pages, state);
		if (!order) return await quietUnknown(env, list, pages, state, pending);
		if (order === 'newest-first') pending = fromOtherEnd(pending, state.at);
		state = scanState(fingerprint, pending, {
			edge: order === 'oldest-first' ? state.back : [...state.front].reverse(),
			at: state.at,
			order,
		});
	} else if (
		state.edge.length === 0 &&
		first.results.length > 0 &&
		!(await orderFromDates(list, pages)) &&
		!state.order
	) {
		// The list was empty and what it lists now does not show its order: everything listed is new.
		return await activate(env, list, pages, -Infinity, fingerprint, pending);
	}

	// 1. Where the last poll stopped, and the list's order. An edge standing where its own order
	// cannot put it was ranked by dates that ran against the list: its ranks and positions turn round.
	let found = await findEdge(env, list, pages, state);
	if (found?.against) {
		pending = fromOtherEnd(pending, state.at);
		state = {
			...state,
			edge: [...state.edge].reverse(),
			order: found.order === 'oldest-first' ? 'newest-first' : 'oldest-first',
		};
		found = await findEdge(env, list, pages, state);
	}
	if (!found) {
		const restart = await activate(env, list, pages, undefined, fingerprint, pending);
		return { ...restart, error: lostEdgeError(env, state) };
	}
	const { order } = found;

	// 2. The new extractions, oldest first, read towards the newest end.
	const fresh: Array<{ item: IDataObject; pos: number }> = [];
	// Positions from the list's oldest end: as served (oldest first), or counted back from the edge
	// (where this poll met it: `found` moves when the list grew while it was read).
	const edgeIndex = () => (found.n - 1) * size + found.index;
	const frame: Frame = {
		oldestFirst: order === 'oldest-first',
		posOf: (n, index) =>
			order === 'oldest-first'
				? (n - 1) * size + index
				: found.pos + edgeIndex() - ((n - 1) * size + index),
		pageOf: (pos) =>
			pages.pageOf(Math.max(0, order === 'oldest-first' ? pos : edgeIndex() + found.pos - pos)),
	};
	const seen = new Set<string>(state.edge);
	const take = (n: number, index: number, page: ListPage): void => {
		const item = page.results[index];
		const id = idOf(item);
		if (id !== undefined && state.edge.includes(id)) found.present.add(id);
		if (id === undefined || seen.has(id)) return;
		seen.add(id);
		fresh.push({ item, pos: frame.posOf(n, index) });
	};
	if (order === 'oldest-first') {
		let page = await pages.get(found.n);
		for (let index = found.index + 1; index < page.results.length; index++)
			take(found.n, index, page);
		for (
			let n = found.n + 1, read = 0;
			page.next && read < MAX_POLL_PAGES && !outOfTime(env);
			n++, read++
		) {
			page = await pages.get(n);
			if (page.results.length === 0) break;
			page.results.forEach((_, index) => take(n, index, page));
		}
	} else if (found.n <= MAX_POLL_PAGES + 1 && (await readToEdge(pages, state, found, take))) {
		// Read from page 1 to the edge (see readToEdge).
	} else {
		// More new pages than a poll reads: from the edge towards page 1, as far as the poll's pages
		// go, and only while no extraction was created meanwhile (it would push one past a page read).
		const edgePage = await pages.get(found.n);
		const countThen = edgePage.count ?? first.count;
		for (
			let n = found.n, read = 0;
			n >= 1 && read < MAX_POLL_PAGES && !outOfTime(env);
			n--, read++
		) {
			const page = await pages.get(n);
			if (
				n !== found.n &&
				page.count !== undefined &&
				countThen !== undefined &&
				page.count !== countThen
			)
				break;
			for (let index = (n === found.n ? found.index : page.results.length) - 1; index >= 0; index--)
				take(n, index, page);
		}
	}

	// 3. Sorting out the new extractions, oldest first, within the poll's room.
	const firing: string[] = [];
	/** Positions of the extractions that fire (a read that fails follows it there). */
	const firingAt = new Map<string, number>();
	const processed: string[] = [];
	let newestPos = state.at - 1;
	for (const { item, pos } of fresh) {
		const id = idOf(item) as string;
		if (isFinal(spec, item.status)) {
			if (fires(spec, item.status)) {
				if (firing.length >= MAX_FIRING_PER_POLL) break;
				firing.push(id);
				firingAt.set(id, pos);
			}
		} else {
			pending.add(markOf(id, pos));
		}
		processed.push(id);
		newestPos = pos;
	}

	// 4. The followed extractions: met on the pages read, or looked for where they were listed.
	const resolved = await checkFollowed(env, pages, pending, frame, new Set(processed));

	// 5. Reads by id: the output of each extraction that fires.
	// A job whose read failed waits for the next poll (followed), the others fire (issue 31 item 6).
	const read = await list.jobs([...firing, ...resolved.map((entry) => entry.id)]);
	const resources: IDataObject[] = [];
	const unreadable: Unreadable[] = [];
	for (const id of firing) {
		const job = read.get(id);
		const error = list.failed.get(id);
		if (error !== undefined)
			readFailed(pending, unreadable, { id, key: firingAt.get(id) as number, error });
		else if (job && fires(spec, job.status)) resources.push(job);
	}
	for (const entry of resolved) {
		const error = list.failed.get(entry.id);
		if (error !== undefined) {
			readFailed(pending, unreadable, { ...entry, key: entry.pos, error });
			continue;
		}
		const job = read.get(entry.id);
		if (job && !isFinal(spec, job.status)) pending.add(markOf(entry.id, entry.pos));
		else if (job && fires(spec, job.status)) resources.push(job);
	}

	// 6. The next edge: the newest handled extractions.
	const kept = state.edge.filter((id) => found.present.has(id));
	let edge = [...kept, ...processed].slice(-EDGE_SIZE);
	// Found by date: the old extraction at the edge stands for it until newer ones are handled.
	if (edge.length === 0 && found.index >= 0) {
		const anchor = idOf((await pages.get(found.n)).results[found.index] ?? {});
		if (anchor !== undefined) edge = [anchor];
	}
	const newest = processed.at(-1);
	let t = state.t;
	if (newest !== undefined && !list.failed.has(newest)) {
		const job = read.get(newest);
		t = (job ? timestampMs(job.created_at) : await list.dateOf(newest)) ?? t;
	}
	const at = newest === undefined ? found.pos + 1 : newestPos + 1;
	return {
		resources: byCreation(resources),
		state: scanState(fingerprint, pending, {
			edge,
			at,
			order,
			...(t === undefined ? {} : { t }),
		}),
		unreadable,
	};
}

/** Where a poll found the edge (`findEdge`): its page and index there, and its position. */
interface EdgePlace {
	n: number;
	index: number;
	pos: number;
}

/**
 * The edge as `findEdge` found it: the list's order, its place, the ids of the edge still listed,
 * and whether it stands where the state's order cannot put it (`against`: that order came from
 * dates that ran against the list's own order).
 */
interface FoundEdge extends EdgePlace {
	order: ListOrder;
	present: Set<string>;
	against?: boolean;
}

/**
 * A newest-first list: the new extractions in front of the edge, read from page 1 on, each page read
 * after the one before it (`Pages.after`). Extractions created meanwhile push older ones onto later
 * pages, so an item may be met twice, never skipped, and the edge may have moved on a page or two:
 * reading stops at the first extraction of the edge met (with no edge: at the list's end), `found`
 * moves there, and the items in front of it go to `take`, oldest first.
 *
 * @returns false when neither was met within `MAX_POLL_PAGES` + 3 pages, or the list ended before
 *   the edge (deleted meanwhile); nothing was taken then
 */
async function readToEdge(
	pages: Pages,
	state: ScanState,
	found: EdgePlace,
	take: (n: number, index: number, page: ListPage) => void,
): Promise<boolean> {
	const rank = new Map(state.edge.map((id, index) => [id, index]));
	const collected: Array<{ n: number; index: number; page: ListPage }> = [];
	let seq = -1;
	for (let n = 1; n <= MAX_POLL_PAGES + 3; n++) {
		const read = await pages.after(n, seq);
		const { page } = read;
		seq = read.seq;
		const at = page.results.findIndex((item) => rank.has(idOf(item) ?? ''));
		const end = at >= 0 ? at : page.results.length;
		for (let index = 0; index < end; index++) collected.push({ n, index, page });
		const last = !page.next || page.results.length === 0;
		if (at < 0 && !(last && rank.size === 0)) {
			if (last) return false;
			continue;
		}
		const r = at >= 0 ? (rank.get(idOf(page.results[at]) as string) as number) : undefined;
		Object.assign(found, {
			n,
			index: end,
			pos: r === undefined ? -1 : edgePos(state, r),
		});
		for (const { n: m, index, page: p } of collected.reverse()) take(m, index, p);
		return true;
	}
	return false;
}

/**
 * Binary search of a page for the boundary of a test that holds on one side of it only: the
 * `'first'` index in [0, high] where it holds (it holds at `high`), or the `'last'` one (it holds at
 * 0). Each probe is one call of `test`, at most ⌈log2(high + 1)⌉ of them.
 */
async function bisect(
	high: number,
	side: 'first' | 'last',
	test: (index: number) => Promise<boolean>,
): Promise<number> {
	let low = 0;
	while (low < high) {
		if (side === 'first') {
			const mid = Math.floor((low + high) / 2);
			if (await test(mid)) high = mid;
			else low = mid + 1;
		} else {
			const mid = Math.ceil((low + high) / 2);
			if (await test(mid)) low = mid;
			else high = mid - 1;
		}
	}
	return low;
}

/** The position from the list's oldest end of the edge's extraction of rank `rank` (the newest: `at` - 1). */
function edgePos(state: ScanState, rank: number): number {
	return state.at - 1 - (state.edge.length - 1 - rank);
}

/** Followed marks with their positions counted from the other end of a list of `at` places. */
function fromOtherEnd(pending: MarkSet, at: number): MarkSet {
	return new MarkSet(pending.values().map((mark) => ({ ...mark, key: at - 1 - mark.key })));
}

/** A scan state of this configuration: `place` says where the next poll goes on; `pending` is packed. */
function scanState(
	fingerprint: string,
	pending: MarkSet,
	place: Omit<ScanState, 'v' | 'strategy' | 'fingerprint' | 'pending'>,
): ScanState {
	return {
		v: STATE_VERSION,
		strategy: 'scan',
		fingerprint,
		...place,
		pending: packMarks(pending.values()),
	};
}

/**
 * Finds the newest extraction of the edge still listed, and the list's order from where the edge
 * stands: on page 1 (newest first, or a short list), on the page of its position from the oldest end
 * (oldest first), on the following pages of a newest-first list (more new extractions than a page),
 * on the page of its position counted from `count` (more than a poll's pages), and last by date.
 *
 * @returns undefined when it cannot be found (no edge, every id deleted and no date to go by)
 */
async function findEdge(
	env: PollEnv,
	list: EventList,
	pages: Pages,
	state: ScanState,
): Promise<FoundEdge | undefined> {
	const rank = new Map(state.edge.map((id, index) => [id, index]));
	const hits: Hit[] = [];
	const present = new Set<string>();
	const scanned = new Set<number>();
	const scan = async (n: number): Promise<ListPage> => {
		const page = await pages.get(n);
		if (!scanned.has(n)) {
			scanned.add(n);
			page.results.forEach((item, index) => {
				const id = idOf(item);
				const r = id === undefined ? undefined : rank.get(id);
				if (r !== undefined && id !== undefined) {
					hits.push({ n, index, rank: r });
					present.add(id);
				}
			});
		}
		return page;
	};
	const first = await scan(1);
	const size = pages.size;
	const count = first.count ?? 0;
	const place = (hit: Hit) => (hit.n - 1) * size + hit.index;
	/** The order the hits show: the newer of two is nearer the front in a newest-first list. */
	const orderOfHits = (): ListOrder | undefined => {
		if (hits.length < 2) return undefined;
		const sorted = [...hits].sort((a, b) => a.rank - b.rank);
		const older = sorted[0];
		const newer = sorted[sorted.length - 1];
		if (older.rank === newer.rank) return undefined;
		return place(newer) < place(older) ? 'newest-first' : 'oldest-first';
	};
	const result = async (order: ListOrder): Promise<FoundEdge> => {
		const newest = hits.reduce((a, b) => (b.rank > a.rank ? b : a));
		const oldest = hits.reduce((a, b) => (b.rank < a.rank ? b : a));
		const at = place(newest);
		// The positions the state gave the edge bound where it may stand now: oldest first, deletions
		// only move it towards the front; newest first, no more extractions follow it to the list's end
		// than were older than it. Beyond that bound, the edge's ranks came from dates that ran
		// against the list order (`orderFromDates`).
		const oldestPage = await pages.get(oldest.n);
		const against =
			order === 'oldest-first'
				? at > state.at - 1
				: !oldestPage.next &&
					oldestPage.results.length - 1 - oldest.index > edgePos(state, oldest.rank);
		return {
			order,
			n: newest.n,
			index: newest.index,
			// Newest first, positions are counted from the edge as the state placed it (not from `count`,
			// which a service may cap): the newest of the edge is at `at` - 1.
			pos: order === 'oldest-first' ? at : edgePos(state, newest.rank),
			present,
			against,
		};
	};
	if (state.edge.length === 0) {
		// The list was empty: everything listed now is new. Its order from the dates, if it shows one.
		const order = (await orderFromDates(list, pages)) ?? state.order ?? 'newest-first';
		if (order === 'oldest-first') return { order, n: 1, index: -1, pos: -1, present };
		const last = first.count === undefined ? MAX_POLL_PAGES : Math.ceil(first.count / size);
		return { order, n: Math.max(1, last) + 1, index: 0, pos: -1, present };
	}

	// The hinted pages: the edge's page in each order (the last order seen first).
	const oldestFirstPage = pages.pageOf(Math.max(0, state.at - 1));
	const newestFirstPage = pages.pageOf(Math.max(0, count - state.at));
	const hinted =
		state.order === 'oldest-first'
			? [oldestFirstPage, newestFirstPage]
			: [newestFirstPage, oldestFirstPage];
	const probes = [1, ...hinted];
	for (let i = 0; i < probes.length && i < 6; i++) {
		if (orderOfHits()) break;
		const n = probes[i];
		if (n >= 1) await scan(n);
		// One extraction of the edge met: the rest of the edge is on the pages next to it.
		if (hits.length === 1 && i === probes.length - 1) probes.push(hits[0].n - 1, hits[0].n + 1);
		else if (hits.length === 1 && !probes.includes(hits[0].n - 1))
			probes.splice(i + 1, 0, hits[0].n - 1, hits[0].n + 1);
	}
	let order = orderOfHits();
	if (order) return await result(order);
	if (hits.length === 1) {
		// One extraction of the edge left: nothing else listed (either order), or a neighbour's date,
		// or the dates of the list's ends tell which side is newer.
		if (!first.next && first.results.every((item) => rank.has(idOf(item) ?? '')))
			return await result(state.order ?? 'newest-first');
		order =
			(await orderAround(list, pages, hits[0], state.t)) ?? (await orderFromDates(list, pages));
		if (order) return await result(order);
	}
	// A newest-first list with more new extractions than a page: the following pages.
	if (hits.length === 0) {
		for (let n = 2; n <= MAX_SEARCH_PAGES && !outOfTime(env); n++) {
			const page = await scan(n);
			if (hits.length > 0) {
				order = orderOfHits() ?? (await orderAround(list, pages, hits[0], state.t));
				if (order) return await result(order);
			}
			if (!page.next || page.results.length === 0) break;
		}
	}
	// Every extraction of the edge deleted: the edge by date.
	if (hits.length === 0 && state.t !== undefined)
		return await edgeByDate(env, list, pages, state, present);
	return undefined;
}

/**
 * Finds where the last poll stopped by date, when every extraction it named was deleted (a workflow
 * that deletes what it handled): the list's order from the dates of page 1's ends, then the newest
 * extraction created at or before the edge's date (`t`), by reading dates by id — a page's end item
 * per page, then halving inside the page that holds it.
 *
 * @returns the place of that extraction, as `findEdge` gives it, or undefined when the dates do not
 *   tell (no order, or it is not within `MAX_SEARCH_PAGES` pages)
 */
async function edgeByDate(
	env: PollEnv,
	list: EventList,
	pages: Pages,
	state: ScanState,
	present: Set<string>,
): Promise<FoundEdge | undefined> {
	const t = state.t as number;
	const order = await orderFromDates(list, pages);
	if (!order) return undefined;
	const dates = new Map<string, number | undefined>();
	const dateAt = async (page: ListPage, index: number): Promise<number | undefined> => {
		const id = idOf(page.results[index] ?? {});
		if (id === undefined) return undefined;
		if (!dates.has(id)) dates.set(id, await list.dateOf(id));
		return dates.get(id);
	};
	const isOld = async (page: ListPage, index: number) =>
		((await dateAt(page, index)) ?? Infinity) <= t;
	const first = await pages.get(1);
	const size = pages.size;
	const place = (order: ListOrder, n: number, index: number, page: ListPage) => {
		const at = (n - 1) * size + index;
		return {
			order,
			n,
			index,
			pos: order === 'oldest-first' ? at : (page.count ?? first.count ?? 0) - 1 - at,
			present,
		};
	};
	if (order === 'newest-first') {
		// Old extractions follow the new ones: the first page whose last item is old holds the edge.
		for (let n = 1; n <= MAX_SEARCH_PAGES && !outOfTime(env); n++) {
			const page = await pages.get(n);
			if (page.results.length === 0) return { order, n, index: 0, pos: -1, present };
			if (!(await isOld(page, page.results.length - 1))) {
				if (!page.next) return { order, n: n + 1, index: 0, pos: -1, present };
				continue;
			}
			const firstOld = await bisect(page.results.length - 1, 'first', (i) => isOld(page, i));
			return place(order, n, firstOld, page);
		}
		return undefined;
	}
	// Oldest first: from the page of the edge's position towards the front while its first item is new.
	for (
		let n = pages.pageOf(Math.max(0, state.at - 1)), read = 0;
		n >= 1 && read < MAX_SEARCH_PAGES && !outOfTime(env);
		n--, read++
	) {
		const page = await pages.get(n);
		if (page.results.length === 0) continue;
		if (!(await isOld(page, 0))) {
			if (n === 1) return { order, n: 1, index: -1, pos: -1, present };
			continue;
		}
		const lastOld = await bisect(page.results.length - 1, 'last', (i) => isOld(page, i));
		return place(order, n, lastOld, page);
	}
	return undefined;
}

/**
 * The order of the list from the dates around one extraction of the edge: a neighbour on the page
 * read by id, newer than the edge's date (`t`) on the side new extractions are.
 */
async function orderAround(
	list: EventList,
	pages: Pages,
	hit: Hit,
	t: number | undefined,
): Promise<ListOrder | undefined> {
	if (t === undefined) return undefined;
	const page = await pages.get(hit.n);
	for (const [index, side] of [
		[hit.index - 1, -1],
		[hit.index + 1, 1],
	] as const) {
		const item = page.results[index];
		const id = item ? idOf(item) : undefined;
		if (id === undefined) continue;
		const ms = await list.dateOf(id);
		if (ms === undefined || ms === t) continue;
		const newerBefore = side === -1 ? ms > t : ms < t;
		return newerBefore ? 'newest-first' : 'oldest-first';
	}
	return undefined;
}

/**
 * Looks for the followed extractions: on the pages this poll read, then on the pages where they
 * were listed (their position; deletions move it towards the oldest end), close ones together, at
 * most `MAX_PENDING_PAGES` pages. One that is final is returned (to fire if its status does), one
 * still unfinished gets its new position, one not met on pages that should hold it counts a miss
 * and is forgotten after `MAX_MISSES`. Changes `pending` in place.
 *
 * @param handledNow ids handled as new in this poll (not followed ones)
 */
async function checkFollowed(
	env: PollEnv,
	pages: Pages,
	pending: MarkSet,
	frame: Frame,
	handledNow: Set<string>,
): Promise<Array<{ id: string; pos: number; fails?: number }>> {
	const { spec } = env;
	const size = pages.size;
	const finished: Array<{ id: string; pos: number; fails?: number }> = [];
	const met = new Set<Mark>();
	const looked = new Set<number>();
	const visit = async (n: number): Promise<void> => {
		const page = await pages.get(n);
		looked.add(n);
		page.results.forEach((item, index) => {
			const id = idOf(item);
			if (id === undefined) return;
			const pos = frame.posOf(n, index);
			if (handledNow.has(id)) {
				// Followed from this poll on: met where it is.
				const added = pending.find(id, (key) => key === pos);
				if (added) met.add(added);
				return;
			}
			// Deletions move a followed extraction only one way from where it was listed: towards the
			// oldest end (oldest first), towards the edge (newest first, positions counted from it).
			const mark = pending.find(id, (key) =>
				frame.oldestFirst ? pos <= key + size : pos >= key - size,
			);
			if (!mark || met.has(mark)) return;
			met.add(mark);
			pending.delete(mark);
			if (isFinal(spec, item.status)) {
				if (fires(spec, item.status) && finished.length < MAX_FIRING_PER_POLL)
					finished.push({ id, pos, ...(mark.fails ? { fails: mark.fails } : {}) });
				else if (fires(spec, item.status)) pending.add(markOf(id, pos, 0, mark.fails)); // no room: next poll
			} else {
				const still = markOf(id, pos);
				met.add(still);
				pending.add(still);
			}
		});
	};
	const readAlready = [...Array(MAX_POLL_PAGES * 3).keys()]
		.map((i) => i + 1)
		.filter((n) => pages.has(n));
	for (const n of readAlready) await visit(n);

	const waiting = pending
		.values()
		.filter((mark) => !met.has(mark))
		.sort((a, b) => a.key - b.key);
	let budget = MAX_PENDING_PAGES;
	const missedWhereLooked: Mark[] = [];
	for (const mark of waiting) {
		if (met.has(mark)) continue;
		// Its page, and the pages on either side (deletions and the count move it a little).
		// Deletions move it towards page 1; each poll it was missed looks one page further.
		const home = frame.pageOf(mark.key);
		const around = [
			home,
			home + 1,
			...Array.from({ length: 1 + (mark.misses ?? 0) * 2 }, (_, i) => home - 1 - i),
		].filter((n) => n >= 1);
		for (const n of around) {
			if (looked.has(n) || budget <= 0 || outOfTime(env)) continue;
			budget--;
			await visit(n);
		}
		if (!met.has(mark) && around.every((n) => looked.has(n))) missedWhereLooked.push(mark);
	}
	for (const mark of missedWhereLooked) {
		if (met.has(mark)) continue;
		pending.delete(mark);
		const misses = (mark.misses ?? 0) + 1;
		if (misses < MAX_MISSES) pending.add({ ...mark, misses });
	}
	return finished;
}

/**
 * The state at activation (or after the edge was lost): the edge at the newest end (found from the
 * dates of both ends of page 1, read by id), the unfinished extractions among the newest
 * `MAX_POLL_PAGES` pages followed, and with Include Existing Since the final ones created since
 * then fired.
 *
 * @param keep followed extractions to keep (after a lost edge)
 */
async function activate(
	env: PollEnv,
	list: EventList,
	pages: Pages,
	since: number | undefined,
	fingerprint: string,
	keep?: MarkSet,
): Promise<PollOutcome<ScanState>> {
	const { spec } = env;
	const first = await pages.get(1);
	const size = pages.size;
	const pending = keep ?? new MarkSet();
	if (first.results.length === 0)
		return {
			resources: [],
			state: scanState(fingerprint, pending, { edge: [], at: 0 }),
		};

	const order = await orderFromDates(list, pages);
	if (!order && (first.next || first.results.length > 1))
		return await activateUnknown(env, list, pages, since, fingerprint, pending);
	// The newest end: page 1 (newest first), else the last page by `count`, then on while `next` is set.
	const newestEnd: Array<{ item: IDataObject; pos: number }> = [];
	const count = first.count ?? first.results.length;
	if (order === 'newest-first' || !first.next) {
		for (let n = 1; n <= MAX_POLL_PAGES; n++) {
			const page = await pages.get(n);
			page.results.forEach((item, index) =>
				newestEnd.push({
					item,
					pos:
						order === 'oldest-first'
							? (n - 1) * size + index
							: (page.count ?? count) - 1 - ((n - 1) * size + index),
				}),
			);
			if (!page.next || page.results.length === 0) break;
		}
	} else {
		let n = Math.max(1, Math.ceil(count / size));
		let page = await pages.get(n);
		for (let read = 0; page.next && read < MAX_POLL_PAGES; read++) page = await pages.get(++n);
		for (let back = n, read = 0; back >= 1 && read < MAX_POLL_PAGES; back--, read++) {
			const p = await pages.get(back);
			p.results.forEach((item, index) => newestEnd.push({ item, pos: (back - 1) * size + index }));
		}
	}
	const byPos = newestEnd
		.filter((entry) => idOf(entry.item) !== undefined)
		.sort((a, b) => a.pos - b.pos);
	const unique = [...new Map(byPos.map((entry) => [idOf(entry.item) as string, entry])).values()];
	for (const { item, pos } of unique)
		if (!isFinal(spec, item.status)) pending.add(markOf(idOf(item) as string, pos));
	const newest = unique.at(-1);
	const edge = unique.slice(-EDGE_SIZE).map((entry) => idOf(entry.item) as string);
	const resources: IDataObject[] = [];
	const unreadable: Unreadable[] = [];
	if (since !== undefined) {
		const candidates = unique
			.filter((entry) => isFinal(spec, entry.item.status) && fires(spec, entry.item.status))
			.slice(-MAX_FIRING_PER_POLL);
		const read = await list.jobs(candidates.map((entry) => idOf(entry.item) as string));
		for (const job of read.values())
			if (job && fires(spec, job.status) && (timestampMs(job.created_at) ?? -Infinity) >= since)
				resources.push(job);
		// One whose read failed is followed: it fires when it can be read (`readFailed`).
		for (const { item, pos } of candidates) {
			const id = idOf(item) as string;
			const error = list.failed.get(id);
			if (error !== undefined) readFailed(pending, unreadable, { id, key: pos, error });
		}
	}
	const t = newest ? await list.dateOf(idOf(newest.item) as string) : undefined;
	return {
		resources: byCreation(resources),
		state: scanState(fingerprint, pending, {
			edge,
			at: newest ? newest.pos + 1 : 0,
			...(order ? { order } : {}),
			...(t === undefined ? {} : { t }),
		}),
		unreadable,
	};
}

/**
 * The list's order from dates: the first and the last item of page 1 read by id, then (equal or
 * unreadable dates) the last item of the last page. Undefined when nothing tells (one item).
 */
async function orderFromDates(list: EventList, pages: Pages): Promise<ListOrder | undefined> {
	const first = await pages.get(1);
	const ids = first.results.map(idOf).filter((id): id is string => id !== undefined);
	if (ids.length < 2 && !first.next) return undefined;
	const dateOf = async (id: string) => await list.dateOf(id);
	const a = await dateOf(ids[0]);
	let b = ids.length > 1 ? await dateOf(ids[ids.length - 1]) : undefined;
	if ((a === undefined || b === undefined || a === b) && first.next && first.count !== undefined) {
		const last = await pages.get(Math.max(2, Math.ceil(first.count / pages.size)));
		const lastId = [...last.results]
			.reverse()
			.map(idOf)
			.find((id) => id !== undefined);
		if (lastId) b = await dateOf(lastId);
	}
	if (a === undefined || b === undefined || a === b) return undefined;
	return a > b ? 'newest-first' : 'oldest-first';
}

/**
 * Activation when the list's order cannot be told (every date read the same, e.g. extractions
 * created in one batch): the state names both ends as listed (`front`, `back`) and how many were
 * listed (`at`); unfinished extractions are followed by their place as listed. The next poll that
 * finds new extractions at one end learns the order from it (`newEnd`). With Include Existing Since
 * (or `-Infinity`: a list that was empty, everything listed is new), every page is read and the
 * final extractions created since then fire.
 *
 * @throws NodeOperationError when everything must be read and the list has more than
 *   `MAX_TIE_PAGES` pages
 */
async function activateUnknown(
	env: PollEnv,
	list: EventList,
	pages: Pages,
	since: number | undefined,
	fingerprint: string,
	pending: MarkSet,
): Promise<PollOutcome<ScanState>> {
	const { spec } = env;
	const first = await pages.get(1);
	const size = pages.size;
	const listed: Array<{ item: IDataObject; index: number }> = first.results.map((item, index) => ({
		item,
		index,
	}));
	let lastN = 1;
	let last = first;
	if (since !== undefined) {
		for (let n = 2; last.next && last.results.length > 0; n++) {
			if (n > MAX_TIE_PAGES)
				throw new NodeOperationError(
					env.node,
					`The ${spec.listName.toLowerCase()} list has more than ${MAX_TIE_PAGES} pages of extractions in no order the trigger can tell`,
					{
						description:
							'Every extraction listed has the same created_at. Narrow the trigger with a filter, or remove Include Existing Since.',
					},
				);
			const page = await pages.get(n);
			if (page.results.length === 0) break;
			lastN = n;
			last = page;
			page.results.forEach((item, index) => listed.push({ item, index: (n - 1) * size + index }));
		}
	} else if (first.next) {
		let n = Math.max(2, Math.ceil((first.count ?? 0) / size));
		let page = await pages.get(n);
		for (let read = 0; page.next && page.results.length > 0 && read < MAX_POLL_PAGES; read++)
			page = await pages.get(++n);
		while (page.results.length === 0 && n > 2) page = await pages.get(--n);
		lastN = n;
		last = page;
		page.results.forEach((item, index) => listed.push({ item, index: (n - 1) * size + index }));
	}
	const ids = (items: IDataObject[]) =>
		items.map(idOf).filter((id): id is string => id !== undefined);
	for (const { item, index } of listed)
		if (idOf(item) !== undefined && !isFinal(spec, item.status))
			pending.add(markOf(idOf(item) as string, index));
	const resources: IDataObject[] = [];
	const unreadable: Unreadable[] = [];
	if (since !== undefined) {
		const final = [
			...new Map(
				listed
					.filter(
						({ item }) =>
							idOf(item) !== undefined && isFinal(spec, item.status) && fires(spec, item.status),
					)
					.map(({ item, index }) => [idOf(item) as string, index]),
			).entries(),
		];
		// Within the poll's room; a list that was empty (everything new): the rest is followed by
		// its place as listed and fires from the next poll on.
		const candidates = (
			since === -Infinity ? final.slice(0, MAX_FIRING_PER_POLL) : final.slice(-MAX_FIRING_PER_POLL)
		).map(([id]) => id);
		if (since === -Infinity)
			for (const [id, index] of final.slice(MAX_FIRING_PER_POLL)) pending.add(markOf(id, index));
		const read = await list.jobs(candidates);
		for (const job of read.values())
			if (
				job &&
				fires(spec, job.status) &&
				(since === -Infinity || (timestampMs(job.created_at) ?? -Infinity) >= since)
			)
				resources.push(job);
		// One whose read failed is followed by its place as listed (`readFailed`).
		const places = new Map(final);
		for (const id of candidates) {
			const error = list.failed.get(id);
			if (error !== undefined)
				readFailed(pending, unreadable, { id, key: places.get(id) as number, error });
		}
	}
	return {
		resources: byCreation(resources),
		unreadable,
		state: scanState(fingerprint, pending, {
			edge: [],
			front: ids(first.results).slice(0, EDGE_SIZE),
			back: ids(last.results).slice(-EDGE_SIZE),
			at: (lastN - 1) * size + last.results.length,
		}),
	};
}

/**
 * For a state whose order is not known yet: the end of the list where new extractions appeared —
 * in front of `front` (newest first; `front` is looked for on the first pages) or after `back`
 * (oldest first; from the page of the last place listed, `at`, on while `next` is set).
 *
 * @returns the order, or undefined when nothing new is listed at either end
 */
async function newEnd(
	env: PollEnv,
	pages: Pages,
	state: ScanState,
): Promise<ListOrder | undefined> {
	const front = state.front ?? [];
	const back = state.back ?? [];
	let frontFound = false;
	for (let n = 1; n <= 2 && !frontFound; n++) {
		const page = await pages.get(n);
		for (let j = 0; j < front.length && !frontFound; j++) {
			const k = page.results.findIndex((item) => idOf(item) === front[j]);
			if (k < 0) continue;
			frontFound = true;
			if ((n - 1) * pages.size + k - j > 0) return 'newest-first';
		}
		if (!page.next) break;
	}
	let n = pages.pageOf(Math.max(0, state.at - 1));
	let page = await pages.get(n);
	while (page.results.length === 0 && n > 1) page = await pages.get(--n);
	let after: number | undefined;
	for (let read = 0; read <= MAX_POLL_PAGES && !outOfTime(env); read++) {
		let lastBack = -1;
		page.results.forEach((item, index) => {
			if (back.includes(idOf(item) ?? '')) lastBack = index;
		});
		if (lastBack >= 0) after = page.results.length - 1 - lastBack;
		else if (after !== undefined) after += page.results.length;
		if (!page.next || page.results.length === 0) break;
		page = await pages.get(++n);
		if (page.results.length === 0) break;
	}
	if (after !== undefined && after > 0) return 'oldest-first';
	// Nothing after the back; the front moved on or was deleted: new ones are in front.
	return frontFound ? undefined : 'newest-first';
}

/** A poll of a state whose order is not known yet that found nothing new: the followed extractions, by their place as listed. */
async function quietUnknown(
	env: PollEnv,
	list: EventList,
	pages: Pages,
	state: ScanState,
	pending: MarkSet,
): Promise<PollOutcome<ScanState>> {
	const frame: Frame = {
		oldestFirst: true,
		posOf: (n, index) => (n - 1) * pages.size + index,
		pageOf: (pos) => pages.pageOf(Math.max(0, pos)),
	};
	const resolved = await checkFollowed(env, pages, pending, frame, new Set());
	const read = await list.jobs(resolved.map((entry) => entry.id));
	const resources: IDataObject[] = [];
	const unreadable: Unreadable[] = [];
	for (const entry of resolved) {
		const error = list.failed.get(entry.id);
		const job = read.get(entry.id);
		if (error !== undefined) readFailed(pending, unreadable, { ...entry, key: entry.pos, error });
		else if (job && !isFinal(env.spec, job.status)) pending.add(markOf(entry.id, entry.pos));
		else if (job && fires(env.spec, job.status)) resources.push(job);
	}
	return {
		resources: byCreation(resources),
		state: { ...state, pending: packMarks(pending.values()) },
		unreadable,
	};
}

/** The error of a poll that could not find where the last one stopped (see `pollScan`). */
function lostEdgeError(env: PollEnv, state: ScanState): NodeOperationError {
	return new NodeOperationError(
		env.node,
		`The trigger could not find where it stopped in the ${env.spec.listName.toLowerCase()} list`,
		{
			description: `None of the ${state.edge.length} extractions it handled last is listed any more (deleted), and the list's dates did not show where they were. Extractions created since the last poll may not have fired: check them with Extraction → Get Many. The trigger goes on from the newest extraction.`,
		},
	);
}
