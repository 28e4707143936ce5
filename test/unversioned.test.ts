import JSZip from 'jszip';
import { Container } from '@n8n/di';
import { BinaryDataService } from 'n8n-core';
import type { IBinaryData } from 'n8n-workflow';

import { runListSearch } from '../scripts/engine';
import { attachments, byId, extractionCreate, listAll, onExtraction } from './helpers/params';
import { INVOICE_SCHEMA, SAMPLE_RESULT, WORKFLOW_WITH_SCHEMA, useNode } from './helpers/setup';

const { emulator, runNode, credentialsFor, apiRequests, fileItem } = useNode();
const bytesOf = async (binary: IBinaryData) =>
	await Container.get(BinaryDataService).getAsBuffer(binary);
const createExtraction = (extra: Record<string, unknown> = {}) =>
	extractionCreate({ schema: byId(INVOICE_SCHEMA), ...extra });

async function finishedExtraction(extra: Record<string, unknown> = {}) {
	const { items, error } = await runNode(createExtraction({ simplify: false, ...extra }), [
		await fileItem(),
	]);
	if (error) throw error;
	return items[0].json as Record<string, any>;
}

describe('Extraction (§unversioned-4.1–4.4)', () => {
	it('creates and waits through a 202: extracted data plus id, status and document name, token in Authorization, trailing slashes', async () => {
		// Held until its second read: the first poll gets 202 IN_PROGRESS (§unversioned-4.3), the second
		// 200 FINISHED.
		const { items, error } = await runNode(
			createExtraction({ options: { metadata: '{"emulator_hold": 2}' } }),
			[await fileItem()],
		);
		expect(error).toBeUndefined();
		expect(items[0].json).toEqual({
			id: expect.any(String),
			status: 'FINISHED',
			document_name: 'invoice.pdf',
			...SAMPLE_RESULT,
		});
		const log = apiRequests();
		const job = `/extract/${String(items[0].json.id)}/`;
		expect(log.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
			'POST /extract/ 201',
			`GET ${job} 202`,
			`GET ${job} 200`,
		]);
		expect(
			log.every(
				(r) => r.headers.authorization === emulator().token && r.headers['x-api-key'] === undefined,
			),
		).toBe(true);
	});

	it('full resource: absolute document and image URLs', async () => {
		const extraction = await finishedExtraction();
		expect(extraction.document_url_absolute).toBe(`${emulator().url}${extraction.document_url}`);
		expect(extraction.content_images[0].url_absolute).toBe(
			`${emulator().url}${extraction.content_images[0].url}`,
		);
		expect(extraction.credit_used).toBeGreaterThan(0);
	});

	it('gets, lists (with filters) and deletes an extraction', async () => {
		const extraction = await finishedExtraction({ options: { metadata: '{"batch": "b-77"}' } });
		const got = await runNode(onExtraction('get', extraction.id));
		expect(got.items[0].json).toMatchObject({
			id: extraction.id,
			status: 'FINISHED',
			invoice_number: 'INV-2026-0042',
		});
		const listed = await runNode({
			resource: 'extraction',
			operation: 'getAll',
			returnAll: true,
			filters: { metaKey: 'batch', metaValue: 'b-77' },
		});
		expect(listed.items.map((i) => i.json.id)).toEqual([extraction.id]);
		expect(
			apiRequests().find((r) => r.method === 'GET' && r.path === '/extract/')?.query,
		).toMatchObject({ meta_key: 'batch', meta_value: 'b-77' });
		const deleted = await runNode(onExtraction('delete', extraction.id));
		expect(deleted.items[0].json).toEqual({ id: extraction.id, deleted: true });
		const gone = await runNode(onExtraction('get', extraction.id));
		expect(gone.error?.message).toBe(`Extraction ${extraction.id} was not found`);
	});

	it('downloads CSV (parses), JSON (equals the resource) and images (a zip listing the images)', async () => {
		const extraction = await finishedExtraction();
		const download = async (format: string) => {
			const { items, error } = await runNode({
				resource: 'extraction',
				operation: 'download',
				extractionId: extraction.id,
				format,
			});
			if (error) throw error;
			return items[0].binary!.data;
		};
		const csv = await download('csv');
		expect(csv.fileName).toBe('invoice.csv');
		const [header, row, ...rest] = (await bytesOf(csv)).toString('utf8').trim().split(/\r?\n/);
		expect(rest).toEqual([]);
		const columns = header.split(',');
		expect(columns).toEqual(expect.arrayContaining(Object.keys(SAMPLE_RESULT)));
		expect(row.split(',')[columns.indexOf('invoice_number')]).toBe('INV-2026-0042');

		const json = await download('json');
		expect(json.fileName).toBe('invoice.json');
		const resource = await runNode(onExtraction('get', extraction.id, { simplify: false }));
		const { document_url_absolute: _d, ...withoutAdded } = resource.items[0].json as Record<
			string,
			any
		>;
		withoutAdded.content_images = withoutAdded.content_images.map(
			({ url_absolute: _u, ...image }: Record<string, unknown>) => image,
		);
		expect(JSON.parse((await bytesOf(json)).toString('utf8'))).toEqual(withoutAdded);

		const images = await download('images');
		expect(images.fileName).toBe('invoice-images.zip');
		const zip = await JSZip.loadAsync(await bytesOf(images));
		expect(Object.keys(zip.files).sort()).toEqual(
			extraction.content_images.map((i: { name: string }) => i.name).sort(),
		);
	});

	it('says clearly that an extraction without a schema has nothing to download', async () => {
		const extraction = await finishedExtraction({
			schema: { __rl: true, mode: 'list', value: '' },
		});
		expect(extraction.schema).toBeNull();
		const { error } = await runNode(onExtraction('download', extraction.id, { format: 'csv' }));
		expect(error?.message).toBe(
			`Extraction ${extraction.id} has no schema: there is nothing to download`,
		);
	});

	it('rejects a .docx before any request', async () => {
		const docx = await fileItem({
			data: {
				bytes: Buffer.from('PK\u0003\u0004 fake docx'),
				fileName: 'offer.docx',
				mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
			},
		});
		const { error } = await runNode(createExtraction(), [docx]);
		expect(error?.message).toBe(
			'The file "offer.docx" (application/vnd.openxmlformats-officedocument.wordprocessingml.document) is not a type the service accepts',
		);
		expect(String(error?.description)).toContain('.pdf, .png, .jpg, .jpeg');
		expect(apiRequests()).toHaveLength(0);
	});

	it('says the token expired, from the 401 body', async () => {
		const { error } = await runNode(createExtraction(), [await fileItem()], {
			credentials: credentialsFor({ token: emulator().expiredToken }),
		});
		expect(error?.message).toBe('The token has expired');
		expect(JSON.stringify([error?.message, error?.description])).not.toContain(
			emulator().expiredToken,
		);
	});

	it('says credits are exhausted on a 403', async () => {
		const before = emulator().getCredits();
		emulator().setCredits(0);
		try {
			const { error } = await runNode(createExtraction(), [await fileItem()]);
			expect(error?.message).toMatch(
				/^Insufficient credits: credits: Insufficient credits: 1 needed, 0 available\./,
			);
		} finally {
			emulator().setCredits(before);
		}
	});
});

describe('Schema (§unversioned-4.5–4.9)', () => {
	it('create → get → update → get many → delete round trip', async () => {
		const definition = {
			type: 'object',
			properties: { po_number: { type: 'string', description: 'PO number' } },
		};
		const created = await runNode({
			resource: 'schema',
			operation: 'create',
			name: 'Purchase order',
			description: 'PO fields',
			definition: JSON.stringify(definition),
			options: { additionalInformations: 'PO numbers start with PO-' },
		});
		const schema = created.items[0].json as Record<string, any>;
		expect(schema).toMatchObject({
			id: expect.any(String),
			name: 'Purchase order',
			schema: definition,
			additional_informations: 'PO numbers start with PO-',
		});

		const got = await runNode({
			resource: 'schema',
			operation: 'get',
			schema: byId(schema.id),
		});
		expect(got.items[0].json).toMatchObject({ id: schema.id, name: 'Purchase order' });

		const updated = await runNode({
			resource: 'schema',
			operation: 'update',
			schema: byId(schema.id),
			updateFields: { name: 'Purchase order v2' },
		});
		expect(updated.items[0].json).toMatchObject({
			id: schema.id,
			name: 'Purchase order v2',
			description: 'PO fields',
			schema: definition,
		});
		const put = apiRequests().find((r) => r.method === 'PUT');
		expect(put?.path).toBe(`/schema/${schema.id}/`);

		const all = await runNode(listAll('schema'));
		expect(all.items.map((i) => i.json.name)).toEqual(
			expect.arrayContaining(['Invoice', 'Purchase order v2']),
		);

		const deleted = await runNode({
			resource: 'schema',
			operation: 'delete',
			schema: byId(schema.id),
		});
		expect(deleted.items[0].json).toEqual({ id: schema.id, deleted: true });
		const gone = await runNode({
			resource: 'schema',
			operation: 'get',
			schema: byId(schema.id),
		});
		expect(gone.error?.message).toBe(`Schema ${schema.id} was not found`);
	});

	it('refuses a malformed definition before any request', async () => {
		const { error } = await runNode({
			resource: 'schema',
			operation: 'create',
			name: 'x',
			description: 'y',
			definition: '{"type": "object",',
		});
		expect(error?.message).toMatch(/^Parameter "Definition" is not valid JSON/);
		expect(apiRequests()).toHaveLength(0);
	});

	it('lists schemas for the resource locator, filtered by name', async () => {
		const credentials = credentialsFor();
		const all = await runListSearch('searchSchemas', {
			parameters: { resource: 'schema', operation: 'get' },
			credentials,
		});
		expect(all.results).toEqual(
			expect.arrayContaining([expect.objectContaining({ name: 'Invoice', value: INVOICE_SCHEMA })]),
		);
		const filtered = await runListSearch('searchSchemas', {
			parameters: { resource: 'schema', operation: 'get' },
			credentials,
			filter: 'lines',
		});
		expect(filtered.results.map((r) => r.name)).toEqual(['Invoice lines']);
	});

	it('uses a schema picked from the list in an extraction', async () => {
		const { items } = await runNode(
			createExtraction({
				schema: { __rl: true, mode: 'list', value: INVOICE_SCHEMA, cachedResultName: 'Invoice' },
			}),
			[await fileItem()],
		);
		expect(items[0].json).toMatchObject({ status: 'FINISHED', invoice_number: 'INV-2026-0042' });
	});
});

describe('Workflow → Upload (§unversioned-4.10)', () => {
	it('uploads 2 files in one call and outputs one finished extraction per file', async () => {
		const item = await attachments('one.pdf', 'two.pdf');
		const { items, error } = await runNode(
			{
				resource: 'workflow',
				operation: 'upload',
				workflowId: WORKFLOW_WITH_SCHEMA,
				options: { allBinaryProperties: true },
			},
			[item],
		);
		expect(error).toBeUndefined();
		expect(items.map((i) => i.json.document_name)).toEqual(['one.pdf', 'two.pdf']);
		expect(
			items.every((i) => i.json.status === 'FINISHED' && i.json.invoice_number === 'INV-2026-0042'),
		).toBe(true);
		expect(items.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 0 }]);
		const posts = apiRequests().filter((r) => r.method === 'POST');
		expect(posts.map((r) => r.path)).toEqual([`/workflow/${WORKFLOW_WITH_SCHEMA}/extract/`]);
	});

	it('names the workflow in a 404', async () => {
		const id = '99999999-8888-4777-8666-555555555555';
		const { error } = await runNode({ resource: 'workflow', operation: 'upload', workflowId: id }, [
			await fileItem(),
		]);
		expect(error?.message).toBe(`Workflow ${id} was not found`);
	});
});
