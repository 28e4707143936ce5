import { createHash } from 'node:crypto';

import { extractCreate, extractGet } from './helpers/params';
import { SAMPLE_PDF, SAMPLE_RESULT, useNode } from './helpers/setup';

const { emulator, runNode, credentialsFor, apiRequests, fileItem } = useNode();

describe('Extract → Create (§v0-4.8) with Wait for Completion', () => {
	it('extracts the sample invoice: FINISHED with the exact field values', async () => {
		const { items, error } = await runNode(extractCreate(), [await fileItem()]);
		expect(error).toBeUndefined();
		expect(items).toHaveLength(1);
		expect(items[0].json).toEqual({
			id: expect.any(String),
			status: 'FINISHED',
			schema: 'Invoice',
			filename: 'invoice.pdf',
			...SAMPLE_RESULT,
		});
		expect(items[0].pairedItem).toEqual({ item: 0 });
	});

	it('uploads the file byte for byte as native multipart, with the key only in X-API-Key', async () => {
		const { items } = await runNode(extractCreate({ simplify: false }), [await fileItem()]);
		const extract = items[0].json as { parsing: { document: { id: string } } };
		const stored = emulator().getStoredFile(extract.parsing.document.id);
		expect(stored).toBeDefined();
		expect(createHash('sha256').update(stored!).digest('hex')).toBe(
			createHash('sha256').update(SAMPLE_PDF).digest('hex'),
		);
		const post = apiRequests().find((r) => r.method === 'POST' && r.path === '/v0/extract')!;
		expect(post.contentType).toMatch(/^multipart\/form-data; boundary=/);
		expect(post.headers['x-api-key']).toBe(emulator().apiKey);
		expect(post.headers.authorization).toBeUndefined();
	});

	it('polls GET /v0/extract/{id} no sooner than 2 s after creation and stops at the final state', async () => {
		await runNode(extractCreate(), [await fileItem()]);
		const log = apiRequests();
		const post = log.find((r) => r.method === 'POST')!;
		const polls = log.filter((r) => r.method === 'GET' && r.path.startsWith('/v0/extract/'));
		expect(polls.length).toBeGreaterThanOrEqual(1);
		expect(polls[0].at - post.at).toBeGreaterThanOrEqual(1900);
		for (let i = 1; i < polls.length; i++)
			expect(polls[i].at - polls[i - 1].at).toBeGreaterThanOrEqual(1900);
	});

	it('keeps the order and pairedItem of three input items', async () => {
		const files = await Promise.all(
			['a', 'b', 'c'].map((n) => fileItem({ data: { bytes: SAMPLE_PDF, fileName: `${n}.pdf` } })),
		);
		const { items } = await runNode(extractCreate(), files);
		expect(items.map((i) => i.json.filename)).toEqual(['a.pdf', 'b.pdf', 'c.pdf']);
		expect(items.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
	});

	it("reports a processing ERROR with the service's error text", async () => {
		const { error, items } = await runNode(
			extractCreate({ options: { metadata: '{"emulator_outcome": "ERROR"}' } }),
			[await fileItem()],
		);
		expect(items).toHaveLength(0);
		expect(error?.message).toMatch(/^Extract [0-9a-f-]{36} failed: Emulated processing failure/);
	});

	it('gives up after Timeout seconds with an error that names the job and how to resume', async () => {
		// The emulator holds the job unfinished: the run ends only because the node's deadline does.
		const { error } = await runNode(
			extractCreate({ options: { timeout: 3, metadata: '{"emulator_hold": true}' } }),
			[await fileItem()],
		);
		expect(error?.message).toMatch(
			/^Timed out after 3 s waiting for Extract [0-9a-f-]{36} \(last status (IN_QUEUE|IN_PROGRESS)\)/,
		);
		expect(String(error?.description)).toContain('Get operation');
	});

	it('turns a 401 into an error about the API key, without the key in it', async () => {
		const { error } = await runNode(extractCreate(), [await fileItem()], {
			credentials: credentialsFor({ apiKey: 'wrong-key-7f3a' }),
		});
		expect(error?.message).toBe('The API key is missing or invalid');
		expect(JSON.stringify({ m: error?.message, d: error?.description })).not.toContain(
			'wrong-key-7f3a',
		);
	});

	it('turns a 400 into an error listing the field and its message', async () => {
		const { error } = await runNode(
			extractCreate({ schemaId: '00000000-0000-4000-8000-000000000000' }),
			[await fileItem()],
		);
		expect(error?.message).toMatch(/^The service rejected the request: schema: /);
	});

	it('with Continue On Fail, a failing item becomes an error item and the others come out intact', async () => {
		const good = await fileItem();
		const { items } = await runNode(extractCreate(), [good, { json: {} }, good], {
			node: { continueOnFail: true },
		});
		expect(items).toHaveLength(3);
		expect(items[0].json.status).toBe('FINISHED');
		expect(items[1].json.error).toMatch(/Input Binary Field.*item 1 has no binary property "data"/);
		expect(items[2].json.status).toBe('FINISHED');
		expect(items.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
	});
});

describe('Extract → Get (§v0-4.9)', () => {
	it('retrieves an extract by id', async () => {
		const created = await runNode(extractCreate({ waitForCompletion: false }), [await fileItem()]);
		const id = created.items[0].json.id as string;
		const { items } = await runNode(extractGet(id, { waitForCompletion: true }));
		expect(items[0].json).toMatchObject({ id, status: 'FINISHED', ...SAMPLE_RESULT });
	});

	it('names the extract in a 404', async () => {
		const id = '11111111-2222-4333-8444-555555555555';
		const { error } = await runNode(extractGet(id));
		expect(error?.message).toBe(`Extract ${id} was not found`);
	});
});
