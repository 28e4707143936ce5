import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import type { InputFile } from '../../helpers/binary';
import { jobOutputItems } from '../../helpers/output';
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
 * Output items for one Extraction (`unversioned-api.md §2.1`). Simplified: `extracted_data`
 * fields plus `id`, `status`, `document_name`; see `jobOutputItems`.
 */
export async function extractionItems(
	ctx: IExecuteFunctions,
	client: ExtractionServiceClient,
	extraction: IDataObject,
	itemIndex: number,
	file?: InputFile,
): Promise<INodeExecutionData[]> {
	const meta: IDataObject = { id: extraction.id, status: extraction.status, document_name: extraction.document_name ?? file?.fileName ?? null };
	return await jobOutputItems(ctx, client, 'unversioned', extraction, extraction.extracted_data, meta, itemIndex, file);
}

/** Simplify for extractions. */
export const extractionSimplifyField: INodeProperties = {
	displayName: 'Simplify',
	name: 'simplify',
	type: 'boolean',
	default: true,
	description: 'Whether to return the extracted data at the top level with the ID, status and document name, instead of the full resource',
};
