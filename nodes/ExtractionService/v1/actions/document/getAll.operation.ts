import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { listItems } from '../../helpers/lists';
import { servicePath, type ExtractionServiceClient } from '../../transport';
import { optionsCollection, returnAllFields } from '../common.descriptions';
import { createdRangeFilters, searchFilter } from '../common.fields';

const properties: INodeProperties[] = [
	...returnAllFields,
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add filter',
		default: {},
		options: [...createdRangeFilters, searchFilter],
	},
	optionsCollection([]),
];

export const description = updateDisplayOptions({ show: { resource: ['document'], operation: ['getAll'] } }, properties);

/**
 * Document → Get Many (`v0-api.md §4.2`): filters `search`, `created_at_after`, `created_at_before`;
 * Return All follows the pages while `next` is set.
 *
 * @returns one item per Document
 */
export async function execute(this: IExecuteFunctions, itemIndex: number, client: ExtractionServiceClient): Promise<INodeExecutionData[]> {
	return await listItems(this, client, itemIndex, { family: 'v0', path: servicePath('v0', 'documents'), resourceName: 'Documents' });
}
