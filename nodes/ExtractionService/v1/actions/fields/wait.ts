/** Wait for Completion and the options that shape the wait (timeout, what a timeout or a partial result does). */
import type { INodeProperties } from 'n8n-workflow';

import { DEFAULT_WAIT_TIMEOUT_SECONDS } from '../../helpers/wait';

export const waitForCompletionField: INodeProperties = {
	displayName: 'Wait for Completion',
	name: 'waitForCompletion',
	type: 'boolean',
	default: true,
	description:
		'Whether to wait until the job reaches a final status before outputting the item. The node polls every 2 to 5 seconds; many items wait together.',
};

/**
 * Wait for Completion on a Get operation: off by default, for resuming a job whose item timed out.
 *
 * @param finalStates how the job's final states read in the description (e.g. "is FINISHED or ERROR")
 */
export function resumeWaitField(job: string, finalStates: string): INodeProperties {
	return {
		displayName: 'Wait for Completion',
		name: 'waitForCompletion',
		type: 'boolean',
		default: false,
		description: `Whether to keep polling until the ${job} ${finalStates} (e.g. to resume an item that timed out)`,
	};
}

/** Wait Timeout and On Timeout: shown only while Wait for Completion is on. */
export const waitOptionFields: INodeProperties[] = [
	{
		displayName: 'Wait Timeout',
		name: 'timeout',
		type: 'number',
		typeOptions: { minValue: 1 },
		default: DEFAULT_WAIT_TIMEOUT_SECONDS,
		description: 'Maximum seconds to wait for the job to finish',
	},
	{
		displayName: 'On Timeout',
		name: 'onTimeout',
		type: 'options',
		options: [
			{ name: 'Error', value: 'error', description: 'Fail the item' },
			{
				name: 'Output Unfinished Item',
				value: 'outputUnfinished',
				description:
					'Output the job as last seen, with timedOut true; a later Get with its ID resumes it',
			},
		],
		default: 'error',
		description: 'What to do when the Wait Timeout passes before the job is finished',
	},
].map(
	(field) =>
		({ ...field, displayOptions: { show: { '/waitForCompletion': [true] } } }) as INodeProperties,
);

export const treatPartialAsErrorField: INodeProperties = {
	displayName: 'Treat Partial as Error',
	name: 'treatPartialAsError',
	type: 'boolean',
	default: false,
	description:
		'Whether a parsing that ends PARTIAL_FINISHED (some pages failed) fails the item instead of being output',
};
