/** The Options and Execution Settings collections, and Return All / Limit of the Get Many operations. */
import type { INodeProperties } from 'n8n-workflow';

import {
	DEFAULT_CONCURRENCY,
	DEFAULT_MAX_RETRIES,
	DEFAULT_REQUEST_TIMEOUT_SECONDS,
} from '../../../../shared/transport';
import { forVersion1, fromVersion2 } from './versions';

/** The execution-wide transport settings (read once, from the first item). */
const executionSettingFields: INodeProperties[] = [
	{
		displayName: 'Concurrency',
		name: 'concurrency',
		type: 'number',
		typeOptions: { minValue: 1, maxValue: 50 },
		default: DEFAULT_CONCURRENCY,
		description:
			'How many requests (uploads, polls) the node sends at once across all items; waiting jobs take no slot',
	},
	{
		displayName: 'Max Retries',
		name: 'maxRetries',
		type: 'number',
		typeOptions: { minValue: 0, maxValue: 10 },
		default: DEFAULT_MAX_RETRIES,
		description:
			'How often a request is retried after a rate limit (429), a server error (5xx) or a connection error. Creates are only retried when the service surely did not act.',
	},
	{
		displayName: 'Request Timeout',
		name: 'requestTimeout',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: DEFAULT_REQUEST_TIMEOUT_SECONDS,
		description:
			'Maximum seconds one HTTP request may take, from start to last byte, before it is aborted',
	},
];

const byName = (a: INodeProperties, b: INodeProperties) =>
	a.displayName.localeCompare(b.displayName);

/**
 * The Options collection of an operation, options sorted alphabetically as n8n's UI guidelines
 * ask. Version 1 also carries the execution settings there; from version 2 they sit in their own
 * collection (`executionSettings`).
 *
 * @param fields the operation's own options
 */
export function optionsCollection(fields: INodeProperties[]): INodeProperties[] {
	const collection = (options: INodeProperties[]): INodeProperties => ({
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [...options].sort(byName),
	});
	const ownFields = fields.length > 0 ? [fromVersion2(collection(fields))] : [];
	return [forVersion1(collection([...fields, ...executionSettingFields])), ...ownFields];
}

/** Version 2: the execution-wide settings, with a notice that they apply to the whole execution. */
export const executionSettingsFields: INodeProperties[] = [
	fromVersion2({
		displayName:
			'Execution Settings apply to all items of this execution: they are read once, from the first item',
		name: 'executionSettingsNotice',
		type: 'notice',
		default: '',
	}),
	fromVersion2({
		displayName: 'Execution Settings',
		name: 'executionSettings',
		type: 'collection',
		placeholder: 'Add setting',
		default: {},
		options: [...executionSettingFields].sort(byName),
	}),
];

/** Return All / Limit, as every n8n "Get Many" operation has them. */
export const returnAllFields: INodeProperties[] = [
	{
		displayName: 'Return All',
		name: 'returnAll',
		type: 'boolean',
		default: false,
		description: 'Whether to return all results or only up to a given limit',
	},
	{
		displayName: 'Limit',
		name: 'limit',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: 50,
		description: 'Max number of results to return',
		displayOptions: { show: { returnAll: [false] } },
	},
];
