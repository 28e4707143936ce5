import type { INodeProperties } from 'n8n-workflow';

import * as upload from './upload.operation';

/** Workflow resource (`§unversioned-4.10`): an extraction configuration identified by a UUID. */
export const operations = { upload };

export const description: INodeProperties[] = [
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['workflow'] } },
		options: [
			{
				name: 'Upload',
				value: 'upload',
				description: 'Upload documents to a workflow, creating extractions',
				action: 'Upload documents to a workflow that returns structured data using credits',
			},
		],
		default: 'upload',
	},
	...upload.description,
];
