import type { INodeProperties } from 'n8n-workflow';

import { DEFAULT_WAIT_TIMEOUT_SECONDS } from '../helpers/jobs';
import { UUID_PATTERN, UUID_PLACEHOLDER } from '../helpers/validation';
import {
	DEFAULT_CONCURRENCY,
	DEFAULT_MAX_RETRIES,
	DEFAULT_REQUEST_TIMEOUT_SECONDS,
} from '../transport';

/**
 * Every parameter that more than one operation shows, in one place. Operation files pick the ones
 * they need and pass them through `updateDisplayOptions`, so each operation shows one coherent form.
 *
 * Node versions: version 2 moved the execution-wide settings out of Options into Execution Settings
 * and made IDs that have a list endpoint resource locators. Parameters that differ carry
 * `@version` display options (`forVersion1` / `fromVersion2`); a saved version-1 workflow keeps
 * its parameters and behaviour.
 */

/** Display options that show a parameter on node version 1 only. */
const VERSION_1 = { '@version': [1] };

/** Display options that show a parameter from node version 2 on. */
const FROM_VERSION_2 = { '@version': [{ _cnd: { gte: 2 } }] };

function forVersion1(field: INodeProperties): INodeProperties {
	return {
		...field,
		displayOptions: {
			...field.displayOptions,
			show: { ...field.displayOptions?.show, ...VERSION_1 },
		},
	};
}

function fromVersion2(field: INodeProperties): INodeProperties {
	return {
		...field,
		displayOptions: {
			...field.displayOptions,
			show: { ...field.displayOptions?.show, ...FROM_VERSION_2 },
		},
	};
}

/** What the By ID mode of a locator accepts: a UUID, spaces around it allowed (they are trimmed). */
const UUID_REGEX = `^\\s*${UUID_PATTERN}\\s*$`;

/** An ID that a list endpoint can offer: how its locator searches and what it says. */
export interface IdParameter {
	/** UI name, e.g. "Document ID" (both the string and the locator; errors name it so). */
	displayName: string;
	/** Parameter name, e.g. `documentId`. */
	name: string;
	description: string;
	/** The resource, for the locator's name and messages ("Document"). */
	resourceName: string;
	/** `methods.listSearch` function of the "From List" mode; absent when the service has no list. */
	searchListMethod?: string;
}

/**
 * A resource locator: From List (searching with `searchListMethod`) or By ID (a UUID).
 *
 * @param invalid the By ID mode's message for a value that is not a UUID
 */
function locator(
	field: Pick<INodeProperties, 'displayName' | 'name' | 'description' | 'required'>,
	searchListMethod: string,
	resourceName: string,
	invalid: string,
): INodeProperties {
	return {
		...field,
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: `Select a ${resourceName.toLowerCase()}...`,
				typeOptions: { searchListMethod, searchable: true },
			},
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: UUID_PLACEHOLDER,
				validation: [{ type: 'regex', properties: { regex: UUID_REGEX, errorMessage: invalid } }],
			},
		],
	};
}

/**
 * A required ID parameter. With a list endpoint: a plain string on version 1 and, from version 2,
 * a resource locator (From List / By ID) — both read with `extractValue`; without one: a string.
 */
export function idParameter(id: IdParameter): INodeProperties[] {
	const plain: INodeProperties = {
		displayName: id.displayName,
		name: id.name,
		type: 'string',
		default: '',
		required: true,
		placeholder: UUID_PLACEHOLDER,
		description: id.description,
	};
	if (!id.searchListMethod) return [plain];
	return [
		forVersion1(plain),
		fromVersion2(
			locator(
				{ displayName: id.displayName, name: id.name, required: true, description: id.description },
				id.searchListMethod,
				id.resourceName,
				`Not a valid ${id.resourceName.toLowerCase()} ID: expected a UUID`,
			),
		),
	];
}

/** The Document, Parsing and Extraction IDs (their lists: `§v0-4.2`, `§v0-4.6`, `§unversioned-4.1`). */
export const DOCUMENT_ID: Omit<IdParameter, 'description'> = {
	displayName: 'Document ID',
	name: 'documentId',
	resourceName: 'Document',
	searchListMethod: 'searchDocuments',
};
export const PARSING_ID: Omit<IdParameter, 'description'> = {
	displayName: 'Parsing ID',
	name: 'parsingId',
	resourceName: 'Parsing',
	searchListMethod: 'searchParsings',
};
export const EXTRACTION_ID: Omit<IdParameter, 'description'> = {
	displayName: 'Extraction ID',
	name: 'extractionId',
	resourceName: 'Extraction',
	searchListMethod: 'searchExtractions',
};

/** The Schema parameter as operations read it (`readId`). */
export const SCHEMA_ID = { displayName: 'Schema', name: 'schema' };

/** A schema picked from the searchable list (`GET /schema/`, `§unversioned-4.5`) or by ID. */
export function schemaLocator(required: boolean, description: string): INodeProperties {
	return locator(
		{ displayName: 'Schema', name: 'schema', required, description },
		'searchSchemas',
		'Schema',
		'Not a schema ID (a UUID)',
	);
}

export const binaryPropertyField: INodeProperties = {
	displayName: 'Input Binary Field',
	name: 'binaryPropertyName',
	type: 'string',
	default: 'data',
	required: true,
	placeholder: 'e.g. data or attachment_0, attachment_1',
	hint: 'The name of the input binary field holding the file; several names separated by commas upload several files',
	description:
		'Each file becomes its own job and output item. Use the option "All Binary Properties" for every file of the item (e.g. all email attachments).',
};

/** "Put Output File in Field": the binary property a download writes. */
export const outputBinaryField: INodeProperties = {
	displayName: 'Put Output File in Field',
	name: 'binaryPropertyName',
	type: 'string',
	default: 'data',
	required: true,
	hint: 'The name of the output binary field to put the file in',
	description: 'Binary property of the output item that receives the downloaded file',
};

export const waitForCompletionField: INodeProperties = {
	displayName: 'Wait for Completion',
	name: 'waitForCompletion',
	type: 'boolean',
	default: true,
	description:
		'Whether to wait until the job reaches a final status before outputting the item. The node polls every 2 to 5 seconds; many items wait together.',
};

/**
 * Wait for Completion on a Get operation: off by default, for resuming a job whose item timed out.
 *
 * @param finalStates how the job's final states read in the description (e.g. "is FINISHED or ERROR")
 */
export function resumeWaitField(job: string, finalStates: string): INodeProperties {
	return {
		displayName: 'Wait for Completion',
		name: 'waitForCompletion',
		type: 'boolean',
		default: false,
		description: `Whether to keep polling until the ${job} ${finalStates} (e.g. to resume an item that timed out)`,
	};
}

export const metadataField: INodeProperties = {
	displayName: 'Metadata',
	name: 'metadata',
	type: 'json',
	default: '{}',
	description:
		'Free key-value data stored with the job, e.g. {"invoiceSource": "email"}. Must be a JSON object.',
};

/** The options of a new parsing (`§v0-4.5`; for an extract made from a document, `§v0-4.8`). */
export const parsingOptionFields: INodeProperties[] = [
	metadataField,
	{
		displayName: 'Model',
		name: 'model',
		type: 'options',
		options: [
			{ name: 'Pigalle', value: 'PIGALLE', description: 'Standard model' },
			{ name: 'Pigalle Lite', value: 'PIGALLE_LITE', description: 'Lighter, faster model' },
		],
		default: 'PIGALLE',
		description: 'Model used for the parsing',
	},
	{
		displayName: 'Picture Description',
		name: 'pictureDescriptionEnabled',
		type: 'boolean',
		default: false,
		description: 'Whether to describe the pictures found in the document',
	},
	{
		displayName: 'Table Verification',
		name: 'tableVerificationEnabled',
		type: 'boolean',
		default: false,
		description: 'Whether to run the stronger table verification',
	},
];

export const allBinaryPropertiesField: INodeProperties = {
	displayName: 'All Binary Properties',
	name: 'allBinaryProperties',
	type: 'boolean',
	default: false,
	description:
		'Whether to upload every binary property of the item (e.g. every email attachment), ignoring Input Binary Field',
};

export const includeInputBinaryField: INodeProperties = {
	displayName: 'Include Input Binary',
	name: 'includeInputBinary',
	type: 'boolean',
	default: false,
	description:
		'Whether to pass the uploaded file on to the output item, so a later node can archive the original',
};

/** Options that only apply when Source is "Binary File" (Create operations with a Source selector). */
export const binarySourceOptionFields: INodeProperties[] = [
	allBinaryPropertiesField,
	includeInputBinaryField,
].map((field) => ({
	...field,
	displayOptions: { show: { '/source': ['binary'] } },
}));

/** Wait Timeout and On Timeout: shown only while Wait for Completion is on. */
export const waitOptionFields: INodeProperties[] = [
	{
		displayName: 'Wait Timeout',
		name: 'timeout',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: DEFAULT_WAIT_TIMEOUT_SECONDS,
		description: 'Maximum seconds to wait for the job to finish',
	},
	{
		displayName: 'On Timeout',
		name: 'onTimeout',
		type: 'options',
		options: [
			{ name: 'Error', value: 'error', description: 'Fail the item' },
			{
				name: 'Output Unfinished Item',
				value: 'outputUnfinished',
				description:
					'Output the job as last seen, with timedOut true; a later Get with its ID resumes it',
			},
		],
		default: 'error',
		description: 'What to do when the Wait Timeout passes before the job is finished',
	},
].map(
	(field) =>
		({ ...field, displayOptions: { show: { '/waitForCompletion': [true] } } }) as INodeProperties,
);

/**
 * Reuse Existing Job (helpers/reuse.ts): the metadata key/value that identifies a job, so a re-run of
 * the same input waits for the job already made instead of creating (and paying for) another.
 */
export const reuseExistingJobField: INodeProperties = {
	displayName: 'Reuse Existing Job',
	name: 'reuseExistingJob',
	type: 'fixedCollection',
	placeholder: 'Add key',
	default: {},
	description:
		'Whether to look a job up by a metadata key and value before creating it; when one exists (and did not fail), the node waits for it instead of creating another. Use it where n8n may run the same input twice (Retry, Retry On Fail, queue mode).',
	options: [
		{
			displayName: 'Key',
			name: 'key',
			values: [
				{
					displayName: 'Metadata Key',
					name: 'key',
					type: 'string',
					default: 'n8nJobKey',
					description: 'Metadata key that holds the value',
				},
				{
					displayName: 'Metadata Value',
					name: 'value',
					type: 'string',
					default: '',
					placeholder: 'e.g. {{ $json.messageId }}',
					description:
						'What identifies this input, e.g. the mail\'s message ID. For an uploaded file the node appends ":" and the file name, so each attachment has its own job.',
				},
			],
		},
	],
};

export const treatPartialAsErrorField: INodeProperties = {
	displayName: 'Treat Partial as Error',
	name: 'treatPartialAsError',
	type: 'boolean',
	default: false,
	description:
		'Whether a parsing that ends PARTIAL_FINISHED (some pages failed) fails the item instead of being output',
};

/** First/Last Page (`§v0-4.1`, `§unversioned-4.2`), 1-based; a bound left at 0 (Last Page) or not added is not sent. */
export const pageRangeFields: INodeProperties[] = [
	{
		displayName: 'First Page',
		name: 'pdfPageStart',
		type: 'number',
		typeOptions: { minValue: 1, numberPrecision: 0 },
		default: 1,
		description: 'First page of the PDF to keep (1-based; PDF only)',
	},
	{
		displayName: 'Last Page',
		name: 'pdfPageEnd',
		type: 'number',
		typeOptions: { minValue: 0, numberPrecision: 0 },
		default: 0,
		description: 'Last page of the PDF to keep (PDF only); 0 keeps every page to the end',
	},
];

/** The execution-wide transport settings (read once, from the first item). */
const executionSettingFields: INodeProperties[] = [
	{
		displayName: 'Concurrency',
		name: 'concurrency',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 50 },
		default: DEFAULT_CONCURRENCY,
		description:
			'How many requests (uploads, polls) the node sends at once across all items; waiting jobs take no slot',
	},
	{
		displayName: 'Max Retries',
		name: 'maxRetries',
		type: 'number',
		typeOptions: { minValue: 0, maxValue: 10 },
		default: DEFAULT_MAX_RETRIES,
		description:
			'How often a request is retried after a rate limit (429), a server error (5xx) or a connection error. Creates are only retried when the service surely did not act.',
	},
	{
		displayName: 'Request Timeout',
		name: 'requestTimeout',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: DEFAULT_REQUEST_TIMEOUT_SECONDS,
		description:
			'Maximum seconds one HTTP request may take, from start to last byte, before it is aborted',
	},
];

const byName = (a: INodeProperties, b: INodeProperties) =>
	a.displayName.localeCompare(b.displayName);

/**
 * The Options collection of an operation, options sorted alphabetically as n8n's UI guidelines
 * ask. Version 1 also carries the execution settings there; from version 2 they sit in their own
 * collection (`executionSettings`).
 *
 * @param fields the operation's own options
 */
export function optionsCollection(fields: INodeProperties[]): INodeProperties[] {
	const collection = (options: INodeProperties[]): INodeProperties => ({
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [...options].sort(byName),
	});
	const ownFields = fields.length > 0 ? [fromVersion2(collection(fields))] : [];
	return [forVersion1(collection([...fields, ...executionSettingFields])), ...ownFields];
}

/** Version 2: the execution-wide settings, with a notice that they apply to the whole execution. */
export const executionSettingsFields: INodeProperties[] = [
	fromVersion2({
		displayName:
			'Execution Settings apply to all items of this execution: they are read once, from the first item',
		name: 'executionSettingsNotice',
		type: 'notice',
		default: '',
	}),
	fromVersion2({
		displayName: 'Execution Settings',
		name: 'executionSettings',
		type: 'collection',
		placeholder: 'Add setting',
		default: {},
		options: [...executionSettingFields].sort(byName),
	}),
];

/** Return All / Limit, as every n8n "Get Many" operation has them. */
export const returnAllFields: INodeProperties[] = [
	{
		displayName: 'Return All',
		name: 'returnAll',
		type: 'boolean',
		default: false,
		description: 'Whether to return all results or only up to a given limit',
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 50,
		description: 'Max number of results to return',
		displayOptions: { show: { returnAll: [false] } },
	},
];

/** Display options of a choice an AI agent cannot use (a binary upload): hidden in the node's tool variant. */
export const NOT_AS_TOOL = { hide: { '@tool': [true] } };

/**
 * The tool variant's safety switch (node version 3): operations that cost credits or change data
 * are offered to an AI agent only when it is on (`resources.ts` hides them, the router refuses them).
 */
export const allowChangesField: INodeProperties = {
	displayName: 'Allow Billed or Destructive Operations',
	name: 'allowChanges',
	type: 'boolean',
	default: false,
	description:
		'Whether an AI agent may run operations that cost credits (Create, Upload) or change or delete data (Update, Delete). Off: the tool offers only Get, Get Many and Download.',
	displayOptions: { show: { '@tool': [true], '@version': [{ _cnd: { gte: 3 } }] } },
};

/** The document sources a create operation can offer, with the parameter each one shows. */
const SOURCE_CHOICES = {
	binary: {
		name: 'Binary File',
		value: 'binary',
		description: 'Upload a file from the input item',
		displayOptions: NOT_AS_TOOL,
	},
	documentId: {
		name: 'Document ID',
		value: 'documentId',
		description: 'A document already uploaded to the service',
	},
	parsingId: {
		name: 'Parsing ID',
		value: 'parsingId',
		description: 'A finished parsing: no new parsing is made',
	},
	url: { name: 'URL', value: 'url', description: 'A public or pre-signed URL of the document' },
	urlList: {
		name: 'List of URLs',
		value: 'urlList',
		description: 'Several documents by URL: one job and one output item each',
	},
} as const;

export type DocumentSource = keyof typeof SOURCE_CHOICES;

/** The parameter each source shows (the binary field for files). */
function sourceField(source: DocumentSource): INodeProperties[] {
	switch (source) {
		case 'binary':
			return [binaryPropertyField];
		case 'documentId':
			return idParameter({ ...DOCUMENT_ID, description: 'The uploaded document to use' });
		case 'parsingId':
			return idParameter({
				...PARSING_ID,
				description: 'A parsing whose status is FINISHED or PARTIAL_FINISHED',
			});
		case 'url':
			return [
				{
					displayName: 'URL',
					name: 'url',
					type: 'string',
					default: '',
					required: true,
					placeholder: 'e.g. https://example.com/invoice.pdf',
					description: 'Public or pre-signed URL of the document',
				},
			];
		case 'urlList':
			return [
				{
					displayName: 'URLs',
					name: 'urls',
					type: 'string',
					default: '',
					required: true,
					typeOptions: { rows: 4 },
					placeholder: 'e.g. https://example.com/a.pdf\nhttps://example.com/b.pdf',
					description:
						'One URL per line, comma-separated, or a JSON array of URLs (e.g. from an expression)',
				},
			];
	}
}

/**
 * The "Source" selector of a create operation and the parameter each source shows. Options are
 * listed alphabetically, as n8n's UI guidelines ask.
 *
 * @param sources the sources this operation accepts (`§v0-4.5` for parsings, `§v0-4.8` for extracts)
 * @param what the selector's description
 */
export function sourceFields(sources: DocumentSource[], what: string): INodeProperties[] {
	const selector: INodeProperties = {
		displayName: 'Source',
		name: 'source',
		type: 'options',
		options: sources.map((s) => SOURCE_CHOICES[s]).sort((a, b) => a.name.localeCompare(b.name)),
		default: 'binary',
		description: what,
	};
	const fields = sources.flatMap((source) =>
		sourceField(source).map((field) => ({
			...field,
			displayOptions: { show: { ...field.displayOptions?.show, source: [source] } },
		})),
	);
	return [selector, ...fields];
}
