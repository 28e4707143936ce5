import { validationsOf } from '../nodes/shared/completeness';
import {
	checkAgainstDefinition,
	elementDefinition,
	MAX_DEFINITION_DEPTH,
} from '../nodes/shared/schema-check';

const INVOICE = {
	type: 'object',
	required: ['invoice_number', 'total', 'lines'],
	properties: {
		invoice_number: { type: 'string' },
		total: { type: 'number' },
		paid: { type: 'boolean' },
		vendor: {
			type: 'object',
			required: ['name'],
			properties: { name: { type: 'string' }, vat_id: { type: 'string' } },
		},
		lines: {
			type: 'array',
			items: {
				type: 'object',
				required: ['amount'],
				properties: { description: { type: 'string' }, amount: { type: 'number' } },
			},
		},
	},
};

const COMPLETE = {
	invoice_number: 'INV-1',
	total: 12.5,
	paid: false,
	vendor: { name: 'ACME', vat_id: null },
	lines: [
		{ description: 'Pens', amount: 2 },
		{ description: 'Paper', amount: 10.5 },
	],
};

describe('Check Against Schema: checkAgainstDefinition', () => {
	it('finds nothing in complete data (an integer is a number; an optional null is fine)', () => {
		expect(checkAgainstDefinition(INVOICE, COMPLETE)).toEqual({
			complete: true,
			missing: [],
			typeErrors: [],
			invalid: [],
		});
	});

	it('lists required fields that are absent or null, nested and inside lists, with their paths', () => {
		const data = {
			invoice_number: null,
			vendor: {},
			lines: [{ amount: 1 }, { description: 'x' }, { amount: 3 }, { amount: null }],
		};
		const validation = checkAgainstDefinition(INVOICE, data);
		expect(validation.complete).toBe(false);
		expect(validation.missing).toEqual([
			'invoice_number',
			'total',
			'vendor.name',
			'lines[1].amount',
			'lines[3].amount',
		]);
		expect(validation.typeErrors).toEqual([]);
		expect(validation.warning).toBeUndefined();
	});

	it.each([
		['a string where a number is defined', { total: '12.50' }, 'total', 'number', 'string'],
		[
			'a number where a string is defined',
			{ invoice_number: 17 },
			'invoice_number',
			'string',
			'integer',
		],
		['a string where a boolean is defined', { paid: 'yes' }, 'paid', 'boolean', 'string'],
		['an object where an array is defined', { lines: { amount: 1 } }, 'lines', 'array', 'object'],
		['an array where an object is defined', { vendor: ['ACME'] }, 'vendor', 'object', 'array'],
		[
			'a wrong type nested in a list',
			{ lines: [{ amount: 1 }, { amount: 1 }, { amount: '3,20' }] },
			'lines[2].amount',
			'number',
			'string',
		],
		[
			'a wrong type nested in an object',
			{ vendor: { name: 'A', vat_id: 42.5 } },
			'vendor.vat_id',
			'string',
			'number',
		],
	])('reports %s with its path', (_, patch, path, expected, actual) => {
		const validation = checkAgainstDefinition(INVOICE, { ...COMPLETE, ...patch });
		expect(validation.typeErrors).toEqual([{ path, expected, actual }]);
		expect(validation.missing).toEqual([]);
		expect(validation.complete).toBe(false);
	});

	it('tells integer from number: 2.5 is not an integer, 2 is', () => {
		const definition = { type: 'object', properties: { count: { type: 'integer' } } };
		expect(checkAgainstDefinition(definition, { count: 2 }).complete).toBe(true);
		expect(checkAgainstDefinition(definition, { count: 2.5 }).typeErrors).toEqual([
			{ path: 'count', expected: 'integer', actual: 'number' },
		]);
	});

	it('accepts a list of types and OpenAPI nullable', () => {
		const definition = {
			type: 'object',
			properties: { a: { type: ['string', 'number'] }, b: { type: 'string', nullable: true } },
		};
		expect(checkAgainstDefinition(definition, { a: 3, b: null }).complete).toBe(true);
		expect(checkAgainstDefinition(definition, { a: true }).typeErrors).toEqual([
			{ path: 'a', expected: 'string or number', actual: 'boolean' },
		]);
	});

	it('checks a list result against its items definition, paths starting at the index', () => {
		const definition = { type: 'array', items: INVOICE.properties.lines.items };
		const validation = checkAgainstDefinition(definition, [{ amount: 1 }, {}, { amount: 'x' }]);
		expect(validation.missing).toEqual(['[1].amount']);
		expect(validation.typeErrors).toEqual([
			{ path: '[2].amount', expected: 'number', actual: 'string' },
		]);
		expect(elementDefinition(definition)).toBe(INVOICE.properties.lines.items);
		expect(elementDefinition(INVOICE)).toBe(INVOICE);
	});

	it('keeps data named like Object.prototype members as data', () => {
		const definition = JSON.parse(
			'{"type": "object", "required": ["constructor", "toString"], "properties": {"__proto__": {"type": "string"}}}',
		);
		const data = JSON.parse('{"__proto__": 5, "constructor": "x"}');
		const validation = checkAgainstDefinition(definition, data);
		expect(validation.missing).toEqual(['toString']);
		expect(validation.typeErrors).toEqual([
			{ path: '__proto__', expected: 'string', actual: 'integer' },
		]);
	});

	describe('a malformed definition gives a warning on the item, never an error', () => {
		it.each([
			['a string', 'invoice', /the definition at the top level is not an object/],
			['a list', [{ type: 'string' }], /the definition at the top level is not an object/],
			[
				'an unknown type name',
				{ type: 'date' },
				/the type at the top level is not a JSON type \("date"\)/,
			],
			[
				'properties as a list',
				{ type: 'object', properties: ['a'] },
				/"properties" at the top level is not an object/,
			],
			[
				'required as a string',
				{ type: 'object', required: 'a' },
				/"required" at the top level is not a list of field names/,
			],
			[
				'a property definition that is a number',
				{ type: 'object', properties: { total: 5 } },
				/the definition at total is not an object/,
			],
		])('%s', (_, definition, message) => {
			const validation = checkAgainstDefinition(definition, { total: 1, a: 1 });
			expect(validation.complete).toBe(false);
			expect(validation.warning).toMatch(message);
			expect(validation.warning).toMatch(/The rest was checked\.$/);
		});

		it('checks the parts it can read next to the defect', () => {
			const definition = {
				type: 'object',
				required: ['total'],
				properties: { total: { type: 'number' }, when: { type: 'datetime' }, lines: 'many' },
			};
			const validation = checkAgainstDefinition(definition, { total: 'ten', when: 'x', lines: [] });
			expect(validation.typeErrors).toEqual([
				{ path: 'total', expected: 'number', actual: 'string' },
			]);
			expect(validation.warning).toMatch(/the type at when is not a JSON type/);
			expect(validation.warning).toMatch(/the definition at lines is not an object/);
		});

		it('stops following a definition nested deeper than the limit', () => {
			let definition: Record<string, unknown> = { type: 'string' };
			let data: unknown = 'leaf';
			for (let i = 0; i < MAX_DEFINITION_DEPTH + 10; i++) {
				definition = { type: 'object', properties: { a: definition } };
				data = { a: data };
			}
			const validation = checkAgainstDefinition(definition, data);
			expect(validation.warning).toMatch(`nested deeper than ${MAX_DEFINITION_DEPTH} levels`);
			expect(validation.complete).toBe(false);
		});

		it('says so when there is no definition', () => {
			expect(checkAgainstDefinition(null, { a: 1 })).toEqual({
				complete: false,
				missing: [],
				typeErrors: [],
				invalid: [],
				warning: 'The schema has no definition to check against',
			});
		});
	});
});

describe('Check Against Schema agrees with JSON Schema (issue 30)', () => {
	const lines = {
		type: 'object',
		required: ['lines'],
		properties: {
			lines: {
				type: 'array',
				items: { type: 'object', required: ['amount'], properties: { amount: { type: 'number' } } },
			},
		},
	};

	it.each([
		['a type list with null', { type: ['string', 'null'] }],
		['OpenAPI nullable', { type: 'string', nullable: true }],
		['anyOf with a null branch (Pydantic)', { anyOf: [{ type: 'string' }, { type: 'null' }] }],
		['no type at all', { description: 'anything' }],
	])('a required field that is null where its definition admits null (%s) is present', (_, po) => {
		const definition = { type: 'object', required: ['po'], properties: { po: po } };
		expect(checkAgainstDefinition(definition, { po: null })).toEqual({
			complete: true,
			missing: [],
			typeErrors: [],
			invalid: [],
		});
	});

	it('a required field that is null where its type does not admit null is missing (not also a type error)', () => {
		const definition = { type: 'object', required: ['po'], properties: { po: { type: 'string' } } };
		expect(checkAgainstDefinition(definition, { po: null })).toEqual({
			complete: false,
			missing: ['po'],
			typeErrors: [],
			invalid: [],
		});
	});

	it('a field that is not required may be null even where its type does not admit null (the one deliberate difference)', () => {
		const definition = { type: 'object', properties: { po: { type: 'string', enum: ['A'] } } };
		expect(checkAgainstDefinition(definition, { po: null }).complete).toBe(true);
	});

	it('a null element in a list of objects is a type error at its index', () => {
		expect(checkAgainstDefinition(lines, { lines: [{ amount: 1 }, null] })).toEqual({
			complete: false,
			missing: [],
			typeErrors: [{ path: 'lines[1]', expected: 'object', actual: 'null' }],
			invalid: [],
		});
		const nullable = {
			type: 'array',
			items: { type: ['object', 'null'], required: ['amount'] },
		};
		expect(checkAgainstDefinition(nullable, [{ amount: 1 }, null]).complete).toBe(true);
	});

	it.each([
		['with required', INVOICE],
		['without required', { type: 'object', properties: { total: { type: 'number' } } }],
	])('null data against an object definition (%s) is a type error at the top level', (_, d) => {
		expect(checkAgainstDefinition(d, null)).toEqual({
			complete: false,
			missing: [],
			typeErrors: [{ path: '(top level)', expected: 'object', actual: 'null' }],
			invalid: [],
		});
	});

	it.each(['$defs', 'definitions'])(
		'follows a local $ref into %s: required inside is checked',
		(at) => {
			const definition = {
				type: 'object',
				required: ['vendor', 'lines'],
				properties: {
					vendor: { $ref: `#/${at}/Vendor` },
					lines: { type: 'array', items: { $ref: `#/${at}/Line` } },
				},
				[at]: {
					Vendor: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
					Line: {
						type: 'object',
						required: ['amount'],
						properties: { amount: { type: 'number' } },
					},
				},
			};
			const validation = checkAgainstDefinition(definition, {
				vendor: {},
				lines: [{ amount: 'x' }, {}],
			});
			expect(validation).toEqual({
				complete: false,
				missing: ['vendor.name', 'lines[1].amount'],
				typeErrors: [{ path: 'lines[0].amount', expected: 'number', actual: 'string' }],
				invalid: [],
			});
		},
	);

	it('checks every part of allOf', () => {
		const definition = {
			allOf: [
				{ type: 'object', required: ['a'] },
				{ properties: { b: { type: 'integer' } }, required: ['b'] },
			],
		};
		expect(checkAgainstDefinition(definition, { b: 1.5 })).toEqual({
			complete: false,
			missing: ['a'],
			typeErrors: [{ path: 'b', expected: 'integer', actual: 'number' }],
			invalid: [],
		});
	});

	it('anyOf: a value matching no branch is reported with the findings of the branch of its type', () => {
		const vendor = { type: 'object', required: ['name'], properties: { name: { type: 'string' } } };
		const definition = {
			type: 'object',
			properties: {
				vendor: { anyOf: [vendor, { type: 'null' }] },
				total: { anyOf: [{ type: 'number' }, { type: 'null' }] },
			},
		};
		expect(checkAgainstDefinition(definition, { vendor: {}, total: '3' })).toEqual({
			complete: false,
			missing: ['vendor.name'],
			typeErrors: [{ path: 'total', expected: 'number or null', actual: 'string' }],
			invalid: [],
		});
		expect(checkAgainstDefinition(definition, { vendor: { name: 'A' }, total: 3 }).complete).toBe(
			true,
		);
	});

	it('oneOf: exactly one branch must match', () => {
		const definition = { oneOf: [{ type: 'number' }, { type: 'integer' }] };
		expect(checkAgainstDefinition(definition, 2.5).complete).toBe(true);
		expect(checkAgainstDefinition(definition, 2).invalid).toEqual([
			{ path: '(top level)', keyword: 'oneOf', message: expect.stringMatching(/more than one/) },
		]);
	});

	it('enum and const: a value outside is invalid', () => {
		const definition = {
			type: 'object',
			properties: {
				currency: { type: 'string', enum: ['EUR', 'USD'] },
				kind: { const: 'invoice' },
			},
		};
		expect(checkAgainstDefinition(definition, { currency: 'GBP', kind: 'invoice' })).toEqual({
			complete: false,
			missing: [],
			typeErrors: [],
			invalid: [{ path: 'currency', keyword: 'enum', message: 'is not one of "EUR", "USD"' }],
		});
		expect(checkAgainstDefinition(definition, { currency: 'EUR', kind: 'memo' }).invalid).toEqual([
			{ path: 'kind', keyword: 'const', message: 'is not "invoice"' },
		]);
	});

	it('additionalProperties: false refuses a field the definition does not list', () => {
		const definition = {
			type: 'object',
			additionalProperties: false,
			properties: { a: { type: 'string' } },
		};
		expect(checkAgainstDefinition(definition, { a: 'x', b: 1 }).invalid).toEqual([
			{ path: 'b', keyword: 'additionalProperties', message: expect.any(String) },
		]);
		const typed = { type: 'object', additionalProperties: { type: 'number' } };
		expect(checkAgainstDefinition(typed, { x: 'one' }).typeErrors).toEqual([
			{ path: 'x', expected: 'number', actual: 'string' },
		]);
	});

	it('assertion keywords it does not evaluate give complete: false and a warning naming them', () => {
		const definition = {
			type: 'object',
			required: ['date'],
			properties: {
				date: { type: 'string', pattern: '^\\d{4}$' },
				amount: { type: 'number', minimum: 100 },
				ref: { $ref: 'https://example.com/other.json' },
			},
		};
		const validation = checkAgainstDefinition(definition, { date: 'x', amount: 1, ref: 1 });
		expect(validation.complete).toBe(false);
		expect(validation.warning).toMatch(/pattern \(at date\)/);
		expect(validation.warning).toMatch(/minimum \(at amount\)/);
		expect(validation.warning).toMatch(/\$ref "https:\/\/example\.com\/other\.json" \(at ref\)/);
		expect(validation.warning).toMatch(/The rest was checked\.$/);
	});

	it('a keyword that does not apply to the value (pattern on an absent or numeric field) gives no warning', () => {
		const definition = {
			type: 'object',
			properties: { date: { type: ['string', 'number'], pattern: '^\\d{4}$' } },
		};
		expect(checkAgainstDefinition(definition, {}).complete).toBe(true);
		expect(checkAgainstDefinition(definition, { date: 2026 }).complete).toBe(true);
	});

	it('ignores annotations: format, description, title, examples, default, $schema, $comment, x-…', () => {
		const definition = {
			$schema: 'https://json-schema.org/draft/2020-12/schema',
			$comment: 'made by hand',
			type: 'object',
			title: 'Invoice',
			'x-label': 'Invoice',
			properties: {
				date: { type: 'string', format: 'date', description: 'Date', examples: ['2026-01-01'] },
				total: { type: 'number', default: 0, deprecated: false },
			},
		};
		expect(checkAgainstDefinition(definition, { date: 'not a date', total: 1 }).complete).toBe(
			true,
		);
	});

	it('a $ref that points to nothing, or loops, is a warning', () => {
		expect(checkAgainstDefinition({ $ref: '#/$defs/Nope' }, {}).warning).toMatch(
			/the \$ref at the top level \("#\/\$defs\/Nope"\) points to nothing/,
		);
		const loop = { $ref: '#/$defs/A', $defs: { A: { $ref: '#/$defs/A' } } };
		expect(checkAgainstDefinition(loop, {}).warning).toMatch(/loop/);
	});

	it('checks a list element against items reached through $ref, with the whole definition as root', async () => {
		const definition = {
			type: 'array',
			items: { $ref: '#/$defs/Line' },
			$defs: { Line: { type: 'object', required: ['amount'] } },
		};
		const client = {} as never;
		const validations = await validationsOf(
			client,
			{ definition },
			{ status: 'FINISHED' },
			[{ amount: 1 }, {}],
			true,
			0,
		);
		expect(validations.map((v) => v.missing)).toEqual([[], ['amount']]);
		expect(validations.every((v) => v.warning === undefined)).toBe(true);
	});
});
