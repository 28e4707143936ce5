import type { ApiFamily } from './transport';

/** An asynchronous job type of the service and its final states. */
export interface JobKind {
	family: ApiFamily;
	/** Name users read in messages ("Extract", "Parsing", "Extraction"). */
	resourceName: string;
	/** Path segment of its GET-by-id endpoint. */
	segment: string;
	finalStatuses: string[];
	/** Final state that means "done, some pages failed" (parsings only). */
	partialStatus?: string;
}

/**
 * The three kinds of asynchronous job and their final statuses (`§v0-3`, `§unversioned-3`):
 * - parsing: final `FINISHED`, `PARTIAL_FINISHED`, `ERROR`, polled at `§v0-4.7`;
 * - extract: final `FINISHED`, `ERROR`, polled at `§v0-4.9`;
 * - extraction (`§unversioned-2.1`): final `FINISHED`, `ERROR`, polled at `§unversioned-4.3`,
 *   where 200 and 202 both carry the resource.
 */
export const JOB_KINDS = {
	parsing: {
		family: 'v0',
		resourceName: 'Parsing',
		segment: 'parsing',
		finalStatuses: ['FINISHED', 'PARTIAL_FINISHED', 'ERROR'],
		partialStatus: 'PARTIAL_FINISHED',
	},
	extract: {
		family: 'v0',
		resourceName: 'Extract',
		segment: 'extract',
		finalStatuses: ['FINISHED', 'ERROR'],
	},
	extraction: {
		family: 'unversioned',
		resourceName: 'Extraction',
		segment: 'extract',
		finalStatuses: ['FINISHED', 'ERROR'],
	},
} satisfies Record<string, JobKind>;
