import type { IDataObject, INode } from 'n8n-workflow';
import { NodeOperationError, jsonParse } from 'n8n-workflow';
import { DateTime } from 'luxon';

/**
 * Checks of user input that run before any request is sent. Every error names the parameter as the
 * user sees it in the UI and says what is wrong with the value.
 */

/** A UUID, the form of every service identifier (`§v0-1 rule 2`, `§unversioned-1 rule 4`), as regex source. */
export const UUID_PATTERN =
	'[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

const UUID = new RegExp(`^${UUID_PATTERN}$`);

/** The example UUID every ID parameter shows. */
export const UUID_PLACEHOLDER = 'e.g. 9b2f6c1e-8d4a-4f3b-a1c2-7e5d9f0b3a61';

function fail(
	node: INode,
	itemIndex: number,
	parameter: string,
	problem: string,
	description?: string,
): never {
	throw new NodeOperationError(node, `Parameter "${parameter}" ${problem}`, {
		itemIndex,
		description,
	});
}

/**
 * A service identifier (`§v0-1 rule 2`, `§unversioned-1 rule 4`: UUID strings).
 *
 * @returns the trimmed UUID
 * @throws NodeOperationError naming `parameter` when the value is empty or not a UUID
 */
export function requireUuid(
	node: INode,
	itemIndex: number,
	parameter: string,
	value: unknown,
): string {
	const text = typeof value === 'string' ? value.trim() : String(value ?? '').trim();
	if (!text)
		fail(node, itemIndex, parameter, 'is empty', `Enter the ID (a UUID, ${UUID_PLACEHOLDER}).`);
	if (!UUID.test(text)) fail(node, itemIndex, parameter, `must be a UUID, got "${truncate(text)}"`);
	return text;
}

/**
 * An http(s) URL (public or pre-signed: `§v0-4.5`).
 *
 * @throws NodeOperationError naming `parameter` when empty, unparsable or not http(s)
 */
export function requireHttpUrl(
	node: INode,
	itemIndex: number,
	parameter: string,
	value: unknown,
): string {
	const text = String(value ?? '').trim();
	if (!text) fail(node, itemIndex, parameter, 'is empty');
	let url: URL | undefined;
	try {
		url = new URL(text);
	} catch {
		url = undefined;
	}
	if (!url || !/^https?:$/.test(url.protocol)) {
		fail(node, itemIndex, parameter, `must be an http:// or https:// URL, got "${truncate(text)}"`);
	}
	return text;
}

/**
 * A list of URLs: a JSON array of strings, or one URL per line / comma-separated.
 *
 * @returns at least one validated URL
 * @throws NodeOperationError naming `parameter` when the list is empty or an entry is not http(s)
 */
export function parseUrlList(
	node: INode,
	itemIndex: number,
	parameter: string,
	value: unknown,
): string[] {
	let entries: unknown[];
	if (Array.isArray(value)) entries = value;
	else {
		const text = String(value ?? '').trim();
		entries = text.startsWith('[')
			? (jsonParse<unknown[]>(text, {
					errorMessage: `Parameter "${parameter}" is not a valid JSON array`,
				}) ?? [])
			: text.split(/[\n,]/);
	}
	const urls = entries.map((e) => String(e ?? '').trim()).filter((e) => e.length > 0);
	if (urls.length === 0) fail(node, itemIndex, parameter, 'is empty: give at least one URL');
	return urls.map((u, i) => requireHttpUrl(node, itemIndex, `${parameter}" entry "${i + 1}`, u));
}

/**
 * A JSON parameter: a JSON text, or a value an expression already gave (object, list, number …).
 *
 * @returns the parsed value; undefined when empty (undefined, null or blank text)
 * @throws NodeOperationError naming the parameter when the text is not valid JSON
 */
export function parseJson(
	node: INode,
	itemIndex: number,
	parameter: string,
	value: unknown,
): unknown {
	if (value === undefined || value === null) return undefined;
	if (typeof value !== 'string') return value;
	if (!value.trim()) return undefined;
	try {
		return JSON.parse(value) as unknown;
	} catch (error) {
		fail(node, itemIndex, parameter, `is not valid JSON: ${(error as Error).message}`);
	}
}

/**
 * A JSON object parameter (metadata, schema definition). Accepts an object or a JSON string; an
 * empty string gives `undefined` (not sent).
 *
 * @throws NodeOperationError naming `parameter` when the JSON is malformed or not an object
 */
export function parseJsonObject(
	node: INode,
	itemIndex: number,
	parameter: string,
	value: unknown,
): IDataObject | undefined {
	const parsed = parseJson(node, itemIndex, parameter, value);
	if (parsed === undefined) return undefined;
	if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
		fail(
			node,
			itemIndex,
			parameter,
			`must be a JSON object such as {"key": "value"}, got ${Array.isArray(parsed) ? 'an array' : typeof parsed === 'object' ? 'null' : `a ${typeof parsed}`}`,
		);
	}
	return parsed as IDataObject;
}

/**
 * PDF page range (`§v0-4.1`, `§unversioned-4.2`: `pdf_page_start`, `pdf_page_end`,
 * 1-based). A bound the user did not add is undefined and not sent, and so is a Last Page of 0
 * (its default: "to the end").
 *
 * @returns query parameters for the set bounds
 * @throws NodeOperationError when a bound is not a positive integer or start > end
 */
export function pageRange(
	node: INode,
	itemIndex: number,
	start: unknown,
	end: unknown,
): IDataObject {
	const qs: IDataObject = {};
	const check = (name: string, value: unknown): number | undefined => {
		if (value === undefined || value === null || value === '') return undefined;
		const n = Number(value);
		if (!Number.isInteger(n) || n < 1)
			fail(
				node,
				itemIndex,
				name,
				`must be a whole number of 1 or more, got ${JSON.stringify(value)}`,
			);
		return n;
	};
	const first = check('First Page', start);
	const last = check('Last Page', end === 0 || end === '0' ? undefined : end);
	if (first !== undefined && last !== undefined && first > last) {
		fail(node, itemIndex, 'First Page', `(${first}) is after "Last Page" (${last})`);
	}
	if (first !== undefined) qs.pdf_page_start = first;
	if (last !== undefined) qs.pdf_page_end = last;
	return qs;
}

/** Most seconds a timeout may be: what a Node timer can wait (2³¹ − 1 ms, about 24.8 days), in whole seconds. */
export const MAX_TIMEOUT_SECONDS = 2_147_483;

/**
 * A number of seconds for a timeout (Request Timeout, Wait Timeout), rounded to whole milliseconds:
 * from 0.001 to `MAX_TIMEOUT_SECONDS` (a longer wait would overflow Node's timers and end at once).
 *
 * @returns seconds, a whole number of ms (× 1000 is an integer up to float rounding: use `secondsToMs`)
 * @throws NodeOperationError naming `parameter` and the range when not a number or out of range
 */
export function positiveSeconds(
	node: INode,
	itemIndex: number,
	parameter: string,
	value: unknown,
): number {
	const n = Number(value);
	const ms = Math.round(n * 1000);
	if (value === null || value === '' || !Number.isFinite(n) || ms < 1 || n > MAX_TIMEOUT_SECONDS) {
		fail(
			node,
			itemIndex,
			parameter,
			`must be a number of seconds from 0.001 to ${MAX_TIMEOUT_SECONDS}, got ${JSON.stringify(value)}`,
		);
	}
	return ms / 1000;
}

/** Seconds as whole milliseconds (16.1 s → 16100, not 16100.000000000002). */
export function secondsToMs(seconds: number): number {
	return Math.round(seconds * 1000);
}

/**
 * A whole number within bounds (Limit, Concurrency, Max Retries).
 *
 * @throws NodeOperationError naming `parameter` when out of range or not whole
 */
export function wholeNumber(
	node: INode,
	itemIndex: number,
	parameter: string,
	value: unknown,
	min: number,
	max = Number.MAX_SAFE_INTEGER,
): number {
	const n = Number(value);
	if (!Number.isInteger(n) || n < min || n > max) {
		fail(
			node,
			itemIndex,
			parameter,
			`must be a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}, got ${JSON.stringify(value)}`,
		);
	}
	return n;
}

/**
 * A date-time parameter (Created After, Created Before: `created_at_after`, `created_at_before` of
 * `§v0-4.2` and `§v0-4.6`; the trigger's Include Existing Since) as the instant it names.
 *
 * - A value without a zone is read in `zone`, the workflow's time zone, as n8n's own nodes read
 *   dates: what the date picker gives (`2026-11-28T10:00:00`), ISO 8601 (`2026-11-28T10:00`,
 *   `20261128T1000`), SQL-like (`2026-11-28 10:00`), a date alone (midnight there), and the other
 *   forms JavaScript's `Date.parse` reads (`Nov 28 2026 10:00`, `11/28/2026`; earlier versions read
 *   every value that way, in the n8n server's zone).
 * - A value with a zone is read as given: ISO 8601 with `Z` or an offset, RFC 2822 and HTTP dates,
 *   `GMT+0100`, `UTC`, `EST` and the like; and so are what expressions give: a Luxon DateTime
 *   (`$now`, `DateTime.fromISO(…)`) or a JavaScript Date.
 * - A value that starts like an ISO date (`2026-02-30`) must be one: it is not read otherwise.
 *
 * @param zone an IANA time zone, the workflow's (`this.getTimezone()` of the execute or poll
 *   functions); undefined reads zone-less values in the n8n server's zone, as earlier versions did
 * @returns the instant in ISO 8601, UTC, with milliseconds (`2026-11-28T09:00:00.000Z`); undefined
 *   when the value is empty (undefined, null or blank text)
 * @throws NodeOperationError naming `parameter` when the value is not a date-time, or when it has
 *   no zone and `zone` is not a time zone Luxon knows
 */
export function isoDateTime(
	node: INode,
	itemIndex: number,
	parameter: string,
	value: unknown,
	zone: string | undefined,
): string | undefined {
	if (value === undefined || value === null) return undefined;
	let ms: number;
	if (DateTime.isDateTime(value)) ms = value.isValid ? value.toMillis() : NaN;
	else if (Object.prototype.toString.call(value) === '[object Date]')
		ms = (value as Date).getTime();
	else {
		const text = String(value).trim();
		if (!text) return undefined;
		ms = zonedInstant(text, () => readingZone(node, itemIndex, parameter, zone));
	}
	if (!Number.isFinite(ms))
		fail(node, itemIndex, parameter, `is not a date-time, got "${truncate(String(value))}"`);
	return new Date(ms).toISOString();
}

/** Luxon's zone for zone-less values: the workflow's, or the server's (`system`) when not given. */
function readingZone(
	node: INode,
	itemIndex: number,
	parameter: string,
	zone: string | undefined,
): string {
	const name = zone ?? 'system';
	if (!DateTime.now().setZone(name).isValid)
		fail(
			node,
			itemIndex,
			parameter,
			`has no time zone, and the workflow's time zone "${truncate(name)}" is not one`,
			'Give the date-time with a zone (e.g. 2026-11-28T10:00:00+01:00), or set a valid time zone in the workflow settings.',
		);
	return name;
}

/** Starts like an ISO 8601 date: a year alone, or a year then a month, week, day of year or the basic form. */
const ISO_LIKE = /^[+-]?\d{4}(?:$|-?W?\d{2}|\d{4})/i;

/** A zone in a text `Date.parse` reads: a zone name, `Z`, or an offset after the time. */
const LEGACY_ZONE =
	/(?:^|[^a-z])(?:z|ut|utc|gmt|[ecmp][sd]t)(?![a-z])|\d:\d{2}(?::\d{2}(?:\.\d+)?)?\s*(?:[ap]\.?m\.?\s*)?[+-]\d{2}:?\d{2}/i;

/**
 * The epoch ms of a date-time text (see `isoDateTime`), NaN when it is none. `zone()` gives the
 * zone for texts without one (asked only then: a text with a zone needs none).
 */
function zonedInstant(text: string, zone: () => string): number {
	if (ISO_LIKE.test(text)) {
		for (const read of [DateTime.fromISO, DateTime.fromSQL]) {
			const utc = read(text, { zone: 'UTC' });
			if (!utc.isValid) continue;
			// A text with its own zone or offset reads the same whatever zone Luxon is given.
			if (read(text, { zone: 'UTC+14' }).toMillis() === utc.toMillis()) return utc.toMillis();
			return read(text, { zone: zone() }).toMillis();
		}
		return NaN;
	}
	for (const read of [DateTime.fromRFC2822, DateTime.fromHTTP]) {
		const date = read(text, { zone: 'UTC' });
		if (date.isValid) return date.toMillis();
	}
	// The forms only JavaScript reads (`Nov 28 2026 10:00`): without a zone, JavaScript reads them in
	// the server's zone; the same wall clock is then read in the workflow's.
	const parsed = Date.parse(text);
	if (Number.isNaN(parsed)) return NaN;
	if (LEGACY_ZONE.test(text.replace(/\([^)]*\)/g, ' '))) return parsed;
	const local = new Date(parsed);
	return DateTime.fromObject(
		{
			year: local.getFullYear(),
			month: local.getMonth() + 1,
			day: local.getDate(),
			hour: local.getHours(),
			minute: local.getMinutes(),
			second: local.getSeconds(),
			millisecond: local.getMilliseconds(),
		},
		{ zone: zone() },
	).toMillis();
}

function truncate(text: string): string {
	return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
