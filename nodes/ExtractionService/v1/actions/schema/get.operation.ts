import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { requireUuid } from '../../helpers/validation';
import { servicePath, type ExtractionServiceClient } from '../../transport';
import { optionsCollection, schemaLocator } from '../fields';
import { forOperation } from '../operation';

export const description = forOperation('schema', 'get', [
	schemaLocator(true, 'The schema to retrieve'),
	...optionsCollection([]),
]);

/** Schema → Get (`§unversioned-4.7`). @throws NodeApiError 404 naming the schema */
export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ExtractionServiceClient,
): Promise<INodeExecutionData[]> {
	const id = requireUuid(
		this.getNode(),
		itemIndex,
		'Schema',
		this.getNodeParameter('schema', itemIndex, '', { extractValue: true }),
	);
	const schema = await client.request<IDataObject>({
		family: 'unversioned',
		method: 'GET',
		path: servicePath('unversioned', 'schema', id),
		itemIndex,
		resourceName: 'Schema',
		resourceId: id,
	});
	return [{ json: schema }];
}
