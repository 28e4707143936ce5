/** Types shared by the route modules: the emulator-wide context, the per-request context, route definitions. */
import type { IncomingHttpHeaders } from 'node:http';
import type { IncomingBody } from './body';
import type { Params, Reply } from './http';
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
	staticDir: string;
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
	/** Date.now() when the request arrived: one clock reading per request, so a response is consistent. */
	now: number;
	/** Largest list page at the time of the request. */
	maxPageSize: number;
	/** List order at the time of the request. */
	listOrder: ListOrder;
}

/** Order of list endpoints: by creation, newest first (the default) or oldest first. */
export type ListOrder = 'newest-first' | 'oldest-first';

export type Handler = (app: AppContext, req: RequestContext, params: Params) => Promise<Reply>;

/** Which credential a route requires: X-API-Key (§v0-5), the raw token (§unversioned-5), or none (files origin). */
export type AuthScheme = 'api-key' | 'token' | 'none';

export interface RouteDef {
	auth: AuthScheme;
	handler: Handler;
}

/** Single value of a query parameter (the last one when repeated). */
export function queryValue(query: Query, name: string): string | undefined {
	const v = query[name];
	return Array.isArray(v) ? v[v.length - 1] : v;
}
