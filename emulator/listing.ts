/**
 * List endpoints of both families: page-number pagination with the envelope of §v0-2.5 /
 * §unversioned-2.4, `search`, and the created_at range (§v0-4.2, §v0-4.6).
 */
import { readPositiveInt } from './fields';
import { ErrorBag, HttpError, json, type Reply, queryValue, type RequestContext } from './http';

const DEFAULT_PAGE_SIZE = 20;
/** Larger `size` values are clamped (DRF's max_page_size); the maximum is "not shown". */
export const MAX_PAGE_SIZE = 100;

/** A filter of a list: a test, or a falsy value for a filter the request does not ask. */
export type ListFilter<T> = ((record: T) => boolean) | false | '' | undefined;

/**
 * A list answer (§v0-2.5, §unversioned-2.4): the records every filter keeps, newest first by creation
 * sequence (never created_at: no ties whatever the clocks say), reversed under `oldest-first`. A page
 * past the end → 404 "Invalid page." as DRF (page 1 of an empty list is valid); `next` / `previous`
 * are absolute URLs of the same query. Only the page's items are rendered. `filters` reads them from
 * the query and adds its invalid parameters to `errors`, reported with the paging's. List quirks:
 * README.
 */
export function listReply<T extends { seq: number }, R>(
	req: RequestContext,
	records: Iterable<T>,
	render: (record: T) => R,
	filters: (errors: ErrorBag) => Array<ListFilter<T>> = () => [],
): Reply {
	const errors = new ErrorBag();
	const tests = filters(errors).filter((f) => typeof f === 'function');
	const page = readPositiveInt(req.query, 'page', errors) ?? 1;
	const asked = Math.min(
		readPositiveInt(req.query, 'size', errors) ?? DEFAULT_PAGE_SIZE,
		req.maxPageSize,
	);
	errors.throwIfAny();
	// The maps hold creation order: TimSort reverses that one run in linear time.
	const items = Array.from(records)
		.filter((r) => tests.every((test) => test(r)))
		.sort((a, b) => b.seq - a.seq);
	if (req.listOrder === 'oldest-first') items.reverse();
	const { countCap, countOffset = 0, itemFields, pageSize = asked } = req.listQuirks;
	const pages = Math.max(1, Math.ceil(items.length / pageSize));
	if (page > pages) throw new HttpError(404, { detail: 'Invalid page.' });
	const link = (n: number): string => {
		const params = new URLSearchParams();
		for (const [k, v] of Object.entries(req.query))
			if (k !== 'page') for (const one of Array.isArray(v) ? v : [v]) params.append(k, one);
		if (n > 1) params.set('page', String(n));
		const qs = params.toString();
		return `${req.baseUrl}${req.path}${qs ? `?${qs}` : ''}`;
	};
	const count = countCap !== undefined ? Math.min(items.length, countCap) : items.length;
	const shown = (r: T): R => {
		const item = render(r);
		if (!itemFields) return item;
		const fields = item as Record<string, unknown>;
		return Object.fromEntries(
			itemFields.filter((k) => k in fields).map((k) => [k, fields[k]]),
		) as R;
	};
	return json(200, {
		count: Math.max(0, count + countOffset),
		next: page < pages ? link(page + 1) : null,
		previous: page > 1 ? link(page - 1) : null,
		results: items.slice((page - 1) * pageSize, page * pageSize).map(shown),
	});
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

/** The values of a metadata object as strings, for `search` (§v0-4.2 "matches filename and metadata values") and `meta_value`. */
export function metadataValues(metadata: Record<string, unknown> | null | undefined): string[] {
	return Object.values(metadata ?? {}).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
}

const ISO_DATE_TIME =
	/^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * `created_at_after` / `created_at_before` (§v0-4.2, §v0-4.6): inclusive ISO 8601 bounds, UTC
 * without a zone; unreadable → 400. A test of `createdAt` (service clock), or undefined without bounds.
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
