import {
	attachments,
	byId,
	documentUpload,
	extractCreate,
	extractionCreate,
	listAll,
	onDocument,
	onExtraction,
} from './helpers/params';
import { WORKFLOW_WITH_SCHEMA, useNode } from './helpers/setup';

const { emulator, runNode, credentialsFor, fileItem } = useNode();

const UUID = '11111111-2222-4333-8444-555555555555';
const schemaCreate = (extra: Record<string, unknown>) => ({
	resource: 'schema',
	operation: 'create',
	name: 'n',
	description: 'd',
	definition: '{}',
	...extra,
});

type Input = 'pdf' | 'none' | 'empty' | 'docx' | 'txt' | 'pngAsText' | 'attachments' | 'jsonEmpty';

interface Case {
	name: string;
	parameters: Record<string, unknown>;
	input?: Input;
	json?: Record<string, unknown>;
	baseUrl?: string;
	/** The message must match this and name the parameter. */
	message: RegExp;
}

const cases: Case[] = [
	// binary input
	{
		name: 'missing binary property',
		parameters: extractCreate({ binaryPropertyName: 'invoice' }),
		message: /^Parameter "Input Binary Field": item 0 has no binary property "invoice"$/,
	},
	{
		name: 'no binary data at all',
		parameters: extractCreate(),
		input: 'none',
		message: /^Parameter "Input Binary Field": item 0 has no binary property "data"$/,
	},
	{
		name: 'one missing name in a comma list',
		parameters: extractCreate({ binaryPropertyName: 'attachment_0, attachment_9' }),
		input: 'attachments',
		message: /^Parameter "Input Binary Field": item 0 has no binary property "attachment_9"$/,
	},
	{
		name: 'All Binary Properties on an item without files',
		parameters: extractCreate({ options: { allBinaryProperties: true } }),
		input: 'none',
		message: /^Item 0 has no binary data to upload$/,
	},
	{
		name: 'empty file',
		parameters: extractCreate(),
		input: 'empty',
		message: /^The file "empty\.pdf" in binary property "data" is empty$/,
	},
	{
		name: 'unsupported type for extractions (.docx)',
		parameters: extractionCreate(),
		input: 'docx',
		message: /^The file "offer\.docx" \(.+\) is not a type the service accepts$/,
	},
	{
		name: 'unsupported type for workflow uploads (.txt)',
		parameters: { resource: 'workflow', operation: 'upload', workflowId: WORKFLOW_WITH_SCHEMA },
		input: 'txt',
		message: /^The file "notes\.txt" \(text\/plain\) is not a type the service accepts$/,
	},
	{
		name: '.png whose MIME type is not an image',
		parameters: extractionCreate(),
		input: 'pngAsText',
		message: /^The file "scan\.png" \(text\/plain\) is not a type the service accepts$/,
	},
	// page range
	{
		name: 'page start after page end',
		parameters: documentUpload({ pdfPageStart: 3, pdfPageEnd: 2 }),
		message: /^Parameter "First Page" \(3\) is after "Last Page" \(2\)$/,
	},
	{
		name: 'page start zero',
		parameters: documentUpload({ pdfPageStart: 0 }),
		message: /^Parameter "First Page" must be a whole number of 1 or more, got 0$/,
	},
	{
		name: 'page end negative',
		parameters: documentUpload({ pdfPageEnd: -2 }),
		message: /^Parameter "Last Page" must be a whole number of 1 or more, got -2$/,
	},
	{
		name: 'page start not an integer',
		parameters: extractionCreate({ options: { pdfPageStart: 1.5 } }),
		message: /^Parameter "First Page" must be a whole number of 1 or more, got 1\.5$/,
	},
	// JSON parameters
	{
		name: 'malformed metadata JSON',
		parameters: extractCreate({ options: { metadata: '{"a": 1' } }),
		message: /^Parameter "Metadata" is not valid JSON/,
	},
	{
		name: 'metadata an array',
		parameters: documentUpload({ metadata: '[1, 2]' }),
		message:
			/^Parameter "Metadata" must be a JSON object such as \{"key": "value"\}, got an array$/,
	},
	{
		name: 'metadata a string',
		parameters: extractionCreate({ options: { metadata: '"invoice"' } }),
		message: /^Parameter "Metadata" must be a JSON object .*, got a string$/,
	},
	{
		name: 'malformed schema definition JSON',
		parameters: schemaCreate({ definition: '{"type": "object", }' }),
		message: /^Parameter "Definition" is not valid JSON/,
	},
	{
		name: 'schema definition an array',
		parameters: schemaCreate({ definition: '[]' }),
		message: /^Parameter "Definition" must be a JSON object/,
	},
	{
		name: 'schema name empty (from an expression)',
		parameters: schemaCreate({ name: '={{ $json.missing ?? "" }}' }),
		input: 'jsonEmpty',
		message: /^Parameter "Name" is empty$/,
	},
	{
		name: 'schema update without fields',
		parameters: {
			resource: 'schema',
			operation: 'update',
			schema: byId(UUID),
			updateFields: {},
		},
		message: /^Parameter "Update Fields" is empty/,
	},
	// identifiers
	{
		name: 'schema id not a UUID',
		parameters: extractCreate({ schemaId: 'invoice-schema' }),
		message: /^Parameter "Schema ID" must be a UUID, got "invoice-schema"$/,
	},
	{
		name: 'schema locator value not a UUID (expression)',
		parameters: extractionCreate({ schema: byId('={{ "abc" }}') }),
		message: /^Parameter "Schema" must be a UUID, got "abc"$/,
	},
	{
		name: 'parsing id not a UUID',
		parameters: extractCreate({ source: 'parsingId', parsingId: '42' }),
		message: /^Parameter "Parsing ID" must be a UUID, got "42"$/,
	},
	{
		name: 'document id not a UUID',
		parameters: onDocument('get', 'doc_1'),
		message: /^Parameter "Document ID" must be a UUID, got "doc_1"$/,
	},
	{
		name: 'workflow id not a UUID',
		parameters: { resource: 'workflow', operation: 'upload', workflowId: 'invoices' },
		message: /^Parameter "Workflow ID" must be a UUID, got "invoices"$/,
	},
	{
		name: 'extraction id not a UUID',
		parameters: onExtraction('download', '1234', { format: 'csv' }),
		message: /^Parameter "Extraction ID" must be a UUID, got "1234"$/,
	},
	{
		name: 'extract id empty (expression)',
		parameters: { resource: 'extract', operation: 'get', extractId: '={{ $json.id }}' },
		input: 'jsonEmpty',
		message: /^Parameter "Extract ID" is empty$/,
	},
	{
		name: 'neither parsing nor document: the chosen source is empty',
		parameters: extractCreate({ source: 'documentId', documentId: '={{ $json.doc }}' }),
		input: 'jsonEmpty',
		message: /^Parameter "Document ID" is empty$/,
	},
	// URLs
	{
		name: 'empty URL list',
		parameters: { resource: 'parsing', operation: 'create', source: 'urlList', urls: '={{ [] }}' },
		message: /^Parameter "URLs" is empty: give at least one URL$/,
	},
	{
		name: 'non-http(s) URL in a list',
		parameters: {
			resource: 'parsing',
			operation: 'create',
			source: 'urlList',
			urls: 'https://a.example/x.pdf\nftp://b.example/y.pdf',
		},
		message:
			/^Parameter "URLs" entry "2" must be an http:\/\/ or https:\/\/ URL, got "ftp:\/\/b\.example\/y\.pdf"$/,
	},
	{
		name: 'file: URL',
		parameters: extractCreate({ source: 'url', url: 'file:///etc/passwd' }),
		message:
			/^Parameter "URL" must be an http:\/\/ or https:\/\/ URL, got "file:\/\/\/etc\/passwd"$/,
	},
	{
		name: 'URL that is not a URL',
		parameters: { resource: 'parsing', operation: 'create', source: 'url', url: 'invoice.pdf' },
		message: /^Parameter "URL" must be an http:\/\/ or https:\/\/ URL, got "invoice\.pdf"$/,
	},
	{
		name: 'URL list not a JSON array',
		parameters: {
			resource: 'parsing',
			operation: 'create',
			source: 'urlList',
			urls: '["https://a.example/x.pdf",',
		},
		message: /^Parameter "URLs" is not a valid JSON array/,
	},
	// numbers and options
	{
		name: 'limit 0',
		parameters: { resource: 'document', operation: 'getAll', returnAll: false, limit: 0 },
		message: /^Parameter "Limit" must be a whole number from 1, got 0$/,
	},
	{
		name: 'timeout 0',
		parameters: extractCreate({ options: { timeout: 0 } }),
		message: /^Parameter "Wait Timeout" must be a number of seconds from 0\.001 to 2147483, got 0$/,
	},
	{
		name: 'timeout negative',
		parameters: {
			resource: 'extraction',
			operation: 'get',
			extractionId: UUID,
			waitForCompletion: true,
			options: { timeout: -5 },
		},
		message:
			/^Parameter "Wait Timeout" must be a number of seconds from 0\.001 to 2147483, got -5$/,
	},
	{
		name: 'concurrency 0',
		parameters: extractCreate({ options: { concurrency: 0 } }),
		message: /^Parameter "Concurrency" must be a whole number from 1 to 50, got 0$/,
	},
	{
		name: 'max retries 11',
		parameters: {
			resource: 'schema',
			operation: 'getAll',
			returnAll: true,
			options: { maxRetries: 11 },
		},
		message: /^Parameter "Max Retries" must be a whole number from 0 to 10, got 11$/,
	},
	{
		name: 'request timeout 0',
		parameters: {
			resource: 'document',
			operation: 'getAll',
			returnAll: true,
			options: { requestTimeout: 0 },
		},
		message:
			/^Parameter "Request Timeout" must be a number of seconds from 0\.001 to 2147483, got 0$/,
	},
	{
		name: 'created-after filter not a date',
		parameters: {
			resource: 'parsing',
			operation: 'getAll',
			returnAll: true,
			filters: { createdAfter: 'last tuesday' },
		},
		message: /^Parameter "Created After" is not a date-time, got "last tuesday"$/,
	},
	// credentials
	{
		name: 'Base URL without scheme',
		parameters: extractCreate(),
		baseUrl: 'api.example.com',
		message: /^The credential's Base URL "api\.example\.com" is not a valid http\(s\) URL$/,
	},
	{
		name: 'Base URL with another scheme',
		parameters: listAll('schema'),
		baseUrl: 'ftp://api.example.com',
		message: /^The credential's Base URL "ftp:\/\/api\.example\.com" is not a valid http\(s\) URL$/,
	},
];

async function inputFor(kind: Input = 'pdf') {
	switch (kind) {
		case 'none':
			return { json: {} };
		case 'jsonEmpty':
			return { json: { id: '', doc: '' } };
		case 'empty':
			return await fileItem({ data: { bytes: Buffer.alloc(0), fileName: 'empty.pdf' } });
		case 'docx':
			return await fileItem({
				data: {
					bytes: Buffer.from('PK\u0003\u0004'),
					fileName: 'offer.docx',
					mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
				},
			});
		case 'txt':
			return await fileItem({
				data: { bytes: Buffer.from('hello'), fileName: 'notes.txt', mimeType: 'text/plain' },
			});
		case 'pngAsText':
			return await fileItem({
				data: { bytes: Buffer.from('hello'), fileName: 'scan.png', mimeType: 'text/plain' },
			});
		case 'attachments':
			return await attachments('a.pdf');
		default:
			return await fileItem();
	}
}

describe('Bad input is refused before any request, with a message naming the parameter', () => {
	it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
		const { error, items } = await runNode(c.parameters, [await inputFor(c.input)], {
			credentials: c.baseUrl ? credentialsFor({ baseUrl: c.baseUrl }) : undefined,
		});
		expect(items).toEqual([]);
		expect(error?.message).toMatch(c.message);
		// Not one request, on either origin of the emulator.
		expect(emulator().requests).toEqual([]);
	});
});
