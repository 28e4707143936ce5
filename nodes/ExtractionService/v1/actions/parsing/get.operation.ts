import { JOB_KINDS } from '../../../../shared/kinds';
import { withAbsoluteUrls } from '../../../../shared/absolute-urls';
import { PARSING_ID } from '../fields/locators';
import { treatPartialAsErrorField } from '../fields/wait';
import { jobGetOperation } from '../operation';

/**
 * Parsing → Get (`§v0-4.7`), optionally waiting until the parsing is final (`§v0-3`).
 *
 * @returns the Parsing (`§v0-2.3`) with absolute URLs
 * @throws NodeApiError 404 naming the parsing; NodeOperationError for ERROR while waiting
 */
export const { description, execute } = jobGetOperation({
	resource: 'parsing',
	kind: JOB_KINDS.parsing,
	id: { ...PARSING_ID, description: 'The parsing to retrieve' },
	options: [treatPartialAsErrorField],
	shape: async (_ctx, client, parsing, itemIndex) => [
		{ json: withAbsoluteUrls(parsing, await client.baseUrl('v0', itemIndex)) },
	],
});
