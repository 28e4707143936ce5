import type { IDataObject } from 'n8n-workflow';

import type { ListPage } from '../../shared/transport';
import { fires, isFinal } from './events';
import {
	EventList,
	MAX_FIRING_PER_POLL,
	MAX_READ_FAILURES,
	PAGE_SIZE,
	byCreation,
	idOf,
	outOfTime,
	timestampMs,
	type PollEnv,
} from './lists';
import { MarkSet, markOf, packMarks, unpackMarks, type Mark } from './marks';
import { STATE_VERSION, type ScanState } from './state';
import { MARGIN_MS, MAX_WINDOW_PAGES, type PollOutcome } from './window';

/**
 * Extraction Finished / Failed: `docs/service-api.md` §trigger points 14–20, which this file
 * follows (point numbers in the comments below). `GET /extract/` (§unversioned-4.1) has no date
 * filter, its items no date, and no order is shown: new extractions are found between an end of
 * the list and the first extraction remembered as old at that end.
 */

/** Old extractions remembered at each end of what a poll read (where the next poll stops reading). */
export const MAX_OLD = 100;

/**
 * Most extractions the head keeps at each end: a quiet poll reads the head's pages and the one
 * after at the new end (9 of 100) and one page at the other: ≤ 10 list requests (issue 31).
 */
export const MAX_HEAD = 800;

/** Most unfinished extractions followed by id (the rest stay pending, met in the list): the state stays small. */
export const MAX_FOLLOW = 200;

/** An extraction's read in this poll: where it stands and what the state knew of it. */
interface Met {
	id: string;
	item: IDataObject;
	/** The state's mark of it, if any, and which set held it. */
	known?: { set: 'head' | 'pending' | 'old'; mark: Mark };
	/** Met before the first remembered old extraction from its end (so new if unknown). */
	front: boolean;
	/** Unknown, and listed before a handled one at its end: new whatever its date. */
	fresh?: boolean;
	/** After this poll: handled (final), unfinished, unhandled (its read failed or waits), gone (404). */
	outcome?: 'handled' | 'unfinished' | 'unhandled' | 'gone';
	/** When the trigger first met it (epoch ms, n8n's clock): a mark's key. */
	at: number;
	/** The end it belongs to (0: from page 1, 1: from the last page): the one it is new from, if either. */
	end: 0 | 1;
}

/** The pages of the list as one poll reads them (each at most once), and the page size the service uses. */
class Pages {
	private readonly cache = new Map<number, ListPage>();
	size = PAGE_SIZE;

	constructor(
		private readonly list: EventList,
		private readonly env: PollEnv,
	) {}

	/** Page `n` (past the end: an empty page). */
	async get(n: number): Promise<ListPage> {
		const cached = this.cache.get(n);
		if (cached) return cached;
		const page = await this.list.pageOrEmpty({}, n, PAGE_SIZE);
		if (n === 1 && page.next) this.size = Math.max(1, page.results.length);
		this.cache.set(n, page);
		return page;
	}

	/**
	 * The number of the list's last page (the last with items; 1 when the list is empty): guessed
	 * from `count`, then checked — a page with `next` is not the last, an empty one is past it —
	 * by doubling and halving, so a wrong `count` costs a few pages.
	 */
	async last(): Promise<number> {
		const first = await this.get(1);
		if (!first.next) return 1;
		let below = 1; // a page with more after it
		let above = Infinity; // an empty page
		let n = Math.max(2, Math.ceil((first.count ?? 0) / this.size));
		for (let step = 0; step < 64 && !outOfTime(this.env); step++) {
			const page = await this.get(n);
			if (page.results.length === 0) above = n;
			else if (page.next) below = n;
			else return n;
			if (above - below <= 1) return below;
			n = above === Infinity ? n * 2 : Math.floor((below + above) / 2);
		}
		return below;
	}
}

/**
 * One poll of an extraction event (§trigger 14–18): reads both ends, fires what is new or pending
 * and now final (read by id, at most `MAX_FIRING_PER_POLL`), and moves the head. At activation (no
 * state) the whole list is read and nothing fires but, with Include Existing Since (`since`, epoch
 * ms), the final ones created at or after it.
 *
 * @returns the extractions that fire (read by id, oldest first), the next state, and jobs given up
 *   because their read failed `MAX_READ_FAILURES` polls in a row
 * @throws NodeApiError for a failed list request (the caller then keeps the previous state)
 */
export async function pollScan(
	env: PollEnv,
	state: ScanState | undefined,
	since: number | undefined,
	fingerprint: string,
): Promise<PollOutcome<ScanState>> {
	const { spec } = env;
	const list = new EventList(env, state?.fails);
	const pages = new Pages(list, env);
	const sets = {
		head: new MarkSet(unpackMarks(state?.head) ?? []),
		pending: new MarkSet(unpackMarks(state?.pending) ?? []),
		old: new MarkSet(unpackMarks(state?.old) ?? []),
	};
	// The newest `created_at` read (activation: of the extractions at the list's ends). Where a read
	// cannot tell an extraction is new by where it stands (no handled one before it at its end),
	// one created more than 10 minutes before it is not.
	let edge = state ? state.edge : 0;
	const recent = (created: number | undefined) =>
		created !== undefined && (state ? created >= edge - MARGIN_MS : created >= (since ?? Infinity));
	const knownOf = (id: string): Met['known'] => {
		for (const set of ['pending', 'head', 'old'] as const) {
			const mark = sets[set].find(id);
			if (mark) return { set, mark };
		}
		return undefined;
	};

	// At activation nothing is known and nothing is old: the whole list is read from page 1.
	const read = await readEnds(env, pages, knownOf, async (id) => {
		if (!state) return false;
		const created = timestampMs((await list.jobs([id])).get(id)?.created_at);
		return created !== undefined && !recent(created);
	});
	const all = [...new Set([...read.ends[0], ...read.ends[1]])];
	if (!state) {
		// The service's own time: the newer of the two extractions at the list's ends (none: 0).
		const ends = [read.ends[0][0], read.ends[1][0]].filter((met) => met).map((met) => met.id);
		const got = await list.jobs(ends);
		edge = Math.max(0, ...ends.map((id) => timestampMs(got.get(id)?.created_at) ?? 0));
	}

	// 1. Followed extractions, by id (404: deleted).
	const fired: IDataObject[] = [];
	const following = new Set(state?.follow ?? []);
	const follow: string[] = [];
	const followed = await list.jobs([...following]);
	for (const id of following) {
		if (list.failed.has(id)) {
			if (!list.countFailure(id)) follow.push(id);
			continue;
		}
		const job = followed.get(id);
		if (!job) continue;
		if (!isFinal(spec, job.status)) follow.push(id);
		else if (fires(spec, job.status)) fired.push(job);
	}
	const stillFollowed = new Set(follow);

	// 2. What the list showed, deepest first (older), at most MAX_FIRING_PER_POLL reads by id.
	const reading: Met[] = [];
	for (const met of [...all].reverse()) {
		if (following.has(met.id)) {
			// Read by id above: still followed, or handled (marked where it is listed).
			met.outcome = stillFollowed.has(met.id) ? 'gone' : 'handled';
			continue;
		}
		const status = met.item.status;
		const known = met.known?.set;
		if (known === 'head' || known === 'old') met.outcome = 'handled';
		else if (typeof status === 'string' && !isFinal(spec, status)) met.outcome = 'unfinished';
		else if (!met.front && known !== 'pending')
			met.outcome = 'handled'; // old, behind the boundary
		else if (typeof status === 'string' && !fires(spec, status)) met.outcome = 'handled';
		else if (!known && !state && since === undefined)
			met.outcome = 'handled'; // existing at activation
		else if (reading.length < MAX_FIRING_PER_POLL && !outOfTime(env)) reading.push(met);
		else met.outcome = 'unhandled';
	}
	const got = await list.jobs(reading.map((met) => met.id));
	for (const met of reading) {
		if (list.failed.has(met.id)) {
			met.outcome = list.countFailure(met.id) ? 'handled' : 'unhandled';
			continue;
		}
		const job = got.get(met.id);
		const created = timestampMs(job?.created_at);
		if (created !== undefined && state) edge = Math.max(edge, created);
		if (!job) met.outcome = 'gone';
		else if (!isFinal(spec, job.status)) met.outcome = 'unfinished';
		else {
			met.outcome = 'handled';
			if (fires(spec, job.status) && (met.known?.set === 'pending' || met.fresh || recent(created)))
				fired.push(job);
		}
	}

	// 3. The next state: per end, the head (last 10 minutes, at most MAX_HEAD, never short of an
	//    unhandled one), then MAX_OLD old ones; pending ones past the head are followed by id.
	const next = {
		head: [] as Mark[],
		pending: [] as Mark[],
		old: [] as Mark[],
	};
	// A loop, not Math.max(...): a read of 1,000 pages holds more values than a call takes.
	let newest = 0;
	for (const met of all) if (met.front && met.outcome !== 'gone') newest = Math.max(newest, met.at);
	const placed = new Set<Met>();
	read.ends.forEach((sequence, e) => {
		const own = sequence.filter((met) => met.end === e);
		// At activation nothing stays in the head: what exists is old.
		let zone = 0;
		while (
			state &&
			zone < own.length &&
			zone < MAX_HEAD &&
			own[zone].front &&
			own[zone].at >= newest - MARGIN_MS
		)
			zone++;
		if (!read.complete && state) zone = own.length; // a read cut short: nothing leaves the head
		const outcomes = own.map((met) => met.outcome);
		zone = Math.max(zone, outcomes.lastIndexOf('unhandled') + 1);
		// Unfinished ones beyond it are followed by id, as far as MAX_FOLLOW ids; past that they stay pending.
		const beyond = outcomes.slice(zone).filter((outcome) => outcome === 'unfinished').length;
		if (follow.length + beyond > MAX_FOLLOW)
			zone = Math.max(zone, outcomes.lastIndexOf('unfinished') + 1);
		for (const met of own.slice(0, zone)) {
			placed.add(met);
			const mark = markOf(met.id, met.at);
			if (
				met.outcome === 'unfinished' ||
				(met.outcome === 'unhandled' && met.known?.set === 'pending')
			)
				next.pending.push(mark);
			else if (met.outcome === 'handled') next.head.push(mark);
		}
	});
	// Behind each end's head, in the order that end read them: the next MAX_OLD become old.
	for (const sequence of read.ends) {
		let olds = 0;
		for (const met of sequence) {
			if (placed.has(met) || met.outcome === 'gone' || met.outcome === 'unhandled') continue;
			if (met.outcome === 'unfinished') follow.push(met.id);
			else if (olds < MAX_OLD) next.old.push(markOf(met.id, met.at));
			else continue;
			olds += met.outcome === 'unfinished' ? 0 : 1;
			placed.add(met);
		}
	}
	// The MAX_OLD extractions at each end of the list stay known too (a read that met them from the
	// other end, on one page, must not leave them unknown at theirs).
	const marked = new Set([...next.head, ...next.pending, ...next.old].map((mark) => mark.hash));
	const byId = new Map(all.map((met) => [met.id, met]));
	const extremes = [
		...(await pages.get(1)).results.slice(0, MAX_OLD),
		...(await pages.get(read.last)).results.slice(-MAX_OLD),
	];
	for (const item of extremes) {
		const met = byId.get(idOf(item) ?? '');
		if (!met || met.outcome !== 'handled' || marked.has(markOf(met.id, 0).hash)) continue;
		marked.add(markOf(met.id, 0).hash);
		next.old.push(markOf(met.id, met.at));
	}
	// Pending ones not listed: deleted, unless met again within MAX_READ_FAILURES polls (a read
	// while the list changed can miss one); old ones not met are kept while there is room.
	const metMarks = new Set(all.map((met) => met.known?.mark));
	for (const mark of sets.pending.values()) {
		if (metMarks.has(mark)) continue;
		if (!read.complete) {
			next.pending.push(mark); // not reached this time
			continue;
		}
		const misses = (mark.misses ?? 0) + 1;
		if (misses < MAX_READ_FAILURES) next.pending.push({ ...mark, misses });
	}
	const room = 2 * MAX_OLD - next.old.length;
	if (room > 0)
		next.old.push(
			...sets.old
				.values()
				.filter((mark) => !metMarks.has(mark))
				.sort((a, b) => b.key - a.key)
				.slice(0, room),
		);

	const nextState: ScanState = {
		v: STATE_VERSION,
		strategy: 'scan',
		fingerprint,
		edge,
		head: packMarks(next.head),
		pending: packMarks(next.pending),
		old: packMarks(next.old),
		follow: [...new Set(follow)],
		...(Object.keys(list.fails).length > 0 ? { fails: list.fails } : {}),
	};
	return { resources: byCreation(fired), state: nextState, unreadable: list.dropped };
}

/** What a read of the list met: per end, in the order read from that end inward. */
interface ListRead {
	ends: [Met[], Met[]];
	/** Whether both ends were read up to a remembered old extraction, or the list whole. */
	complete: boolean;
	/** The number of the list's last page. */
	last: number;
}

/**
 * Reads from page 1 forwards and from the last page backwards, each until a page holds an
 * extraction remembered as old (`knownOf` gives `old`), or until the two meet. An extraction met
 * from both ends belongs to the end it is new from, if either. The first page of an end with no
 * known extraction is probed: when the first it lists is old by its date (`isOld`), that end
 * stops there, the page behind (the far end of a list whose old extractions were deleted).
 */
async function readEnds(
	env: PollEnv,
	pages: Pages,
	knownOf: (id: string) => Met['known'],
	isOld: (id: string) => Promise<boolean>,
): Promise<ListRead> {
	const now = Date.now();
	const ends: [Met[], Met[]] = [[], []];
	const byId = new Map<string, Met>();
	const probed = new Set<number>();
	const inEnd = [new Set<Met>(), new Set<Met>()];
	/** Reads one page into end `e`'s sequence; true once that end met an old extraction. */
	const walk = async (results: IDataObject[], e: 0 | 1, boundary: boolean): Promise<boolean> => {
		const added: Met[] = [];
		let known = false;
		for (const item of results) {
			const id = idOf(item);
			if (id === undefined) continue;
			const mark = knownOf(id);
			known ||= mark !== undefined;
			if (mark?.set === 'old') boundary = true;
			const earlier = byId.get(id);
			if (earlier) {
				if (inEnd[e].has(earlier)) continue;
				inEnd[e].add(earlier);
				// Met from the other end behind its boundary: it belongs to this end if new from here.
				if (!boundary && !earlier.front) Object.assign(earlier, { front: true, end: e });
				added.push(earlier);
				continue;
			}
			const met: Met = {
				id,
				item,
				known: mark,
				front: !boundary,
				at: mark?.mark.key ?? now,
				end: e,
			};
			byId.set(id, met);
			inEnd[e].add(met);
			added.push(met);
		}
		// One probe an end: once its first page without a known one proved new, the end is new.
		const mine = added.filter((met) => met.end === e);
		if (!known && mine.length > 0 && !probed.has(e) && (probed.add(e), await isOld(mine[0].id))) {
			for (const met of mine) met.front = false;
			boundary = true;
		}
		for (const met of added) ends[e].push(met);
		return boundary;
	};
	let complete = true;
	let n = 1;
	for (let boundary = false; ; n++) {
		const page = await pages.get(n);
		boundary = await walk(page.results, 0, boundary);
		if (boundary || !page.next || page.results.length === 0) break;
		if (n >= MAX_WINDOW_PAGES || outOfTime(env)) {
			complete = false;
			break;
		}
	}
	const last = await pages.last();
	for (let m = Math.max(last, n), boundary = false; m >= n && !boundary; m--) {
		if (last - m >= MAX_WINDOW_PAGES || (m < last && outOfTime(env))) {
			complete = false;
			break;
		}
		boundary = await walk([...(await pages.get(m)).results].reverse(), 1, boundary);
	}
	// New by where they stand: unknown ones before an end's first known one, when that is handled lately.
	ends.forEach((sequence, e) => {
		const first = sequence.find((met) => met.known)?.known?.set;
		if (first === 'head' || first === 'pending')
			for (const met of sequence) if (met.end === e && met.front && !met.known) met.fresh = true;
	});
	return { ends, complete, last };
}
