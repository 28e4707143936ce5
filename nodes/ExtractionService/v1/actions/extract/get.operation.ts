import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { JOB_KINDS, getJob } from '../../helpers/jobs';
import { requireUuid } from '../../helpers/validation';
import type { ExtractionServiceClient } from '../../transport';
import { optionsCollection, resumeWaitField, simplifyField, splitIntoItemsField, waitOptionFields } from '../common.descriptions';
import { extractItems } from './common';

const properties: INodeProperties[] = [
	{
		displayName: 'Extract ID',
		name: 'extractId',
		type: 'string',
		default: '',
		required: true,
		description: 'ID of the extract to retrieve',
	},
	resumeWaitField('extract', 'is FINISHED or ERROR'),
	simplifyField,
	optionsCollection([splitIntoItemsField, ...waitOptionFields]),
];

export const description = updateDisplayOptions({ show: { resource: ['extract'], operation: ['get'] } }, properties);

/**
 * Extract → Get (`v0-api.md §4.9`): retrieves an extract, optionally waiting until it is final.
 *
 * @throws NodeApiError 404 naming the extract; NodeOperationError for a non-UUID ID, `ERROR` while waiting
 */
export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ExtractionServiceClient,
): Promise<INodeExecutionData[]> {
	const id = requireUuid(this.getNode(), itemIndex, 'Extract ID', this.getNodeParameter('extractId', itemIndex));
	const final = await getJob(this, client, JOB_KINDS.extract, id, itemIndex);
	return await extractItems(this, client, final, itemIndex);
}
