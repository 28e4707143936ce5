import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { requireUuid } from '../../helpers/validation';
import { servicePath, type ExtractionServiceClient } from '../../transport';
import { EXTRACTION_ID, idParameter, optionsCollection } from '../fields';
import { forOperation } from '../operation';

export const description = forOperation('extraction', 'delete', [
	...idParameter({ ...EXTRACTION_ID, description: 'The extraction to delete' }),
	...optionsCollection([]),
]);

/**
 * Extraction → Delete (`§unversioned-4.4`). The success status and body are "not shown": any 2xx
 * counts as deleted and the body, if any, is ignored (an HTML page is refused).
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
		EXTRACTION_ID.displayName,
		this.getNodeParameter(EXTRACTION_ID.name, itemIndex, '', { extractValue: true }),
	);
	await client.send({
		family: 'unversioned',
		method: 'DELETE',
		path: servicePath('unversioned', 'extract', id),
		itemIndex,
		expect: 'nothing',
		resourceName: 'Extraction',
		resourceId: id,
	});
	return [{ json: { id, deleted: true } }];
}
