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
		options: [
			...createdRangeFilters,
			searchFilter,
			{
				displayName: 'Status',
				name: 'status',
				type: 'options',
				options: [
					{ name: 'Error', value: 'ERROR' },
					{ name: 'Finished', value: 'FINISHED' },
					{ name: 'In Progress', value: 'IN_PROGRESS' },
					{ name: 'In Queue', value: 'IN_QUEUE' },
					{ name: 'Partially Finished', value: 'PARTIAL_FINISHED' },
				],
				default: 'FINISHED',
				description: 'Only return parsings in this status',
			},
		],
	},
	optionsCollection([]),
];

export const description = updateDisplayOptions({ show: { resource: ['parsing'], operation: ['getAll'] } }, properties);

/**
 * Parsing → Get Many (`v0-api.md §4.6`): filters `status`, `search`, created range; Return All
 * follows the pages. The list items' fields beyond `id` and `status` are "not shown" (§4.6): they
 * are output as the service sends them.
 */
export async function execute(this: IExecuteFunctions, itemIndex: number, client: ExtractionServiceClient): Promise<INodeExecutionData[]> {
	return await listItems(this, client, itemIndex, { family: 'v0', path: servicePath('v0', 'parsing'), resourceName: 'Parsings' });
}
