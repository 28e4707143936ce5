import type { INodeProperties } from 'n8n-workflow';

import { NOT_AS_TOOL } from '../fields/versions';
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
				action: 'Download the file of a document at no cost',
			},
			{
				name: 'Get',
				value: 'get',
				description: 'Retrieve a document',
				action: 'Get a document with its file name and page count at no cost',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				description: 'List documents',
				action: 'Get many documents with their file names at no cost',
			},
			{
				name: 'Upload',
				value: 'upload',
				description: 'Upload a file as a document',
				action: 'Upload a document and get its ID at no cost',
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
