import type { INodeExecutionData } from 'n8n-workflow';

/**
 * What one job (or uploaded document) of an item came to: its output items, or the error it failed
 * with; `id` once the service created it, so a failed job is still named.
 */
export type JobOutcome =
	| { id?: string; items: INodeExecutionData[]; error?: undefined }
	| { id?: string; error: unknown; items?: undefined };

/**
 * The outcomes of an item whose operation made several jobs (files, URLs, workflow documents), as
 * values: the router outputs the finished ones and decides what a failed one means (an error item
 * under Continue On Fail, else the execution's error).
 */
export class JobOutcomes {
	constructor(readonly list: JobOutcome[]) {}
}

/** Where a job's failure is reported as soon as it happens (the client's `onJobFailure`). */
interface FailureSink {
	onJobFailure?: (error: unknown, itemIndex: number) => void;
}

/**
 * A job's outcome as a value: the items `work` gives, or the error it failed with, reported to
 * `sink.onJobFailure` the moment it happens — so the router can stop the execution without waiting
 * for the item's other jobs (they then end as cancelled).
 *
 * @param itemIndex the item the job belongs to
 * @param id the job's id, once the service made it (undefined for a create that failed)
 */
export async function outcomeOf(
	sink: FailureSink,
	itemIndex: number,
	id: string | undefined,
	work: Promise<INodeExecutionData[]>,
): Promise<JobOutcome> {
	try {
		return { id, items: await work };
	} catch (error) {
		sink.onJobFailure?.(error, itemIndex);
		return { id, error };
	}
}
