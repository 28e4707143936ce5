import type { INodeExecutionData } from 'n8n-workflow';

/**
 * What one job (or uploaded document) of an item came to: its output items, or the error it failed
 * with; `id` once the service created it.
 */
export type JobOutcome =
	| { id?: string; items: INodeExecutionData[]; error?: undefined }
	| { id?: string; error: unknown; items?: undefined };

/** For an item's first failure: the outcomes of all its jobs, once every one has settled. */
const allOutcomes = new WeakMap<object, Promise<JobOutcome[]>>();

/**
 * The outcomes of every job of the item that failed with `error` (see `failOnFirst`), in request
 * order then answer order; undefined for an error that did not come from a job operation.
 */
export function outcomesOf(error: unknown): Promise<JobOutcome[]> | undefined {
	return typeof error === 'object' && error !== null ? allOutcomes.get(error) : undefined;
}

/**
 * Settles an item's jobs without losing any. Each group is one create request: it resolves to the
 * outcomes of the jobs the service accepted (each a promise that never rejects), or rejects when
 * the create failed (an outcome without `id`).
 *
 * @returns every job's items, when all succeeded
 * @throws the first failure as soon as it happens (the node stops at once when it must), with the
 *   outcomes of all jobs attached for `outcomesOf` (the router outputs them under Continue On Fail)
 */
export async function failOnFirst(
	groups: Array<Promise<Array<Promise<JobOutcome>>>>,
): Promise<INodeExecutionData[]> {
	let reject!: (error: unknown) => void;
	const failed = new Promise<never>((_, r) => (reject = r));
	let first: object | undefined;
	const settled: Promise<JobOutcome[]> = Promise.all(
		groups.map(async (group) => {
			const jobs = await group.then(
				(list) => list,
				(error: unknown) => [Promise.resolve<JobOutcome>({ error })],
			);
			return await Promise.all(jobs.map(async (job) => await job.then(report)));
		}),
	).then((lists) => lists.flat());

	function report(outcome: JobOutcome): JobOutcome {
		if (outcome.error !== undefined && first === undefined) {
			first =
				typeof outcome.error === 'object' && outcome.error !== null
					? outcome.error
					: new Error(String(outcome.error));
			allOutcomes.set(first, settled);
			reject(first);
		}
		return outcome;
	}

	return await Promise.race([
		settled.then(async (outcomes) =>
			first ? await failed : outcomes.flatMap((o) => o.items ?? []),
		),
		failed,
	]);
}
