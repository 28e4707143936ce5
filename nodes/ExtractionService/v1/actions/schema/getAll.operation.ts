import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { listItems } from '../../helpers/lists';
import { servicePath, type ExtractionServiceClient } from '../../transport';
import { optionsCollection, returnAllFields } from '../common.descriptions';

const properties: INodeProperties[] = [...returnAllFields, optionsCollection([])];

export const description = updateDisplayOptions({ show: { resource: ['schema'], operation: ['getAll'] } }, properties);

/** Schema → Get Many (`unversioned-api.md §4.5`), Return All / Limit over `page`/`size`. */
export async function execute(this: IExecuteFunctions, itemIndex: number, client: ExtractionServiceClient): Promise<INodeExecutionData[]> {
	return await listItems(this, client, itemIndex, { family: 'unversioned', path: servicePath('unversioned', 'schema'), resourceName: 'Schemas' });
}
