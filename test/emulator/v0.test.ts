/**
 * The emulator's `/v0` family against docs/service-api.md, end to end over HTTP: documents
 * (§v0-4.1–§v0-4.4), parsings (§v0-4.5–§v0-4.7) and extracts (§v0-4.8–§v0-4.9).
 */
import { PDFDocument } from 'pdf-lib';

import { makePdf } from '../../emulator/sample-pdf';
import {
	INVOICE_SCHEMA,
	LINES_SCHEMA,
	UNKNOWN_ID,
	form,
	useEmulatorClient,
	useInvoice,
} from './client';

const PROCESSING_MS = 400;
const api = useEmulatorClient({ processingMs: PROCESSING_MS });
const invoice = useInvoice();

/** A document uploaded from the invoice with metadata {customer: Globex, n: 1}, and its finished parsing. */
let docId: string;
let parsingId: string;

beforeAll(async () => {
	const doc = await api.send('POST', '/v0/documents', {
		form: form({ file: invoice.file, metadata: '{"customer":"Globex","n":1}' }),
	});
	docId = doc.body.id;
	const parsing = await api.send('POST', '/v0/parsing', {
		json: { document: docId },
	});
	parsingId = parsing.body.id;
	await api.poll(`/v0/parsing/${parsingId}`);
});

describe('v0 documents (§v0-4.1–§v0-4.4)', () => {
	it('POST /v0/documents answers 201 with the Document (§v0-2.1) and stores the file as sent', async () => {
		const a = await api.send('POST', '/v0/documents', {
			form: form({ file: invoice.file, metadata: '{"customer":"Initech","n":2}' }),
		});
		expect(a.status).toBe(201);
		expect(a.body).toMatchObject({
			filename: 'invoice.pdf',
			page_count: 4,
			file_url: `/v0/documents/${a.body.id}/download`,
			metadata: { customer: 'Initech', n: 2 },
		});
		expect(a.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
		expect(api.emu.getStoredFile(a.body.id)).toEqual(invoice.bytes);
	});

	it('trims to the page range, takes the file name override, and reports invalid input per field', async () => {
		const trimmed = await api.send('POST', '/v0/documents?pdf_page_start=2&pdf_page_end=3', {
			form: form({ file: invoice.file, filename: 'trimmed.pdf' }),
		});
		expect(trimmed.status).toBe(201);
		expect(trimmed.body).toMatchObject({ page_count: 2, filename: 'trimmed.pdf' });
		expect(
			(await PDFDocument.load(api.emu.getStoredFile(trimmed.body.id) as Buffer)).getPageCount(),
		).toBe(2);

		const tooFar = await api.send('POST', '/v0/documents?pdf_page_end=9', {
			form: form({ file: invoice.file }),
		});
		expect(tooFar.body).toEqual({
			pdf_page_end: ['Ensure this value is less than or equal to 4.'],
		});
		const bad = await api.send('POST', '/v0/documents?pdf_page_start=0&pdf_page_end=x', {
			form: form({ file: invoice.file }),
		});
		expect(bad.status).toBe(400);
		expect(Object.keys(bad.body).sort()).toEqual(['pdf_page_end', 'pdf_page_start']);
		const reversed = await api.send('POST', '/v0/documents?pdf_page_start=3&pdf_page_end=2', {
			form: form({ file: invoice.file }),
		});
		expect(reversed.status).toBe(400);
		expect(
			(
				await api.send('POST', '/v0/documents', {
					form: form({ filename: 'x' }),
				})
			).body,
		).toEqual({ file: ['No file was submitted.'] });
		const empty = await api.send('POST', '/v0/documents', {
			form: form({ file: { name: 'e.pdf', bytes: Buffer.alloc(0) } }),
		});
		expect(empty.body).toEqual({ file: ['The submitted file is empty.'] });
		const notAnObject = await api.send('POST', '/v0/documents', {
			form: form({ file: invoice.file, metadata: '[1]' }),
		});
		expect(notAnObject.body).toEqual({ metadata: ['Must be a JSON object.'] });
	});

	it('GET /v0/documents pages newest first with absolute next / previous links that keep the query (§v0-4.2, §v0-2.5)', async () => {
		for (const name of ['paging-1.pdf', 'paging-2.pdf'])
			await api.send('POST', '/v0/documents', {
				form: form({ file: { name, bytes: invoice.bytes } }),
			});
		const page1 = await api.send('GET', '/v0/documents?size=1&search=paging-');
		expect(page1.status).toBe(200);
		expect(page1.body).toMatchObject({
			count: 2,
			previous: null,
			next: `${api.emu.url}/v0/documents?size=1&search=paging-&page=2`,
		});
		expect(page1.body.results.map((d: { filename: string }) => d.filename)).toEqual([
			'paging-2.pdf',
		]);
		const page2 = await api.send('GET', page1.body.next);
		expect(page2.body.results.map((d: { filename: string }) => d.filename)).toEqual([
			'paging-1.pdf',
		]);
		expect(page2.body.previous).toBe(`${api.emu.url}/v0/documents?size=1&search=paging-`);
		expect(page2.body.next).toBeNull();
		expect((await api.send('GET', '/v0/documents?page=3&size=1&search=paging-')).body).toEqual({
			detail: 'Invalid page.',
		});
		expect((await api.send('GET', '/v0/documents?page=abc')).status).toBe(400);
	});

	it('GET /v0/documents filters by search (filename, metadata values) and created_at (§v0-4.2)', async () => {
		await api.send('POST', '/v0/documents', {
			form: form({ file: { name: 'Needle-Report.pdf', bytes: invoice.bytes } }),
		});
		const names = async (query: string): Promise<string[]> =>
			(await api.send('GET', `/v0/documents?${query}`)).body.results.map(
				(d: { filename: string }) => d.filename,
			);
		expect(await names('search=NEEDLE')).toEqual(['Needle-Report.pdf']);
		expect(
			(await api.send('GET', '/v0/documents?search=globex')).body.results.map(
				(d: { id: string }) => d.id,
			),
		).toEqual([docId]);
		expect(
			(await api.send('GET', '/v0/documents?created_at_after=2999-01-01T00:00:00Z')).body.count,
		).toBe(0);
		const all = (await api.send('GET', '/v0/documents')).body.count;
		expect((await api.send('GET', '/v0/documents?created_at_before=2999-01-01')).body.count).toBe(
			all,
		);
		expect((await api.send('GET', '/v0/documents?created_at_after=yesterday')).body).toEqual({
			created_at_after: ['Enter a valid date/time.'],
		});
	});

	it("GET /v0/documents/{id}: 200 with the Document, 404 in Django's wording (§v0-4.3)", async () => {
		expect((await api.send('GET', `/v0/documents/${docId}`)).body.id).toBe(docId);
		expect((await api.send('GET', '/v0/documents/not-a-uuid')).body).toEqual({
			detail: 'No Document matches the given query.',
		});
	});

	it('download: 302 to the files origin, which serves the same bytes without an API key and refuses a forged signature (§v0-4.4)', async () => {
		const r = await api.send('GET', `/v0/documents/${docId}/download`);
		expect(r.status).toBe(302);
		expect(r.bytes).toHaveLength(0);
		const location = r.headers.get('location') as string;
		expect(location.startsWith(`${api.emu.filesUrl}/files/${docId}/invoice.pdf?signature=`)).toBe(
			true,
		);
		api.emu.clearLog();
		const f = await api.call('GET', location);
		expect(f.status).toBe(200);
		expect(f.headers.get('content-type')).toBe('application/pdf');
		expect(f.headers.get('content-disposition')).toBe('attachment; filename="invoice.pdf"');
		expect(f.bytes).toEqual(invoice.bytes);
		const logged = api.emu.requests.filter((q) => q.origin === 'files');
		expect(logged.map((q) => q.status)).toEqual([200]);
		expect(logged[0].headers['x-api-key']).toBeUndefined();
		expect(
			(await api.call('GET', `${api.emu.filesUrl}/files/${docId}/invoice.pdf?signature=forged`))
				.status,
		).toBe(403);
	});

	it('stores a large upload (40 MB) on disk, counts its pages and parses it', async () => {
		const big = Buffer.concat([invoice.bytes, Buffer.alloc(40 * 1024 * 1024, 0x20)]);
		const a = await api.send('POST', '/v0/documents', {
			form: form({ file: { name: 'big.pdf', bytes: big } }),
		});
		expect(a.status).toBe(201);
		expect(a.body.page_count).toBe(4);
		expect(api.emu.getStoredFile(a.body.id)?.length).toBe(big.length);
		const p = await api.send('POST', '/v0/parsing', {
			json: { document: a.body.id },
		});
		const done = await api.poll(`/v0/parsing/${p.body.id}`);
		expect(done.body).toMatchObject({ status: 'FINISHED', pages_total: 4 });
	});
});

describe('v0 parsings (§v0-4.5–§v0-4.7)', () => {
	it('from a document id: IN_QUEUE → IN_PROGRESS → FINISHED with the text of every page (§v0-4.5, §v0-2.3, §v0-3)', async () => {
		const a = await api.send('POST', '/v0/parsing', {
			json: { document: docId },
		});
		expect(a.status).toBe(201);
		expect(a.body).toMatchObject({
			status: 'IN_QUEUE',
			markdown_content: null,
			pages_total: 0,
			model: 'PIGALLE',
		});
		const mid = await api.poll(`/v0/parsing/${a.body.id}`, (x) => x.body.status !== 'IN_QUEUE');
		expect(['IN_PROGRESS', 'FINISHED']).toContain(mid.body.status);
		const done = await api.poll(`/v0/parsing/${a.body.id}`);
		expect(done.body).toMatchObject({
			status: 'FINISHED',
			pages_total: 4,
			pages_success: 4,
			pictures: [],
		});
		expect(done.body.markdown_content).toMatch(
			/^# invoice\.pdf\n\n## Page 1\n\nACME Corporation\nInvoice number: INV-1/,
		);
		expect(done.body.ocr_content.pages).toHaveLength(4);
		expect(done.body.ocr_content.pages[0].width).toBe(595);
		expect(
			Date.parse(done.body.updated_at) - Date.parse(done.body.created_at),
		).toBeGreaterThanOrEqual(PROCESSING_MS - 1);
	});

	it('from URLs: a JSON list gives an array, a repeated multipart field too, one URL one object; only loopback URLs are fetched (§v0-4.5)', async () => {
		const { filesUrl } = api.emu;
		const a = await api.send('POST', '/v0/parsing', {
			json: { document: [`${filesUrl}/static/a.pdf`, `${filesUrl}/static/b.pdf`] },
		});
		expect(a.status).toBe(201);
		expect(a.body.map((p: { document: { filename: string } }) => p.document.filename)).toEqual([
			'a.pdf',
			'b.pdf',
		]);
		const done = await api.poll(`/v0/parsing/${a.body[1].id}`);
		expect(done.body.markdown_content).toContain('Static document B');
		const one = await api.send('POST', '/v0/parsing', {
			form: form({ document: `${filesUrl}/static/c.pdf` }),
		});
		expect(one.body.document.filename).toBe('c.pdf');
		const multi = await api.send('POST', '/v0/parsing', {
			form: form({ document: [`${filesUrl}/static/a.pdf`, `${filesUrl}/static/c.pdf`] }),
		});
		expect(multi.body.map((p: { document: { filename: string } }) => p.document.filename)).toEqual([
			'a.pdf',
			'c.pdf',
		]);
		const remote = await api.send('POST', '/v0/parsing', {
			json: { document: 'https://example.com/x.pdf' },
		});
		expect(remote.body).toEqual({ document: ['URL could not be fetched.'] });
		const missing = await api.send('POST', '/v0/parsing', {
			json: { document: `${filesUrl}/static/zzz.pdf` },
		});
		expect(missing.body).toEqual({ document: ['URL could not be fetched.'] });
		expect((await api.send('POST', '/v0/parsing', { json: { document: [] } })).status).toBe(400);
	});

	it('reports field errors together and malformed JSON (§v0-4.5, §v0-7)', async () => {
		expect((await api.send('POST', '/v0/parsing', { json: {} })).body).toEqual({
			document: ['This field is required.'],
		});
		expect(
			(await api.send('POST', '/v0/parsing', { json: { document: UNKNOWN_ID } })).body,
		).toEqual({ document: ['Unknown document id.'] });
		const bad = await api.send('POST', '/v0/parsing', {
			json: { document: docId, model: 'BIG', picture_description_enabled: 'maybe' },
		});
		expect(bad.body).toEqual({
			model: ['"BIG" is not a valid choice.'],
			picture_description_enabled: ['Must be a valid boolean.'],
		});
		const malformed = await api.send('POST', '/v0/parsing', {
			text: '{"document": ',
			contentType: 'application/json',
		});
		expect(malformed.status).toBe(400);
		expect(malformed.body.detail).toMatch(/^JSON parse error - /);
	});

	it('from a multipart file: pictures, PARTIAL_FINISHED, ERROR and unsupported-file outcomes (§v0-2.2, §v0-3)', async () => {
		const a = await api.send('POST', '/v0/parsing', {
			form: form({
				document: { name: 'two.pdf', bytes: invoice.bytes },
				picture_description_enabled: 'true',
				model: 'PIGALLE_LITE',
				metadata: '{"emulator_outcome":"PARTIAL_FINISHED"}',
			}),
		});
		expect(a.status).toBe(201);
		expect(a.body.document.filename).toBe('two.pdf');
		const done = await api.poll(`/v0/parsing/${a.body.id}`);
		expect(done.body).toMatchObject({
			status: 'PARTIAL_FINISHED',
			pages_total: 4,
			pages_success: 3,
			pages_failed: 1,
			error: '1 page(s) could not be processed',
			model: 'PIGALLE_LITE',
		});
		expect(done.body.pictures).toHaveLength(3);
		expect(done.body.pictures[0].description).toBe('Emulated picture of page 1');
		const png = await api.send('GET', done.body.pictures[0].picture);
		expect([png.status, png.headers.get('content-type')]).toEqual([200, 'image/png']);
		expect((await api.call('GET', done.body.pictures[0].picture)).status).toBe(401);

		const err = await api.send('POST', '/v0/parsing', {
			json: { document: docId, metadata: { emulator_outcome: 'ERROR', emulator_error: 'boom' } },
		});
		const errDone = await api.poll(`/v0/parsing/${err.body.id}`);
		expect(errDone.body).toMatchObject({
			status: 'ERROR',
			error: 'Emulated processing failure: boom',
		});

		const txt = await api.send('POST', '/v0/parsing', {
			form: form({ document: { name: 'notes.txt', bytes: Buffer.from('plain text') } }),
		});
		expect(txt.status).toBe(201);
		const txtDone = await api.poll(`/v0/parsing/${txt.body.id}`);
		expect(txtDone.body).toMatchObject({ status: 'ERROR', error: 'Unsupported file type' });
	});

	it('GET /v0/parsing filters by status; an unknown id is a 404 (§v0-4.6, §v0-4.7)', async () => {
		const create = (metadata: Record<string, string>) =>
			api.send('POST', '/v0/parsing', {
				json: { document: docId, metadata: { tag: 'status-filter', ...metadata } },
			});
		const failed = (await create({ emulator_outcome: 'ERROR' })).body.id;
		const finished = (await create({})).body.id;
		for (const id of [failed, finished]) await api.poll(`/v0/parsing/${id}`);
		const ids = async (status: string): Promise<string[]> =>
			(await api.send('GET', `/v0/parsing?status=${status}&search=status-filter`)).body.results.map(
				(p: { id: string }) => p.id,
			);
		expect(await ids('ERROR')).toEqual([failed]);
		expect(await ids('FINISHED')).toEqual([finished]);
		expect((await api.send('GET', '/v0/parsing?status=DONE')).status).toBe(400);
		expect((await api.send('GET', `/v0/parsing/${UNKNOWN_ID}`)).body).toEqual({
			detail: 'No Parsing matches the given query.',
		});
	});
});

describe('v0 extracts (§v0-4.8–§v0-4.9)', () => {
	it('from a parsing: the result read with the schema (§v0-4.8, §v0-2.4)', async () => {
		const a = await api.send('POST', '/v0/extract', {
			json: { schema: INVOICE_SCHEMA, parsing: parsingId },
		});
		expect(a.status).toBe(201);
		expect(a.body).toMatchObject({ status: 'IN_QUEUE', result: null, parsing: { id: parsingId } });
		expect(a.body.schema).toEqual({
			id: INVOICE_SCHEMA,
			name: 'Invoice',
			description: 'Main fields of an invoice',
			completion_mode: 'CLASSIC',
		});
		const done = await api.poll(`/v0/extract/${a.body.id}`);
		expect(done.body.status).toBe('FINISHED');
		expect(done.body.result).toEqual({
			invoice_number: 'INV-1',
			invoice_date: '2024-03-01',
			vendor_name: 'ACME Corporation',
			customer_name: null,
			total_amount: 1234.5,
			currency: 'EUR',
			due_date: null,
		});
	});

	it('from a multipart document: a new parsing embedded; an array schema gives one object per page with a match (§v0-3, §v0-4.8)', async () => {
		const t0 = Date.now();
		const a = await api.send('POST', '/v0/extract', {
			form: form({ schema: LINES_SCHEMA, document: invoice.file }),
		});
		expect(a.status).toBe(201);
		expect(a.body.parsing.status).toBe('IN_QUEUE');
		const done = await api.poll(`/v0/extract/${a.body.id}`);
		expect(Date.now() - t0).toBeGreaterThanOrEqual(PROCESSING_MS - 5);
		expect(done.body.parsing.status).toBe('FINISHED');
		expect(done.body.result).toEqual([
			{ description: 'Consulting', amount: 1000 },
			{ description: 'Travel', amount: 234.5 },
		]);
	});

	it('from a multipart document with the Invoice schema: numbers parsed, missing labels null', async () => {
		const pdf = await makePdf([
			['Hello from the emulator test', 'Invoice number: INV-1', 'Total: 1,234.50 EUR'],
		]);
		const extract = await api.send('POST', '/v0/extract', {
			form: form({ document: { name: 'test.pdf', bytes: pdf }, schema: INVOICE_SCHEMA }),
		});
		expect(extract.status).toBe(201);
		const done = await api.poll(`/v0/extract/${extract.body.id}`);
		expect(done.body.result).toMatchObject({
			invoice_number: 'INV-1',
			total_amount: 1234.5,
			due_date: null,
		});
	});

	it("validates the source, the schema and the parsing's state (§v0-4.8, §v0-7)", async () => {
		const post = async (json: unknown): Promise<unknown> =>
			(await api.send('POST', '/v0/extract', { json })).body;
		expect(await post({ parsing: parsingId })).toEqual({ schema: ['This field is required.'] });
		expect(await post({ schema: INVOICE_SCHEMA, parsing: parsingId, document: docId })).toEqual({
			non_field_errors: ['Provide either document or parsing, not both.'],
		});
		expect(await post({ schema: INVOICE_SCHEMA })).toEqual({
			non_field_errors: ['One of document or parsing is required.'],
		});
		expect(await post({ schema: UNKNOWN_ID, parsing: parsingId })).toEqual({
			schema: ['Unknown schema id.'],
		});
		expect(
			await post({ schema: INVOICE_SCHEMA, document: [`${api.emu.filesUrl}/static/a.pdf`] }),
		).toEqual({ document: ['A list of URLs is not supported.'] });
		const fresh = await api.send('POST', '/v0/parsing', {
			json: { document: docId },
		});
		expect(await post({ schema: INVOICE_SCHEMA, parsing: fresh.body.id })).toEqual({
			parsing: ['Parsing is not finished.'],
		});
		expect((await api.send('GET', `/v0/extract/${UNKNOWN_ID}`)).body).toEqual({
			detail: 'No Extract matches the given query.',
		});
		expect((await api.send('GET', '/v0/extract')).status).toBe(405);
	});

	it('from a URL with emulator_outcome ERROR: the parsing and the extract both fail', async () => {
		const a = await api.send('POST', '/v0/extract', {
			json: {
				schema: INVOICE_SCHEMA,
				document: `${api.emu.filesUrl}/static/a.pdf`,
				metadata: { emulator_outcome: 'ERROR' },
			},
		});
		expect(a.status).toBe(201);
		const done = await api.poll(`/v0/extract/${a.body.id}`);
		expect(done.body).toMatchObject({ status: 'ERROR', parsing: { status: 'ERROR' } });
		expect(done.body.error).toMatch(/^Emulated processing failure: /);
	});
});
