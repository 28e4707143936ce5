import { SCHEMA_ID, schemaLocator } from '../fields/locators';
import { deleteOperation } from '../operation';

/** Schema → Delete (`§unversioned-4.9`): outputs `{ id, deleted: true }`. */
export const { description, execute } = deleteOperation({
	resource: 'schema',
	family: 'unversioned',
	segment: 'schema',
	resourceName: 'Schema',
	id: SCHEMA_ID,
	idFields: [schemaLocator(true, 'The schema to delete')],
});
