import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { requireUuid } from '../../helpers/validation';
import { servicePath, type ExtractionServiceClient } from '../../transport';
import { optionsCollection } from '../common.descriptions';
import { idField } from '../common.fields';

const properties: INodeProperties[] = [idField('Extraction ID', 'extractionId', 'ID of the extraction to delete'), optionsCollection([])];

export const description = updateDisplayOptions({ show: { resource: ['extraction'], operation: ['delete'] } }, properties);

/**
 * Extraction → Delete (`unversioned-api.md §4.4`). The success status and body are "not shown":
 * any 2xx counts as deleted and the body, if any, is ignored.
 *
 * @returns `{ id, deleted: true }`
 */
export async function execute(this: IExecuteFunctions, itemIndex: number, client: ExtractionServiceClient): Promise<INodeExecutionData[]> {
	const id = requireUuid(this.getNode(), itemIndex, 'Extraction ID', this.getNodeParameter('extractionId', itemIndex));
	await client.send({ family: 'unversioned', method: 'DELETE', path: servicePath('unversioned', 'extract', id), itemIndex, expect: 'nothing', resourceName: 'Extraction', resourceId: id });
	return [{ json: { id, deleted: true } }];
}
