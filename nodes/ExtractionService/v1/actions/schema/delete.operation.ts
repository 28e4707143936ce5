import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { requireUuid } from '../../helpers/validation';
import { servicePath, type ExtractionServiceClient } from '../../transport';
import { optionsCollection, schemaLocator } from '../fields';
import { forOperation } from '../operation';

export const description = forOperation('schema', 'delete', [
	schemaLocator(true, 'The schema to delete'),
	...optionsCollection([]),
]);

/**
 * Schema → Delete (`§unversioned-4.9`). Success status and body are "not shown": any 2xx
 * counts as deleted.
 *
 * @returns `{ id, deleted: true }`
 */
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
	await client.send({
		family: 'unversioned',
		method: 'DELETE',
		path: servicePath('unversioned', 'schema', id),
		itemIndex,
		expect: 'nothing',
		resourceName: 'Schema',
		resourceId: id,
	});
	return [{ json: { id, deleted: true } }];
}
