import type { INodeProperties, INodePropertyOptions } from 'n8n-workflow';

import { CREDENTIAL_TYPE, type ApiFamily } from '../../../shared/transport';
import * as document from './document/Document.resource';
import * as extract from './extract/Extract.resource';
import * as extraction from './extraction/Extraction.resource';
import { executionSettingsFields } from './fields/collections';
import { NOT_AS_TOOL, allowChangesField } from './fields/versions';
import type { Operation } from './operation';
import * as parsing from './parsing/Parsing.resource';
import * as schema from './schema/Schema.resource';
import * as workflow from './workflow/Workflow.resource';

/**
 * The node's resources, described once: the option users pick, the API family (and so the
 * credential: `§v0-5`, `§unversioned-5`), and the module holding its operations and their UI.
 * The resource selector, the router's operation table and the credentials' display options are
 * all derived from this table: adding a resource means a row here and its own folder.
 */
const RESOURCES = [
	{
		value: 'document',
		name: 'Document',
		family: 'v0',
		description: 'Stored files (/v0, API key)',
		module: document,
	},
	{
		value: 'extract',
		name: 'Extract',
		family: 'v0',
		description: 'Structured data from a parsed document, step by step (/v0, API key)',
		module: extract,
	},
	{
		value: 'extraction',
		name: 'Extraction',
		family: 'unversioned',
		description: 'Upload a file and extract its data in one step (token)',
		module: extraction,
	},
	{
		value: 'parsing',
		name: 'Parsing',
		family: 'v0',
		description: 'OCR text, markdown and pictures (/v0, API key)',
		module: parsing,
	},
	{
		value: 'schema',
		name: 'Schema',
		family: 'unversioned',
		description: 'Definitions of the data to extract (token)',
		module: schema,
	},
	{
		value: 'workflow',
		name: 'Workflow',
		family: 'unversioned',
		description: 'Upload documents to a configured workflow (token)',
		module: workflow,
	},
] as const satisfies ReadonlyArray<{
	value: string;
	name: string;
	family: ApiFamily;
	description: string;
	module: {
		description: INodeProperties[];
		operations: Record<string, Pick<Operation, 'execute'>>;
	};
}>;

export type ResourceName = (typeof RESOURCES)[number]['value'];

/** Every resource's operations, by the `resource` and `operation` parameter values. */
export const operations: Record<
	string,
	Record<string, Pick<Operation, 'execute'>>
> = Object.fromEntries(RESOURCES.map((resource) => [resource.value, resource.module.operations]));

/** The node's credentials, each shown for the resources of its family. */
export const credentials = (['v0', 'unversioned'] as const).map((family) => ({
	name: CREDENTIAL_TYPE[family],
	required: true,
	displayOptions: {
		show: { resource: RESOURCES.filter((r) => r.family === family).map((r) => r.value) },
	},
}));

/** The operations that only read: the tool variant offers them without `allowChanges`. */
export const READ_OPERATIONS = new Set(['get', 'getAll', 'download']);

/** The tool variant of version 3 and later (where `allowChanges` exists), and of older versions. */
const TOOL_FROM_3 = { '@tool': [true], '@version': [{ _cnd: { gte: 3 } }] };
const TOOL_BEFORE_3 = { '@tool': [true], '@version': [{ _cnd: { lte: 2 } }] };

/**
 * A resource's parameters, its operation selector made three times (n8n shows the one whose display
 * options match): as it always was for the regular node and for tool nodes before version 3; and
 * for the tool variant from version 3, its operations that cost credits or change data hidden while
 * `allowChanges` is off, starting on Get (a hidden default is a value the editor flags as not
 * supported).
 */
function guarded(description: INodeProperties[]): INodeProperties[] {
	return description.flatMap((property) => {
		const options = property.options as INodePropertyOptions[];
		if (property.name !== 'operation' || !options.some((option) => option.value === 'get'))
			return [property];
		const shown = property.displayOptions ?? {};
		return [
			{ ...property, displayOptions: { ...shown, hide: { ...shown.hide, '@tool': [true] } } },
			{ ...property, displayOptions: { ...shown, show: { ...shown.show, ...TOOL_BEFORE_3 } } },
			{
				...property,
				default: READ_OPERATIONS.has(String(property.default)) ? property.default : 'get',
				displayOptions: { ...shown, show: { ...shown.show, ...TOOL_FROM_3 } },
				options: options.map((option) =>
					READ_OPERATIONS.has(String(option.value))
						? option
						: {
								...option,
								displayOptions: {
									...option.displayOptions,
									hide: { ...option.displayOptions?.hide, allowChanges: [false] },
								},
							},
				),
			},
		];
	});
}

/** The node's parameters: the tool switch, the resource selector, each resource's operations and fields, then the execution settings. */
export const properties: INodeProperties[] = [
	allowChangesField,
	{
		displayName: 'Resource',
		name: 'resource',
		type: 'options',
		noDataExpression: true,
		// Workflow uploads files only: an AI agent's tool cannot use it.
		options: RESOURCES.map(({ name, value, description }) => ({
			name,
			value,
			description,
			...(value === 'workflow' ? { displayOptions: NOT_AS_TOOL } : {}),
		})),
		default: 'extract',
	},
	...RESOURCES.flatMap((resource) => guarded(resource.module.description)),
	...executionSettingsFields,
];
