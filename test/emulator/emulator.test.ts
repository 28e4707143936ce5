/**
 * The emulator loaded in-process through ts-jest (CommonJS, jest VM; the pdfjs text extraction, an
 * ES module, runs in a worker thread: the parsing tests of v0.test.ts prove it works from jest).
 * Here: what both families share (authentication, routing, injected faults, hostile answers), the
 * request log, processing times and the files origin's static files. The families themselves:
 * v0.test.ts and unversioned.test.ts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { heldAnswer } from '../../emulator';
import { INVOICE_SCHEMA, form, fourPageInvoice, useEmulatorClient } from './client';

const PROCESSING_MS = 400;
const api = useEmulatorClient({ processingMs: PROCESSING_MS });

let invoice: Buffer;

beforeAll(async () => {
	invoice = await fourPageInvoice();
});

afterEach(() => api.emu.clearFaults());

describe('authentication and routing', () => {
	it("answers 401 in each family's shape (§v0-5/§v0-7, §unversioned-5/§unversioned-7)", async () => {
		expect((await api.call('GET', '/v0/documents')).body).toEqual({ detail: 'API key missing.' });
		expect(
			(await api.call('GET', '/v0/documents', { headers: { 'x-api-key': 'nope' } })).body,
		).toEqual({ detail: 'Invalid API key.' });
		const missing = await api.call('GET', '/extract/');
		expect(missing.status).toBe(401);
		expect(missing.body).toEqual({
			detail: 'Authentication credentials were not provided.',
			code: 'not_authenticated',
			messages: [],
		});
		const bearer = await api.call('GET', '/extract/', {
			headers: { authorization: `Bearer ${api.emu.token}` },
		});
		expect(bearer.body.messages[0].message).toBe('Token is invalid');
		expect(
			(await api.call('GET', '/extract/', { headers: { authorization: api.emu.expiredToken } }))
				.body,
		).toEqual({
			detail: 'Given token not valid for any token type',
			code: 'token_not_valid',
			messages: [{ token_class: 'AccessToken', token_type: 'access', message: 'Token is expired' }],
		});
	});

	it('answers 404 for the wrong trailing slash and unknown paths, 405 with Allow for a wrong method', async () => {
		expect((await api.send('GET', '/v0/documents/')).body).toEqual({
			detail: 'Not found.',
		});
		expect((await api.send('GET', '/extract')).body).toEqual({
			detail: 'Not found.',
		});
		expect((await api.send('GET', '/schema')).status).toBe(404);
		expect((await api.send('GET', '/nope')).status).toBe(404);
		const wrongMethod = await api.send('PATCH', `/schema/${INVOICE_SCHEMA}/`);
		expect(wrongMethod.status).toBe(405);
		expect(wrongMethod.body).toEqual({ detail: 'Method "PATCH" not allowed.' });
		expect(wrongMethod.headers.get('allow')).toMatch(/PUT/);
	});
});

describe('injected faults', () => {
	it('serves queued faults before the normal answer: 429 with Retry-After, 503, then success', async () => {
		api.emu.injectFaults({ method: 'GET', path: '/v0/documents' }, [
			{ status: 429, retryAfter: '2' },
			{ status: 503 },
		]);
		const first = await api.send('GET', '/v0/documents');
		expect(first.status).toBe(429);
		expect(first.headers.get('retry-after')).toBe('2');
		expect(typeof first.body.detail).toBe('string');
		expect((await api.send('GET', '/v0/documents')).status).toBe(503);
		expect((await api.send('GET', '/v0/documents')).status).toBe(200);
	});

	it('drops the connection (logged with status 0), delays, and forgets cleared faults', async () => {
		api.emu.injectFaults({ path: /^\/extract\// }, [{ drop: true }]);
		api.emu.clearLog();
		await expect(api.send('GET', '/extract/')).rejects.toThrow();
		await new Promise((resolve) => setTimeout(resolve, 50));
		expect(api.emu.requests.map((r) => [r.path, r.status])).toEqual([['/extract/', 0]]);
		api.emu.injectFaults({ path: '/schema/' }, [{ delayMs: 300 }]);
		const t0 = Date.now();
		expect((await api.send('GET', '/schema/')).status).toBe(200);
		expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
		api.emu.injectFaults({ path: '/schema/' }, [{ status: 500 }]);
		api.emu.clearFaults();
		expect((await api.send('GET', '/schema/')).status).toBe(200);
	});

	it('holds an answer until the test lets it go (heldAnswer), other requests go on', async () => {
		const held = heldAnswer();
		api.emu.injectFaults({ path: '/schema/' }, [held.fault]);
		let answered = false;
		const waiting = api.send('GET', '/schema/').finally(() => {
			answered = true;
		});
		await held.arrived;
		expect((await api.send('GET', '/schema/')).status).toBe(200);
		expect(answered).toBe(false);
		held.release();
		expect((await waiting).status).toBe(200);
	});

	it('serves hostile answers: HTML, redirects, echoed headers, a stuck page, a dripping body', async () => {
		api.emu.injectFaults({ method: 'GET', path: '/schema/' }, [
			{ body: '<html>Sign in</html>' },
			{ status: 301, location: 'https://elsewhere.example/schema/' },
			{ status: 400, echoHeaders: true },
		]);
		const html = await api.send('GET', '/schema/');
		expect([html.status, html.headers.get('content-type'), html.body]).toEqual([
			200,
			'text/html; charset=utf-8',
			'<html>Sign in</html>',
		]);
		const moved = await api.send('GET', '/schema/');
		expect([moved.status, moved.headers.get('location')]).toEqual([
			301,
			'https://elsewhere.example/schema/',
		]);
		const echoed = await api.send('GET', '/schema/');
		expect(echoed.status).toBe(400);
		expect(echoed.body.headers.authorization).toBe(api.emu.token);

		api.emu.injectFaults({ method: 'GET', path: '/v0/documents' }, [
			{ json: { count: 9, next: 'x', results: [] }, forever: true },
		]);
		for (let i = 0; i < 3; i++)
			expect((await api.send('GET', '/v0/documents')).body).toEqual({
				count: 9,
				next: 'x',
				results: [],
			});
		api.emu.clearFaults();

		api.emu.injectFaults({ method: 'GET', path: '/schema/' }, [{ json: { ok: 1 }, dripMs: 50 }]);
		const started = Date.now();
		const dripped = await api.send('GET', '/schema/');
		expect(dripped.body).toEqual({ ok: 1 });
		expect(Date.now() - started).toBeGreaterThanOrEqual(7 * 45); // 8 bytes, 50 ms apart
	});
});

describe('request log', () => {
	it('logs a refused request with its headers, body size and content type, but no body fields', async () => {
		api.emu.clearLog();
		await api.call('POST', '/v0/documents', {
			headers: { 'x-api-key': 'wrong' },
			form: form({ file: { name: 'invoice.pdf', bytes: invoice } }),
		});
		const [entry] = api.emu.requests;
		expect(entry).toMatchObject({
			origin: 'api',
			method: 'POST',
			path: '/v0/documents',
			status: 401,
		});
		expect(entry.headers['x-api-key']).toBe('wrong');
		expect(entry.bodyBytes).toBeGreaterThan(invoice.length);
		expect(entry.contentType).toMatch(/^multipart\/form-data/);
		expect(entry.body).toBeUndefined();
	});

	it('logs the parsed fields of a multipart body: text fields, repeated fields, files by name, size and type, never their bytes', async () => {
		const fd = form({ metadata: '{"a":1}', filename: 'renamed.pdf', tag: ['x', 'y'] });
		fd.append(
			'file',
			new Blob([new Uint8Array(invoice)], { type: 'application/pdf' }),
			'invoice.pdf',
		);
		fd.append('notes', new Blob(['bytes-of-the-notes-file'], { type: 'text/plain' }), 'notes.txt');
		api.emu.clearLog();
		const created = await api.send('POST', '/v0/documents?pdf_page_start=1&pdf_page_end=2', {
			form: fd,
		});
		expect(created.status).toBe(201);
		const [entry] = api.emu.requests;
		expect(entry.query).toEqual({ pdf_page_start: '1', pdf_page_end: '2' });
		expect(entry.body).toEqual({
			kind: 'form',
			fields: { metadata: '{"a":1}', filename: 'renamed.pdf', tag: ['x', 'y'] },
			files: [
				{
					field: 'file',
					filename: 'invoice.pdf',
					size: invoice.length,
					contentType: 'application/pdf',
				},
				{ field: 'notes', filename: 'notes.txt', size: 23, contentType: 'text/plain' },
			],
		});
		expect(JSON.stringify(entry)).not.toContain('bytes-of-the-notes-file');
	});

	it('logs a JSON body as its value, and a url-encoded body as its fields', async () => {
		api.emu.clearLog();
		await api.send('POST', '/v0/parsing', {
			json: {
				document: 'https://example.com/x.pdf',
				picture_description_enabled: true,
				metadata: { k: 'v' },
			},
		});
		await api.send('PUT', `/schema/${INVOICE_SCHEMA}/`, {
			text: new URLSearchParams({
				name: 'Invoice',
				description: 'Main fields of an invoice',
			}).toString(),
			contentType: 'application/x-www-form-urlencoded',
		});
		const [json, urlencoded] = api.emu.requests;
		expect(json.body).toEqual({
			kind: 'json',
			value: {
				document: 'https://example.com/x.pdf',
				picture_description_enabled: true,
				metadata: { k: 'v' },
			},
		});
		expect(urlencoded.body).toEqual({
			kind: 'form',
			fields: { name: 'Invoice', description: 'Main fields of an invoice' },
			files: [],
		});
	});

	it('logs no body fields for a request without a body or with an unreadable one', async () => {
		api.emu.clearLog();
		await api.send('GET', '/schema/');
		await api.send('POST', '/v0/parsing', {
			text: '{"document": ',
			contentType: 'application/json',
		});
		expect(api.emu.requests.map((r) => [r.status, r.body])).toEqual([
			[200, undefined],
			[400, undefined],
		]);
	});
});

describe('processing time and static files', () => {
	it('setProcessingMs applies to new jobs; emulator_processing_ms to one job', async () => {
		const doc = await api.send('POST', '/v0/documents', {
			form: form({ file: { name: 'invoice.pdf', bytes: invoice } }),
		});
		api.emu.setProcessingMs(0);
		try {
			const quick = await api.send('POST', '/v0/parsing', {
				json: { document: doc.body.id },
			});
			expect((await api.poll(`/v0/parsing/${quick.body.id}`)).body.status).toBe('FINISHED');
			const slow = await api.send('POST', '/v0/parsing', {
				json: { document: doc.body.id, metadata: { emulator_processing_ms: 60_000 } },
			});
			await new Promise((resolve) => setTimeout(resolve, 300));
			expect((await api.send('GET', `/v0/parsing/${slow.body.id}`)).body.status).toBe('IN_QUEUE');
		} finally {
			api.emu.setProcessingMs(PROCESSING_MS);
		}
	});

	it('serves the static files of the files origin, and 404 for others', async () => {
		const a = await api.call('GET', `${api.emu.filesUrl}/static/a.pdf`);
		expect(a.bytes).toEqual(
			readFileSync(path.join(__dirname, '..', '..', 'emulator', 'static', 'a.pdf')),
		);
		expect((await api.call('GET', `${api.emu.filesUrl}/static/nope.pdf`)).status).toBe(404);
	});
});
