import type { INodeProperties } from 'n8n-workflow';

/** The schema definition parameter (`§unversioned-2.3`: an OpenAPI-style JSON object). */
export const definitionField: INodeProperties = {
	displayName: 'Definition',
	name: 'definition',
	type: 'json',
	default:
		'{\n  "type": "object",\n  "properties": {\n    "invoice_number": { "type": "string", "description": "Invoice number" },\n    "total_amount": { "type": "number", "description": "Total amount" }\n  }\n}',
	description: 'The data to extract, as an OpenAPI JSON schema object',
};

export const additionalInformationsField: INodeProperties = {
	displayName: 'Additional Informations',
	name: 'additionalInformations',
	type: 'string',
	typeOptions: { rows: 3 },
	default: '',
	description:
		'Context that helps interpret documents: jargon, abbreviations, date/currency formats, vendor aliases, layout quirks',
};
