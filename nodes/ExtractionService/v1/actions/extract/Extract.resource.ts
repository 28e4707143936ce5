import type { INodeProperties } from 'n8n-workflow';

import * as create from './create.operation';
import * as get from './get.operation';

export { create, get };

/** Extract resource (`v0-api.md §2.4`): structured JSON from a schema. */
export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['extract'] } },
		options: [
			{
				name: 'Create',
				value: 'create',
				description: 'Extract structured data from a document with a schema',
				action: 'Create an extract',
			},
			{
				name: 'Get',
				value: 'get',
				description: 'Retrieve an extract',
				action: 'Get an extract',
			},
		],
		default: 'create',
	},
	...create.description,
	...get.description,
];
