import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import type { ApiFamily, ExtractionServiceClient } from './transport';
import { withAbsoluteUrls } from './absolute-urls';
import { validationsOf, type CheckSettings } from './completeness';
import { simplifyResult } from './simplify';

/**
 * How finished jobs become output items (`Simplify`, `Split Into Items`, `Include Input Binary`,
 * and Check Against Schema when it is on).
 */
export interface OutputSettings {
	simplify: boolean;
	/**
	 * Whether Simplify keeps the job's fields and renames an extracted field of the same name to
	 * `extracted_<name>` (node version 4 on, trigger version 2 on); versions before let the extracted
	 * field replace the job's (`simplify.ts`, `simplifyResult`).
	 */
	keepJobFields: boolean;
	splitIntoItems: boolean;
	includeInputBinary: boolean;
	check?: CheckSettings;
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
