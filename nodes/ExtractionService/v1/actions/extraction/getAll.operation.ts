import { extractionListFilters } from '../../../../shared/filters';
import { listOperation } from '../operation';

/**
 * Extraction → Get Many (`§unversioned-4.1`): filters `search`, `workflow_id`,
 * `workflow_session_id`, `meta_key`, `meta_value`; items are extraction list items
 * (`§unversioned-2.2`).
 */
export const { description, execute } = listOperation({
	resource: 'extraction',
	family: 'unversioned',
	segment: 'extract',
	resourceName: 'Extractions',
	filters: extractionListFilters,
});
