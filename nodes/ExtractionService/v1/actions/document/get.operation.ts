import { DOCUMENT_ID, idParameter } from '../fields/locators';
import { readOperation } from '../operation';

/** Document → Get (`§v0-4.3`): the Document (`§v0-2.1`) with `file_url_absolute`. */
export const { description, execute } = readOperation({
	resource: 'document',
	family: 'v0',
	segment: 'documents',
	resourceName: 'Document',
	id: DOCUMENT_ID,
	idFields: idParameter({ ...DOCUMENT_ID, description: 'The document to retrieve' }),
	absoluteUrls: true,
});
