import type { INodeProperties } from 'n8n-workflow';

import * as create from './create.operation';
import * as get from './get.operation';

/** Extract resource (`§v0-2.4`): structured JSON from a schema, on a parsing of a document. */
export const operations = { create, get };

export const description: INodeProperties[] = [
	{
		displayName:
			'An Extract (API key credential) reads a document in steps: the document is parsed, then a schema is applied to the parsing. To upload a file and get its data in one step with a token, use the Extraction resource.',
		name: 'extractNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { resource: ['extract'] } },
	},
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
				action: 'Create an extract that returns structured data for 3 credits a page',
			},
			{
				name: 'Get',
				value: 'get',
				description: 'Retrieve an extract',
				action: 'Get an extract with its structured data at no cost',
			},
		],
		default: 'create',
	},
	...create.description,
	...get.description,
];
