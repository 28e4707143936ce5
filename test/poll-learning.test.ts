/**
 * Issue 33: the first poll of a job waits as long as the execution's jobs of its kind took
 * (nodes/ExtractionService/v1/helpers/poll-learning.ts). The rules, checked on generated cases
 * (fast-check) against today's schedule (`pollDelay`), and the learning itself on a model of an
 * execution whose jobs finish at times the model decides (no clock: poll times are numbers).
 */
import fc from 'fast-check';

import { pollDelay } from '../nodes/ExtractionService/v1/helpers/polling';
import { MIN_FINISHED, PollLearner } from '../nodes/ExtractionService/v1/helpers/poll-learning';

/** A job's poll times (ms after its create): the first wait `first`, then today's waits. */
function pollTimes(first: number, draws: number[]): number[] {
	const times = [first];
	for (let n = 1; n < draws.length; n++)
		times.push(times[n - 1] + pollDelay(n, undefined, () => draws[n]));
	return times;
}

/** The first of `times` at or after `finish` (the poll that sees the job final), and its index. */
function seenBy(times: number[], finish: number): { at: number; polls: number } {
	const index = times.findIndex((t) => t >= finish);
	return { at: times[index], polls: index + 1 };
}

const draws = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), {
	minLength: 40,
	maxLength: 40,
});

describe('The learned first poll keeps today’s promises', () => {
	it('is never earlier than today’s first poll, and nothing is learned before 5 jobs were seen final', () => {
		fc.assert(
			fc.property(
				fc.array(fc.tuple(fc.integer({ min: 0, max: 120_000 }), fc.boolean()), { maxLength: 300 }),
				fc.integer({ min: 2000, max: 2200 }),
				(polls, today) => {
					const learner = new PollLearner();
					for (const [at, final] of polls) learner.note('Extract', at, final);
					const first = learner.firstPollMs('Extract', today);
					const finished = polls.filter(([, final]) => final).length;
					if (finished < MIN_FINISHED) return first === undefined;
					return first !== undefined && first >= today;
				},
			),
		);
	});

	it('never polls a job more often than today: its k-th poll comes no earlier than today’s k-th', () => {
		fc.assert(
			fc.property(fc.integer({ min: 0, max: 60_000 }), draws, (later, random) => {
				const today = pollTimes(
					pollDelay(0, undefined, () => random[0]),
					random,
				);
				const learned = pollTimes(today[0] + later, random);
				return learned.every((t, k) => t >= today[k]);
			}),
		);
	});

	it('sees a job slower than the learned time less than one of today’s steps (≤ 5 s) after today would', () => {
		fc.assert(
			fc.property(
				fc.integer({ min: 0, max: 60_000 }),
				fc.integer({ min: 1, max: 90_000 }),
				draws,
				(later, after, random) => {
					const today = pollTimes(
						pollDelay(0, undefined, () => random[0]),
						random,
					);
					const learned = pollTimes(today[0] + later, random);
					const finish = learned[0] + after; // slower than the learned first poll
					if (finish > today.at(-1)!) return true;
					return seenBy(learned, finish).at - seenBy(today, finish).at < 5000;
				},
			),
		);
	});
});

describe('An execution learns how long its jobs take', () => {
	/**
	 * Jobs created one after another (`spacing` ms apart), each finishing `time(i)` ms after its
	 * create; each is polled at the learned first time, then at today's steps, and every poll is
	 * noted as the scheduler notes it. Returns polls per job and finished → seen (ms) of the last half.
	 */
	function execution(jobs: number, time: (i: number) => number, seed: number) {
		const learner = new PollLearner();
		let state = seed;
		const random = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
		const polls: number[] = [];
		const late: number[] = [];
		for (let i = 0; i < jobs; i++) {
			const finish = time(i);
			const today = pollDelay(0, undefined, random);
			const first = learner.firstPollMs('Extract', today) ?? today;
			const times = pollTimes(first, Array.from({ length: 40 }, random));
			const seen = seenBy(times, finish);
			for (const t of times.slice(0, seen.polls)) learner.note('Extract', t, t >= finish);
			if (i >= jobs / 2) {
				polls.push(seen.polls);
				late.push(seen.at - finish);
			}
		}
		const median = [...late].sort((a, b) => a - b)[Math.floor(late.length / 2)];
		return { pollsPerJob: polls.reduce((a, b) => a + b, 0) / polls.length, medianLateMs: median };
	}

	it.each([3000, 6000, 12_000])(
		'jobs of %i ms (±50 ms): ≤ 1.3 polls a job and seen ≤ 1.5 s after they finished (median), where today polls 2–4 times',
		(ms) => {
			const r = execution(400, (i) => ms + ((i * 37) % 100) - 50, 7);
			expect(r.pollsPerJob).toBeLessThanOrEqual(1.3);
			expect(r.medianLateMs).toBeLessThanOrEqual(1500);
		},
	);

	it('a service that slows down (6 s, then 12 s) is polled at most as often as today', () => {
		const r = execution(400, (i) => (i < 200 ? 6000 : 12_000), 11);
		// Today: 2, 4.5, 7.6, 11.5, 16.4 s → 5 polls for a 12 s job.
		expect(r.pollsPerJob).toBeLessThanOrEqual(5);
	});
});
