import { checkAgainstSchemaField, schemaDefinitionField } from '../../../../shared/fields/check';
import { JOB_KINDS } from '../../../../shared/kinds';
import { extractItems } from '../../../../shared/output';
import { simplifyField, splitIntoItemsField } from '../../../../shared/fields/output';
import { jobGetOperation } from '../operation';

/**
 * Extract → Get (`§v0-4.9`): retrieves an extract, optionally waiting until it is final. The /v0
 * family has no list of extracts, so the ID is typed (or mapped), not picked.
 *
 * @throws NodeApiError 404 naming the extract; NodeOperationError for a non-UUID ID, `ERROR` while waiting
 */
export const { description, execute } = jobGetOperation({
	resource: 'extract',
	kind: JOB_KINDS.extract,
	id: {
		displayName: 'Extract ID',
		name: 'extractId',
		resourceName: 'Extract',
		description: 'The extract to retrieve (the id output by Extract → Create)',
	},
	fields: [simplifyField],
	options: [checkAgainstSchemaField, schemaDefinitionField, splitIntoItemsField],
	shape: async (_ctx, client, extract, itemIndex, output) =>
		await extractItems(client, extract, itemIndex, output),
});
