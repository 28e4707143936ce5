/**
 * The trigger's compact state, as units: marks of ids (`poll/marks.ts`) and the summaries of the
 * margin behind the cursor (`poll/sketch.ts`).
 */
import { randomUUID } from 'node:crypto';

import {
	MarkSet,
	hashId,
	markOf,
	packMarks,
	unpackMarks,
} from '../nodes/ExtractionServiceTrigger/poll/marks';
import { Sketch, keyOf } from '../nodes/ExtractionServiceTrigger/poll/sketch';

describe('marks', () => {
	it('pack and unpack keep every mark (hash, key, misses), sorted by key; damaged text reads as undefined', () => {
		const marks = [
			markOf('b', 1_732_000_000_500),
			markOf('a', 1_732_000_000_000, 2),
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

	it('a mark set finds an id only with its key', () => {
		const set = new MarkSet([markOf('x', 10), markOf('y', 20)]);
		expect(set.find('x', (key) => key === 10)).toEqual({ hash: hashId('x'), key: 10 });
		expect(set.find('x', (key) => key === 11)).toBeUndefined();
		expect(set.find('z', () => true)).toBeUndefined();
		const y = set.find('y', () => true);
		set.delete(y!);
		expect(set.size).toBe(1);
	});
});

describe('sketch of the margin', () => {
	// Fixed ids, so that the rare summary that cannot be read (1 in about 1,000 for 5 differences)
	// cannot make the test flaky; each call gives new ones.
	let made = 0;
	const ids = (n: number) =>
		Array.from({ length: n }, () => `00000000-0000-4000-8000-${String(++made).padStart(12, '0')}`);

	it('names the ids one set has and the other has not, both ways, after packing', () => {
		const common = ids(500);
		const appeared = ids(3);
		const deleted = ids(2);
		const before = new Sketch();
		for (const id of [...common, ...deleted]) before.add(id);
		const now = new Sketch();
		for (const id of [...common, ...appeared]) now.add(id);
		const difference = now.difference(Sketch.unpack(before.pack())!);
		expect(difference).toBeDefined();
		expect([...difference!.added].sort()).toEqual(appeared.map(keyOf).sort());
		expect([...difference!.removed].sort()).toEqual(deleted.map(keyOf).sort());
	});

	it('equal sets differ in nothing; too many differences read as undefined, never as a wrong answer', () => {
		const common = ids(100);
		const a = new Sketch();
		const b = new Sketch();
		for (const id of common) {
			a.add(id);
			b.add(id);
		}
		expect(a.difference(b)).toEqual({ added: [], removed: [] });
		for (const id of ids(40)) a.add(id);
		expect(a.difference(b)).toBeUndefined();
	});

	it('a damaged summary reads as undefined', () => {
		expect(Sketch.unpack('abc')).toBeUndefined();
		expect(Sketch.unpack(undefined)).toBeUndefined();
	});
});
