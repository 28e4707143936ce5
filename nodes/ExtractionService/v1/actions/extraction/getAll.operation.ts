import { listOperation } from '../operation';

/**
 * Extraction → Get Many (`§unversioned-4.1`): filters `search`, `workflow_id`,
 * `workflow_session_id`, `meta_key`, `meta_value`; items are extraction list items
 * (`§unversioned-2.2`).
 */
export const { description, execute } = listOperation({
	resource: 'extraction',
	family: 'unversioned',
	segment: 'extract',
	resourceName: 'Extractions',
	filters: [
		{ displayName: 'Metadata Key', name: 'metaKey', type: 'string', default: '', placeholder: 'e.g. messageId', description: 'Only extractions whose metadata has this key' },
		{ displayName: 'Metadata Value', name: 'metaValue', type: 'string', default: '', description: 'Only extractions whose metadata has this value' },
		{ displayName: 'Search', name: 'search', type: 'string', default: '', description: 'Text matched against document names and schema names' },
		{ displayName: 'Workflow ID', name: 'workflowId', type: 'string', default: '', placeholder: 'e.g. 0d5c5f0e-8b7a-4c52-9a3e-6f1e2d3c4b5a', description: 'Only extractions of this workflow' },
		{ displayName: 'Workflow Session ID', name: 'workflowSessionId', type: 'number', default: 0, description: 'Only extractions of this workflow session' },
	],
});
