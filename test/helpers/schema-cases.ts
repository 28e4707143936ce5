/**
 * Generated cases for Check Against Schema (docs/service-api.md §completeness) and their oracle,
 * Ajv: shared by the property test (test/completeness-property.test.ts, fixed seed) and the bench's
 * measure 7 (bench/schema-check.ts, a new seed each run).
 *
 * Definitions stay within what the checker reads — `type` (a name or a list), `nullable`,
 * `properties`, `required`, `additionalProperties`, `items`, `enum`, `const`, `allOf`, `anyOf`,
 * `oneOf`, local `$ref` to `$defs` / `definitions` — plus annotations (`description`, `format`, `x-…`,
 * …) and, in some cases, assertion keywords it does not evaluate (`minimum`, `pattern`, …). Data is
 * made to fit its definition, then broken here and there: required fields dropped or null, nulls,
 * values of another type, enum misses, extra fields.
 *
 * The oracle is Ajv (JSON Schema 2019-09, all errors, formats not validated: `format` is an
 * annotation) on the definition transformed the way the checker reads it:
 * - OpenAPI `nullable: true` next to `type` adds `null` to the type (without `type` it does nothing);
 * - the one deliberate difference: a field that the same definition object does not list as
 *   required may be null whatever its definition (the checker takes it as absent), so each such
 *   property definition P becomes `anyOf: [{type: null}, P]`, and so does `additionalProperties`
 *   (for the required names it covers, it is copied into `properties` unchanged).
 */
import fc from 'fast-check';
import Ajv2019, { type ErrorObject } from 'ajv/dist/2019';

import { checkAgainstDefinition, type Validation } from '../../nodes/shared/schema-check';

type Json = unknown;
type Definition = Record<string, unknown>;

/** One generated case: a definition and data to check against it. */
export interface SchemaCase {
	definition: Definition;
	data: Json;
}

/** Assertion keywords the checker does not evaluate (it must warn, never say complete wrongly). */
export const NOT_EVALUATED_KEYWORDS = [
	'minimum',
	'maximum',
	'exclusiveMinimum',
	'multipleOf',
	'minLength',
	'maxLength',
	'pattern',
	'minItems',
	'maxItems',
	'uniqueItems',
	'minProperties',
	'maxProperties',
	'patternProperties',
	'propertyNames',
	'not',
	'if',
];

const isObject = (value: unknown): value is Record<string, unknown> =>
	value !== null && typeof value === 'object' && !Array.isArray(value);
const hasOwn = (object: object, key: string) => Object.prototype.hasOwnProperty.call(object, key);

/** Field names: plain ones and names of Object.prototype members. */
const NAMES = ['a', 'b', 'amount', 'lines', 'po_number', 'constructor'];
const SCALAR_TYPES = ['string', 'number', 'integer', 'boolean', 'null'];
const SCALARS: Json[] = ['A', 'B', 'EUR', '', 0, 1, 2.5, -3, true, false, null];

const scalar = fc.constantFrom(...SCALARS);
/** Any JSON value, small: what a broken field may hold instead. */
const anything: fc.Arbitrary<Json> = fc.oneof(
	scalar,
	fc.constantFrom<Json>({}, [], { a: 1 }, [null], ['A', 1], { amount: 'x' }),
);

const typeName = fc.constantFrom(...SCALAR_TYPES);
const typeSpec: fc.Arbitrary<unknown> = fc.oneof(
	{ weight: 4, arbitrary: typeName },
	{ weight: 2, arbitrary: typeName.map((t) => (t === 'null' ? t : [t, 'null'])) },
	{ weight: 1, arbitrary: fc.uniqueArray(typeName, { minLength: 1, maxLength: 3 }) },
);

const maybe = <T>(arbitrary: fc.Arbitrary<T>, freq = 4) =>
	fc.option(arbitrary, { nil: undefined, freq });

/** Removes keys whose value is undefined (JSON-shaped definitions). */
const defined = (object: Record<string, unknown>): Definition =>
	Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined));

/** Annotations the checker ignores (and Ajv, formats off): one or two of them. */
const annotations = fc
	.subarray<[string, Json]>(
		[
			['description', 'A field'],
			['title', 'Field'],
			['format', 'date'],
			['format', 'email'],
			['examples', ['A']],
			['default', 0],
			['x-label', 'Label'],
			['$comment', 'generated'],
		],
		{ minLength: 1, maxLength: 2 },
	)
	.map((entries) => Object.fromEntries(entries) as Definition);

/** One assertion keyword the checker does not evaluate, with a value Ajv accepts. */
const notEvaluated: fc.Arbitrary<Definition> = fc.oneof(
	fc.integer({ min: -2, max: 2 }).map((n) => ({ minimum: n })),
	fc.integer({ min: -2, max: 2 }).map((n) => ({ maximum: n })),
	fc.integer({ min: -2, max: 2 }).map((n) => ({ exclusiveMinimum: n })),
	fc.constant({ multipleOf: 2 }),
	fc.nat(2).map((n) => ({ minLength: n })),
	fc.nat(2).map((n) => ({ maxLength: n })),
	fc.constantFrom('^A', '\\d', 'U').map((p) => ({ pattern: p })),
	fc.nat(2).map((n) => ({ minItems: n })),
	fc.nat(2).map((n) => ({ maxItems: n })),
	fc.constant({ uniqueItems: true }),
	fc.nat(2).map((n) => ({ minProperties: n })),
	fc.nat(2).map((n) => ({ maxProperties: n })),
	fc.constant({ patternProperties: { '^x': { type: 'string' } } }),
	fc.constant({ propertyNames: { maxLength: 6 } }),
	fc.constant({ not: { type: 'string' } }),
	fc.constant({ if: { type: 'object' }, then: { required: ['a'] } }),
);

/**
 * Definitions, nested a few levels. `refs`: whether `$ref` to `#/$defs/D0` / `D1` may appear;
 * `unevaluated`: whether assertion keywords the checker does not evaluate may appear.
 */
function definitions(refs: boolean, unevaluated: boolean): fc.Arbitrary<Definition> {
	const { node } = fc.letrec<{ node: Definition }>((tie) => {
		const child = tie('node');
		const leaf = fc
			.record({
				type: maybe(typeSpec, 6),
				nullable: maybe(fc.constant(true), 4),
				values: fc.oneof(
					{ weight: 4, arbitrary: fc.constant({}) },
					{
						weight: 2,
						arbitrary: fc
							.uniqueArray(scalar, { minLength: 1, maxLength: 3 })
							.map((list) => ({ enum: list })),
					},
					{ weight: 1, arbitrary: scalar.map((value) => ({ const: value })) },
				),
			})
			.map(({ values, ...rest }) => ({ ...defined(rest), ...values }));
		const object = fc
			.record({
				type: fc.constantFrom<unknown>('object', 'object', ['object', 'null'], undefined),
				nullable: maybe(fc.constant(true), 6),
				properties: fc.dictionary(fc.constantFrom(...NAMES), child, { maxKeys: 3 }),
				requiredMask: fc.array(fc.boolean(), { minLength: NAMES.length, maxLength: NAMES.length }),
				unlisted: maybe(fc.constantFrom(...NAMES), 4),
				additionalProperties: maybe(
					fc.oneof(
						{ weight: 3, arbitrary: fc.constant<unknown>(false) },
						{ weight: 1, arbitrary: fc.constant<unknown>(true) },
						{ weight: 2, arbitrary: child },
					),
					3,
				),
			})
			.map(({ requiredMask, unlisted, ...rest }) => {
				const required = Object.keys(rest.properties).filter((_, i) => requiredMask[i]);
				if (unlisted && !required.includes(unlisted)) required.push(unlisted);
				return defined({ ...rest, required: required.length ? required : undefined });
			});
		const array = fc
			.record({
				type: fc.constantFrom<unknown>('array', ['array', 'null'], undefined),
				items: child,
			})
			.map(defined);
		const combined = fc.oneof(
			fc.tuple(child, child).map((parts) => ({ allOf: parts })),
			fc.tuple(child, child).map((parts) => ({ anyOf: parts })),
			child.map((part) => ({ anyOf: [part, { type: 'null' }] })),
			fc.tuple(child, child).map((parts) => ({ oneOf: parts })),
		);
		const ref = fc
			.record({ to: fc.constantFrom('D0', 'D1'), sibling: maybe(annotations, 2) })
			.map(({ to, sibling }) => ({ $ref: `#/$defs/${to}`, ...sibling }));
		const shapes: Array<fc.WeightedArbitrary<Definition>> = [
			{ weight: 5, arbitrary: leaf },
			{ weight: 4, arbitrary: object },
			{ weight: 2, arbitrary: array },
			{ weight: 2, arbitrary: combined },
		];
		if (refs) shapes.push({ weight: 2, arbitrary: ref });
		const shape = fc.oneof({ maxDepth: 3, depthIdentifier: 'definition' }, ...shapes);
		return {
			node: fc
				.tuple(
					shape,
					maybe(annotations, 3),
					unevaluated ? maybe(notEvaluated, 4) : fc.constant(undefined),
				)
				.map(([definition, annotated, unchecked]) => ({
					...definition,
					...annotated,
					...unchecked,
				})),
		};
	});
	return node;
}

/** A whole definition: usually an object at the top, with `$defs` or `definitions` D0 and D1. */
function rootDefinitions(unevaluated: boolean): fc.Arbitrary<Definition> {
	const body = definitions(true, unevaluated);
	const target = definitions(false, unevaluated);
	return fc
		.record({
			body,
			top: fc.constantFrom<unknown>('object', 'object', 'object', undefined),
			d0: target,
			d1: target,
			container: fc.constantFrom('$defs', 'definitions'),
		})
		.map(({ body: definition, top, d0, d1, container }) => {
			const root: Definition =
				top && definition.type === undefined && definition.properties !== undefined
					? { type: top, ...definition }
					: definition;
			const text = JSON.stringify({ ...root, $defs: { D0: d0, D1: d1 } });
			const moved = container === '$defs' ? text : text.replace(/#\/\$defs\//g, '#/definitions/');
			const parsed = JSON.parse(moved) as Definition;
			if (container === 'definitions') {
				parsed.definitions = parsed.$defs;
				delete parsed.$defs;
			}
			return parsed;
		});
}

/** The local definition a `$ref` names in `root` (only `#/$defs/…` and `#/definitions/…` here). */
function referenced(root: Definition, ref: string): unknown {
	const [, container, name] = ref.split('/');
	const defs = root[container];
	return isObject(defs) ? defs[name] : undefined;
}

/** Data that mostly fits `definition`; now and then anything else (a break). */
function dataFor(definition: unknown, root: Definition, depth = 0): fc.Arbitrary<Json> {
	return fc.oneof(
		{ weight: 14, arbitrary: fitting(definition, root, depth) },
		{ weight: 1, arbitrary: anything },
	);
}

function fitting(definition: unknown, root: Definition, depth: number): fc.Arbitrary<Json> {
	if (!isObject(definition) || depth > 12) return anything;
	if (typeof definition.$ref === 'string') {
		return dataFor(referenced(root, definition.$ref), root, depth + 1);
	}
	if (hasOwn(definition, 'const')) return fc.constant(definition.const);
	if (Array.isArray(definition.enum)) {
		return fc.oneof(
			{ weight: 6, arbitrary: fc.constantFrom(...(definition.enum as Json[])) },
			{ weight: 1, arbitrary: fc.constant('not in the enum') },
		);
	}
	for (const keyword of ['anyOf', 'oneOf'] as const) {
		const branches = definition[keyword];
		if (Array.isArray(branches))
			return fc.oneof(...branches.map((b) => dataFor(b, root, depth + 1)));
	}
	if (Array.isArray(definition.allOf)) {
		return fc
			.tuple(...definition.allOf.map((part) => dataFor(part, root, depth + 1)))
			.map((values) =>
				values.every(isObject) ? Object.assign({}, ...(values as object[])) : values[0],
			);
	}
	const declared = definition.type;
	let types: string[] = Array.isArray(declared)
		? (declared as string[])
		: typeof declared === 'string'
			? [declared]
			: definition.properties !== undefined || definition.required !== undefined
				? ['object']
				: definition.items !== undefined
					? ['array']
					: [];
	if (definition.nullable === true && types.length) types = [...types, 'null'];
	if (!types.length) return anything;
	return fc.constantFrom(...types).chain((type) => ofType(type, definition, root, depth));
}

function ofType(type: string, definition: Definition, root: Definition, depth: number) {
	switch (type) {
		case 'string':
			return fc.constantFrom<Json>('A', 'B', 'EUR', 'x1');
		case 'number':
			return fc.oneof(
				fc.double({ min: -1e6, max: 1e6, noNaN: true, noDefaultInfinity: true }),
				fc.integer({ min: -5, max: 5 }),
			);
		case 'integer':
			return fc.integer({ min: -5, max: 5 });
		case 'boolean':
			return fc.boolean();
		case 'null':
			return fc.constant(null);
		case 'array':
			return fc.array(dataFor(definition.items, root, depth + 1), { maxLength: 3 });
		default:
			return objectFor(definition, root, depth);
	}
}

/** An object for an object definition: required fields mostly there, others sometimes, nulls, extras. */
function objectFor(definition: Definition, root: Definition, depth: number): fc.Arbitrary<Json> {
	const properties = isObject(definition.properties) ? definition.properties : {};
	const required = Array.isArray(definition.required) ? (definition.required as string[]) : [];
	const names = [...new Set([...Object.keys(properties), ...required])];
	const absent = Symbol('absent');
	const fields = names.map((name) => {
		const value = hasOwn(properties, name)
			? dataFor(properties[name], root, depth + 1)
			: isObject(definition.additionalProperties)
				? dataFor(definition.additionalProperties, root, depth + 1)
				: scalar;
		const isRequired = required.includes(name);
		return fc.oneof(
			{ weight: isRequired ? 12 : 5, arbitrary: value },
			{ weight: isRequired ? 1 : 4, arbitrary: fc.constant<unknown>(absent) },
			{ weight: 2, arbitrary: fc.constant<unknown>(null) },
		);
	});
	const extra = maybe(fc.tuple(fc.constantFrom('extra', 'b', 'x1'), anything), 5);
	return fc.tuple(fc.tuple(...fields), extra).map(([values, more]) => {
		const object: Record<string, unknown> = {};
		names.forEach((name, index) => {
			if (values[index] !== absent) object[name] = values[index];
		});
		if (more && !hasOwn(object, more[0])) object[more[0]] = more[1];
		return object;
	});
}

/** Generated cases; `unevaluatedShare`: the share (0–1) with keywords the checker does not evaluate. */
export function schemaCases(unevaluatedShare = 0.15): fc.Arbitrary<SchemaCase> {
	const casesOf = (unevaluated: boolean) =>
		rootDefinitions(unevaluated).chain((definition) =>
			dataFor(definition, definition).map((data) => ({
				definition,
				data: JSON.parse(JSON.stringify({ data })).data as Json,
			})),
		);
	const weight = Math.round(unevaluatedShare * 100);
	return fc.oneof(
		{ weight: 100 - weight, arbitrary: casesOf(false) },
		{ weight, arbitrary: casesOf(true) },
	);
}

const SUBSCHEMA = ['items', 'not', 'if', 'then', 'else', 'contains', 'propertyNames'];
const SUBSCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf'];
const SUBSCHEMA_MAPS = ['$defs', 'definitions', 'patternProperties'];
const orNull = (definition: unknown) => ({ anyOf: [{ type: 'null' }, definition] });

/** The definition as Ajv must see it to judge like the checker (see the header). */
export function oracleDefinition(definition: unknown): unknown {
	if (!isObject(definition)) return definition;
	const out: Definition = { ...definition };
	delete out.nullable;
	if (definition.nullable === true && definition.type !== undefined) {
		const types = Array.isArray(definition.type) ? definition.type : [definition.type];
		out.type = types.includes('null') ? types : [...types, 'null'];
	}
	for (const key of [...SUBSCHEMA, 'additionalProperties']) {
		if (key in definition) out[key] = oracleDefinition(definition[key]);
	}
	for (const key of SUBSCHEMA_LISTS) {
		const list = definition[key];
		if (Array.isArray(list)) out[key] = list.map(oracleDefinition);
	}
	for (const key of SUBSCHEMA_MAPS) {
		const map = definition[key];
		if (isObject(map))
			out[key] = Object.fromEntries(Object.entries(map).map(([k, v]) => [k, oracleDefinition(v)]));
	}
	if (definition.properties !== undefined || definition.additionalProperties !== undefined) {
		const required = new Set(Array.isArray(definition.required) ? definition.required : []);
		const properties: Definition = {};
		const given = isObject(definition.properties) ? definition.properties : {};
		for (const [name, property] of Object.entries(given)) {
			const transformed = oracleDefinition(property);
			properties[name] = required.has(name) ? transformed : orNull(transformed);
		}
		// The checker leaves additionalProperties aside next to patternProperties (it warns).
		if (
			definition.additionalProperties !== undefined &&
			definition.patternProperties === undefined
		) {
			const others = oracleDefinition(definition.additionalProperties);
			for (const name of required) if (!hasOwn(properties, name)) properties[name] = others;
			out.additionalProperties = orNull(others);
		}
		out.properties = properties;
	}
	return out;
}

/** Ajv's verdict on a case: valid, and the errors (all of them). */
export interface OracleVerdict {
	valid: boolean;
	errors: ErrorObject[];
}

/** An Ajv judge of cases, with the transform of {@link oracleDefinition}. */
export function createOracle(): (definition: unknown, data: Json) => OracleVerdict {
	// ownProperties: fields named like Object.prototype members (`constructor`) are data only when own.
	const ajv = new Ajv2019({
		allErrors: true,
		strict: false,
		validateFormats: false,
		ownProperties: true,
	});
	return (definition, data) => {
		const schema = oracleDefinition(definition) as Definition;
		const validate = ajv.compile(schema);
		const valid = validate(data) as boolean;
		const errors = validate.errors ?? [];
		ajv.removeSchema(schema);
		return { valid, errors };
	};
}

/** Ajv's instancePath (`/lines/1/amount`) in the checker's syntax (`lines[1].amount`). */
export function checkerPath(data: Json, instancePath: string): string {
	if (!instancePath) return '';
	let path = '';
	let node: unknown = data;
	for (const raw of instancePath.slice(1).split('/')) {
		const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
		if (Array.isArray(node)) {
			path += `[${key}]`;
			node = node[Number(key)];
		} else {
			path = path ? `${path}.${key}` : key;
			node = isObject(node) && hasOwn(node, key) ? node[key] : undefined;
		}
	}
	return path;
}

const child = (path: string, key: string) => (path ? `${path}.${key}` : key);
const shown = (path: string) => path || '(top level)';

/** Whether the definition uses a keyword the checker does not evaluate, anywhere. */
export function usesNotEvaluated(definition: unknown): boolean {
	if (Array.isArray(definition)) return definition.some(usesNotEvaluated);
	if (!isObject(definition)) return false;
	return Object.entries(definition).some(
		([key, value]) => NOT_EVALUATED_KEYWORDS.includes(key) || usesNotEvaluated(value),
	);
}

/** The outcome of one case: the checker's validation, Ajv's verdict and where they disagree. */
export interface CaseOutcome {
	validation: Validation;
	verdict: OracleVerdict;
	disagreements: string[];
}

/**
 * Checks one case and compares with Ajv: `complete` ⇔ valid when the checker gives no warning;
 * never `complete` with a warning or when Ajv says invalid; a warning only when the definition uses
 * keywords not evaluated; every `missing`, `typeErrors` and `invalid` path an Ajv error's path
 * (`required` errors at the missing property, `additionalProperties` at the extra field).
 */
export function judge(oracle: ReturnType<typeof createOracle>, c: SchemaCase): CaseOutcome {
	const validation = checkAgainstDefinition(c.definition, c.data);
	const verdict = oracle(c.definition, c.data);
	const problems: string[] = [];
	const paths = new Set<string>();
	for (const error of verdict.errors) {
		const at = checkerPath(c.data, error.instancePath);
		paths.add(shown(at));
		const params = error.params as Record<string, unknown>;
		if (error.keyword === 'required') paths.add(child(at, String(params.missingProperty)));
		if (error.keyword === 'additionalProperties')
			paths.add(child(at, String(params.additionalProperty)));
	}
	const ajvSays = verdict.valid ? 'valid' : 'invalid';
	if (validation.complete && !verdict.valid) problems.push('complete: true, Ajv: invalid');
	if (validation.complete && validation.warning) problems.push('complete: true with a warning');
	if (!validation.warning && !validation.complete && verdict.valid)
		problems.push('complete: false without a warning, Ajv: valid');
	if (validation.warning && !usesNotEvaluated(c.definition))
		problems.push(`a warning without keywords not evaluated: ${validation.warning}`);
	for (const path of validation.missing)
		if (!paths.has(path)) problems.push(`missing ${path}: no Ajv error there (Ajv: ${ajvSays})`);
	for (const { path } of validation.typeErrors)
		if (!paths.has(path))
			problems.push(`type error at ${path}: no Ajv error there (Ajv: ${ajvSays})`);
	for (const { path, keyword } of validation.invalid)
		if (!paths.has(path))
			problems.push(`invalid (${keyword}) at ${path}: no Ajv error there (Ajv: ${ajvSays})`);
	return { validation, verdict, disagreements: problems };
}
