import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { withAbsoluteUrls } from '../../helpers/output';
import { requireUuid } from '../../helpers/validation';
import { servicePath, type ExtractionServiceClient } from '../../transport';
import { DOCUMENT_ID, idParameter, optionsCollection } from '../fields';
import { forOperation } from '../operation';

export const description = forOperation('document', 'get', [
	...idParameter({ ...DOCUMENT_ID, description: 'The document to retrieve' }),
	...optionsCollection([]),
]);

/**
 * Document → Get (`§v0-4.3`).
 *
 * @returns the Document (`§v0-2.1`) with `file_url_absolute`
 * @throws NodeApiError 404 "Document <id> was not found"
 */
export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ExtractionServiceClient,
): Promise<INodeExecutionData[]> {
	const id = requireUuid(
		this.getNode(),
		itemIndex,
		DOCUMENT_ID.displayName,
		this.getNodeParameter(DOCUMENT_ID.name, itemIndex, '', { extractValue: true }),
	);
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
