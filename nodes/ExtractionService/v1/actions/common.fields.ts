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
