/**
 * Check Against Schema (docs/service-api.md §completeness) through n8n's engine: the validation each
 * item gets, the schema read once per execution, the /v0 Schema Definition, and nothing changed when
 * the option is off.
 */
import type { IDataObject } from 'n8n-workflow';

import { byId, extractCreate, extractGet, extractionCreate, onExtraction } from './helpers/params';
import { createTriggerHarness } from '../scripts/engine';
import {
	INVOICE_SCHEMA,
	apiRequests,
	createSchema as createSchemaAt,
	credentialsFor,
	fileItem,
	runNode,
	useEmulator,
} from './helpers/setup';

const emulator = useEmulator();

const INVOICE_PROPERTIES = {
	invoice_number: { type: 'string', description: 'Invoice number' },
	total_amount: { type: 'number', description: 'Total' },
	currency: { type: 'string', description: 'Currency' },
};

/** Creates a schema at the emulator with this definition and returns its id. */
const createSchema = (definition: unknown) => createSchemaAt(emulator(), definition);

const checked = (schema: string, extra: IDataObject = {}, options: IDataObject = {}) =>
	extractionCreate({
		schema: byId(schema),
		...extra,
		options: { checkAgainstSchema: true, ...options },
	});

const schemaReads = () =>
	apiRequests(emulator()).filter((r) => r.method === 'GET' && r.path.startsWith('/schema/'));

describe('Check Against Schema on Extraction → Create (§completeness)', () => {
	it('marks a complete extraction complete, the fields still at the top level', async () => {
		const schema = await createSchema({
			type: 'object',
			required: ['invoice_number', 'total_amount'],
			properties: INVOICE_PROPERTIES,
		});
		const { items, error } = await runNode(emulator(), checked(schema), [await fileItem()]);
		expect(error).toBeUndefined();
		expect(items[0].json).toMatchObject({
			status: 'FINISHED',
			invoice_number: 'INV-2026-0042',
			total_amount: 1234.5,
			validation: { complete: true, missing: [], typeErrors: [], invalid: [] },
		});
		expect(items[0].json.validation).not.toHaveProperty('warning');
	});

	it('lists a required field the document lacks', async () => {
		const schema = await createSchema({
			type: 'object',
			required: ['invoice_number', 'po_number'],
			properties: {
				...INVOICE_PROPERTIES,
				po_number: { type: 'string', description: 'PO number' },
			},
		});
		const { items } = await runNode(emulator(), checked(schema), [await fileItem()]);
		expect(items[0].json.validation).toEqual({
			complete: false,
			missing: ['po_number'],
			typeErrors: [],
			invalid: [],
		});
	});

	it('reads the schema once per execution, however many items use it', async () => {
		const schema = await createSchema({ type: 'object', properties: INVOICE_PROPERTIES });
		const input = await Promise.all([fileItem(), fileItem(), fileItem()]);
		const { items } = await runNode(emulator(), checked(schema), input);
		expect(items.map((item) => item.json.validation)).toEqual(
			Array(3).fill({ complete: true, missing: [], typeErrors: [], invalid: [] }),
		);
		expect(schemaReads().map((r) => r.path)).toEqual([`/schema/${schema}/`]);
	});

	it('puts the validation on the full resource when Simplify is off', async () => {
		const schema = await createSchema({ type: 'object', required: ['nothing_here'] });
		const { items } = await runNode(emulator(), checked(schema, { simplify: false }), [
			await fileItem(),
		]);
		expect(items[0].json).toMatchObject({
			schema,
			extracted_data: expect.any(Object),
			validation: { complete: false, missing: ['nothing_here'], typeErrors: [] },
		});
	});

	it('checks each element against the items definition with Split Into Items', async () => {
		const schema = await createSchema({
			type: 'array',
			items: {
				type: 'object',
				required: ['invoice_number', 'po_number'],
				properties: { ...INVOICE_PROPERTIES, po_number: { type: 'string' } },
			},
		});
		const { items } = await runNode(emulator(), checked(schema, {}, { splitIntoItems: true }), [
			await fileItem(),
		]);
		expect(items.length).toBeGreaterThanOrEqual(1);
		for (const item of items) {
			expect(item.json.validation).toEqual({
				complete: false,
				missing: ['po_number'],
				typeErrors: [],
				invalid: [],
			});
		}
	});

	it('gives a malformed definition as a warning on the item, not an error', async () => {
		const schema = await createSchema({
			type: 'object',
			properties: { total_amount: { type: 'money', description: 'Total' } },
		});
		const { items, error } = await runNode(emulator(), checked(schema), [await fileItem()]);
		expect(error).toBeUndefined();
		expect(items[0].json.validation).toEqual({
			complete: false,
			missing: [],
			typeErrors: [],
			invalid: [],
			warning: expect.stringMatching(/the type at total_amount is not a JSON type \("money"\)/),
		});
	});

	it('says so when the extraction has no schema', async () => {
		const { items } = await runNode(
			emulator(),
			extractionCreate({ options: { checkAgainstSchema: true } }),
			[await fileItem()],
		);
		expect(items[0].json.validation).toEqual({
			complete: false,
			missing: [],
			typeErrors: [],
			invalid: [],
			warning: expect.stringMatching(/no schema/),
		});
		expect(schemaReads()).toEqual([]);
	});

	it('checks a job that is not finished as it is, and says its status', async () => {
		const schema = await createSchema({ type: 'object', required: ['currency'] });
		const { items } = await runNode(emulator(), checked(schema, { waitForCompletion: false }), [
			await fileItem(),
		]);
		expect(items[0].json.status).not.toBe('FINISHED');
		// No data yet: null against an object definition is a type error at the top level.
		expect(items[0].json.validation).toEqual({
			complete: false,
			missing: [],
			typeErrors: [{ path: '(top level)', expected: 'object', actual: 'null' }],
			invalid: [],
			warning: `Its status is ${String(items[0].json.status)}, not FINISHED: the data was checked as it is.`,
		});
	});

	it('changes nothing when the option is off (no schema read, no validation)', async () => {
		const { items } = await runNode(
			emulator(),
			extractionCreate({ schema: byId(INVOICE_SCHEMA) }),
			[await fileItem()],
		);
		expect(items[0].json).not.toHaveProperty('validation');
		expect(schemaReads()).toEqual([]);
	});
});

describe('Check Against Schema: which schema reads are remembered for the execution', () => {
	it('a read that failed (503) is not remembered: the next item reads the schema again', async () => {
		const schema = await createSchema({ type: 'object', properties: INVOICE_PROPERTIES });
		emulator().injectFaults({ method: 'GET', path: `/schema/${schema}/` }, [{ status: 503 }]);
		const input = await Promise.all([fileItem(), fileItem(), fileItem()]);
		const { items, error } = await runNode(
			emulator(),
			checked(schema, {}, { maxRetries: 0 }),
			input,
		);
		expect(error).toBeUndefined();
		const warned = items.filter((item) => (item.json.validation as IDataObject).warning);
		expect(warned).toHaveLength(1);
		expect((warned[0].json.validation as IDataObject).warning).toMatch(/could not be read.*503/);
		expect(items.filter((item) => (item.json.validation as IDataObject).complete)).toHaveLength(2);
		expect(schemaReads().map((r) => r.path)).toEqual([`/schema/${schema}/`, `/schema/${schema}/`]);
	});

	it('a schema that does not exist (404) is read once per execution', async () => {
		const schema = await createSchema({ type: 'object', properties: INVOICE_PROPERTIES });
		const created = await runNode(emulator(), extractionCreate({ schema: byId(schema) }), [
			await fileItem(),
		]);
		const id = created.items[0].json.id as string;
		const deleted = await fetch(`${emulator().url}/schema/${schema}/`, {
			method: 'DELETE',
			headers: { authorization: emulator().token },
		});
		expect(deleted.ok).toBe(true);
		emulator().clearLog();
		const get = onExtraction('get', id, { options: { checkAgainstSchema: true } });
		const { items } = await runNode(emulator(), get, [{ json: {} }, { json: {} }]);
		expect(items.map((item) => (item.json.validation as IDataObject).warning)).toEqual([
			expect.stringMatching(/could not be read/),
			expect.stringMatching(/could not be read/),
		]);
		expect(schemaReads()).toHaveLength(1);
	});
});

describe('Check Against Schema on Extraction → Get', () => {
	it('checks against the schema as it is now: complete, then a type changed since, then deleted (a warning, the item kept)', async () => {
		const definition = { type: 'object', required: ['currency'], properties: INVOICE_PROPERTIES };
		const schema = await createSchema(definition);
		const created = await runNode(emulator(), extractionCreate({ schema: byId(schema) }), [
			await fileItem(),
		]);
		const id = created.items[0].json.id as string;
		const get = onExtraction('get', id, { options: { checkAgainstSchema: true } });
		const first = await runNode(emulator(), get);
		expect(first.error).toBeUndefined();
		expect(first.items[0].json.validation).toEqual({
			complete: true,
			missing: [],
			typeErrors: [],
			invalid: [],
		});

		const changed = {
			...definition,
			properties: { ...INVOICE_PROPERTIES, total_amount: { type: 'string' } },
		};
		const put = await fetch(`${emulator().url}/schema/${schema}/`, {
			method: 'PUT',
			headers: { authorization: emulator().token, 'content-type': 'application/json' },
			body: JSON.stringify({ name: 'Checked', description: 'Changed', schema: changed }),
		});
		expect(put.ok).toBe(true);
		const second = await runNode(emulator(), get);
		expect(second.items[0].json.validation).toEqual({
			complete: false,
			missing: [],
			typeErrors: [{ path: 'total_amount', expected: 'string', actual: 'number' }],
			invalid: [],
		});

		const deleted = await fetch(`${emulator().url}/schema/${schema}/`, {
			method: 'DELETE',
			headers: { authorization: emulator().token },
		});
		expect(deleted.ok).toBe(true);
		const third = await runNode(emulator(), get);
		expect(third.error).toBeUndefined();
		expect(third.items[0].json).toMatchObject({ id, currency: 'EUR' });
		expect(third.items[0].json.validation).toEqual({
			complete: false,
			missing: [],
			typeErrors: [],
			invalid: [],
			warning: expect.stringMatching(new RegExp(`^The schema ${schema} could not be read: `)),
		});
	});
});

describe('Check Against Schema on Extract → Create/Get (/v0: the definition is given)', () => {
	const DEFINITION = {
		type: 'object',
		required: ['invoice_number', 'po_number'],
		properties: { ...INVOICE_PROPERTIES, po_number: { type: 'string' } },
	};

	it('checks against the Schema Definition typed as JSON', async () => {
		const { items } = await runNode(
			emulator(),
			extractCreate({
				options: { checkAgainstSchema: true, schemaDefinition: JSON.stringify(DEFINITION) },
			}),
			[await fileItem()],
		);
		expect(items[0].json).toMatchObject({ invoice_number: 'INV-2026-0042' });
		expect(items[0].json.validation).toEqual({
			complete: false,
			missing: ['po_number'],
			typeErrors: [],
			invalid: [],
		});
	});

	it('takes a whole Schema resource (a Schema → Get output) as the definition', async () => {
		const { items: created } = await runNode(emulator(), extractCreate(), [await fileItem()]);
		const resource = { id: INVOICE_SCHEMA, name: 'Invoice', description: 'x', schema: DEFINITION };
		const { items } = await runNode(
			emulator(),
			extractGet(created[0].json.id, {
				options: { checkAgainstSchema: true, schemaDefinition: resource },
			}),
		);
		expect(items[0].json.validation).toEqual({
			complete: false,
			missing: ['po_number'],
			typeErrors: [],
			invalid: [],
		});
	});

	it('takes the JSON text of a whole Schema resource (a Schema → Get output) as its schema', async () => {
		const resource = { id: INVOICE_SCHEMA, name: 'Invoice', description: 'x', schema: DEFINITION };
		const { items } = await runNode(
			emulator(),
			extractCreate({
				options: { checkAgainstSchema: true, schemaDefinition: JSON.stringify(resource) },
			}),
			[await fileItem()],
		);
		expect(items[0].json.validation).toEqual({
			complete: false,
			missing: ['po_number'],
			typeErrors: [],
			invalid: [],
		});
	});

	it.each([
		['whose schema is null', { id: INVOICE_SCHEMA, name: 'Invoice', schema: null }, /null/],
		['whose schema is text', { id: INVOICE_SCHEMA, name: 'Invoice', schema: '{}' }, /a string/],
		[
			'given as JSON text, whose schema is null',
			JSON.stringify({ id: INVOICE_SCHEMA, name: 'Invoice', schema: null }),
			/null/,
		],
	])('refuses a Schema → Get output %s before any request', async (_, schemaDefinition, what) => {
		const { error } = await runNode(
			emulator(),
			extractCreate({ options: { checkAgainstSchema: true, schemaDefinition } }),
			[await fileItem()],
		);
		expect(error?.message).toMatch(/^Parameter "Schema Definition" is a Schema → Get output/);
		expect(error?.message).toMatch(what);
		expect(apiRequests(emulator())).toEqual([]);
	});

	it.each([
		['a list', '[{"type": "object"}]'],
		['a number', 5],
		['JSON text of a string', '"invoice"'],
	])('refuses a Schema Definition that is %s before any request', async (_, schemaDefinition) => {
		const { error } = await runNode(
			emulator(),
			extractCreate({ options: { checkAgainstSchema: true, schemaDefinition } }),
			[await fileItem()],
		);
		expect(error?.message).toMatch(/^Parameter "Schema Definition" must be a JSON object/);
		expect(apiRequests(emulator())).toEqual([]);
	});

	it.each([
		['missing', undefined, /Schema Definition.*required when Check Against Schema is on/],
		['not JSON', '{"type": "object",', /Schema Definition.*not valid JSON/],
	])(
		'refuses a Schema Definition that is %s before any request',
		async (_, schemaDefinition, message) => {
			const { error } = await runNode(
				emulator(),
				extractCreate({ options: { checkAgainstSchema: true, schemaDefinition } }),
				[await fileItem()],
			);
			expect(error?.message).toMatch(message);
			expect(apiRequests(emulator())).toEqual([]);
		},
	);
});

describe("Check Against Schema on the trigger's Extraction Finished", () => {
	it('adds the validation to each extraction that fires, reading the schema once per poll', async () => {
		const schema = await createSchema({
			type: 'object',
			required: ['invoice_number', 'po_number'],
			properties: { ...INVOICE_PROPERTIES, po_number: { type: 'string' } },
		});
		const harness = createTriggerHarness({
			parameters: { event: 'extractionFinished', options: { checkAgainstSchema: true } },
			credentials: credentialsFor(emulator()),
		});
		const activation = await harness.activate();
		expect(activation.error).toBeUndefined();
		const created = await runNode(emulator(), extractionCreate({ schema: byId(schema) }), [
			await fileItem(),
			await fileItem(),
		]);
		emulator().clearLog();
		const poll = await harness.poll();
		expect(poll.error).toBeUndefined();
		expect(poll.items.map((item) => item.json.id).sort()).toEqual(
			created.items.map((item) => item.json.id).sort(),
		);
		for (const item of poll.items) {
			expect(item.json.validation).toEqual({
				complete: false,
				missing: ['po_number'],
				typeErrors: [],
				invalid: [],
			});
		}
		expect(schemaReads().map((r) => r.path)).toEqual([`/schema/${schema}/`]);
	});
});
