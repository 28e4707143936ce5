import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { credentials, properties } from './v1/actions/resources';
import { router } from './v1/actions/router';
import { listSearch } from './v1/methods';

/**
 * The Extraction Service node.
 *
 * Versions (`version: [1, 2]`, new nodes get 2): version 2 moved Concurrency, Max Retries and
 * Request Timeout from Options into Execution Settings, and made the Document, Parsing and
 * Extraction IDs resource locators (From List / By ID). The few parameters that differ carry
 * `@version` display options (actions/fields.ts); a workflow saved with version 1 keeps its
 * parameters and behaviour. A later change that diverges further would get its own folder beside
 * `v1/` behind a VersionedNodeType.
 */
export class ExtractionService implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Extraction Service',
		name: 'extractionService',
		icon: { light: 'file:extractionService.svg', dark: 'file:extractionService.dark.svg' },
		group: ['transform'],
		version: [1, 2],
		defaultVersion: 2,
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description: 'Upload documents, parse them and extract structured data with the Extraction Service',
		defaults: { name: 'Extraction Service' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials,
		properties,
	};

	methods = { listSearch };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
