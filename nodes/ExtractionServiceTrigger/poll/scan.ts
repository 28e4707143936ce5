import type { IDataObject } from 'n8n-workflow';

import type { ListPage } from '../../ExtractionService/v1/transport';
import { fires, isFinal } from './events';
import { EventList, MAX_FIRING_PER_POLL, MAX_PENDING_READS, MAX_SCAN_PAGES, PAGE_SIZE, byCreation, idOf, timestampMs, type PollEnv } from './lists';
import { BoundedIds, MAX_KNOWN, MAX_PENDING, STATE_VERSION, type ListOrder, type ScanState } from './state';
import type { PollOutcome } from './window';

/** The list's pages as one poll reads them: the first page, its size and count, and a page cache. */
class ListPages {
	private readonly cache = new Map<number, Promise<ListPage>>();

	private constructor(
		private readonly list: EventList,
		readonly first: ListPage,
		/** Items per page as the service pages (it may cap the size asked for). */
		readonly pageSize: number,
		/** The list's `count`, or the first page's length when it is the only page. */
		readonly count: number | undefined,
	) {
		this.cache.set(1, Promise.resolve(first));
	}

	/** Reads the first page (`§unversioned-4.1`, `§unversioned-2.4`). */
	static async open(list: EventList): Promise<ListPages> {
		const first = await list.page({}, 1);
		const pageSize = first.next ? Math.max(1, first.results.length) : Math.max(PAGE_SIZE, first.results.length);
		const count = first.count ?? (first.next ? undefined : first.results.length);
		return new ListPages(list, first, pageSize, count);
	}

	/** The number of the last page, when the count is known. */
	get last(): number | undefined {
		return this.count === undefined ? undefined : Math.max(1, Math.ceil(this.count / this.pageSize));
	}

	/** The page holding position `offset`, counted from the list's oldest end, by this poll's count. */
	pageAt(order: 'newest-first' | 'oldest-first', offset: number): number {
		const count = this.count ?? 0;
		return order === 'newest-first' ? Math.floor((count - 1 - offset) / this.pageSize) + 1 : Math.floor(offset / this.pageSize) + 1;
	}

	/** Whether page `n` was already asked for in this poll (reading it again costs no request). */
	has(n: number): boolean {
		return this.cache.has(n);
	}

	/** Page `n` (read once per poll; past the end: an empty page). */
	async get(n: number): Promise<ListPage> {
		let page = this.cache.get(n);
		if (!page) {
			page = this.list.pageOrEmpty({}, n, PAGE_SIZE);
			this.cache.set(n, page);
		}
		return await page;
	}
}

/**
 * A poll of Extraction Finished / Failed: `GET /extract/` (`§unversioned-4.1`), with the user's
 * filters. Its items have `status` and `error` but no data (`§unversioned-2.2`), so each extraction
 * that fires is read by id (`§unversioned-4.3`) and output like Extraction → Get.
 *
 * How "new" is decided: by ids and by position, because this list has no date filter and its items
 * carry no date.
 * - `known` holds the final extractions already handled (fired, final without firing, or there at
 *   activation; the newest `MAX_KNOWN`), `pending` those seen unfinished. Every final id not in
 *   `known` fires if its status does, and becomes known; an unknown unfinished id is followed.
 *   Items seen twice (pages shifting under the poll as extractions are created) are one id.
 * - Positions are counted from the list's *oldest* end (offset 0 = the oldest extraction), where new
 *   extractions do not move anything. `count` in the state is the boundary: every extraction below
 *   that offset has been handled. Each poll reads the page holding the boundary (the newest page when
 *   nothing was added), goes to older pages while a page still holds unknown ids (extractions deleted
 *   meanwhile moved the boundary down), then reads pages towards the newest end — at most
 *   `MAX_SCAN_PAGES` pages a poll, and no further page once `MAX_FIRING_PER_POLL` extractions are
 *   to fire (each is read by id, which must end inside n8n's poll budget). The new boundary is where the pages read stop being contiguous
 *   (each page's offsets are computed from the `count` that page came with), so a backlog larger than
 *   one poll is read by the next polls, oldest first, and a page that shifted under the poll is read
 *   again next time.
 * - A followed extraction not met on the pages read is read by id (at most `MAX_PENDING_READS` a
 *   poll, in turn) and fires when it has finished; a 404 forgets it. When more are followed than
 *   that (a burst seen unfinished), their pages are read again first, from where the oldest of them
 *   was last listed (`pendingFrom`) towards the newest end, while more than `MAX_PENDING_READS`
 *   remain unmet (at most `MAX_SCAN_PAGES` more pages): a burst of a few hundred then fires on the
 *   first poll after it finished, not `MAX_PENDING_READS` a poll. Only followed ids count on those
 *   pages: below the boundary, an id no longer in `known` (forgotten by its bound) must not fire
 *   again. Extractions deleted meanwhile move the followed ones to older positions than remembered;
 *   those are still read by id.
 * - Which end is the newest is not shown by the reference (the emulator lists newest first). The
 *   poll learns it from the list itself: it reads by id the first item of the first page and the
 *   last item of the last page and compares their `created_at` (`§unversioned-2.1`). Until that
 *   tells (fewer than two extractions, equal dates, or no `count`), each poll reads both ends until a
 *   page holds no unknown id.
 * - Activation reads the newest end (`MAX_SCAN_PAGES` pages; both ends while the order is unknown)
 *   and sets the boundary at the list's `count`: final extractions there become known without firing
 *   — no history is replayed — and unfinished ones are followed, so they fire when they finish. With
 *   Include Existing Since, the final ones read there whose `created_at` is at or after that date
 *   fire.
 *
 * @param state the previous state, or undefined at activation (or after a configuration change)
 * @param since epoch ms of Include Existing Since, if set (used at activation only)
 * @returns the extractions that fire (read by id, oldest first) and the next state
 * @throws NodeApiError for any failed request (the caller then keeps the previous state)
 */
export async function pollScan(env: PollEnv, state: ScanState | undefined, since: number | undefined, fingerprint: string): Promise<PollOutcome<ScanState>> {
	const { spec } = env;
	const list = new EventList(env);
	const pages = await ListPages.open(list);
	const activation = !state;
	const order = state?.order === 'newest-first' || state?.order === 'oldest-first' ? state.order : await detectOrder(list, pages);
	const known = new BoundedIds(state?.known ?? [], MAX_KNOWN);
	const tracked = new BoundedIds(state?.pending ?? [], MAX_PENDING);

	const met = new Set<string>();
	const finals = new Map<string, IDataObject>();
	const newlyKnown: string[] = [];

	/** Sorts one listed item; returns whether its id was unknown before this poll. */
	const visit = (item: IDataObject): boolean => {
		const id = idOf(item);
		if (id === undefined || met.has(id)) return false;
		met.add(id);
		if (known.has(id)) return false;
		const unknown = !tracked.has(id);
		if (isFinal(spec, item.status)) {
			tracked.delete(id);
			if (fires(spec, item.status)) finals.set(id, item);
			else newlyKnown.push(id);
		} else if (unknown) {
			tracked.add(id);
		}
		return unknown;
	};

	/** Where each listed id sits, counted from the oldest end (to remember ids oldest first). */
	const offsets = new Map<string, number>();
	/** Records where the items of page `n` sit (each page's offsets by the `count` it came with). */
	const place = (n: number, page: ListPage): void => {
		page.results.forEach((item, index) => {
			const id = idOf(item);
			const front = (n - 1) * pages.pageSize + index;
			if (id !== undefined && order !== 'unknown') offsets.set(id, order === 'oldest-first' ? front : (page.count ?? pages.count ?? 0) - 1 - front);
		});
	};
	let budget = MAX_SCAN_PAGES;
	const readsById = !activation || since !== undefined;
	/**
	 * Reads page `n` (once per poll) and sorts its items; undefined past either end, when the page
	 * budget is spent, or once `MAX_FIRING_PER_POLL` extractions are to be read by id.
	 */
	const read = async (n: number): Promise<{ page: ListPage; hadUnknown: boolean } | undefined> => {
		if (n < 1 || (pages.last !== undefined && n > pages.last) || budget <= 0) return undefined;
		if (readsById && finals.size >= MAX_FIRING_PER_POLL) return undefined;
		budget--;
		const page = await pages.get(n);
		place(n, page);
		return { page, hadUnknown: page.results.map(visit).some(Boolean) };
	};
	/** Reads pages from `start` by `step` while `more` says so, the list goes on, and the budget lasts. */
	const walk = async (start: number, step: 1 | -1, more: (hadUnknown: boolean) => boolean): Promise<void> => {
		for (let n = start; ; n += step) {
			const answer = await read(n);
			if (!answer || answer.page.results.length === 0 || (step === 1 && !answer.page.next) || !more(answer.hadUnknown)) return;
		}
	};

	let boundary = pages.count ?? 0;
	if (activation) {
		if (order !== 'oldest-first') await walk(1, 1, () => true);
		budget = MAX_SCAN_PAGES;
		if (order !== 'newest-first') await walk(pages.last ?? 1, -1, () => true);
	} else if (order === 'unknown') {
		await walk(1, 1, (hadUnknown) => hadUnknown);
		budget = MAX_SCAN_PAGES;
		await walk(pages.last ?? 1, -1, (hadUnknown) => hadUnknown);
	} else {
		boundary = await sweep(pages, order, Math.min(state?.count ?? 0, pages.count ?? 0), read);
	}

	// More followed extractions not met than a poll reads by id: their pages, from the oldest on.
	if (!activation && order !== 'unknown' && state?.pendingFrom !== undefined) {
		const unmet = () => tracked.values().filter((id) => !met.has(id)).length;
		const newer = order === 'newest-first' ? -1 : 1;
		let pageBudget = MAX_SCAN_PAGES;
		for (let n = pages.pageAt(order, Math.min(state.pendingFrom, Math.max(0, (pages.count ?? 0) - 1))); n >= 1 && n <= (pages.last ?? 1); n += newer) {
			if (unmet() <= MAX_PENDING_READS || finals.size >= MAX_FIRING_PER_POLL) break;
			if (!pages.has(n) && pageBudget-- <= 0) break;
			const page = await pages.get(n);
			place(n, page);
			for (const item of page.results) if (tracked.has(idOf(item) as string)) visit(item);
		}
	}

	// Followed extractions not met on the pages read: read by id, least recently checked first.
	const toCheck = activation ? [] : tracked.values().filter((id) => !met.has(id)).slice(0, MAX_PENDING_READS);
	const checked = await list.jobs(toCheck);
	for (const id of toCheck) {
		const job = checked.get(id);
		if (job && !isFinal(spec, job.status)) {
			tracked.add(id); // still unfinished: checked again after the others
			continue;
		}
		tracked.delete(id);
		if (!job || known.has(id)) continue;
		if (fires(spec, job.status)) finals.set(id, job);
		else newlyKnown.push(id);
	}

	// The extractions that fire, read by id (the list items carry no data).
	let resources: IDataObject[] = [];
	const firing = [...finals.keys()];
	if (readsById) {
		const full = await list.jobs(firing.filter((id) => !checked.get(id)));
		for (const id of firing) {
			const job = checked.get(id) ?? full.get(id);
			if (!job || !fires(spec, job.status)) continue;
			if (activation && (timestampMs(job.created_at) ?? -Infinity) < (since as number)) continue;
			resources.push(job);
		}
		resources = byCreation(resources);
	}
	// Known from now on, oldest first (ids read by id last), so the bound forgets the oldest first.
	const position = (id: string) => offsets.get(id) ?? Infinity;
	for (const id of [...newlyKnown, ...firing].sort((a, b) => position(a) - position(b))) known.add(id);

	const pending = tracked.toArray();
	const pendingFrom = oldestPosition(pending, offsets, met, state?.pendingFrom);
	return {
		resources,
		state: { v: STATE_VERSION, strategy: 'scan', fingerprint, order, count: boundary, known: known.toArray(), pending, ...(pendingFrom === undefined ? {} : { pendingFrom }) },
	};
}

/**
 * Where the oldest followed extraction sits (from the list's oldest end): the lowest position
 * listed in this poll among `pending`, and the previous `pendingFrom` while some followed id was not
 * listed in this poll (its position is not known anew).
 *
 * @returns undefined when nothing is followed, or no position is known
 */
function oldestPosition(pending: string[], offsets: Map<string, number>, met: Set<string>, previous: number | undefined): number | undefined {
	let lowest: number | undefined;
	for (const id of pending) {
		const at = met.has(id) ? offsets.get(id) : previous;
		if (at !== undefined && (lowest === undefined || at < lowest)) lowest = at;
	}
	return lowest;
}

/** A page as read: its items and the `count` it came with. */
type Read = (n: number) => Promise<{ page: ListPage; hadUnknown: boolean } | undefined>;

/**
 * Reads the list from the boundary (an offset from the oldest end: every extraction below it was
 * handled) towards the newest end, as far as the page budget of `read` lasts (see `pollScan`).
 *
 * 1. The page holding the boundary (the newest page when the list did not grow).
 * 2. While the page read holds an unknown id, the next older page: extractions deleted below the
 *    boundary moved unknown ones below it. It stops at a page of only known ids.
 * 3. From the oldest page read that held an unknown id, the pages towards the newest end.
 *
 * @returns the new boundary: the end of the run of offsets covered without a hole from the old
 *   boundary on (each page's offsets computed from the `count` it came with)
 */
async function sweep(pages: ListPages, order: 'newest-first' | 'oldest-first', from: number, read: Read): Promise<number> {
	const count = pages.count ?? 0;
	if (count === 0) return 0;
	const size = pages.pageSize;
	const pageOf = (offset: number): number => pages.pageAt(order, offset);
	/** Page `n` covers these offsets, by the count it came with: [lowest, highest]. */
	const offsetsOf = (n: number, page: ListPage): [number, number] => {
		const total = page.count ?? count;
		const first = (n - 1) * size;
		const lastIndex = first + page.results.length - 1;
		return order === 'newest-first' ? [total - 1 - lastIndex, total - 1 - first] : [first, lastIndex];
	};
	const newer = order === 'newest-first' ? -1 : 1;
	const covered: Array<[number, number]> = [];

	let start = pageOf(Math.min(from, count - 1));
	let answer = await read(start);
	if (!answer) return from;
	if (answer.page.results.length > 0) covered.push(offsetsOf(start, answer.page));
	// 2. Older pages while unknown ids show up.
	for (let older = start - newer; answer?.hadUnknown; older -= newer) {
		const olderAnswer = await read(older);
		if (!olderAnswer || olderAnswer.page.results.length === 0) break;
		covered.push(offsetsOf(older, olderAnswer.page));
		if (!olderAnswer.hadUnknown) break;
		start = older;
		answer = olderAnswer;
	}
	// 3. Towards the newest end.
	for (let n = start + newer; n >= 1 && n <= (pages.last ?? 1); n += newer) {
		const newerAnswer = await read(n);
		if (!newerAnswer || newerAnswer.page.results.length === 0) break;
		covered.push(offsetsOf(n, newerAnswer.page));
	}
	// The new boundary: from the old one, as far as the covered offsets run without a hole. A page
	// that shifted under the poll (extractions created meanwhile) leaves a hole: read next time.
	let boundary = from;
	for (const [low, high] of covered.sort((a, b) => a[0] - b[0])) if (low <= boundary) boundary = Math.max(boundary, high + 1);
	return boundary;
}

/**
 * Which end of the list is the newest: the `created_at` of the first item of the first page and of
 * the last item of the last page, each read by id (`§unversioned-4.3`; the list items have no
 * date). `unknown` when the list has fewer than two items, the two dates are equal or unreadable, or
 * either extraction is gone; the next poll tries again.
 */
async function detectOrder(list: EventList, pages: ListPages): Promise<ListOrder> {
	const first = pages.first.results.find((item) => idOf(item) !== undefined);
	const lastPage = pages.last === undefined ? undefined : await pages.get(pages.last);
	const last = lastPage ? [...lastPage.results].reverse().find((item) => idOf(item) !== undefined) : undefined;
	if (!first || !last || idOf(first) === idOf(last)) return 'unknown';
	const read = await list.jobs([idOf(first) as string, idOf(last) as string]);
	const firstMs = timestampMs(read.get(idOf(first) as string)?.created_at);
	const lastMs = timestampMs(read.get(idOf(last) as string)?.created_at);
	if (firstMs === undefined || lastMs === undefined || firstMs === lastMs) return 'unknown';
	return firstMs > lastMs ? 'newest-first' : 'oldest-first';
}
