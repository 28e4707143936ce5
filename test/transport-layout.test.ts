/**
 * Issue 32: the transport is split by concern, each module small enough to read in one sitting
 * (≤ 300 lines) and none importing another that imports it back (today's `index.ts` ↔
 * `pagination.ts` was such a cycle). Read from the source files themselves.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const DIR = path.join(__dirname, '..', 'nodes', 'shared', 'transport');
const files = readdirSync(DIR).filter((name) => name.endsWith('.ts'));
const source = (name: string) => readFileSync(path.join(DIR, name), 'utf8');

/** The transport modules a module imports (type-only imports included: they are imports too). */
function importsOf(name: string): string[] {
	const found = [...source(name).matchAll(/from '\.\/([\w-]+)'/g)].map((m) => `${m[1]}.ts`);
	return [...new Set(found)].filter((file) => files.includes(file));
}

describe('The transport, one job per module', () => {
	it.each(files)('%s has at most 300 lines', (name) => {
		expect(source(name).split('\n').length - 1).toBeLessThanOrEqual(300);
	});

	it('no module imports itself back through others', () => {
		const cycles: string[] = [];
		const walk = (name: string, trail: string[]) => {
			if (trail.includes(name)) {
				cycles.push([...trail.slice(trail.indexOf(name)), name].join(' → '));
				return;
			}
			for (const next of importsOf(name)) walk(next, [...trail, name]);
		};
		for (const name of files) walk(name, []);
		expect(cycles).toEqual([]);
	});
});
