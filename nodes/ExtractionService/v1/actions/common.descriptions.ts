import type { INodeProperties } from 'n8n-workflow';

/**
 * Parameters several operations share. Each operation file picks the ones it needs and passes them
 * through `updateDisplayOptions`, so every operation shows one coherent form.
 */

export const binaryPropertyField: INodeProperties = {
	displayName: 'Input Binary Field',
	name: 'binaryPropertyName',
	type: 'string',
	default: 'data',
	required: true,
	placeholder: 'e.g. data or attachment_0, attachment_1',
	hint: 'The name of the input binary field holding the file; several names separated by commas upload several files',
	description: 'Each file becomes its own job and output item. Use the option "All Binary Properties" for every file of the item (e.g. all email attachments).',
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

export const simplifyField: INodeProperties = {
	displayName: 'Simplify',
	name: 'simplify',
	type: 'boolean',
	default: true,
	description:
		'Whether to return the extracted fields at the top level with the ID, status, schema name and file name, instead of the full resource',
};

export const metadataField: INodeProperties = {
	displayName: 'Metadata',
	name: 'metadata',
	type: 'json',
	default: '{}',
	description: 'Free key-value data stored with the job, e.g. {"invoiceSource": "email"}. Must be a JSON object.',
};

export const modelField: INodeProperties = {
	displayName: 'Model',
	name: 'model',
	type: 'options',
	options: [
		{ name: 'Pigalle', value: 'PIGALLE', description: 'Standard model' },
		{ name: 'Pigalle Lite', value: 'PIGALLE_LITE', description: 'Lighter, faster model' },
	],
	default: 'PIGALLE',
	description: 'Model used for the parsing',
};

export const pictureDescriptionField: INodeProperties = {
	displayName: 'Picture Description',
	name: 'pictureDescriptionEnabled',
	type: 'boolean',
	default: false,
	description: 'Whether to describe the pictures found in the document',
};

export const tableVerificationField: INodeProperties = {
	displayName: 'Table Verification',
	name: 'tableVerificationEnabled',
	type: 'boolean',
	default: false,
	description: 'Whether to run the stronger table verification',
};

export const allBinaryPropertiesField: INodeProperties = {
	displayName: 'All Binary Properties',
	name: 'allBinaryProperties',
	type: 'boolean',
	default: false,
	description: 'Whether to upload every binary property of the item (e.g. every email attachment), ignoring Input Binary Field',
};

export const includeInputBinaryField: INodeProperties = {
	displayName: 'Include Input Binary',
	name: 'includeInputBinary',
	type: 'boolean',
	default: false,
	description: 'Whether to pass the uploaded file on to the output item, so a later node can archive the original',
};

/** Options that only apply when Source is "Binary File" (Create operations with a Source selector). */
export const binarySourceOptionFields: INodeProperties[] = [allBinaryPropertiesField, includeInputBinaryField].map((field) => ({
	...field,
	displayOptions: { show: { '/source': ['binary'] } },
}));

export const timeoutField: INodeProperties = {
	displayName: 'Timeout',
	name: 'timeout',
	type: 'number',
	typeOptions: { minValue: 1 },
	default: 600,
	description: 'Maximum seconds to wait for the job to finish (only with Wait for Completion)',
};

export const onTimeoutField: INodeProperties = {
	displayName: 'On Timeout',
	name: 'onTimeout',
	type: 'options',
	options: [
		{ name: 'Error', value: 'error', description: 'Fail the item' },
		{
			name: 'Output Unfinished Item',
			value: 'outputUnfinished',
			description: 'Output the job as last seen, with timedOut true; a later Get with its ID resumes it',
		},
	],
	default: 'error',
	description: 'What to do when Timeout passes before the job is finished',
};

export const treatPartialAsErrorField: INodeProperties = {
	displayName: 'Treat Partial as Error',
	name: 'treatPartialAsError',
	type: 'boolean',
	default: false,
	description: 'Whether a parsing that ends PARTIAL_FINISHED (some pages failed) fails the item instead of being output',
};

export const splitIntoItemsField: INodeProperties = {
	displayName: 'Split Into Items',
	name: 'splitIntoItems',
	type: 'boolean',
	default: false,
	description: 'Whether to output one item per element when the result is a list (e.g. invoice lines)',
};

/** Transport settings every operation offers; the first item's values apply to the whole execution. */
export const requestOptionFields: INodeProperties[] = [
	{
		displayName: 'Concurrency',
		name: 'concurrency',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 50 },
		default: 5,
		description: 'How many requests (uploads, polls) the node sends at once across all items; waiting jobs take no slot',
	},
	{
		displayName: 'Max Retries',
		name: 'maxRetries',
		type: 'number',
		typeOptions: { minValue: 0, maxValue: 10 },
		default: 3,
		description:
			'How often a request is retried after a rate limit (429), a server error (5xx) or a connection error. Creates are only retried when the service surely did not act.',
	},
	{
		displayName: 'Request Timeout',
		name: 'requestTimeout',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 300,
		description: 'Maximum seconds one HTTP request may take before it is aborted',
	},
];

/** Options of a job-creating operation that waits. */
export const waitOptionFields: INodeProperties[] = [timeoutField, onTimeoutField];

/**
 * An "Options" collection, alphabetically sorted as n8n's UI guidelines ask.
 *
 * @param fields the operation's own options; the request options are always appended
 */
export function optionsCollection(fields: INodeProperties[]): INodeProperties {
	const all = [...fields, ...requestOptionFields].sort((a, b) => a.displayName.localeCompare(b.displayName));
	return {
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: all,
	};
}

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
