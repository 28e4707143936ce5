/** The binary fields: which input files an operation uploads, and where a download goes. */
import type { INodeProperties } from 'n8n-workflow';

export const binaryPropertyField: INodeProperties = {
	displayName: 'Input Binary Field',
	name: 'binaryPropertyName',
	type: 'string',
	default: 'data',
	required: true,
	placeholder: 'e.g. data or attachment_0, attachment_1',
	hint: 'The name of the input binary field holding the file; several names separated by commas upload several files',
	description:
		'Each file becomes its own job and output item. Use the option "All Binary Properties" for every file of the item (e.g. all email attachments).',
};

/** "Put Output File in Field": the binary property a download writes. */
export const outputBinaryField: INodeProperties = {
	displayName: 'Put Output File in Field',
	name: 'binaryPropertyName',
	type: 'string',
	default: 'data',
	required: true,
	hint: 'The name of the output binary field to put the file in',
	description: 'Binary property of the output item that receives the downloaded file',
};

export const allBinaryPropertiesField: INodeProperties = {
	displayName: 'All Binary Properties',
	name: 'allBinaryProperties',
	type: 'boolean',
	default: false,
	description:
		'Whether to upload every binary property of the item (e.g. every email attachment), ignoring Input Binary Field',
};

export const includeInputBinaryField: INodeProperties = {
	displayName: 'Include Input Binary',
	name: 'includeInputBinary',
	type: 'boolean',
	default: false,
	description:
		'Whether to pass the uploaded file on to the output item, so a later node can archive the original',
};

/** Options that only apply when Source is "Binary File" (Create operations with a Source selector). */
export const binarySourceOptionFields: INodeProperties[] = [
	allBinaryPropertiesField,
	includeInputBinaryField,
].map((field) => ({
	...field,
	displayOptions: { show: { '/source': ['binary'] } },
}));
