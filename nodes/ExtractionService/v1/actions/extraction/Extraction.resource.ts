import type { INodeProperties } from 'n8n-workflow';

import { NOT_AS_TOOL } from '../fields/versions';
import * as create from './create.operation';
import * as del from './delete.operation';
import * as download from './download.operation';
import * as get from './get.operation';
import * as getAll from './getAll.operation';

/** Extraction resource (`§unversioned-2.1`): structured data from an uploaded document (token). */
export const operations = { create, delete: del, download, get, getAll };

export const description: INodeProperties[] = [
	{
		displayName:
			'An Extraction (token credential) uploads a file and extracts its data in one step, optionally with a schema. For the step-by-step documents → parsings → extracts API with an API key, use the Extract resource.',
		name: 'extractionNotice',
		type: 'notice',
		default: '',
		displayOptions: { show: { resource: ['extraction'] } },
	},
	{
		displayName: 'Operation',
		name: 'operation',
		type: 'options',
		noDataExpression: true,
		displayOptions: { show: { resource: ['extraction'] } },
		options: [
			{
				name: 'Create',
				value: 'create',
				description: 'Upload a document and extract its data',
				action: 'Create an extraction that returns structured data using credits',
				displayOptions: NOT_AS_TOOL,
			},
			{
				name: 'Delete',
				value: 'delete',
				description: 'Delete an extraction',
				action: 'Delete an extraction for good and get its ID back',
			},
			{
				name: 'Download',
				value: 'download',
				description: 'Download an extraction as CSV, JSON or images',
				action: 'Download an extraction as a CSV JSON or ZIP file at no cost',
			},
			{
				name: 'Get',
				value: 'get',
				description: 'Retrieve an extraction',
				action: 'Get an extraction with its status and extracted data at no cost',
			},
			{
				name: 'Get Many',
				value: 'getAll',
				description: 'List extractions',
				action: 'Get many extractions with their status at no cost',
			},
		],
		default: 'create',
	},
	...create.description,
	...get.description,
	...getAll.description,
	...del.description,
	...download.description,
];
