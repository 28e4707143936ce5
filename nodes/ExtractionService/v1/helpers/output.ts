import type { IDataObject, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { ApiFamily, ExtractionServiceClient } from '../transport';
import { validationsOf } from './completeness';
import type { OutputSettings } from './settings';

/** Simplify: the output switch of every job that has extracted data (`simplifyResult`). */
export const simplifyField: INodeProperties = {
	displayName: 'Simplify',
	name: 'simplify',
	type: 'boolean',
	default: true,
	description:
		'Whether to return the extracted fields at the top level with the identifying fields (ID, status, schema or document name), instead of the full resource',
};

/** Split Into Items: shown only with Simplify (it splits the simplified result). */
export const splitIntoItemsField: INodeProperties = {
	displayName: 'Split Into Items',
	name: 'splitIntoItems',
	type: 'boolean',
	default: false,
	description:
		'Whether to output one item per element when the result is a list (e.g. invoice lines)',
	displayOptions: { show: { '/simplify': [true] } },
};

/** Keys whose values are URLs relative to the Base URL (`§v0-2.1, §v0-2.2`; `§unversioned-2.1`). */
const RELATIVE_URL_KEYS = new Set(['file_url', 'picture', 'document_url', 'url']);

/**
 * Copies a resource and, next to every relative URL field (`file_url`, `picture`, `document_url`,
 * `content_images[].url`), adds `<key>_absolute` resolved against the Base URL, so the next HTTP
 * Request node can use it directly. Nested objects and arrays are walked.
 *
 * @param baseUrl Base URL of the credential, without trailing slash
 */
export function withAbsoluteUrls<T>(value: T, baseUrl: string): T {
	if (Array.isArray(value)) return value.map((v) => withAbsoluteUrls(v, baseUrl)) as T;
	if (!value || typeof value !== 'object') return value;
	const out: IDataObject = {};
	for (const [key, v] of Object.entries(value as IDataObject)) {
		out[key] = withAbsoluteUrls(v, baseUrl);
		if (RELATIVE_URL_KEYS.has(key) && typeof v === 'string' && v.startsWith('/')) {
			out[`${key}_absolute`] = `${baseUrl}${v}`;
		}
	}
	return out as T;
}

/**
 * The simplified shape of a finished job for spreadsheets and ERPs: the extracted fields at the top
 * level, plus identifying fields. Extracted fields win over identifying ones with the same name.
 *
 * @param result the extracted object (`result` of `§v0-2.4`, `extracted_data` of
 *   `§unversioned-2.1`), or null while unfinished
 * @param meta identifying fields (id, status, schema name, file name)
 * @param splitArrays when `result` is an array: one output object per element (true) or one object
 *   with `result` holding the array (false)
 */
export function simplifyResult(
	result: unknown,
	meta: IDataObject,
	splitArrays: boolean,
): IDataObject[] {
	if (Array.isArray(result)) {
		if (!splitArrays) return [{ ...meta, result: result as IDataObject[] }];
		return result.map((entry, index) => ({
			...meta,
			index,
			...(entry && typeof entry === 'object' && !Array.isArray(entry)
				? (entry as IDataObject)
				: { value: entry as IDataObject }),
		}));
	}
	if (result && typeof result === 'object') return [{ ...meta, ...(result as IDataObject) }];
	return [{ ...meta, result: (result ?? null) as IDataObject }];
}

/** A job kind's output: its API family, its extracted data, and what identifies a job in Simplify's shape. */
interface JobShape {
	family: ApiFamily;
	/** The extracted data (an extract's `result`, an extraction's `extracted_data`). */
	result: (job: IDataObject) => unknown;
	/** Identifying fields for the simplified shape; `fileName` is the uploaded file's, if any. */
	meta: (job: IDataObject, fileName?: string) => IDataObject;
}

/**
 * Output items of one finished (or timed-out) job, for the operations that offer Simplify and
 * Split Into Items (extracts and extractions). With Simplify: `simplifyResult(result, meta)` plus
 * `error` and `timedOut` when present; without: the full job with absolute URLs. With Check Against
 * Schema, each item also gets `validation` (`completeness.ts`; it replaces an extracted field of that
 * name, which stays in the full resource). With "Include Input
 * Binary", the uploaded file rides along on each item.
 *
 * @returns the kind's items function: `job` is the resource as the service returned it (plus
 *   `timedOut` from waitForJob), `output` the item's output settings (`readItemSettings`),
 *   `fileName` the uploaded file's name, `binary` the input file to pass on (`passThroughBinary`)
 */
function jobOutputItems(shape: JobShape) {
	return async (
		client: ExtractionServiceClient,
		job: IDataObject,
		itemIndex: number,
		output: OutputSettings,
		fileName?: string,
		binary?: INodeExecutionData['binary'],
	): Promise<INodeExecutionData[]> => {
		let jsons: IDataObject[];
		if (output.simplify) {
			const meta: IDataObject = { ...shape.meta(job, fileName) };
			if (job.error) meta.error = job.error;
			if (job.timedOut) meta.timedOut = true;
			jsons = simplifyResult(shape.result(job), meta, output.splitIntoItems);
		} else {
			jsons = [withAbsoluteUrls(job, await client.baseUrl(shape.family, itemIndex))];
		}
		if (output.check) {
			const split = output.simplify && output.splitIntoItems;
			const validations = await validationsOf(
				client,
				output.check,
				job,
				shape.result(job),
				split,
				itemIndex,
			);
			jsons = jsons.map((json, index) => ({
				...json,
				validation: validations[index] as unknown as IDataObject,
			}));
		}
		return jsons.map((json) => (binary ? { json, binary } : { json }));
	};
}

/**
 * Output items for one Extraction (`§unversioned-2.1`). Simplified: `extracted_data` fields plus
 * `id`, `status`, `document_name` (else the uploaded file's name); see `jobOutputItems`.
 */
export const extractionItems = jobOutputItems({
	family: 'unversioned',
	result: (extraction) => extraction.extracted_data,
	meta: (extraction, fileName) => ({
		id: extraction.id,
		status: extraction.status,
		document_name: extraction.document_name ?? fileName ?? null,
	}),
});

/**
 * Output items for one v0 Extract (`§v0-2.4`). Simplified: `result` fields plus `id`, `status`,
 * `schema` (its name) and `filename` (the document's, else the uploaded file's); see
 * `jobOutputItems`.
 */
export const extractItems = jobOutputItems({
	family: 'v0',
	result: (extract) => extract.result,
	meta: (extract, fileName) => {
		const schema = (extract.schema ?? {}) as IDataObject;
		const document = (((extract.parsing ?? {}) as IDataObject).document ?? {}) as IDataObject;
		return {
			id: extract.id,
			status: extract.status,
			schema: schema.name ?? null,
			filename: document.filename ?? fileName ?? null,
		};
	},
});
