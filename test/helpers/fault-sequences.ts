/**
 * Generated fault sequences (issue 32): what test/transport-faults.test.ts and
 * bench/transport-faults.ts share. For one kind of request — a create (`POST`), a poll (`GET` of a
 * job while Wait for Completion waits), a list (Get Many with Return All) or a download (Document →
 * Download) — a scenario is a sequence of 0..4 answers the emulator serves before it answers
 * normally, plus the node's settings; `runScenario` runs the real node (n8n-core's
 * WorkflowExecute) against the emulator in this process and `violations` checks five invariants on
 * what the emulator saw and what the node gave:
 *
 * 1. every job the service accepted and whose id reached the node is in the output items or named
 *    (its id) in the error message or description;
 * 2. no create is sent again after an attempt the service may have acted on (a 5xx, a connection
 *    lost or cut before the answer was whole, an answer lost after the service acted);
 * 3. no request is sent again before the time a 429's Retry-After asked, and a Retry-After longer
 *    than the node can wait (over the 30 s retry cap, or past a wait's deadline) fails the request
 *    at once, with an error that says when the service takes requests again;
 * 4. deadlines hold: no request starts after a wait's deadline (Wait Timeout), and no attempt
 *    outlives Request Timeout (an answer that hangs or drips is cut, the emulator sees the client
 *    leave);
 * 5. no secret of the credential appears in an output item, the error's message or description,
 *    or the error serialized (JSON.stringify, util.inspect), plain, URL-encoded, base64 or
 *    JSON-escaped (`\/`, `\u00xx`).
 *
 * Time. Retry waits and polls would make a run last seconds to minutes, and a check of "not before"
 * or "not after" on a wall clock would be flaky on a busy machine. So the process runs on a
 * simulated clock (`installFaultClock`): `Date.now` reads it, and n8n-workflow's `sleep` — from
 * which the node builds every wait (retry backoff, Retry-After, the poll scheduler) — moves it on
 * instead of waiting. The emulator reads the same clock, so its arrival times (`at`) and the node's
 * deadlines are on one time line that moves only when the node waits: "no request before
 * Retry-After" and "no request after the deadline" are exact comparisons, whatever the machine's
 * load. Only Request Timeout stays real (an attempt is cut by a real timer), and is checked by what
 * the emulator saw (the client left), not by durations.
 *
 * Faults are short labels (`'429 Retry-After: 3600'`, `'acted, then drop'`, `'echo 400 json \\/'`),
 * so that a shrunk counterexample reads as it happened and becomes a named test as it is printed.
 */
import { createServer } from 'node:net';
import { inspect } from 'node:util';

import fc from 'fast-check';
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import type { Emulator, EmulatorOptions, FaultSpec, LoggedRequest } from '../../emulator';
import { TINY_PNG } from '../../emulator/files';
import type { Reply } from '../../emulator/http';
import { replaceN8nSleep } from './n8n-sleep';
import { INVOICE_SCHEMA, fileItem, runNode } from './setup';

// ---------------------------------------------------------------------------------------------------
// Kinds, operations, secrets

export const KINDS = ['create', 'poll', 'list', 'download'] as const;
export type Kind = (typeof KINDS)[number];

/**
 * The credentials' secrets: a `/` (JSON may write it `\/`), a `+` and a `=` (URL-encoded
 * differently), so every encoding of the secret differs from the plain one.
 */
export const API_KEY = 'K3y/ab+cd=ef7Q';
export const TOKEN = 'T0k/gh+ij=kl9W';

/** The largest wait between two retries of one request (the node's `retryMaxDelayMs`). */
export const RETRY_CAP_MS = 30_000;

/** Request Timeout of a run whose faults hang or drip (they are cut by it), and of the others. */
const SHORT_REQUEST_TIMEOUT_S = 1;
const LONG_REQUEST_TIMEOUT_S = 10;

/** How long an answer that "hangs" would wait (real ms): far beyond any Request Timeout of a run. */
const HANG_MS = 600_000;

/** Real ms to watch for requests after a run has ended (an execution that goes on after its end). */
const AFTER_RUN_MS = 50;

/** ms between the bytes of a dripping answer. */
const DRIP_MS = 100;

/** Most real ms to wait after a run for the emulator to see every connection of it closed. */
const SETTLE_MS = 30_000;

interface Operation {
	family: 'v0' | 'unversioned';
	parameters: (emulator: Emulator) => Record<string, unknown>;
	/** Input items (a file where the operation takes one). */
	input?: () => Promise<INodeExecutionData[]>;
	/** Path of the create (POST), for create and poll scenarios. */
	createPath?: string;
	/** The job's path (polls) or the list's path. */
	path?: RegExp | string;
	/** Makes several jobs, whose polls run at the same time (else every request waits for the one before). */
	jobs?: number;
}

/**
 * A one-page PNG: the emulator reads an image at once, while a PDF's text comes from a worker in
 * real time, which the simulated wait would outrun (the job would never finish).
 */
const withFile = async () => [
	await fileItem({ data: { bytes: TINY_PNG, fileName: 'scan.png', mimeType: 'image/png' } }),
];

/** Job-creating operations (create and poll scenarios). */
const CREATES: Record<string, Operation> = {
	'parsing from a file': {
		family: 'v0',
		parameters: () => ({ resource: 'parsing', operation: 'create', source: 'binary' }),
		input: withFile,
		createPath: '/v0/parsing',
		path: /^\/v0\/parsing\/[^/]+$/,
	},
	'parsings from two URLs': {
		family: 'v0',
		parameters: (emulator) => ({
			resource: 'parsing',
			operation: 'create',
			source: 'urlList',
			urls: `${emulator.filesUrl}/static/a.pdf\n${emulator.filesUrl}/static/b.pdf`,
		}),
		createPath: '/v0/parsing',
		path: /^\/v0\/parsing\/[^/]+$/,
		jobs: 2,
	},
	'extraction from a file': {
		family: 'unversioned',
		parameters: () => ({ resource: 'extraction', operation: 'create', server: 'EU-1' }),
		input: withFile,
		createPath: '/extract/',
		path: /^\/extract\/[^/]+\/$/,
	},
	'extract from a file': {
		family: 'v0',
		parameters: () => ({
			resource: 'extract',
			operation: 'create',
			source: 'binary',
			schemaId: INVOICE_SCHEMA,
		}),
		input: withFile,
		createPath: '/v0/extract',
		path: /^\/v0\/extract\/[^/]+$/,
	},
};

/** Get Many with Return All (list scenarios). */
const LISTS: Record<string, Operation> = {
	'documents, every page': {
		family: 'v0',
		parameters: () => ({ resource: 'document', operation: 'getAll', returnAll: true }),
		path: '/v0/documents',
	},
	'parsings, every page': {
		family: 'v0',
		parameters: () => ({ resource: 'parsing', operation: 'getAll', returnAll: true }),
		path: '/v0/parsing',
	},
	'extractions, every page': {
		family: 'unversioned',
		parameters: () => ({ resource: 'extraction', operation: 'getAll', returnAll: true }),
		path: '/extract/',
	},
};

/** Document → Download (download scenarios): the document is made by the run. */
const DOWNLOADS: Record<string, Operation> = {
	'a document': {
		family: 'v0',
		parameters: () => ({ resource: 'document', operation: 'download' }),
	},
};

export const OPERATIONS: Record<Kind, Record<string, Operation>> = {
	create: CREATES,
	poll: CREATES,
	list: LISTS,
	download: DOWNLOADS,
};

// ---------------------------------------------------------------------------------------------------
// Faults: labels and their FaultSpecs

const ERROR_STATUSES = [400, 401, 403, 404, 409, 413, 422, 500, 502, 503, 504] as const;
const SERVER_ERRORS = [500, 502, 503, 504] as const;
/** How an echoed secret is written: as it is, URL-encoded, JSON with `\/`, JSON with `\u00xx`. */
const FORMS = ['plain', 'url', '\\/', '\\u00xx'] as const;
type Form = (typeof FORMS)[number];
const REDIRECTS = [301, 302, 303, 307, 308] as const;
const TARGETS = ['self', '/login/', 'closed port', 'closed port, secret in query', 'file:', 'none'];
const SHAPES = ['null', '[]', '"created"', '{}', '[1,2]', '{"detail":"ok"}'];

/** The secret written in `form`, as it stands in a body (inside a JSON string for the JSON forms). */
export function writeSecret(secret: string, form: Form): string {
	switch (form) {
		case 'plain':
			return secret;
		case 'url':
			return encodeURIComponent(secret);
		case '\\/':
			return secret.replace(/\//g, '\\/');
		case '\\u00xx':
			// The first letter and every / + = as \u00xx: the text holds no run of the secret.
			return secret.replace(
				/^.|[/+=]/g,
				(c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
			);
		default:
			throw new Error(`Unknown form "${String(form)}" of a secret`);
	}
}

/** `count` levels of nested lists, as JSON text. */
const nested = (count: number) => `${'['.repeat(count)}${']'.repeat(count)}`;

/** The fault labels a kind's sequences are drawn from. */
function faultLabels(kind: Kind): fc.Arbitrary<string> {
	const common: Array<fc.Arbitrary<string>> = [
		fc.constantFrom(...ERROR_STATUSES).map((s) => `HTTP ${s}`),
		fc.constant('429'),
		fc.integer({ min: 0, max: 3 }).map((s) => `429 Retry-After: ${s}`),
		fc.integer({ min: 0, max: 4 * 3600 }).map((s) => `429 Retry-After: ${s}`),
		fc.integer({ min: 0, max: 4 * 3600 }).map((s) => `429 Retry-After: date +${s}s`),
		fc.integer({ min: 0, max: 3600 }).map((s) => `503 Retry-After: ${s}`),
		fc.constant('drop'),
		fc.integer({ min: 1, max: 30 }).map((ms) => `slow ${ms} ms`),
		fc.constant('hang'),
		fc.constant('drip'),
		fc
			.constantFrom(200, ...ERROR_STATUSES)
			.filter((s) => kind !== 'download' || s !== 200)
			.map((s) => `HTML ${s}`),
		fc.constantFrom(200, 400, 500, 502).map((s) => `empty ${s}`),
		fc
			.tuple(fc.constantFrom(400, 401, 403, 404, 422, 500, 502), fc.constantFrom(...FORMS))
			.map(([s, f]) => `echo ${s} json ${f}`),
		fc
			.tuple(fc.constantFrom(400, 403, 502), fc.constantFrom<Form>('plain', 'url'))
			.map(([s, f]) => `echo ${s} html ${f}`),
		fc.constantFrom(400, 401, 500).map((s) => `echo headers ${s}`),
		fc
			.tuple(fc.constantFrom(...REDIRECTS), fc.constantFrom(...TARGETS))
			.map(([s, t]) => `redirect ${s} → ${t}`),
	];
	const json = fc.constantFrom(...SHAPES).map((s) => `JSON ${s}`);
	const echo = fc.constantFrom(...FORMS).map((f) => `reshape: echo ${f}`);
	switch (kind) {
		case 'create':
			return fc.oneof(
				...common,
				json,
				echo,
				fc.constantFrom('drop', ...SERVER_ERRORS.map(String)).map((a) => `acted, then ${a}`),
				fc.constantFrom(
					'reshape: a list, one without id',
					'reshape: no id',
					'reshape: nested 300 deep',
					'reshape: id in upper case',
				),
			);
		case 'poll':
			return fc.oneof(
				...common,
				json,
				echo,
				fc.constantFrom(
					'reshape: no status',
					'reshape: another id',
					'reshape: nested 300 deep',
					'reshape: id in upper case',
				),
			);
		case 'list':
			return fc.oneof(
				...common,
				json,
				echo,
				fc.constantFrom(
					'JSON {"count":3}',
					'reshape: results not a list',
					'reshape: nested 300 deep',
				),
			);
		case 'download':
			return fc.oneof(...common);
	}
}

/** What a run's faults need to know to become FaultSpecs. */
interface FaultContext {
	emulator: Emulator;
	secret: string;
	/** An address on the loopback where nothing listens (connection refused). */
	closedPort: number;
	/** The path the faults answer (a redirect to `self` points there). */
	path: string;
}

/** A JSON answer's text with a field `note` holding the secret in `form` (first element of a list). */
function echoInJson(reply: Reply, secret: string, form: Form): Reply {
	if (reply.json === undefined) return reply;
	const note = `"note":"key ${writeSecret(secret, form)}"`;
	const text = JSON.stringify(reply.json);
	const at = text.indexOf('{');
	const body =
		at < 0
			? text
			: `${text.slice(0, at + 1)}${note}${text[at + 1] === '}' ? '' : ','}${text.slice(at + 1)}`;
	return { status: reply.status, body, headers: { 'content-type': 'application/json' } };
}

/** The handler's answer changed as `how` says (`reshape` faults). */
function reshaped(how: string, secret: string): (reply: Reply) => Reply {
	return (reply) => {
		const value = reply.json;
		if (value === undefined || reply.status >= 300) return reply;
		const job = (Array.isArray(value) ? value[0] : value) as IDataObject | undefined;
		const echo = /^echo (.+)$/.exec(how);
		if (echo) return echoInJson(reply, secret, echo[1] as Form);
		const json = (changed: unknown): Reply => ({ ...reply, json: changed });
		switch (how) {
			case 'a list, one without id':
				return json([...(Array.isArray(value) ? value : [value]), { status: job?.status }]);
			case 'no id':
				return json(
					(Array.isArray(value) ? value : [value]).map((j: IDataObject) => {
						const { id: _, ...rest } = j;
						return rest;
					}),
				);
			case 'id in upper case':
				return json(
					Array.isArray(value)
						? value.map((j: IDataObject) => ({ ...j, id: String(j.id).toUpperCase() }))
						: { ...job, id: String(job?.id).toUpperCase() },
				);
			case 'no status': {
				const { status: _, ...rest } = job ?? {};
				return json(rest);
			}
			case 'another id':
				return json({ ...job, id: '11111111-2222-4333-8444-555555555555' });
			case 'results not a list':
				return json({ ...job, results: 'none' });
			case 'nested 300 deep': {
				const text = JSON.stringify(value);
				const at = text.indexOf('{');
				const body = `${text.slice(0, at + 1)}"deep":${nested(300)},${text.slice(at + 1)}`;
				return { status: reply.status, body, headers: { 'content-type': 'application/json' } };
			}
			default:
				throw new Error(`Unknown reshape "${how}"`);
		}
	};
}

const html = (title: string) =>
	`<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1><p>nginx</p></body></html>`;

/** The FaultSpec of a label (throws on a label it does not know). */
export function faultSpec(label: string, ctx: FaultContext): FaultSpec {
	const { secret } = ctx;
	let m: RegExpExecArray | null;
	if ((m = /^HTTP (\d+)$/.exec(label))) return { status: Number(m[1]) };
	if (label === '429') return { status: 429 };
	if ((m = /^(429|503) Retry-After: (\d+)$/.exec(label)))
		return { status: Number(m[1]), retryAfter: m[2] };
	if ((m = /^429 Retry-After: date \+(\d+)s$/.exec(label))) {
		const seconds = Number(m[1]);
		// The date is written when the answer is made (the clock may have moved since the injection).
		return {
			status: 429,
			get retryAfter() {
				return new Date(Date.now() + seconds * 1000).toUTCString();
			},
		};
	}
	if (label === 'drop') return { drop: true };
	if ((m = /^acted, then (drop|\d+)$/.exec(label)))
		return m[1] === 'drop'
			? { afterHandling: true, drop: true }
			: { afterHandling: true, status: Number(m[1]) };
	if ((m = /^slow (\d+) ms$/.exec(label))) return { delayMs: Number(m[1]) };
	if (label === 'hang') return { delayMs: HANG_MS };
	// The service's own answer, a byte every 100 ms: hundreds of bytes take far longer than a run's
	// Request Timeout.
	if (label === 'drip') return { dripMs: DRIP_MS };
	if ((m = /^HTML (\d+)$/.exec(label)))
		return { status: Number(m[1]), body: html(`${m[1]} Service Unavailable`) };
	if ((m = /^empty (\d+)$/.exec(label)))
		return { status: Number(m[1]), body: '', contentType: 'application/json' };
	if ((m = /^JSON (.+)$/.exec(label))) return { status: 200, json: JSON.parse(m[1]) };
	if ((m = /^echo (\d+) json (.+)$/.exec(label)))
		return {
			status: Number(m[1]),
			body: `{"detail":"Invalid key ${writeSecret(secret, m[2] as Form)}."}`,
			contentType: 'application/json',
		};
	if ((m = /^echo (\d+) html (.+)$/.exec(label)))
		return { status: Number(m[1]), body: html(`Denied for ${writeSecret(secret, m[2] as Form)}`) };
	if ((m = /^echo headers (\d+)$/.exec(label))) return { status: Number(m[1]), echoHeaders: true };
	if ((m = /^reshape: (.+)$/.exec(label))) return { reshape: reshaped(m[1], secret) };
	if ((m = /^redirect (\d+) → (.+)$/.exec(label))) {
		const status = Number(m[1]);
		const closed = `http://127.0.0.1:${ctx.closedPort}/files/x.pdf`;
		const targets: Record<string, string | undefined> = {
			self: `${ctx.emulator.url}${ctx.path}`,
			'/login/': '/login/',
			'closed port': closed,
			'closed port, secret in query': `${closed}?key=${encodeURIComponent(secret)}`,
			'file:': 'file:///etc/passwd',
			none: undefined,
		};
		if (!(m[2] in targets)) throw new Error(`Unknown redirect target in "${label}"`);
		const location = targets[m[2]];
		// Without a Location, `faultAnswer` needs a body to answer the status as it is.
		return location === undefined
			? { status, body: '', contentType: 'text/plain' }
			: { status, location, body: '' };
	}
	throw new Error(`Unknown fault label "${label}"`);
}

/** Whether a label makes an attempt last beyond Request Timeout (so the run takes the short one). */
const cutByTimeout = (label: string) => label === 'hang' || label === 'drip';

/** Real ms an answer must last at least for its attempt to count as surely cut by Request Timeout. */
const SURELY_CUT_MS = 10_000;

/** Whether a request's answer would have lasted far beyond Request Timeout: it must have been cut. */
function mustBeCut(seen: Seen | undefined): boolean {
	if (seen?.label === 'hang') return true;
	if (seen?.label !== 'drip' || !seen.sent) return false;
	const { json, body } = seen.sent;
	const bytes =
		json !== undefined
			? Buffer.byteLength(JSON.stringify(json))
			: typeof body === 'string' || Buffer.isBuffer(body)
				? Buffer.byteLength(body)
				: 0;
	return bytes * DRIP_MS >= SURELY_CUT_MS;
}

// ---------------------------------------------------------------------------------------------------
// Scenarios

export interface Scenario {
	kind: Kind;
	/** A key of `OPERATIONS[kind]`. */
	operation: string;
	/** Answers served, in order, before the service answers normally. */
	faults: string[];
	maxRetries: number;
	continueOnFail: boolean;
	/** Poll scenarios: Wait Timeout (s), On Timeout, and the job's processing time (ms). */
	waitTimeout?: number;
	onTimeout?: 'error' | 'outputUnfinished';
	processingMs?: number;
}

/** Scenarios of one kind: 0..4 faults, Max Retries, Continue On Fail, and a poll's wait. */
export function scenarios(kind: Kind): fc.Arbitrary<Scenario> {
	const base = {
		kind: fc.constant(kind),
		operation: fc.constantFrom(...Object.keys(OPERATIONS[kind])),
		faults: fc.array(faultLabels(kind), { maxLength: 4 }),
		maxRetries: fc.constantFrom(3, 0, 1),
		continueOnFail: fc.boolean(),
	};
	if (kind !== 'poll') return fc.record(base);
	return fc.record({
		...base,
		waitTimeout: fc.constantFrom(20, 6, 120),
		onTimeout: fc.constantFrom<'error' | 'outputUnfinished'>('error', 'outputUnfinished'),
		processingMs: fc.constantFrom(3000, 0, 20_000, 3_600_000),
	});
}

// ---------------------------------------------------------------------------------------------------
// The simulated clock

/** Real ms a wait of the node takes per simulated ms (a 2 s poll delay: 4 ms). */
const REAL_SHARE = 0.002;

/** The simulated clock (epoch ms): starts at the real time and moves only when the node waits. */
export const clock = { now: Date.now() };

/**
 * Puts this process on the simulated clock: `Date.now` reads `clock.now`, and n8n-workflow's `sleep`
 * moves it on instead of waiting (it yields once to I/O). Returns a function that undoes both.
 */
export function installFaultClock(): () => void {
	const realNow = Date.now;
	clock.now = Math.max(clock.now, realNow());
	Date.now = () => clock.now;
	// Each sleep ends at its own time, or at once when the clock already passed it (another job's
	// wait moved it on): waits that overlap overlap on the clock too, as they would in real time.
	// A sliver of real time per wait lets the emulator's own work (a PDF's text, read in a worker)
	// go on, as it would while the node waits; the clock does not depend on it.
	const restoreSleep = replaceN8nSleep(async (ms: number) => {
		const end = clock.now + Math.max(0, ms);
		await new Promise((resolve) =>
			setTimeout(resolve, Math.min(Math.max(0, ms), 5000) * REAL_SHARE),
		);
		clock.now = Math.max(clock.now, end);
	});
	return () => {
		Date.now = realNow;
		restoreSleep();
	};
}

// ---------------------------------------------------------------------------------------------------
// The environment: one emulator, its closed requests

/** What the runs share: the emulator, which of its requests are over, a closed port. */
export class FaultEnvironment {
	private readonly closed = new WeakSet<LoggedRequest>();

	/** Resolved by `init()`. */
	closedPort = 0;

	/** The emulator's options: the secrets, the simulated clock, the closed requests. */
	readonly emulatorOptions: EmulatorOptions = {
		apiKey: API_KEY,
		token: TOKEN,
		processingMs: 0,
		quiet: true,
		clock: () => Date.now(),
		onRequestLogged: (entry) => this.closed.add(entry),
	};

	constructor(readonly emulator: () => Emulator) {}

	/** Finds a loopback port where nothing listens. */
	async init(): Promise<void> {
		this.closedPort = await new Promise<number>((resolve) => {
			const server = createServer();
			server.listen(0, '127.0.0.1', () => {
				const { port } = server.address() as { port: number };
				server.close(() => resolve(port));
			});
		});
	}

	/** Whether every request the emulator logged is over (answered, dropped, or left by the client). */
	settled(): boolean {
		return this.emulator().requests.every((entry) => this.closed.has(entry));
	}
}

// ---------------------------------------------------------------------------------------------------
// A run

/** What one request's fault (or the watcher after the faults) saw. */
interface Seen {
	label?: string;
	handled?: Reply;
	sent?: Reply;
}

/** Everything a run's checks read. */
export interface Observation {
	scenario: Scenario;
	secret: string;
	/** The requests of the run (both origins), in arrival order. */
	requests: LoggedRequest[];
	seen: Map<LoggedRequest, Seen>;
	items: INodeExecutionData[];
	error?: Error & IDataObject;
	/** Texts of the error and of error items (message and description). */
	errorText: string;
	/** The simulated clock when the node's run ended. */
	endedAt: number;
	/** Requests that came after the node's run had ended (within AFTER_RUN_MS and the settling). */
	afterEnd: LoggedRequest[];
	/** Every connection of the run was over within SETTLE_MS of its end. */
	settled: boolean;
	/** Poll scenarios: the path of the job's polls. */
	faultPath: string | RegExp;
	createPath?: string;
	/** Everything n8n would show or store of the run, and the error serialized. */
	shown: string;
}

const sleepReal = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs a scenario: injects its faults, runs the node, waits for the emulator to see every connection end. */
export async function runScenario(env: FaultEnvironment, scenario: Scenario): Promise<Observation> {
	const emulator = env.emulator();
	const operation = OPERATIONS[scenario.kind][scenario.operation];
	if (!operation) throw new Error(`No ${scenario.kind} operation "${scenario.operation}"`);
	const secret = operation.family === 'v0' ? API_KEY : TOKEN;
	emulator.clearFaults();
	let parameters: Record<string, unknown> = operation.parameters(emulator);
	let faultPath: string | RegExp = operation.path ?? '';
	let contextPath = typeof faultPath === 'string' ? faultPath : '';
	if (scenario.kind === 'download') {
		const [id] = emulator.seedDocuments(1, { namePrefix: 'download' });
		parameters = { ...parameters, documentId: id };
		faultPath = contextPath = `/v0/documents/${id}/download`;
	}
	if (scenario.kind === 'list') {
		// About three pages, whatever the emulator holds by now.
		const answer = await fetch(`${emulator.url}${faultPath as string}?size=1`, {
			headers: operation.family === 'v0' ? { 'x-api-key': API_KEY } : { authorization: TOKEN },
		});
		const { count } = (await answer.json()) as { count: number };
		emulator.setListQuirks({ pageSize: Math.max(1, Math.ceil(count / 3)) });
	}
	if (scenario.kind === 'create') {
		parameters.waitForCompletion = false;
		contextPath = operation.createPath ?? '';
	}
	const slow = scenario.faults.some(cutByTimeout);
	const options: IDataObject = {
		maxRetries: scenario.maxRetries,
		requestTimeout: slow ? SHORT_REQUEST_TIMEOUT_S : LONG_REQUEST_TIMEOUT_S,
	};
	if (scenario.kind === 'poll') {
		emulator.setProcessingMs(scenario.processingMs ?? 0);
		options.timeout = scenario.waitTimeout;
		options.onTimeout = scenario.onTimeout;
	}
	parameters.options = options;
	const input = operation.input ? await operation.input() : [{ json: {} }];

	const seen = new Map<LoggedRequest, Seen>();
	const watch = (label?: string): Pick<FaultSpec, 'observe'> => ({
		observe: ({ entry, handled, sent }) => seen.set(entry, { label, handled, sent }),
	});
	const ctx: FaultContext = { emulator, secret, closedPort: env.closedPort, path: contextPath };
	// Object.assign, not a spread: a Retry-After date is a getter, read when the answer is made.
	const specs = scenario.faults.map((label) => Object.assign(faultSpec(label, ctx), watch(label)));
	// After the faults, every request is watched and answered normally.
	const watcher: FaultSpec = { ...watch(), forever: true };
	if (scenario.kind === 'create') {
		faultPath = operation.createPath as string;
		emulator.injectFaults({ method: 'POST', path: faultPath }, [...specs, watcher]);
	} else {
		if (scenario.kind === 'poll' && operation.createPath)
			emulator.injectFaults({ method: 'POST', path: operation.createPath }, [{ ...watcher }]);
		emulator.injectFaults({ method: 'GET', path: faultPath }, [...specs, { ...watcher }]);
	}

	emulator.clearLog();
	let result: Awaited<ReturnType<typeof runNode>>;
	try {
		result = await runNode(emulator, parameters, input, {
			node: { continueOnFail: scenario.continueOnFail },
		});
	} finally {
		emulator.clearFaults();
	}
	const endedAt = Date.now();
	const sentInRun = emulator.requests.length;
	// The connections the node left end now (cut attempts: the emulator sees the client leave), and
	// anything the execution still had going shows itself.
	const started = performance.now();
	await sleepReal(AFTER_RUN_MS);
	while (!env.settled() && performance.now() - started < SETTLE_MS) await sleepReal(10);
	const settled = env.settled();
	const afterEnd = emulator.requests.slice(sentInRun);
	if (scenario.kind === 'list') emulator.setListQuirks({});
	const requests = [...emulator.requests];
	emulator.clearLog();

	const { items, error } = result;
	const errorItems = items.filter((i) => i.json.error !== undefined);
	const errorText = [
		error?.message,
		error?.description,
		...errorItems.flatMap((i) => [i.json.error, i.json.description]),
	]
		.filter((t) => t !== undefined && t !== null)
		.map(String)
		.join('\n');
	let serialized: string;
	try {
		serialized = JSON.stringify(error) ?? '';
	} catch (e) {
		serialized = `(JSON.stringify failed: ${String(e)})`;
	}
	const shown = [
		inspect(items, { depth: null }),
		JSON.stringify(items),
		String(error?.message ?? ''),
		String(error?.description ?? ''),
		serialized,
		inspect(error, { depth: null, showHidden: true }),
		inspect(result.run?.data, { depth: null }),
	].join('\n');
	return {
		scenario,
		secret,
		requests,
		seen,
		items,
		error,
		errorText,
		endedAt,
		afterEnd,
		settled,
		faultPath,
		createPath: operation.createPath,
		shown,
	};
}

// ---------------------------------------------------------------------------------------------------
// The invariants

/** The ids of a JSON answer: the object's `id`, or each element's of a list. */
function idsOf(reply: Reply | undefined): string[] {
	if (!reply || reply.status < 200 || reply.status >= 300) return [];
	let value = reply.json;
	if (value === undefined && typeof reply.body === 'string') {
		try {
			value = JSON.parse(reply.body);
		} catch {
			return [];
		}
	}
	const jobs = Array.isArray(value) ? value : [value];
	return jobs
		.map((j) => (j && typeof j === 'object' ? (j as IDataObject).id : undefined))
		.filter((id): id is string => typeof id === 'string' && id.length > 0);
}

/** A request as the checks name it: "#3 POST /v0/parsing → 502 at +1200 ms (fault: HTTP 502)". */
function describe(o: Observation, entry: LoggedRequest): string {
	const index = o.requests.indexOf(entry);
	const t0 = o.requests[0]?.at ?? entry.at;
	const label = o.seen.get(entry)?.label;
	return `#${index + 1} ${entry.method} ${entry.path} → ${entry.status || 'no answer'} at +${Math.round(entry.at - t0)} ms${label ? ` (fault: ${label})` : ''}`;
}

/**
 * Whether `text` says when the service takes requests again: the wait (in s, min or h, within 2 s
 * or its unit), or the time (ISO 8601 or an HTTP date, within 2 s, or a minute when written
 * without seconds).
 */
export function saysWhen(text: string, waitMs: number, retryAt: number): boolean {
	const units: Record<string, number> = {};
	for (const u of ['s', 'sec', 'second', 'seconds']) units[u] = 1000;
	for (const u of ['min', 'mins', 'minute', 'minutes']) units[u] = 60_000;
	for (const u of ['h', 'hour', 'hours']) units[u] = 3_600_000;
	for (const m of text.matchAll(
		/(\d+(?:[.,]\d+)?)\s*(seconds?|sec|s|minutes?|mins?|min|hours?|h)\b/gi,
	)) {
		const unit = units[m[2].toLowerCase()];
		if (Math.abs(Number(m[1].replace(',', '.')) * unit - waitMs) <= Math.max(2000, unit))
			return true;
	}
	const iso = /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?/g;
	for (const m of text.matchAll(iso)) {
		const at = Date.parse(`${m[0].replace(' ', 'T')}${m[2] ? '' : 'Z'}`);
		if (Math.abs(at - retryAt) <= (m[1] ? 2000 : 60_000)) return true;
	}
	for (const m of text.matchAll(/[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT/g))
		if (Math.abs(Date.parse(m[0]) - retryAt) <= 2000) return true;
	return false;
}

/** Every written form of `secret` in `text` (after undoing JSON escapes and URL-encoding too). */
export function secretForms(text: string, secret: string): string[] {
	const found: string[] = [];
	const unescapeJson = (t: string) =>
		t
			.replace(/\\u([0-9a-fA-F]{4})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))
			.replace(/\\\//g, '/');
	const urlDecoded = (t: string) =>
		t.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
	if (text.includes(secret)) found.push('plain');
	if (text.includes(encodeURIComponent(secret))) found.push('URL-encoded');
	if (!found.length && unescapeJson(text).includes(secret)) found.push('JSON-escaped');
	if (!found.length && urlDecoded(unescapeJson(text)).includes(secret)) found.push('encoded');
	// base64 of the secret at each of the three alignments: the characters that depend on its bytes only
	for (let shift = 0; shift < 3; shift++) {
		const b64 = Buffer.from(`${'\0'.repeat(shift)}${secret}`).toString('base64');
		const core = b64.slice(
			Math.ceil((8 * shift) / 6),
			Math.floor((8 * (shift + secret.length)) / 6),
		);
		if (text.includes(core)) {
			found.push('base64');
			break;
		}
	}
	return found;
}

/**
 * The invariants' violations in a run (empty when all hold), each starting with its number and a
 * short name (used to tell counterexamples apart).
 */
export function violations(o: Observation): string[] {
	const found: string[] = [];
	const { scenario, requests, seen } = o;
	const api = requests.filter((r) => r.origin === 'api');
	const posts = o.createPath
		? api.filter((r) => r.method === 'POST' && r.path === o.createPath)
		: [];

	// 1. Nothing lost: each id the service returned in a whole 2xx answer to a create is output or named.
	const nodeTimedOut = /timed out|still running at the wait deadline/i.test(o.errorText);
	const output = JSON.stringify(o.items.map((i) => i.json)).toLowerCase();
	const errorText = o.errorText.toLowerCase();
	posts.forEach((post, i) => {
		const answer = seen.get(post)?.sent;
		if (post.status < 200 || post.status >= 300) return;
		// An answer sent whole while the node gave up on it (its Request Timeout): it never arrived.
		if (i === posts.length - 1 && nodeTimedOut) return;
		for (const id of idsOf(answer)) {
			const key = id.toLowerCase();
			if (!output.includes(key) && !errorText.includes(key))
				found.push(
					`1 job lost: the service accepted ${id} (${describe(o, post)}), but it is neither in the output nor named in the error: ${o.errorText.slice(0, 300) || '(no error)'}`,
				);
		}
	});

	// 2. No create sent again after an attempt the service may have acted on.
	posts.slice(0, -1).forEach((post, i) => {
		const s = seen.get(post);
		const acted = s?.handled !== undefined;
		if (post.status === 0 || post.status >= 500 || acted)
			found.push(
				`2 create sent twice: ${describe(o, posts[i + 1])} after ${describe(o, post)}${acted ? ', which the service acted on' : ''}`,
			);
	});

	// 3. Retry-After: no request before it (any of the run's: they are of one family); longer than
	// the node can wait → the request fails at once (no request after it, no wait), saying when.
	const lastPost = posts.at(-1);
	const concurrent =
		scenario.kind === 'poll' && (OPERATIONS.poll[scenario.operation]?.jobs ?? 1) > 1;
	const deadline =
		scenario.kind === 'poll' && lastPost && scenario.waitTimeout !== undefined
			? lastPost.at + scenario.waitTimeout * 1000
			: undefined;
	const holds = api.flatMap((entry) => {
		const value = seen.get(entry)?.sent?.headers?.['retry-after'];
		if (entry.status < 400 || value === undefined) return [];
		const retryAt = /^\d+$/.test(value) ? entry.at + Number(value) * 1000 : Date.parse(value);
		return Number.isNaN(retryAt) ? [] : [{ retryAt, waitMs: retryAt - entry.at }];
	});
	api.forEach((entry, index) => {
		const value = seen.get(entry)?.sent?.headers?.['retry-after'];
		if (entry.status < 400 || value === undefined) return;
		const retryAt = /^\d+$/.test(value) ? entry.at + Number(value) * 1000 : Date.parse(value);
		if (Number.isNaN(retryAt)) return;
		const waitMs = retryAt - entry.at;
		// The requests sent after the node had this answer: every later one when the run's requests
		// go one after another; when several jobs are polled at once (another poll may have been on
		// its way already), the later ones of the same request.
		const later = api
			.slice(index + 1)
			.filter((r) => !concurrent || (r.method === entry.method && r.path === entry.path));
		const early = later.find((r) => r.at < retryAt);
		if (early)
			found.push(
				`3 sent before Retry-After: ${describe(o, early)}, ${retryAt - early.at} ms before the Retry-After "${value}" of ${describe(o, entry)} allowed`,
			);
		// Would the node retry this answer? A 429 always; a 5xx only for a GET; and only while Max
		// Retries allows (this request's failed attempts before: the same request just before it).
		if (entry.status !== 429 && entry.method !== 'GET') return;
		const poll = scenario.kind === 'poll' && entry.method === 'GET';
		let attempt = 0;
		for (let i = index - 1; i >= 0 && !poll; i--) {
			const before = api[i];
			if (before.method !== entry.method || before.path !== entry.path) continue;
			if (before.status !== 0 && before.status < 400) break;
			attempt++;
		}
		if (attempt >= scenario.maxRetries && !poll) return;
		const tooLong = poll ? deadline !== undefined && retryAt >= deadline : waitMs > RETRY_CAP_MS;
		if (!tooLong) return;
		if (later.length > 0 && !early)
			found.push(
				`3 did not fail at once: ${describe(o, later[0])} after the Retry-After "${value}" of ${describe(o, entry)}, longer than the node can wait`,
			);
		if (!poll && o.endedAt - entry.at >= 1000)
			found.push(
				`3 did not fail at once: the node waited ${o.endedAt - entry.at} ms after the Retry-After "${value}" of ${describe(o, entry)}, longer than it can wait`,
			);
		// What the node said about this request: the run's error; when several jobs are polled at
		// once, what it said about this job (another job's failure may have ended the run first).
		const jobId = entry.path.split('/').filter(Boolean).at(-1) ?? '';
		const texts = concurrent
			? [
					...(String(o.error?.message ?? '').includes(jobId) ? [o.errorText] : []),
					...o.items.filter((i) => i.json.id === jobId).map((i) => JSON.stringify(i.json)),
				]
			: [o.errorText];
		const unfinished = o.items.some((i) => i.json.timedOut === true);
		// The time of any Retry-After of the run will do (a later one may hold the family longer).
		const says = (t: string) => holds.some((h) => saysWhen(t, h.waitMs, h.retryAt));
		if (!unfinished && texts.length > 0 && !texts.some(says))
			found.push(
				`3 does not say when: after the Retry-After "${value}" (${Math.round(waitMs / 1000)} s) of ${describe(o, entry)}, longer than the node can wait, the error says: ${texts.join(' / ').slice(0, 300) || '(no error)'}`,
			);
	});

	// 4. Deadlines: no request after a wait's deadline; no attempt outlives Request Timeout.
	if (deadline !== undefined)
		for (const entry of api.filter((r) => r.at > deadline))
			found.push(
				`4 request after the deadline: ${describe(o, entry)}, ${entry.at - deadline} ms after the Wait Timeout of ${scenario.waitTimeout} s`,
			);
	// A request on its way when the run ended may arrive after it; one the node started later (the
	// clock moved on: something of the execution still waited) may not.
	for (const entry of o.afterEnd.filter((r) => r.at > o.endedAt))
		found.push(
			`4 request after the run ended: ${describe(o, entry)}, ${entry.at - o.endedAt} ms after the node's execution had ended`,
		);
	if (!o.settled)
		found.push(
			`4 attempt not cut: a connection of the run was still open ${SETTLE_MS / 1000} s after it ended (Request Timeout ${SHORT_REQUEST_TIMEOUT_S} s)`,
		);
	for (const entry of api)
		if (mustBeCut(seen.get(entry)) && entry.status !== 0)
			found.push(
				`4 attempt not cut: ${describe(o, entry)} was answered whole, though it lasted beyond Request Timeout`,
			);

	// 5. No secret in what the node shows.
	for (const secret of [API_KEY, TOKEN]) {
		const forms = secretForms(o.shown, secret);
		if (forms.length)
			found.push(
				`5 secret shown (${forms.join(', ')}): ${secret === API_KEY ? 'the API key' : 'the token'} in the run's output or error`,
			);
	}
	return found;
}

/** What tells counterexamples apart: the invariant a violation breaks and the kinds of fault that broke it. */
export interface Signature {
	/** The violation's code, e.g. "1 job lost", "5 secret shown (JSON-escaped)". */
	code: string;
	/** The labels of the scenario's faults, numbers left out (`429 Retry-After: #`), sorted. */
	faults: string[];
}

const codeOf = (violation: string) => violation.slice(0, violation.indexOf(':'));
const faultKinds = (scenario: Scenario) =>
	[...new Set(scenario.faults.map((label) => label.replace(/\d+/g, '#')))].sort();

/** The signature of a violation found in a scenario (a shrunk counterexample's). */
export function signatureOf(violation: string, scenario: Scenario): Signature {
	return { code: codeOf(violation), faults: faultKinds(scenario) };
}

/** Whether a known signature explains a violation of `scenario`: same code, and it holds those kinds of fault. */
export function explains(signature: Signature, violation: string, scenario: Scenario): boolean {
	const kinds = faultKinds(scenario);
	return codeOf(violation) === signature.code && signature.faults.every((f) => kinds.includes(f));
}

/** A readable account of a run: its requests, the outcome, and the violations. */
export function report(o: Observation, found: string[]): string {
	const lines = [
		`scenario: ${JSON.stringify(o.scenario)}`,
		...o.requests.map((r) => `  ${describe(o, r)}${r.origin === 'files' ? ' [files]' : ''}`),
		`  error: ${o.error ? `${o.error.message} | ${String(o.error.description ?? '')}` : '(none)'}`,
		`  items: ${o.items.length}${o.items.length ? ` ${JSON.stringify(o.items.map((i) => ({ id: i.json.id, status: i.json.status, error: i.json.error, timedOut: i.json.timedOut })))}` : ''}`,
		...found.map((v) => `VIOLATION ${v}`),
	];
	return lines.join('\n');
}

/** The fast-check property of one kind: every generated scenario keeps the five invariants. */
export function faultProperty(
	env: FaultEnvironment,
	kind: Kind,
	onRun?: (o: Observation, found: string[]) => void,
) {
	return fc.asyncProperty(scenarios(kind), async (scenario) => {
		const o = await runScenario(env, scenario);
		const found = violations(o);
		onRun?.(o, found);
		if (found.length) throw new Error(report(o, found));
	});
}
