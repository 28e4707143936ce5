/** Injected faults (a test facility, not part of the references): queued answers for matching API requests. */

/** One injected answer, consumed by the next matching request. */
export interface FaultSpec {
	/** e.g. 429, 500, 502, 503, 504 (JSON body {"detail": "..."}). */
	status?: number;
	/** Retry-After header value (seconds or HTTP date). */
	retryAfter?: string;
	/** Wait this long before answering (then answer normally or with status). */
	delayMs?: number;
	/**
	 * Called when a request takes the fault; the answer waits until the promise it returns settles
	 * (the test lets it go: see `heldAnswer`), then goes on as after `delayMs`.
	 */
	until?: () => Promise<unknown>;
	/** Destroy the socket without any answer. */
	drop?: boolean;
	/**
	 * Handle the request first (the service acts: a delete deletes, a create creates), then answer
	 * with the fault (`status`, or `drop`): an answer lost after the service acted.
	 */
	afterHandling?: boolean;
	/**
	 * Hostile answers (what a misbehaving service or proxy sends). `body` is sent as is with
	 * `contentType` (default text/html), at `status` (default 200); `json` is serialised instead.
	 */
	body?: string;
	/** How `body` is turned into bytes (default utf8): `latin1` for an answer in ISO-8859-1. */
	encoding?: 'utf8' | 'latin1';
	json?: unknown;
	contentType?: string;
	/** A Location header (redirects: pair with status 301/302/307/308). */
	location?: string;
	/** Answer with `{detail, headers}` where headers are the request's own (a proxy that echoes them). */
	echoHeaders?: boolean;
	/** Send the answer's bytes one at a time, this many ms apart (a connection that drips). */
	dripMs?: number;
	/**
	 * Answer with a body this many bytes long, made on the fly (`[` then spaces: the start of a JSON
	 * list that never ends within the bytes), at `status` (default 200) with `contentType` (default
	 * application/json); the request log's `sentBytes` says how much was sent before the client left.
	 */
	streamBytes?: number;
	/** Serve this fault to every matching request instead of once (a service stuck in a state). */
	forever?: boolean;
}

/**
 * A fault that holds one answer until the test lets it go: `arrived` resolves when a request takes
 * it, and the answer waits for `release()` (or for the client to leave, or the emulator to close).
 * With it, a test acts while a request is in flight without guessing how long that takes.
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
	/** A string matches the exact path (no query); a RegExp is tested against the path. */
	path: string | RegExp;
}

interface Entry {
	match: FaultMatch;
	faults: FaultSpec[];
}

/**
 * A fault answered at random (a load test's flaky service): each API request whose method matches
 * (any when unset) gets `status` with this probability, after the queued faults (which win).
 */
export interface RandomFault {
	method?: string;
	status: number;
	/** 0–1, drawn per request and rule. */
	probability: number;
	/** Retry-After value; default "1" for 429, none otherwise. */
	retryAfter?: string;
}

/**
 * Reads `--random-faults`: comma-separated `METHOD:STATUS:PROBABILITY` (METHOD `*` for any), e.g.
 * `*:429:0.03,GET:503:0.05`.
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

/** Status codes other than 400/401/404 are "not shown" in both references; these texts follow DRF / common gateways. */
const DETAILS: Record<number, string> = {
	429: 'Request was throttled.',
	500: 'A server error occurred.',
	502: 'Bad gateway.',
	503: 'Service temporarily unavailable, try again later.',
	504: 'Gateway timeout.',
};

export function faultDetail(status: number): string {
	return DETAILS[status] ?? `Emulated fault (HTTP ${status}).`;
}

/** Fault queues, checked in insertion order. */
export class FaultQueue {
	private entries: Entry[] = [];
	/** Answered at random when no queued fault matches (see RandomFault). */
	random: RandomFault[] = [];

	add(match: FaultMatch, faults: FaultSpec[]): void {
		if (faults.length > 0) this.entries.push({ match, faults: [...faults] });
	}

	clear(): void {
		this.entries = [];
	}

	/** Takes the next fault for this request, if any queue matches. */
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
