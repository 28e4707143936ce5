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
 * How an event finds what is new in its list (`docs/service-api.md` §trigger): `window` for the
 * `/v0` lists, which take `created_at_after` (`window.ts`); `scan` for the extraction list, which
 * has no date filter and no dates (`scan.ts`).
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
	/** For messages ("Extraction"; plural with an s). */
	resourceName: string;
	strategy: Strategy;
	/** Statuses that fire the event; undefined: every new item fires (documents have no status). */
	statuses?: string[];
	/**
	 * The job kind: its final statuses and its read by id, which gives the output (list items carry
	 * no data, `§unversioned-2.2`, `§v0-4.6`). Undefined for documents, output as listed (`§v0-4.2`).
	 */
	kind?: JobKind;
	/** Non-final statuses of a `window` job, listed by `status` at activation (§trigger 10). */
	pendingStatuses?: string[];
}

/** An event on a job kind's list: family, path and names are the kind's (§v0-3, §unversioned-3). */
const jobEvent = (
	kind: JobKind,
	event: Pick<EventSpec, 'value' | 'name' | 'description' | 'statuses'>,
): EventSpec => ({
	family: kind.family,
	strategy: kind.family === 'v0' ? 'window' : 'scan', // the /v0 lists take created_at_after
	segment: kind.segment,
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
		resourceName: 'Document',
		strategy: 'window',
	},
	jobEvent(JOB_KINDS.extraction, {
		value: 'extractionFailed',
		name: 'Extraction Failed',
		description: 'An extraction ended with status ERROR (token)',
		statuses: ['ERROR'],
	}),
	jobEvent(JOB_KINDS.extraction, {
		value: 'extractionFinished',
		name: 'Extraction Finished',
		description: 'An extraction finished and its data is ready (token)',
		statuses: ['FINISHED'],
	}),
	jobEvent(JOB_KINDS.parsing, {
		value: 'parsingFailed',
		name: 'Parsing Failed',
		description: 'A parsing ended with status ERROR (API key)',
		statuses: ['ERROR'],
	}),
	jobEvent(JOB_KINDS.parsing, {
		value: 'parsingFinished',
		name: 'Parsing Finished',
		description:
			'A parsing finished, also partially (status FINISHED or PARTIAL_FINISHED) (API key)',
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
