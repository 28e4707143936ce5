/**
 * Transport-neutral pieces shared by both API families: the reply shape, HTTP errors in the
 * reference's body shapes, and a small router that tells 404 from 405.
 */
import type { Readable } from 'node:stream';

/** What a route handler answers. `json` is serialised; otherwise `body` is sent as is. */
export interface Reply {
	status: number;
	json?: unknown;
	body?: Buffer | string | Readable;
	headers?: Record<string, string>;
}

/** A JSON answer. */
export function json(status: number, body: unknown, headers?: Record<string, string>): Reply {
	return { status, json: body, headers };
}

/** An error answer; thrown by handlers and validators, turned into a reply by the dispatcher. */
export class HttpError extends Error {
	constructor(
		readonly status: number,
		readonly body: Record<string, unknown>,
		readonly headers?: Record<string, string>,
	) {
		super(typeof body.detail === 'string' ? body.detail : JSON.stringify(body));
	}
}

/** 404 `{"detail": "..."}` (§v0-7, §unversioned-7). */
export function notFound(detail = 'Not found.'): HttpError {
	return new HttpError(404, { detail });
}

/** Field errors, collected in DRF style: `{"field": ["message", ...]}` (§v0-7, §unversioned-7). */
export type FieldErrors = Record<string, string[]>;

/** Collects field errors so that one 400 reports every invalid field, as Django REST framework does. */
export class ErrorBag {
	readonly errors: FieldErrors = {};

	add(field: string, message: string): void {
		(this.errors[field] ??= []).push(message);
	}

	has(field?: string): boolean {
		return field === undefined ? Object.keys(this.errors).length > 0 : field in this.errors;
	}

	/** Throws 400 (or `status`) with the collected errors, if any. */
	throwIfAny(status = 400): void {
		if (this.has()) throw new HttpError(status, this.errors);
	}
}

/** Throws a 400 with a single field error. */
export function fieldError(field: string, message: string, status = 400): HttpError {
	return new HttpError(status, { [field]: [message] });
}

export type Params = Record<string, string>;

interface CompiledRoute<H> {
	method: string;
	regex: RegExp;
	handler: H;
}

export type RouteMatch<H> =
	| { kind: 'found'; handler: H; params: Params }
	| { kind: 'not-found' }
	| { kind: 'method-not-allowed'; allow: string[] };

/**
 * Exact-path router. Patterns are literal paths with `:name` parameters (one path segment each, which
 * may be followed by a literal such as `.png`). A trailing slash is significant: `/v0/documents` and
 * `/v0/documents/` are different paths (§v0-1 rule 1, §unversioned-1 rule 1).
 */
export class Router<H> {
	private readonly routes: CompiledRoute<H>[] = [];

	add(method: string, pattern: string, handler: H): this {
		const source = pattern
			.split(/(:[A-Za-z]\w*)/)
			.map((part) =>
				part.startsWith(':')
					? `(?<${part.slice(1)}>[^/]+)`
					: part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
			)
			.join('');
		this.routes.push({ method, regex: new RegExp(`^${source}$`), handler });
		return this;
	}

	match(method: string, path: string): RouteMatch<H> {
		const allow: string[] = [];
		for (const route of this.routes) {
			const m = route.regex.exec(path);
			if (!m) continue;
			if (route.method !== method) {
				allow.push(route.method);
				continue;
			}
			const params: Params = {};
			for (const [k, v] of Object.entries(m.groups ?? {})) {
				try {
					params[k] = decodeURIComponent(v);
				} catch {
					return { kind: 'not-found' };
				}
			}
			return { kind: 'found', handler: route.handler, params };
		}
		return allow.length > 0 ? { kind: 'method-not-allowed', allow } : { kind: 'not-found' };
	}
}

/** The record with UUID `id`, else 404 `{"detail": "No <resource> matches the given query."}` (Django's wording; §v0-4.3, §unversioned-4.3). */
export function lookup<T>(map: Map<string, T>, id: string, resource: string): T {
	// UUIDs in any letter case (a UUID field parses both); the stores key them in lower case.
	const found = isUuid(id) ? (map.get(id) ?? map.get(id.toLowerCase())) : undefined;
	if (!found) throw notFound(`No ${resource} matches the given query.`);
	return found;
}

/** 405 body as Django REST framework words it (status not listed in the references; both families are DRF services). */
export function methodNotAllowed(method: string, allow: string[]): HttpError {
	return new HttpError(
		405,
		{ detail: `Method "${method}" not allowed.` },
		{ allow: allow.join(', ') },
	);
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Identifiers are UUID strings (§v0-1 rule 2, §unversioned-1 rule 4). */
export function isUuid(value: unknown): value is string {
	return typeof value === 'string' && UUID_RE.test(value);
}

/** ISO 8601 UTC with microseconds and a trailing `Z` (§v0-1 rule 2, §unversioned-1 rule 3). */
export function isoTimestamp(ms: number): string {
	const whole = Math.floor(ms);
	const micros = Math.round((ms - whole) * 1000)
		.toString()
		.padStart(3, '0');
	return new Date(whole).toISOString().replace('Z', `${micros}Z`);
}
