import type { IDataObject, INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { parseJsonObject } from '../../../../shared/validation';

/**
 * The JSON body of schema create/update (`§unversioned-4.6, §unversioned-4.8`): `name` and
 * `description` required non-empty strings, `schema` the definition (a JSON object; the key must be
 * present, `§unversioned-2.3`), `additional_informations` optional.
 *
 * @throws NodeOperationError naming the parameter, before any request
 */
export function schemaBody(
	node: INode,
	itemIndex: number,
	input: {
		name: unknown;
		description: unknown;
		definition: unknown;
		additionalInformations?: unknown;
	},
): IDataObject {
	const name = String(input.name ?? '').trim();
	const description = String(input.description ?? '').trim();
	if (!name) throw new NodeOperationError(node, 'Parameter "Name" is empty', { itemIndex });
	if (!description)
		throw new NodeOperationError(node, 'Parameter "Description" is empty', { itemIndex });
	const definition = parseJsonObject(node, itemIndex, 'Definition', input.definition);
	if (!definition)
		throw new NodeOperationError(
			node,
			'Parameter "Definition" is empty: give a JSON schema object',
			{ itemIndex },
		);
	const body: IDataObject = { name, description, schema: definition };
	const extra = String(input.additionalInformations ?? '').trim();
	if (extra) body.additional_informations = extra;
	return body;
}
