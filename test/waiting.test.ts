/**
 * Issue 20, scale: the mechanisms that let thousands of items wait in one execution — one scheduler
 * for every waiting job (a job is its state and its next poll time), polls before creates in the
 * request limiter, and items admitted a few per request slot. Each test drives the mechanism
 * directly and counts; none measures time.
 */
import { Admission } from '../nodes/ExtractionService/v1/helpers/admission';
import { pollUntilFinal } from '../nodes/ExtractionService/v1/helpers/polling';
import { NORMAL_SHARE, Semaphore } from '../nodes/shared/transport/concurrency';
import { CancelledError } from '../nodes/shared/transport/sleep';

/** A promise and its resolver, to hold a task until the test lets it go. */
function gate(): { promise: Promise<void>; open: () => void } {
	let open = () => {};
	const promise = new Promise<void>((resolve) => (open = resolve));
	return { promise, open };
}

/**
 * The order in which a one-slot Semaphore runs `creates` normal tasks and `polls` urgent ones, all
 * queued while the slot is taken.
 */
async function slotOrder(creates: number, polls: number): Promise<string[]> {
	const limiter = new Semaphore(1);
	const order: string[] = [];
	const first = gate();
	const running = limiter.run(async () => await first.promise);
	const queued: Array<Promise<void>> = [];
	for (let i = 0; i < creates; i++)
		queued.push(limiter.run(async () => void order.push(`create ${i}`)));
	for (let i = 0; i < polls; i++)
		queued.push(limiter.run(async () => void order.push(`poll ${i}`), true));
	expect(limiter.waiting).toBe(creates + polls);
	first.open();
	await Promise.all([running, ...queued]);
	return order;
}

describe('Semaphore: polls and reads before creates, and creates still go on', () => {
	it('a freed slot goes to the urgent queue, except every NORMAL_SHARE-th while creates wait', async () => {
		const order = await slotOrder(3, 8);
		const share = NORMAL_SHARE - 1;
		expect(order.slice(0, share + 1)).toEqual([
			...Array.from({ length: share }, (_, i) => `poll ${i}`),
			'create 0',
		]);
		expect(order.filter((name) => name.startsWith('create'))).toEqual([
			'create 0',
			'create 1',
			'create 2',
		]);
		expect(order).toHaveLength(11);
	});

	it('while creates wait, polls get two freed slots for each create: up to two polls a create keep up', async () => {
		// Issue 33 (bench measure 6, 5,000 items): a job takes a little more than one poll on average,
		// and its polls come due in bursts; with one slot for a poll per slot for a create, polls went
		// out only as fast as creates, and due polls waited up to 3 s while creates were queued.
		expect(await slotOrder(4, 8)).toEqual([
			'poll 0',
			'poll 1',
			'create 0',
			'poll 2',
			'poll 3',
			'create 1',
			'poll 4',
			'poll 5',
			'create 2',
			'poll 6',
			'poll 7',
			'create 3',
		]);
	});
});

describe('PollScheduler: one loop for every waiting job of an execution', () => {
	it('never has more polls in flight than maxInFlight, and every job gets its final state', async () => {
		const signal = new AbortController().signal;
		let inFlight = 0;
		let most = 0;
		const polls = new Map<number, number>();
		const jobs = Array.from({ length: 40 }, (_, id) =>
			pollUntilFinal(
				{ id, status: 'IN_PROGRESS' },
				{
					fetch: async () => {
						inFlight++;
						most = Math.max(most, inFlight);
						await Promise.resolve();
						inFlight--;
						const n = (polls.get(id) ?? 0) + 1;
						polls.set(id, n);
						return { id, status: n >= 2 ? 'FINISHED' : 'IN_PROGRESS' };
					},
					isFinal: (job) => job.status === 'FINISHED',
					deadline: Date.now() + 60_000,
					signal,
					timing: { firstDelayMs: 1, maxDelayMs: 1, growth: 1, jitter: 0 },
					maxInFlight: 3,
				},
			),
		);
		const results = await Promise.all(jobs);
		expect({
			most: most <= 3,
			finished: results.filter((r) => !r.timedOut && r.resource.status === 'FINISHED').length,
			polls: [...polls.values()].every((n) => n === 2),
		}).toEqual({ most: true, finished: 40, polls: true });
	});

	it('a stopped execution ends every wait with CancelledError', async () => {
		const controller = new AbortController();
		const options = {
			fetch: async () => ({ status: 'IN_PROGRESS' }),
			isFinal: (job: { status: string }) => job.status === 'FINISHED',
			deadline: Date.now() + 60_000,
			signal: controller.signal,
			timing: { firstDelayMs: 50, maxDelayMs: 50, growth: 1, jitter: 0 },
		};
		const waits = Array.from(
			{ length: 5 },
			async () =>
				await pollUntilFinal({ status: 'IN_PROGRESS' }, options).then(
					() => 'ended',
					(error: unknown) => (error instanceof CancelledError ? 'cancelled' : String(error)),
				),
		);
		controller.abort();
		expect(await Promise.all(waits)).toEqual(Array(5).fill('cancelled'));
	});
});

describe('Admission: a few items per request slot, and a waiting job gives its place on', () => {
	it('admits at most its size, in input order; leaving twice frees one place', async () => {
		const admission = new Admission(2);
		const entered: number[] = [];
		const all = [0, 1, 2, 3].map(async (i) => {
			await admission.enter(i);
			entered.push(i);
		});
		await Promise.resolve();
		await Promise.resolve();
		expect(entered).toEqual([0, 1]);
		admission.leave(0);
		admission.leave(0); // a second leave of the same item frees nothing
		await Promise.resolve();
		await Promise.resolve();
		expect(entered).toEqual([0, 1, 2]);
		admission.leave(1);
		await Promise.all(all);
		expect(entered).toEqual([0, 1, 2, 3]);
	});
});
