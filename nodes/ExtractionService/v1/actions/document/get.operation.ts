import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { withAbsoluteUrls } from '../../helpers/output';
import { requireUuid } from '../../helpers/validation';
import { servicePath, type ExtractionServiceClient } from '../../transport';
import { optionsCollection } from '../common.descriptions';
import { idField } from '../common.fields';

const properties: INodeProperties[] = [idField('Document ID', 'documentId', 'ID of the document to retrieve'), optionsCollection([])];

export const description = updateDisplayOptions({ show: { resource: ['document'], operation: ['get'] } }, properties);

/**
 * Document → Get (`v0-api.md §4.3`).
 *
 * @returns the Document (§2.1) with `file_url_absolute`
 * @throws NodeApiError 404 "Document <id> was not found"
 */
export async function execute(this: IExecuteFunctions, itemIndex: number, client: ExtractionServiceClient): Promise<INodeExecutionData[]> {
	const id = requireUuid(this.getNode(), itemIndex, 'Document ID', this.getNodeParameter('documentId', itemIndex));
	const document = await client.request<IDataObject>({
		family: 'v0',
		method: 'GET',
		path: servicePath('v0', 'documents', id),
		itemIndex,
		resourceName: 'Document',
		resourceId: id,
	});
	return [{ json: withAbsoluteUrls(document, await client.baseUrl('v0', itemIndex)) }];
}
