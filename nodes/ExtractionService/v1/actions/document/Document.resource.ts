import type { INodeProperties } from 'n8n-workflow';

import { NOT_AS_TOOL } from '../fields';
import * as download from './download.operation';
import * as get from './get.operation';
import * as getAll from './getAll.operation';
import * as upload from './upload.operation';

/** Document resource (`§v0-2.1`): a stored, reusable file. */
export const operations = { download, get, getAll, upload };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['document'] } },
		options: [
			{
				name: 'Download',
				value: 'download',
				description: 'Download the file of a document',
				action: 'Download a document',
			},
			{ name: 'Get', value: 'get', description: 'Retrieve a document', action: 'Get a document' },
			{
				name: 'Get Many',
				value: 'getAll',
				description: 'List documents',
				action: 'Get many documents',
			},
			{
				name: 'Upload',
				value: 'upload',
				description: 'Upload a file as a document',
				action: 'Upload a document',
				displayOptions: NOT_AS_TOOL,
			},
		],
		default: 'upload',
	},
	...upload.description,
	...get.description,
	...getAll.description,
	...download.description,
];
