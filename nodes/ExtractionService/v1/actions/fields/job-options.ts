/** Options a new job takes: metadata, the parsing options, Reuse Existing Job, the page range. */
import type { INodeProperties } from 'n8n-workflow';

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
