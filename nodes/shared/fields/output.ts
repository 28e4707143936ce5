import type { INodeProperties } from 'n8n-workflow';

/** Simplify: the output switch of every job that has extracted data (`shared/simplify.ts`). */
export const simplifyField: INodeProperties = {
	displayName: 'Simplify',
	name: 'simplify',
	type: 'boolean',
	default: true,
	description:
		'Whether to return the extracted fields at the top level with the identifying fields (ID, status, schema or document name), instead of the full resource',
};

/** Split Into Items: shown only with Simplify (it splits the simplified result). */
export const splitIntoItemsField: INodeProperties = {
	displayName: 'Split Into Items',
	name: 'splitIntoItems',
	type: 'boolean',
	default: false,
	description:
		'Whether to output one item per element when the result is a list (e.g. invoice lines)',
	displayOptions: { show: { '/simplify': [true] } },
};
