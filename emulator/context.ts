/** Types shared by the route modules: the emulator-wide context, the per-request context, route definitions. */
import type { IncomingHttpHeaders } from 'node:http';
import type { IncomingBody } from './body';
import type { Params, Reply, Router } from './http';
import type { PdfTextExtractor } from './pdf';
import type { TempDir } from './storage';
import type { Store } from './store';

export type Query = Record<string, string | string[]>;

/** Emulator-wide state and settings. */
export interface AppContext {
	store: Store;
	tempDir: TempDir;
	pdf: PdfTextExtractor;
	/** Base URL of the API origin and of the files origin, no trailing slash. */
	url: string;
	filesUrl: string;
	apiKey: string;
	token: string;
	expiredToken: string;
	maxUploadBytes: number;
	/** Largest list page (mutable: `Emulator.setMaxPageSize`). */
	maxPageSize: number;
	/** Order of every list (mutable: `Emulator.setListOrder`); the reference does not show it. */
	listOrder: ListOrder;
	/** List behaviours where the reference says "not shown" (mutable: `Emulator.setListQuirks`); `{}` = none. */
	listQuirks: ListQuirks;
	/**
	 * The base clock in epoch ms, as the emulator last read it: the latest reading of
	 * `EmulatorOptions.clock` (default Date.now), so it never goes back. Job timelines and job
	 * progress (§v0-3, §unversioned-3) use it, so a final job stays final whatever the clocks do.
	 */
	clock(): number;
	/**
	 * The service's clock in epoch ms: the base clock's current reading plus {@link clockOffset}.
	 * `created_at` / `updated_at` of new records come from it (and the date filters compare with them).
	 */
	serviceNow(): number;
	/** ms the service's clock is ahead of the base clock (negative: behind); mutable: `Emulator.setClockOffset`. */
	clockOffset: number;
	/**
	 * Both clocks from ONE reading of `EmulatorOptions.clock` (epoch ms): `base` as {@link clock} gives
	 * it, `service` as {@link serviceNow} does. For a record created now: its job's timeline starts at
	 * `base`, its `created_at` is `service`.
	 */
	readClocks(): { base: number; service: number };
	staticDir: string;
	/** The one blank page every seeded file holds (`Emulator.seedJobs`, `seedDocuments`). */
	blankPdf: Buffer;
}

/** One request, as the route handlers see it. */
export interface RequestContext {
	method: string;
	/** Path without query, still percent-encoded. */
	path: string;
	query: Query;
	headers: IncomingHttpHeaders;
	body: IncomingBody;
	/** Absolute origin the client used (from the Host header), for `next` / `previous` links. */
	baseUrl: string;
	/**
	 * The base clock (`AppContext.clock`, epoch ms) when the request arrived: one reading per request,
	 * so a response is consistent. Job states are computed at it.
	 */
	now: number;
	/** Largest list page at the time of the request. */
	maxPageSize: number;
	/** List order at the time of the request. */
	listOrder: ListOrder;
	/** List quirks at the time of the request. */
	listQuirks: ListQuirks;
}

/** Order of list endpoints: by creation, newest first (the default) or oldest first. */
export type ListOrder = 'newest-first' | 'oldest-first';

/**
 * List behaviours a service may have where the references say "not shown" (§v0-2.5, §v0-4.2,
 * §v0-8, §unversioned-2.4, §unversioned-4.1, §unversioned-8): off unless set, for the tests of
 * clients that must not depend on them. They apply to every list endpoint of both families.
 */
export interface ListQuirks {
	/** `count` in every list envelope is at most this (a service capping its count) while `next`/`previous` and the pages still follow the real list (so `next` may be set on a page past count/size). */
	countCap?: number;
	/** Every list page holds this many items whatever `size` asks (larger or smaller than asked, above the max page size too); page numbering, `next` and `previous` follow that paging. */
	pageSize?: number;
	/** `created_at_after` / `created_at_before` are still validated (400 for an unreadable date) but ignored. */
	ignoreDateFilter?: boolean;
}

export type Handler = (app: AppContext, req: RequestContext, params: Params) => Promise<Reply>;

/** Which credential a route requires: X-API-Key (§v0-5), the raw token (§unversioned-5), or none (files origin). */
export type AuthScheme = 'api-key' | 'token' | 'none';

export interface RouteDef {
	auth: AuthScheme;
	handler: Handler;
}

/** `route(method, path, handler)`: adds the routes of one family (one credential, `auth`) to `router`. */
export function routesOf(router: Router<RouteDef>, auth: AuthScheme) {
	return (method: string, path: string, handler: Handler): void =>
		void router.add(method, path, { auth, handler });
}

/** Single value of a query parameter (the last one when repeated). */
export function queryValue(query: Query, name: string): string | undefined {
	const v = query[name];
	return Array.isArray(v) ? v[v.length - 1] : v;
}
