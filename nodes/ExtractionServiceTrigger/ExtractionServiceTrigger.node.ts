import type {
	INodeExecutionData,
	INodeType,
	INodeTypeDescription,
	IPollFunctions,
} from 'n8n-workflow';
import { NodeConnectionTypes } from 'n8n-workflow';

import { credentials, properties } from './description';
import { pollTrigger } from './poll';

/**
 * The Extraction Service Trigger: starts a workflow when the service finishes or fails a job, or
 * receives a document, whatever created it (another workflow, the dashboard, another integration).
 * The service has no webhooks or events (`§v0-6`, `§unversioned-6`), so this is a polling
 * trigger: n8n calls `poll()` at the node's Poll Times, and the node's static data carries the
 * cursor between polls (`poll/state.ts`).
 *
 * Events and the list each one polls:
 * - Extraction Finished / Failed: `GET /extract/` (token, `§unversioned-4.1`), each extraction read
 *   by id and output like Extraction → Get (`poll/scan.ts`);
 * - Parsing Finished (also `PARTIAL_FINISHED`) / Failed: `GET /v0/parsing` by `status` and
 *   `created_at_after` (API key, `§v0-4.6`), each parsing read by id (`poll/window.ts`);
 * - Document Uploaded: `GET /v0/documents` by `created_at_after` (API key, `§v0-4.2`).
 * The `/v0` family has no list of extracts (`§v0-4.8`), so there is no extract event.
 *
 * Versions (`version: [1, 2]`, new triggers get 2): version 2 changes Simplify's output only, as
 * version 4 of the Extraction Service node does: the extraction's `id`, `status` and
 * `document_name` keep their names, and an extracted field of the same name comes out as
 * `extracted_<name>` (version 1 lets the extracted field replace the extraction's).
 */
export class ExtractionServiceTrigger implements INodeType {
	description: INodeTypeDescription = {
		displayName: 'Extraction Service Trigger',
		name: 'extractionServiceTrigger',
		icon: { light: 'file:extractionService.svg', dark: 'file:extractionService.dark.svg' },
		group: ['trigger'],
		version: [1, 2],
		defaultVersion: 2,
		subtitle: '={{$parameter["event"]}}',
		description:
			'Starts the workflow when the Extraction Service finishes or fails a job, or receives a document',
		defaults: { name: 'Extraction Service Trigger' },
		polling: true,
		inputs: [],
		outputs: [NodeConnectionTypes.Main],
		credentials,
		properties,
	};

	async poll(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
		return await pollTrigger.call(this);
	}
}
