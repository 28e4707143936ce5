import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { JOB_KINDS, getJob } from '../../helpers/jobs';
import { requireUuid } from '../../helpers/validation';
import type { ExtractionServiceClient } from '../../transport';
import { optionsCollection, resumeWaitField, splitIntoItemsField, waitOptionFields } from '../common.descriptions';
import { idField } from '../common.fields';
import { extractionItems, extractionSimplifyField } from './common';

const properties: INodeProperties[] = [
	idField('Extraction ID', 'extractionId', 'ID of the extraction to retrieve'),
	resumeWaitField('extraction', 'is FINISHED or ERROR'),
	extractionSimplifyField,
	optionsCollection([splitIntoItemsField, ...waitOptionFields]),
];

export const description = updateDisplayOptions({ show: { resource: ['extraction'], operation: ['get'] } }, properties);

/**
 * Extraction → Get (`unversioned-api.md §4.3`): 200 and 202 ("accepted but not ready", §3 rule 2)
 * both carry the resource; optionally waits until `FINISHED` or `ERROR`.
 *
 * @throws NodeApiError 404 naming the extraction
 */
export async function execute(this: IExecuteFunctions, itemIndex: number, client: ExtractionServiceClient): Promise<INodeExecutionData[]> {
	const id = requireUuid(this.getNode(), itemIndex, 'Extraction ID', this.getNodeParameter('extractionId', itemIndex));
	const final = await getJob(this, client, JOB_KINDS.extraction, id, itemIndex);
	return await extractionItems(this, client, final, itemIndex);
}
