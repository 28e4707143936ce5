/**
 * Check Against Schema for an item (`docs/service-api.md` §completeness): its settings, read before
 * any request; the definition each job is checked against (given, or its schema read by id); and the
 * `validation` of each output object. The check itself is `schema-check.ts`.
 */
import { NodeOperationError, type IDataObject, type INode } from 'n8n-workflow';

import { isNotFound, servicePath, type ExtractionServiceClient } from './transport';
import {
	checkWithRoot,
	elementDefinition,
	hasOwn,
	isObject,
	notChecked,
	type Validation,
} from './schema-check';
import { parseJson } from './validation';

/**
 * Check Against Schema, as an item asked for it: `definition` given (Extract, /v0), or undefined:
 * the definition of the job's own schema, read by id (Extraction).
 */
export interface CheckSettings {
	definition?: unknown;
}

/** "null", "a list", "a string", … for messages. */
function described(value: unknown): string {
	if (value === null || value === undefined) return 'null';
	if (Array.isArray(value)) return 'a list';
	return `a ${typeof value}`;
}

/**
 * Reads Check Against Schema and, for Extract (`givenDefinition`), the Schema Definition; before
 * any request. A whole Schema resource (an object with `name` and `schema`: a Schema → Get output,
 * or its JSON text) stands for its `schema`.
 *
 * @returns undefined when the option is off
 * @throws NodeOperationError naming "Schema Definition" when it is required and empty, not JSON,
 *   a Schema → Get output whose `schema` is not an object (null: the schema has no definition), or
 *   not a JSON object
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
	if (isObject(definition) && typeof definition.name === 'string' && hasOwn(definition, 'schema')) {
		if (!isObject(definition.schema)) {
			throw new NodeOperationError(
				node,
				`Parameter "Schema Definition" is a Schema → Get output whose "schema" is ${described(definition.schema)}, not a definition`,
				{
					itemIndex,
					description: `The schema "${definition.name}" has no definition to check against: give it one (Schema → Update), or paste a definition's JSON.`,
				},
			);
		}
		definition = definition.schema;
	}
	if (!isObject(definition)) {
		throw new NodeOperationError(
			node,
			`Parameter "Schema Definition" must be a JSON object (a schema's definition), got ${described(definition)}`,
			{
				itemIndex,
				description:
					'Paste the definition\'s JSON, such as {"type": "object", "required": […], "properties": {…}}, or map the output of a Schema → Get node.',
			},
		);
	}
	return { definition };
}

/** What the check compares with: a definition, or why there is none. */
type DefinitionLookup = { definition: unknown } | { warning: string };

/** A schema read and whether it may serve the rest of the execution (a definite answer). */
interface SchemaRead {
	lookup: DefinitionLookup;
	lasting: boolean;
}

/** `GET /schema/{id}/` (`§unversioned-4.7`): the definition, or why it cannot be read. */
async function readSchema(
	client: ExtractionServiceClient,
	id: string,
	itemIndex: number,
): Promise<SchemaRead> {
	try {
		const schema = await client.request<IDataObject>({
			family: 'unversioned',
			method: 'GET',
			path: servicePath('unversioned', 'schema', id),
			itemIndex,
			resourceName: 'Schema',
			resourceId: id,
		});
		return { lookup: { definition: schema.schema }, lasting: true };
	} catch (error) {
		// A schema that does not exist stays so for the execution; anything else may pass.
		const notFound = isNotFound(error);
		return {
			lookup: { warning: `The schema ${id} could not be read: ${(error as Error).message}` },
			lasting: notFound,
		};
	}
}

/**
 * The definition an item is checked against: the given one, or the job's schema read with
 * `GET /schema/{id}/` (`§unversioned-4.7`). A read that succeeded (or found no schema: 404) serves
 * the whole execution — the whole poll for the trigger — however many items share it; items waiting
 * on a read that failed otherwise (a 503, a timeout) read again, and only the item whose own read
 * failed gets the warning. A schema that cannot be read is a warning, not an error.
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
	const { lookup } = await client.once(
		`schema definition ${id}`,
		async () => await readSchema(client, id, itemIndex),
		(read) => read.lasting,
	);
	return lookup;
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
	const root = 'definition' in lookup ? lookup.definition : undefined;
	const one = (definition: unknown, data: unknown): Validation => {
		const validation =
			'warning' in lookup ? notChecked(lookup.warning) : checkWithRoot(root, definition, data);
		if (!status) return validation;
		return {
			...validation,
			complete: false,
			warning: validation.warning ? `${validation.warning} ${status}` : status,
		};
	};
	if (split && Array.isArray(result)) {
		const definition = elementDefinition(root);
		return result.map((element) => one(definition, element));
	}
	return [one(root, result)];
}
