import { createdRangeFilters, searchFilter } from '../../../../shared/filters';
import { listOperation } from '../operation';

/**
 * Parsing → Get Many (`§v0-4.6`): filters `status`, `search`, created range; Return All follows the
 * pages. The list items' fields beyond `id` and `status` are "not shown": they are
 * output as the service sends them.
 */
export const { description, execute } = listOperation({
	resource: 'parsing',
	family: 'v0',
	segment: 'parsing',
	resourceName: 'Parsings',
	filters: [
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
});
