/**
 * Issue 19: the Extraction Service Trigger at its limits — bursts, list orders that change, counts
 * that stop short, pages larger than asked, date filters the service ignores, a service clock that
 * goes back, and the cost of a poll against a long history. Written to fail on the poll mechanism
 * before the rewrite and to pass after it.
 *
 * Everything goes through n8n-core's real poll path (`createTriggerHarness`) against the emulator.
 * Jobs are made in bulk by the emulator itself (`seedJobs`, `seedDocuments`): final at once
 * (processingMs 0), or held unfinished until `releaseJobs`, so no assertion depends on timing.
 *
 * The emulator runs on a test clock (`EmulatorOptions.clock`), so every `created_at` is decided by
 * the test, never by how fast the machine is. Each case runs under two clocks a real service may have:
 * - `own created_at`: the clock ticks 1 ms at every reading, so each record (seeded one after the
 *   other, one reading each) has its own `created_at`;
 * - `bulk created_at`: the clock stands still and moves 1 ms before each bulk the test seeds, so the
 *   records of one bulk share one `created_at` (a service that stamps a batch with its transaction's
 *   time) while every bulk is dated after everything before it.
 *
 * Each describe has its own emulator (the history one test leaves does not change another's counts),
 * and every list quirk, clock offset and list order is reset after each test.
 *
 * The promise under test (README): each job fires exactly once and none is skipped; when that cannot
 * hold, the poll fails with a clear error — never a silent skip, never a silent repeat. Polls are
 * bounded: until every expected job fired, at most N polls, then 2 more that must fire nothing.
 */
import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import type { Emulator, ListOrder, LoggedRequest } from '../emulator';
import { MAX_FIRING_PER_POLL } from '../nodes/ExtractionServiceTrigger/poll/lists';
import { MAX_SEEN, MAX_WINDOW_PAGES } from '../nodes/ExtractionServiceTrigger/poll/window';
import { MAX_HEAD } from '../nodes/ExtractionServiceTrigger/poll/scan';
import { createTriggerHarness, type TriggerHarness } from '../scripts/engine';
import { apiRequests, credentialsFor, useEmulator } from './helpers/setup';

jest.setTimeout(300_000);

const ORDERS: ListOrder[] = ['newest-first', 'oldest-first'];
/** What the README promises the saved state stays under. */
const STATE_LIMIT = 32 * 1024;
/** The page size the trigger asks for and the emulator serves by default. */
const PAGE = 100;

// ---------------------------------------------------------------------------------------------------
// Clocks, and one emulator per describe

/** How the records of one bulk are dated (see the file's comment). */
type Dating = 'own created_at' | 'bulk created_at';
const DATINGS: Dating[] = ['own created_at', 'bulk created_at'];

/** Every dating with every list order, for `describe.each`. */
const DATINGS_AND_ORDERS: Array<[Dating, ListOrder]> = DATINGS.flatMap((dating) =>
	ORDERS.map((order): [Dating, ListOrder] => [dating, order]),
);

/** The emulator's base clock: epoch ms from the first reading on, moved only as its dating says. */
class TestClock {
	private t: number | undefined;

	constructor(private readonly dating: Dating) {}

	/** The clock as the emulator reads it: ticks 1 ms at every reading with `own created_at`. */
	readonly read = (): number => {
		this.t ??= Date.now();
		if (this.dating === 'own created_at') this.t += 1;
		return this.t;
	};

	/** Moves the clock 1 ms on: what is seeded next is dated after everything before it. */
	step(): void {
		this.t = (this.t ?? Date.now()) + 1;
	}
}

let current: { emulator: () => Emulator; clock: TestClock } | undefined;

/** The emulator of the running describe. */
function emulator(): Emulator {
	if (!current) throw new Error('no emulator for this describe (call ownEmulator() in it)');
	return current.emulator();
}

/** Starts an emulator on a test clock for the enclosing describe (jobs final at once unless seeded otherwise). */
function ownEmulator(dating: Dating): void {
	const clock = new TestClock(dating);
	const get = useEmulator({ processingMs: 0, clock: clock.read });
	beforeAll(() => {
		current = { emulator: get, clock };
	});
}

/** A describe for each dating, each with an emulator of its own: `title (dating)`. */
function describeDatings(title: string, tests: () => void): void {
	describe.each(DATINGS)(`${title} (%s)`, (dating) => {
		ownEmulator(dating);
		tests();
	});
}

/** A describe for each dating and list order, each with an emulator of its own listing in that order. */
function describeClocks(title: string, tests: () => void): void {
	describe.each(DATINGS_AND_ORDERS)(`${title} (%s, list %s)`, (dating, order) => {
		ownEmulator(dating);
		beforeEach(() => emulator().setListOrder(order));
		tests();
	});
}

afterEach(() => {
	if (!current) return;
	const e = current.emulator();
	e.setListQuirks({});
	e.setClockOffset(0);
	e.setListOrder('newest-first');
	e.setMaxPageSize(PAGE);
	e.clearFaults();
});

type Event = 'extractionFinished' | 'parsingFinished' | 'documentUploaded';

/** A bulk of jobs made by the emulator, dated after everything before (ids oldest first). */
function seedJobs(
	kind: 'extraction' | 'parsing',
	n: number,
	options: Parameters<Emulator['seedJobs']>[2] = {},
): string[] {
	current?.clock.step();
	return emulator().seedJobs(kind, n, options);
}

/** A bulk of finished jobs, or uploads, of an event (ids oldest first). */
function seedFinished(event: Event, n: number, namePrefix = 'seed'): string[] {
	if (event !== 'documentUploaded')
		return seedJobs(event === 'extractionFinished' ? 'extraction' : 'parsing', n, { namePrefix });
	current?.clock.step();
	return emulator().seedDocuments(n, { namePrefix });
}

// ---------------------------------------------------------------------------------------------------
// Polling helpers

/** A trigger for `event` with the running emulator's credentials. */
function trigger(event: Event): TriggerHarness {
	return createTriggerHarness({ parameters: { event }, credentials: credentialsFor(emulator()) });
}

const idsOf = (items: INodeExecutionData[]): string[] => items.map((item) => String(item.json.id));
const stateBytes = (harness: TriggerHarness): number => JSON.stringify(harness.staticData()).length;

/** What one poll did: the ids it fired, its error, the requests it made, the size of the state after it. */
interface Polled {
	ids: string[];
	error?: Error & IDataObject;
	requests: LoggedRequest[];
	stateBytes: number;
}

/** The activation poll, which must neither fail nor output anything (no Include Existing Since). */
async function activate(harness: TriggerHarness): Promise<Polled> {
	emulator().clearLog();
	const run = await harness.activate();
	if (run.error) throw new Error(`the activation failed: ${run.error.message}`);
	expect(run.emitted).toBe(false);
	return {
		ids: idsOf(run.items),
		requests: [...apiRequests(emulator())],
		stateBytes: stateBytes(harness),
	};
}

/** A trigger for `event`, activated after `history` finished jobs (or uploads) of it. */
async function activatedAfter(
	event: Event,
	history: number,
): Promise<{ harness: TriggerHarness; activation: Polled }> {
	seedFinished(event, history, 'history');
	const harness = trigger(event);
	return { harness, activation: await activate(harness) };
}

/** One scheduled poll, with the requests it made (the log is cleared before it). */
async function pollOnce(harness: TriggerHarness): Promise<Polled> {
	emulator().clearLog();
	const run = await harness.poll();
	return {
		ids: idsOf(run.items),
		error: run.error,
		requests: [...apiRequests(emulator())],
		stateBytes: stateBytes(harness),
	};
}

/** One scheduled poll that must not fail (its error fails the test, named). */
async function okPoll(harness: TriggerHarness, label: string): Promise<Polled> {
	const polled = await pollOnce(harness);
	if (polled.error) throw new Error(`${label} failed: ${polled.error.message}`);
	return polled;
}

/**
 * Polls until every id of `expected` has fired (at most `maxPolls` polls), then `extraPolls` more;
 * any poll that fails fails the test. Returns each poll, so that the test can count what fired.
 */
async function drain(
	harness: TriggerHarness,
	expected: string[],
	maxPolls: number,
	extraPolls = 2,
): Promise<Polled[]> {
	const polls: Polled[] = [];
	const fired = new Set<string>();
	const missing = () => expected.some((id) => !fired.has(id));
	for (let n = 0; n < maxPolls && missing(); n++) {
		const polled = await okPoll(harness, `poll ${polls.length + 1}`);
		polls.push(polled);
		for (const id of polled.ids) fired.add(id);
	}
	for (let n = 0; n < extraPolls; n++)
		polls.push(await okPoll(harness, `extra poll ${n + 1} (after ${polls.length} polls)`));
	return polls;
}

const firedIn = (polls: Polled[]): string[] => polls.flatMap((polled) => polled.ids);

/** How the fired ids compare with the expected ones (compared with `allOnce` for a one-line verdict). */
function tally(
	fired: string[],
	expected: string[],
): {
	expected: number;
	firedOnce: number;
	neverFired: number;
	firedMoreThanOnce: number;
	unexpected: number;
} {
	const times = new Map<string, number>();
	for (const id of fired) times.set(id, (times.get(id) ?? 0) + 1);
	const wanted = new Set(expected);
	return {
		expected: wanted.size,
		firedOnce: expected.filter((id) => times.get(id) === 1).length,
		neverFired: expected.filter((id) => !times.has(id)).length,
		firedMoreThanOnce: expected.filter((id) => (times.get(id) ?? 0) > 1).length,
		unexpected: [...times.keys()].filter((id) => !wanted.has(id)).length,
	};
}

const allOnce = (n: number) => ({
	expected: n,
	firedOnce: n,
	neverFired: 0,
	firedMoreThanOnce: 0,
	unexpected: 0,
});

/** Expects `fired` to be each id of `expected` exactly once and nothing else; `label` names the poll(s) in the failure. */
function expectEachOnce(label: string, fired: string[], expected: string[]): void {
	expect({ [label]: tally(fired, expected) }).toEqual({ [label]: allOnce(expected.length) });
}

const largestState = (polls: Polled[]): number =>
	Math.max(0, ...polls.map((polled) => polled.stateBytes));

/** Reads by id of extractions (`GET /extract/{id}/`, `§unversioned-4.3`) among some requests. */
const extractionReads = (requests: LoggedRequest[]): number =>
	requests.filter((r) => r.method === 'GET' && /^\/extract\/[^/]+\/$/.test(r.path)).length;

/** Fails the test when a poll made more than `limit` requests, naming them by kind. */
function atMost(requests: LoggedRequest[], limit: number, label: string): void {
	if (requests.length <= limit) return;
	const kinds = new Map<string, number>();
	for (const r of requests) {
		const kind = `${r.method} ${r.path.replace(/[0-9a-f]{8}-[0-9a-f-]{27,}/gi, '{id}')}`;
		kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
	}
	const breakdown = [...kinds].map(([kind, n]) => `${n}× ${kind}`).join(', ');
	throw new Error(`${label} made ${requests.length} requests (at most ${limit}): ${breakdown}`);
}

// ---------------------------------------------------------------------------------------------------
// 1. Bursts

describeClocks('1. Bursts seen unfinished, then released', () => {
	it.each<[Event, 'extraction' | 'parsing']>([
		['extractionFinished', 'extraction'],
		['parsingFinished', 'parsing'],
	])(
		'%s: 2,500 jobs held unfinished fire nothing, then each fires exactly once after they finished; the state stays under 32 KB',
		async (event, kind) => {
			const harness = trigger(event);
			const polls: Polled[] = [await activate(harness)];
			const burst = seedJobs(kind, 2500, { hold: true });
			expect(burst).toHaveLength(2500);
			for (let n = 1; n <= 3; n++) {
				const polled = await okPoll(harness, `poll ${n} while held`);
				polls.push(polled);
				expect({ poll: n, fired: polled.ids.length }).toEqual({ poll: n, fired: 0 });
			}
			emulator().releaseJobs();
			const after = await drain(harness, burst, 10);
			polls.push(...after);
			const largest = largestState(polls);
			expect({
				...tally(firedIn(after), burst),
				largestStateBytes: largest <= STATE_LIMIT ? 'at most 32 KB' : largest,
			}).toEqual({ ...allOnce(2500), largestStateBytes: 'at most 32 KB' });
		},
	);
});

// ---------------------------------------------------------------------------------------------------
// 2. List order read from the list at every poll

describeDatings('2. The list order is read from the list at every poll, not learnt once', () => {
	it.each<Event>(['extractionFinished', 'documentUploaded'])(
		'%s: 250 existing (pages of 100), then the order flips twice; each poll fires exactly the 2 new ones',
		async (event) => {
			const { harness } = await activatedAfter(event, 250); // newest first
			const steps: Array<{ order: ListOrder; label: string }> = [
				{ order: 'newest-first', label: 'the poll, newest first' },
				{ order: 'oldest-first', label: 'the poll after the list turned oldest first' },
				{ order: 'newest-first', label: 'the poll after it turned back to newest first' },
			];
			for (const { order, label } of steps) {
				emulator().setListOrder(order);
				const fresh = seedFinished(event, 2, 'fresh');
				expectEachOnce(label, (await okPoll(harness, label)).ids, fresh);
			}
			for (let n = 1; n <= 2; n++)
				expectEachOnce(`quiet poll ${n}`, (await okPoll(harness, `quiet poll ${n}`)).ids, []);
		},
	);
});

// ---------------------------------------------------------------------------------------------------
// 3. A count that stops short

describeClocks('3. A count capped at 100 while the list holds 300', () => {
	it.each<Event>(['extractionFinished', 'documentUploaded'])(
		'%s: 3 new ones each fire exactly once',
		async (event) => {
			emulator().setListQuirks({ countCap: 100 });
			const { harness } = await activatedAfter(event, 300);
			const fresh = seedFinished(event, 3, 'fresh');
			expectEachOnce('the polls after activation', firedIn(await drain(harness, fresh, 5)), fresh);
		},
	);
});

// ---------------------------------------------------------------------------------------------------
// 4. A page larger than asked

describeClocks('4. Pages of 1,500 whatever the size asked', () => {
	it(`Extraction Finished: 1,500 new ones fire exactly once each, no poll reading more than ${MAX_FIRING_PER_POLL} + 4 by id`, async () => {
		emulator().setListQuirks({ pageSize: 1500 });
		const harness = trigger('extractionFinished');
		await activate(harness);
		const burst = seedFinished('extractionFinished', 1500);
		const polls = await drain(harness, burst, 10);
		const overLimit = polls
			.map((polled, n) => ({ poll: n + 1, readsById: extractionReads(polled.requests) }))
			.filter((poll) => poll.readsById > MAX_FIRING_PER_POLL + 4);
		expect({ pollsReadingTooManyById: overLimit, ...tally(firedIn(polls), burst) }).toEqual({
			pollsReadingTooManyById: [],
			...allOnce(1500),
		});
	});
});

// ---------------------------------------------------------------------------------------------------
// 5. A date filter the service ignores

describeClocks('5. A service that ignores created_at_after / created_at_before', () => {
	it.each<Event>(['documentUploaded', 'parsingFinished'])(
		'%s: with 4 old ones (an hour and a day before activation), 4 polls make one execution with exactly the new one',
		async (event) => {
			emulator().setClockOffset(-3_600_000);
			seedFinished(event, 2, 'hour-old');
			emulator().setClockOffset(-86_400_000);
			seedFinished(event, 2, 'day-old');
			emulator().setClockOffset(0);
			emulator().setListQuirks({ ignoreDateFilter: true });
			const harness = trigger(event);
			await activate(harness);
			const before = harness.emits().length;
			const fresh = seedFinished(event, 1, 'new');
			for (let n = 1; n <= 4; n++) await okPoll(harness, `poll ${n}`);
			const emits = harness.emits().slice(before);
			expect({ executions: emits.length, ...tally(emits.flatMap(idsOf), fresh) }).toEqual({
				executions: 1,
				...allOnce(1),
			});
		},
	);
});

// ---------------------------------------------------------------------------------------------------
// 6. A service clock that goes back more than 10 minutes

describeClocks('6. The service clock goes back 15 minutes', () => {
	it.each<Event>(['documentUploaded', 'parsingFinished'])(
		'%s: the 2 created after the jump each fire exactly once, or a poll fails naming what happened; nothing fires twice',
		async (event) => {
			const { harness } = await activatedAfter(event, 5);
			const first = seedFinished(event, 1, 'before-jump');
			expectEachOnce(
				'the poll before the jump',
				(await okPoll(harness, 'the poll before the jump')).ids,
				first,
			);
			emulator().setClockOffset(-15 * 60_000);
			const fresh = seedFinished(event, 2, 'after-jump');
			const polls: Polled[] = [];
			for (let n = 0; n < 3; n++) polls.push(await pollOnce(harness));
			const verdict = tally(firedIn(polls), fresh);
			// Never a repeat, never anything else.
			expect({
				firedMoreThanOnce: verdict.firedMoreThanOnce,
				unexpected: verdict.unexpected,
			}).toEqual({ firedMoreThanOnce: 0, unexpected: 0 });
			const errors = polls
				.map((polled) => polled.error?.message)
				.filter((message): message is string => message !== undefined);
			const named = errors.some((message) => /clock|before|earlier/i.test(message));
			// Both fired once, or a poll said what happened: never silently nothing.
			const outcome =
				verdict.firedOnce === fresh.length
					? 'both fired once'
					: named
						? 'reported'
						: `${verdict.neverFired} of ${fresh.length} silently never fired (errors: ${errors.join(' | ') || 'none'})`;
			expect(['both fired once', 'reported']).toContain(outcome);
			// Any error a poll gave names what happened.
			for (const message of errors) expect(message).toMatch(/clock|before|earlier/i);
		},
	);

	it('extractionFinished: the 2 created after the jump each fire exactly once (the list has no dates: positions do not depend on the clock)', async () => {
		seedFinished('extractionFinished', 5, 'history');
		const harness = trigger('extractionFinished');
		await activate(harness);
		const first = seedFinished('extractionFinished', 1, 'before-jump');
		expectEachOnce(
			'the poll before the jump',
			(await okPoll(harness, 'the poll before the jump')).ids,
			first,
		);
		emulator().setClockOffset(-15 * 60_000);
		const fresh = seedFinished('extractionFinished', 2, 'after-jump');
		const polls: Polled[] = [];
		for (let n = 1; n <= 3; n++) polls.push(await okPoll(harness, `poll ${n} after the jump`));
		expectEachOnce('the 3 polls after the jump', firedIn(polls), fresh);
	});
});

// ---------------------------------------------------------------------------------------------------
// 7. Cost follows new work, not history

/**
 * A quiet poll costs at most `quiet` requests whatever the history (extractions 10: the head's
 * pages, at most `MAX_HEAD` extractions, the page after, and one page at the other end;
 * documents and parsings 10: one count and the window, at most `MAX_SEEN` handled items,
 * docs/service-api.md §trigger); k new jobs cost at most `quiet` + ⌈k/100⌉ list pages and, for jobs read by id, k
 * reads; the state stays under 32 KB.
 */
async function costAgainstHistory(event: Event, history: number, k: number): Promise<void> {
	const quietMost =
		event === 'extractionFinished'
			? 1 + Math.ceil((MAX_HEAD + 1) / PAGE)
			: 1 + Math.ceil(MAX_SEEN / PAGE);
	const { harness, activation } = await activatedAfter(event, history);
	const polls: Polled[] = [activation];
	const quiet = await okPoll(harness, 'the quiet poll after activation');
	polls.push(quiet);
	expectEachOnce('the quiet poll after activation', quiet.ids, []);
	atMost(quiet.requests, quietMost, 'the quiet poll after activation');

	const fresh = seedFinished(event, k, 'fresh');
	const busy = await okPoll(harness, `the poll after ${k} new`);
	polls.push(busy);
	expectEachOnce(`the poll after ${k} new`, busy.ids, fresh);
	const readsById = event === 'documentUploaded' ? 0 : k;
	atMost(busy.requests, quietMost + Math.ceil(k / PAGE) + readsById, `the poll after ${k} new`);

	const after = await okPoll(harness, 'the quiet poll after them');
	polls.push(after);
	expectEachOnce('the quiet poll after them', after.ids, []);
	atMost(after.requests, quietMost, 'the quiet poll after them');
	const largest = largestState(polls);
	expect({ largestStateBytes: largest <= STATE_LIMIT ? 'at most 32 KB' : largest }).toEqual({
		largestStateBytes: 'at most 32 KB',
	});
}

/** 4 rounds of 500 new finished jobs, each round fired whole by the poll right after it. */
async function sustained(event: Event): Promise<void> {
	const { harness } = await activatedAfter(event, 50);
	for (let round = 1; round <= 4; round++) {
		const fresh = seedFinished(event, 500, `round-${round}`);
		expectEachOnce(
			`the poll of round ${round}`,
			(await okPoll(harness, `the poll of round ${round}`)).ids,
			fresh,
		);
	}
	expectEachOnce(
		'the quiet poll after 4 rounds',
		(await okPoll(harness, 'the quiet poll after 4 rounds')).ids,
		[],
	);
}

describeDatings(
	'7a. Cost: Parsing Finished against 10,000 finished parsings of the last minutes',
	() => {
		it('a quiet poll makes ≤ 10 requests; 150 new ones fire in one poll with ≤ 10 + 2 + 150 requests; the state stays under 32 KB', async () => {
			await costAgainstHistory('parsingFinished', 10_000, 150);
		});
	},
);

describeDatings('7b. Cost: Document Uploaded against 10,000 documents of the last minutes', () => {
	it('a quiet poll makes ≤ 10 requests; 150 new ones fire in one poll with ≤ 10 + 2 requests; the state stays under 32 KB', async () => {
		await costAgainstHistory('documentUploaded', 10_000, 150);
	});
});

describeClocks('7b. Cost: Extraction Finished against 10,000 finished extractions', () => {
	it('a quiet poll makes ≤ 10 requests; 150 new ones fire in one poll with ≤ 10 + 2 + 150 requests; the state stays under 32 KB', async () => {
		await costAgainstHistory('extractionFinished', 10_000, 150);
	});
});

describeDatings('7c. Sustained load: Parsing Finished', () => {
	it('4 rounds of 500 new finished parsings: each round fires whole in the poll right after it', async () => {
		await sustained('parsingFinished');
	});
});

describeClocks('7c. Sustained load: Extraction Finished', () => {
	it('4 rounds of 500 new finished extractions: each round fires whole in the poll right after it', async () => {
		await sustained('extractionFinished');
	});
});

// ---------------------------------------------------------------------------------------------------
// 8. More items of one created_at than a poll can read

describe('8. More documents share one created_at than a poll reads (bulk created_at, pages of 1)', () => {
	ownEmulator('bulk created_at');

	it(`a poll fires the ${MAX_WINDOW_PAGES} it could read; the next, with nothing new it could read, fails naming the time; with pages large enough, the rest fire, each once`, async () => {
		const harness = trigger('documentUploaded');
		await activate(harness);
		emulator().setMaxPageSize(1);
		const crowd = seedFinished('documentUploaded', MAX_WINDOW_PAGES + 5, 'crowd');
		const first = await pollOnce(harness);
		expect({ fired: first.ids.length, error: first.error?.message }).toEqual({
			fired: MAX_WINDOW_PAGES,
			error: undefined,
		});
		const second = await pollOnce(harness);
		expect({ fired: second.ids.length, error: second.error?.message }).toEqual({
			fired: 0,
			error: expect.stringMatching(
				/^The trigger could not read every document created since \d{4}-\d\d-\d\dT[\d:.]+Z in one poll$/,
			),
		});
		emulator().setMaxPageSize(PAGE);
		const rest = (await okPoll(harness, 'the poll with pages of 100')).ids;
		expectEachOnce('the two polls that fired', [...first.ids, ...rest], crowd);
	});
});

// ---------------------------------------------------------------------------------------------------
// 9. An extraction first seen unfinished is pending, not counted as missed

describe.each(ORDERS)('9. Extractions first seen unfinished (list %s)', (order) => {
	ownEmulator('own created_at');
	beforeEach(() => emulator().setListOrder(order));

	it('the poll that finds them keeps them pending with no miss (one not listed in 3 complete reads in a row counts as deleted), and each fires once when it finishes', async () => {
		seedJobs('extraction', 3);
		const harness = trigger('extractionFinished');
		await activate(harness);
		const held = seedJobs('extraction', 2, { hold: true });
		const done = seedJobs('extraction', 1);
		expectEachOnce(
			'the poll that finds them',
			(await okPoll(harness, 'the poll that finds them')).ids,
			done,
		);
		const pending = String(harness.staticData().pending);
		expect({
			followed: pending.split(',').filter(Boolean).length,
			missed: pending.includes('~'),
		}).toEqual({ followed: 2, missed: false });
		emulator().releaseJobs(held);
		expectEachOnce(
			'the poll after they finished',
			(await okPoll(harness, 'the poll after they finished')).ids,
			held,
		);
	});
});
