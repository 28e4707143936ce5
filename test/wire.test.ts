/**
 * Node parameters reach the wire under the names the references give them: the emulator logs the
 * parsed fields of every request (query, JSON values, multipart text fields and files), and each
 * test reads the one create request a node run made. Wait for Completion is off: what is asserted is
 * the create request, not the job.
 */
import type { LoggedRequest } from '../emulator';
import { makePdf } from '../emulator/sample-pdf';
import {
	byId,
	documentUpload,
	extractCreate,
	extractionCreate,
	parsingCreate,
} from './helpers/params';
import { INVOICE_SCHEMA, SAMPLE_PDF, useNode } from './helpers/setup';

const { emulator, runNode, apiRequests, fileItem } = useNode();

const METADATA = { batch: 'wire-1', source: 'email' };

let threePages: Buffer;

beforeAll(async () => {
	threePages = await makePdf([['Page one'], ['Page two'], ['Page three']]);
});

/** Runs the node and returns the one POST it made to `path`; fails the test when the run failed. */
async function createRequest(
	path: string,
	parameters: Record<string, unknown>,
	input?: Parameters<typeof runNode>[1],
): Promise<LoggedRequest> {
	const { error } = await runNode({ waitForCompletion: false, ...parameters }, input);
	expect(error).toBeUndefined();
	const posts = apiRequests().filter((r) => r.method === 'POST');
	expect(posts.map((r) => `${r.path} ${r.status}`)).toEqual([`${path} 201`]);
	return posts[0];
}

/** A multipart body's text fields and files, with `metadata` parsed from its JSON text. */
function formOf(request: LoggedRequest) {
	if (request.body?.kind !== 'form')
		throw new Error(`expected a form body, got ${JSON.stringify(request.body)}`);
	const { metadata, ...fields } = request.body.fields;
	return {
		fields,
		metadata: typeof metadata === 'string' ? JSON.parse(metadata) : metadata,
		files: request.body.files,
	};
}

/** A JSON body's value. */
function jsonOf(request: LoggedRequest): Record<string, unknown> {
	if (request.body?.kind !== 'json')
		throw new Error(`expected a JSON body, got ${JSON.stringify(request.body)}`);
	return request.body.value as Record<string, unknown>;
}

const pdfFile = (filename: string, bytes: Buffer, field: string) => ({
	field,
	filename,
	size: bytes.length,
	contentType: 'application/pdf',
});

describe('Extraction → Create (§unversioned-4.2)', () => {
	const create = (extra: Record<string, unknown>) => extractionCreate({ server: 'FR-2', ...extra });

	it('sends Server, Schema, Classifier ID and Metadata as form fields, the page range as pdf_page_start / pdf_page_end', async () => {
		const request = await createRequest(
			'/extract/',
			create({
				schema: byId(INVOICE_SCHEMA),
				options: {
					classifier: 'classifier-7',
					pdfPageStart: 2,
					pdfPageEnd: 3,
					metadata: JSON.stringify(METADATA),
				},
			}),
			[await fileItem({ data: { bytes: threePages, fileName: 'three.pdf' } })],
		);
		expect(request.query).toEqual({ pdf_page_start: '2', pdf_page_end: '3' });
		expect(formOf(request)).toEqual({
			fields: { server: 'FR-2', schema: INVOICE_SCHEMA, classifier: 'classifier-7' },
			metadata: METADATA,
			files: [pdfFile('three.pdf', threePages, 'document')],
		});
	});

	it('sends only Server and the document when no option is set', async () => {
		const request = await createRequest(
			'/extract/',
			create({ schema: { __rl: true, mode: 'list', value: '' } }),
			[await fileItem()],
		);
		expect(request.query).toEqual({});
		expect(formOf(request)).toEqual({
			fields: { server: 'FR-2' },
			metadata: undefined,
			files: [pdfFile('invoice.pdf', SAMPLE_PDF, 'document')],
		});
	});
});

/** Extract → Create's parsing options, sent from a file or a URL and not from a parsing. */
const EXTRACT_OPTIONS = {
	model: 'PIGALLE',
	pictureDescriptionEnabled: false,
	tableVerificationEnabled: true,
};

describe.each([
	{
		operation: 'Parsing → Create (§v0-4.5)',
		path: '/v0/parsing',
		create: parsingCreate,
		options: {
			model: 'PIGALLE_LITE',
			pictureDescriptionEnabled: true,
			tableVerificationEnabled: false,
		},
		sent: {
			model: 'PIGALLE_LITE',
			picture_description_enabled: true,
			table_verification_enabled: false,
		},
	},
	{
		operation: 'Extract → Create (§v0-4.8)',
		path: '/v0/extract',
		create: extractCreate,
		options: EXTRACT_OPTIONS,
		sent: {
			schema: INVOICE_SCHEMA,
			model: 'PIGALLE',
			picture_description_enabled: false,
			table_verification_enabled: true,
		},
	},
])('$operation', ({ path, create, options, sent }) => {
	const withMetadata = { ...options, metadata: JSON.stringify(METADATA) };

	it('from a file: Model, Picture Description, Table Verification and Metadata (and a Schema ID) as multipart fields next to the document', async () => {
		const request = await createRequest(path, create({ source: 'binary', options: withMetadata }), [
			await fileItem(),
		]);
		expect(formOf(request)).toEqual({
			fields: Object.fromEntries(
				Object.entries(sent).map(([name, value]) => [name, String(value)]),
			),
			metadata: METADATA,
			files: [pdfFile('invoice.pdf', SAMPLE_PDF, 'document')],
		});
	});

	it('from a URL: the same options as JSON values, switches as booleans', async () => {
		const url = `${emulator().filesUrl}/static/a.pdf`;
		const request = await createRequest(
			path,
			create({ source: 'url', url, options: withMetadata }),
		);
		expect(jsonOf(request)).toEqual({ ...sent, document: url, metadata: METADATA });
	});
});

describe('Parsing → Create (§v0-4.5) without options', () => {
	it('sends only the document when no option is set', async () => {
		const url = `${emulator().filesUrl}/static/b.pdf`;
		expect(
			jsonOf(await createRequest('/v0/parsing', parsingCreate({ source: 'url', url }))),
		).toEqual({
			document: url,
		});
	});
});

describe('Extract → Create (§v0-4.8) from a parsing', () => {
	it('only Schema ID and the parsing, since the parsing options apply to a new parsing only', async () => {
		const parsing = await runNode(
			parsingCreate({ source: 'url', url: `${emulator().filesUrl}/static/a.pdf` }),
		);
		const parsingId = String(parsing.items[0].json.id);
		emulator().clearLog();
		const options = { ...EXTRACT_OPTIONS, metadata: JSON.stringify(METADATA) };
		const request = await createRequest(
			'/v0/extract',
			extractCreate({ source: 'parsingId', parsingId, options }),
		);
		expect(jsonOf(request)).toEqual({ schema: INVOICE_SCHEMA, parsing: parsingId });
	});
});

describe('Document → Upload (§v0-4.1)', () => {
	it('sends the page range as pdf_page_start / pdf_page_end, File Name as filename, Metadata as metadata, the file as file', async () => {
		const request = await createRequest(
			'/v0/documents',
			documentUpload({
				pdfPageStart: 2,
				pdfPageEnd: 3,
				filename: 'renamed.pdf',
				metadata: JSON.stringify(METADATA),
			}),
			[await fileItem({ data: { bytes: threePages, fileName: 'three.pdf' } })],
		);
		expect(request.query).toEqual({ pdf_page_start: '2', pdf_page_end: '3' });
		expect(formOf(request)).toEqual({
			fields: { filename: 'renamed.pdf' },
			metadata: METADATA,
			files: [pdfFile('three.pdf', threePages, 'file')],
		});
	});

	it('sends a page range with one end only as that one parameter', async () => {
		const request = await createRequest('/v0/documents', documentUpload({ pdfPageEnd: 2 }), [
			await fileItem({ data: { bytes: threePages, fileName: 'three.pdf' } }),
		]);
		expect(request.query).toEqual({ pdf_page_end: '2' });
		expect(formOf(request)).toEqual({
			fields: {},
			metadata: undefined,
			files: [pdfFile('three.pdf', threePages, 'file')],
		});
	});
});
