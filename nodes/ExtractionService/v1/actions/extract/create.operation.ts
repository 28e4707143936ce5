import type { INodeProperties } from 'n8n-workflow';

import { checkAgainstSchemaField, schemaDefinitionField } from '../../../../shared/fields/check';
import { passThroughBinary } from '../../helpers/input-files';
import { createAndWait, type JobRequest } from '../../helpers/create';
import { JOB_KINDS } from '../../../../shared/kinds';
import { readItemSettings } from '../../helpers/settings';
import { documentSourceRequests, parsingOptions } from '../../helpers/sources';
import { UUID_PLACEHOLDER, requireUuid } from '../../../../shared/validation';
import { binarySourceOptionFields } from '../fields/binary';
import { parsingOptionFields } from '../fields/job-options';
import { PARSING_ID } from '../fields/locators';
import { sourceFields, type DocumentSource } from '../fields/source';
import { extractItems } from '../../../../shared/output';
import { simplifyField, splitIntoItemsField } from '../../../../shared/fields/output';
import { jobCreateDescription, type OperationExecute } from '../operation';

/**
 * Where an extract's document comes from. `§v0-4.8` wants exactly one of `document` and
 * `parsing`: the Source selector makes that hold by construction — n8n drops the parameters that
 * `displayOptions` hide when it loads a node, so a workflow saved with both a parsing ID and a
 * document ID still sends only the selected one (test/v0.test.ts proves it).
 */
type Source = Extract<DocumentSource, 'binary' | 'documentId' | 'parsingId' | 'url'>;

/** The sources that make a new parsing: only they take the parsing options. */
const PARSING_SOURCES: Source[] = ['binary', 'documentId', 'url'];

const schemaIdField: INodeProperties = {
	displayName: 'Schema ID',
	name: 'schemaId',
	type: 'string',
	default: '',
	required: true,
	placeholder: UUID_PLACEHOLDER,
	description:
		'ID of the extraction schema that defines the fields to extract. The /v0 API cannot list schemas: copy the ID from the Extraction Service dashboard, or from Schema → Get Many (token credential).',
};

export const description = jobCreateDescription('extract', 'create', {
	fields: [
		...sourceFields(['binary', 'documentId', 'parsingId', 'url'], 'What to extract from'),
		schemaIdField,
	],
	output: [simplifyField],
	options: [
		...binarySourceOptionFields,
		checkAgainstSchemaField,
		schemaDefinitionField,
		...parsingOptionFields.map((field) => ({
			...field,
			displayOptions: { show: { '/source': PARSING_SOURCES } },
		})),
		splitIntoItemsField,
	],
});

/**
 * Extract → Create (`§v0-4.8`): one extract per file (binary source: each selected binary
 * property) or one for the document ID / parsing ID / URL; then, with Wait for Completion, polls
 * `GET /v0/extract/{id}` (`§v0-4.9`) until `FINISHED` or `ERROR` (`§v0-3`).
 *
 * @returns one output item per extract (or per result element with "Split Into Items")
 * @throws NodeOperationError for invalid input (before any request), `ERROR` outcomes and timeouts;
 *   NodeApiError for service errors
 */
export const execute: OperationExecute = async function (itemIndex, client) {
	const node = this.getNode();
	const settings = readItemSettings(this, itemIndex);
	const source = this.getNodeParameter('source', itemIndex) as Source;
	const schema = requireUuid(
		node,
		itemIndex,
		'Schema ID',
		this.getNodeParameter('schemaId', itemIndex),
	);
	// Model, picture/table options and metadata "only apply when a new parsing is created from
	// document": they are validated always but not sent with a parsing.
	const options = parsingOptions(node, itemIndex, settings.options);
	const jobs: JobRequest[] =
		source === 'parsingId'
			? [
					{
						body: {
							schema,
							parsing: requireUuid(
								node,
								itemIndex,
								PARSING_ID.displayName,
								this.getNodeParameter(PARSING_ID.name, itemIndex, '', { extractValue: true }),
							),
						},
					},
				]
			: await documentSourceRequests(
					this,
					itemIndex,
					source,
					{ schema, ...options },
					settings.files,
				);

	return await createAndWait(
		this,
		client,
		JOB_KINDS.extract,
		itemIndex,
		jobs,
		settings.wait,
		async (extract, file) =>
			await extractItems(
				client,
				extract,
				itemIndex,
				settings.output,
				file?.fileName,
				passThroughBinary(this, itemIndex, file, settings.output.includeInputBinary),
			),
	);
};
