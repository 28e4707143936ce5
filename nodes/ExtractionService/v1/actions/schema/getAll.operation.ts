import { listOperation } from '../operation';

/** Schema → Get Many (`§unversioned-4.5`), Return All / Limit over `page`/`size`; the list has no filters. */
export const { description, execute } = listOperation({
	resource: 'schema',
	family: 'unversioned',
	segment: 'schema',
	resourceName: 'Schemas',
});
