import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { binaryOutput, fileNameFromDisposition } from '../../helpers/binary';
import { withAbsoluteUrls } from '../../helpers/output';
import { requireUuid } from '../../helpers/validation';
import { servicePath, type ExtractionServiceClient } from '../../transport';
import { optionsCollection } from '../common.descriptions';
import { idField, outputBinaryField } from '../common.fields';

const properties: INodeProperties[] = [
	idField('Document ID', 'documentId', 'ID of the document to download'),
	outputBinaryField,
	optionsCollection([]),
];

export const description = updateDisplayOptions({ show: { resource: ['document'], operation: ['download'] } }, properties);

/**
 * Document → Download (`v0-api.md §4.4`): reads the document (§4.3) for its file name, then
 * follows the 302 to the file URL. The API key is sent only to the Base URL's origin: a pre-signed
 * URL elsewhere is fetched without it (the credential's `authenticate` checks the origin).
 *
 * @returns the Document as JSON and the file as a binary with the document's name and MIME type
 * @throws NodeApiError 404 naming the document
 */
export async function execute(this: IExecuteFunctions, itemIndex: number, client: ExtractionServiceClient): Promise<INodeExecutionData[]> {
	const id = requireUuid(this.getNode(), itemIndex, 'Document ID', this.getNodeParameter('documentId', itemIndex));
	const property = this.getNodeParameter('binaryPropertyName', itemIndex, 'data') as string;
	const request = { family: 'v0' as const, itemIndex, resourceName: 'Document', resourceId: id };
	const document = await client.request<IDataObject>({ ...request, method: 'GET', path: servicePath('v0', 'documents', id) });
	const file = await client.download({ ...request, method: 'GET', path: `${servicePath('v0', 'documents', id)}/download` });
	const fileName = String(document.filename ?? '') || fileNameFromDisposition(file.headers['content-disposition']) || `${id}.pdf`;
	const mimeType = (file.headers['content-type'] ?? '').split(';')[0].trim() || 'application/octet-stream';
	return [await binaryOutput(this, withAbsoluteUrls(document, await client.baseUrl('v0', itemIndex)), file.body, fileName, mimeType, property)];
}
