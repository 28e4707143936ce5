/**
 * The example workflows (examples/workflows/, or --examples DIR) and the copy n8n imports (never
 * the original): paths and URLs pointed at the throwaway user folder and the emulator; and the
 * extractions the runs make at the emulator directly, for the examples to find.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import type { LoggedRequest } from '../../emulator';
import type { EmulatorReady } from '../../emulator/launch';
import { ROOT } from '../lib/processes';
import type { Json } from './n8n-run';

/** Where the examples are: `workflows/*.json` and the input files they read. */
export interface ExampleSource {
	workflowsDir: string;
	filesDir: string;
}

export const DEFAULT_SOURCE: ExampleSource = {
	workflowsDir: path.join(ROOT, 'examples', 'workflows'),
	filesDir: path.join(ROOT, 'examples', 'files'),
};

/** Where the examples' files live: n8n 2.x's files folder in its Docker image. */
export const DATA_PREFIX = '/home/node/.n8n-files/';
/** The examples' placeholder schema ID (users put theirs) and the emulator's seeded Invoice schema. */
export const PLACEHOLDER_SCHEMA = '00000000-0000-0000-0000-000000000000';
export const SEEDED_INVOICE_SCHEMA = '3f0c1a52-7d4e-4c1b-9a51-2b6f0e8d9c41';
/** The examples' origin of documents to fetch by URL (the emulator serves `/static/a.pdf`, …). */
const FILES_ORIGIN = 'https://files.example.com';

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
 * The copy n8n imports: the example's id, and in its node parameters `/home/node/.n8n-files/…`
 * pointed into filesDir (examples/files/NAME copied there when a path names one),
 * https://files.example.com at the emulator's files origin, the placeholder schema ID at the
 * seeded Invoice schema.
 */
export function prepareWorkflow(
	example: Example,
	source: ExampleSource,
	filesDir: string,
	filesUrl: string,
): Example['workflow'] {
	const rewrite = (value: unknown): unknown => {
		if (Array.isArray(value)) return value.map(rewrite);
		if (value && typeof value === 'object')
			return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v)]));
		if (typeof value !== 'string') return value;
		if (value === PLACEHOLDER_SCHEMA) return SEEDED_INVOICE_SCHEMA;
		const v = value.split(FILES_ORIGIN).join(filesUrl);
		const expr = v.startsWith('=') ? '=' : '';
		if (!v.startsWith(`${expr}${DATA_PREFIX}`)) return v;
		const rel = v.slice(expr.length + DATA_PREFIX.length);
		const target = path.join(filesDir, rel);
		const example = path.join(source.filesDir, path.basename(rel));
		mkdirSync(path.dirname(target), { recursive: true });
		if (!/[*?{]/.test(rel) && existsSync(example) && !existsSync(target))
			copyFileSync(example, target);
		return `${expr}${target}`;
	};
	const copy = structuredClone(example.workflow);
	copy.id = example.id;
	copy.nodes = copy.nodes.map((n) => ({ ...n, parameters: rewrite(n.parameters ?? {}) as Json }));
	return copy;
}

/** An emulator request in one line: `GET /extract/?search=x → 200`. */
export const requestLine = (q: LoggedRequest): string => {
	const query = new URLSearchParams(q.query as Record<string, string>).toString();
	return `${q.method} ${q.path}${query ? `?${query}` : ''} → ${q.status}`;
};

/**
 * One call to the emulator's API with its token: `body` sent as a form, or as JSON.
 *
 * @returns the answer's JSON (`{}` when it has none)
 * @throws Error `METHOD route → status: answer` unless it answers `want`
 */
export async function emulatorCall(
	emu: Pick<EmulatorReady, 'url' | 'token'>,
	method: 'GET' | 'POST' | 'DELETE',
	route: string,
	want: number,
	body?: FormData | object,
): Promise<Json> {
	const form = body instanceof FormData;
	const res = await fetch(`${emu.url}${route}`, {
		method,
		headers: {
			authorization: emu.token,
			...(!form && body && { 'content-type': 'application/json' }),
		},
		body: form ? body : body && JSON.stringify(body),
		signal: AbortSignal.timeout(30_000),
	});
	const text = await res.text();
	if (res.status !== want)
		throw new Error(`${method} ${route} → ${res.status}: ${text.slice(0, 300)}`);
	return (text ? JSON.parse(text) : {}) as Json;
}

/**
 * One extraction of the PDF `bytes` with the seeded Invoice schema, created at the emulator
 * directly (`POST /extract/`, §unversioned-4.1), with `metadata` when given.
 *
 * @returns its id
 * @throws Error when the emulator does not answer 201 with an id
 */
export async function createExtraction(
	emu: Pick<EmulatorReady, 'url' | 'token'>,
	documentName: string,
	bytes: Uint8Array,
	metadata?: Json,
): Promise<string> {
	const form = new FormData();
	form.set(
		'document',
		new Blob([new Uint8Array(bytes)], { type: 'application/pdf' }),
		documentName,
	);
	form.set('server', 'EU-1');
	form.set('schema', SEEDED_INVOICE_SCHEMA);
	if (metadata) form.set('metadata', JSON.stringify(metadata));
	const created = await emulatorCall(emu, 'POST', '/extract/', 201, form);
	if (typeof created.id !== 'string' || !created.id)
		throw new Error(`POST /extract/ → 201 without an id: ${JSON.stringify(created).slice(0, 300)}`);
	return created.id;
}
