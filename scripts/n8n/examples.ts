/**
 * The example workflows as the real-n8n runs import them: read from examples/workflows/ (or another
 * folder given with --examples), and the copy n8n gets (never the original), with paths and URLs
 * pointed at the throwaway user folder and the emulator. Shared by run-examples.ts (`n8n execute` of
 * every example) and trigger-run.ts (the trigger example activated in a running n8n 2.x).
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import type { Json } from './n8n-run';

const ROOT = path.resolve(__dirname, '..', '..');

/** Where the examples are: `workflows/*.json` and the input files they read. */
export interface ExampleSource {
	workflowsDir: string;
	filesDir: string;
}

export const DEFAULT_SOURCE: ExampleSource = {
	workflowsDir: path.join(ROOT, 'examples', 'workflows'),
	filesDir: path.join(ROOT, 'examples', 'files'),
};

/**
 * Where the example workflows say a file lives: n8n 2.x's default allowed folder (`~/.n8n-files`) in
 * n8n's Docker image; rewritten to the user folder's files folder.
 */
export const DATA_PREFIX = '/home/node/.n8n-files/';
/** The placeholder schema ID of the examples (users put theirs); rewritten to the emulator's seeded Invoice schema. */
export const PLACEHOLDER_SCHEMA = '00000000-0000-0000-0000-000000000000';
export const SEEDED_INVOICE_SCHEMA = '3f0c1a52-7d4e-4c1b-9a51-2b6f0e8d9c41';
/** The origin example workflows use for documents to fetch by URL; rewritten to the emulator's files origin (`/static/a.pdf`, …). */
export const FILES_ORIGIN = 'https://files.example.com';

/** A node of an example workflow. */
export type ExampleNode = Json & { name: string; type: string; parameters?: Json };

export interface Example {
	file: string;
	/** The id of the imported copy (the file's own when it has one of ≤ 16 characters). */
	id: string;
	name: string;
	workflow: Json & { nodes: ExampleNode[] };
}

/**
 * The examples of `source.workflowsDir`, sorted by file name; with a filter, only those files.
 *
 * @throws Error when a filtered file does not exist
 */
export function loadExamples(source: ExampleSource, filter: string[]): Example[] {
	const files = readdirSync(source.workflowsDir)
		.filter((f) => f.endsWith('.json'))
		.sort();
	for (const f of filter)
		if (!files.includes(f))
			throw new Error(`--workflow ${f}: no such file in ${source.workflowsDir}`);
	return files
		.filter((f) => filter.length === 0 || filter.includes(f))
		.map((file) => loadExample(source, file));
}

/** One example by file name. */
export function loadExample(source: ExampleSource, file: string): Example {
	const workflow = JSON.parse(
		readFileSync(path.join(source.workflowsDir, file), 'utf8'),
	) as Example['workflow'];
	const given = typeof workflow.id === 'string' ? workflow.id : '';
	// n8n's workflow ids are at most 16 characters
	const id =
		given && given.length <= 16
			? given
			: `ex${createHash('sha1').update(file).digest('hex').slice(0, 14)}`;
	return { file, id, name: String(workflow.name ?? file), workflow };
}

/**
 * Rewrites node parameters of the imported copy: `/home/node/.n8n-files/…` paths to filesDir
 * (copying examples/files/NAME there when a path names one), https://files.example.com to the
 * emulator's files origin, and the placeholder schema ID to the emulator's Invoice schema.
 */
function rewriteValue(
	value: unknown,
	source: ExampleSource,
	filesDir: string,
	filesUrl: string,
): unknown {
	if (typeof value === 'string') {
		if (value.includes(FILES_ORIGIN)) value = value.split(FILES_ORIGIN).join(filesUrl);
		if (value === PLACEHOLDER_SCHEMA) return SEEDED_INVOICE_SCHEMA;
		if (
			typeof value !== 'string' ||
			(!value.startsWith(DATA_PREFIX) && !value.startsWith(`=${DATA_PREFIX}`))
		)
			return value;
		const expr = value.startsWith('=') ? '=' : '';
		const rel = value.slice(expr.length + DATA_PREFIX.length);
		const target = path.join(filesDir, rel);
		const example = path.join(source.filesDir, path.basename(rel));
		mkdirSync(path.dirname(target), { recursive: true });
		if (!/[*?{]/.test(rel) && existsSync(example) && !existsSync(target))
			copyFileSync(example, target);
		return `${expr}${target}`;
	}
	if (Array.isArray(value)) return value.map((v) => rewriteValue(v, source, filesDir, filesUrl));
	if (value && typeof value === 'object') {
		return Object.fromEntries(
			Object.entries(value).map(([k, v]) => [k, rewriteValue(v, source, filesDir, filesUrl)]),
		);
	}
	return value;
}

/** The copy n8n imports: the example's id, its node parameters rewritten (see rewriteValue). */
export function prepareWorkflow(
	example: Example,
	source: ExampleSource,
	filesDir: string,
	filesUrl: string,
): Example['workflow'] {
	const copy = JSON.parse(JSON.stringify(example.workflow)) as Example['workflow'];
	copy.id = example.id;
	copy.nodes = copy.nodes.map((n) => ({
		...n,
		parameters: rewriteValue(n.parameters ?? {}, source, filesDir, filesUrl) as Json,
	}));
	return copy;
}
