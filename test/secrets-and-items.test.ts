import type { INodeExecutionData } from 'n8n-workflow';

import type { RunResult } from '../scripts/engine';
import {
	extractGet,
	extractWithOptions,
	extractionCreate,
	listAll,
	onDocument,
	visible,
} from './helpers/params';
import { INVOICE_SCHEMA, useNode } from './helpers/setup';

const KEY = 'SENTINEL-KEY-9f8e7d6c';
const TOKEN = 'SENTINEL-TOKEN-1a2b3c4d';
const EXPIRED = 'SENTINEL-EXPIRED-5e6f7a8b';
const WRONG = 'SENTINEL-WRONG-0c9d8e7f';
const SECRETS = [KEY, TOKEN, EXPIRED, WRONG];

const { emulator, runNode, credentialsFor, apiRequests, fileItem } = useNode({
	apiKey: KEY,
	token: TOKEN,
	expiredToken: EXPIRED,
});
/** Schema → Get Many, all pages, with these `runNode` options (other credentials). */
const listSchemas = async (options: Parameters<typeof runNode>[2]) =>
	await runNode(listAll('schema'), undefined, options);

describe('Secrets never leave the auth header', () => {
	const scenarios: Array<[string, () => Promise<RunResult & { items: INodeExecutionData[] }>]> = [
		['success', async () => await runNode(extractWithOptions(), [await fileItem()])],
		[
			'401 wrong API key',
			async () =>
				await runNode(extractWithOptions(), [await fileItem()], {
					credentials: credentialsFor({ apiKey: WRONG }),
				}),
		],
		[
			'401 expired token',
			async () => await listSchemas({ credentials: credentialsFor({ token: EXPIRED }) }),
		],
		[
			'401 wrong token under Continue On Fail',
			async () =>
				await listSchemas({
					credentials: credentialsFor({ token: WRONG }),
					node: { continueOnFail: true },
				}),
		],
		[
			'400 field errors',
			async () =>
				await runNode(
					extractWithOptions({}, { schemaId: '00000000-0000-4000-8000-000000000000' }),
					[await fileItem()],
				),
		],
		['404', async () => await runNode(extractGet('11111111-2222-4333-8444-555555555555'))],
		[
			'403 credits',
			async () => {
				const before = emulator().getCredits();
				emulator().setCredits(0);
				try {
					return await runNode(extractionCreate(), [await fileItem()]);
				} finally {
					emulator().setCredits(before);
				}
			},
		],
		[
			'processing ERROR',
			async () =>
				await runNode(extractWithOptions({ metadata: '{"emulator_outcome": "ERROR"}' }), [
					await fileItem(),
				]),
		],
		[
			'timeout',
			async () =>
				await runNode(extractWithOptions({ timeout: 1, metadata: '{"emulator_hold": true}' }), [
					await fileItem(),
				]),
		],
		[
			'5xx after retries',
			async () => {
				emulator().injectFaults({ method: 'GET', path: '/v0/documents' }, [
					{ status: 502 },
					{ status: 502 },
				]);
				return await runNode({
					resource: 'document',
					operation: 'getAll',
					returnAll: true,
					options: { maxRetries: 1 },
				});
			},
		],
		[
			'dropped connection on a create',
			async () => {
				emulator().injectFaults({ method: 'POST', path: '/v0/extract' }, [{ drop: true }]);
				return await runNode(extractWithOptions(), [await fileItem()]);
			},
		],
		[
			'connection refused',
			async () =>
				await runNode(extractWithOptions({ maxRetries: 0 }), [await fileItem()], {
					credentials: credentialsFor({ baseUrl: 'http://127.0.0.1:9' }),
				}),
		],
		[
			'bad input',
			async () => await runNode(extractWithOptions({ metadata: '[1]' }), [await fileItem()]),
		],
		[
			'download redirected to another origin',
			async () => {
				const doc = await runNode({ resource: 'document', operation: 'upload' }, [
					await fileItem(),
				]);
				return await runNode(onDocument('download', doc.items[0].json.id));
			},
		],
	];

	it.each(scenarios)('%s', async (_name, scenario) => {
		const result = await scenario();
		emulator().clearFaults();
		const shown = visible(result);
		for (const secret of SECRETS) expect(shown).not.toContain(secret);
		for (const request of emulator().requests) {
			const { authorization, 'x-api-key': apiKey, ...otherHeaders } = request.headers;
			const elsewhere = JSON.stringify({ path: request.path, query: request.query, otherHeaders });
			for (const secret of SECRETS) expect(elsewhere).not.toContain(secret);
			if (request.origin === 'files')
				expect([authorization, apiKey]).toEqual([undefined, undefined]);
			if (request.path.startsWith('/v0/')) expect(authorization).toBeUndefined();
			else if (request.origin === 'api') expect(apiKey).toBeUndefined();
		}
	});
});

describe('Nothing lost: Continue On Fail on every operation', () => {
	it('10 items where items 3 and 7 fail: 2 error items paired to them, 8 intact results, input order kept', async () => {
		const inputs = await Promise.all(
			Array.from({ length: 10 }, (_, i) =>
				fileItem(undefined, {
					schema:
						i === 3
							? 'not-a-uuid'
							: i === 7
								? '00000000-0000-4000-8000-000000000000'
								: INVOICE_SCHEMA,
					n: i,
				}),
			),
		);
		const { items, error } = await runNode(
			extractWithOptions({}, { schemaId: '={{ $json.schema }}' }),
			inputs,
			{ node: { continueOnFail: true } },
		);
		expect(error).toBeUndefined();
		expect(items).toHaveLength(10);
		expect(items.map((i) => i.pairedItem)).toEqual(inputs.map((_, i) => ({ item: i })));
		expect(items[3].json.error).toBe('Parameter "Schema ID" must be a UUID, got "not-a-uuid"');
		expect(items[7].json).toMatchObject({
			error: 'The service rejected the request: schema: Unknown schema id.',
			httpCode: '400',
		});
		for (const i of [0, 1, 2, 4, 5, 6, 8, 9])
			expect(items[i].json).toMatchObject({ status: 'FINISHED', invoice_number: 'INV-2026-0042' });
		// Item 3 was refused before sending; the others were all created.
		expect(apiRequests().filter((r) => r.method === 'POST')).toHaveLength(9);
	});

	it("without Continue On Fail, the first failure stops the execution and the other items' polling", async () => {
		const inputs = await Promise.all(
			Array.from({ length: 3 }, (_, i) =>
				fileItem(undefined, { schema: i === 1 ? 'bad' : INVOICE_SCHEMA }),
			),
		);
		// The other items' jobs are held unfinished: the run ends only because the failure stops them.
		const { error } = await runNode(
			extractWithOptions(
				{ metadata: '{"emulator_hold": true}' },
				{ schemaId: '={{ $json.schema }}' },
			),
			inputs,
		);
		expect(error?.message).toBe('Parameter "Schema ID" must be a UUID, got "bad"');
		const at = Date.now();
		await new Promise((resolve) => setTimeout(resolve, 5500));
		expect(apiRequests().filter((r) => r.at > at)).toEqual([]);
	});

	it('applies to non-job operations too (Document → Get)', async () => {
		const doc = await runNode({ resource: 'document', operation: 'upload' }, [await fileItem()]);
		const ids = [doc.items[0].json.id, '11111111-2222-4333-8444-555555555555', 'nope'];
		const { items } = await runNode(
			{ resource: 'document', operation: 'get', documentId: '={{ $json.id }}' },
			ids.map((id) => ({ json: { id } })),
			{
				node: { continueOnFail: true },
			},
		);
		expect(items.map((i) => i.json.error ?? i.json.id)).toEqual([
			doc.items[0].json.id,
			'Document 11111111-2222-4333-8444-555555555555 was not found',
			'Parameter "Document ID" must be a UUID, got "nope"',
		]);
		expect(items.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
	});
});
