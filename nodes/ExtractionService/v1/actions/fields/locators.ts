/** ID parameters: plain strings on node version 1, resource locators (From List / By ID) from version 2. */
import type { INodeProperties } from 'n8n-workflow';

import { UUID_PATTERN, UUID_PLACEHOLDER } from '../../../../shared/validation';
import { forVersion1, fromVersion2 } from './versions';

/** What the By ID mode of a locator accepts: a UUID, spaces around it allowed (they are trimmed). */
const UUID_REGEX = `^\\s*${UUID_PATTERN}\\s*$`;

/** An ID that a list endpoint can offer: how its locator searches and what it says. */
export interface IdParameter {
	/** UI name, e.g. "Document ID" (both the string and the locator; errors name it so). */
	displayName: string;
	/** Parameter name, e.g. `documentId`. */
	name: string;
	description: string;
	/** The resource, for the locator's name and messages ("Document"). */
	resourceName: string;
	/** `methods.listSearch` function of the "From List" mode; absent when the service has no list. */
	searchListMethod?: string;
}

/**
 * A resource locator: From List (searching with `searchListMethod`) or By ID (a UUID).
 *
 * @param invalid the By ID mode's message for a value that is not a UUID
 */
function locator(
	field: Pick<INodeProperties, 'displayName' | 'name' | 'description' | 'required'>,
	searchListMethod: string,
	resourceName: string,
	invalid: string,
): INodeProperties {
	return {
		...field,
		type: 'resourceLocator',
		default: { mode: 'list', value: '' },
		modes: [
			{
				displayName: 'From List',
				name: 'list',
				type: 'list',
				placeholder: `Select a ${resourceName.toLowerCase()}...`,
				typeOptions: { searchListMethod, searchable: true },
			},
			{
				displayName: 'By ID',
				name: 'id',
				type: 'string',
				placeholder: UUID_PLACEHOLDER,
				validation: [{ type: 'regex', properties: { regex: UUID_REGEX, errorMessage: invalid } }],
			},
		],
	};
}

/**
 * A required ID parameter. With a list endpoint: a plain string on version 1 and, from version 2,
 * a resource locator (From List / By ID) — both read with `extractValue`; without one: a string.
 */
export function idParameter(id: IdParameter): INodeProperties[] {
	const plain: INodeProperties = {
		displayName: id.displayName,
		name: id.name,
		type: 'string',
		default: '',
		required: true,
		placeholder: UUID_PLACEHOLDER,
		description: id.description,
	};
	if (!id.searchListMethod) return [plain];
	return [
		forVersion1(plain),
		fromVersion2(
			locator(
				{ displayName: id.displayName, name: id.name, required: true, description: id.description },
				id.searchListMethod,
				id.resourceName,
				`Not a valid ${id.resourceName.toLowerCase()} ID: expected a UUID`,
			),
		),
	];
}

/** The Document, Parsing and Extraction IDs (their lists: `§v0-4.2`, `§v0-4.6`, `§unversioned-4.1`). */
export const DOCUMENT_ID: Omit<IdParameter, 'description'> = {
	displayName: 'Document ID',
	name: 'documentId',
	resourceName: 'Document',
	searchListMethod: 'searchDocuments',
};
export const PARSING_ID: Omit<IdParameter, 'description'> = {
	displayName: 'Parsing ID',
	name: 'parsingId',
	resourceName: 'Parsing',
	searchListMethod: 'searchParsings',
};
export const EXTRACTION_ID: Omit<IdParameter, 'description'> = {
	displayName: 'Extraction ID',
	name: 'extractionId',
	resourceName: 'Extraction',
	searchListMethod: 'searchExtractions',
};

/** The Schema parameter as operations read it (`readId`). */
export const SCHEMA_ID = { displayName: 'Schema', name: 'schema' };

/** A schema picked from the searchable list (`GET /schema/`, `§unversioned-4.5`) or by ID. */
export function schemaLocator(required: boolean, description: string): INodeProperties {
	return locator(
		{ displayName: 'Schema', name: 'schema', required, description },
		'searchSchemas',
		'Schema',
		'Not a schema ID (a UUID)',
	);
}
