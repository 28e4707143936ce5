import { createdRangeFilters, searchFilter } from '../../../../shared/filters';
import { listOperation } from '../operation';

/**
 * Document → Get Many (`§v0-4.2`): filters `search`, `created_at_after`, `created_at_before`;
 * Return All follows the pages.
 */
export const { description, execute } = listOperation({
	resource: 'document',
	family: 'v0',
	segment: 'documents',
	resourceName: 'Documents',
	filters: [...createdRangeFilters, searchFilter],
});
