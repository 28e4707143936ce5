import {
	NodeOperationError,
	type IDataObject,
	type INode,
	type INodeProperties,
} from 'n8n-workflow';

import { servicePath, type ExtractionServiceClient } from '../transport';
import { parseJson } from './validation';

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
 * What Check Against Schema adds to an item as `validation`.
 * `complete` is true only when no required field is missing, no value has the wrong type and the
 * definition could be read (no `warning`).
 */
export interface Validation {
	complete: boolean;
	/** Paths of required fields that are absent or null. */
	missing: string[];
	typeErrors: TypeMismatch[];
	/** Why the check could not be made in full (a malformed definition, no schema, …). */
	warning?: string;
}

/** The JSON types a definition's `type` may name (`docs/service-api.md` §node, "Completeness"). */
const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object', 'null']);

/** Definitions nested deeper than this are not followed (a warning says so). */
export const MAX_DEFINITION_DEPTH = 64;

type Definition = Record<string, unknown>;

function isObject(value: unknown): value is Record<string, unknown> {
	return value !== null && typeof value === 'object' && !Array.isArray(value);
}

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

/** Walks data and definition together; collects findings and the definition's defects. */
class Checker {
	readonly missing: string[] = [];
	readonly typeErrors: TypeMismatch[] = [];
	readonly defects: string[] = [];

	check(definition: unknown, value: unknown, path: string, depth: number): void {
		const at = path || 'the top level';
		if (!isObject(definition)) {
			this.defects.push(`the definition at ${at} is not an object`);
			return;
		}
		if (depth > MAX_DEFINITION_DEPTH) {
			this.defects.push(`the definition is nested deeper than ${MAX_DEFINITION_DEPTH} levels`);
			return;
		}
		const types = this.types(definition, at);
		const actual = jsonType(value);
		if (actual === 'null') return;
		if (types && !types.some((type) => accepts(type, actual))) {
			this.typeErrors.push({ path: path || '(top level)', expected: types.join(' or '), actual });
			return;
		}
		if (actual === 'object') this.checkObject(definition, value as IDataObject, path, depth);
		if (actual === 'array' && definition.items !== undefined) {
			if (Array.isArray(definition.items)) return; // tuple form: not followed
			(value as unknown[]).forEach((entry, index) =>
				this.check(definition.items, entry, `${path}[${index}]`, depth + 1),
			);
		}
	}

	/** `type` as a list of JSON type names, or undefined when it names none (unknown keywords pass). */
	private types(definition: Definition, at: string): string[] | undefined {
		const { type } = definition;
		if (type === undefined) return undefined;
		const list = Array.isArray(type) ? type : [type];
		const unknown = list.filter((t) => typeof t !== 'string' || !JSON_TYPES.has(t));
		if (unknown.length) {
			this.defects.push(`the type at ${at} is not a JSON type (${JSON.stringify(type)})`);
			return undefined;
		}
		return definition.nullable === true ? [...list, 'null'] : (list as string[]);
	}

	private checkObject(definition: Definition, value: IDataObject, path: string, depth: number) {
		const at = path || 'the top level';
		const { properties, required } = definition;
		if (required !== undefined) {
			if (!Array.isArray(required) || required.some((name) => typeof name !== 'string')) {
				this.defects.push(`"required" at ${at} is not a list of field names`);
			} else {
				for (const name of required as string[]) {
					const present = Object.prototype.hasOwnProperty.call(value, name);
					if (!present || value[name] === null || value[name] === undefined) {
						this.missing.push(child(path, name));
					}
				}
			}
		}
		if (properties === undefined) return;
		if (!isObject(properties)) {
			this.defects.push(`"properties" at ${at} is not an object`);
			return;
		}
		for (const [name, property] of Object.entries(properties)) {
			if (!Object.prototype.hasOwnProperty.call(value, name)) continue;
			this.check(property, value[name], child(path, name), depth + 1);
		}
	}
}

function accepts(expected: string, actual: string): boolean {
	return expected === actual || (expected === 'number' && actual === 'integer');
}

/**
 * Checks extracted data against a schema definition (`docs/service-api.md` §node, "Completeness"):
 * required fields absent or null go to `missing`; values whose JSON type differs from `type` go to
 * `typeErrors`. Reads `type` (a name or a list of names), `nullable`, `properties`, `required` and
 * `items`; every other keyword is ignored. A definition it cannot read (not an object, an unknown
 * type name, `properties` or `required` of the wrong shape) never throws: the parts it can read are
 * checked, and `warning` says what was wrong, with `complete: false`.
 *
 * @param definition the schema's definition (`schema` of `§unversioned-2.3`), or a user's JSON
 * @param data the extracted data (`extracted_data`, `result`), or one element of a list result
 */
export function checkAgainstDefinition(definition: unknown, data: unknown): Validation {
	if (definition === null || definition === undefined) {
		return notChecked('The schema has no definition to check against');
	}
	const checker = new Checker();
	checker.check(definition, data ?? null, '', 0);
	if (data === null || data === undefined) {
		// No data at all: every required field of the top level is missing.
		if (isObject(definition) && Array.isArray(definition.required)) {
			for (const name of definition.required)
				if (typeof name === 'string') checker.missing.push(name);
		}
	}
	const validation: Validation = {
		complete: false,
		missing: checker.missing,
		typeErrors: checker.typeErrors,
	};
	if (checker.defects.length) {
		validation.warning = `The schema definition could not be read in full: ${checker.defects.slice(0, 5).join('; ')}${checker.defects.length > 5 ? `; and ${checker.defects.length - 5} more` : ''}. The rest was checked.`;
	}
	validation.complete =
		!validation.warning && !validation.missing.length && !validation.typeErrors.length;
	return validation;
}

/**
 * The validation of data that could not be checked at all: `complete: false`, nothing listed, and
 * `warning` saying why.
 */
export function notChecked(warning: string): Validation {
	return { complete: false, missing: [], typeErrors: [], warning };
}

/**
 * The definition that applies to each element of a list result, for Split Into Items: `items` of
 * an array definition, otherwise the definition itself (the service may give a list of objects for
 * an object schema, `§v0-2.4`).
 */
export function elementDefinition(definition: unknown): unknown {
	if (isObject(definition) && definition.type === 'array' && definition.items !== undefined) {
		return definition.items;
	}
	return definition;
}

/** The Options entry that turns the check on (Extraction and Extract Create/Get, the trigger). */
export const checkAgainstSchemaField: INodeProperties = {
	displayName: 'Check Against Schema',
	name: 'checkAgainstSchema',
	type: 'boolean',
	default: false,
	description:
		"Whether to compare the extracted data with the schema's definition and add <code>validation</code> to each item: <code>complete</code>, the <code>missing</code> required fields and the <code>typeErrors</code>, so an If node can send incomplete documents to a person",
};

/** The /v0 family cannot read a schema: Extract operations take the definition as a parameter. */
export const schemaDefinitionField: INodeProperties = {
	displayName: 'Schema Definition',
	name: 'schemaDefinition',
	type: 'json',
	default: '',
	description:
		"The definition to check against, for Check Against Schema (the /v0 API cannot read a schema): paste the schema's JSON definition, or map a Schema → Get output",
};

/**
 * Check Against Schema, as an item asked for it: `definition` given (Extract, /v0), or undefined:
 * the definition of the job's own schema, read by id (Extraction).
 */
export interface CheckSettings {
	definition?: unknown;
}

/**
 * Reads Check Against Schema and, for Extract (`givenDefinition`), the Schema Definition; before
 * any request. A whole Schema resource (`id`, `name`, `schema`: a Schema → Get output) stands for
 * its `schema`.
 *
 * @returns undefined when the option is off
 * @throws NodeOperationError naming "Schema Definition" when it is required and empty, or not JSON
 */
export function readCheckSettings(
	node: INode,
	itemIndex: number,
	options: IDataObject,
	givenDefinition: boolean,
): CheckSettings | undefined {
	if (options.checkAgainstSchema !== true) return undefined;
	if (!givenDefinition) return {};
	let definition = parseJson(node, itemIndex, 'Schema Definition', options.schemaDefinition);
	if (definition === undefined) {
		throw new NodeOperationError(
			node,
			'Parameter "Schema Definition" is required when Check Against Schema is on',
			{
				itemIndex,
				description:
					"The /v0 API cannot read a schema: paste the schema's definition (JSON), or map the output of a Schema → Get node.",
			},
		);
	}
	if (isObject(definition) && typeof definition.name === 'string' && isObject(definition.schema)) {
		definition = definition.schema;
	}
	return { definition };
}

/** What the check compares with: a definition, or why there is none. */
type DefinitionLookup = { definition: unknown } | { warning: string };

/**
 * The definition an item is checked against: the given one, or the job's schema read with
 * `GET /schema/{id}/` (`§unversioned-4.7`) once per client — once per execution, once per poll for
 * the trigger — however many items share it. A schema that cannot be read is a warning, not an error.
 */
async function lookUpDefinition(
	client: ExtractionServiceClient,
	check: CheckSettings,
	job: IDataObject,
	itemIndex: number,
): Promise<DefinitionLookup> {
	if ('definition' in check) return { definition: check.definition };
	const id = job.schema;
	if (typeof id !== 'string' || !id)
		return { warning: 'The extraction has no schema to check against' };
	return await client.once(`schema definition ${id}`, async (): Promise<DefinitionLookup> => {
		try {
			const schema = await client.request<IDataObject>({
				family: 'unversioned',
				method: 'GET',
				path: servicePath('unversioned', 'schema', id),
				itemIndex,
				resourceName: 'Schema',
				resourceId: id,
			});
			return { definition: schema.schema };
		} catch (error) {
			return { warning: `The schema ${id} could not be read: ${(error as Error).message}` };
		}
	});
}

/**
 * The `validation` of each output object of one job (`docs/service-api.md` §completeness): one for
 * the whole result, or, with Split Into Items on a list result, one per element against the
 * element's definition. A job that is not `FINISHED` is checked as it is, with a warning.
 *
 * @param result the job's extracted data (`extracted_data`, `result`)
 * @param split whether the output has one object per element (Simplify + Split Into Items, list result)
 * @returns one validation per output object, in order (`count` of them)
 */
export async function validationsOf(
	client: ExtractionServiceClient,
	check: CheckSettings,
	job: IDataObject,
	result: unknown,
	split: boolean,
	itemIndex: number,
): Promise<Validation[]> {
	const lookup = await lookUpDefinition(client, check, job, itemIndex);
	const status =
		job.status === 'FINISHED'
			? undefined
			: `Its status is ${String(job.status)}, not FINISHED: the data was checked as it is.`;
	const one = (definition: unknown, data: unknown): Validation => {
		const validation =
			'warning' in lookup ? notChecked(lookup.warning) : checkAgainstDefinition(definition, data);
		if (!status) return validation;
		return {
			...validation,
			complete: false,
			warning: validation.warning ? `${validation.warning} ${status}` : status,
		};
	};
	if (split && Array.isArray(result)) {
		const definition = 'definition' in lookup ? elementDefinition(lookup.definition) : undefined;
		return result.map((element) => one(definition, element));
	}
	return [one('definition' in lookup ? lookup.definition : undefined, result)];
}
