import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';

import { readCheckSettings } from '../../../shared/completeness';
import type { OutputSettings } from '../../../shared/output';
import { DEFAULT_WAIT_TIMEOUT_SECONDS, type WaitSettings } from './wait';
import { positiveSeconds } from '../../../shared/validation';

/**
 * What one item asks of an operation, read once from its parameters into plain values: the
 * operation reads them here and hands the values to the helpers, which never read parameters
 * themselves. Parameters an operation does not show read as their defaults.
 */
export interface ItemSettings {
	/** The item's Options collection as the user set it (operation-specific options). */
	options: IDataObject;
	/** Wait for Completion and its options. */
	wait: WaitSettings;
	/** How finished jobs become output items. */
	output: OutputSettings;
	/** Which binary properties to upload. */
	files: FileSelection;
}

/** The binary properties an item uploads: `names` as typed (one, or a comma list), or all of them. */
export interface FileSelection {
	names: string;
	all: boolean;
}

/**
 * Reads an item's settings (see `ItemSettings`).
 *
 * @param waitByDefault Wait for Completion's default: on for creates, off for Get (resume)
 * @throws NodeOperationError naming "Wait Timeout" when it is not from 0.001 to 2147483 s (before any request)
 */
export function readItemSettings(
	ctx: IExecuteFunctions,
	itemIndex: number,
	waitByDefault = true,
): ItemSettings {
	const options = ctx.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const waitForCompletion = ctx.getNodeParameter(
		'waitForCompletion',
		itemIndex,
		waitByDefault,
	) as boolean;
	return {
		options,
		wait: {
			waitForCompletion,
			timeoutSeconds: waitForCompletion
				? positiveSeconds(
						ctx.getNode(),
						itemIndex,
						'Wait Timeout',
						options.timeout ?? DEFAULT_WAIT_TIMEOUT_SECONDS,
					)
				: 0,
			onTimeout: options.onTimeout === 'outputUnfinished' ? 'outputUnfinished' : 'error',
			treatPartialAsError: options.treatPartialAsError === true,
		},
		output: {
			simplify: ctx.getNodeParameter('simplify', itemIndex, true) as boolean,
			keepJobFields: ctx.getNode().typeVersion >= 4,
			splitIntoItems: options.splitIntoItems === true,
			includeInputBinary: options.includeInputBinary === true,
			check: readCheckSettings(
				ctx.getNode(),
				itemIndex,
				options,
				ctx.getNodeParameter('resource', itemIndex, '') === 'extract',
			),
		},
		files: {
			names: String(ctx.getNodeParameter('binaryPropertyName', itemIndex, 'data') ?? ''),
			all: options.allBinaryProperties === true,
		},
	};
}
