import type { IDataObject, INodeExecutionData, INodeProperties } from 'n8n-workflow';

import { jobOutputItems } from '../../helpers/output';
import type { OutputSettings } from '../../helpers/settings';
import type { ExtractionServiceClient } from '../../transport';

/** Upload types the unversioned family accepts (`§unversioned-4.2`, `§unversioned-8.1`), with their MIME types. */
export const EXTRACTION_FILE_TYPES: Record<string, string> = {
	'.pdf': 'application/pdf',
	'.png': 'image/png',
	'.jpg': 'image/jpeg',
	'.jpeg': 'image/jpeg',
};

/** The extraction servers (`§unversioned-2.1`, `§unversioned-4.2`). */
const SERVERS = ['EU-1', 'FR-1', 'FR-2', 'FR-3'];

export const serverField: INodeProperties = {
	displayName: 'Server',
	name: 'server',
	type: 'options',
	options: SERVERS.map((server) => ({ name: server, value: server })),
	default: 'EU-1',
	required: true,
	description: 'Server that processes the document',
};

/**
 * Output items for one Extraction (`§unversioned-2.1`). Simplified: `extracted_data` fields plus
 * `id`, `status`, `document_name`; see `jobOutputItems`.
 *
 * @param fileName the uploaded file's name, when the service gives none
 * @param binary the input file to pass on, if any
 */
export async function extractionItems(
	client: ExtractionServiceClient,
	extraction: IDataObject,
	itemIndex: number,
	output: OutputSettings,
	fileName?: string,
	binary?: INodeExecutionData['binary'],
): Promise<INodeExecutionData[]> {
	const meta: IDataObject = {
		id: extraction.id,
		status: extraction.status,
		document_name: extraction.document_name ?? fileName ?? null,
	};
	return await jobOutputItems(
		client,
		'unversioned',
		extraction,
		extraction.extracted_data,
		meta,
		itemIndex,
		output,
		binary,
	);
}
