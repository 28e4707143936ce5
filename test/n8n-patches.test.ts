/**
 * Issue 33: which newer n8n patches `npm run test:n8n` looks at, and how it says whether one installs
 * (scripts/lib/n8n-patches.ts; the registry itself is asked only by test:n8n).
 */
import { describePatches, newerInLine, ownExactPins } from '../scripts/lib/n8n-patches';

describe('Newer n8n patches', () => {
	it('are the higher patches of the same major.minor line, oldest first, without pre-releases', () => {
		const all = [
			'2.40.7',
			'2.41.0',
			'2.41.1',
			'2.41.10',
			'2.41.3',
			'2.42.0',
			'2.41.4-exp.0',
			'3.0.0',
		];
		expect(newerInLine(all, '2.41.1')).toEqual(['2.41.3', '2.41.10']);
		expect(newerInLine(all, '2.41.10')).toEqual([]);
	});

	it("install when every exact pin of n8n's own packages is in the registry (ranges are npm's to resolve)", () => {
		expect(
			ownExactPins({
				'@n8n/agents': '0.26.2',
				'n8n-core': '2.41.2',
				'@n8n/config': '^2.39.1',
				lodash: '4.17.21',
			}),
		).toEqual(['@n8n/agents@0.26.2', 'n8n-core@2.41.2']);
	});

	it('are named in one line: the newest installable, or why none installs', () => {
		expect(
			describePatches('2.41.1', [{ version: '2.41.3', missing: ['@n8n/agents@0.26.2'] }]),
		).toBe(
			"n8n 2.41.1 is the newest installable patch of its line: 2.41.3 is listed but 1 of n8n's own packages it pins are not in the registry (@n8n/agents@0.26.2)",
		);
		expect(
			describePatches('2.41.1', [
				{ version: '2.41.3', missing: ['@n8n/agents@0.26.2'] },
				{ version: '2.41.4', missing: [] },
			]),
		).toMatch(/^NEWER PATCH INSTALLABLE: n8n 2\.41\.4 \(tested 2\.41\.1\)/);
		expect(describePatches('1.123.81', [])).toBe('n8n 1.123.81 is the newest patch of its line');
	});
});
