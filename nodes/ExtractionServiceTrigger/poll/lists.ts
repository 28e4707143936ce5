import type { IDataObject, INode } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { fetchJob } from '../../ExtractionService/v1/helpers/jobs';
import { servicePath, type ExtractionServiceClient, type ListPage } from '../../ExtractionService/v1/transport';
import type { EventSpec } from './events';

/** Items asked for per list page (the service may send fewer, `§v0-8`, `§unversioned-8`). */
export const PAGE_SIZE = 100;

/** Most pages one read of a time window takes (`window.ts`); a larger window is split in time. */
export const MAX_WINDOW_PAGES = 20;

/**
 * Most pages one read of a window of jobs takes, when each new job is then read by id (parsings):
 * fewer, so that a poll's reads by id (at most this many pages' worth a status) end well inside
 * n8n's poll budget even on a slow service; a larger window is split in time.
 */
export const MAX_JOB_WINDOW_PAGES = 5;

/** Most pages a scan reads in one poll (`scan.ts`). */
export const MAX_SCAN_PAGES = 20;

/**
 * Most extractions a scan fires in one poll (each is read by id): the scan stops reading pages once
 * it has this many, and the next poll goes on from there.
 */
export const MAX_FIRING_PER_POLL = 500;

/** Most unfinished jobs read by id in one poll (the rest wait for the next polls, in turn). */
export const MAX_PENDING_READS = 25;

/** What one poll works with: its node, client, event, filters and deadline. */
export interface PollEnv {
	node: INode;
	client: ExtractionServiceClient;
	spec: EventSpec;
	/** The user's list filters, as query parameters (`§v0-4.2`, `§v0-4.6`, `§unversioned-4.1`). */
	filters: IDataObject;
	/**
	 * Epoch ms by which every request of the poll has ended (from n8n's poll budget): retries do not
	 * start after it and a running attempt is cut at it, so a poll cannot outlive its tick.
	 */
	deadline: number;
}

/** An item's id as a string, or undefined when it has none (such an item cannot fire). */
export function idOf(item: IDataObject): string | undefined {
	const id = item.id;
	if (typeof id === 'string' && id.trim()) return id.trim();
	if (typeof id === 'number' && Number.isFinite(id)) return String(id);
	return undefined;
}

/**
 * A service timestamp (`§v0-1 rule 2`, `§unversioned-1 rule 3`: ISO 8601 UTC with six fractional
 * digits) in epoch ms, rounded down to the millisecond; a time without a zone is read as UTC.
 *
 * @returns undefined for anything that is not such a timestamp
 */
export function timestampMs(value: unknown): number | undefined {
	if (typeof value !== 'string') return undefined;
	const match = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?\s*(Z|[+-]\d{2}:?\d{2})?$/i.exec(value.trim());
	if (!match) return undefined;
	const [, date, time, fraction = '', zone = 'Z'] = match;
	const ms = Date.parse(`${date}T${time}${fraction ? `.${fraction.slice(0, 3).padEnd(3, '0')}` : ''}${zone.toUpperCase()}`);
	return Number.isNaN(ms) ? undefined : ms;
}

/** Epoch ms as the ISO 8601 UTC text the `created_at_*` filters take (`§v0-4.2`). */
export function isoTime(ms: number): string {
	return new Date(ms).toISOString();
}

/** The newest of some resources by `created_at` (ties and unreadable dates: the first given). */
export function newest(resources: IDataObject[]): IDataObject | undefined {
	let best: IDataObject | undefined;
	let bestMs = -Infinity;
	for (const resource of resources) {
		const ms = timestampMs(resource.created_at) ?? -Infinity;
		if (!best || ms > bestMs) {
			best = resource;
			bestMs = ms;
		}
	}
	return best;
}

/** Resources oldest first by `created_at`, then by id (the order a poll outputs them in). */
export function byCreation(resources: IDataObject[]): IDataObject[] {
	const key = (r: IDataObject) => timestampMs(r.created_at) ?? Infinity;
	return [...resources].sort((a, b) => key(a) - key(b) || String(a.id).localeCompare(String(b.id)));
}

/** Whether an error is the service's 404 (a page past the end, a resource deleted meanwhile). */
export function isNotFound(error: unknown): boolean {
	return error instanceof NodeApiError && error.httpCode === '404';
}

/** An error as n8n expects a node's: NodeApiError/NodeOperationError as they are (the client's), anything else wrapped. */
export function asNodeError(node: INode, error: unknown): NodeApiError | NodeOperationError {
	if (error instanceof NodeApiError || error instanceof NodeOperationError) return error;
	return new NodeOperationError(node, error instanceof Error ? error : String(error));
}

/** The outcome of reading a list query whole (`readAll`). */
export interface ListRead {
	/** The items, each id once, in the service's order. */
	items: IDataObject[];
	/**
	 * Whether the list was read to its end (no next page, `count` reached, or a page with nothing
	 * new) without its count going down meanwhile (a deletion may have moved an item past the read).
	 */
	complete: boolean;
	/** Whether `count` said the query holds more than `capacity` items; nothing else was read. */
	tooMany: boolean;
	/** How many items a read may take: `maxPages` × the page size the service uses. */
	capacity: number;
	/** The list's `count`, when the service sent one. */
	count?: number;
}

/**
 * The list of an event: pages, counts and reads by id, each request with the event's filters and
 * the poll's deadline, through the node's client (retries, checked answers, redaction; `§node`).
 */
export class EventList {
	constructor(private readonly env: PollEnv) {}

	/**
	 * One page of the list (`§v0-2.5`, `§unversioned-2.4`).
	 *
	 * @param qs query parameters besides the filters, `page` and `size`
	 * @param page page number, from 1
	 * @throws NodeApiError for service errors and answers that are not a page
	 */
	async page(qs: IDataObject, page: number, size = PAGE_SIZE): Promise<ListPage> {
		const { client, spec, filters, deadline } = this.env;
		return await client.page(
			{ family: spec.family, method: 'GET', path: servicePath(spec.family, spec.segment), qs: { ...filters, ...qs }, itemIndex: 0, resourceName: spec.listName, deadline },
			page,
			size,
		);
	}

	/** Like `page`, but a 404 for a page after the first (past the end) reads as an empty last page. */
	async pageOrEmpty(qs: IDataObject, page: number, size = PAGE_SIZE): Promise<ListPage> {
		try {
			return await this.page(qs, page, size);
		} catch (error) {
			if (page > 1 && isNotFound(error)) return { results: [], next: null };
			throw asNodeError(this.env.node, error);
		}
	}

	/**
	 * How many items a query holds: the `count` of a one-item page (`§v0-2.5`).
	 *
	 * @returns undefined when the service sends no count
	 */
	async count(qs: IDataObject): Promise<number | undefined> {
		return (await this.page(qs, 1, 1)).count;
	}

	/**
	 * Reads every item of a query, at most `maxPages` pages. When the first page's `count` is above
	 * what `maxPages` pages hold, nothing more is read and `tooMany` says so (the caller narrows the
	 * query). Items come each id once; items without an id are left out (they cannot fire).
	 */
	async readAll(qs: IDataObject, maxPages: number): Promise<ListRead> {
		const first = await this.page(qs, 1);
		const pageSize = first.next ? Math.max(1, first.results.length) : Math.max(PAGE_SIZE, first.results.length);
		const capacity = maxPages * pageSize;
		const count = first.count;
		if (count !== undefined && count > capacity) return { items: [], complete: false, tooMany: true, capacity, count };
		const items: IDataObject[] = [];
		const ids = new Set<string>();
		const take = (results: IDataObject[]): number => {
			let fresh = 0;
			for (const item of results) {
				const id = idOf(item);
				if (id === undefined || ids.has(id)) continue;
				ids.add(id);
				items.push(item);
				fresh++;
			}
			return fresh;
		};
		let fresh = take(first.results);
		let next = first.next;
		// Items deleted while the pages are read move later items onto pages already read: a read
		// whose count went down is not complete (items created meanwhile only move items onto pages
		// not yet read, or after them, and are read again or by the next poll).
		let shrank = false;
		for (let page = 2; ; page++) {
			const ended = !next || fresh === 0 || (count !== undefined && items.length >= count);
			if (ended) return { items, complete: !shrank, tooMany: false, capacity, count };
			if (page > maxPages) return { items, complete: false, tooMany: false, capacity, count };
			const answer = await this.pageOrEmpty(qs, page);
			if (count !== undefined && answer.count !== undefined && answer.count < count) shrank = true;
			fresh = take(answer.results);
			next = answer.next;
		}
	}

	/**
	 * Reads a job by id (`§v0-4.7`, `§unversioned-4.3`), checked to be that job with a status.
	 *
	 * @returns undefined when the service answers 404 (deleted since it was listed)
	 * @throws NodeApiError for any other failure
	 */
	async job(id: string): Promise<IDataObject | undefined> {
		const { client, node, spec, deadline } = this.env;
		if (!spec.kind) throw new NodeOperationError(node, `${spec.resourceName} has no read by id in the trigger`);
		try {
			return await fetchJob(client, node, spec.kind, id, 0, deadline);
		} catch (error) {
			if (isNotFound(error)) return undefined;
			throw asNodeError(node, error);
		}
	}

	/** Reads jobs by id, all at once (the client bounds the requests in flight). */
	async jobs(ids: string[]): Promise<Map<string, IDataObject | undefined>> {
		const read = await Promise.all(ids.map(async (id) => [id, await this.job(id)] as const));
		return new Map(read);
	}
}

/**
 * Searches a time bound between `good` (where `fits` holds) and `bad` (where it does not), for a
 * `fits` that holds on one side of some point and not on the other; either bound may be the larger.
 * Halves the interval until it is 1 ms wide, or stops early once `fits` reports the bound as
 * `enough` (a window that is full enough); at most 48 steps.
 *
 * @param test the query's count at a bound: `fits` (small enough), `enough` (fits, and full
 *   enough to stop), or `tooMany`
 * @returns a bound for which `test` did not say `tooMany` (or `good` itself)
 */
export async function searchBound(good: number, bad: number, test: (bound: number) => Promise<'fits' | 'enough' | 'tooMany'>): Promise<number> {
	for (let step = 0; step < 48 && Math.abs(bad - good) > 1; step++) {
		const mid = Math.floor((good + bad) / 2);
		const verdict = await test(mid);
		if (verdict === 'tooMany') {
			bad = mid;
		} else {
			good = mid;
			if (verdict === 'enough') break;
		}
	}
	return good;
}
