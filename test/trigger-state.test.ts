/**
 * The trigger's compact state, as units: marks of ids (`poll/marks.ts`).
 */
import { randomUUID } from 'node:crypto';

import {
	byHash,
	hashId,
	markOf,
	packMarks,
	unpackMarks,
} from '../nodes/ExtractionServiceTrigger/poll/marks';

describe('marks', () => {
	it('pack and unpack keep every mark (hash, key, misses), sorted by key; damaged text reads as undefined', () => {
		const marks = [
			markOf('b', 1_732_000_000_500),
			{ ...markOf('a', 1_732_000_000_000), misses: 2 },
			markOf('c', 1_732_000_000_500),
		];
		const back = unpackMarks(packMarks(marks));
		expect(back).toEqual([...marks].sort((x, y) => x.key - y.key));
		expect(unpackMarks('')).toEqual([]);
		expect(unpackMarks('not marks')).toBeUndefined();
		expect(unpackMarks(42)).toBeUndefined();
	});

	it('3,000 jobs created within seconds take under 32 KB', () => {
		const start = 1_732_000_000_000;
		const marks = Array.from({ length: 3000 }, (_, i) => markOf(randomUUID(), start + i * 3));
		expect(packMarks(marks).length).toBeLessThan(32 * 1024);
	});

	it('marks by hash find an id by its hash', () => {
		const marks = byHash([markOf('x', 10), markOf('y', 20)]);
		expect(marks.get(hashId('x'))).toEqual({ hash: hashId('x'), key: 10 });
		expect(marks.get(hashId('z'))).toBeUndefined();
		expect(marks.size).toBe(2);
	});
});
