/**
 * Saved workflows keep working: a workflow saved with node version 1 (test/fixtures/saved-v1-workflow.json,
 * written before version 2 moved the execution settings and turned IDs into resource locators) runs
 * through n8n-core unchanged, with its version-1 parameters read as version 1 reads them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { runWorkflow } from '../scripts/engine';
import { INVOICE_SCHEMA, SAMPLE_RESULT, useNode } from './helpers/setup';

const { credentialsFor, apiRequests, fileItem } = useNode();
const saved = JSON.parse(
	readFileSync(path.join(__dirname, 'fixtures', 'saved-v1-workflow.json'), 'utf8'),
);

/** Runs the saved workflow from `startNode` on the sample invoice; fails the test when the run failed. */
async function runSaved(startNode: string) {
	const { output, error } = await runWorkflow({
		workflow: saved,
		startNode,
		input: [await fileItem()],
		credentials: credentialsFor(),
	});
	expect(error).toBeUndefined();
	return output;
}

describe('A workflow saved with node version 1', () => {
	it('/v0 chain: upload → extract from the document id → get the extract → get its parsing', async () => {
		const output = await runSaved('Upload Document');
		const [document] = output('Upload Document');
		expect(document.binary?.data?.fileName).toBe('invoice.pdf'); // options.includeInputBinary
		const [extract] = output('Extract From Document');
		expect(extract.json).toMatchObject({ status: 'FINISHED', schema: 'Invoice', ...SAMPLE_RESULT });
		const [full] = output('Get Extract');
		expect(full.json).toMatchObject({
			id: extract.json.id,
			status: 'FINISHED',
			schema: { id: INVOICE_SCHEMA },
		});
		const [parsing] = output('Get Parsing');
		expect(parsing.json).toMatchObject({ status: 'FINISHED', document: { id: document.json.id } });
		const create = apiRequests().find((r) => r.method === 'POST' && r.path === '/v0/extract');
		expect(create?.contentType).toMatch(/^application\/json/);
	});

	it('token chain: create an extraction (page range, server) → get it → delete it', async () => {
		const output = await runSaved('Create Extraction');
		const [created] = output('Create Extraction');
		expect(created.json).toMatchObject({
			status: 'FINISHED',
			document_name: 'invoice.pdf',
			...SAMPLE_RESULT,
		});
		const [got] = output('Get Extraction');
		expect(got.json).toMatchObject({ id: created.json.id, status: 'FINISHED' });
		expect(output('Delete Extraction').map((i) => i.json)).toEqual([
			{ id: created.json.id, deleted: true },
		]);
		const post = apiRequests().find((r) => r.method === 'POST' && r.path === '/extract/');
		expect(post?.query).toEqual({ pdf_page_start: '1', pdf_page_end: '1' });
	});
});
