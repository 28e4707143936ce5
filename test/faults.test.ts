import { createServer } from 'node:net';

import { extractWithOptions, onDocument } from './helpers/params';
import { useNode } from './helpers/setup';

const { emulator, runNode, credentialsFor, apiRequests, fileItem } = useNode();

const EXTRACT_POLL = /^\/v0\/extract\/[0-9a-f-]{36}$/;
const posts = () => apiRequests().filter((r) => r.method === 'POST');

afterEach(() => emulator().clearFaults());

describe('Safe requests (GET, DELETE, polls) are retried', () => {
	it.each([500, 502, 503, 504])(
		'a poll answered %i is retried and the job still finishes',
		async (status) => {
			emulator().injectFaults({ method: 'GET', path: EXTRACT_POLL }, [{ status }]);
			const { items, error } = await runNode(extractWithOptions(), [await fileItem()]);
			expect(error).toBeUndefined();
			expect(items[0].json.status).toBe('FINISHED');
			const polls = apiRequests().filter((r) => r.method === 'GET');
			expect(polls[0].status).toBe(status);
			expect(polls.at(-1)!.status).toBe(200);
		},
	);

	it('a dropped connection on a GET is retried', async () => {
		const doc = await runNode({ resource: 'document', operation: 'upload' }, [await fileItem()]);
		emulator().injectFaults({ method: 'GET', path: `/v0/documents/${doc.items[0].json.id}` }, [
			{ drop: true },
		]);
		const { items, error } = await runNode(onDocument('get', doc.items[0].json.id));
		expect(error).toBeUndefined();
		expect(items[0].json.id).toBe(doc.items[0].json.id);
		expect(
			apiRequests()
				.filter((r) => r.method === 'GET')
				.map((r) => r.status),
		).toEqual([0, 200]);
	});

	it('a GET slower than Request Timeout is aborted and retried', async () => {
		const doc = await runNode({ resource: 'document', operation: 'upload' }, [await fileItem()]);
		emulator().injectFaults({ method: 'GET', path: `/v0/documents/${doc.items[0].json.id}` }, [
			{ delayMs: 2500 },
		]);
		const { items, error } = await runNode({
			resource: 'document',
			operation: 'get',
			documentId: doc.items[0].json.id,
			options: { requestTimeout: 1 },
		});
		expect(error).toBeUndefined();
		expect(items[0].json.id).toBe(doc.items[0].json.id);
		expect(apiRequests().filter((r) => r.method === 'GET').length).toBe(2);
	});

	it('gives up after Max Retries with the last status in the message', async () => {
		emulator().injectFaults({ method: 'GET', path: '/v0/documents' }, [
			{ status: 503 },
			{ status: 503 },
			{ status: 503 },
		]);
		const { error } = await runNode({
			resource: 'document',
			operation: 'getAll',
			returnAll: true,
			options: { maxRetries: 2 },
		});
		expect(error?.message).toBe('The service failed with HTTP 503');
		expect(apiRequests()).toHaveLength(3);
	});

	it('polling outlives failures beyond Max Retries: a failed poll is skipped, not reported as a failed job', async () => {
		emulator().injectFaults({ method: 'GET', path: EXTRACT_POLL }, [
			{ status: 502 },
			{ status: 503 },
		]);
		const { items, error } = await runNode(extractWithOptions({ maxRetries: 0 }), [
			await fileItem(),
		]);
		expect(error).toBeUndefined();
		expect(items[0].json.status).toBe('FINISHED');
	});
});

describe('Creates (POST) are retried only when the service surely did not act', () => {
	it('429 with Retry-After in seconds: waits that long, then retries', async () => {
		emulator().injectFaults({ method: 'POST', path: '/v0/extract' }, [
			{ status: 429, retryAfter: '1' },
		]);
		const { items, error } = await runNode(extractWithOptions(), [await fileItem()]);
		expect(error).toBeUndefined();
		expect(items[0].json.status).toBe('FINISHED');
		const [first, second] = posts();
		expect(first.status).toBe(429);
		expect(second.status).toBe(201);
		expect(second.at - first.at).toBeGreaterThanOrEqual(950);
	});

	it('429 with Retry-After as an HTTP date is honoured too', async () => {
		const when = new Date(Date.now() + 2000).toUTCString();
		emulator().injectFaults({ method: 'POST', path: '/v0/extract' }, [
			{ status: 429, retryAfter: when },
		]);
		const { error } = await runNode(extractWithOptions(), [await fileItem()]);
		expect(error).toBeUndefined();
		const [first, second] = posts();
		expect(second.at - first.at).toBeGreaterThanOrEqual(900);
		expect(second.status).toBe(201);
	});

	it.each([500, 502, 503, 504])(
		'a create answered %i is not retried (it may have been processed)',
		async (status) => {
			emulator().injectFaults({ method: 'POST', path: '/v0/extract' }, [{ status }]);
			const { error } = await runNode(extractWithOptions(), [await fileItem()]);
			expect(error?.message).toBe(`The service failed with HTTP ${status}`);
			expect(posts()).toHaveLength(1);
		},
	);

	it('a create whose connection drops is not retried', async () => {
		emulator().injectFaults({ method: 'POST', path: '/v0/extract' }, [{ drop: true }]);
		const { error } = await runNode(extractWithOptions(), [await fileItem()]);
		expect(error?.message).toMatch(
			/^Could not reach the Extraction Service at 127\.0\.0\.1:\d+: the connection was closed by the server$/,
		);
		expect(String(error?.description)).toContain('not retried');
		expect(posts()).toHaveLength(1);
	});

	it('a create slower than Request Timeout is not retried, and the error says it timed out', async () => {
		emulator().injectFaults({ method: 'POST', path: '/v0/extract' }, [{ delayMs: 2500 }]);
		const { error } = await runNode(extractWithOptions({ requestTimeout: 1 }), [await fileItem()]);
		expect(error?.message).toMatch(/^The request to 127\.0\.0\.1:\d+ timed out after 1 s$/);
		expect(posts()).toHaveLength(1);
	});

	it('a refused connection (nothing sent) is retried, then reported', async () => {
		const port = await new Promise<number>((resolve) => {
			const server = createServer();
			server.listen(0, '127.0.0.1', () => {
				const { port: free } = server.address() as { port: number };
				server.close(() => resolve(free));
			});
		});
		const started = Date.now();
		const { error } = await runNode(extractWithOptions({ maxRetries: 1 }), [await fileItem()], {
			credentials: credentialsFor({ baseUrl: `http://127.0.0.1:${port}` }),
		});
		expect(error?.message).toBe(
			`Could not reach the Extraction Service at 127.0.0.1:${port}: the connection was refused`,
		);
		expect(Date.now() - started).toBeGreaterThanOrEqual(700); // one backoff wait before giving up
	});
});
