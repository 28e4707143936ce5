/** Injected faults (a test facility, not in the references; README: *Request flow*, *Hostile answers*). */
import type { Reply } from './http';
import type { LoggedRequest } from './index';

/** One injected answer, consumed by the next matching request. */
export interface FaultSpec {
	/** e.g. 429, 500, 502, 503, 504, answered with {"detail": "..."}. */
	status?: number;
	/** Retry-After header value (seconds or HTTP date). */
	retryAfter?: string;
	/** Wait this long, then answer normally or with `status`. */
	delayMs?: number;
	/** The answer waits until the promise it returns settles (see {@link heldAnswer}), then as `delayMs`. */
	until?: () => Promise<unknown>;
	/** Destroy the socket without any answer. */
	drop?: boolean;
	/** Handle the request first (the service acts), then answer with `status` or `drop`. */
	afterHandling?: boolean;
	/** Sent as is with `contentType` (default text/html), at `status` (default 200). */
	body?: string;
	/** How `body` becomes bytes (default utf8). */
	encoding?: 'utf8' | 'latin1';
	/** Sent as JSON instead of `body`. */
	json?: unknown;
	contentType?: string;
	/** A Location header (with a 3xx `status`). */
	location?: string;
	/** Answer `{detail, headers}` with the request's own headers (a proxy that echoes them). */
	echoHeaders?: boolean;
	/** Send the answer's bytes one at a time, this many ms apart. */
	dripMs?: number;
	/** A body this long made on the fly (`[` then spaces; `contentType` default application/json). */
	streamBytes?: number;
	/** Serve this fault to every matching request instead of once. */
	forever?: boolean;
	/**
	 * The request is handled (the service acts) and the handler's answer is passed through this
	 * function before it is sent: a real answer mangled (a field dropped, an id in upper case, a
	 * secret echoed). Used alone (without `status`, `body`, `json`, `location`, `echoHeaders`); an
	 * error the handler throws is answered as usual, unchanged.
	 */
	reshape?: (answer: Reply) => Reply;
	/**
	 * Told of the request once its answer is decided, before it is sent (or when the client left
	 * first): `handled` is the handler's answer when the handler ran and answered (normally, with
	 * `afterHandling` or `reshape`), `sent` what is answered (undefined for `drop` and a client gone). `entry.status` tells later whether the answer was sent
	 * whole. A fault with only `observe` (and `forever`) changes nothing: it watches.
	 */
	observe?: (seen: { entry: LoggedRequest; handled?: Reply; sent?: Reply }) => void;
}

/**
 * A fault that holds one answer until the test lets it go: `arrived` resolves when a request takes
 * it; the answer waits for `release()` (or the client leaving, or the emulator closing).
 */
export function heldAnswer(): { fault: FaultSpec; arrived: Promise<void>; release: () => void } {
	let arrive!: () => void;
	let release!: () => void;
	const arrived = new Promise<void>((resolve) => (arrive = resolve));
	const gate = new Promise<void>((resolve) => (release = resolve));
	const until = (): Promise<void> => {
		arrive();
		return gate;
	};
	return { fault: { until }, arrived, release };
}

export interface FaultMatch {
	method?: string;
	/** A string matches the exact path (no query); a RegExp is tested against it. */
	path: string | RegExp;
}

/** A status answered at random, after the queued faults (a load test's flaky service). */
export interface RandomFault {
	/** Any method when unset. */
	method?: string;
	status: number;
	/** 0–1, drawn per request and rule. */
	probability: number;
	retryAfter?: string;
}

/**
 * Reads `--random-faults`: comma-separated `METHOD:STATUS:PROBABILITY` (METHOD `*` for any), 429
 * with Retry-After 1.
 *
 * @throws Error naming the entry that is not of that form
 */
export function parseRandomFaults(spec: string): RandomFault[] {
	return spec
		.split(',')
		.map((part) => part.trim())
		.filter((part) => part.length > 0)
		.map((part) => {
			const m = /^([A-Za-z*]+):([1-5]\d\d):(0|1|0?\.\d+)$/.exec(part);
			if (!m)
				throw new Error(
					`--random-faults: "${part}" is not METHOD:STATUS:PROBABILITY (e.g. GET:503:0.05)`,
				);
			const status = Number(m[2]);
			return {
				method: m[1] === '*' ? undefined : m[1].toUpperCase(),
				status,
				probability: Number(m[3]),
				retryAfter: status === 429 ? '1' : undefined,
			};
		});
}

/** Statuses other than 400/401/404 are "not shown"; these texts follow DRF and common gateways. */
const DETAILS: Record<number, string> = {
	429: 'Request was throttled.',
	500: 'A server error occurred.',
	502: 'Bad gateway.',
	503: 'Service temporarily unavailable, try again later.',
	504: 'Gateway timeout.',
};

/**
 * The answer of a fault instead of the handler's (`requestHeaders` for `echoHeaders`), or undefined
 * when the fault only delays or drops the handler's answer.
 */
export function faultAnswer(
	fault: FaultSpec,
	requestHeaders: Record<string, string>,
): Reply | undefined {
	// A custom body, a redirect or an echo replaces the answer (a hostile one).
	const hostile =
		fault.body !== undefined || fault.json !== undefined || fault.location !== undefined;
	if (!fault.status && !hostile && !fault.echoHeaders) return undefined;
	const headers: Record<string, string> = {};
	if (fault.location !== undefined) headers.location = fault.location;
	if (fault.retryAfter) headers['retry-after'] = fault.retryAfter;
	const status = fault.status ?? 200;
	const detail = DETAILS[status] ?? `Emulated fault (HTTP ${status}).`;
	if (fault.echoHeaders) return { status, json: { detail, headers: requestHeaders }, headers };
	if (!hostile) return { status, json: { detail }, headers };
	if (fault.json !== undefined) return { status, json: fault.json, headers };
	headers['content-type'] = fault.contentType ?? 'text/html; charset=utf-8';
	return {
		status,
		body: fault.encoding ? Buffer.from(fault.body ?? '', fault.encoding) : (fault.body ?? ''),
		headers,
	};
}

/** Queued faults, checked in insertion order, then the random ones. */
export class FaultQueue {
	private entries: Array<{ match: FaultMatch; faults: FaultSpec[] }> = [];
	random: RandomFault[] = [];

	add(match: FaultMatch, faults: FaultSpec[]): void {
		if (faults.length > 0) this.entries.push({ match, faults: [...faults] });
	}

	clear(): void {
		this.entries = [];
	}

	/** Takes the next fault for this request, if any. */
	take(method: string, path: string): FaultSpec | undefined {
		for (const entry of this.entries) {
			const { match } = entry;
			if (match.method && match.method.toUpperCase() !== method.toUpperCase()) continue;
			const pathMatches =
				typeof match.path === 'string'
					? match.path === path
					: ((match.path.lastIndex = 0), match.path.test(path));
			if (!pathMatches) continue;
			const fault = entry.faults[0]?.forever ? entry.faults[0] : entry.faults.shift();
			if (entry.faults.length === 0) this.entries = this.entries.filter((e) => e !== entry);
			return fault;
		}
		for (const rule of this.random) {
			if (rule.method && rule.method !== method.toUpperCase()) continue;
			if (Math.random() < rule.probability)
				return { status: rule.status, retryAfter: rule.retryAfter };
		}
		return undefined;
	}
}
