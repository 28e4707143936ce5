/** The Source selector of the create operations that take a document by file, ID or URL. */
import type { INodeProperties } from 'n8n-workflow';

import { binaryPropertyField } from './binary';
import { DOCUMENT_ID, PARSING_ID, idParameter } from './locators';
import { NOT_AS_TOOL } from './versions';

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
