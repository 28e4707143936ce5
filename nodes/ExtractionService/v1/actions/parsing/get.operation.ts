import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { JOB_KINDS, getJob } from '../../helpers/jobs';
import { withAbsoluteUrls } from '../../helpers/output';
import { requireUuid } from '../../helpers/validation';
import type { ExtractionServiceClient } from '../../transport';
import { optionsCollection, resumeWaitField, treatPartialAsErrorField, waitOptionFields } from '../common.descriptions';
import { idField } from '../common.fields';

const properties: INodeProperties[] = [
	idField('Parsing ID', 'parsingId', 'ID of the parsing to retrieve'),
	resumeWaitField('parsing', 'reaches a final status'),
	optionsCollection([treatPartialAsErrorField, ...waitOptionFields]),
];

export const description = updateDisplayOptions({ show: { resource: ['parsing'], operation: ['get'] } }, properties);

/**
 * Parsing → Get (`v0-api.md §4.7`), optionally waiting until the parsing is final (§3).
 *
 * @returns the Parsing (§2.3) with absolute URLs
 * @throws NodeApiError 404 naming the parsing; NodeOperationError for ERROR while waiting
 */
export async function execute(this: IExecuteFunctions, itemIndex: number, client: ExtractionServiceClient): Promise<INodeExecutionData[]> {
	const id = requireUuid(this.getNode(), itemIndex, 'Parsing ID', this.getNodeParameter('parsingId', itemIndex));
	const final = await getJob(this, client, JOB_KINDS.parsing, id, itemIndex);
	return [{ json: withAbsoluteUrls(final, await client.baseUrl('v0', itemIndex)) }];
}
