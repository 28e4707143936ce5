/**
 * Self-check of the emulator against the references (v0-api.md, unversioned-api.md):
 *   npx tsx emulator/selfcheck.ts
 * Starts an emulator in-process, exercises both families end to end, prints one line per check and
 * exits non-zero when any check fails.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import JSZip from 'jszip';
import { PDFDocument } from 'pdf-lib';
import { startEmulator, type Emulator } from './index';
import { makePdf } from './sample-pdf';

const INVOICE_SCHEMA = '3f0c1a52-7d4e-4c1b-9a51-2b6f0e8d9c41';
const LINES_SCHEMA = '6b1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
const WORKFLOW_EU = '0d5c5f0e-8b7a-4c52-9a3e-6f1e2d3c4b5a';
const WORKFLOW_PLAIN = '1e6d6a1f-9c8b-4d63-8b4f-7a2f3e4d5c6b';
const PROCESSING_MS = 400;

interface Answer {
	status: number;
	headers: Headers;
	body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
	bytes: Buffer;
}

let emu: Emulator;

async function call(method: string, url: string, init: { headers?: Record<string, string>; json?: unknown; form?: FormData; text?: string; contentType?: string } = {}): Promise<Answer> {
	const headers: Record<string, string> = { ...(init.headers ?? {}) };
	let body: BodyInit | undefined;
	if (init.json !== undefined) {
		headers['content-type'] = 'application/json';
		body = JSON.stringify(init.json);
	} else if (init.form) body = init.form;
	else if (init.text !== undefined) {
		headers['content-type'] = init.contentType ?? 'text/plain';
		body = init.text;
	}
	const res = await fetch(url.startsWith('http') ? url : emu.url + url, { method, headers, body, redirect: 'manual' });
	const bytes = Buffer.from(await res.arrayBuffer());
	const isJson = (res.headers.get('content-type') ?? '').startsWith('application/json') && bytes.length > 0;
	return { status: res.status, headers: res.headers, body: isJson ? JSON.parse(bytes.toString('utf8')) : bytes.toString('utf8'), bytes };
}

const v0 = (): Record<string, string> => ({ 'x-api-key': emu.apiKey });
const tok = (): Record<string, string> => ({ authorization: emu.token });

function form(fields: Record<string, string | { name: string; bytes: Buffer } | Array<string | { name: string; bytes: Buffer }>>): FormData {
	const fd = new FormData();
	for (const [k, v] of Object.entries(fields)) {
		for (const one of Array.isArray(v) ? v : [v]) {
			if (typeof one === 'string') fd.append(k, one);
			else fd.append(k, new Blob([new Uint8Array(one.bytes)]), one.name);
		}
	}
	return fd;
}

async function poll(url: string, headers: Record<string, string>, done: (a: Answer) => boolean, timeoutMs = 15_000): Promise<Answer> {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const a = await call('GET', url, { headers });
		if (done(a)) return a;
		if (Date.now() > deadline) throw new Error(`timeout polling ${url}: last ${a.status} ${JSON.stringify(a.body).slice(0, 300)}`);
		await new Promise((r) => setTimeout(r, 50));
	}
}

const isFinalV0 = (a: Answer): boolean => ['FINISHED', 'PARTIAL_FINISHED', 'ERROR'].includes(a.body.status);
const isFinalUnv = (a: Answer): boolean => ['FINISHED', 'ERROR'].includes(a.body.status);

const results: Array<{ name: string; ok: boolean; error?: string }> = [];
async function check(name: string, fn: () => Promise<void>): Promise<void> {
	try {
		await fn();
		results.push({ name, ok: true });
		console.log(`ok   ${name}`);
	} catch (err) {
		results.push({ name, ok: false, error: String(err) });
		console.log(`FAIL ${name}\n     ${(err as Error).stack ?? err}`);
	}
}

async function main(): Promise<void> {
	emu = await startEmulator({ processingMs: PROCESSING_MS, quiet: false });
	const invoice = await makePdf([
		['ACME Corporation', 'Invoice number: INV-1', 'Invoice date: 2024-03-01', 'Vendor: ACME Corporation', 'Total: 1,234.50 EUR', 'Currency: EUR'],
		['Line description: Consulting', 'Line amount: 1,000.00', 'Description: Consulting'],
		['Nothing relevant here'],
		['Description: Travel', 'Amount: 234.50'],
	]);
	const small = await makePdf([['Hello emulator world', 'Invoice number: INV-2']]);
	const pdfFile = { name: 'invoice.pdf', bytes: invoice };

	// ---------------------------------------------------------------- common
	await check('auth: v0 401 bodies and unversioned 401 bodies (v0 §5/§7, unversioned §5/§7)', async () => {
		assert.deepEqual((await call('GET', '/v0/documents')).body, { detail: 'API key missing.' });
		assert.deepEqual((await call('GET', '/v0/documents', { headers: { 'x-api-key': 'nope' } })).body, { detail: 'Invalid API key.' });
		const missing = await call('GET', '/extract/');
		assert.equal(missing.status, 401);
		assert.deepEqual(missing.body, { detail: 'Authentication credentials were not provided.', code: 'not_authenticated', messages: [] });
		const bearer = await call('GET', '/extract/', { headers: { authorization: `Bearer ${emu.token}` } });
		assert.equal(bearer.body.messages[0].message, 'Token is invalid');
		const expired = await call('GET', '/extract/', { headers: { authorization: emu.expiredToken } });
		assert.deepEqual(expired.body.messages, [{ token_class: 'AccessToken', token_type: 'access', message: 'Token is expired' }]);
	});

	await check('routing: trailing slash 404s, unknown 404, 405 with Allow', async () => {
		assert.deepEqual((await call('GET', '/v0/documents/', { headers: v0() })).body, { detail: 'Not found.' });
		assert.equal((await call('GET', '/extract', { headers: tok() })).status, 404);
		assert.equal((await call('GET', '/schema', { headers: tok() })).status, 404);
		assert.equal((await call('GET', '/nope', { headers: tok() })).status, 404);
		const m = await call('PATCH', '/schema/' + INVOICE_SCHEMA + '/', { headers: tok() });
		assert.equal(m.status, 405);
		assert.deepEqual(m.body, { detail: 'Method "PATCH" not allowed.' });
		assert.match(m.headers.get('allow') ?? '', /PUT/);
	});

	// ---------------------------------------------------------------- v0 documents
	let docId = '';
	await check('v0 POST /v0/documents: 201 Document (§4.1, §2.1)', async () => {
		const a = await call('POST', '/v0/documents', { headers: v0(), form: form({ file: pdfFile, metadata: '{"customer":"Globex","n":1}' }) });
		assert.equal(a.status, 201, JSON.stringify(a.body));
		docId = a.body.id;
		assert.equal(a.body.filename, 'invoice.pdf');
		assert.equal(a.body.page_count, 4);
		assert.equal(a.body.file_url, `/v0/documents/${docId}/download`);
		assert.deepEqual(a.body.metadata, { customer: 'Globex', n: 1 });
		assert.match(a.body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
		assert.deepEqual(emu.getStoredFile(docId), invoice);
	});

	await check('v0 upload: trimming, filename override, validation errors', async () => {
		const t = await call('POST', '/v0/documents?pdf_page_start=2&pdf_page_end=3', { headers: v0(), form: form({ file: pdfFile, filename: 'trimmed.pdf' }) });
		assert.equal(t.status, 201);
		assert.equal(t.body.page_count, 2);
		assert.equal(t.body.filename, 'trimmed.pdf');
		assert.equal((await PDFDocument.load(emu.getStoredFile(t.body.id) as Buffer)).getPageCount(), 2);
		const tooFar = await call('POST', '/v0/documents?pdf_page_end=9', { headers: v0(), form: form({ file: pdfFile }) });
		assert.deepEqual(tooFar.body, { pdf_page_end: ['Ensure this value is less than or equal to 4.'] });
		const bad = await call('POST', '/v0/documents?pdf_page_start=0&pdf_page_end=x', { headers: v0(), form: form({ file: pdfFile }) });
		assert.equal(bad.status, 400);
		assert.ok(bad.body.pdf_page_start && bad.body.pdf_page_end);
		const reversed = await call('POST', '/v0/documents?pdf_page_start=3&pdf_page_end=2', { headers: v0(), form: form({ file: pdfFile }) });
		assert.equal(reversed.status, 400);
		assert.deepEqual((await call('POST', '/v0/documents', { headers: v0(), form: form({ filename: 'x' }) })).body, { file: ['No file was submitted.'] });
		assert.deepEqual((await call('POST', '/v0/documents', { headers: v0(), form: form({ file: { name: 'e.pdf', bytes: Buffer.alloc(0) } }) })).body, {
			file: ['The submitted file is empty.'],
		});
		assert.deepEqual((await call('POST', '/v0/documents', { headers: v0(), form: form({ file: pdfFile, metadata: '[1]' }) })).body, { metadata: ['Must be a JSON object.'] });
	});

	await check('v0 GET /v0/documents: pagination, search, created_at filters (§4.2, §2.5)', async () => {
		const page1 = await call('GET', '/v0/documents?size=1', { headers: v0() });
		assert.equal(page1.status, 200);
		assert.equal(page1.body.count, 2);
		assert.equal(page1.body.results[0].filename, 'trimmed.pdf', 'newest first');
		assert.equal(page1.body.next, `${emu.url}/v0/documents?size=1&page=2`);
		assert.equal(page1.body.previous, null);
		const page2 = await call('GET', page1.body.next, { headers: v0() });
		assert.equal(page2.body.results[0].id, docId);
		assert.equal(page2.body.previous, `${emu.url}/v0/documents?size=1`);
		assert.deepEqual((await call('GET', '/v0/documents?page=3&size=1', { headers: v0() })).body, { detail: 'Invalid page.' });
		assert.equal((await call('GET', '/v0/documents?page=abc', { headers: v0() })).status, 400);
		assert.equal((await call('GET', '/v0/documents?search=globex', { headers: v0() })).body.count, 1);
		assert.equal((await call('GET', '/v0/documents?search=TRIMMED', { headers: v0() })).body.count, 1);
		assert.equal((await call('GET', '/v0/documents?created_at_after=2999-01-01T00:00:00Z', { headers: v0() })).body.count, 0);
		assert.equal((await call('GET', '/v0/documents?created_at_before=2999-01-01', { headers: v0() })).body.count, 2);
		assert.deepEqual((await call('GET', '/v0/documents?created_at_after=yesterday', { headers: v0() })).body, { created_at_after: ['Enter a valid date/time.'] });
	});

	await check('v0 GET /v0/documents/{id}: 200 / 404 (§4.3)', async () => {
		assert.equal((await call('GET', `/v0/documents/${docId}`, { headers: v0() })).body.id, docId);
		assert.deepEqual((await call('GET', '/v0/documents/not-a-uuid', { headers: v0() })).body, { detail: 'No Document matches the given query.' });
	});

	await check('v0 download: 302 to the files origin, bytes equal, no API key there (§4.4)', async () => {
		const r = await call('GET', `/v0/documents/${docId}/download`, { headers: v0() });
		assert.equal(r.status, 302);
		assert.equal(r.bytes.length, 0);
		const location = r.headers.get('location') as string;
		assert.ok(location.startsWith(`${emu.filesUrl}/files/${docId}/invoice.pdf?signature=`), location);
		emu.clearLog();
		const f = await call('GET', location);
		assert.equal(f.status, 200);
		assert.equal(f.headers.get('content-type'), 'application/pdf');
		assert.equal(f.headers.get('content-disposition'), 'attachment; filename="invoice.pdf"');
		assert.deepEqual(f.bytes, invoice);
		const logged = emu.requests.find((q) => q.origin === 'files');
		assert.ok(logged && logged.status === 200 && !('x-api-key' in logged.headers));
		assert.equal((await call('GET', `${emu.filesUrl}/files/${docId}/invoice.pdf?signature=forged`)).status, 403);
	});

	// ---------------------------------------------------------------- v0 parsings
	let parsingId = '';
	await check('v0 POST /v0/parsing with a document id: IN_QUEUE → IN_PROGRESS → FINISHED with text (§4.5, §2.3, §3)', async () => {
		const a = await call('POST', '/v0/parsing', { headers: v0(), json: { document: docId } });
		assert.equal(a.status, 201, JSON.stringify(a.body));
		assert.equal(a.body.status, 'IN_QUEUE');
		assert.equal(a.body.markdown_content, null);
		assert.equal(a.body.pages_total, 0);
		assert.equal(a.body.model, 'PIGALLE');
		parsingId = a.body.id;
		const mid = await poll(`/v0/parsing/${parsingId}`, v0(), (x) => x.body.status !== 'IN_QUEUE');
		assert.ok(['IN_PROGRESS', 'FINISHED'].includes(mid.body.status));
		const done = await poll(`/v0/parsing/${parsingId}`, v0(), isFinalV0);
		assert.equal(done.body.status, 'FINISHED');
		assert.equal(done.body.pages_total, 4);
		assert.equal(done.body.pages_success, 4);
		assert.match(done.body.markdown_content, /^# invoice\.pdf\n\n## Page 1\n\nACME Corporation\nInvoice number: INV-1/);
		assert.equal(done.body.ocr_content.pages.length, 4);
		assert.equal(done.body.ocr_content.pages[0].width, 595);
		assert.deepEqual(done.body.pictures, []);
		assert.ok(Date.parse(done.body.updated_at) - Date.parse(done.body.created_at) >= PROCESSING_MS - 1);
	});

	await check('v0 parsing: URL list → array, static files, loopback only (§4.5)', async () => {
		const a = await call('POST', '/v0/parsing', { headers: v0(), json: { document: [`${emu.filesUrl}/static/a.pdf`, `${emu.filesUrl}/static/b.pdf`] } });
		assert.equal(a.status, 201, JSON.stringify(a.body));
		assert.ok(Array.isArray(a.body) && a.body.length === 2);
		assert.equal(a.body[1].document.filename, 'b.pdf');
		const done = await poll(`/v0/parsing/${a.body[1].id}`, v0(), isFinalV0);
		assert.match(done.body.markdown_content, /Static document B/);
		const one = await call('POST', '/v0/parsing', { headers: v0(), form: form({ document: `${emu.filesUrl}/static/c.pdf` }) });
		assert.equal(one.body.document.filename, 'c.pdf');
		const multi = await call('POST', '/v0/parsing', { headers: v0(), form: form({ document: [`${emu.filesUrl}/static/a.pdf`, `${emu.filesUrl}/static/c.pdf`] }) });
		assert.ok(Array.isArray(multi.body) && multi.body.length === 2);
		assert.deepEqual((await call('POST', '/v0/parsing', { headers: v0(), json: { document: 'https://example.com/x.pdf' } })).body, { document: ['URL could not be fetched.'] });
		assert.deepEqual((await call('POST', '/v0/parsing', { headers: v0(), json: { document: `${emu.filesUrl}/static/zzz.pdf` } })).body, { document: ['URL could not be fetched.'] });
		assert.equal((await call('POST', '/v0/parsing', { headers: v0(), json: { document: [] } })).status, 400);
	});

	await check('v0 parsing: field errors, malformed JSON (§4.5, §7)', async () => {
		assert.deepEqual((await call('POST', '/v0/parsing', { headers: v0(), json: {} })).body, { document: ['This field is required.'] });
		assert.deepEqual((await call('POST', '/v0/parsing', { headers: v0(), json: { document: '00000000-0000-4000-8000-000000000000' } })).body, { document: ['Unknown document id.'] });
		const bad = await call('POST', '/v0/parsing', { headers: v0(), json: { document: docId, model: 'BIG', picture_description_enabled: 'maybe' } });
		assert.deepEqual(bad.body, { model: ['"BIG" is not a valid choice.'], picture_description_enabled: ['Must be a valid boolean.'] });
		const malformed = await call('POST', '/v0/parsing', { headers: v0(), text: '{"document": ', contentType: 'application/json' });
		assert.equal(malformed.status, 400);
		assert.match(malformed.body.detail, /^JSON parse error - /);
	});

	await check('v0 parsing: multipart file, pictures, PARTIAL_FINISHED, ERROR outcomes (§2.2, §3)', async () => {
		const a = await call('POST', '/v0/parsing', {
			headers: v0(),
			form: form({ document: { name: 'two.pdf', bytes: invoice }, picture_description_enabled: 'true', model: 'PIGALLE_LITE', metadata: '{"emulator_outcome":"PARTIAL_FINISHED"}' }),
		});
		assert.equal(a.status, 201, JSON.stringify(a.body));
		assert.equal(a.body.document.filename, 'two.pdf');
		const done = await poll(`/v0/parsing/${a.body.id}`, v0(), isFinalV0);
		assert.equal(done.body.status, 'PARTIAL_FINISHED');
		assert.deepEqual([done.body.pages_total, done.body.pages_success, done.body.pages_failed], [4, 3, 1]);
		assert.equal(done.body.error, '1 page(s) could not be processed');
		assert.equal(done.body.pictures.length, 3);
		assert.equal(done.body.pictures[0].description, 'Emulated picture of page 1');
		const png = await call('GET', done.body.pictures[0].picture, { headers: v0() });
		assert.equal(png.status, 200);
		assert.equal(png.headers.get('content-type'), 'image/png');
		assert.equal((await call('GET', done.body.pictures[0].picture)).status, 401);

		const err = await call('POST', '/v0/parsing', { headers: v0(), json: { document: docId, metadata: { emulator_outcome: 'ERROR', emulator_error: 'boom' } } });
		const errDone = await poll(`/v0/parsing/${err.body.id}`, v0(), isFinalV0);
		assert.equal(errDone.body.status, 'ERROR');
		assert.equal(errDone.body.error, 'Emulated processing failure: boom');

		const txt = await call('POST', '/v0/parsing', { headers: v0(), form: form({ document: { name: 'notes.txt', bytes: Buffer.from('plain text') } }) });
		assert.equal(txt.status, 201);
		const txtDone = await poll(`/v0/parsing/${txt.body.id}`, v0(), isFinalV0);
		assert.equal(txtDone.body.error, 'Unsupported file type');
	});

	await check('v0 GET /v0/parsing: status filter and 404 (§4.6, §4.7)', async () => {
		const all = await call('GET', '/v0/parsing?status=ERROR', { headers: v0() });
		assert.ok(all.body.count >= 2 && all.body.results.every((p: { status: string }) => p.status === 'ERROR'));
		assert.equal((await call('GET', '/v0/parsing?status=DONE', { headers: v0() })).status, 400);
		assert.deepEqual((await call('GET', '/v0/parsing/00000000-0000-4000-8000-000000000000', { headers: v0() })).body, { detail: 'No Parsing matches the given query.' });
	});

	// ---------------------------------------------------------------- v0 extracts
	await check('v0 POST /v0/extract from a parsing: result from the schema (§4.8, §2.4)', async () => {
		const a = await call('POST', '/v0/extract', { headers: v0(), json: { schema: INVOICE_SCHEMA, parsing: parsingId } });
		assert.equal(a.status, 201, JSON.stringify(a.body));
		assert.equal(a.body.status, 'IN_QUEUE');
		assert.equal(a.body.result, null);
		assert.deepEqual(a.body.schema, { id: INVOICE_SCHEMA, name: 'Invoice', description: 'Main fields of an invoice', completion_mode: 'CLASSIC' });
		assert.equal(a.body.parsing.id, parsingId);
		const done = await poll(`/v0/extract/${a.body.id}`, v0(), isFinalV0);
		assert.equal(done.body.status, 'FINISHED');
		assert.deepEqual(done.body.result, {
			invoice_number: 'INV-1',
			invoice_date: '2024-03-01',
			vendor_name: 'ACME Corporation',
			customer_name: null,
			total_amount: 1234.5,
			currency: 'EUR',
			due_date: null,
		});
	});

	await check('v0 extract from a document (file): new parsing embedded, array schema (§3, §4.8)', async () => {
		const t0 = Date.now();
		const a = await call('POST', '/v0/extract', { headers: v0(), form: form({ schema: LINES_SCHEMA, document: pdfFile }) });
		assert.equal(a.status, 201, JSON.stringify(a.body));
		assert.equal(a.body.parsing.status, 'IN_QUEUE');
		const done = await poll(`/v0/extract/${a.body.id}`, v0(), isFinalV0);
		assert.ok(Date.now() - t0 >= PROCESSING_MS - 5);
		assert.equal(done.body.parsing.status, 'FINISHED');
		assert.deepEqual(done.body.result, [
			{ description: 'Consulting', amount: 1000 },
			{ description: 'Travel', amount: 234.5 },
		]);
	});

	await check('v0 extract: validation (§4.8, §7)', async () => {
		assert.deepEqual((await call('POST', '/v0/extract', { headers: v0(), json: { parsing: parsingId } })).body, { schema: ['This field is required.'] });
		assert.deepEqual((await call('POST', '/v0/extract', { headers: v0(), json: { schema: INVOICE_SCHEMA, parsing: parsingId, document: docId } })).body, {
			non_field_errors: ['Provide either document or parsing, not both.'],
		});
		assert.deepEqual((await call('POST', '/v0/extract', { headers: v0(), json: { schema: INVOICE_SCHEMA } })).body, { non_field_errors: ['One of document or parsing is required.'] });
		assert.deepEqual((await call('POST', '/v0/extract', { headers: v0(), json: { schema: '00000000-0000-4000-8000-000000000000', parsing: parsingId } })).body, {
			schema: ['Unknown schema id.'],
		});
		assert.deepEqual((await call('POST', '/v0/extract', { headers: v0(), json: { schema: INVOICE_SCHEMA, document: [`${emu.filesUrl}/static/a.pdf`] } })).body, {
			document: ['A list of URLs is not supported.'],
		});
		const fresh = await call('POST', '/v0/parsing', { headers: v0(), json: { document: docId } });
		assert.deepEqual((await call('POST', '/v0/extract', { headers: v0(), json: { schema: INVOICE_SCHEMA, parsing: fresh.body.id } })).body, { parsing: ['Parsing is not finished.'] });
		assert.deepEqual((await call('GET', '/v0/extract/00000000-0000-4000-8000-000000000000', { headers: v0() })).body, { detail: 'No Extract matches the given query.' });
		assert.equal((await call('GET', '/v0/extract', { headers: v0() })).status, 405);
	});

	await check('v0 extract from a URL with emulator_outcome ERROR: parsing and extract fail', async () => {
		const a = await call('POST', '/v0/extract', { headers: v0(), json: { schema: INVOICE_SCHEMA, document: `${emu.filesUrl}/static/a.pdf`, metadata: { emulator_outcome: 'ERROR' } } });
		assert.equal(a.status, 201);
		const done = await poll(`/v0/extract/${a.body.id}`, v0(), isFinalV0);
		assert.equal(done.body.status, 'ERROR');
		assert.equal(done.body.parsing.status, 'ERROR');
		assert.match(done.body.error, /^Emulated processing failure: /);
	});

	// ---------------------------------------------------------------- unversioned extractions
	let extractionId = '';
	await check('unversioned POST /extract/: 201, credits, 202 → 200, steps, data (§4.2, §4.3, §2.1)', async () => {
		emu.setCredits(100);
		const a = await call('POST', '/extract/', { headers: tok(), form: form({ document: pdfFile, server: 'EU-1', schema: INVOICE_SCHEMA, metadata: '{"batch":"b-1"}' }) });
		assert.equal(a.status, 201, JSON.stringify(a.body));
		extractionId = a.body.id;
		assert.equal(emu.getCredits(), 96);
		assert.equal(a.body.status, 'CREATED');
		assert.equal(a.body.credit_used, null);
		assert.equal(a.body.content, null);
		assert.equal(a.body.document_url, `/extract/${extractionId}/document/`);
		assert.equal(a.body.content_images.length, 4);
		assert.deepEqual(a.body.content_images[0], { name: 'page-1.png', url: `/extract/${extractionId}/images/page-1.png/` });
		assert.equal((await call('GET', `/extract/${extractionId}/`, { headers: tok() })).status, 202);
		const steps = new Set<string>();
		const done = await poll(`/extract/${extractionId}/`, tok(), (x) => {
			steps.add(x.body.extraction_step);
			return x.status === 200;
		});
		assert.ok(steps.has('OCR') && steps.has('LOCATION'), [...steps].join());
		assert.equal(done.body.status, 'FINISHED');
		assert.equal(done.body.credit_used, 4);
		assert.equal(done.body.extracted_data.invoice_number, 'INV-1');
		assert.match(done.body.content, /Invoice number: INV-1/);
		assert.ok(done.body.extraction_time >= PROCESSING_MS / 1000 - 0.01);
		const image = await call('GET', done.body.content_images[1].url, { headers: tok() });
		assert.equal(image.headers.get('content-type'), 'image/png');
		const doc = await call('GET', done.body.document_url, { headers: tok() });
		assert.deepEqual(doc.bytes, invoice);
	});

	await check('unversioned downloads: csv, json, images (§4.3)', async () => {
		const csv = await call('GET', `/extract/${extractionId}/?download=csv`, { headers: tok() });
		assert.equal(csv.status, 200);
		assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
		assert.equal(csv.headers.get('content-disposition'), 'attachment; filename="invoice.csv"');
		assert.equal(csv.body, 'invoice_number,invoice_date,vendor_name,customer_name,total_amount,currency,due_date\r\nINV-1,2024-03-01,ACME Corporation,,1234.5,EUR,\r\n');
		const js = await call('GET', `/extract/${extractionId}/?download=json`, { headers: tok() });
		assert.equal(js.headers.get('content-disposition'), 'attachment; filename="invoice.json"');
		assert.deepEqual(js.body, (await call('GET', `/extract/${extractionId}/`, { headers: tok() })).body);
		const zip = await call('GET', `/extract/${extractionId}/?download=images`, { headers: tok() });
		assert.equal(zip.headers.get('content-type'), 'application/zip');
		assert.equal(zip.headers.get('content-disposition'), 'attachment; filename="invoice-images.zip"');
		assert.deepEqual(Object.keys((await JSZip.loadAsync(zip.bytes)).files).sort(), ['page-1.png', 'page-2.png', 'page-3.png', 'page-4.png']);
		assert.deepEqual((await call('GET', `/extract/${extractionId}/?download=xml`, { headers: tok() })).body, { download: ['"xml" is not a valid choice.'] });
		const plain = await call('POST', '/extract/', { headers: tok(), form: form({ document: { name: 'p.pdf', bytes: small }, server: 'FR-1' }) });
		assert.deepEqual((await call('GET', `/extract/${plain.body.id}/?download=csv`, { headers: tok() })).body, {
			download: ['This extraction has no schema: there is nothing to download.'],
		});
		const slow = await call('POST', '/extract/', { headers: tok(), form: form({ document: { name: 'p.pdf', bytes: small }, server: 'FR-1', schema: INVOICE_SCHEMA }) });
		assert.deepEqual((await call('GET', `/extract/${slow.body.id}/?download=json`, { headers: tok() })).body, { download: ['Extraction is not finished.'] });
	});

	await check('unversioned POST /extract/: validation and 403 credits (§4.2, §8)', async () => {
		const txt = await call('POST', '/extract/', { headers: tok(), form: form({ document: { name: 'a.txt', bytes: Buffer.from('hi') }, server: 'EU-1' }) });
		assert.deepEqual(txt.body, { document: ['Unsupported file type. Accepted: .pdf, .png, .jpg, .jpeg'] });
		const disguised = await call('POST', '/extract/', { headers: tok(), form: form({ document: { name: 'a.pdf', bytes: Buffer.from('not a pdf') }, server: 'EU-1' }) });
		assert.equal(disguised.status, 400);
		assert.deepEqual((await call('POST', '/extract/', { headers: tok(), form: form({ document: pdfFile, server: 'US-1' }) })).body, { server: ['"US-1" is not a valid choice.'] });
		assert.deepEqual((await call('POST', '/extract/', { headers: tok(), form: form({ document: pdfFile }) })).body, { server: ['This field is required.'] });
		emu.setCredits(3);
		const poor = await call('POST', '/extract/', { headers: tok(), form: form({ document: pdfFile, server: 'EU-1' }) });
		assert.equal(poor.status, 403);
		assert.deepEqual(poor.body, { credits: ['Insufficient credits: 4 needed, 3 available.'] });
		const trimmed = await call('POST', '/extract/?pdf_page_start=1&pdf_page_end=2', { headers: tok(), form: form({ document: pdfFile, server: 'EU-1' }) });
		assert.equal(trimmed.status, 201);
		assert.equal(trimmed.body.content_images.length, 2);
		assert.equal(emu.getCredits(), 1);
		emu.setCredits(10_000);
		const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg==', 'base64');
		const img = await call('POST', '/extract/', { headers: tok(), form: form({ document: { name: 'scan.PNG', bytes: png }, server: 'FR-2' }) });
		assert.equal(img.status, 201);
		const imgDone = await poll(`/extract/${img.body.id}/`, tok(), isFinalUnv);
		assert.equal(imgDone.body.content, '');
	});

	await check('unversioned workflow upload: 2 files → array sharing a session, 1 → object (§4.10)', async () => {
		const two = await call('POST', `/workflow/${WORKFLOW_EU}/extract/`, {
			headers: tok(),
			form: form({ 'extracts[0]document': pdfFile, 'extracts[1]document': { name: 'small.pdf', bytes: small } }),
		});
		assert.equal(two.status, 201, JSON.stringify(two.body));
		assert.ok(Array.isArray(two.body) && two.body.length === 2);
		assert.equal(two.body[0].document_name, 'invoice.pdf');
		assert.equal(two.body[0].workflow, WORKFLOW_EU);
		assert.equal(two.body[0].schema, INVOICE_SCHEMA);
		assert.equal(two.body[0].server, 'EU-1');
		assert.equal(two.body[0].workflow_session_id, two.body[1].workflow_session_id);
		const one = await call('POST', `/workflow/${WORKFLOW_PLAIN}/extract/`, { headers: tok(), form: form({ 'extracts[0]document': pdfFile }) });
		assert.equal(one.body.schema, null);
		assert.notEqual(one.body.workflow_session_id, two.body[0].workflow_session_id);
		assert.deepEqual((await call('POST', `/workflow/${WORKFLOW_EU}/extract/`, { headers: tok(), form: form({ document: pdfFile }) })).body, { extracts: ['This field is required.'] });
		assert.deepEqual((await call('POST', '/workflow/00000000-0000-4000-8000-000000000000/extract/', { headers: tok(), form: form({ 'extracts[0]document': pdfFile }) })).body, {
			detail: 'No Workflow matches the given query.',
		});
		const list = await call('GET', `/extract/?workflow_id=${WORKFLOW_EU}&workflow_session_id=${two.body[0].workflow_session_id}`, { headers: tok() });
		assert.equal(list.body.count, 2);
		assert.equal(list.body.results[1].schema.name, 'Invoice');
	});

	await check('unversioned GET /extract/ filters, DELETE (§4.1, §4.4)', async () => {
		assert.equal((await call('GET', '/extract/?meta_key=batch', { headers: tok() })).body.count, 1);
		assert.equal((await call('GET', '/extract/?meta_value=b-1', { headers: tok() })).body.count, 1);
		assert.equal((await call('GET', '/extract/?meta_key=batch&meta_value=b-2', { headers: tok() })).body.count, 0);
		assert.ok((await call('GET', '/extract/?search=invoice', { headers: tok() })).body.count >= 3);
		const page = await call('GET', '/extract/?size=2', { headers: tok() });
		assert.ok(page.body.next.includes('page=2'));
		const del = await call('DELETE', `/extract/${extractionId}/`, { headers: tok() });
		assert.equal(del.status, 204);
		assert.equal(del.bytes.length, 0);
		assert.equal((await call('GET', `/extract/${extractionId}/`, { headers: tok() })).status, 404);
		assert.equal(emu.getStoredFile(extractionId), undefined);
	});

	await check('unversioned schemas: CRUD, validation; usable by /v0/extract (§4.5–§4.9)', async () => {
		const created = await call('POST', '/schema/', { headers: tok(), json: { name: 'Receipt', description: 'Shop receipts', schema: { type: 'object', properties: { invoice_number: { type: 'string' } } } } });
		assert.equal(created.status, 201, JSON.stringify(created.body));
		assert.equal(created.body.additional_informations, null);
		const id = created.body.id;
		assert.deepEqual((await call('POST', '/schema/', { headers: tok(), json: { name: 'x', description: 'y' } })).body, { schema: ['This field is required.'] });
		assert.deepEqual((await call('POST', '/schema/', { headers: tok(), json: { name: '', description: 'y', schema: [] } })).body, {
			name: ['This field may not be blank.'],
			schema: ['Must be a JSON object or null.'],
		});
		const put = await call('PUT', `/schema/${id}/`, { headers: tok(), text: new URLSearchParams({ name: 'Receipt 2', description: 'd', schema: 'null' }).toString(), contentType: 'application/x-www-form-urlencoded' });
		assert.equal(put.status, 200, JSON.stringify(put.body));
		assert.equal(put.body.schema, null);
		const putMultipart = await call('PUT', `/schema/${id}/`, { headers: tok(), form: form({ name: 'Receipt 3', description: 'd', schema: '{"type":"object","properties":{"invoice_number":{"type":"string"}}}' }) });
		assert.equal(putMultipart.body.name, 'Receipt 3');
		assert.equal((await call('GET', `/schema/${id}/`, { headers: tok() })).body.name, 'Receipt 3');
		const ex = await call('POST', '/v0/extract', { headers: v0(), json: { schema: id, parsing: parsingId } });
		assert.equal(ex.status, 201);
		assert.deepEqual((await poll(`/v0/extract/${ex.body.id}`, v0(), isFinalV0)).body.result, { invoice_number: 'INV-1' });
		assert.equal((await call('DELETE', `/schema/${id}/`, { headers: tok() })).status, 204);
		assert.deepEqual((await call('GET', `/schema/${id}/`, { headers: tok() })).body, { detail: 'No Schema matches the given query.' });
		assert.equal((await call('GET', '/schema/', { headers: tok() })).body.count, 2);
	});

	// ---------------------------------------------------------------- faults, log, processing time
	await check('faults: 429 with Retry-After then success, 503, drop, delay; log entries', async () => {
		emu.injectFaults({ method: 'GET', path: '/v0/documents' }, [{ status: 429, retryAfter: '2' }, { status: 503 }]);
		const first = await call('GET', '/v0/documents', { headers: v0() });
		assert.equal(first.status, 429);
		assert.equal(first.headers.get('retry-after'), '2');
		assert.equal(typeof first.body.detail, 'string');
		assert.equal((await call('GET', '/v0/documents', { headers: v0() })).status, 503);
		assert.equal((await call('GET', '/v0/documents', { headers: v0() })).status, 200);
		emu.injectFaults({ path: /^\/extract\// }, [{ drop: true }]);
		emu.clearLog();
		await assert.rejects(call('GET', '/extract/', { headers: tok() }));
		await new Promise((r) => setTimeout(r, 50));
		assert.equal(emu.requests[0].status, 0);
		emu.injectFaults({ path: '/schema/' }, [{ delayMs: 300 }]);
		const t0 = Date.now();
		assert.equal((await call('GET', '/schema/', { headers: tok() })).status, 200);
		assert.ok(Date.now() - t0 >= 290);
		emu.injectFaults({ path: '/schema/' }, [{ status: 500 }]);
		emu.clearFaults();
		assert.equal((await call('GET', '/schema/', { headers: tok() })).status, 200);
		emu.clearLog();
		await call('POST', '/v0/documents', { headers: { 'x-api-key': 'wrong' }, form: form({ file: pdfFile }) });
		const entry = emu.requests[0];
		assert.equal(entry.status, 401);
		assert.equal(entry.headers['x-api-key'], 'wrong');
		assert.ok(entry.bodyBytes > invoice.length, String(entry.bodyBytes));
		assert.match(entry.contentType ?? '', /^multipart\/form-data/);
	});

	await check('processing time: setProcessingMs and emulator_processing_ms', async () => {
		emu.setProcessingMs(0);
		const a = await call('POST', '/v0/parsing', { headers: v0(), json: { document: docId } });
		await poll(`/v0/parsing/${a.body.id}`, v0(), isFinalV0, 5000);
		const slow = await call('POST', '/v0/parsing', { headers: v0(), json: { document: docId, metadata: { emulator_processing_ms: 60_000 } } });
		await new Promise((r) => setTimeout(r, 300));
		assert.equal((await call('GET', `/v0/parsing/${slow.body.id}`, { headers: v0() })).body.status, 'IN_QUEUE');
		emu.setProcessingMs(PROCESSING_MS);
	});

	await check('static files on the files origin', async () => {
		const s = await call('GET', `${emu.filesUrl}/static/a.pdf`);
		assert.deepEqual(s.bytes, readFileSync(path.join(__dirname, 'static', 'a.pdf')));
		assert.equal((await call('GET', `${emu.filesUrl}/static/nope.pdf`)).status, 404);
	});

	await check('large upload (40 MB) is stored on disk and counted', async () => {
		const big = Buffer.concat([invoice, Buffer.alloc(40 * 1024 * 1024, 0x20)]);
		const a = await call('POST', '/v0/documents', { headers: v0(), form: form({ file: { name: 'big.pdf', bytes: big } }) });
		assert.equal(a.status, 201, JSON.stringify(a.body));
		assert.equal(a.body.page_count, 4);
		assert.equal(emu.getStoredFile(a.body.id)?.length, big.length);
		const p = await call('POST', '/v0/parsing', { headers: v0(), json: { document: a.body.id } });
		const done = await poll(`/v0/parsing/${p.body.id}`, v0(), isFinalV0);
		assert.equal(done.body.status, 'FINISHED');
		assert.equal(done.body.pages_total, 4);
	});

	await emu.close();
	const failed = results.filter((r) => !r.ok);
	console.log(`\n${results.length - failed.length}/${results.length} checks passed`);
	process.exit(failed.length === 0 ? 0 : 1);
}

main().catch(async (err: unknown) => {
	console.error(err);
	await emu?.close();
	process.exit(1);
});
