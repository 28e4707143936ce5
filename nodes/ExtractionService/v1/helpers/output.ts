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

/** Prefix of an extracted field whose name a job field takes (node version 4 on: `extracted_status`). */
export const EXTRACTED_PREFIX = 'extracted_';

/**
 * One simplified object: the job's fields (`meta`) and the extracted fields. With `reserved` (node
 * version 4 on) the job's fields keep their names: an extracted field named like one of `reserved`
 * comes out as `extracted_<name>` (one more `extracted_` while that name is taken too), so no field
 * is lost. Without (versions 1–3, saved workflows) extracted fields replace job fields of the same
 * name, as they always did.
 */
function merge(
	meta: IDataObject,
	fields: IDataObject,
	reserved?: ReadonlySet<string>,
): IDataObject {
	if (!reserved) return { ...meta, ...fields };
	const taken = Object.entries(fields).filter(([name]) => reserved.has(name));
	const kept = Object.entries(fields).filter(([name]) => !reserved.has(name));
	const names = new Set([...Object.keys(meta), ...kept.map(([name]) => name), ...reserved]);
	const renamed = taken.map(([name, value]): [string, unknown] => {
		let to = `${EXTRACTED_PREFIX}${name}`;
		while (names.has(to)) to = `${EXTRACTED_PREFIX}${to}`;
		names.add(to);
		return [to, value];
	});
	// fromEntries defines each key as an own field, so even `__proto__` stays an ordinary field.
	return Object.fromEntries([...Object.entries(meta), ...kept, ...renamed]) as IDataObject;
}

/**
 * The simplified shape of a finished job for spreadsheets and ERPs: the extracted fields at the top
 * level, plus identifying fields (see `merge` for a name both have).
 *
 * @param result the extracted object (`result` of `§v0-2.4`, `extracted_data` of
 *   `§unversioned-2.1`), or null while unfinished
 * @param meta identifying fields (id, status, schema name, file name)
 * @param splitArrays when `result` is an array: one output object per element (true; an empty list
 *   still gives one object, with `result: []`, so the job is never lost) or one object with
 *   `result` holding the array (false)
 * @param reserved node version 4 on: the names the job's fields take (`meta`'s and the node's own:
 *   `error`, `timedOut`, `validation`, `index`); undefined: versions 1–3
 */
export function simplifyResult(
	result: unknown,
	meta: IDataObject,
	splitArrays: boolean,
	reserved?: ReadonlySet<string>,
): IDataObject[] {
	if (Array.isArray(result)) {
		if (!splitArrays || result.length === 0) return [{ ...meta, result: result as IDataObject[] }];
		return result.map((entry, index) =>
			entry && typeof entry === 'object' && !Array.isArray(entry)
				? merge({ ...meta, index }, entry as IDataObject, reserved)
				: { ...meta, index, value: entry as IDataObject },
		);
	}
	if (result && typeof result === 'object') return [merge(meta, result as IDataObject, reserved)];
	return [{ ...meta, result: (result ?? null) as IDataObject }];
}

/** Fields the node itself may add to a simplified item (besides the kind's identifying fields). */
const NODE_FIELDS = ['error', 'timedOut', 'validation', 'index'];

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
 * `error` and `timedOut` when present (from node version 4, `output.keepJobFields`, an extracted
 * field of one of these names, or `validation` or `index`, comes out as `extracted_<name>`);
 * without: the full job with absolute URLs. With Check Against Schema, each item also gets
 * `validation` (`completeness.ts`; in versions 1–3 it replaces an extracted field of that name,
 * which stays in the full resource). With "Include Input Binary", the uploaded file rides along on
 * each item.
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
			const reserved = output.keepJobFields
				? new Set([...Object.keys(meta), ...NODE_FIELDS])
				: undefined;
			jsons = simplifyResult(shape.result(job), meta, output.splitIntoItems, reserved);
		} else {
			jsons = [withAbsoluteUrls(job, await client.baseUrl(shape.family, itemIndex))];
		}
		if (output.check) {
			const result = shape.result(job);
			// An empty list is one item (`simplifyResult`): checked whole, like a list not split.
			const split =
				output.simplify && output.splitIntoItems && Array.isArray(result) && result.length > 0;
			const validations = await validationsOf(client, output.check, job, result, split, itemIndex);
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
