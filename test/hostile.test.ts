/**
 * A hostile service, a broken network, and still nothing lost (issue 10): the node driven through
 * n8n-core against an emulator that answers the way misbehaving services and proxies do (the
 * emulator's "hostile answers", emulator/README.md). One describe block per defect.
 */
import { inspect } from 'node:util';

import {
	attachments,
	extractWithOptions,
	extractionWithOptions,
	listAll,
	onDocument,
	onExtraction,
	visible,
} from './helpers/params';
import { SAMPLE_PDF, useNode } from './helpers/setup';

const KEY = 'HOSTILE-KEY-3c2b1a09';
const TOKEN = 'HOSTILE-TOKEN-7d6e5f40';
const { emulator, runNode, apiRequests, fileItem } = useNode({ apiKey: KEY, token: TOKEN });

afterEach(() => {
	emulator().clearFaults();
	emulator().setProcessingMs(1000);
});

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const EXTRACT_POLL = new RegExp(`^/v0/extract/${UUID}$`);
const EXTRACTION_POLL = new RegExp(`^/extract/${UUID}/$`);
const gets = () => apiRequests().filter((r) => r.method === 'GET');

async function uploadedDocumentId(): Promise<string> {
	const doc = await runNode({ resource: 'document', operation: 'upload' }, [await fileItem()]);
	return String(doc.items[0].json.id);
}

describe('1. Success answers are checked, not trusted', () => {
	it.each([
		['an empty body', { status: 201, body: '', contentType: 'application/json' }, /empty answer/],
		['null', { status: 201, json: null }, /null/],
		[
			'a body that is not JSON',
			{ status: 201, body: 'created!', contentType: 'text/plain' },
			/not JSON/,
		],
		['a job without an id', { status: 201, json: { status: 'IN_QUEUE' } }, /no "id"/],
	])(
		'a create answered 201 with %s: a NodeApiError saying what came back and that the job may exist',
		async (_name, fault, what) => {
			emulator().injectFaults({ method: 'POST', path: '/v0/extract' }, [fault]);
			const { error } = await runNode(extractWithOptions(), [await fileItem()]);
			expect(error?.name).toBe('NodeApiError');
			expect(error?.message).toMatch(what);
			expect(String(error?.description)).toMatch(/may already exist at the service/);
			expect((error?.context as { itemIndex?: number }).itemIndex).toBe(0);
			// Never a poll of the collection URL (or of ".../undefined").
			expect(gets()).toEqual([]);
		},
	);

	it('a poll answered without a status, or with another job, is not taken for the job', async () => {
		emulator().injectFaults({ method: 'GET', path: EXTRACT_POLL }, [
			{ json: { id: 'x' } },
			{
				json: {
					id: '11111111-2222-4333-8444-555555555555',
					status: 'FINISHED',
					result: { invoice_number: 'WRONG' },
				},
			},
		]);
		const { items, error } = await runNode(extractWithOptions({ maxRetries: 0 }), [
			await fileItem(),
		]);
		expect(error).toBeUndefined();
		expect(items[0].json).toMatchObject({ status: 'FINISHED', invoice_number: 'INV-2026-0042' });
	});

	it('a Get answered 200 with a job without a status: a NodeApiError naming the item, no TypeError', async () => {
		emulator().injectFaults({ method: 'GET', path: EXTRACTION_POLL }, [
			{ json: { id: '11111111-2222-4333-8444-555555555555' } },
		]);
		const { error } = await runNode(onExtraction('get', '11111111-2222-4333-8444-555555555555'));
		expect(error?.name).toBe('NodeApiError');
		expect(error?.message).toMatch(/no "status"/);
		expect((error?.context as { itemIndex?: number }).itemIndex).toBe(0);
	});
});

describe('2. Redirects and HTML are errors outside Download', () => {
	it('a 301 to https on Get Many names the status and the Location origin, and says to check the Base URL', async () => {
		emulator().injectFaults({ method: 'GET', path: '/v0/documents' }, [
			{ status: 301, location: 'https://api.example.com/v0/documents?page=1&sig=PRIVATE' },
		]);
		const { error, items } = await runNode(listAll('document'));
		expect(items).toEqual([]);
		expect(error?.message).toBe(
			'The service answered HTTP 301, a redirect to https://api.example.com',
		);
		expect(String(error?.description)).toMatch(/Base URL/);
		expect(visible({ items, error } as never)).not.toContain('PRIVATE');
		expect(gets()).toHaveLength(1);
	});

	it('a 302 on a create is not followed either', async () => {
		emulator().injectFaults({ method: 'POST', path: '/schema/' }, [
			{ status: 302, location: '/login/' },
		]);
		const { error } = await runNode({
			resource: 'schema',
			operation: 'create',
			name: 'S',
			description: 'd',
			definition: '{"type":"object","properties":{}}',
		});
		expect(error?.message).toMatch(
			/^The service answered HTTP 302, a redirect to http:\/\/127\.0\.0\.1:\d+$/,
		);
		expect(apiRequests().map((r) => r.path)).toEqual(['/schema/']);
	});

	it.each([
		['Get Many (no more "zero items")', listAll('document'), 'GET', '/v0/documents'],
		[
			'Delete (no more "deleted: true")',
			onExtraction('delete', '11111111-2222-4333-8444-555555555555'),
			'DELETE',
			'/extract/11111111-2222-4333-8444-555555555555/',
		],
		[
			'Get (no more strings as json)',
			{
				resource: 'schema',
				operation: 'get',
				schema: { __rl: true, mode: 'id', value: '11111111-2222-4333-8444-555555555555' },
			},
			'GET',
			'/schema/11111111-2222-4333-8444-555555555555/',
		],
	])(
		'a 200 HTML page on %s is an error that says to check the Base URL',
		async (_name, parameters, method, path) => {
			emulator().injectFaults({ method, path }, [
				{ body: '<!doctype html><html><title>Sign in</title></html>' },
			]);
			const { error, items } = await runNode(parameters);
			expect(items).toEqual([]);
			expect(error?.message).toBe(
				'The service answered HTTP 200 with an HTML page instead of JSON',
			);
			expect(String(error?.description)).toMatch(/Base URL/);
		},
	);
});

describe('2b. Download follows only http(s) redirects', () => {
	it('a download redirected to file:// is refused, nothing is read', async () => {
		const id = await uploadedDocumentId();
		emulator().injectFaults({ method: 'GET', path: `/v0/documents/${id}/download` }, [
			{ status: 302, location: 'file:///etc/passwd' },
		]);
		const { error, items } = await runNode(onDocument('download', id));
		expect(items).toEqual([]);
		expect(error?.message).toBe(
			'The service redirected the download to a file address, which the node does not follow',
		);
	});
});

describe('3. Secrets echoed back never reach an error, an item or a log', () => {
	it.each([
		['v0 (X-API-Key)', extractWithOptions(), 'POST', '/v0/extract'],
		['unversioned (Authorization)', extractionWithOptions(), 'POST', '/extract/'],
	])(
		'%s: a 400 body echoing the request headers is shown with the secret removed',
		async (_name, parameters, method, path) => {
			emulator().injectFaults({ method, path }, [{ status: 400, echoHeaders: true }]);
			const result = await runNode(parameters, [await fileItem()]);
			expect(result.error?.message).toMatch(/^The service rejected the request/);
			const shown = visible(result);
			expect(shown).toContain('[redacted]');
			expect(shown).not.toContain(KEY);
			expect(shown).not.toContain(TOKEN);
		},
	);

	it('a success answer carrying the secret: the item has it removed', async () => {
		const id = await uploadedDocumentId();
		emulator().injectFaults({ method: 'GET', path: `/v0/documents/${id}` }, [
			{ json: { id, filename: 'a.pdf', note: `seen key ${KEY}` } },
		]);
		const result = await runNode(onDocument('get', id));
		expect(result.items[0].json.note).toBe('seen key [redacted]');
		expect(visible(result)).not.toContain(KEY);
	});

	it('a success answer carrying the secret in JSON escapes: the item has it removed', async () => {
		const id = await uploadedDocumentId();
		// "\u0048" is "H": the text holds no secret, the parsed answer does.
		const escaped = `\\u0048${KEY.slice(1)}`;
		emulator().injectFaults({ method: 'GET', path: `/v0/documents/${id}` }, [
			{
				body: `{"id":"${id}","filename":"a.pdf","note":"seen key ${escaped}"}`,
				contentType: 'application/json',
			},
		]);
		const result = await runNode(onDocument('get', id));
		expect(result.items[0].json.note).toBe('seen key [redacted]');
		expect(visible(result)).not.toContain(KEY);
	});

	it('a 5 MB error page becomes a short message, not a 5 MB description', async () => {
		const page = `<html><body>${'x'.repeat(5 * 1024 * 1024)}</body></html>`;
		emulator().injectFaults({ method: 'POST', path: '/v0/extract' }, [{ status: 500, body: page }]);
		const result = await runNode(extractWithOptions(), [await fileItem()]);
		expect(result.error?.message).toBe('The service failed with HTTP 500');
		expect(String(result.error?.description ?? '').length).toBeLessThanOrEqual(1200);
		expect(inspect(result.error, { depth: null, showHidden: true }).length).toBeLessThan(50_000);
	});
});

describe('4. Paging ends, whatever next says', () => {
	const page = (ids: string[], next: string | null, count?: number) => ({
		json: {
			count,
			next,
			previous: null,
			results: ids.map((id) => ({ id, filename: `${id}.pdf` })),
		},
	});

	it('a service that repeats the same page forever: stops at the repeat, 2 requests', async () => {
		emulator().injectFaults({ method: 'GET', path: '/v0/documents' }, [
			{ ...page(['a', 'b'], 'http://x/v0/documents?page=2'), forever: true },
		]);
		const { items, error } = await runNode(listAll('document'));
		expect(error).toBeUndefined();
		expect(items.map((i) => i.json.id)).toEqual(['a', 'b']);
		expect(gets()).toHaveLength(2);
	});

	it('next never null: stops when count is reached', async () => {
		emulator().injectFaults({ method: 'GET', path: '/v0/documents' }, [
			page(['a', 'b'], 'n', 4),
			page(['c', 'd'], 'n', 4),
			page(['e'], 'n', 4),
		]);
		const { items } = await runNode(listAll('document'));
		expect(items.map((i) => i.json.id)).toEqual(['a', 'b', 'c', 'd']);
		expect(gets()).toHaveLength(2);
	});

	it('new items on every page, without end: a clear error at the page cap', async () => {
		const pages = Array.from({ length: 1001 }, (_, i) => page([`d${i}`], 'n'));
		emulator().injectFaults({ method: 'GET', path: '/v0/documents' }, pages);
		const { error } = await runNode(listAll('document'));
		expect(error?.message).toBe(
			'Stopped reading the list after 1000 pages: the service kept announcing a next page',
		);
		expect(gets()).toHaveLength(1000);
	});

	it.each([
		[
			'a list',
			['not', 'a', 'page'],
			'The service answered HTTP 200 with a JSON list instead of a JSON object',
		],
		[
			'an object without results',
			{ count: 3 },
			'The service answered HTTP 200 with an object without a "results" list of objects instead of a page of results',
		],
	])('a list answer that is not a page (%s) is an error', async (_name, json, message) => {
		emulator().injectFaults({ method: 'GET', path: '/extract/' }, [{ json }]);
		const { error, items } = await runNode(listAll('extraction'));
		expect(items).toEqual([]);
		expect(error?.name).toBe('NodeApiError');
		expect(error?.message).toBe(message);
	});
});

describe('5. Timeouts are deadlines', () => {
	it('polls that hang 60 s: Wait Timeout 3 s ends the wait at 3 s, naming the job', async () => {
		emulator().setProcessingMs(120_000);
		emulator().injectFaults({ method: 'GET', path: EXTRACT_POLL }, [
			// Every poll hangs until the client leaves: the run ends only because the deadline does.
			{ delayMs: 3_600_000, forever: true },
		]);
		const { error } = await runNode(extractWithOptions({ timeout: 3 }), [await fileItem()]);
		expect(error?.message).toMatch(new RegExp(`^Timed out after 3 s waiting for Extract ${UUID}`));
	});

	it('an answer dripping one byte a second: Request Timeout 2 s aborts it', async () => {
		const id = await uploadedDocumentId();
		emulator().injectFaults({ method: 'GET', path: `/v0/documents/${id}` }, [{ dripMs: 1000 }]);
		// The body would drip for minutes: the run ends only because Request Timeout does.
		const { error } = await runNode({
			resource: 'document',
			operation: 'get',
			documentId: id,
			options: { requestTimeout: 2, maxRetries: 0 },
		});
		expect(error?.message).toMatch(/^The request to 127\.0\.0\.1:\d+ timed out after 2 s$/);
		// The attempt was aborted on the wire, not just abandoned: the service sees the client leave
		// (logged when its socket closes, however long that takes here).
		while (!gets().at(-1)?.closed) await new Promise((resolve) => setTimeout(resolve, 50));
		expect(gets().at(-1)).toMatchObject({ path: `/v0/documents/${id}`, status: 0 });
	});
});

describe('6. An unfinished job keeps its id', () => {
	it.each([
		['503', { status: 503 }],
		['garbage', { body: '<html>maintenance</html>' }],
	])(
		'answers of %s at the deadline: the unfinished item with its id and last good status',
		async (_name, fault) => {
			emulator().setProcessingMs(120_000);
			emulator().injectFaults({ method: 'GET', path: EXTRACT_POLL }, [
				{},
				{ ...fault, forever: true },
			]);
			const { items, error } = await runNode(
				extractWithOptions({ timeout: 5, onTimeout: 'outputUnfinished', maxRetries: 0 }),
				[await fileItem()],
			);
			expect(error).toBeUndefined();
			expect(items).toHaveLength(1);
			expect(items[0].json).toMatchObject({
				timedOut: true,
				status: expect.stringMatching(/^(IN_QUEUE|IN_PROGRESS)$/),
			});
			expect(String(items[0].json.id)).toMatch(new RegExp(`^${UUID}$`));
		},
	);

	it('every wait error names the job: a 401 in the middle of the wait', async () => {
		emulator().setProcessingMs(120_000);
		emulator().injectFaults({ method: 'GET', path: EXTRACT_POLL }, [
			{ status: 401, json: { detail: 'Invalid API key.' } },
		]);
		const { error } = await runNode(extractWithOptions({ timeout: 20 }), [await fileItem()]);
		const created = apiRequests()
			.find((r) => r.method === 'GET')!
			.path.split('/')
			.pop();
		expect(error?.message).toBe('The API key is missing or invalid');
		expect(String(error?.description)).toContain(`Extract ${created}`);
	});
});

describe('7. Continue On Fail keeps every created job', () => {
	it('3 attachments, one ends ERROR: 2 finished items and 1 error item with its id, all paired to the input item', async () => {
		const item = await attachments('a.pdf', 'b.pdf', 'c.pdf');
		const { items, error } = await runNode(
			extractionWithOptions({
				allBinaryProperties: true,
				metadata: '{"emulator_fail_files": ["b.pdf"]}',
			}),
			[item],
			{ node: { continueOnFail: true } },
		);
		expect(error).toBeUndefined();
		expect(items).toHaveLength(3);
		expect(items.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 0 }, { item: 0 }]);
		expect(items[0].json).toMatchObject({ status: 'FINISHED', document_name: 'a.pdf' });
		expect(items[1].json).toMatchObject({
			error: expect.stringMatching(/^Extraction [0-9a-f-]{36} failed: /),
		});
		expect(String(items[1].json.id)).toMatch(new RegExp(`^${UUID}$`));
		expect(items[2].json).toMatchObject({ status: 'FINISHED', document_name: 'c.pdf' });
		expect(apiRequests().filter((r) => r.method === 'POST')).toHaveLength(3);
	});
});

describe('7b. Continue On Fail keeps every uploaded document', () => {
	it('2 attachments, the second upload answered 500: 1 document item and 1 error item, both paired', async () => {
		const item = await attachments('a.pdf', 'b.pdf');
		emulator().injectFaults({ method: 'POST', path: '/v0/documents' }, [{}, { status: 500 }]);
		const { items, error } = await runNode(
			{ resource: 'document', operation: 'upload', options: { allBinaryProperties: true } },
			[item],
			{
				node: { continueOnFail: true },
			},
		);
		expect(error).toBeUndefined();
		expect(items.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 0 }]);
		const stored = items.filter((i) => i.json.error === undefined);
		const failed = items.filter((i) => i.json.error !== undefined);
		expect(stored).toHaveLength(1);
		expect(String(stored[0].json.id)).toMatch(new RegExp(`^${UUID}$`));
		expect(failed.map((i) => i.json.error)).toEqual(['The service failed with HTTP 500']);
	});
});

describe('8. A failed execution names the jobs it created', () => {
	it('without Continue On Fail, the error lists the ids of the jobs already accepted', async () => {
		const inputs = await Promise.all(
			[0, 1, 2].map((i) => fileItem({ data: { bytes: SAMPLE_PDF, fileName: `doc${i}.pdf` } })),
		);
		const { error } = await runNode(
			extractionWithOptions({ metadata: '{"emulator_fail_files": ["doc1.pdf"]}' }),
			inputs,
		);
		expect(error?.message).toMatch(/^Extraction [0-9a-f-]{36} failed: /);
		// What the service holds: the three extractions of this run.
		const list = await fetch(`${emulator().url}/extract/?size=100`, {
			headers: { authorization: TOKEN },
		});
		const ids = (
			(await list.json()) as { results: Array<{ id: string; document_name: string }> }
		).results
			.filter((e) => /^doc[012]\.pdf$/.test(e.document_name))
			.map((e) => e.id);
		expect(ids).toHaveLength(3);
		for (const id of ids) expect(String(error?.description)).toContain(id);
		expect(String(error?.description)).toMatch(/Already created at the service in this execution/);
	});
});
