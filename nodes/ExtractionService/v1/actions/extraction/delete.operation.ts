import { EXTRACTION_ID, idParameter } from '../fields/locators';
import { deleteOperation } from '../operation';

/** Extraction → Delete (`§unversioned-4.4`): outputs `{ id, deleted: true }`. */
export const { description, execute } = deleteOperation({
	resource: 'extraction',
	family: 'unversioned',
	segment: 'extract',
	resourceName: 'Extraction',
	id: EXTRACTION_ID,
	idFields: idParameter({ ...EXTRACTION_ID, description: 'The extraction to delete' }),
});
