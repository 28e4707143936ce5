import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { requireUuid } from '../../helpers/validation';
import { servicePath, type ExtractionServiceClient } from '../../transport';
import { optionsCollection } from '../common.descriptions';
import { schemaLocator } from './common';

const properties: INodeProperties[] = [schemaLocator(true, 'The schema to delete'), optionsCollection([])];

export const description = updateDisplayOptions({ show: { resource: ['schema'], operation: ['delete'] } }, properties);

/**
 * Schema → Delete (`unversioned-api.md §4.9`). Success status and body are "not shown": any 2xx
 * counts as deleted.
 *
 * @returns `{ id, deleted: true }`
 */
export async function execute(this: IExecuteFunctions, itemIndex: number, client: ExtractionServiceClient): Promise<INodeExecutionData[]> {
	const id = requireUuid(this.getNode(), itemIndex, 'Schema', this.getNodeParameter('schema', itemIndex, '', { extractValue: true }));
	await client.send({ family: 'unversioned', method: 'DELETE', path: servicePath('unversioned', 'schema', id), itemIndex, expect: 'nothing', resourceName: 'Schema', resourceId: id });
	return [{ json: { id, deleted: true } }];
}
