import type { INodeProperties } from 'n8n-workflow';

const UUID_REGEX = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/**
 * A schema picked from the searchable list (`GET /schema/`, `unversioned-api.md §4.5`) or by ID.
 *
 * @param required whether a schema must be chosen
 */
export function schemaLocator(required: boolean, description: string): INodeProperties {
	return {
		displayName: 'Schema',
		name: 'schema',
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		required,
		description,
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: 'Select a schema...',
				typeOptions: { searchListMethod: 'searchSchemas', searchable: true },
			},
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: 'e.g. 3f0c1a52-7d4e-4c1b-9a51-2b6f0e8d9c41',
				validation: [{ type: 'regex', properties: { regex: UUID_REGEX, errorMessage: 'Not a schema ID (a UUID)' } }],
			},
		],
	};
}

/** The schema definition parameter (`unversioned-api.md §2.3`: an OpenAPI-style JSON object). */
export const definitionField: INodeProperties = {
	displayName: 'Definition',
	name: 'definition',
	type: 'json',
	default: '{\n  "type": "object",\n  "properties": {\n    "invoice_number": { "type": "string", "description": "Invoice number" },\n    "total_amount": { "type": "number", "description": "Total amount" }\n  }\n}',
	description: 'The data to extract, as an OpenAPI JSON schema object',
};

export const additionalInformationsField: INodeProperties = {
	displayName: 'Additional Informations',
	name: 'additionalInformations',
	type: 'string',
	typeOptions: { rows: 3 },
	default: '',
	description: 'Context that helps interpret documents: jargon, abbreviations, date/currency formats, vendor aliases, layout quirks',
};
