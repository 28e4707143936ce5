/**
 * The emulator loaded in-process through ts-jest (CommonJS, jest VM): proves that the pdfjs text
 * extraction (an ES module, run in a worker thread) works from jest, and spot-checks both families
 * against /work/shared/api/v0-api.md and unversioned-api.md. The full check is emulator/selfcheck.ts.
 */
import JSZip from 'jszip';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { startEmulator, type Emulator } from '../../emulator';

const INVOICE_SCHEMA = '3f0c1a52-7d4e-4c1b-9a51-2b6f0e8d9c41';
const WORKFLOW_EU = '0d5c5f0e-8b7a-4c52-9a3e-6f1e2d3c4b5a';

async function makePdf(pages: string[][]): Promise<Buffer> {
	const doc = await PDFDocument.create();
	const font = await doc.embedFont(StandardFonts.Helvetica);
	for (const lines of pages) {
		const page = doc.addPage([595, 842]);
		lines.forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 24, size: 14, font }));
	}
	return Buffer.from(await doc.save());
}

let emu: Emulator;
let pdf: Buffer;

const v0 = (): Record<string, string> => ({ 'x-api-key': emu.apiKey });
const tok = (): Record<string, string> => ({ authorization: emu.token });

async function request(method: string, path: string, headers: Record<string, string>, body?: FormData | object) {
	const init: RequestInit = { method, headers: { ...headers }, redirect: 'manual' };
	if (body instanceof FormData) init.body = body;
	else if (body) {
		init.body = JSON.stringify(body);
		(init.headers as Record<string, string>)['content-type'] = 'application/json';
	}
	const res = await fetch(path.startsWith('http') ? path : emu.url + path, init);
	const bytes = Buffer.from(await res.arrayBuffer());
	const isJson = (res.headers.get('content-type') ?? '').startsWith('application/json');
	return { status: res.status, headers: res.headers, bytes, json: isJson ? JSON.parse(bytes.toString('utf8')) : undefined };
}

function upload(field: string, bytes: Buffer, name: string, extra: Record<string, string> = {}): FormData {
	const fd = new FormData();
	fd.append(field, new Blob([new Uint8Array(bytes)]), name);
	for (const [k, v] of Object.entries(extra)) fd.append(k, v);
	return fd;
}

async function waitFinal(path: string, headers: Record<string, string>) {
	for (let i = 0; i < 200; i++) {
		const r = await request('GET', path, headers);
		if (['FINISHED', 'PARTIAL_FINISHED', 'ERROR'].includes(r.json.status)) return r;
		await new Promise((resolve) => setTimeout(resolve, 50));
	}
	throw new Error(`${path} did not finish`);
}

beforeAll(async () => {
	emu = await startEmulator({ processingMs: 300, quiet: true });
	pdf = await makePdf([['Hello from the emulator test', 'Invoice number: INV-1', 'Total: 1,234.50 EUR']]);
});

afterAll(async () => {
	await emu.close();
});

describe('emulator (in-process under jest)', () => {
	it('uploads a PDF and finishes a parsing with its text (pdfjs worker)', async () => {
		const doc = await request('POST', '/v0/documents', v0(), upload('file', pdf, 'test.pdf'));
		expect(doc.status).toBe(201);
		expect(doc.json.page_count).toBe(1);
		const parsing = await request('POST', '/v0/parsing', v0(), { document: doc.json.id });
		expect(parsing.status).toBe(201);
		expect(parsing.json.status).toBe('IN_QUEUE');
		const done = await waitFinal(`/v0/parsing/${parsing.json.id}`, v0());
		expect(done.json.status).toBe('FINISHED');
		expect(done.json.markdown_content).toContain('Hello from the emulator test');
		expect(done.json.ocr_content.pages[0].text).toContain('Invoice number: INV-1');
	});

	it('extracts schema values from the PDF text', async () => {
		const extract = await request('POST', '/v0/extract', v0(), upload('document', pdf, 'test.pdf', { schema: INVOICE_SCHEMA }));
		expect(extract.status).toBe(201);
		const done = await waitFinal(`/v0/extract/${extract.json.id}`, v0());
		expect(done.json.result).toMatchObject({ invoice_number: 'INV-1', total_amount: 1234.5, due_date: null });
	});

	it('paginates lists with absolute next links', async () => {
		await request('POST', '/v0/documents', v0(), upload('file', pdf, 'second.pdf'));
		const page = await request('GET', '/v0/documents?size=1', v0());
		expect(page.json.count).toBeGreaterThanOrEqual(2);
		expect(page.json.next).toBe(`${emu.url}/v0/documents?size=1&page=2`);
		expect(page.json.previous).toBeNull();
	});

	it('answers 401 in each family’s shape, and 404 for the wrong trailing slash', async () => {
		expect((await request('GET', '/v0/documents', { 'x-api-key': 'wrong' })).json).toEqual({ detail: 'Invalid API key.' });
		expect((await request('GET', '/extract/', { authorization: emu.expiredToken })).json).toEqual({
			detail: 'Given token not valid for any token type',
			code: 'token_not_valid',
			messages: [{ token_class: 'AccessToken', token_type: 'access', message: 'Token is expired' }],
		});
		expect((await request('GET', '/v0/documents/', v0())).status).toBe(404);
		expect((await request('GET', '/extract', tok())).json).toEqual({ detail: 'Not found.' });
	});

	it('redirects downloads to the files origin, which never sees the API key', async () => {
		const doc = await request('POST', '/v0/documents', v0(), upload('file', pdf, 'dl.pdf'));
		const redirect = await request('GET', `/v0/documents/${doc.json.id}/download`, v0());
		expect(redirect.status).toBe(302);
		const location = redirect.headers.get('location') as string;
		expect(location.startsWith(emu.filesUrl)).toBe(true);
		const file = await request('GET', location, {});
		expect(file.bytes.equals(pdf)).toBe(true);
		const filesLog = emu.requests.filter((r) => r.origin === 'files');
		expect(filesLog.length).toBeGreaterThan(0);
		expect(filesLog.every((r) => !('x-api-key' in r.headers))).toBe(true);
	});

	it('creates one extraction per workflow file and serves csv / json / zip downloads', async () => {
		const fd = new FormData();
		fd.append('extracts[0]document', new Blob([new Uint8Array(pdf)]), 'one.pdf');
		fd.append('extracts[1]document', new Blob([new Uint8Array(pdf)]), 'two.pdf');
		const created = await request('POST', `/workflow/${WORKFLOW_EU}/extract/`, tok(), fd);
		expect(created.status).toBe(201);
		expect(Array.isArray(created.json)).toBe(true);
		expect(created.json).toHaveLength(2);
		const id = created.json[0].id;
		const done = await waitFinal(`/extract/${id}/`, tok());
		expect(done.status).toBe(200);
		const csv = await request('GET', `/extract/${id}/?download=csv`, tok());
		expect(csv.headers.get('content-disposition')).toBe('attachment; filename="one.csv"');
		expect(csv.bytes.toString()).toContain('INV-1');
		const json = await request('GET', `/extract/${id}/?download=json`, tok());
		expect(json.json.extracted_data.invoice_number).toBe('INV-1');
		const zip = await request('GET', `/extract/${id}/?download=images`, tok());
		expect(Object.keys((await JSZip.loadAsync(zip.bytes)).files)).toEqual(['page-1.png']);
	});

	it('serves injected faults before the normal answer', async () => {
		emu.injectFaults({ method: 'GET', path: '/schema/' }, [{ status: 429, retryAfter: '1' }]);
		const throttled = await request('GET', '/schema/', tok());
		expect(throttled.status).toBe(429);
		expect(throttled.headers.get('retry-after')).toBe('1');
		expect((await request('GET', '/schema/', tok())).status).toBe(200);
	});

	it('serves hostile answers: HTML, redirects, echoed headers, a stuck page, a dripping body', async () => {
		emu.injectFaults({ method: 'GET', path: '/schema/' }, [
			{ body: '<html>Sign in</html>' },
			{ status: 301, location: 'https://elsewhere.example/schema/' },
			{ status: 400, echoHeaders: true },
		]);
		const html = await request('GET', '/schema/', tok());
		expect([html.status, html.headers.get('content-type'), html.bytes.toString()]).toEqual([200, 'text/html; charset=utf-8', '<html>Sign in</html>']);
		const moved = await request('GET', '/schema/', tok());
		expect([moved.status, moved.headers.get('location')]).toEqual([301, 'https://elsewhere.example/schema/']);
		const echoed = await request('GET', '/schema/', tok());
		expect(echoed.status).toBe(400);
		expect(echoed.json.headers.authorization).toBe(emu.token);

		emu.injectFaults({ method: 'GET', path: '/v0/documents' }, [{ json: { count: 9, next: 'x', results: [] }, forever: true }]);
		for (let i = 0; i < 3; i++) expect((await request('GET', '/v0/documents', v0())).json).toEqual({ count: 9, next: 'x', results: [] });
		emu.clearFaults();

		emu.injectFaults({ method: 'GET', path: '/schema/' }, [{ json: { ok: 1 }, dripMs: 50 }]);
		const started = Date.now();
		const dripped = await request('GET', '/schema/', tok());
		expect(dripped.json).toEqual({ ok: 1 });
		expect(Date.now() - started).toBeGreaterThanOrEqual(7 * 45); // 8 bytes, 50 ms apart
	});

	it('refuses an extraction when credits are insufficient (403)', async () => {
		emu.setCredits(0);
		const refused = await request('POST', '/extract/', tok(), upload('document', pdf, 'x.pdf', { server: 'EU-1' }));
		expect(refused.status).toBe(403);
		expect(refused.json).toEqual({ credits: ['Insufficient credits: 1 needed, 0 available.'] });
		emu.setCredits(100);
		expect((await request('POST', '/extract/', tok(), upload('document', pdf, 'x.pdf', { server: 'EU-1' }))).status).toBe(201);
		expect(emu.getCredits()).toBe(99);
	});
});
