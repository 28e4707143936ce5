import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { JOB_KINDS, createAndWait, type JobRequest } from '../../helpers/jobs';
import { documentSourceRequests, parsingOptions } from '../../helpers/sources';
import { requireUuid } from '../../helpers/validation';
import type { ExtractionServiceClient } from '../../transport';
import {
	binarySourceOptionFields,
	binaryPropertyField,
	metadataField,
	modelField,
	optionsCollection,
	pictureDescriptionField,
	simplifyField,
	splitIntoItemsField,
	tableVerificationField,
	waitForCompletionField,
	waitOptionFields,
} from '../common.descriptions';
import { sourceFields, type DocumentSource } from '../common.fields';
import { extractItems } from './common';

/**
 * Where an extract's document comes from. `v0-api.md §4.8` wants exactly one of `document` and
 * `parsing`: the Source selector makes that hold by construction — n8n drops the parameters that
 * `displayOptions` hide when it loads a node, so a workflow saved with both a parsing ID and a
 * document ID still sends only the selected one (test/v0.test.ts proves it).
 */
type Source = Extract<DocumentSource, 'binary' | 'documentId' | 'parsingId' | 'url'>;

const properties: INodeProperties[] = [
	...sourceFields(['binary', 'documentId', 'parsingId', 'url'], 'What to extract from', binaryPropertyField),
	{
		displayName: 'Schema ID',
		name: 'schemaId',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. 3f0c1a52-7d4e-4c1b-9a51-2b6f0e8d9c41',
		description: 'ID of the extraction schema that defines the fields to extract',
	},
	waitForCompletionField,
	simplifyField,
	optionsCollection([
		...binarySourceOptionFields,
		metadataField,
		modelField,
		pictureDescriptionField,
		splitIntoItemsField,
		tableVerificationField,
		...waitOptionFields,
	]),
];

export const description = updateDisplayOptions({ show: { resource: ['extract'], operation: ['create'] } }, properties);

/**
 * Extract → Create (`v0-api.md §4.8`): one extract per file (binary source: each selected binary
 * property) or one for the document ID / parsing ID / URL; then, with Wait for Completion, polls
 * `GET /v0/extract/{id}` (§4.9) until `FINISHED` or `ERROR` (§3).
 *
 * @returns one output item per extract (or per result element with "Split Into Items")
 * @throws NodeOperationError for invalid input (before any request), `ERROR` outcomes and timeouts;
 *   NodeApiError for service errors
 */
export async function execute(
	this: IExecuteFunctions,
	itemIndex: number,
	client: ExtractionServiceClient,
): Promise<INodeExecutionData[]> {
	const node = this.getNode();
	const source = this.getNodeParameter('source', itemIndex) as Source;
	const schema = requireUuid(node, itemIndex, 'Schema ID', this.getNodeParameter('schemaId', itemIndex));
	// §4.8: model, picture/table options and metadata "only apply when a new parsing is created from
	// document" — they are validated always but not sent with a parsing.
	const options = parsingOptions(this, itemIndex);
	const jobs: JobRequest[] =
		source === 'parsingId'
			? [{ body: { schema, parsing: requireUuid(node, itemIndex, 'Parsing ID', this.getNodeParameter('parsingId', itemIndex)) } }]
			: await documentSourceRequests(this, itemIndex, source, { schema, ...options });

	return await createAndWait(this, client, JOB_KINDS.extract, itemIndex, jobs, async (extract, file) =>
		await extractItems(this, client, extract, itemIndex, file),
	);
}
