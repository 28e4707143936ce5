/**
 * What both families share on the HTTP side: replies, errors in DRF's shapes (§v0-7, §unversioned-7),
 * the router and route tables with their authentication, and the contexts handlers see.
 */
import type { Readable } from 'node:stream';
import type { IncomingBody } from './body';
import type { PdfTextExtractor } from './pdf';
import type { Store } from './store';

/** What a route handler answers. `json` is serialised; otherwise `body` is sent as is. */
export interface Reply {
	status: number;
	json?: unknown;
	body?: Buffer | string | Readable;
	headers?: Record<string, string>;
}

export function json(status: number, body: unknown): Reply {
	return { status, json: body };
}

/** An error answer; thrown by handlers and validators, turned into a reply by the origin (index.ts). */
export class HttpError extends Error {
	constructor(
		readonly status: number,
		readonly body: Record<string, unknown>,
		readonly headers?: Record<string, string>,
	) {
		super(typeof body.detail === 'string' ? body.detail : JSON.stringify(body));
	}
}

export function notFound(detail = 'Not found.'): HttpError {
	return new HttpError(404, { detail });
}

/** A single field error `{"field": ["message"]}`. */
export function fieldError(field: string, message: string, status = 400): HttpError {
	return new HttpError(status, { [field]: [message] });
}

/** Collects field errors so that one 400 reports every invalid field, as DRF does. */
export class ErrorBag {
	readonly errors: Record<string, string[]> = {};

	add(field: string, message: string): void {
		(this.errors[field] ??= []).push(message);
	}

	has(field?: string): boolean {
		return field === undefined ? Object.keys(this.errors).length > 0 : field in this.errors;
	}

	throwIfAny(): void {
		if (this.has()) throw new HttpError(400, this.errors);
	}
}

export type Params = Record<string, string>;

/** The record with UUID `id` (any letter case), else 404 in Django's wording (§v0-4.3, §unversioned-4.3). */
export function lookup<T>(map: Map<string, T>, id: string, resource: string): T {
	const found = isUuid(id) ? (map.get(id) ?? map.get(id.toLowerCase())) : undefined;
	if (!found) throw notFound(`No ${resource} matches the given query.`);
	return found;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** §v0-1 rule 2, §unversioned-1 rule 4. */
export function isUuid(value: unknown): value is string {
	return typeof value === 'string' && UUID_RE.test(value);
}

/** ISO 8601 UTC with microseconds and `Z` (§v0-1 rule 2, §unversioned-1 rule 3). */
export function isoTimestamp(ms: number): string {
	const whole = Math.floor(ms);
	const micros = String(Math.round((ms - whole) * 1000)).padStart(3, '0');
	return new Date(whole).toISOString().replace('Z', `${micros}Z`);
}

export type Query = Record<string, string | string[]>;

/** Emulator-wide state and settings; the mutable ones are set through the `Emulator` controls. */
export interface AppContext {
	store: Store;
	/** Where large files spill (storage.ts); removed on close. */
	tempDir: string;
	pdf: PdfTextExtractor;
	/** Origins, no trailing slash. */
	url: string;
	filesUrl: string;
	apiKey: string;
	token: string;
	expiredToken: string;
	maxUploadBytes: number;
	maxPageSize: number;
	listOrder: ListOrder;
	listQuirks: ListQuirks;
	/** The base clock (epoch ms): the latest reading of `EmulatorOptions.clock`, so it never goes back; job timelines use it. */
	clock(): number;
	/** The service's clock (epoch ms): base clock reading + {@link clockOffset}; records' created_at/updated_at use it. */
	serviceNow(): number;
	clockOffset: number;
	/** Both clocks from one reading: a new record's job starts at `base`, its created_at is `service`. */
	readClocks(): { base: number; service: number };
	/** The one blank page every seeded file holds. */
	blankPdf: Buffer;
}

/** One request, as the route handlers see it. */
export interface RequestContext {
	method: string;
	/** Without query, still percent-encoded. */
	path: string;
	query: Query;
	/** Lower-case names; a repeated header's values joined with `, `. */
	headers: Record<string, string>;
	body: IncomingBody;
	/** The origin the client used (Host header), for `next` / `previous` links. */
	baseUrl: string;
	/** The base clock when the request arrived: one reading, so a response is consistent. */
	now: number;
	/** The list settings at the time of the request. */
	maxPageSize: number;
	listOrder: ListOrder;
	listQuirks: ListQuirks;
}

export type ListOrder = 'newest-first' | 'oldest-first';

/** List behaviours the references leave "not shown", off unless set (README: *Test controls for lists*). */
export interface ListQuirks {
	/** `count` is at most this; pages, `next` and `previous` follow the real list. */
	countCap?: number;
	/** Every page holds this many items whatever `size` asks. */
	pageSize?: number;
	/** `created_at_after` / `created_at_before` are validated but ignored. */
	ignoreDateFilter?: boolean;
	/** Added to `count` (after `countCap`; never below 0): a count a little off either way. */
	countOffset?: number;
	/** List items keep only these fields (e.g. `['id', 'status']`: items without dates). */
	itemFields?: string[];
}

export type Handler = (app: AppContext, req: RequestContext, params: Params) => Promise<Reply>;

/** A family's route table: `'METHOD /path/:param'` → handler. */
export type Routes = Record<string, Handler>;

/** The credential a family requires: X-API-Key (§v0-5), the raw token (§unversioned-5), or none (files origin). */
export type AuthScheme = 'api-key' | 'token' | 'none';

type Route = { method: string; regex: RegExp; auth: AuthScheme; handler: Handler };

/**
 * Exact-path router over route tables, each with its family's credential: `:name` matches one path
 * segment (possibly followed by a literal such as `.png`). The trailing slash is significant (§v0-1
 * rule 1, §unversioned-1 rule 1).
 */
export class Router {
	private readonly routes: Route[] = [];

	constructor(tables: Array<[AuthScheme, Routes]>) {
		for (const [auth, routes] of tables)
			for (const [route, handler] of Object.entries(routes)) {
				const [method, pattern] = route.split(' ');
				const source = pattern
					.split(/(:[A-Za-z]\w*)/)
					.map((part) =>
						part.startsWith(':')
							? `(?<${part.slice(1)}>[^/]+)`
							: part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
					)
					.join('');
				this.routes.push({ method, regex: new RegExp(`^${source}$`), auth, handler });
			}
	}

	/** Routing (404, or 405 as DRF words it), then the route's authentication (401), then its handler. */
	async handle(app: AppContext, req: RequestContext): Promise<Reply> {
		const allow: string[] = [];
		for (const { method, regex, auth, handler } of this.routes) {
			const m = regex.exec(req.path);
			if (!m) continue;
			if (method !== req.method) {
				allow.push(method);
				continue;
			}
			const params: Params = {};
			for (const [k, v] of Object.entries(m.groups ?? {})) {
				try {
					params[k] = decodeURIComponent(v);
				} catch {
					throw notFound();
				}
			}
			authenticate(app, auth, req.headers);
			return handler(app, req, params);
		}
		if (allow.length === 0) throw notFound();
		const detail = `Method "${req.method}" not allowed.`;
		throw new HttpError(405, { detail }, { allow: allow.join(', ') });
	}
}

/** Single value of a query parameter (the last one when repeated). */
export function queryValue(query: Query, name: string): string | undefined {
	const v = query[name];
	return Array.isArray(v) ? v[v.length - 1] : v;
}

/** Throws the 401 for a route's scheme (§v0-7; §unversioned-7's simplejwt shape) unless authenticated. */
function authenticate(app: AppContext, scheme: AuthScheme, headers: Record<string, string>): void {
	const value = headers[scheme === 'api-key' ? 'x-api-key' : 'authorization'];
	if (scheme === 'none' || (value && value === (scheme === 'api-key' ? app.apiKey : app.token)))
		return;
	if (scheme === 'api-key')
		throw new HttpError(401, { detail: value ? 'Invalid API key.' : 'API key missing.' });
	// §unversioned-5: the header value is the token itself, so "Bearer <token>" is invalid.
	if (!value)
		throw new HttpError(401, {
			detail: 'Authentication credentials were not provided.',
			code: 'not_authenticated',
			messages: [],
		});
	const message = value === app.expiredToken ? 'Token is expired' : 'Token is invalid';
	throw new HttpError(401, {
		detail: 'Given token not valid for any token type',
		code: 'token_not_valid',
		messages: [{ token_class: 'AccessToken', token_type: 'access', message }],
	});
}
