import { SCHEMA_ID, schemaLocator } from '../fields/locators';
import { readOperation } from '../operation';

/** Schema → Get (`§unversioned-4.7`): the Schema as the service sends it. */
export const { description, execute } = readOperation({
	resource: 'schema',
	family: 'unversioned',
	segment: 'schema',
	resourceName: 'Schema',
	id: SCHEMA_ID,
	idFields: [schemaLocator(true, 'The schema to retrieve')],
});
