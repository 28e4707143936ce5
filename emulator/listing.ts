/**
 * List endpoints, shared by both families: page-number pagination with the envelope of
 * §v0-2.5 / §unversioned-2.4, the `search` matcher and the created_at range filter
 * (§v0-4.2, §v0-4.6).
 */
import { queryValue, type RequestContext } from './context';
import { readPositiveInt } from './fields';
import { ErrorBag, HttpError, json, type Reply } from './http';

export const DEFAULT_PAGE_SIZE = 20;
/** Larger `size` values are clamped (Django REST framework's max_page_size); the maximum is "not shown". */
export const MAX_PAGE_SIZE = 100;

export interface Page<T> {
	count: number;
	next: string | null;
	previous: string | null;
	results: T[];
}

/**
 * One page of `items` (already filtered and ordered). `page` (default 1) and `size` (default 20,
 * clamped to the emulator's max page size, 100 unless set) must be positive integers, else 400 with field errors; a page past the end gives
 * 404 `{"detail": "Invalid page."}` like Django REST framework (page 1 of an empty list is valid).
 * `items` come newest first; with the list order `oldest-first` (`Emulator.setListOrder`) they are
 * paged in reverse.
 * `next` / `previous` are absolute URLs: the same query with another page (no `page` for page 1).
 * Only the page's items are rendered (`render`), so a page of a long list costs its own size.
 *
 * List quirks (`Emulator.setListQuirks`, "not shown" in §v0-2.5 / §v0-8 / §unversioned-2.4 /
 * §unversioned-8): `pageSize` replaces the page size whatever `size` asks (`size` is still
 * validated); `countCap` caps the envelope's `count` while the pages, `next` and `previous` follow the
 * real list.
 */
function paginate<T, R>(
	req: RequestContext,
	items: T[],
	render: (item: T) => R,
	errors = new ErrorBag(),
): Page<R> {
	const page = readPositiveInt(req.query, 'page', errors) ?? 1;
	const asked = Math.min(
		readPositiveInt(req.query, 'size', errors) ?? DEFAULT_PAGE_SIZE,
		req.maxPageSize,
	);
	errors.throwIfAny();
	const quirks = req.listQuirks;
	const size = quirks.pageSize ?? asked;
	const total = items.length;
	const pages = Math.max(1, Math.ceil(total / size));
	if (page > pages) throw new HttpError(404, { detail: 'Invalid page.' });
	const link = (n: number): string => {
		const params = new URLSearchParams();
		for (const [k, v] of Object.entries(req.query)) {
			if (k === 'page') continue;
			for (const one of Array.isArray(v) ? v : [v]) params.append(k, one);
		}
		if (n > 1) params.set('page', String(n));
		const qs = params.toString();
		return `${req.baseUrl}${req.path}${qs ? `?${qs}` : ''}`;
	};
	// Routes order items newest first; the emulator's list order may reverse that (§v0-8, not shown).
	const reversed = req.listOrder === 'oldest-first';
	const results: R[] = [];
	for (let k = (page - 1) * size, end = Math.min(page * size, total); k < end; k++)
		results.push(render(items[reversed ? total - 1 - k : k]));
	const count = quirks.countCap !== undefined ? Math.min(total, quirks.countCap) : total;
	return {
		count,
		next: page < pages ? link(page + 1) : null,
		previous: page > 1 ? link(page - 1) : null,
		results,
	};
}

/** A filter of a list: a test of a record, or a falsy value for a filter the request does not ask. */
export type ListFilter<T> = ((record: T) => boolean) | false | '' | undefined;

/**
 * A list answer (§v0-2.5, §unversioned-2.4): the records newest first, those every filter keeps,
 * one page of them rendered. Filters run before any rendering (a long list costs its page); `errors`
 * holds the filters' invalid query parameters, reported with the paging's (400).
 */
export function listReply<T extends { seq: number }, R>(
	req: RequestContext,
	records: Iterable<T>,
	render: (record: T) => R,
	filters: Array<ListFilter<T>> = [],
	errors = new ErrorBag(),
): Reply {
	const tests = filters.filter((f): f is (record: T) => boolean => typeof f === 'function');
	const all = newestFirst(records);
	const items = tests.length === 0 ? all : all.filter((r) => tests.every((test) => test(r)));
	return json(200, paginate(req, items, render, errors));
}

/**
 * Newest first: by creation sequence (`seq`), never by `created_at`, so ties cannot occur and a
 * record keeps its place whatever the clocks say (as a service ordering by primary key). The stores'
 * maps hold records in creation order, so this is a reversal unless a record is out of place.
 */
function newestFirst<T extends { seq: number }>(items: Iterable<T>): T[] {
	const out = Array.from(items);
	for (let i = 1; i < out.length; i++)
		if (out[i - 1].seq > out[i].seq) return out.sort((a, b) => b.seq - a.seq);
	return out.reverse();
}

/** `search` (§v0-4.2, §v0-4.6, §unversioned-4.1): a case-insensitive substring of any of a record's `texts`. */
export function searchFilter<T>(
	req: RequestContext,
	texts: (record: T) => Array<string | null | undefined>,
): ListFilter<T> {
	const needle = queryValue(req.query, 'search')?.toLowerCase();
	return (
		!!needle &&
		((r) => texts(r).some((h) => typeof h === 'string' && h.toLowerCase().includes(needle)))
	);
}

/** The values of a metadata object as strings, for `search` (§v0-4.2 "matches filename and metadata values"). */
export function metadataValues(metadata: Record<string, unknown> | null | undefined): string[] {
	return Object.values(metadata ?? {}).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
}

const ISO_DATE_TIME =
	/^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * `created_at_after` / `created_at_before` (§v0-4.2, §v0-4.6): ISO 8601 date-times, inclusive
 * bounds; a value without a time zone is read as UTC; invalid → 400 "Enter a valid date/time.".
 * Returns a test of a record's `created_at` (epoch ms, the service's clock), or `undefined` when no
 * bound is given or the list quirk `ignoreDateFilter` is on (the bounds are still validated).
 */
export function readCreatedRange(
	req: RequestContext,
	errors: ErrorBag,
): ListFilter<{ createdAt: number }> {
	const query = req.query;
	const bound = (name: string): number | undefined => {
		const raw = queryValue(query, name);
		if (raw === undefined || raw === '') return undefined;
		const text = raw.trim();
		const utc = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(text) || !text.includes(':') ? text : `${text}Z`;
		// Date.parse keeps milliseconds: the microseconds of a six-digit fraction are added back.
		const micros = /\.\d{3}(\d{1,3})/.exec(text)?.[1] ?? '';
		const ms = ISO_DATE_TIME.test(text)
			? Date.parse(utc.replace(' ', 'T')) + (micros ? Number(micros.padEnd(3, '0')) / 1000 : 0)
			: NaN;
		if (Number.isNaN(ms)) errors.add(name, 'Enter a valid date/time.');
		return Number.isNaN(ms) ? undefined : ms;
	};
	const after = bound('created_at_after');
	const before = bound('created_at_before');
	if (req.listQuirks.ignoreDateFilter || (after === undefined && before === undefined))
		return undefined;
	return ({ createdAt }) =>
		(after === undefined || createdAt >= after) && (before === undefined || createdAt <= before);
}
