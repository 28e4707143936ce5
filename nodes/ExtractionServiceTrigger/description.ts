import type { INodeProperties } from 'n8n-workflow';

import { extractionListFilters, filtersCollection, searchFilter } from '../shared/filters';
import { checkAgainstSchemaField } from '../shared/fields/check';
import { simplifyField, splitIntoItemsField } from '../shared/fields/output';
import { CREDENTIAL_TYPE } from '../shared/transport';
import { EVENTS, eventsOf, eventsWith } from './poll/events';

const SCAN_EVENTS = eventsWith('scan');
const WINDOW_EVENTS = eventsWith('window');

/** The trigger's credentials: the API key for the `/v0` events, the token for extractions (`§v0-5`, `§unversioned-5`). */
export const credentials = (['v0', 'unversioned'] as const).map((family) => ({
	name: CREDENTIAL_TYPE[family],
	required: true,
	displayOptions: { show: { event: eventsOf(family) } },
}));

/**
 * The trigger's parameters: Event; a notice on polling; for extraction events Simplify and the
 * extraction list's filters, for the `/v0` events Search; Options: Include Existing Since, and Split
 * Into Items (extractions, with Simplify). n8n adds Poll Times itself (`polling: true`).
 */
export const properties: INodeProperties[] = [
	{
		displayName: 'Event',
		name: 'event',
		type: 'options',
		noDataExpression: true,
		required: true,
		options: EVENTS.map(({ name, value, description }) => ({ name, value, description })),
		default: 'extractionFinished',
		description: 'What starts the workflow',
	},
	{
		displayName:
			'The service has no webhooks, so the trigger asks it at every Poll Time. Each job fires once. When the workflow is activated, only jobs that finish (documents: that are uploaded) from then on fire, unless Include Existing Since is set.',
		name: 'pollingNotice',
		type: 'notice',
		default: '',
	},
	{ ...simplifyField, displayOptions: { show: { event: SCAN_EVENTS } } },
	{ ...filtersCollection(extractionListFilters), displayOptions: { show: { event: SCAN_EVENTS } } },
	{ ...filtersCollection([searchFilter]), displayOptions: { show: { event: WINDOW_EVENTS } } },
	{
		displayName: 'Options',
		name: 'options',
		type: 'collection',
		placeholder: 'Add option',
		default: {},
		options: [
			{
				...checkAgainstSchemaField,
				displayOptions: { show: { '/event': ['extractionFinished'] } },
			},
			{
				displayName: 'Include Existing Since',
				name: 'includeExistingSince',
				type: 'dateTime',
				default: '',
				description:
					"On activation, also output the matching jobs (documents) that already exist and were created at or after this moment. For extractions, among the most recent ones (the service cannot list them by date). A date-time without a zone is in the workflow's time zone (workflow settings); one with Z or an offset (+01:00) is taken as given.",
			},
			{
				...splitIntoItemsField,
				displayOptions: { show: { '/simplify': [true], '/event': SCAN_EVENTS } },
			},
		],
	},
];
