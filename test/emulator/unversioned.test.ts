/**
 * The emulator's unversioned family against docs/service-api.md, end to end over HTTP: extractions
 * (§unversioned-4.1–§unversioned-4.4), schemas (§unversioned-4.5–§unversioned-4.9), workflow uploads (§unversioned-4.10) and credits (§unversioned-8).
 */
import JSZip from 'jszip';

import { TINY_PNG } from '../../emulator/files';
import { makePdf } from '../../emulator/sample-pdf';
import {
	INVOICE_SCHEMA,
	LINES_SCHEMA,
	UNKNOWN_ID,
	WORKFLOW_EU,
	WORKFLOW_PLAIN,
	form,
	useEmulatorClient,
	useInvoice,
} from './client';

const PROCESSING_MS = 400;
/** The emulator's clock: real time, or a time a test sets (`frozenAt`, epoch ms) to decide a job's progress. */
let frozenAt: number | undefined;
const api = useEmulatorClient({ processingMs: PROCESSING_MS, clock: () => frozenAt ?? Date.now() });

const invoice = useInvoice();
let small: Buffer;

beforeAll(async () => {
	small = await makePdf([['Hello emulator world', 'Invoice number: INV-2']]);
});

beforeEach(() => api.emu.setCredits(10_000));
afterEach(() => (frozenAt = undefined));

/** POST /extract/ with a multipart form of `fields` (and `query`, e.g. `?pdf_page_start=2`). */
const post = (fields: Parameters<typeof form>[0], query = '') =>
	api.send('POST', `/extract/${query}`, { form: form(fields) });

/** POST /extract/ with the invoice on EU-1, the Invoice schema and `metadata`; polls it to its final state. */
async function finishedExtraction(
	metadata: Record<string, string> = {},
): Promise<Record<string, any>> {
	const a = await post({
		document: invoice.file,
		server: 'EU-1',
		schema: INVOICE_SCHEMA,
		metadata: JSON.stringify(metadata),
	});
	expect(a.status).toBe(201);
	return (await api.poll(`/extract/${a.body.id}/`)).body;
}

describe('unversioned extractions (§unversioned-4.1–§unversioned-4.4)', () => {
	it('POST /extract/: 201, credits taken per page, 202 while running then 200, every step, extracted data (§unversioned-4.2, §unversioned-4.3, §unversioned-2.1)', async () => {
		api.emu.setCredits(100);
		const t0 = Date.now();
		frozenAt = t0;
		const a = await post({
			document: invoice.file,
			server: 'EU-1',
			schema: INVOICE_SCHEMA,
			metadata: '{"batch":"b-1"}',
		});
		expect(a.status).toBe(201);
		const id = a.body.id;
		expect(api.emu.getCredits()).toBe(96);
		expect(a.body).toMatchObject({
			status: 'CREATED',
			credit_used: null,
			content: null,
			document_url: `/extract/${id}/document/`,
		});
		expect(a.body.content_images).toHaveLength(4);
		expect(a.body.content_images[0]).toEqual({
			name: 'page-1.png',
			url: `/extract/${id}/images/page-1.png/`,
		});
		// The clock walks the job through its steps (queued for the first 20 %, then the steps spread
		// over the rest); no classifier, no CLASSIFICATION.
		const steps: string[] = [];
		for (const at of [0, 100, 250, 399]) {
			frozenAt = t0 + at;
			const x = await api.send('GET', `/extract/${id}/`);
			expect([x.status, x.body.status]).toEqual([202, at === 0 ? 'CREATED' : 'IN_PROGRESS']);
			steps.push(x.body.extraction_step);
		}
		expect(steps).toEqual(['OCR', 'OCR', 'PARSING', 'LOCATION']);
		frozenAt = t0 + PROCESSING_MS;
		const done = await api.poll(`/extract/${id}/`, (x) => x.status === 200);
		expect(done.body).toMatchObject({
			status: 'FINISHED',
			credit_used: 4,
			extracted_data: { invoice_number: 'INV-1' },
		});
		expect(done.body.content).toContain('Invoice number: INV-1');
		expect(done.body.extraction_time).toBe(PROCESSING_MS / 1000);
		const image = await api.send('GET', done.body.content_images[1].url);
		expect(image.headers.get('content-type')).toBe('image/png');
		expect((await api.send('GET', done.body.document_url)).bytes).toEqual(invoice.bytes);
	});

	it('downloads csv, json and the page images; refuses without a schema or before the end (§unversioned-4.3)', async () => {
		const { id } = await finishedExtraction();
		const csv = await api.send('GET', `/extract/${id}/?download=csv`);
		expect(csv.status).toBe(200);
		expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
		expect(csv.headers.get('content-disposition')).toBe('attachment; filename="invoice.csv"');
		expect(csv.body).toBe(
			'invoice_number,invoice_date,vendor_name,customer_name,total_amount,currency,due_date\r\nINV-1,2024-03-01,ACME Corporation,,1234.5,EUR,\r\n',
		);
		const js = await api.send('GET', `/extract/${id}/?download=json`);
		expect(js.headers.get('content-disposition')).toBe('attachment; filename="invoice.json"');
		expect(js.body).toEqual((await api.send('GET', `/extract/${id}/`)).body);
		const zip = await api.send('GET', `/extract/${id}/?download=images`);
		expect(zip.headers.get('content-type')).toBe('application/zip');
		expect(zip.headers.get('content-disposition')).toBe(
			'attachment; filename="invoice-images.zip"',
		);
		expect(Object.keys((await JSZip.loadAsync(zip.bytes)).files).sort()).toEqual([
			'page-1.png',
			'page-2.png',
			'page-3.png',
			'page-4.png',
		]);
		expect((await api.send('GET', `/extract/${id}/?download=xml`)).body).toEqual({
			download: ['"xml" is not a valid choice.'],
		});

		const plain = await post({ document: { name: 'p.pdf', bytes: small }, server: 'FR-1' });
		expect((await api.send('GET', `/extract/${plain.body.id}/?download=csv`)).body).toEqual({
			download: ['This extraction has no schema: there is nothing to download.'],
		});
		const running = await post({
			document: { name: 'p.pdf', bytes: small },
			server: 'FR-1',
			schema: INVOICE_SCHEMA,
		});
		expect((await api.send('GET', `/extract/${running.body.id}/?download=json`)).body).toEqual({
			download: ['Extraction is not finished.'],
		});
	});

	it('validates the file, the server and the credits; trims the page range; reads images (§unversioned-4.2, §unversioned-8)', async () => {
		expect(
			(await post({ document: { name: 'a.txt', bytes: Buffer.from('hi') }, server: 'EU-1' })).body,
		).toEqual({
			document: ['Unsupported file type. Accepted: .pdf, .png, .jpg, .jpeg'],
		});
		expect(
			(await post({ document: { name: 'a.pdf', bytes: Buffer.from('not a pdf') }, server: 'EU-1' }))
				.status,
		).toBe(400);
		expect((await post({ document: invoice.file, server: 'US-1' })).body).toEqual({
			server: ['"US-1" is not a valid choice.'],
		});
		expect((await post({ document: invoice.file })).body).toEqual({
			server: ['This field is required.'],
		});

		api.emu.setCredits(3);
		const poor = await post({ document: invoice.file, server: 'EU-1' });
		expect(poor.status).toBe(403);
		expect(poor.body).toEqual({ credits: ['Insufficient credits: 4 needed, 3 available.'] });
		const trimmed = await post(
			{ document: invoice.file, server: 'EU-1' },
			'?pdf_page_start=1&pdf_page_end=2',
		);
		expect(trimmed.status).toBe(201);
		expect(trimmed.body.content_images).toHaveLength(2);
		expect(api.emu.getCredits()).toBe(1);

		api.emu.setCredits(10_000);
		const img = await post({ document: { name: 'scan.PNG', bytes: TINY_PNG }, server: 'FR-2' });
		expect(img.status).toBe(201);
		expect((await api.poll(`/extract/${img.body.id}/`)).body.content).toBe('');
	});

	it('GET /extract/ filters by metadata and search (document name, schema name), pages; DELETE removes the extraction and its file (§unversioned-4.1, §unversioned-4.4)', async () => {
		const { id } = await finishedExtraction({ lot: 'lot-1' });
		await finishedExtraction({ lot: 'lot-2' });
		const ids = async (query: string): Promise<string[]> =>
			(await api.send('GET', `/extract/?${query}`)).body.results.map((e: { id: string }) => e.id);
		expect(await ids('meta_key=lot&meta_value=lot-1')).toEqual([id]);
		expect(await ids('meta_value=lot-1')).toEqual([id]);
		expect(await ids('meta_key=lot&meta_value=lot-3')).toEqual([]);
		expect(await ids('meta_key=lot')).toHaveLength(2);
		const needle = await post({ document: { name: 'Needle.pdf', bytes: small }, server: 'EU-1' });
		expect(await ids('search=needle')).toEqual([needle.body.id]);
		const lines = await post({
			document: { name: 'l.pdf', bytes: small },
			server: 'EU-1',
			schema: LINES_SCHEMA,
		});
		expect(await ids('search=INVOICE%20LINES')).toEqual([lines.body.id]);
		expect((await api.send('GET', '/extract/?size=2')).body.next).toBe(
			`${api.emu.url}/extract/?size=2&page=2`,
		);

		const del = await api.send('DELETE', `/extract/${id}/`);
		expect(del.status).toBe(204);
		expect(del.bytes).toHaveLength(0);
		expect((await api.send('GET', `/extract/${id}/`)).status).toBe(404);
		expect(api.emu.getStoredFile(id)).toBeUndefined();
	});

	it('refuses an extraction when credits are insufficient (403), and takes one credit per page', async () => {
		const pdf = await makePdf([['One page']]);
		api.emu.setCredits(0);
		const refused = await post({ document: { name: 'x.pdf', bytes: pdf }, server: 'EU-1' });
		expect(refused.status).toBe(403);
		expect(refused.body).toEqual({ credits: ['Insufficient credits: 1 needed, 0 available.'] });
		api.emu.setCredits(100);
		expect((await post({ document: { name: 'x.pdf', bytes: pdf }, server: 'EU-1' })).status).toBe(
			201,
		);
		expect(api.emu.getCredits()).toBe(99);
	});
});

describe('unversioned workflow uploads (§unversioned-4.10)', () => {
	it("two files → an array sharing a session, with the workflow's schema and server; one file → an object", async () => {
		const two = await api.send('POST', `/workflow/${WORKFLOW_EU}/extract/`, {
			form: form({
				'extracts[0]document': invoice.file,
				'extracts[1]document': { name: 'small.pdf', bytes: small },
			}),
		});
		expect(two.status).toBe(201);
		expect(two.body.map((e: { document_name: string }) => e.document_name)).toEqual([
			'invoice.pdf',
			'small.pdf',
		]);
		expect(two.body[0]).toMatchObject({
			workflow: WORKFLOW_EU,
			schema: INVOICE_SCHEMA,
			server: 'EU-1',
		});
		expect(two.body[0].workflow_session_id).toBe(two.body[1].workflow_session_id);
		const one = await api.send('POST', `/workflow/${WORKFLOW_PLAIN}/extract/`, {
			form: form({ 'extracts[0]document': invoice.file }),
		});
		expect(one.body.schema).toBeNull();
		expect(one.body.workflow_session_id).not.toBe(two.body[0].workflow_session_id);
		const list = await api.send(
			'GET',
			`/extract/?workflow_id=${WORKFLOW_EU}&workflow_session_id=${two.body[0].workflow_session_id}`,
		);
		expect(list.body.count).toBe(2);
		expect(list.body.results[1].schema.name).toBe('Invoice');
	});

	it('needs extracts[i]document fields and a known workflow', async () => {
		expect(
			(
				await api.send('POST', `/workflow/${WORKFLOW_EU}/extract/`, {
					form: form({ document: invoice.file }),
				})
			).body,
		).toEqual({ extracts: ['This field is required.'] });
		expect(
			(
				await api.send('POST', `/workflow/${UNKNOWN_ID}/extract/`, {
					form: form({ 'extracts[0]document': invoice.file }),
				})
			).body,
		).toEqual({
			detail: 'No Workflow matches the given query.',
		});
	});

	it('serves csv / json / zip downloads of a workflow extraction named after its file', async () => {
		const created = await api.send('POST', `/workflow/${WORKFLOW_EU}/extract/`, {
			form: form({
				'extracts[0]document': { name: 'one.pdf', bytes: small },
				'extracts[1]document': { name: 'two.pdf', bytes: small },
			}),
		});
		expect(created.body).toHaveLength(2);
		const id = created.body[0].id;
		expect((await api.poll(`/extract/${id}/`)).status).toBe(200);
		const csv = await api.send('GET', `/extract/${id}/?download=csv`);
		expect(csv.headers.get('content-disposition')).toBe('attachment; filename="one.csv"');
		expect(csv.body).toContain('INV-2');
		expect(
			(await api.send('GET', `/extract/${id}/?download=json`)).body.extracted_data.invoice_number,
		).toBe('INV-2');
		const zip = await api.send('GET', `/extract/${id}/?download=images`);
		expect(Object.keys((await JSZip.loadAsync(zip.bytes)).files)).toEqual(['page-1.png']);
	});
});

describe('unversioned schemas (§unversioned-4.5–§unversioned-4.9)', () => {
	it('create, validate, update (url-encoded and multipart), use from /v0/extract, delete', async () => {
		const before = (await api.send('GET', '/schema/')).body.count;
		const created = await api.send('POST', '/schema/', {
			json: {
				name: 'Receipt',
				description: 'Shop receipts',
				schema: { type: 'object', properties: { invoice_number: { type: 'string' } } },
			},
		});
		expect(created.status).toBe(201);
		expect(created.body.additional_informations).toBeNull();
		const id = created.body.id;
		expect(
			(
				await api.send('POST', '/schema/', {
					json: { name: 'x', description: 'y' },
				})
			).body,
		).toEqual({ schema: ['This field is required.'] });
		expect(
			(
				await api.send('POST', '/schema/', {
					json: { name: '', description: 'y', schema: [] },
				})
			).body,
		).toEqual({
			name: ['This field may not be blank.'],
			schema: ['Must be a JSON object or null.'],
		});
		const put = await api.send('PUT', `/schema/${id}/`, {
			text: new URLSearchParams({ name: 'Receipt 2', description: 'd', schema: 'null' }).toString(),
			contentType: 'application/x-www-form-urlencoded',
		});
		expect(put.status).toBe(200);
		expect(put.body.schema).toBeNull();
		const putMultipart = await api.send('PUT', `/schema/${id}/`, {
			form: form({
				name: 'Receipt 3',
				description: 'd',
				schema: '{"type":"object","properties":{"invoice_number":{"type":"string"}}}',
			}),
		});
		expect(putMultipart.body.name).toBe('Receipt 3');
		expect((await api.send('GET', `/schema/${id}/`)).body.name).toBe('Receipt 3');

		const parsing = await api.send('POST', '/v0/parsing', {
			form: form({ document: invoice.file }),
		});
		await api.poll(`/v0/parsing/${parsing.body.id}`);
		const ex = await api.send('POST', '/v0/extract', {
			json: { schema: id, parsing: parsing.body.id },
		});
		expect(ex.status).toBe(201);
		expect((await api.poll(`/v0/extract/${ex.body.id}`)).body.result).toEqual({
			invoice_number: 'INV-1',
		});

		expect((await api.send('DELETE', `/schema/${id}/`)).status).toBe(204);
		expect((await api.send('GET', `/schema/${id}/`)).body).toEqual({
			detail: 'No Schema matches the given query.',
		});
		expect((await api.send('GET', '/schema/')).body.count).toBe(before);
	});
});
