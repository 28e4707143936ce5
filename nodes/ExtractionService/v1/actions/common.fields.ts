import type { INodeProperties } from 'n8n-workflow';

/** A required ID parameter ("Document ID", "Parsing ID", …). */
export function idField(displayName: string, name: string, description: string): INodeProperties {
	return { displayName, name, type: 'string', default: '', required: true, placeholder: 'e.g. 9b2f6c1e-8d4a-4f3b-a1c2-7e5d9f0b3a61', description };
}

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

/** Date-time filters of the /v0 lists (`created_at_after`, `created_at_before`, `v0-api.md §4.2, §4.6`). */
export const createdRangeFilters: INodeProperties[] = [
	{
		displayName: 'Created After',
		name: 'createdAfter',
		type: 'dateTime',
		default: '',
		description: 'Only return those created after this moment',
	},
	{
		displayName: 'Created Before',
		name: 'createdBefore',
		type: 'dateTime',
		default: '',
		description: 'Only return those created before this moment',
	},
];

export const searchFilter: INodeProperties = {
	displayName: 'Search',
	name: 'search',
	type: 'string',
	default: '',
	description: 'Text matched against file names and metadata values',
};

/** First/Last Page options (`v0-api.md §4.1`, `unversioned-api.md §4.2`), 1-based; absent = whole document. */
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
		typeOptions: { minValue: 1, numberPrecision: 0 },
		default: 1,
		description: 'Last page of the PDF to keep (PDF only)',
	},
];

/** The document sources a create operation can offer, with the parameter each one shows. */
const SOURCE_CHOICES = {
	binary: {
		option: { name: 'Binary File', value: 'binary', description: 'Upload a file from the input item' },
		field: undefined,
	},
	documentId: {
		option: { name: 'Document ID', value: 'documentId', description: 'A document already uploaded to the service' },
		field: { displayName: 'Document ID', name: 'documentId', placeholder: 'e.g. 9b2f6c1e-8d4a-4f3b-a1c2-7e5d9f0b3a61', description: 'ID of an uploaded document' },
	},
	parsingId: {
		option: { name: 'Parsing ID', value: 'parsingId', description: 'A finished parsing: no new parsing is made' },
		field: { displayName: 'Parsing ID', name: 'parsingId', placeholder: 'e.g. 2c4e6a8b-…', description: 'ID of a parsing whose status is FINISHED or PARTIAL_FINISHED' },
	},
	url: {
		option: { name: 'URL', value: 'url', description: 'A public or pre-signed URL of the document' },
		field: { displayName: 'URL', name: 'url', placeholder: 'https://example.com/invoice.pdf', description: 'Public or pre-signed URL of the document' },
	},
	urlList: {
		option: { name: 'List of URLs', value: 'urlList', description: 'Several documents by URL: one job and one output item each' },
		field: {
			displayName: 'URLs',
			name: 'urls',
			placeholder: 'https://example.com/a.pdf\nhttps://example.com/b.pdf',
			description: 'One URL per line, comma-separated, or a JSON array of URLs (e.g. from an expression)',
			typeOptions: { rows: 4 },
		},
	},
} as const;

export type DocumentSource = keyof typeof SOURCE_CHOICES;

/**
 * The "Source" selector of a create operation and the one parameter each source shows (the binary
 * field for files). Options are listed alphabetically, as n8n's UI guidelines ask.
 *
 * @param sources the sources this operation accepts (`v0-api.md §4.5` for parsings, §4.8 for extracts)
 * @param binaryField the Input Binary Field description to show for "Binary File"
 */
export function sourceFields(sources: DocumentSource[], what: string, binaryField: INodeProperties): INodeProperties[] {
	const selector: INodeProperties = {
		displayName: 'Source',
		name: 'source',
		type: 'options',
		options: sources.map((s) => SOURCE_CHOICES[s].option).sort((a, b) => a.name.localeCompare(b.name)),
		default: 'binary',
		description: what,
	};
	const fields = sources.map((source): INodeProperties => {
		const field = SOURCE_CHOICES[source].field;
		if (!field) return { ...binaryField, displayOptions: { show: { source: ['binary'] } } };
		return { type: 'string', default: '', required: true, ...field, displayOptions: { show: { source: [source] } } };
	});
	return [selector, ...fields];
}
