import type { INodeProperties } from 'n8n-workflow';

/** Upload types the unversioned family accepts (`§unversioned-4.2`, `§unversioned-8.1`), with their MIME types. */
export const EXTRACTION_FILE_TYPES: Record<string, string> = {
	'.pdf': 'application/pdf',
	'.png': 'image/png',
	'.jpg': 'image/jpeg',
	'.jpeg': 'image/jpeg',
};

/** The extraction servers (`§unversioned-2.1`, `§unversioned-4.2`). */
const SERVERS = ['EU-1', 'FR-1', 'FR-2', 'FR-3'];

export const serverField: INodeProperties = {
	displayName: 'Server',
	name: 'server',
	type: 'options',
	options: SERVERS.map((server) => ({ name: server, value: server })),
	default: 'EU-1',
	required: true,
	description: 'Server that processes the document',
};
