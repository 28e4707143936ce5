/**
 * Extraction-service emulator: one loopback HTTP origin for both API families (§v0 and §unversioned
 * of docs/service-api.md) and a second "files" origin for download redirects. A development tool for
 * tests, the demo and benchmarks; README.md in this folder describes it.
 *
 * Request flow on each origin: log entry → (api origin) injected fault → routing (404 / 405) →
 * authentication of the route's family (401) → handler.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { aborted } from 'node:util';
import { IncomingBody, type LoggedBody } from './body';
import { faultAnswer, FaultQueue } from './faults';
import type { FaultMatch, FaultSpec, RandomFault } from './faults';
import { filesRoutes } from './files';
import { HttpError, Router } from './http';
import type { AppContext, ListOrder, ListQuirks, Reply, RequestContext } from './http';
import { MAX_PAGE_SIZE } from './listing';
import { PdfTextExtractor } from './pdf';
import { blankPdf, releaseJobs, seedDocuments, seedJobs, type SeedJobOptions } from './seeding';
import { Store, type FinalStatus } from './store';
import { unversionedRoutes } from './unversioned';
import { v0Routes } from './v0';

export type { LoggedBody, LoggedFile } from './body';
export { heldAnswer, type FaultSpec, type RandomFault } from './faults';
export type { ListOrder, ListQuirks } from './http';
export type { SeedJobOptions } from './seeding';
export type { FinalStatus } from './store';

/** Options of {@link startEmulator}; the defaults are in README.md's table. */
export interface EmulatorOptions {
	host?: string;
	port?: number;
	filesPort?: number;
	/** v0 key (X-API-Key). */
	apiKey?: string;
	/** Unversioned token (Authorization: <token>). */
	token?: string;
	/** Token answered with the "Token is expired" 401. */
	expiredToken?: string;
	/** ms from creation to final state for every job. */
	processingMs?: number;
	/** Above `processingMs`: each job's time is drawn uniformly from [processingMs, processingMaxMs]. */
	processingMaxMs?: number;
	credits?: number;
	/** Faults answered at random to API requests (after the queued ones). */
	randomFaults?: RandomFault[];
	/** JSON seed (schemas, workflows); default emulator/seed.json. */
	seedFile?: string;
	maxUploadBytes?: number;
	/** Largest page a list returns, whatever `size` asks (DRF's max_page_size). */
	maxPageSize?: number;
	listOrder?: ListOrder;
	/** The base clock (epoch ms) of everything the emulator times; a simulated clock for benchmarks. */
	clock?: () => number;
	/** No error output on stderr. */
	quiet?: boolean;
	/** Called with each log entry once its request is answered (or dropped). */
	onRequestLogged?: (entry: LoggedRequest) => void;
}

export interface LoggedRequest {
	origin: 'api' | 'files';
	method: string;
	/** Without query. */
	path: string;
	/** Decoded; a repeated parameter as an array. */
	query: Record<string, string | string[]>;
	/** Lower-case names. */
	headers: Record<string, string>;
	contentType?: string;
	bodyBytes: number;
	/** The fields the handler parsed, never file bytes; absent when no handler read a body. */
	body?: LoggedBody;
	/** 0 if the connection was dropped (and while the answer runs: final once `closed`). */
	status: number;
	/** Set once the answer ended or the client left. */
	closed?: true;
	/** Bytes of a `streamBytes` fault's body written before the answer ended or the client left. */
	sentBytes?: number;
	/** The base clock when received. */
	at: number;
}

/** A running emulator and its test controls (README: *Test API*). */
export class Emulator {
	/** 'http://127.0.0.1:PORT', no trailing slash. */
	readonly url: string;
	readonly filesUrl: string;
	readonly apiKey: string;
	readonly token: string;
	readonly expiredToken: string;
	private closing?: Promise<void>;

	constructor(
		private readonly app: AppContext,
		/** Both origins, in arrival order. */
		readonly requests: LoggedRequest[],
		private readonly faults: FaultQueue,
		private readonly servers: Server[],
	) {
		this.url = app.url;
		this.filesUrl = app.filesUrl;
		this.apiKey = app.apiKey;
		this.token = app.token;
		this.expiredToken = app.expiredToken;
	}

	clearLog(): void {
		this.requests.splice(0);
	}

	/** Queues faults for matching requests (path: a string is the exact path, a RegExp is tested). */
	injectFaults(match: FaultMatch, faults: FaultSpec[]): void {
		this.faults.add(match, faults);
	}

	clearFaults(): void {
		this.faults.clear();
	}

	/** Replaces the random faults; an empty list stops them. */
	setRandomFaults(list: RandomFault[]): void {
		this.faults.random = list;
	}

	/** For jobs created afterwards. */
	setProcessingMs(ms: number): void {
		this.app.store.processingMs = ms;
	}

	setCredits(n: number): void {
		this.app.store.credits = n;
	}

	getCredits(): number {
		return this.app.store.credits;
	}

	setMaxPageSize(n: number): void {
		this.app.maxPageSize = n;
	}

	setListOrder(order: ListOrder): void {
		this.app.listOrder = order;
	}

	/** Moves a record's created_at `ms` back (clock skew); its processing and list position stay. */
	backdate(id: string, ms: number): void {
		const record = this.app.store.documents.get(id) ?? this.app.store.job(id);
		if (!record)
			throw new Error(`The emulator has no document, parsing, extract or extraction ${id}`);
		record.createdAt -= ms;
	}

	/** Replaces the list quirks of every list endpoint ({} turns all off). */
	setListQuirks(quirks: ListQuirks): void {
		const { countCap, countOffset, pageSize } = quirks;
		if (countCap !== undefined && !(Number.isInteger(countCap) && countCap >= 0))
			throw new Error(`countCap must be a whole number ≥ 0, not ${countCap}`);
		if (countOffset !== undefined && !Number.isInteger(countOffset))
			throw new Error(`countOffset must be a whole number, not ${countOffset}`);
		if (pageSize !== undefined && !(Number.isInteger(pageSize) && pageSize >= 1))
			throw new Error(`pageSize must be a whole number ≥ 1, not ${pageSize}`);
		this.app.listQuirks = { ...quirks };
	}

	/**
	 * Moves the service's clock by `ms` from now on (created_at/updated_at of new records, "now" of
	 * the date filters). Job progress never goes back: it follows the latest base-clock time seen.
	 */
	setClockOffset(ms: number): void {
		if (!Number.isFinite(ms))
			throw new Error(`The clock offset must be a finite number of ms, not ${ms}`);
		this.app.clockOffset = ms;
	}

	/** Creates `n` jobs at once without uploads (see seeding.ts); ids oldest first. */
	seedJobs(kind: 'extraction' | 'parsing', n: number, options?: SeedJobOptions): string[] {
		return seedJobs(this.app, kind, n, options);
	}

	/** Creates `n` documents at once, named `${namePrefix}-${i}.pdf`; ids oldest first. */
	seedDocuments(n: number, options?: Pick<SeedJobOptions, 'namePrefix' | 'metadata'>): string[] {
		return seedDocuments(this.app, n, options);
	}

	/**
	 * Deletes documents, parsings or extractions as the service's own dashboard would (the `/v0`
	 * family has no DELETE): gone from every list, 404 when read. A parsing's document stays.
	 */
	deleteRecords(ids: string[]): void {
		const { documents, parsings, extractions } = this.app.store;
		for (const id of ids) {
			const extraction = extractions.get(id);
			if (!documents.delete(id) && !parsings.delete(id) && !extractions.delete(id))
				throw new Error(`The emulator has no document, parsing or extraction ${id}`);
			extraction?.source.file.discard();
		}
	}

	/** Makes held jobs final now (all when `ids` is omitted), with `outcome` instead of their own. */
	releaseJobs(ids?: string[], outcome?: FinalStatus): void {
		releaseJobs(this.app, ids, outcome);
	}

	/** The stored (trimmed) bytes of a v0 document or an unversioned extraction. */
	getStoredFile(id: string): Buffer | undefined {
		const { documents, extractions } = this.app.store;
		return (documents.get(id) ?? extractions.get(id))?.source.file.readAll();
	}

	close(): Promise<void> {
		return (this.closing ??= shutDown(this.app, this.servers));
	}
}

/** A `streamBytes` body made on the fly: `[` then spaces, in 64 KiB chunks. */
function* filler(total: number): Generator<Buffer> {
	const spaces = Buffer.alloc(64 * 1024, 0x20);
	for (let sent = 0; sent < total; sent += spaces.length) {
		const part = spaces.subarray(0, Math.min(spaces.length, total - sent));
		yield sent === 0 ? Buffer.concat([Buffer.from('['), part.subarray(1)]) : part;
	}
}

/** The bytes of `body` one at a time, `intervalMs` apart. */
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

/** Sends `r`, or the body of a `dripMs` / `streamBytes` fault, with back-pressure until the client leaves. */
async function send(
	res: ServerResponse,
	r: Reply,
	fault: FaultSpec | undefined,
	entry: LoggedRequest,
	signal: AbortSignal,
): Promise<void> {
	const streamed = fault?.streamBytes;
	if (streamed !== undefined) {
		const contentType = fault?.contentType ?? 'application/json';
		const headers = { 'content-type': contentType, 'content-length': String(streamed) };
		r = { status: fault?.status ?? 200, body: Readable.from(filler(streamed)), headers };
		entry.sentBytes = 0;
	}
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
	for await (const chunk of body as AsyncIterable<Buffer>) {
		if (res.destroyed) return;
		if (entry.sentBytes !== undefined) entry.sentBytes += chunk.length;
		// `signal` aborts when the client leaves.
		if (!res.write(chunk)) await once(res, 'drain', { signal }).catch(() => undefined);
	}
	res.end();
}

/** An error of a request whose client left (or whose emulator closed). */
const isAbort = (err: unknown): boolean => err instanceof Error && err.name === 'AbortError';

/** One origin: each request logged, then a queued fault (api origin) or the route's answer. */
function buildOrigin(
	origin: 'api' | 'files',
	router: Router,
	app: AppContext,
	requests: LoggedRequest[],
	faults: FaultQueue,
	options: EmulatorOptions,
): Server {
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
		// Aborted when the answer ends or the client leaves: stops a fault's delay or drip.
		const gone = new AbortController();
		res.on('close', () => {
			gone.abort();
			entry.status = res.writableFinished ? res.statusCode : 0;
			entry.closed = true;
			options.onRequestLogged?.(entry);
		});
		const body = new IncomingBody(raw, app, entry);
		const origins = { api: app.url, files: app.filesUrl };
		const req: RequestContext = {
			...entry,
			body,
			baseUrl: raw.headers.host ? `http://${raw.headers.host}` : origins[origin],
			now: entry.at,
			maxPageSize: app.maxPageSize,
			listOrder: app.listOrder,
			listQuirks: app.listQuirks,
		};
		const fault = origin === 'api' ? faults.take(req.method, req.path) : undefined;
		let answer: Reply;
		// The handler's own answer, when it ran and answered (for a fault's `observe`).
		let handled: Reply | undefined;
		const handle = async (): Promise<Reply> => (handled = await router.handle(app, req));
		try {
			if (fault?.delayMs) await sleep(fault.delayMs, undefined, { signal: gone.signal });
			if (fault?.until) {
				await Promise.race([fault.until(), aborted(gone.signal, res)]);
				gone.signal.throwIfAborted();
			}
			if (fault?.delayMs || fault?.until) req.now = app.clock();
			// Acted, then the answer is lost or replaced.
			if (fault?.afterHandling) await handle().catch(() => undefined);
			if (fault?.drop) {
				fault.observe?.({ entry, handled });
				return void raw.socket.destroy();
			}
			answer =
				(fault && faultAnswer(fault, entry.headers)) ??
				(fault?.reshape ? fault.reshape(await handle()) : await handle());
		} catch (err) {
			if (gone.signal.aborted) {
				fault?.observe?.({ entry, handled });
				return;
			}
			if (!(err instanceof HttpError) && !options.quiet)
				console.error('[emulator] unexpected error:', err);
			answer =
				err instanceof HttpError
					? { status: err.status, json: err.body, headers: err.headers }
					: { status: 500, json: { detail: 'A server error occurred.' } };
		}
		fault?.observe?.({ entry, handled, sent: answer });
		await body.drain().catch(() => undefined); // the client went away: nothing to answer
		body.discardUploads();
		await send(res, answer, fault, entry, gone.signal);
	};
	return createServer((raw, res) => {
		handle(raw, res).catch((err: unknown) => {
			if (!isAbort(err) && !options.quiet) console.error('[emulator] unexpected error:', err);
			res.destroy();
		});
	});
}

async function listen(server: Server, host: string, port: number): Promise<string> {
	server.listen(port, host);
	await once(server, 'listening');
	const address = server.address() as AddressInfo;
	return `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`;
}

/** Closes both origins (open connections too), the PDF worker and the stored files. */
async function shutDown(app: AppContext, servers: Server[]): Promise<void> {
	await Promise.all(
		servers.map((server) => {
			const closed = new Promise<void>((resolve) => server.close(() => resolve()));
			server.closeAllConnections();
			return closed;
		}),
	);
	await app.pdf.close();
	app.store.discardFiles();
	rmSync(app.tempDir, { recursive: true, force: true });
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
		tempDir: mkdtempSync(path.join(tmpdir(), 'extraction-emulator-')),
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
		blankPdf: await blankPdf(),
	};
	store.loadSeed(options.seedFile ?? path.join(__dirname, 'seed.json'), app.serviceNow());
	const requests: LoggedRequest[] = [];
	const faults = new FaultQueue();
	faults.random = options.randomFaults ?? [];
	const apiRouter = new Router([
		['api-key', v0Routes],
		['token', unversionedRoutes],
	]);
	const filesRouter = new Router([['none', filesRoutes]]);
	const api = buildOrigin('api', apiRouter, app, requests, faults, options);
	const files = buildOrigin('files', filesRouter, app, requests, faults, options);
	try {
		app.filesUrl = await listen(files, host, options.filesPort ?? 0);
		app.url = await listen(api, host, options.port ?? 0);
		app.pdf.start();
	} catch (err) {
		await shutDown(app, [api, files]);
		throw err;
	}
	return new Emulator(app, requests, faults, [api, files]);
}
