import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { wholeNumber, positiveSeconds } from '../helpers/validation';
import { DEFAULT_CLIENT_SETTINGS, ExtractionServiceClient, type ClientSettings } from '../transport';
import { operations, type Operation, type ResourceName } from './operations';

/**
 * Transport settings of the execution, from the first item's Options.
 *
 * @throws NodeOperationError naming the option when a value is out of range
 */
function clientSettings(ctx: IExecuteFunctions): ClientSettings {
	const options = ctx.getNodeParameter('options', 0, {}) as IDataObject;
	const node = ctx.getNode();
	return {
		...DEFAULT_CLIENT_SETTINGS,
		concurrency: wholeNumber(node, 0, 'Concurrency', options.concurrency ?? DEFAULT_CLIENT_SETTINGS.concurrency, 1, 50),
		maxRetries: wholeNumber(node, 0, 'Max Retries', options.maxRetries ?? DEFAULT_CLIENT_SETTINGS.maxRetries, 0, 10),
		requestTimeoutMs:
			positiveSeconds(node, 0, 'Request Timeout', options.requestTimeout ?? DEFAULT_CLIENT_SETTINGS.requestTimeoutMs / 1000) * 1000,
	};
}

/** A failed item as n8n shows it under Continue On Fail: the message, and what else helps. */
function errorItem(error: Error & { description?: unknown; httpCode?: unknown }, itemIndex: number): INodeExecutionData {
	const json: IDataObject = { error: error.message };
	if (typeof error.description === 'string' && error.description) json.description = error.description;
	if (typeof error.httpCode === 'string' && error.httpCode) json.httpCode = error.httpCode;
	return { json, pairedItem: { item: itemIndex } };
}

/**
 * Runs the selected operation for every input item — the one place that links output items to
 * their input (`pairedItem`) and applies Continue On Fail, for every operation.
 *
 * All items run at once (their requests share the client's concurrency limit; waiting jobs hold no
 * slot), so many jobs take about as long as the slowest one. Output keeps input order. When an item
 * fails and Continue On Fail is off, the other items' requests and waits are stopped and the first
 * error is thrown.
 */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const resource = this.getNodeParameter('resource', 0) as ResourceName;
	const operation = this.getNodeParameter('operation', 0) as string;
	const op = (operations[resource] as Record<string, Operation> | undefined)?.[operation];
	if (!op) {
		throw new NodeOperationError(this.getNode(), `The operation "${operation}" is not supported for resource "${resource}"`);
	}

	const continueOnFail = this.continueOnFail();
	let client: ExtractionServiceClient;
	try {
		client = new ExtractionServiceClient(this, clientSettings(this));
	} catch (error) {
		const settingsError =
			error instanceof NodeOperationError ? error : new NodeOperationError(this.getNode(), error as Error);
		if (!continueOnFail) throw settingsError;
		return [items.map((_, i) => errorItem(settingsError, i))];
	}

	let firstError: Error | undefined;
	const perItem = await Promise.all(
		items.map(async (_, itemIndex): Promise<INodeExecutionData[]> => {
			try {
				const output = await op.execute.call(this, itemIndex, client);
				return output.map((item) => ({ ...item, pairedItem: { item: itemIndex } }));
			} catch (error) {
				if (continueOnFail) return [errorItem(error as Error, itemIndex)];
				if (!firstError) {
					firstError = error as Error;
					client.abort();
				}
				return [];
			}
		}),
	);
	if (firstError) throw firstError;
	return [perItem.flat()];
}
