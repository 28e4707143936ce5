import type { IDataObject } from 'n8n-workflow';

import type { ListPage } from '../../shared/transport';
import { fires, isFinal } from './events';
import {
	EventList,
	MAX_FIRING_PER_POLL,
	MAX_READ_FAILURES,
	byCreation,
	idOf,
	outOfTime,
	timestampMs,
	type PollEnv,
} from './lists';
import { byHash, hashId, markOf, packMarks, unpackMarks, type Mark } from './marks';
import { STATE_VERSION, type ScanState } from './state';
import { MARGIN_MS, MAX_WINDOW_PAGES, type PollOutcome } from './window';

/**
 * Extraction Finished / Failed: `docs/service-api.md` §trigger points 14–20 (the numbers in the
 * comments below). New extractions are found between an end of `GET /extract/` and the first
 * extraction remembered as old at that end.
 */

/** Old extractions remembered at each end of what a poll read (where the next poll stops reading). */
export const MAX_OLD = 100;

/** Most extractions the head keeps at each end: a quiet poll makes ≤ 10 list requests (9 + 1 pages). */
export const MAX_HEAD = 800;

/** Most unfinished extractions followed by id (the rest stay pending, met in the list). */
export const MAX_FOLLOW = 200;

/** An extraction's read in this poll: where it stands and what the state knew of it. */
interface Met {
	id: string;
	item: IDataObject;
	/** The state's mark of it, if any, and which set held it. */
	known?: { set: 'head' | 'pending' | 'old'; mark: Mark };
	/** In front: met before the first `old` one from its end (§trigger 14). */
	front: boolean;
	/** Unknown, and listed before a handled one at its end: new whatever its date (§trigger 15). */
	fresh?: boolean;
	/** After this poll: handled (final), unfinished, unhandled (read failed or waits), gone (404, or followed). */
	outcome?: 'handled' | 'unfinished' | 'unhandled' | 'gone';
	/** When the trigger first met it (epoch ms, n8n's clock): its mark's key. */
	at: number;
	/** Its end (0: read from page 1, 1: from the last page): the one it is new from, if either. */
	end: 0 | 1;
}

/** The pages of the list as one poll reads them (each at most once). */
class Pages {
	private readonly cache = new Map<number, ListPage>();

	constructor(
		private readonly list: EventList,
		private readonly env: PollEnv,
	) {}

	/** Page `n` (past the end: an empty page). */
	async get(n: number): Promise<ListPage> {
		if (!this.cache.has(n)) this.cache.set(n, await this.list.pageOrEmpty({}, n));
		return this.cache.get(n) as ListPage;
	}

	/**
	 * The number of the list's last page (1 for an empty list): guessed from `count`, checked by
	 * doubling and halving (a page with `next` is not the last, an empty one is past it).
	 */
	async last(): Promise<number> {
		const first = await this.get(1);
		if (!first.next) return 1;
		let below = 1; // a page with more after it
		let above = Infinity; // an empty page
		let n = Math.max(2, Math.ceil((first.count ?? 0) / Math.max(1, first.results.length)));
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
 * One poll of an extraction event (§trigger 14–18); without a state, an activation (with Include
 * Existing Since, `since` in epoch ms, the final ones created at or after it fire).
 *
 * @returns what fires (read by id, oldest first), the next state, and jobs given up
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
		head: byHash(unpackMarks(state?.head)),
		pending: byHash(unpackMarks(state?.pending)),
		old: byHash(unpackMarks(state?.old)),
	};
	// The newest `created_at` read (§trigger 15: what decides where the list's order cannot).
	let edge = state ? state.edge : 0;
	const recent = (created: number | undefined) =>
		created !== undefined && (state ? created >= edge - MARGIN_MS : created >= (since ?? Infinity));
	const knownOf = (id: string): Met['known'] => {
		for (const set of ['pending', 'head', 'old'] as const) {
			const mark = sets[set].get(hashId(id));
			if (mark) return { set, mark };
		}
		return undefined;
	};

	// At activation nothing is known or old: the whole list is read (§trigger 18).
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

	// 1. Followed extractions, by id (§trigger 17).
	const fired: IDataObject[] = [];
	const following = new Set(state?.follow ?? []);
	const followed = await list.followed([...following]);
	const follow = followed.follow;
	for (const job of followed.final.values()) if (fires(spec, job.status)) fired.push(job);
	const stillFollowed = new Set(follow);

	// 2. What the list showed, deepest (oldest) first (§trigger 15–16).
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

	// 3. The next state (§trigger 17).
	const next = { head: [] as Mark[], pending: [] as Mark[], old: [] as Mark[] };
	// A loop, not Math.max(...): a read of 1,000 pages holds more values than a call takes.
	let newest = 0;
	for (const met of all) if (met.front && met.outcome !== 'gone') newest = Math.max(newest, met.at);
	const placed = new Set<Met>();
	read.ends.forEach((sequence, e) => {
		const own = sequence.filter((met) => met.end === e);
		// The head: at activation empty (what exists is old); after a read cut short, all it read.
		const cut = own.findIndex(
			(met, i) => i >= MAX_HEAD || !met.front || met.at < newest - MARGIN_MS,
		);
		let zone = !state ? 0 : !read.complete || cut < 0 ? own.length : cut;
		const outcomes = own.map((met) => met.outcome);
		zone = Math.max(zone, outcomes.lastIndexOf('unhandled') + 1);
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
	// The MAX_OLD extractions at each end of the list stay known too (one met from the other end).
	const marked = new Set([...next.head, ...next.pending, ...next.old].map((mark) => mark.hash));
	const byId = new Map(all.map((met) => [met.id, met]));
	const extremes = [
		...(await pages.get(1)).results.slice(0, MAX_OLD),
		...(await pages.get(read.last)).results.slice(-MAX_OLD),
	];
	for (const item of extremes) {
		const met = byId.get(idOf(item) ?? '');
		if (met?.outcome !== 'handled' || marked.has(hashId(met.id))) continue;
		marked.add(hashId(met.id));
		next.old.push(markOf(met.id, met.at));
	}
	// Pending ones not listed: deleted after MAX_READ_FAILURES complete reads (§trigger 16); old
	// ones not met are kept while there is room.
	const metMarks = new Set(all.map((met) => met.known?.mark));
	for (const mark of sets.pending.values()) {
		if (metMarks.has(mark)) continue;
		const misses = (mark.misses ?? 0) + (read.complete ? 1 : 0);
		if (misses < MAX_READ_FAILURES) next.pending.push(misses ? { ...mark, misses } : mark);
	}
	const room = 2 * MAX_OLD - next.old.length;
	if (room > 0)
		next.old.push(
			...[...sets.old.values()]
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

/**
 * Reads both ends of the list (§trigger 14), each until a page holds an `old` extraction, or
 * until the two meet; one met from both ends belongs to the end it is new from, if either. The
 * first page of an end with no known extraction is probed (`isOld`: by its first one's date).
 *
 * @returns per end what it met, from that end inward; whether both ends were read to an `old`
 *   extraction (or the list whole); the number of the last page
 */
async function readEnds(
	env: PollEnv,
	pages: Pages,
	knownOf: (id: string) => Met['known'],
	isOld: (id: string) => Promise<boolean>,
): Promise<{ ends: [Met[], Met[]]; complete: boolean; last: number }> {
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
	// New by where they stand (§trigger 15).
	ends.forEach((sequence, e) => {
		const first = sequence.find((met) => met.known)?.known?.set;
		if (first === 'head' || first === 'pending')
			for (const met of sequence) if (met.end === e && met.front && !met.known) met.fresh = true;
	});
	return { ends, complete, last };
}
