import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { passThroughBinary, type InputFile } from '../../helpers/binary';
import { simplifyResult, withAbsoluteUrls } from '../../helpers/output';
import type { ExtractionServiceClient } from '../../transport';

/** Upload types the unversioned family accepts (`unversioned-api.md §4.2, §8.1`), with their MIME types. */
export const EXTRACTION_FILE_TYPES: Record<string, string> = {
	'.pdf': 'application/pdf',
	'.png': 'image/png',
	'.jpg': 'image/jpeg',
	'.jpeg': 'image/jpeg',
};

/** The extraction servers (`unversioned-api.md §2.1, §4.2`). */
export const serverField: INodeProperties = {
	displayName: 'Server',
	name: 'server',
	type: 'options',
	options: [
		{ name: 'EU-1', value: 'EU-1' },
		{ name: 'FR-1', value: 'FR-1' },
		{ name: 'FR-2', value: 'FR-2' },
		{ name: 'FR-3', value: 'FR-3' },
	],
	default: 'EU-1',
	required: true,
	description: 'Server that processes the document',
};

/**
 * Output items for one Extraction (`unversioned-api.md §2.1`). With Simplify: `extracted_data`
 * fields plus `id`, `status`, `document_name` (one item per element of a list with "Split Into
 * Items"); without: the full resource with absolute `document_url` and `content_images[].url`.
 */
export async function extractionItems(
	ctx: IExecuteFunctions,
	client: ExtractionServiceClient,
	extraction: IDataObject,
	itemIndex: number,
	file?: InputFile,
): Promise<INodeExecutionData[]> {
	const simplify = ctx.getNodeParameter('simplify', itemIndex, true) as boolean;
	const options = ctx.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const binary = passThroughBinary(ctx, itemIndex, file);
	let jsons: IDataObject[];
	if (simplify) {
		const meta: IDataObject = { id: extraction.id, status: extraction.status, document_name: extraction.document_name ?? file?.fileName ?? null };
		if (extraction.error) meta.error = extraction.error;
		if (extraction.timedOut) meta.timedOut = true;
		jsons = simplifyResult(extraction.extracted_data, meta, options.splitIntoItems === true);
	} else {
		jsons = [withAbsoluteUrls(extraction, await client.baseUrl('unversioned', itemIndex))];
	}
	return jsons.map((json) => (binary ? { json, binary } : { json }));
}

/** Simplify for extractions. */
export const extractionSimplifyField: INodeProperties = {
	displayName: 'Simplify',
	name: 'simplify',
	type: 'boolean',
	default: true,
	description: 'Whether to return the extracted data at the top level with the ID, status and document name, instead of the full resource',
};
