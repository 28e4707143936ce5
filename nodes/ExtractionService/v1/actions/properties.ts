import type { INodeProperties } from 'n8n-workflow';

import * as document from './document/Document.resource';
import * as extract from './extract/Extract.resource';
import * as extraction from './extraction/Extraction.resource';
import * as parsing from './parsing/Parsing.resource';
import * as schema from './schema/Schema.resource';
import * as workflow from './workflow/Workflow.resource';

/** Resources of the `/v0` family, authenticated with the API key credential (`v0-api.md §5`). */
export const V0_RESOURCES = ['document', 'extract', 'parsing'];

/** Resources of the unversioned family, authenticated with the token credential (`unversioned-api.md §5`). */
export const TOKEN_RESOURCES = ['extraction', 'schema', 'workflow'];

/** The parameters of version 1: the resource selector, then each resource's operations and fields. */
export const properties: INodeProperties[] = [
	{
		displayName: 'Resource',
		name: 'resource',
		type: 'options',
		noDataExpression: true,
		options: [
			{ name: 'Document', value: 'document', description: 'Stored files (/v0, API key)' },
			{ name: 'Extract', value: 'extract', description: 'Structured data from a schema (/v0, API key)' },
			{ name: 'Extraction', value: 'extraction', description: 'Upload and extract in one step (token)' },
			{ name: 'Parsing', value: 'parsing', description: 'OCR text, markdown and pictures (/v0, API key)' },
			{ name: 'Schema', value: 'schema', description: 'Definitions of the data to extract (token)' },
			{ name: 'Workflow', value: 'workflow', description: 'Upload documents to a configured workflow (token)' },
		],
		default: 'extract',
	},
	...document.description,
	...extract.description,
	...extraction.description,
	...parsing.description,
	...schema.description,
	...workflow.description,
];
