/**
 * Simplify (nodes/shared/output.ts) never loses a field: from node version 4 the job's fields keep their
 * names and an extracted field they would have replaced comes out as `extracted_<name>`; versions
 * 1–3 (saved workflows) keep the output they always had. Split Into Items on an empty list outputs
 * one item for the job.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import fc from 'fast-check';
import type { IDataObject } from 'n8n-workflow';

import { makePdf } from '../emulator/sample-pdf';
import { simplifyResult } from '../nodes/shared/simplify';
import { createTriggerHarness, runWorkflow } from '../scripts/engine';
import { byId, extractionCreate } from './helpers/params';
import { useNode } from './helpers/setup';

const { emulator, runNode, apiRequests, fileItem, credentialsFor, createSchema } = useNode();

/** An invoice that has its own id, status and error, as ordinary invoices do. */
const INVOICE_LINES = ['Id: INV-7', 'Status: paid', 'Error: none', 'Total amount: 12.5'];

const invoiceSchema = async () =>
	await createSchema({
		type: 'object',
		properties: {
			id: { type: 'string' },
			status: { type: 'string' },
			error: { type: 'string' },
			total_amount: { type: 'number' },
		},
	});

/** What version 4 (and trigger version 2) outputs for that invoice: the job's fields, then the invoice's. */
const keptJobFields = (id: string) => ({
	id,
	status: 'FINISHED',
	document_name: 'invoice.pdf',
	total_amount: 12.5,
	extracted_id: 'INV-7',
	extracted_status: 'paid',
	extracted_error: 'none',
});

const invoiceItem = async (lines = INVOICE_LINES) =>
	await fileItem({ data: { bytes: await makePdf([lines]), fileName: 'invoice.pdf' } });

/** The id of the one extraction created since the log was cleared (the path its polls read). */
const createdId = () => {
	const reads = apiRequests()
		.map((r) => /^\/extract\/([0-9a-f-]{36})\/$/.exec(r.path)?.[1])
		.filter((id) => id !== undefined);
	expect(new Set(reads).size).toBe(1);
	return reads[0];
};

describe('Simplify keeps the job fields (node version 4)', () => {
	it("an invoice's own id, status and error do not replace the extraction's: they come out as extracted_*", async () => {
		const schema = await invoiceSchema();
		const { items, error } = await runNode(
			extractionCreate({ schema: byId(schema), options: { checkAgainstSchema: false } }),
			[await invoiceItem()],
			{ node: { typeVersion: 4 } },
		);
		expect(error).toBeUndefined();
		expect(items[0].json).toEqual(keptJobFields(createdId()));
	});

	it('version 1 (and 2, 3): the extracted fields win, as they always did', async () => {
		const schema = await invoiceSchema();
		for (const typeVersion of [1, 2, 3]) {
			const { items, error } = await runNode(
				extractionCreate({ schema: byId(schema) }),
				[await invoiceItem()],
				{ node: { typeVersion } },
			);
			expect(error).toBeUndefined();
			expect(items[0].json).toEqual({
				id: 'INV-7',
				status: 'paid',
				error: 'none',
				document_name: 'invoice.pdf',
				total_amount: 12.5,
			});
		}
	});

	it('a version-3 workflow saved before the change outputs what it always did', async () => {
		const schema = await invoiceSchema();
		const saved = JSON.parse(
			readFileSync(path.join(__dirname, 'fixtures', 'saved-v3-simplify.json'), 'utf8'),
		) as Parameters<typeof runWorkflow>[0]['workflow'];
		// The saved node names a schema of its own account; this emulator's schema takes its place.
		(saved.nodes[0].parameters.schema as IDataObject).value = schema;
		const { output, error } = await runWorkflow({
			workflow: saved,
			startNode: 'Read Invoice',
			input: [await invoiceItem()],
			credentials: credentialsFor(),
		});
		expect(error).toBeUndefined();
		expect(output('Read Invoice')[0].json).toMatchObject({ id: 'INV-7', status: 'paid' });
	});
});

describe('Simplify in the trigger (Extraction Finished)', () => {
	it('version 2 keeps the extraction id and status beside extracted_*; version 1 as before', async () => {
		const schema = await invoiceSchema();
		// One trigger at a time: the harness's workflow keeps one id, and the trigger's state is kept by it.
		const firstPoll = async (typeVersion: number) => {
			const harness = createTriggerHarness({
				parameters: { event: 'extractionFinished' },
				credentials: credentialsFor(),
				typeVersion,
			});
			expect((await harness.activate()).error).toBeUndefined();
			emulator().clearLog();
			const created = await runNode(extractionCreate({ schema: byId(schema) }), [
				await invoiceItem(),
			]);
			expect(created.error).toBeUndefined();
			const id = createdId();
			const poll = await harness.poll();
			expect(poll.error).toBeUndefined();
			return { id, items: poll.items.map((item) => item.json) };
		};
		const v1 = await firstPoll(1);
		expect(v1.items).toEqual([
			{
				id: 'INV-7',
				status: 'paid',
				error: 'none',
				document_name: 'invoice.pdf',
				total_amount: 12.5,
			},
		]);
		const v2 = await firstPoll(2);
		expect(v2.items).toEqual([keptJobFields(v2.id)]);
	});
});

describe('Split Into Items on an empty list (every version)', () => {
	it('outputs one item for the job: its id, status, an empty list and its validation, paired to its input', async () => {
		const schema = await createSchema({
			type: 'array',
			items: { type: 'object', properties: { amount: { type: 'number' } } },
		});
		// Version 1, as saved workflows run it: the fix is for every version (the job was lost).
		const { items, error } = await runNode(
			extractionCreate({
				schema: byId(schema),
				options: { splitIntoItems: true, checkAgainstSchema: true },
			}),
			[await invoiceItem(['Amount: 5']), await invoiceItem(['Nothing to read here'])],
		);
		expect(error).toBeUndefined();
		expect(items.map((item) => item.pairedItem)).toEqual([{ item: 0 }, { item: 1 }]);
		expect(items[0].json).toMatchObject({ index: 0, amount: 5 });
		const posts = apiRequests().filter((r) => r.method === 'POST' && r.path === '/extract/');
		expect(posts).toHaveLength(2);
		expect(items[1].json).toEqual({
			id: expect.any(String),
			status: 'FINISHED',
			document_name: 'invoice.pdf',
			result: [],
			validation: { complete: true, missing: [], typeErrors: [], invalid: [] },
		});
		expect(items[1].json.id).not.toBe(items[0].json.id);
	});
});

/** Names the job's fields take in the simplified shape (the meta of an extraction, and the node's own). */
const JOB_FIELDS = ['id', 'status', 'document_name', 'error', 'timedOut', 'validation', 'index'];

describe('Simplify never loses a field (generated data)', () => {
	const key = fc.oneof(
		fc.constantFrom(...JOB_FIELDS, 'extracted_id', 'extracted_status', 'extracted_extracted_id'),
		fc.string({ maxLength: 6 }),
		fc.constant('__proto__'),
	);
	const meta = fc.record({ id: fc.uuid(), status: fc.constantFrom('FINISHED', 'ERROR') });

	it('every extracted value is in the output once, under its name or extracted_…; the job fields keep theirs', () => {
		fc.assert(
			fc.property(
				meta,
				fc.array(fc.tuple(key, fc.jsonValue({ maxDepth: 2 })), { maxLength: 8 }),
				fc.boolean(),
				(jobMeta, entries, asList) => {
					const data = Object.fromEntries(entries) as IDataObject;
					const reserved = new Set(JOB_FIELDS);
					const objects = simplifyResult(asList ? [data] : data, jobMeta, asList, reserved);
					expect(objects).toHaveLength(1);
					const out = objects[0];
					// The job's fields, as the job has them.
					expect(out.id).toBe(jobMeta.id);
					expect(out.status).toBe(jobMeta.status);
					if (asList) expect(out.index).toBe(0);
					// Each extracted field under its own name; one the job's fields take under extracted_<name>,
					// one extracted_ more while that name is taken too.
					const placed = new Set(Object.keys(data).filter((name) => !reserved.has(name)));
					for (const name of Object.keys(data).filter((n) => reserved.has(n))) {
						let at = `extracted_${name}`;
						while (placed.has(at) || reserved.has(at)) at = `extracted_${at}`;
						placed.add(at);
						expect(out[at]).toEqual(data[name]);
					}
					for (const [name, value] of Object.entries(data))
						if (!reserved.has(name)) expect(out[name]).toEqual(value);
					// Nothing else: the job's fields and the extracted ones.
					const expected = Object.keys(jobMeta).length + (asList ? 1 : 0) + placed.size;
					expect(Object.keys(out)).toHaveLength(expected);
				},
			),
			{ seed: 30, numRuns: 300 },
		);
	});
});
