/**
 * Extraction-service emulator: a local HTTP server implementing both API families of the service,
 * `/v0` (§v0 of docs/service-api.md) and the unversioned one (§unversioned),
 * plus a second "files" origin for download redirects. A development tool for tests, the demo and
 * benchmarks; it listens on loopback only and never fetches a non-loopback address.
 *
 * Request flow on each origin: log entry → (api origin) injected fault → routing (404 / 405) →
 * authentication of the route's family (401) → handler. See README.md in this folder.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { authenticate } from './auth';
import { IncomingBody, loggedBody, type LoggedBody } from './body';
import type { AppContext, ListOrder, ListQuirks, RequestContext, RouteDef } from './context';
import {
	faultDetail,
	FaultQueue,
	type FaultMatch,
	type FaultSpec,
	type RandomFault,
} from './faults';
import { filesRoutes } from './files';
import { HttpError, methodNotAllowed, notFound, Router, type Reply } from './http';
import { MAX_PAGE_SIZE } from './listing';
import { PdfTextExtractor } from './pdf';
import { blankPdf, releaseJobs, seedDocuments, seedJobs, type SeedJobOptions } from './seeding';
import { TempDir } from './storage';
import { Store, type FinalStatus } from './store';
import { unversionedRoutes } from './unversioned';
import { v0Routes } from './v0';

export type { LoggedBody, LoggedFile } from './body';
export { heldAnswer, type FaultSpec, type RandomFault } from './faults';
export type { ListOrder, ListQuirks } from './context';
export type { SeedJobOptions } from './seeding';
export type { FinalStatus } from './store';

export interface EmulatorOptions {
	/** Default '127.0.0.1'. */
	host?: string;
	/** Default 0 = a free port. */
	port?: number;
	/** Second origin for file downloads; default 0 = a free port. */
	filesPort?: number;
	/** v0 key (X-API-Key); default 'emulator-api-key'. */
	apiKey?: string;
	/** Unversioned token (Authorization: <token>); default 'emulator-token'. */
	token?: string;
	/** Token that gets the "expired" 401 variant; default 'emulator-expired-token'. */
	expiredToken?: string;
	/** Wall time from creation to final state for every job; default 3000. */
	processingMs?: number;
	/**
	 * With a value above `processingMs`: each job's time is drawn uniformly from [processingMs,
	 * processingMaxMs] instead (jobs of a load overlap and finish out of order). Default: unset.
	 */
	processingMaxMs?: number;
	/** Unversioned credit balance; default 10000. */
	credits?: number;
	/** Faults answered at random to API requests (after the queued ones); default none. */
	randomFaults?: RandomFault[];
	/** JSON seed (schemas, workflows); default emulator/seed.json. */
	seedFile?: string;
	/** Default 512 MiB. */
	maxUploadBytes?: number;
	/** Largest page a list returns, whatever `size` asks (DRF's max_page_size); default 100. */
	maxPageSize?: number;
	/** Order of every list endpoint: `newest-first` (default) or `oldest-first` (the reference does not show it). */
	listOrder?: ListOrder;
	/** The emulator's base clock in epoch ms (default Date.now): every time the emulator reads — records' created_at/updated_at, job progress, a request's `now` — comes from it. A simulated clock for benchmarks. */
	clock?: () => number;
	/** No error output on stderr. */
	quiet?: boolean;
	/** Called with each log entry once its request is answered (or dropped). Used by `cli.ts --log-requests`. */
	onRequestLogged?: (entry: LoggedRequest) => void;
}

export interface LoggedRequest {
	/** Which server got it. */
	origin: 'api' | 'files';
	method: string;
	/** Path without query. */
	path: string;
	/** Query parameters, decoded; a repeated one as an array. */
	query: Record<string, string | string[]>;
	/** Lower-case names, as received. */
	headers: Record<string, string>;
	contentType?: string;
	/** Bytes of the request body. */
	bodyBytes: number;
	/**
	 * The body's fields as the route handler parsed them: a JSON value, or the text fields and the
	 * files (name, size, content type; never their bytes) of a form. Absent when the body was empty or
	 * never parsed (no route, failed authentication, an injected fault, a route without a body, a
	 * body that could not be parsed).
	 */
	body?: LoggedBody;
	/** Status sent (0 if the connection was dropped). */
	status: number;
	/** Bytes of a `streamBytes` fault's body written before the answer ended or the client left. */
	sentBytes?: number;
	/** The emulator's base clock (`EmulatorOptions.clock`, default Date.now; epoch ms) when received. */
	at: number;
}

export interface Emulator {
	/** 'http://127.0.0.1:PORT' (no trailing slash). */
	url: string;
	/** The second origin, e.g. 'http://127.0.0.1:PORT2'. */
	filesUrl: string;
	apiKey: string;
	token: string;
	expiredToken: string;
	/** The request log, both origins, in arrival order. */
	requests: LoggedRequest[];
	clearLog(): void;
	/** Queue faults for requests whose method matches and whose path matches (string = exact path, RegExp = test). */
	injectFaults(match: { method?: string; path: string | RegExp }, faults: FaultSpec[]): void;
	clearFaults(): void;
	/** Replaces the random faults (`--random-faults`); an empty list stops them. */
	setRandomFaults(list: RandomFault[]): void;
	setProcessingMs(ms: number): void;
	setCredits(n: number): void;
	getCredits(): number;
	/** Caps list pages at `n` items (tests of pagination), whatever `size` the client asks. */
	setMaxPageSize(n: number): void;
	/** Sets the order of every list endpoint (tests of clients that must not depend on it). */
	setListOrder(order: ListOrder): void;
	/**
	 * Moves the `created_at` of a document, parsing, extract or extraction `ms` back, as a service
	 * whose clock is behind the client's, or that lists an item after its `created_at`, would show
	 * it (tests of clock skew). The record's processing and its list position are not changed.
	 */
	backdate(id: string, ms: number): void;
	/** List behaviours a service may have where the reference says "not shown"; replaces the previous set ({} turns all off). Applies to every list endpoint of both families (GET /extract/, /schema/, /v0/documents, /v0/parsing). */
	setListQuirks(quirks: ListQuirks): void;
	/** Moves the service's clock by `ms` (negative: back) from now on: the created_at/updated_at of records created from now on, and "now" for the date filters, are base clock + ms. Job progress never goes back: a job's phase is computed at the latest base-clock time seen, so a final job stays final and a clock jump does not stall jobs. Records created before keep their created_at. */
	setClockOffset(ms: number): void;
	/** Creates `n` jobs at once without uploads (bulk, for scale tests and benchmarks): real records of the family (listed in creation order after everything before, readable by id, deletable, filterable by metadata/search/status/date like uploaded ones), each with a tiny already-analysed one-page source so no PDF work is done. `hold: true`: the jobs stay unfinished (status IN_PROGRESS) until `releaseJobs`; otherwise they finish after `processingMs` (default 0: final at once) with `outcome` (default FINISHED; ERROR gives error text "Seeded failure"). For parsings a document record is created for each (named `${namePrefix}-${i}.pdf`, default prefix 'seed'). Returns the ids, oldest first. Must handle n = 50,000 in well under a few seconds. */
	seedJobs(kind: 'extraction' | 'parsing', n: number, options?: SeedJobOptions): string[];
	/** Creates `n` documents at once (v0, as POST /v0/documents would), named `${namePrefix}-${i}.pdf`; returns ids oldest first. */
	seedDocuments(
		n: number,
		options?: { namePrefix?: string; metadata?: Record<string, unknown> },
	): string[];
	/** Makes held jobs final now (all held ones when `ids` is omitted) with `outcome` (default: the seed's outcome, else FINISHED). */
	releaseJobs(ids?: string[], outcome?: FinalStatus): void;
	/** Bytes of the stored file of a v0 document or an unversioned extraction (as stored, after trimming). */
	getStoredFile(id: string): Buffer | undefined;
	close(): Promise<void>;
}

interface OriginDeps {
	app: AppContext;
	origin: 'api' | 'files';
	router: Router<RouteDef>;
	requests: LoggedRequest[];
	faults: FaultQueue;
	quiet: boolean;
	onRequestLogged?: (entry: LoggedRequest) => void;
}

/** Whether a fault replaces the answer with a hostile one (custom body, redirect, echo). */
function isHostileAnswer(fault: FaultSpec): boolean {
	return (
		fault.body !== undefined ||
		fault.json !== undefined ||
		fault.location !== undefined ||
		fault.echoHeaders === true
	);
}

/** The answer of a fault instead of the handler's: see `FaultSpec`. */
function faultAnswer(fault: FaultSpec, entry: LoggedRequest): Reply {
	const headers: Record<string, string> = {};
	if (fault.location !== undefined) headers.location = fault.location;
	if (fault.retryAfter) headers['retry-after'] = fault.retryAfter;
	const status = fault.status ?? 200;
	if (!isHostileAnswer(fault)) return { status, json: { detail: faultDetail(status) }, headers };
	if (fault.echoHeaders)
		return { status, json: { detail: faultDetail(status), headers: entry.headers }, headers };
	if (fault.json !== undefined) return { status, json: fault.json, headers };
	headers['content-type'] = fault.contentType ?? 'text/html; charset=utf-8';
	return {
		status,
		body: fault.encoding ? Buffer.from(fault.body ?? '', fault.encoding) : (fault.body ?? ''),
		headers,
	};
}

/** A `streamBytes` body made on the fly: `[` then spaces, in 64 KiB chunks. */
function* filler(total: number): Generator<Buffer> {
	const spaces = Buffer.alloc(64 * 1024, 0x20);
	for (let sent = 0; sent < total; sent += spaces.length) {
		const part = spaces.subarray(0, Math.min(spaces.length, total - sent));
		yield sent === 0 ? Buffer.concat([Buffer.from('['), part.subarray(1)]) : part;
	}
}

/** The bytes of `body` one at a time, `intervalMs` apart (a connection that drips). */
async function* drip(
	body: Buffer,
	intervalMs: number,
	signal: AbortSignal,
): AsyncGenerator<Buffer> {
	for (const byte of body) {
		yield Buffer.from([byte]);
		await sleep(intervalMs, undefined, { signal });
	}
}

/** Writes `chunks` with back-pressure, stopping when the client leaves; `onWrite` counts bytes. */
async function writeChunks(
	res: ServerResponse,
	chunks: Iterable<Buffer> | AsyncIterable<Buffer>,
	onWrite: (n: number) => void = () => undefined,
): Promise<void> {
	for await (const chunk of chunks) {
		if (res.destroyed) return;
		onWrite(chunk.length);
		if (!res.write(chunk))
			await new Promise<void>((resolve) => {
				const done = (): void => {
					res.off('drain', done).off('close', done);
					resolve();
				};
				res.on('drain', done).on('close', done);
			});
	}
	res.end();
}

/** Sends `r`, or the body of a `dripMs` / `streamBytes` fault. */
async function send(
	res: ServerResponse,
	r: Reply,
	fault: FaultSpec | undefined,
	entry: LoggedRequest,
	signal: AbortSignal,
): Promise<void> {
	const streamed = fault?.streamBytes;
	if (streamed !== undefined)
		r = {
			status: fault?.status ?? 200,
			body: Readable.from(filler(streamed)),
			headers: { 'content-type': fault?.contentType ?? 'application/json' },
		};
	let body = r.json !== undefined ? JSON.stringify(r.json) : r.body;
	res.statusCode = r.status;
	if (r.json !== undefined) res.setHeader('content-type', 'application/json; charset=utf-8');
	for (const [k, v] of Object.entries(r.headers ?? {})) res.setHeader(k, v);
	if (fault?.dripMs && !(body instanceof Readable)) {
		const bytes = Buffer.from(body ?? '');
		res.setHeader('content-length', bytes.length);
		body = Readable.from(drip(bytes, fault.dripMs, signal));
	}
	if (!(body instanceof Readable)) return void res.end(body);
	if (streamed !== undefined) {
		res.setHeader('content-length', streamed);
		entry.sentBytes = 0;
	}
	await writeChunks(res, body, (n) => {
		if (entry.sentBytes !== undefined) entry.sentBytes += n;
	});
}

/** One origin (api or files): each request logged, then a queued fault or the route's answer. */
function buildOrigin(deps: OriginDeps): Server {
	const { app, origin, router, requests, faults, quiet, onRequestLogged } = deps;
	const handle = async (raw: IncomingMessage, res: ServerResponse): Promise<void> => {
		const url = new URL(raw.url ?? '/', 'http://emulator.invalid');
		const entry: LoggedRequest = {
			origin,
			method: raw.method ?? 'GET',
			path: url.pathname,
			query: {},
			headers: {},
			contentType: raw.headers['content-type'],
			bodyBytes: 0,
			status: 0,
			at: app.clock(),
		};
		for (const [k, v] of url.searchParams) {
			const prev = entry.query[k];
			entry.query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
		}
		for (const [k, v] of Object.entries(raw.headers))
			if (v !== undefined) entry.headers[k] = Array.isArray(v) ? v.join(', ') : v;
		requests.push(entry);
		// Aborted when the answer ends or the client leaves (also when the emulator closes): stops a
		// fault's delay or drip.
		const gone = new AbortController();
		res.on('close', () => {
			gone.abort();
			entry.status = res.writableFinished ? res.statusCode : 0;
			onRequestLogged?.(entry);
		});
		const body = new IncomingBody(
			raw,
			(n) => (entry.bodyBytes += n),
			app.tempDir,
			app.maxUploadBytes,
			(parsed) => (entry.body = loggedBody(parsed)),
		);
		const req: RequestContext = {
			method: entry.method,
			path: entry.path,
			query: entry.query,
			headers: raw.headers,
			body,
			baseUrl: raw.headers.host
				? `http://${raw.headers.host}`
				: origin === 'api'
					? app.url
					: app.filesUrl,
			now: entry.at,
			maxPageSize: app.maxPageSize,
			listOrder: app.listOrder,
			listQuirks: app.listQuirks,
		};
		const fault = origin === 'api' ? faults.take(req.method, req.path) : undefined;
		let answer: Reply;
		try {
			if (fault?.delayMs) await sleep(fault.delayMs, undefined, { signal: gone.signal });
			if (fault?.until) await untilOrGone(fault.until(), gone.signal);
			if (fault?.delayMs || fault?.until) req.now = app.clock();
			// Acted, then the answer is lost or replaced.
			if (fault?.afterHandling) await dispatch(app, router, req).catch(() => undefined);
			if (fault?.drop) return void raw.socket.destroy();
			answer =
				fault && (fault.status || isHostileAnswer(fault))
					? faultAnswer(fault, entry)
					: await dispatch(app, router, req);
		} catch (err) {
			if (gone.signal.aborted) return;
			if (!(err instanceof HttpError) && !quiet) console.error('[emulator] unexpected error:', err);
			answer =
				err instanceof HttpError
					? { status: err.status, json: err.body, headers: err.headers }
					: { status: 500, json: { detail: 'A server error occurred.' } };
		}
		await body.drain().catch(() => undefined); // the client went away: nothing to answer
		body.discardUploads();
		await send(res, answer, fault, entry, gone.signal);
	};
	return createServer((raw, res) => {
		handle(raw, res).catch((err: unknown) => {
			if (!isAbort(err) && !quiet) console.error('[emulator] unexpected error:', err);
			res.destroy();
		});
	});
}

/** Waits for `held`; rejects with an AbortError when `signal` aborts (the client left, the emulator closed). */
async function untilOrGone(held: Promise<unknown>, signal: AbortSignal): Promise<void> {
	signal.throwIfAborted();
	let stop = (): void => undefined;
	const gone = new Promise<never>((_, reject) => {
		stop = () => reject(signal.reason);
		signal.addEventListener('abort', stop, { once: true });
	});
	try {
		await Promise.race([held, gone]);
	} finally {
		signal.removeEventListener('abort', stop);
	}
}

/** An error of a request whose client left (or whose emulator closed). */
const isAbort = (err: unknown): boolean => err instanceof Error && err.name === 'AbortError';

async function dispatch(
	app: AppContext,
	router: Router<RouteDef>,
	req: RequestContext,
): Promise<Reply> {
	const match = router.match(req.method, req.path);
	if (match.kind === 'not-found') throw notFound();
	if (match.kind === 'method-not-allowed') throw methodNotAllowed(req.method, match.allow);
	const authError = authenticate(app, match.handler.auth, req.headers);
	if (authError) throw authError;
	return match.handler.handler(app, req, match.params);
}

async function listen(server: Server, host: string, port: number): Promise<string> {
	server.listen(port, host);
	await once(server, 'listening');
	const address = server.address() as AddressInfo;
	return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/** Stops accepting, and ends every open connection (keep-alive ones and answers still running). */
function closeServer(server: Server): Promise<void> {
	const closed = new Promise<void>((resolve) => server.close(() => resolve()));
	server.closeAllConnections();
	return closed;
}

/** Starts the emulator: the API origin (both families) and the files origin. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
	const host = options.host ?? '127.0.0.1';
	const store = new Store(options.credits ?? 10_000, options.processingMs ?? 3000);
	store.processingMaxMs = options.processingMaxMs;
	const readClock = options.clock ?? Date.now;
	let latest = Number.NEGATIVE_INFINITY;
	const app: AppContext = {
		clock: () => (latest = Math.max(latest, readClock())),
		serviceNow: () => readClock() + app.clockOffset,
		clockOffset: 0,
		readClocks: () => {
			const raw = readClock();
			latest = Math.max(latest, raw);
			return { base: latest, service: raw + app.clockOffset };
		},
		store,
		tempDir: new TempDir(),
		pdf: new PdfTextExtractor(),
		url: '',
		filesUrl: '',
		apiKey: options.apiKey ?? 'emulator-api-key',
		token: options.token ?? 'emulator-token',
		expiredToken: options.expiredToken ?? 'emulator-expired-token',
		maxUploadBytes: options.maxUploadBytes ?? 512 * 1024 * 1024,
		maxPageSize: options.maxPageSize ?? MAX_PAGE_SIZE,
		listOrder: options.listOrder ?? 'newest-first',
		listQuirks: {},
		staticDir: path.join(__dirname, 'static'),
		blankPdf: await blankPdf(),
	};
	store.loadSeed(options.seedFile ?? path.join(__dirname, 'seed.json'), app.serviceNow());
	const requests: LoggedRequest[] = [];
	const faults = new FaultQueue();
	faults.random = options.randomFaults ?? [];
	const common = {
		app,
		requests,
		faults,
		quiet: options.quiet ?? false,
		onRequestLogged: options.onRequestLogged,
	};
	const apiRouter = new Router<RouteDef>();
	v0Routes(apiRouter);
	unversionedRoutes(apiRouter);
	const api = buildOrigin({ ...common, origin: 'api', router: apiRouter });
	const files = buildOrigin({ ...common, origin: 'files', router: filesRoutes() });

	let closed: Promise<void> | undefined;
	const close = (): Promise<void> =>
		(closed ??= (async () => {
			await Promise.all([closeServer(api), closeServer(files)]);
			await app.pdf.close();
			store.discardFiles();
			app.tempDir.remove();
		})());

	try {
		app.filesUrl = await listen(files, host, options.filesPort ?? 0);
		app.url = await listen(api, host, options.port ?? 0);
		app.pdf.start();
	} catch (err) {
		await close();
		throw err;
	}

	return {
		url: app.url,
		filesUrl: app.filesUrl,
		apiKey: app.apiKey,
		token: app.token,
		expiredToken: app.expiredToken,
		requests,
		clearLog: () => void requests.splice(0),
		injectFaults: (match: FaultMatch, list: FaultSpec[]) => faults.add(match, list),
		clearFaults: () => faults.clear(),
		setRandomFaults: (list: RandomFault[]) => void (faults.random = list),
		setProcessingMs: (ms: number) => void (store.processingMs = ms),
		setCredits: (n: number) => void (store.credits = n),
		getCredits: () => store.credits,
		setMaxPageSize: (n: number) => void (app.maxPageSize = n),
		setListOrder: (order: ListOrder) => void (app.listOrder = order),
		backdate: (id: string, ms: number) => {
			const record = store.documents.get(id) ?? store.job(id);
			if (!record)
				throw new Error(`The emulator has no document, parsing, extract or extraction ${id}`);
			record.createdAt -= ms;
		},
		setListQuirks: (quirks: ListQuirks) => {
			const { countCap, pageSize } = quirks;
			if (countCap !== undefined && !(Number.isInteger(countCap) && countCap >= 0))
				throw new Error(`countCap must be a whole number ≥ 0, not ${countCap}`);
			if (pageSize !== undefined && !(Number.isInteger(pageSize) && pageSize >= 1))
				throw new Error(`pageSize must be a whole number ≥ 1, not ${pageSize}`);
			app.listQuirks = { ...quirks };
		},
		setClockOffset: (ms: number) => {
			if (!Number.isFinite(ms))
				throw new Error(`The clock offset must be a finite number of ms, not ${ms}`);
			app.clockOffset = ms;
		},
		seedJobs: (kind: 'extraction' | 'parsing', n: number, seedOptions?: SeedJobOptions) =>
			seedJobs(app, kind, n, seedOptions),
		seedDocuments: (
			n: number,
			seedOptions?: { namePrefix?: string; metadata?: Record<string, unknown> },
		) => seedDocuments(app, n, seedOptions),
		releaseJobs: (ids?: string[], outcome?: FinalStatus) => releaseJobs(app, ids, outcome),
		getStoredFile: (id: string) =>
			(store.documents.get(id) ?? store.extractions.get(id))?.source.file.readAll(),
		close,
	};
}
