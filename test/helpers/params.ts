/**
 * Node parameters and input items the test files share: the create operations most tests run, with
 * the seeded Invoice schema, and the few fixtures more than one file builds (attachments, what n8n
 * shows of a run). `extra` adds or overrides parameters; `options` fills the Options collection.
 */
import { inspect } from 'node:util';

import type { INodeExecutionData } from 'n8n-workflow';

import type { RunResult } from '../../scripts/engine';
import { INVOICE_SCHEMA, SAMPLE_PDF, fileItem } from './setup';

type Parameters = Record<string, unknown>;

/** Extract → Create (§v0-4.8) from the item's binary file `data` with the Invoice schema. */
export const extractCreate = (extra: Parameters = {}) => ({
	resource: 'extract',
	operation: 'create',
	source: 'binary',
	schemaId: INVOICE_SCHEMA,
	...extra,
});

/** Extract → Create with these Options (and other parameters in `extra`). */
export const extractWithOptions = (options: Parameters = {}, extra: Parameters = {}) =>
	extractCreate({ ...extra, options });

/** Extraction → Create (§unversioned-4.1) on server EU-1 from the item's binary file `data`, no schema. */
export const extractionCreate = (extra: Parameters = {}) => ({
	resource: 'extraction',
	operation: 'create',
	server: 'EU-1',
	...extra,
});

/** Extraction → Create with these Options (and other parameters in `extra`). */
export const extractionWithOptions = (options: Parameters = {}, extra: Parameters = {}) =>
	extractionCreate({ ...extra, options });

/** Parsing → Create (§v0-4.5), from the item's binary file unless `extra` names another source. */
export const parsingCreate = (extra: Parameters = {}) => ({
	resource: 'parsing',
	operation: 'create',
	source: 'binary',
	...extra,
});

/** Document → Upload (§v0-4.1) of the item's binary file `data` with these Options. */
export const documentUpload = (options: Parameters = {}, extra: Parameters = {}) => ({
	resource: 'document',
	operation: 'upload',
	...extra,
	options,
});

/** Extract → Get (§v0-4.9) of one extract id. */
export const extractGet = (extractId: unknown, extra: Parameters = {}) => ({
	resource: 'extract',
	operation: 'get',
	extractId,
	...extra,
});

/** An Extraction operation on one extraction id: get, delete or download (§unversioned-4.3–4.4). */
export const onExtraction = (operation: string, extractionId: unknown, extra: Parameters = {}) => ({
	resource: 'extraction',
	operation,
	extractionId,
	...extra,
});

/** A resource locator value in mode "By ID". */
export const byId = (value: unknown) => ({ __rl: true, mode: 'id', value });

/** `runNode` options that run the node as version 2. */
export const V2 = { node: { typeVersion: 2 } };

/** One input item carrying the sample invoice under `attachment_0`, `attachment_1` … with these names. */
export async function attachments(...fileNames: string[]): Promise<INodeExecutionData> {
	return await fileItem(
		Object.fromEntries(
			fileNames.map((fileName, i) => [`attachment_${i}`, { bytes: SAMPLE_PDF, fileName }]),
		),
	);
}

/** Everything n8n would show or store of a run: output items, the whole error, the execution data. */
export function visible(result: Partial<RunResult> & { items: INodeExecutionData[] }): string {
	return [
		inspect(result.items, { depth: null }),
		inspect(result.error, { depth: null, showHidden: true }),
		inspect(result.run?.data, { depth: null }),
	].join('\n');
}
