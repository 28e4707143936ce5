import type { IExecuteFunctions, INodeExecutionData, INodeType, INodeTypeDescription } from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { properties, TOKEN_RESOURCES, V0_RESOURCES } from './v1/actions/properties';
import { listSearch } from './v1/methods';
import { router } from './v1/actions/router';

/**
 * The Extraction Service node. `version` is a list (currently `[1]`): a later breaking change adds a
 * version — and, when it diverges enough, a `v2/` folder beside `v1/` behind a VersionedNodeType —
 * so saved workflows keep their behaviour.
 */
export class ExtractionService implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Extraction Service',
		name: 'extractionService',
		icon: { light: 'file:extractionService.svg', dark: 'file:extractionService.dark.svg' },
		group: ['transform'],
		version: [1],
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description: 'Upload documents, parse them and extract structured data with the Extraction Service',
		defaults: { name: 'Extraction Service' },
		usableAsTool: true,
		inputs: [NodeConnectionTypes.Main],
		outputs: [NodeConnectionTypes.Main],
		credentials: [
			{
				name: 'extractionServiceApi',
				required: true,
				displayOptions: { show: { resource: V0_RESOURCES } },
			},
			{
				name: 'extractionServiceTokenApi',
				required: true,
				displayOptions: { show: { resource: TOKEN_RESOURCES } },
			},
		],
		properties,
	};

	methods = { listSearch };

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return await router.call(this);
	}
}
