import type { IDataObject } from 'n8n-workflow';

import { servicePath } from '../../../../shared/transport';
import { optionsCollection } from '../fields/collections';
import { forOperation, type OperationExecute } from '../operation';
import { additionalInformationsField, definitionField } from './common';
import { schemaBody } from './body';

export const description = forOperation('schema', 'create', [
	{
		displayName: 'Name',
		name: 'name',
		type: 'string',
		default: '',
		required: true,
		placeholder: 'e.g. Invoice',
		description: 'Name of the schema',
	},
	{
		displayName: 'Description',
		name: 'description',
		type: 'string',
		default: '',
		required: true,
		description: 'What the schema extracts',
	},
	{ ...definitionField, required: true },
	...optionsCollection([additionalInformationsField]),
]);

/**
 * Schema → Create (`§unversioned-4.6`): JSON body `name`, `description`, `schema` (the
 * definition, validated as a JSON object before sending), `additional_informations`.
 *
 * @returns the created Schema (`§unversioned-2.3`)
 */
export const execute: OperationExecute = async function (itemIndex, client) {
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const body = schemaBody(this.getNode(), itemIndex, {
		name: this.getNodeParameter('name', itemIndex),
		description: this.getNodeParameter('description', itemIndex),
		definition: this.getNodeParameter('definition', itemIndex),
		additionalInformations: options.additionalInformations,
	});
	const schema = await client.request<IDataObject>({
		family: 'unversioned',
		method: 'POST',
		path: servicePath('unversioned', 'schema'),
		body,
		itemIndex,
		resourceName: 'Schema',
	});
	return [{ json: schema }];
};
