/**
 * Issue 32: the transport keeps its promises under any answer the reference allows. One describe
 * per item of the issue; each case was written to fail before its fix (what it got is in its name).
 */

import { execFile } from 'node:child_process';
import path from 'node:path';
import { Readable } from 'node:stream';
import { inspect, promisify } from 'node:util';

import type { IHttpRequestOptions } from 'n8n-workflow';

import { attempt } from '../nodes/shared/transport/attempt';
import { failedAttemptError } from '../nodes/shared/transport/failures';
import {
	streamedMultipart,
	type StreamedMultipart,
} from '../nodes/shared/transport/multipart-stream';
import { DEFAULT_CLIENT_SETTINGS } from '../nodes/shared/transport/types';
import { extractCreate, extractWithOptions, listAll, onDocument } from './helpers/params';
import { useNode } from './helpers/setup';

const TOKEN = 'PROMISES/KEY-7c6b5a49';
const { emulator, runNode, apiRequests, fileItem } = useNode({ processingMs: 0, apiKey: TOKEN });

afterEach(() => emulator().clearFaults());

const posts = () => apiRequests().filter((r) => r.method === 'POST');
const EXTRACT_POLL = /^\/v0\/extract\/[0-9a-f-]{36}$/;
const HOUR_MS = 3_600_000;

describe('1. A Retry-After the node cannot wait for fails at once, saying when', () => {
	it.each([
		['in seconds', () => '3600'],
		['as an HTTP date', () => new Date(Date.now() + HOUR_MS).toUTCString()],
	])(
		'a create answered 429 asking for an hour (%s) is not sent again (it was, after 30 s, three times)',
		async (_, retryAfter) => {
			emulator().injectFaults({ method: 'POST', path: '/v0/extract' }, [
				{ status: 429, retryAfter: retryAfter(), forever: true },
			]);
			const before = Date.now();
			const { error } = await runNode(extractWithOptions(), [await fileItem()]);
			expect(posts()).toHaveLength(1);
			const until = /until (\S+Z)/.exec(String(error?.message))?.[1];
			expect(error?.message).toMatch(/^The service asks for no requests until \S+Z \(HTTP 429\)$/);
			// The time it asked for, to the second (an HTTP date has no milliseconds).
			expect(Date.parse(until ?? '')).toBeGreaterThanOrEqual(before + HOUR_MS - 1000);
			expect(String(error?.description)).toContain('Nothing was created');
		},
	);

	it('a poll answered 429 asking for an hour: no poll is sent before that time, and the timeout names it', async () => {
		emulator().injectFaults({ method: 'GET', path: EXTRACT_POLL }, [
			{ status: 429, retryAfter: '3600', forever: true },
		]);
		const { error } = await runNode(extractWithOptions({ timeout: 3 }), [await fileItem()]);
		const polls = apiRequests().filter((r) => r.method === 'GET' && EXTRACT_POLL.test(r.path));
		expect(polls).toHaveLength(1);
		expect(error?.message).toMatch(/^Timed out after 3 s waiting for Extract /);
		expect(String(error?.description)).toMatch(/The service asks for no requests until \S+Z/);
	});

	it('a Retry-After within the wait is honoured for every request of the family, not only the one that got it', async () => {
		emulator().injectFaults({ method: 'POST', path: '/v0/extract' }, [
			{ status: 429, retryAfter: '2' },
		]);
		// One request at a time: the second item's create is sent after the 429 was answered.
		const { error } = await runNode(extractWithOptions({ concurrency: 1 }), [
			await fileItem(),
			await fileItem(),
		]);
		expect(error).toBeUndefined();
		const [refused, ...rest] = apiRequests();
		expect(refused.status).toBe(429);
		expect(rest.length).toBeGreaterThanOrEqual(3);
		// Every later request arrived at least the asked 2 s after the 429 (the other item's create too).
		for (const request of rest) expect(request.at - refused.at).toBeGreaterThanOrEqual(1900);
	});
});

/** Every place an error is shown or stored: message, description, its cause, as n8n serialises it. */
const errorTexts = (error: unknown) => {
	const e = error as { message?: string; description?: string };
	return [
		String(e?.message),
		String(e?.description),
		inspect(error, { depth: 8 }),
		JSON.stringify(error),
	];
};

describe('2. Secrets the service echoes in escaped forms are removed from errors', () => {
	/** `text` with every character as a JSON \u escape. */
	const uEscaped = (text: string) =>
		[...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
	const base64At = (offset: number) =>
		Buffer.from(`${'x'.repeat(offset)}Basic ${TOKEN}`).toString('base64');
	it.each([
		['JSON \\/ escapes (it was shown)', '"PROMISES\\/KEY-7c6b5a49"'],
		['JSON \\u escapes (it was shown)', `"${uEscaped(TOKEN)}"`],
		[
			'URL-encoded with lower-case hex digits (it was shown)',
			`"${encodeURIComponent(TOKEN).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase())}"`,
		],
		[
			'in base64, at any byte offset (it was shown)',
			`"${base64At(0)} ${base64At(1)} ${base64At(2)}"`,
		],
		['mixed escapes in one echo (it was shown)', `"PROMISES\\/KEY\\u002d7c6b5a49"`],
	])('an error body echoing the key %s', async (_, echoed) => {
		emulator().injectFaults({ method: 'GET', path: /^\/v0\/documents\// }, [
			{ status: 400, contentType: 'application/json', body: `{"detail": ["bad key", ${echoed}]}` },
		]);
		const { error } = await runNode(onDocument('get', '0f1e2d3c-4b5a-4697-8899-aabbccddeeff'));
		expect(error?.message).toMatch(/^The service rejected the request/);
		for (const text of errorTexts(error)) {
			expect(text).not.toContain(TOKEN);
			expect(text).not.toContain('7c6b5a49');
			for (const offset of [0, 1, 2]) expect(text).not.toContain(base64At(offset).slice(12, 24));
		}
	});

	it('a document whose fields echo the key in base64 and with escapes is output without it (base64 was output)', async () => {
		const id = '0f1e2d3c-4b5a-4697-8899-aabbccddeeff';
		emulator().injectFaults({ method: 'GET', path: `/v0/documents/${id}` }, [
			{
				status: 200,
				contentType: 'application/json',
				body: `{"id": "${id}", "name": "a.pdf", "note": "${base64At(1)}", "echo": "${uEscaped(TOKEN)}"}`,
			},
		]);
		const { items, error } = await runNode(onDocument('get', id));
		expect(error).toBeUndefined();
		const text = JSON.stringify(items);
		expect(text).toContain('a.pdf');
		expect(text).not.toContain('7c6b5a49');
		expect(text).not.toContain(base64At(1).slice(12, 24));
	});
});

describe('3. A body the node cannot build is its own error, not the network', () => {
	it('a stored file that cannot be read fails naming it, before any request (it read "Could not reach the Extraction Service … may already have acted")', async () => {
		const gone = {
			id: 'filesystem-v2:workflows/harness/executions/harness/binary_data/gone',
			data: '',
			fileName: 'invoice.pdf',
			mimeType: 'application/pdf',
			fileSize: '1234',
		};
		const { error } = await runNode(extractWithOptions(), [{ json: {}, binary: { data: gone } }]);
		expect(apiRequests()).toHaveLength(0);
		expect(error?.message).toMatch(/^Could not read the file to upload \(invoice\.pdf\): \S/);
		expect(String(error?.description)).toContain('created nothing');
		expect(`${error?.message} ${error?.description}`).not.toMatch(/reach|may already have acted/);
	});

	it('a stored file shorter than its size fails naming it, not as a connection closed by the server (it did)', async () => {
		const body = async () =>
			(await streamedMultipart(
				[['schema', 'x']],
				[
					{
						field: 'file',
						fileName: 'short.pdf',
						mimeType: 'application/pdf',
						size: 20,
						open: async () => Readable.from([Buffer.alloc(10)]),
					},
				],
			)) as StreamedMultipart;
		// n8n's request helper as it behaves when the body it sends fails: the socket breaks.
		const httpRequestWithAuthentication = async (_: string, options: IHttpRequestOptions) => {
			try {
				for await (const chunk of options.body as AsyncIterable<Buffer>) void chunk;
			} catch {
				throw Object.assign(new Error('write EPIPE'), { code: 'EPIPE' });
			}
			return { statusCode: 201, headers: {}, body: '{}' };
		};
		const node = { name: 'Extraction Service', type: 'x', typeVersion: 1, position: [0, 0] };
		const ctx = { getNode: () => node, helpers: { httpRequestWithAuthentication } };
		const req = {
			family: 'v0' as const,
			method: 'POST' as const,
			path: '/v0/extract',
			body,
			itemIndex: 0,
		};
		const at = {
			ctx: ctx as never,
			requestTimeoutMs: 10_000,
			stopSignal: new AbortController().signal,
			cancelSignal: new AbortController().signal,
			credentialsDecrypted: { id: '', name: '', type: 'extractionServiceApi', data: {} },
		};
		const outcome = await attempt(at, req, 'http://127.0.0.1:9/v0/extract');
		const error = failedAttemptError(
			node as never,
			DEFAULT_CLIENT_SETTINGS,
			req,
			'http://127.0.0.1:9/v0/extract',
			outcome,
			[],
		);
		expect(error.message).toBe(
			'Could not read the file to upload (short.pdf): The stored file "short.pdf" holds 10 bytes instead of 20',
		);
	});
});

describe('4. Every job in a create answer is recorded, whatever its neighbours hold', () => {
	const GOOD = '2b3c4d5e-6f70-4182-93a4-b5c6d7e8f901';
	const listAnswer = () =>
		emulator().injectFaults({ method: 'POST', path: '/v0/extract' }, [
			{
				status: 201,
				json: [
					{ id: GOOD, status: 'IN_QUEUE' },
					{ status: 'IN_QUEUE', note: 'no id' },
				],
			},
		]);

	it('without Continue On Fail, the error names the job that has an id (it named none)', async () => {
		listAnswer();
		const { error } = await runNode(extractCreate({ waitForCompletion: false }), [
			await fileItem(),
		]);
		expect(error?.message).toMatch(/no "id"/);
		expect(String(error?.description)).toContain(GOOD);
	});

	it('with Continue On Fail, the job with an id is output beside an error item for the other (both were lost in one error item)', async () => {
		listAnswer();
		const { items, error } = await runNode(
			extractCreate({ waitForCompletion: false }),
			[await fileItem()],
			{ node: { continueOnFail: true } },
		);
		expect(error).toBeUndefined();
		expect(items.map((i) => i.json.id ?? null)).toContain(GOOD);
		expect(items.filter((i) => /no "id"/.test(String(i.json.error)))).toHaveLength(1);
		expect(items.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 0 }]);
	});
});

describe('5. A 403 says what refused the request', () => {
	it.each([
		[
			"a firewall's HTML page",
			{
				contentType: 'text/html',
				body: '<html><head><title>Request blocked</title></head></html>',
			},
			/^Access denied \(HTTP 403\): Request blocked$/,
		],
		[
			'a permission denial',
			{ json: { detail: 'You do not have permission to perform this action.' } },
			/^Access denied \(HTTP 403\): You do not have permission to perform this action\.$/,
		],
		['no body', { body: '', contentType: 'application/json' }, /^Access denied \(HTTP 403\)$/],
	])('%s is an access denial (it read "Insufficient credits")', async (_, answer, message) => {
		emulator().injectFaults({ method: 'POST', path: '/v0/extract' }, [{ status: 403, ...answer }]);
		const { error } = await runNode(extractWithOptions(), [await fileItem()]);
		expect(error?.message).toMatch(message);
		expect(String(error?.description)).not.toMatch(/credits/i);
	});

	it('the service saying the credits ran out is still "Insufficient credits"', async () => {
		emulator().injectFaults({ method: 'POST', path: '/v0/extract' }, [
			{ status: 403, json: { credits: ['Insufficient credits: 5 needed, 0 available.'] } },
		]);
		const { error } = await runNode(extractWithOptions(), [await fileItem()]);
		expect(error?.message).toBe(
			'Insufficient credits: credits: Insufficient credits: 5 needed, 0 available.',
		);
	});
});

describe('7. Return All does not stop short silently', () => {
	const ids = ['a', 'b', 'c', 'd'].map((c) => `${c.repeat(8)}-0000-4000-8000-000000000000`);
	const page = (onPage: string[], count: number, next: boolean) => ({
		status: 200,
		json: {
			count,
			next: next ? `${emulator().url}/v0/documents?page=x` : null,
			previous: null,
			results: onPage.map((id) => ({ id, name: `${id}.pdf` })),
		},
	});

	it('a list that grew during the read: the page of ids already seen is passed, and the rest read (it stopped with 2 of 4)', async () => {
		emulator().injectFaults({ method: 'GET', path: '/v0/documents' }, [
			page(ids.slice(0, 2), 4, true),
			page(ids.slice(0, 2), 6, true),
			page(ids.slice(2), 6, false),
		]);
		const { items, error } = await runNode(listAll('document'));
		expect(error).toBeUndefined();
		expect(items.map((i) => i.json.id)).toEqual(ids);
	});

	it('a list that repeats its page while its count says more fails saying so (it output 2 of 10, silently)', async () => {
		emulator().injectFaults({ method: 'GET', path: '/v0/documents' }, [
			{ ...page(ids.slice(0, 2), 10, true), forever: true },
		]);
		const { items, error } = await runNode(listAll('document'));
		expect(items).toHaveLength(0);
		expect(error?.message).toBe(
			'The list repeated its pages while its count says 10 items: 2 were read',
		);
	});
});

describe('8. A create answered with JSON the node refuses still names the job', () => {
	const ID = '3c4d5e6f-7081-4293-a4b5-c6d7e8f90a1b';
	it.each([
		['300 levels deep', 300],
		['10,000 levels deep (beyond what JSON.parse can read)', 10_000],
	])('an answer %s: the error names the id at its top (it did not)', async (_, depth) => {
		const deep = `${'['.repeat(depth)}${']'.repeat(depth)}`;
		emulator().injectFaults({ method: 'POST', path: '/v0/extract' }, [
			{
				status: 201,
				contentType: 'application/json',
				body: `{"status": "IN_QUEUE", "result": ${deep}, "id": "${ID}"}`,
			},
		]);
		const { error } = await runNode(extractWithOptions(), [await fileItem()]);
		expect(error?.message).toMatch(/JSON nested deeper than 256 levels/);
		expect(String(error?.description)).toContain(`Extract ${ID}`);
	});
});

describe("6. Downloads stream into n8n's binary storage, within a documented cap", () => {
	it('a file announced larger than 1 GiB fails before it is read (it was read whole into memory)', async () => {
		const uploaded = await runNode({ resource: 'document', operation: 'upload' }, [
			await fileItem(),
		]);
		const id = String(uploaded.items[0].json.id);
		emulator().injectFaults({ method: 'GET', path: `/v0/documents/${id}/download` }, [
			{ streamBytes: 2 * 1024 ** 3, contentType: 'application/pdf' },
		]);
		const { error } = await runNode(onDocument('download', id));
		expect(error?.message).toBe(
			`The file to download is ${2 * 1024 ** 3} bytes, more than the node stores (1 GiB)`,
		);
		const download = apiRequests().find((r) => r.path.endsWith('/download'));
		expect(download?.sentBytes ?? 0).toBeLessThan(64 * 1024 * 1024);
	});
});

describe('9. Request Timeout holds whatever the garbage collector does', () => {
	// Node 20 drops an AbortSignal.timeout held only by an AbortSignal.any once the collector runs
	// (nodejs/node#57736): the attempt's time then never ran out. Jest's own references hide it, so
	// the attempts run in a plain Node process (the one running these tests) with --expose-gc.
	it('20 downloads and 20 answers whose bodies never end all end at their Request Timeout with the collector running (on Node 20.20: 8 and 7 did)', async () => {
		const { stdout } = await promisify(execFile)(
			process.execPath,
			['--expose-gc', '--import', 'tsx', path.join(__dirname, 'helpers/timeout-after-gc.ts')],
			{ cwd: path.join(__dirname, '..') },
		);
		expect(JSON.parse(stdout.trim())).toEqual({ runs: 20, downloads: 20, answers: 20 });
	});
});
