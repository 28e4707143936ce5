import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeApiError, NodeOperationError } from 'n8n-workflow';

import { admissionOf } from '../helpers/admission';
import { JobOutcomes } from '../helpers/outcomes';
import { positiveSeconds, secondsToMs, wholeNumber } from '../../../shared/validation';
import {
	DEFAULT_CLIENT_SETTINGS,
	ExtractionServiceClient,
	asNodeError,
	type CreatedResource,
	type ClientSettings,
} from '../../../shared/transport';
import { READ_OPERATIONS, operations } from './resources';

/**
 * Transport settings of the execution, from the first item: from node version 2 its Execution
 * Settings, in version 1 its Options.
 *
 * @throws NodeOperationError naming the setting when a value is out of range
 */
function clientSettings(ctx: IExecuteFunctions): ClientSettings {
	const node = ctx.getNode();
	const settings = ctx.getNodeParameter(
		node.typeVersion >= 2 ? 'executionSettings' : 'options',
		0,
		{},
	) as IDataObject;
	return {
		...DEFAULT_CLIENT_SETTINGS,
		concurrency: wholeNumber(
			node,
			0,
			'Concurrency',
			settings.concurrency ?? DEFAULT_CLIENT_SETTINGS.concurrency,
			1,
			50,
		),
		maxRetries: wholeNumber(
			node,
			0,
			'Max Retries',
			settings.maxRetries ?? DEFAULT_CLIENT_SETTINGS.maxRetries,
			0,
			10,
		),
		requestTimeoutMs: secondsToMs(
			positiveSeconds(
				node,
				0,
				'Request Timeout',
				settings.requestTimeout ?? DEFAULT_CLIENT_SETTINGS.requestTimeoutMs / 1000,
			),
		),
	};
}

/** A failed item (or job) as n8n shows it under Continue On Fail: the message, what else helps, and the job's id. */
function errorItem(
	error: NodeApiError | NodeOperationError,
	itemIndex: number,
	id?: string,
): INodeExecutionData {
	const json: IDataObject = {};
	if (id) json.id = id;
	json.error = error.message;
	if (typeof error.description === 'string' && error.description)
		json.description = error.description;
	if (error instanceof NodeApiError && typeof error.httpCode === 'string' && error.httpCode)
		json.httpCode = error.httpCode;
	return { json, pairedItem: { item: itemIndex } };
}

/** Most jobs listed by id in an error; the rest are counted. */
const MAX_LISTED_JOBS = 50;

/** Adds to the error that stops the execution every job and document the service created in it, by id. */
function nameCreated(error: NodeApiError | NodeOperationError, created: CreatedResource[]): void {
	if (created.length === 0) return;
	const listed = created
		.slice(0, MAX_LISTED_JOBS)
		.map((r) => `${r.resourceName} ${r.id} (item ${r.itemIndex})`);
	const more =
		created.length > MAX_LISTED_JOBS ? ` and ${created.length - MAX_LISTED_JOBS} more` : '';
	const note = `Already created at the service in this execution (fetch them with Get instead of creating them again): ${listed.join(', ')}${more}.`;
	error.description = [error.description, note].filter(Boolean).join(' ');
}

/**
 * Runs the selected operation for every input item — the one place that links output items to
 * their input (`pairedItem`) and applies Continue On Fail, for every operation.
 *
 * Items start a few per request slot at a time (`ITEMS_ADMITTED_PER_SLOT`) and each gives its place on as soon as its job
 * waits (`admission.ts`), so all jobs wait together (their requests share the client's concurrency
 * limit; waiting jobs hold no slot) and many jobs take about as long as the slowest one. Output
 * keeps input order.
 * - Continue On Fail on: a failed item becomes an error item; an item with several jobs (files,
 *   URLs) outputs its finished jobs and an error item per failed job (with the job's `id`).
 * - Continue On Fail off: the first failure stops the other items' waits and new requests (creates
 *   in flight finish), and is thrown naming every job and document the service created in this
 *   execution.
 */
export async function router(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
	const items = this.getInputData();
	const node = this.getNode();
	const resource = this.getNodeParameter('resource', 0) as string;
	const operation = this.getNodeParameter('operation', 0) as string;
	const op = operations[resource]?.[operation];
	if (!op) {
		throw new NodeOperationError(
			node,
			`The operation "${operation}" is not supported for resource "${resource}"`,
		);
	}

	// The tool variant runs what costs credits or changes data only when the user allowed it
	// (`allowChanges`, from version 3): an agent cannot be talked into it.
	// Only a switch turned on in the node counts: an expression (saved before the field refused
	// them) could be filled in by the agent itself.
	const expression = typeof node.parameters.allowChanges === 'string';
	if (
		node.type.endsWith('Tool') &&
		node.typeVersion >= 3 &&
		!READ_OPERATIONS.has(operation) &&
		(expression || this.getNodeParameter('allowChanges', 0, false) !== true)
	) {
		throw new NodeOperationError(
			node,
			`This tool's operation (${resource} → ${operation}) costs credits or changes data, and an AI agent may not run it`,
			{
				description: `Turn on "Allow Billed or Destructive Operations" on the tool node to let the agent run it${expression ? ' (switched on in the node, not by an expression)' : ''}, or pick Get, Get Many or Download.`,
			},
		);
	}

	const continueOnFail = this.continueOnFail();
	let client: ExtractionServiceClient;
	try {
		client = new ExtractionServiceClient(this, clientSettings(this));
	} catch (error) {
		const settingsError = asNodeError(node, error, 0);
		if (!continueOnFail) throw settingsError;
		return [items.map((_, i) => errorItem(settingsError, i))];
	}

	const paired = (output: INodeExecutionData[], itemIndex: number) =>
		output.map((item) => ({ ...item, pairedItem: { item: itemIndex } }));
	let firstError: NodeApiError | NodeOperationError | undefined;
	/** Continue On Fail off: the first failure stops every wait and new request (creates in flight finish). */
	const stop = (error: unknown, itemIndex: number) => {
		if (firstError) return;
		firstError = asNodeError(node, error, itemIndex);
		client.abort();
	};
	if (!continueOnFail) client.onJobFailure = stop;
	const admission = admissionOf(client.signal, client.settings.concurrency);
	const perItem = await Promise.all(
		items.map(async (_, itemIndex): Promise<INodeExecutionData[]> => {
			await admission.enter(itemIndex);
			try {
				const result = await op.execute.call(this, itemIndex, client);
				if (!(result instanceof JobOutcomes)) return paired(result, itemIndex);
				const failed = result.list.find((outcome) => outcome.error !== undefined);
				if (failed && !continueOnFail) {
					stop(failed.error, itemIndex);
					return [];
				}
				return result.list.flatMap((outcome) =>
					outcome.error !== undefined
						? [errorItem(asNodeError(node, outcome.error, itemIndex), itemIndex, outcome.id)]
						: paired(outcome.items ?? [], itemIndex),
				);
			} catch (error) {
				if (continueOnFail) return [errorItem(asNodeError(node, error, itemIndex), itemIndex)];
				stop(error, itemIndex);
				return [];
			} finally {
				admission.leave(itemIndex);
			}
		}),
	);
	if (firstError) {
		nameCreated(firstError, client.created);
		throw firstError;
	}
	return [perItem.flat()];
}
