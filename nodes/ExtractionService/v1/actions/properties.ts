import type { INodeProperties } from 'n8n-workflow';

import * as extract from './extract/Extract.resource';

/** Resources of the `/v0` family, authenticated with the API key credential (`v0-api.md §5`). */
export const V0_RESOURCES = ['extract'];

/** The parameters of version 1: the resource selector, then each resource's operations and fields. */
export const properties: INodeProperties[] = [
	{
		displayName: 'Resource',
		name: 'resource',
		type: 'options',
		noDataExpression: true,
		options: [{ name: 'Extract', value: 'extract', description: 'Structured data from a schema (API key)' }],
		default: 'extract',
	},
	...extract.description,
];
