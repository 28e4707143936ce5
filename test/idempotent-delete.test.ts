/**
 * Issue 20, item 5: a delete whose answer is lost after the service deleted (a reset, a 502) is
 * retried, gets 404, and that 404 means it is gone: the item outputs `deleted: true`. A 404 on the
 * first attempt still fails (a wrong id). Written to fail before the fix.
 */
import { byId, extractionCreate, onExtraction } from './helpers/params';
import { INVOICE_SCHEMA, useNode } from './helpers/setup';

const { emulator, runNode, apiRequests, fileItem } = useNode({ processingMs: 0 });

afterEach(() => emulator().clearFaults());

async function newExtraction(): Promise<string> {
	const { items, error } = await runNode(
		extractionCreate({ schema: byId(INVOICE_SCHEMA), waitForCompletion: false }),
		[await fileItem()],
	);
	if (error) throw error;
	return String(items[0].json.id);
}

describe('Idempotent delete', () => {
	it.each([
		['a 502 after deleting', { status: 502, afterHandling: true }],
		['a connection reset after deleting', { drop: true, afterHandling: true }],
	])(
		'Extraction → Delete: %s, then the retry gets 404: the item outputs deleted: true',
		async (_label, fault) => {
			const id = await newExtraction();
			emulator().clearLog();
			emulator().injectFaults({ method: 'DELETE', path: `/extract/${id}/` }, [fault]);
			const { items, error } = await runNode(onExtraction('delete', id));
			const deletes = apiRequests()
				.filter((r) => r.method === 'DELETE')
				.map((r) => r.status);
			expect({
				error: error?.message,
				deleted: items[0]?.json.deleted,
				attempts: deletes.length,
				last: deletes.at(-1),
			}).toEqual({ error: undefined, deleted: true, attempts: 2, last: 404 });
		},
	);

	it('Schema → Delete: a 502 after deleting, then 404: deleted: true', async () => {
		const created = await runNode({
			resource: 'schema',
			operation: 'create',
			name: 'To delete',
			description: 'd',
			definition: '{"type": "object", "properties": {"total": {"type": "number"}}}',
		});
		const id = String(created.items[0].json.id);
		emulator().injectFaults({ method: 'DELETE', path: `/schema/${id}/` }, [
			{ status: 502, afterHandling: true },
		]);
		const { items, error } = await runNode({
			resource: 'schema',
			operation: 'delete',
			schema: byId(id),
		});
		expect({ error: error?.message, deleted: items[0]?.json.deleted }).toEqual({
			error: undefined,
			deleted: true,
		});
	});

	it('a 404 on the first attempt still fails: the id was wrong', async () => {
		const { error } = await runNode(onExtraction('delete', '0f1e2d3c-4b5a-4697-8899-aabbccddeeff'));
		expect(error?.message).toMatch(/not found/i);
	});
});
