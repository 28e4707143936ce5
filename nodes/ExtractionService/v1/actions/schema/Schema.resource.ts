import type { INodeProperties } from 'n8n-workflow';

import * as create from './create.operation';
import * as del from './delete.operation';
import * as get from './get.operation';
import * as getAll from './getAll.operation';
import * as update from './update.operation';

/** Schema resource (`§unversioned-2.3`): the definition of the data to extract (token). */
export const operations = { create, delete: del, get, getAll, update };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['schema'] } },
		options: [
			{
				name: 'Create',
				value: 'create',
				description: 'Create a schema',
				action: 'Create a schema and get its ID at no cost',
			},
			{
				name: 'Delete',
				value: 'delete',
				description: 'Delete a schema',
				action: 'Delete a schema for good and get its ID back',
			},
			{
				name: 'Get',
				value: 'get',
				description: 'Retrieve a schema',
				action: 'Get a schema with its field definitions at no cost',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				description: 'List schemas',
				action: 'Get many schemas with their names at no cost',
			},
			{
				name: 'Update',
				value: 'update',
				description: 'Update a schema',
				action: 'Update a schema and get it back at no cost',
			},
		],
		default: 'create',
	},
	...create.description,
	...get.description,
	...getAll.description,
	...update.description,
	...del.description,
];
