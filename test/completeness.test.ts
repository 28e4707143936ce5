import {
	checkAgainstDefinition,
	elementDefinition,
	MAX_DEFINITION_DEPTH,
} from '../nodes/ExtractionService/v1/helpers/completeness';

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

	it('ignores keywords it does not know (format, $ref, anyOf, minimum, x-anything)', () => {
		const definition = {
			type: 'object',
			required: ['date'],
			'x-label': 'Invoice',
			anyOf: [{ required: ['nothing'] }],
			properties: {
				date: { type: 'string', format: 'date', pattern: '^\\d{4}$' },
				ref: { $ref: '#/definitions/Other' },
				amount: { type: 'number', minimum: 100 },
			},
		};
		expect(checkAgainstDefinition(definition, { date: 'not a date', ref: 1, amount: 1 })).toEqual({
			complete: true,
			missing: [],
			typeErrors: [],
		});
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

	it('reports every required top-level field as missing when there is no data at all', () => {
		expect(checkAgainstDefinition(INVOICE, null)).toEqual({
			complete: false,
			missing: ['invoice_number', 'total', 'lines'],
			typeErrors: [],
		});
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
				warning: 'The schema has no definition to check against',
			});
		});
	});
});
