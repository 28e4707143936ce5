import type {
	IExecuteFunctions,
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { credentials, properties } from './v1/actions/resources';
import { router } from './v1/actions/router';
import { listSearch } from './v1/methods';

/**
 * The Extraction Service node.
 *
 * Versions (`version: [1, 2, 3, 4]`, new nodes get 4): version 2 moved Concurrency, Max Retries and
 * Request Timeout from Options into Execution Settings, and made the Document, Parsing and
 * Extraction IDs resource locators (From List / By ID). Version 3 changes the tool variant only:
 * operations that cost credits or change data are offered to an AI agent only with Allow Billed or
 * Destructive Operations on (`allowChanges`). Version 4 changes Simplify's output only: the job's
 * `id`, `status` and other identifying fields keep their names, and an extracted field of the same
 * name comes out as `extracted_<name>` (before, it replaced the job's; `shared/simplify.ts`). The
 * few parameters that differ carry `@version` display options (actions/fields/versions.ts); a workflow saved with version 1 keeps its
 * parameters and behaviour. A later change that diverges further would get its own folder beside
 * `v1/` behind a VersionedNodeType.
 */
export class ExtractionService implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Extraction Service',
		name: 'extractionService',
		icon: { light: 'file:extractionService.svg', dark: 'file:extractionService.dark.svg' },
		group: ['transform'],
		version: [1, 2, 3, 4],
		defaultVersion: 4,
		subtitle: '={{$parameter["operation"] + ": " + $parameter["resource"]}}',
		description:
			'Upload documents, parse them and extract structured data with the Extraction Service',
		defaults: { name: 'Extraction Service' },
		// As an AI agent's tool, the node cannot receive files (an agent passes text): the tool
		// variant hides every binary upload (`@tool` display options in actions/) and says so.
		usableAsTool: {
			replacements: {
				description:
					'Reads business documents (PDF or image) that are reachable by a public or pre-signed http(s) URL, or already stored at the Extraction Service under an ID, and returns their text or structured data. IDs are UUIDs such as 3f0c1a52-7d4e-4c1b-9a51-2b6f0e8d9c41, taken from an earlier result. Files attached to a chat cannot be sent: pass their URL instead.',
			},
		},
		builderHint: {
			searchHint:
				'Document extraction for invoices, receipts and forms: upload PDFs or images (e.g. email attachments) or pass URLs, wait for the asynchronous job inside the node, and output the extracted fields as items for a spreadsheet, database or ERP. Extraction = upload and extract in one step (token credential); Document, Parsing and Extract = the step-by-step API (API key credential).',
		},
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
