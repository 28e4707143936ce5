import type { IDataObject, INode, INodeProperties } from 'n8n-workflow';

import { UUID_PLACEHOLDER, isoDateTime } from './validation';

/**
 * The list filters the action node's Get Many operations and the trigger share: each filter's UI
 * field next to the query parameter it becomes (`§v0-4.2`, `§v0-4.6`, `§unversioned-4.1`).
 */

/** Query names of the list filters, by the filter's parameter name. */
const FILTER_QUERY: Record<string, string> = {
	search: 'search',
	status: 'status',
	createdAfter: 'created_at_after',
	createdBefore: 'created_at_before',
	workflowId: 'workflow_id',
	workflowSessionId: 'workflow_session_id',
	metaKey: 'meta_key',
	metaValue: 'meta_value',
};

/** Filters whose value is a date-time, sent as ISO 8601, with the name errors give them. */
const DATE_FILTERS: Record<string, string> = {
	createdAfter: 'Created After',
	createdBefore: 'Created Before',
};

/** What a filter's dates are read with: the node, and the workflow's time zone (`getTimezone()`). */
export interface DateReading {
	getNode(): INode;
	getTimezone(): string;
}

/**
 * The query parameters of a Filters collection: empty values left out, text trimmed, date-times
 * checked and sent as ISO 8601 in UTC (`isoDateTime`: a date-time without a zone is read in the
 * workflow's time zone).
 *
 * @param source the execute or poll functions (`this`): the node, and the workflow's time zone
 * @param filters the collection's values, by parameter name
 * @param allowed the filters the list takes (default: every one the collection holds)
 * @returns query parameters by their service names (`§v0-4.2`, `§v0-4.6`, `§unversioned-4.1`)
 * @throws NodeOperationError naming the filter for a date-time that cannot be read
 */
export function filterQuery(
	source: DateReading,
	itemIndex: number,
	filters: IDataObject,
	allowed: string[] = Object.keys(filters),
): IDataObject {
	const node = source.getNode();
	const zone = source.getTimezone();
	const qs: IDataObject = {};
	for (const name of allowed) {
		let value = filters[name];
		if (typeof value === 'string') value = value.trim();
		if (value === '' || value === undefined || value === null) continue;
		qs[FILTER_QUERY[name] ?? name] =
			name in DATE_FILTERS ? isoDateTime(node, itemIndex, DATE_FILTERS[name], value, zone) : value;
	}
	return qs;
}

/** The Filters collection of a Get Many operation or the trigger (filters sorted alphabetically). */
export function filtersCollection(filters: INodeProperties[]): INodeProperties {
	return {
		displayName: 'Filters',
		name: 'filters',
		type: 'collection',
		placeholder: 'Add filter',
		default: {},
		options: [...filters].sort((a, b) => a.displayName.localeCompare(b.displayName)),
	};
}

/** Date-time filters of the /v0 lists (`§v0-4.2`, `§v0-4.6`). */
export const createdRangeFilters: INodeProperties[] = [
	{
		displayName: 'Created After',
		name: 'createdAfter',
		type: 'dateTime',
		default: '',
		description:
			"Only return those created after this moment. A date-time without a zone is in the workflow's time zone (workflow settings); one with Z or an offset (+01:00) is taken as given.",
	},
	{
		displayName: 'Created Before',
		name: 'createdBefore',
		type: 'dateTime',
		default: '',
		description:
			"Only return those created before this moment. A date-time without a zone is in the workflow's time zone (workflow settings); one with Z or an offset (+01:00) is taken as given.",
	},
];

export const searchFilter: INodeProperties = {
	displayName: 'Search',
	name: 'search',
	type: 'string',
	default: '',
	description: 'Text matched against file names and metadata values',
};

/** The filters of the extraction list: Extraction → Get Many and the trigger's extraction events. */
export const extractionListFilters: INodeProperties[] = [
	{
		displayName: 'Metadata Key',
		name: 'metaKey',
		type: 'string',
		default: '',
		placeholder: 'e.g. messageId',
		description: 'Only extractions whose metadata has this key',
	},
	{
		displayName: 'Metadata Value',
		name: 'metaValue',
		type: 'string',
		default: '',
		description: 'Only extractions whose metadata has this value',
	},
	{
		...searchFilter,
		description: 'Text matched against document names and schema names',
	},
	{
		displayName: 'Workflow ID',
		name: 'workflowId',
		type: 'string',
		default: '',
		placeholder: UUID_PLACEHOLDER,
		description: 'Only extractions of this workflow',
	},
	{
		displayName: 'Workflow Session ID',
		name: 'workflowSessionId',
		type: 'number',
		default: 0,
		description: 'Only extractions of this workflow session',
	},
];
