import { checkAgainstSchemaField } from '../../../../shared/fields/check';
import { JOB_KINDS } from '../../../../shared/kinds';
import { EXTRACTION_ID } from '../fields/locators';
import { extractionItems } from '../../../../shared/output';
import { simplifyField, splitIntoItemsField } from '../../../../shared/fields/output';
import { jobGetOperation } from '../operation';

/**
 * Extraction → Get (`§unversioned-4.3`): 200 and 202 ("accepted but not ready",
 * `§unversioned-3` rule 2) both carry the resource; optionally waits until `FINISHED` or `ERROR`.
 *
 * @throws NodeApiError 404 naming the extraction
 */
export const { description, execute } = jobGetOperation({
	resource: 'extraction',
	kind: JOB_KINDS.extraction,
	id: { ...EXTRACTION_ID, description: 'The extraction to retrieve' },
	fields: [simplifyField],
	options: [checkAgainstSchemaField, splitIntoItemsField],
	shape: async (_ctx, client, extraction, itemIndex, output) =>
		await extractionItems(client, extraction, itemIndex, output),
});
