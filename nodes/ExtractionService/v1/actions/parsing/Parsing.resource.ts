import type { INodeProperties } from 'n8n-workflow';

import * as create from './create.operation';
import * as get from './get.operation';
import * as getAll from './getAll.operation';

/** Parsing resource (`§v0-2.3`): OCR text, markdown and pictures of a document. */
export const operations = { create, get, getAll };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['parsing'] } },
		options: [
			{
				name: 'Create',
				value: 'create',
				description: 'Parse a document into text, markdown and pictures',
				action: 'Create a parsing that returns the text for 2 credits a page',
			},
			{
				name: 'Get',
				value: 'get',
				description: 'Retrieve a parsing',
				action: 'Get a parsing with its text and markdown at no cost',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				description: 'List parsings',
				action: 'Get many parsings with their status at no cost',
			},
		],
		default: 'create',
	},
	...create.description,
	...get.description,
	...getAll.description,
];
