import type { ApiFamily } from '../../shared/transport';
import { JOB_KINDS, type JobKind } from '../../shared/kinds';

/** The trigger's events (the `event` parameter's values). */
export type EventName =
	| 'documentUploaded'
	| 'extractionFailed'
	| 'extractionFinished'
	| 'parsingFailed'
	| 'parsingFinished';

/**
 * How an event finds what is new in its list:
 * - `window`: the `/v0` lists filter on `created_at_after` / `created_at_before` (`§v0-4.2`,
 *   `§v0-4.6`): a time window is read whole, whatever the list's order (`window.ts`);
 * - `scan`: the unversioned list has no date filter and its items no date (`§unversioned-4.1`,
 *   `§unversioned-2.2`): ids are remembered, and pages are read from both ends of the list until
 *   one holds an id remembered as old (`scan.ts`).
 */
export type Strategy = 'window' | 'scan';

/** One event: the list it polls, which items fire it, and how they are read and output. */
export interface EventSpec {
	value: EventName;
	/** Name in the Event selector. */
	name: string;
	description: string;
	family: ApiFamily;
	/** Path segment of the list (and of the read by id). */
	segment: string;
	/** Plural, for messages ("Extractions"). */
	listName: string;
	/** Singular, for messages ("Extraction"). */
	resourceName: string;
	strategy: Strategy;
	/**
	 * Statuses that fire the event; undefined: every new item fires (documents have no status). For
	 * the `/v0` parsing list, each is sent as the list's `status` filter (one value per request).
	 */
	statuses?: string[];
	/**
	 * The job kind, for jobs: its final statuses (the rest are pending: a pending job fires when it
	 * reaches one of `statuses`) and its read by id, which gives the output (list items of
	 * extractions carry no data, `§unversioned-2.2`; those of parsings have no fields shown beyond
	 * `id` and `status`, `§v0-4.6`). Undefined for documents: their list items are Documents
	 * (`§v0-4.2`) and are output as they come.
	 */
	kind?: JobKind;
	/**
	 * Non-final statuses a `window` event watches (`§v0-3`), each sent as the `status` filter, so a
	 * job created before the window moved on still fires when it finishes (`window.ts`).
	 */
	pendingStatuses?: string[];
}

/** An event on a job kind's list: family, path and names are the kind's (§v0-3, §unversioned-3). */
const jobEvent = (
	kind: JobKind,
	event: Pick<EventSpec, 'value' | 'name' | 'description' | 'strategy' | 'statuses'>,
): EventSpec => ({
	family: kind.family,
	segment: kind.segment,
	listName: `${kind.resourceName}s`,
	resourceName: kind.resourceName,
	kind,
	...(kind === JOB_KINDS.parsing ? { pendingStatuses: ['IN_QUEUE', 'IN_PROGRESS'] } : {}),
	...event,
});

/** The events, in the order of the Event selector (alphabetical, as n8n's UI guidelines ask). */
export const EVENTS: EventSpec[] = [
	{
		value: 'documentUploaded',
		name: 'Document Uploaded',
		description: 'A document was uploaded (API key)',
		family: 'v0',
		segment: 'documents',
		listName: 'Documents',
		resourceName: 'Document',
		strategy: 'window',
	},
	jobEvent(JOB_KINDS.extraction, {
		value: 'extractionFailed',
		name: 'Extraction Failed',
		description: 'An extraction ended with status ERROR (token)',
		strategy: 'scan',
		statuses: ['ERROR'],
	}),
	jobEvent(JOB_KINDS.extraction, {
		value: 'extractionFinished',
		name: 'Extraction Finished',
		description: 'An extraction finished and its data is ready (token)',
		strategy: 'scan',
		statuses: ['FINISHED'],
	}),
	jobEvent(JOB_KINDS.parsing, {
		value: 'parsingFailed',
		name: 'Parsing Failed',
		description: 'A parsing ended with status ERROR (API key)',
		strategy: 'window',
		statuses: ['ERROR'],
	}),
	jobEvent(JOB_KINDS.parsing, {
		value: 'parsingFinished',
		name: 'Parsing Finished',
		description:
			'A parsing finished, also partially (status FINISHED or PARTIAL_FINISHED) (API key)',
		strategy: 'window',
		statuses: ['FINISHED', 'PARTIAL_FINISHED'],
	}),
];

/** The events of one API family (for the credentials' display options). */
export function eventsOf(family: ApiFamily): EventName[] {
	return EVENTS.filter((e) => e.family === family).map((e) => e.value);
}

/** The events of one strategy (for parameters shown only with them). */
export function eventsWith(strategy: Strategy): EventName[] {
	return EVENTS.filter((e) => e.strategy === strategy).map((e) => e.value);
}

/** Whether a job status is final for the event's kind (`§v0-3`, `§unversioned-3`). */
export function isFinal(spec: EventSpec, status: unknown): boolean {
	return !!spec.kind && typeof status === 'string' && spec.kind.finalStatuses.includes(status);
}

/** Whether an item's status fires the event (always, for an event without statuses). */
export function fires(spec: EventSpec, status: unknown): boolean {
	return !spec.statuses || (typeof status === 'string' && spec.statuses.includes(status));
}
