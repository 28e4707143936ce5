/**
 * Issue 31: the trigger takes what it shares with the action node (the transport, job kinds,
 * checks, list filters, output shaping, the fields both show) from `nodes/shared/`, not from the
 * action node's own modules (`nodes/ExtractionService/`), and the shared code depends on neither
 * node. Read from the source files' import lines.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

const NODES = path.join(__dirname, '..', 'nodes');

/** The `.ts` files below a folder of `nodes/`, as paths relative to `nodes/`. */
function filesBelow(folder: string): string[] {
	return readdirSync(path.join(NODES, folder), { recursive: true, encoding: 'utf8' })
		.filter((name) => name.endsWith('.ts'))
		.map((name) => path.join(folder, name));
}

/** The files of `nodes/` a file imports through relative paths, as paths relative to `nodes/`. */
function importsOf(file: string): string[] {
	const text = readFileSync(path.join(NODES, file), 'utf8');
	return [...text.matchAll(/from '(\.[^']*)'/g)].map((m) =>
		path.relative(NODES, path.resolve(NODES, path.dirname(file), m[1])),
	);
}

/** Each import of a file under `folder` that reaches into one of `forbidden`, as `file → import`. */
function reaching(folder: string, forbidden: string[]): string[] {
	return filesBelow(folder).flatMap((file) =>
		importsOf(file)
			.filter((target) => forbidden.some((f) => target === f || target.startsWith(`${f}/`)))
			.map((target) => `${file} → ${target}`),
	);
}

describe('Code the nodes share lives in nodes/shared', () => {
	it('the trigger imports nothing of the action node', () => {
		expect(reaching('ExtractionServiceTrigger', ['ExtractionService'])).toEqual([]);
	});

	it('the shared code imports neither node', () => {
		expect(reaching('shared', ['ExtractionService', 'ExtractionServiceTrigger'])).toEqual([]);
	});

	it('the action node and the trigger both use it', () => {
		for (const node of ['ExtractionService', 'ExtractionServiceTrigger'])
			expect(reaching(node, ['shared']).length).toBeGreaterThan(0);
	});
});
