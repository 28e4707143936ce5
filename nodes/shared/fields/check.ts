import type { INodeProperties } from 'n8n-workflow';

/** The Options entry that turns the check on (Extraction and Extract Create/Get, the trigger). */
export const checkAgainstSchemaField: INodeProperties = {
	displayName: 'Check Against Schema',
	name: 'checkAgainstSchema',
	type: 'boolean',
	default: false,
	description:
		"Whether to compare the extracted data with the schema's definition and add <code>validation</code> to each item: <code>complete</code>, the <code>missing</code> required fields, the <code>typeErrors</code> and the <code>invalid</code> values, so an If node can send incomplete documents to a person",
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
