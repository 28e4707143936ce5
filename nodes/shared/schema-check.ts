/**
 * Check Against Schema's checker: extracted data against a schema definition, read as JSON Schema
 * with OpenAPI's `nullable` (`docs/service-api.md` §completeness). Pure: no request, no parameter.
 */
import type { IDataObject } from 'n8n-workflow';

/** A value whose JSON type differs from the one its definition names. */
export interface TypeMismatch {
	/** Where the value is, e.g. `total`, `lines[2].amount`, `vendor.name`, `[0].amount`. */
	path: string;
	/** The type(s) the definition names, joined with ` or ` (e.g. `number`, `string or null`). */
	expected: string;
	/** The value's JSON type: `string`, `number`, `integer`, `boolean`, `array`, `object` or `null`. */
	actual: string;
}

/**
 * A value of an accepted type that the definition still refuses: outside its `enum` or `const`, a
 * field `additionalProperties: false` (or a `false` definition) does not allow, a value matching
 * none (or, for `oneOf`, several) of the alternatives of `anyOf` / `oneOf`.
 */
export interface Violation {
	/** Where the value is, as in {@link TypeMismatch}; an extra field's own path. */
	path: string;
	/** The keyword it breaks: `enum`, `const`, `additionalProperties`, `false`, `anyOf`, `oneOf`. */
	keyword: string;
	/** What is wrong, e.g. `is not one of "EUR", "USD"`. */
	message: string;
}

/**
 * What Check Against Schema adds to an item as `validation`.
 * `complete` is true only when no required field is missing, no value has the wrong type or breaks
 * another evaluated keyword, and the definition could be checked in full (no `warning`).
 */
export interface Validation {
	complete: boolean;
	/** Paths of required fields that are absent, or null where their definition does not admit null. */
	missing: string[];
	typeErrors: TypeMismatch[];
	/** Values that break `enum`, `const`, `additionalProperties`, `anyOf`, `oneOf`. */
	invalid: Violation[];
	/** Why the check could not be made in full (a malformed definition, keywords not evaluated, no schema, …). */
	warning?: string;
}

/** The JSON types a definition's `type` may name (`docs/service-api.md` §completeness). */
const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);

/**
 * Assertion keywords the check does not evaluate, with the JSON type of value they apply to (`any`:
 * every value). Reached on a value of that type, they make the check incomplete: `complete: false`
 * and a warning naming them. Keywords not listed here and not evaluated are annotations (`title`,
 * `description`, `format`, `examples`, `default`, `$schema`, `$comment`, `x-…`, …) and ignored.
 */
const NOT_EVALUATED: Record<string, 'string' | 'number' | 'array' | 'object' | 'any'> = {
	minLength: 'string',
	maxLength: 'string',
	pattern: 'string',
	minimum: 'number',
	maximum: 'number',
	exclusiveMinimum: 'number',
	exclusiveMaximum: 'number',
	multipleOf: 'number',
	minItems: 'array',
	maxItems: 'array',
	uniqueItems: 'array',
	contains: 'array',
	minContains: 'array',
	maxContains: 'array',
	prefixItems: 'array',
	additionalItems: 'array',
	unevaluatedItems: 'array',
	minProperties: 'object',
	maxProperties: 'object',
	patternProperties: 'object',
	propertyNames: 'object',
	dependencies: 'object',
	dependentRequired: 'object',
	dependentSchemas: 'object',
	unevaluatedProperties: 'object',
	not: 'any',
	if: 'any',
	$dynamicRef: 'any',
	$recursiveRef: 'any',
};

/** Definitions nested deeper than this are not followed (a warning says so). */
export const MAX_DEFINITION_DEPTH = 64;

type Definition = Record<string, unknown>;

/** Whether a value is a JSON object (not null, not a list). */
export function isObject(value: unknown): value is Record<string, unknown> {
	return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Whether `object` has `key` as its own field (not inherited: `constructor` is no field). */
export const hasOwn = (object: object, key: string): boolean =>
	Object.prototype.hasOwnProperty.call(object, key);

/** The JSON type of a parsed value; whole numbers are `integer`. */
export function jsonType(value: unknown): string {
	if (value === null || value === undefined) return 'null';
	if (Array.isArray(value)) return 'array';
	if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
	return typeof value;
}

function child(path: string, key: string): string {
	return path ? `${path}.${key}` : key;
}

/** A path as findings show it: the top level is `(top level)`. */
const shown = (path: string): string => path || '(top level)';

/** Equality of JSON values (`enum`, `const`): objects by their keys, whatever the order. */
function sameJson(a: unknown, b: unknown): boolean {
	if (a === b) return true;
	if (Array.isArray(a) || Array.isArray(b)) {
		return (
			Array.isArray(a) &&
			Array.isArray(b) &&
			a.length === b.length &&
			a.every((entry, index) => sameJson(entry, b[index]))
		);
	}
	if (!isObject(a) || !isObject(b)) return false;
	const keys = Object.keys(a);
	return (
		keys.length === Object.keys(b).length &&
		keys.every((key) => hasOwn(b, key) && sameJson(a[key], b[key]))
	);
}

/**
 * What a local `$ref` (`#` or a JSON pointer `#/…`, e.g. `#/$defs/Line`) names in `root`, or
 * undefined when it names nothing.
 */
function pointed(root: unknown, ref: string): unknown {
	let target: unknown = root;
	for (const raw of ref === '#' ? [] : ref.slice(2).split('/')) {
		let key: string;
		try {
			key = decodeURIComponent(raw);
		} catch {
			key = raw;
		}
		key = key.replace(/~1/g, '/').replace(/~0/g, '~');
		if (!(isObject(target) || Array.isArray(target)) || !hasOwn(target, key)) return undefined;
		target = (target as Record<string, unknown>)[key];
	}
	return target;
}

/** A short JSON rendering of a value for messages. */
function quote(value: unknown): string {
	const text = JSON.stringify(value) ?? String(value);
	return text.length > 40 ? `${text.slice(0, 37)}…` : text;
}

/** What checking one value against one definition found; merged upwards. */
interface Findings {
	missing: string[];
	typeErrors: TypeMismatch[];
	invalid: Violation[];
	/** Parts of the definition that cannot be read (malformed), with their paths. */
	defects: string[];
	/** Keywords reached on a value they apply to, that the check does not evaluate. */
	unchecked: Array<{ keyword: string; path: string }>;
}

const noFindings = (): Findings => ({
	missing: [],
	typeErrors: [],
	invalid: [],
	defects: [],
	unchecked: [],
});

/** Whether the value surely breaks the definition. */
const failed = (f: Findings): boolean =>
	f.missing.length + f.typeErrors.length + f.invalid.length > 0;

/** Whether part of the definition could not be checked (its verdict is then unknown). */
const uncertain = (f: Findings): boolean => f.defects.length + f.unchecked.length > 0;

function merge(into: Findings, from: Findings, notesOnly = false): void {
	if (!notesOnly) {
		into.missing.push(...from.missing);
		into.typeErrors.push(...from.typeErrors);
		into.invalid.push(...from.invalid);
	}
	into.defects.push(...from.defects);
	into.unchecked.push(...from.unchecked);
}

/**
 * Walks data and definition together (JSON Schema semantics, `docs/service-api.md` §completeness);
 * local `$ref`s resolve against `root`. `depth` counts the data levels descended, `hops` the
 * definitions applied to the same value ($ref, allOf, anyOf, oneOf) since the last descent.
 */
class Checker {
	constructor(private readonly root: unknown) {}

	check(
		definition: unknown,
		value: unknown,
		path: string,
		depth: number,
		hops: number,
		out: Findings,
	): void {
		const at = path || 'the top level';
		if (definition === true) return;
		if (definition === false) {
			out.invalid.push({
				path: shown(path),
				keyword: 'false',
				message: 'is not allowed by the definition (false)',
			});
			return;
		}
		if (!isObject(definition)) {
			out.defects.push(`the definition at ${at} is not an object`);
			return;
		}
		if (depth > MAX_DEFINITION_DEPTH) {
			out.defects.push(`the definition is nested deeper than ${MAX_DEFINITION_DEPTH} levels`);
			return;
		}
		if (hops > MAX_DEFINITION_DEPTH) {
			out.defects.push(`the definitions applied at ${at} refer to each other in a loop`);
			return;
		}
		const types = this.types(definition, at, out);
		const actual = jsonType(value);
		if (types && !types.some((type) => accepts(type, actual))) {
			out.typeErrors.push({ path: shown(path), expected: types.join(' or '), actual });
			return;
		}
		this.notEvaluated(definition, actual, at, out);
		if (definition.enum !== undefined) {
			if (!Array.isArray(definition.enum)) out.defects.push(`"enum" at ${at} is not a list`);
			else if (!definition.enum.some((allowed) => sameJson(allowed, value))) {
				const shownValues = definition.enum.slice(0, 5).map(quote).join(', ');
				out.invalid.push({
					path: shown(path),
					keyword: 'enum',
					message: `is not one of ${shownValues}${definition.enum.length > 5 ? ', …' : ''}`,
				});
			}
		}
		if (hasOwn(definition, 'const') && !sameJson(definition.const, value)) {
			out.invalid.push({
				path: shown(path),
				keyword: 'const',
				message: `is not ${quote(definition.const)}`,
			});
		}
		if (definition.$ref !== undefined)
			this.reference(definition.$ref, value, path, depth, hops, out);
		if (definition.allOf !== undefined) {
			const parts = this.alternatives(definition, 'allOf', at, out);
			for (const part of parts ?? []) this.check(part, value, path, depth, hops + 1, out);
		}
		for (const keyword of ['anyOf', 'oneOf'] as const) {
			if (definition[keyword] === undefined) continue;
			const branches = this.alternatives(definition, keyword, at, out);
			if (branches) this.branches(keyword, branches, value, path, depth, hops, out);
		}
		if (actual === 'object') this.checkObject(definition, value as IDataObject, path, depth, out);
		if (actual === 'array' && definition.items !== undefined) {
			const { items } = definition;
			if (Array.isArray(items)) {
				out.unchecked.push({ keyword: 'items (a list)', path: at });
			} else if (isObject(items) || typeof items === 'boolean') {
				(value as unknown[]).forEach((entry, index) =>
					this.check(items, entry, `${path}[${index}]`, depth + 1, 0, out),
				);
			} else {
				out.defects.push(`"items" at ${at} is not a definition`);
			}
		}
	}

	/** `type` as a list of JSON type names, or undefined when it names none (every type passes). */
	private types(definition: Definition, at: string, out: Findings): string[] | undefined {
		const { type } = definition;
		if (type === undefined) return undefined;
		const list = Array.isArray(type) ? type : [type];
		const unknown = list.filter((t) => typeof t !== 'string' || !JSON_TYPES.has(t));
		if (unknown.length) {
			out.defects.push(`the type at ${at} is not a JSON type (${JSON.stringify(type)})`);
			return undefined;
		}
		// OpenAPI 3.0.3: `nullable: true` adds null to the types `type` names (and only with `type`).
		return definition.nullable === true ? [...list, 'null'] : (list as string[]);
	}

	/** Notes each assertion keyword the check does not evaluate that applies to this value. */
	private notEvaluated(definition: Definition, actual: string, at: string, out: Findings): void {
		const family = actual === 'integer' ? 'number' : actual;
		for (const key of Object.keys(definition)) {
			const appliesTo = hasOwn(NOT_EVALUATED, key) ? NOT_EVALUATED[key] : undefined;
			if (appliesTo === 'any' || appliesTo === family)
				out.unchecked.push({ keyword: key, path: at });
		}
		// A nested $id starts a new base for the $refs inside it: they are not resolved that way.
		if (definition.$id !== undefined && definition !== this.root) {
			out.unchecked.push({ keyword: '$id', path: at });
		}
	}

	/** The definitions of allOf / anyOf / oneOf, or undefined (a defect noted) when not a list. */
	private alternatives(definition: Definition, keyword: string, at: string, out: Findings) {
		const list = definition[keyword];
		if (Array.isArray(list) && list.length > 0) return list as unknown[];
		out.defects.push(`"${keyword}" at ${at} is not a non-empty list of definitions`);
		return undefined;
	}

	/** A local `$ref` (`#`, `#/$defs/…`, `#/definitions/…`, any JSON pointer) is followed. */
	private reference(
		ref: unknown,
		value: unknown,
		path: string,
		depth: number,
		hops: number,
		out: Findings,
	) {
		const at = path || 'the top level';
		if (typeof ref !== 'string') {
			out.defects.push(`the $ref at ${at} is not a string`);
			return;
		}
		if (ref !== '#' && !ref.startsWith('#/')) {
			out.unchecked.push({ keyword: `$ref ${quote(ref)}`, path: at });
			return;
		}
		const target = pointed(this.root, ref);
		if (target === undefined) {
			out.defects.push(`the $ref at ${at} (${quote(ref)}) points to nothing`);
			return;
		}
		this.check(target, value, path, depth, hops + 1, out);
	}

	/**
	 * anyOf (at least one branch) and oneOf (exactly one). Each branch is tried apart: it matches when
	 * it finds nothing and was checked in full. When none matches, the findings shown are those of the
	 * one branch whose type fits the value, or one type error when no branch's type fits.
	 */
	private branches(
		keyword: 'anyOf' | 'oneOf',
		branches: unknown[],
		value: unknown,
		path: string,
		depth: number,
		hops: number,
		out: Findings,
	): void {
		const trials = branches.map((branch) => {
			const findings = noFindings();
			this.check(branch, value, path, depth, hops + 1, findings);
			return findings;
		});
		const matches = trials.filter((t) => !failed(t) && !uncertain(t)).length;
		const unknown = trials.filter((t) => !failed(t) && uncertain(t));
		if (keyword === 'anyOf' ? matches > 0 : matches === 1 && unknown.length === 0) return;
		if (keyword === 'oneOf' && matches > 1) {
			out.invalid.push({
				path: shown(path),
				keyword,
				message: `matches more than one of the ${branches.length} alternatives (oneOf allows one)`,
			});
			return;
		}
		if (matches + unknown.length > 0) {
			for (const trial of unknown) merge(out, trial, true);
			return;
		}
		const here = shown(path);
		const fitting = trials.filter((t) => !t.typeErrors.some((e) => e.path === here));
		if (fitting.length === 1) {
			merge(out, fitting[0]);
		} else if (fitting.length === 0) {
			const expected = new Set(
				trials.flatMap((t) => t.typeErrors.filter((e) => e.path === here).map((e) => e.expected)),
			);
			out.typeErrors.push({
				path: here,
				expected: [...expected].join(' or '),
				actual: jsonType(value),
			});
		} else {
			out.invalid.push({
				path: here,
				keyword,
				message: `matches none of the ${branches.length} alternatives`,
			});
		}
	}

	/**
	 * `required`, `properties` and `additionalProperties` of an object value. A field that is not
	 * required may be null: taken as absent. A required field that is null is present when its
	 * definition admits null, else missing.
	 */
	private checkObject(
		definition: Definition,
		value: IDataObject,
		path: string,
		depth: number,
		out: Findings,
	): void {
		const at = path || 'the top level';
		const { properties, required, additionalProperties } = definition;
		let named: Record<string, unknown> = {};
		if (properties !== undefined) {
			if (isObject(properties)) named = properties;
			else out.defects.push(`"properties" at ${at} is not an object`);
		}
		let others: unknown;
		if (additionalProperties !== undefined) {
			if (isObject(additionalProperties) || typeof additionalProperties === 'boolean') {
				// With patternProperties (not evaluated, noted) which fields are "additional" is unknown.
				if (definition.patternProperties === undefined) others = additionalProperties;
			} else {
				out.defects.push(`"additionalProperties" at ${at} is not a definition`);
			}
		}
		const definitionOf = (name: string) => (hasOwn(named, name) ? named[name] : others);
		const requiredNames = new Set<string>();
		if (required !== undefined) {
			if (!Array.isArray(required) || required.some((name) => typeof name !== 'string')) {
				out.defects.push(`"required" at ${at} is not a list of field names`);
			} else {
				for (const name of required as string[]) requiredNames.add(name);
			}
		}
		for (const name of requiredNames) {
			const fieldPath = child(path, name);
			if (!hasOwn(value, name) || value[name] === undefined) {
				out.missing.push(fieldPath);
			} else if (value[name] === null) {
				const trial = noFindings();
				this.check(definitionOf(name) ?? true, null, fieldPath, depth + 1, 0, trial);
				if (failed(trial)) out.missing.push(fieldPath);
				else merge(out, trial, true);
			}
		}
		for (const name of Object.keys(value)) {
			const field = value[name];
			const fieldDefinition = definitionOf(name);
			if (field === null || field === undefined || fieldDefinition === undefined) continue;
			const fieldPath = child(path, name);
			if (fieldDefinition === false && !hasOwn(named, name)) {
				out.invalid.push({
					path: fieldPath,
					keyword: 'additionalProperties',
					message: 'is a field the definition does not list (additionalProperties: false)',
				});
			} else {
				this.check(fieldDefinition, field, fieldPath, depth + 1, 0, out);
			}
		}
	}
}

function accepts(expected: string, actual: string): boolean {
	return expected === actual || (expected === 'number' && actual === 'integer');
}

/** Each distinct entry once, in first-seen order. */
function distinct<T>(list: T[], key: (entry: T) => string): T[] {
	const seen = new Set<string>();
	return list.filter((entry) => {
		const k = key(entry);
		if (seen.has(k)) return false;
		seen.add(k);
		return true;
	});
}

/** "a, b, c and 2 more". */
function listed(entries: string[], most: number): string {
	const shownEntries = entries.slice(0, most).join(', ');
	return entries.length > most ? `${shownEntries} and ${entries.length - most} more` : shownEntries;
}

/**
 * Checks `data` against `definition`, whose local `$ref`s resolve against `root` (an element of a
 * list result against `elementDefinition(root)`); `checkAgainstDefinition` is this with the
 * definition as its own root.
 */
export function checkWithRoot(root: unknown, definition: unknown, data: unknown): Validation {
	if (definition === null || definition === undefined) {
		return notChecked('The schema has no definition to check against');
	}
	const out = noFindings();
	new Checker(root).check(definition, data ?? null, '', 0, 0, out);
	const validation: Validation = {
		complete: false,
		missing: distinct(out.missing, (p) => p),
		typeErrors: distinct(out.typeErrors, (e) => `${e.path}\n${e.expected}\n${e.actual}`),
		invalid: distinct(out.invalid, (e) => `${e.path}\n${e.keyword}`),
	};
	const notes: string[] = [];
	const defects = distinct(out.defects, (d) => d);
	if (defects.length) {
		notes.push(`The schema definition could not be read in full: ${listed(defects, 5)}.`);
	}
	if (out.unchecked.length) {
		const where = new Map<string, string[]>();
		for (const { keyword, path } of out.unchecked) {
			const paths = where.get(keyword) ?? [];
			if (!paths.includes(path)) paths.push(path);
			where.set(keyword, paths);
		}
		const keywords = [...where].map(([keyword, paths]) => `${keyword} (at ${listed(paths, 3)})`);
		notes.push(`The definition uses keywords the node does not check: ${listed(keywords, 5)}.`);
	}
	if (notes.length) validation.warning = `${notes.join(' ')} The rest was checked.`;
	validation.complete =
		!validation.warning &&
		!validation.missing.length &&
		!validation.typeErrors.length &&
		!validation.invalid.length;
	return validation;
}

/**
 * Checks extracted data against a schema definition with JSON Schema's semantics
 * (`docs/service-api.md` §completeness): required fields absent, or null where their definition
 * does not admit null, go to `missing`; values whose JSON type differs from `type` to `typeErrors`;
 * values outside `enum` / `const`, fields `additionalProperties: false` refuses and values matching
 * no `anyOf` / `oneOf` alternative to `invalid`. Evaluates `type` (a name or a list), `nullable`,
 * `properties`, `required`, `additionalProperties`, `items`, `enum`, `const`, local `$ref`, `allOf`,
 * `anyOf` and `oneOf`. One difference from JSON Schema, on purpose: a field that is not required
 * may be null whatever its type (taken as absent). Other assertion keywords (`pattern`, `minimum`,
 * a remote `$ref`, …) reached on a value they apply to are not evaluated: `complete: false` and a
 * `warning` names them; annotations (`format`, `description`, `x-…`, …) are ignored. A definition it
 * cannot read (not an object, an unknown type name, `properties` or `required` of the wrong shape, a
 * `$ref` to nothing) never throws: the parts it can read are checked, and `warning` says what was
 * wrong, with `complete: false`.
 *
 * @param definition the schema's definition (`schema` of `§unversioned-2.3`), or a user's JSON
 * @param data the extracted data (`extracted_data`, `result`), or one element of a list result
 */
export function checkAgainstDefinition(definition: unknown, data: unknown): Validation {
	return checkWithRoot(definition, definition, data);
}

/**
 * The validation of data that could not be checked at all: `complete: false`, nothing listed, and
 * `warning` saying why.
 */
export function notChecked(warning: string): Validation {
	return { complete: false, missing: [], typeErrors: [], invalid: [], warning };
}

/**
 * The definition that applies to each element of a list result, for Split Into Items: `items` of
 * an array definition (one whose `type` is or lists `array`, reached through local `$ref`s at the top
 * if need be), otherwise the definition itself (the service may give a list of objects for an object
 * schema, `§v0-2.4`). The `$ref`s inside it resolve against the whole definition:
 * {@link validationsOf} checks it so.
 */
export function elementDefinition(definition: unknown): unknown {
	let list = definition;
	for (let hop = 0; hop < MAX_DEFINITION_DEPTH; hop++) {
		if (!isObject(list) || typeof list.$ref !== 'string' || list.type !== undefined) break;
		if (!list.$ref.startsWith('#')) break;
		const target = pointed(definition, list.$ref);
		if (target === undefined) break;
		list = target;
	}
	if (!isObject(list)) return definition;
	const types = Array.isArray(list.type) ? list.type : [list.type];
	const { items } = list;
	if (types.includes('array') && (isObject(items) || typeof items === 'boolean')) return items;
	return definition;
}
