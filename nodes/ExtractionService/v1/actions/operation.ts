import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { getJob, type JobKind } from '../helpers/jobs';
import { listItems } from '../helpers/lists';
import { readItemSettings, type OutputSettings } from '../helpers/settings';
import { requireUuid } from '../helpers/validation';
import { servicePath, type ApiFamily, type ExtractionServiceClient } from '../transport';
import {
	idParameter,
	optionsCollection,
	resumeWaitField,
	returnAllFields,
	type IdParameter,
} from './fields';
import { filtersCollection } from '../helpers/filters';

/** An operation module: its UI description and what it does for one input item. */
export interface Operation {
	description: INodeProperties[];
	/**
	 * Runs the operation for one item. Returns its output items without `pairedItem` (the router adds
	 * it); throws for the item's failure (the router applies Continue On Fail).
	 */
	execute(
		this: IExecuteFunctions,
		itemIndex: number,
		client: ExtractionServiceClient,
	): Promise<INodeExecutionData[]>;
}

/** Shows `properties` only for one resource and operation. */
export function forOperation(
	resource: string,
	operation: string,
	properties: INodeProperties[],
): INodeProperties[] {
	return updateDisplayOptions(
		{ show: { resource: [resource], operation: [operation] } },
		properties,
	);
}

/**
 * The Get operation of a job kind (parsing, extract, extraction): reads the job by id, optionally
 * waits for it (Wait for Completion, off by default: it resumes a job whose item timed out), and
 * shapes it for output.
 *
 * @param spec.fields what the kind shows besides the ID and Wait for Completion (e.g. Simplify)
 * @param spec.options the kind's own options (the wait options are added)
 * @param spec.shape turns the job into output items
 */
export function jobGetOperation(spec: {
	resource: string;
	kind: JobKind;
	id: IdParameter;
	fields?: INodeProperties[];
	options?: INodeProperties[];
	shape: (
		ctx: IExecuteFunctions,
		client: ExtractionServiceClient,
		job: IDataObject,
		itemIndex: number,
		output: OutputSettings,
	) => Promise<INodeExecutionData[]>;
}): Operation {
	const { kind } = spec;
	return {
		description: forOperation(spec.resource, 'get', [
			...idParameter(spec.id),
			resumeWaitField(
				kind.resourceName.toLowerCase(),
				`reaches a final status (${kind.finalStatuses.join(', ')})`,
			),
			...(spec.fields ?? []),
			...optionsCollection(spec.options ?? []),
		]),
		async execute(
			this: IExecuteFunctions,
			itemIndex: number,
			client: ExtractionServiceClient,
		): Promise<INodeExecutionData[]> {
			const id = requireUuid(
				this.getNode(),
				itemIndex,
				spec.id.displayName,
				this.getNodeParameter(spec.id.name, itemIndex, '', { extractValue: true }),
			);
			const settings = readItemSettings(this, itemIndex, false);
			const job = await getJob(this, client, kind, id, itemIndex, settings.wait);
			return await spec.shape(this, client, job, itemIndex, settings.output);
		},
	};
}

/**
 * A Get Many operation (`§v0-2.5`, `§unversioned-2.4` lists): Return All / Limit and a Filters
 * collection; items come out with absolute URLs added.
 *
 * @param spec.path list path segment (`documents`, `parsing`, `extract`, `schema`)
 * @param spec.filters the list's filters (their query names: `helpers/lists.ts`); none: no collection
 */
export function listOperation(spec: {
	resource: string;
	family: ApiFamily;
	segment: string;
	resourceName: string;
	filters?: INodeProperties[];
}): Operation {
	return {
		description: forOperation(spec.resource, 'getAll', [
			...returnAllFields,
			...(spec.filters ? [filtersCollection(spec.filters)] : []),
			...optionsCollection([]),
		]),
		async execute(
			this: IExecuteFunctions,
			itemIndex: number,
			client: ExtractionServiceClient,
		): Promise<INodeExecutionData[]> {
			return await listItems(this, client, itemIndex, {
				family: spec.family,
				path: servicePath(spec.family, spec.segment),
				resourceName: spec.resourceName,
			});
		},
	};
}
