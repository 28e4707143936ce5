import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { optionsCollection } from '../fields/collections';
import { SCHEMA_ID, schemaLocator } from '../fields/locators';
import { byIdRequest, forOperation, type OperationExecute, readId } from '../operation';
import { schemaBody } from './body';
import { additionalInformationsField, definitionField } from './common';

export const description = forOperation('schema', 'update', [
	schemaLocator(true, 'The schema to update'),
	{
		displayName: 'Update Fields',
		name: 'updateFields',
		type: 'collection',
		placeholder: 'Add field',
		default: {},
		options: [
			additionalInformationsField,
			definitionField,
			{
				displayName: 'Description',
				name: 'description',
				type: 'string',
				default: '',
				description: 'What the schema extracts',
			},
			{
				displayName: 'Name',
				name: 'name',
				type: 'string',
				default: '',
				description: 'Name of the schema',
			},
		],
	},
	...optionsCollection([]),
]);

/**
 * Schema → Update (`§unversioned-4.8`). PUT needs every required field, so the node reads
 * the schema (`§unversioned-4.7`), applies the fields the user set, validates, and sends the whole schema.
 *
 * @returns the updated Schema
 * @throws NodeOperationError when no field is set or a value is invalid (before the PUT)
 */
export const execute: OperationExecute = async function (itemIndex, client) {
	const node = this.getNode();
	const id = readId(this, itemIndex, SCHEMA_ID);
	const update = this.getNodeParameter('updateFields', itemIndex, {}) as IDataObject;
	if (Object.keys(update).length === 0) {
		throw new NodeOperationError(
			node,
			'Parameter "Update Fields" is empty: add the fields to change',
			{ itemIndex },
		);
	}
	const request = byIdRequest(
		{ family: 'unversioned', segment: 'schema', resourceName: 'Schema' },
		id,
		itemIndex,
	);
	const current = await client.request<IDataObject>({ ...request, method: 'GET' });
	const body = schemaBody(node, itemIndex, {
		name: update.name ?? current.name,
		description: update.description ?? current.description,
		definition: update.definition ?? current.schema ?? {},
		additionalInformations: update.additionalInformations ?? current.additional_informations,
	});
	return [{ json: await client.request<IDataObject>({ ...request, method: 'PUT', body }) }];
};
