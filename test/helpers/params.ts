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

/** Builds the parameters of `operation` on `resource` with these defaults; `extra` wins. */
const building =
	(resource: string, operation: string, defaults: Parameters = {}) =>
	(extra: Parameters = {}) => ({ resource, operation, ...defaults, ...extra });
const creating = (resource: string, defaults: Parameters) => building(resource, 'create', defaults);

/** Extract → Create (§v0-4.8) from the item's binary file `data` with the Invoice schema. */
export const extractCreate = creating('extract', { source: 'binary', schemaId: INVOICE_SCHEMA });

/** Extraction → Create (§unversioned-4.2) on server EU-1 from the item's binary file `data`, no schema. */
export const extractionCreate = creating('extraction', { server: 'EU-1' });

/** Parsing → Create (§v0-4.5), from the item's binary file unless `extra` names another source. */
export const parsingCreate = creating('parsing', { source: 'binary' });

/** A builder's twin that takes the Options collection first: `(options, extra) => create({ ...extra, options })`. */
const withOptions =
	<T>(create: (extra: Parameters) => T) =>
	(options: Parameters = {}, extra: Parameters = {}) =>
		create({ ...extra, options });

/** Extract → Create with these Options (and other parameters in `extra`). */
export const extractWithOptions = withOptions(extractCreate);

/** Extraction → Create with these Options (and other parameters in `extra`). */
export const extractionWithOptions = withOptions(extractionCreate);

/** Document → Upload (§v0-4.1) of the item's binary file `data` with these Options. */
export const documentUpload = withOptions(building('document', 'upload'));

/** Builds the parameters of an operation on one item of `resource`, named by its id parameter. */
const onOne =
	(resource: string, idName: string) => (operation: string, id: unknown, extra?: Parameters) =>
		building(resource, operation, { [idName]: id })(extra);

/** A Document operation on one document id: get or download (§v0-4.3, §v0-4.4). */
export const onDocument = onOne('document', 'documentId');

/** An Extraction operation on one extraction id: get, delete or download (§unversioned-4.3–4.4). */
export const onExtraction = onOne('extraction', 'extractionId');

/** Extract → Get (§v0-4.9) of one extract id. */
export const extractGet = (id: unknown, extra: Parameters = {}) =>
	onOne('extract', 'extractId')('get', id, extra);

/** Get Many of a resource with Return All: every page. */
export const listAll = (resource: string, extra?: Parameters) =>
	building(resource, 'getAll', { returnAll: true })(extra);

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
