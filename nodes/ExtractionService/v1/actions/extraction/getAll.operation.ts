import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { listItems } from '../../helpers/lists';
import { servicePath, type ExtractionServiceClient } from '../../transport';
import { optionsCollection, returnAllFields } from '../common.descriptions';

const properties: INodeProperties[] = [
	...returnAllFields,
	{
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add filter',
		default: {},
		options: [
			{ displayName: 'Metadata Key', name: 'metaKey', type: 'string', default: '', description: 'Only extractions whose metadata has this key' },
			{ displayName: 'Metadata Value', name: 'metaValue', type: 'string', default: '', description: 'Only extractions whose metadata has this value' },
			{ displayName: 'Search', name: 'search', type: 'string', default: '', description: 'Text matched against document names and schema names' },
			{ displayName: 'Workflow ID', name: 'workflowId', type: 'string', default: '', description: 'Only extractions of this workflow' },
			{ displayName: 'Workflow Session ID', name: 'workflowSessionId', type: 'number', default: 0, description: 'Only extractions of this workflow session' },
		],
	},
	optionsCollection([]),
];

export const description = updateDisplayOptions({ show: { resource: ['extraction'], operation: ['getAll'] } }, properties);

/**
 * Extraction → Get Many (`unversioned-api.md §4.1`): filters `search`, `workflow_id`,
 * `workflow_session_id`, `meta_key`, `meta_value`; items are extraction list items (§2.2).
 */
export async function execute(this: IExecuteFunctions, itemIndex: number, client: ExtractionServiceClient): Promise<INodeExecutionData[]> {
	return await listItems(this, client, itemIndex, { family: 'unversioned', path: servicePath('unversioned', 'extract'), resourceName: 'Extractions' });
}
