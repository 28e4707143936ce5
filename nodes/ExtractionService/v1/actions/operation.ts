import type {
	IDataObject,
	IExecuteFunctions,
	INodeExecutionData,
	INodeProperties,
} from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import type { JobKind } from '../../../shared/kinds';
import { getJob } from '../helpers/wait';
import { listItems } from '../helpers/lists';
import type { JobOutcomes } from '../helpers/outcomes';
import { readItemSettings } from '../helpers/settings';
import type { OutputSettings } from '../../../shared/output';
import { withAbsoluteUrls } from '../../../shared/absolute-urls';
import { requireUuid } from '../../../shared/validation';
import {
	servicePath,
	type ApiFamily,
	type ExtractionServiceClient,
} from '../../../shared/transport';
import { optionsCollection, returnAllFields } from './fields/collections';
import { idParameter, type IdParameter } from './fields/locators';
import { resumeWaitField, waitForCompletionField, waitOptionFields } from './fields/wait';
import { filtersCollection } from '../../../shared/filters';

/** An operation module: its UI description and what it does for one input item. */
export interface Operation {
	description: INodeProperties[];
	/**
	 * Runs the operation for one item. Returns its output items without `pairedItem` (the router adds
	 * it), or, for an operation that makes several jobs, every job's outcome (`JobOutcomes`); throws
	 * for the item's failure. The router applies Continue On Fail to both.
	 */
	execute(
		this: IExecuteFunctions,
		itemIndex: number,
		client: ExtractionServiceClient,
	): Promise<INodeExecutionData[] | JobOutcomes>;
}

/** An operation module's `execute`, declared as `export const execute: OperationExecute = …`. */
export type OperationExecute = Operation['execute'];

/** An ID parameter as operations read it: its UI name (errors name it) and its parameter name. */
export type IdField = Pick<IdParameter, 'displayName' | 'name'>;

/**
 * Reads an ID parameter of one item, a plain string or a resource locator (`extractValue`).
 *
 * @returns the trimmed UUID
 * @throws NodeOperationError naming the parameter when it is empty or not a UUID
 */
export function readId(ctx: IExecuteFunctions, itemIndex: number, id: IdField): string {
	return requireUuid(
		ctx.getNode(),
		itemIndex,
		id.displayName,
		ctx.getNodeParameter(id.name, itemIndex, '', { extractValue: true }),
	);
}

/** What a Get or Delete of one resource by ID needs: where it lives and how its ID is picked. */
interface ResourceSpec {
	resource: string;
	family: ApiFamily;
	/** Path segment of the resource (`documents`, `extract`, `schema`). */
	segment: string;
	resourceName: string;
	id: IdField;
	/** The ID parameter(s) as the operation shows them. */
	idFields: INodeProperties[];
}

/**
 * The request fields that address one resource by ID: its family, path, and the name and ID an
 * error names (e.g. "Schema 3f0c… not found").
 */
export function byIdRequest(
	spec: Pick<ResourceSpec, 'family' | 'segment' | 'resourceName'>,
	id: string,
	itemIndex: number,
) {
	return {
		family: spec.family,
		path: servicePath(spec.family, spec.segment, id),
		itemIndex,
		resourceName: spec.resourceName,
		resourceId: id,
	};
}

/**
 * A Get of a resource that is not a job (`§v0-4.3` documents, `§unversioned-4.7` schemas): reads it
 * by ID and outputs it, with absolute URLs added (`withAbsoluteUrls`) when `absoluteUrls` is set.
 *
 * @throws NodeApiError 404 naming the resource
 */
export function readOperation(spec: ResourceSpec & { absoluteUrls?: boolean }): Operation {
	return {
		description: forOperation(spec.resource, 'get', [...spec.idFields, ...optionsCollection([])]),
		async execute(this: IExecuteFunctions, itemIndex: number, client: ExtractionServiceClient) {
			const id = readId(this, itemIndex, spec.id);
			const json = await client.request<IDataObject>({
				...byIdRequest(spec, id, itemIndex),
				method: 'GET',
			});
			const baseUrl = spec.absoluteUrls && (await client.baseUrl(spec.family, itemIndex));
			return [{ json: baseUrl ? withAbsoluteUrls(json, baseUrl) : json }];
		},
	};
}

/**
 * A Delete by ID (`§unversioned-4.4` extractions, `§unversioned-4.9` schemas). The success status and
 * body are "not shown": any 2xx counts as deleted, a body is ignored (an HTML page is refused); a
 * 404 on a retry whose first answer was lost counts as deleted too (`§node`, Checked answers).
 *
 * @returns `{ id, deleted: true }`
 */
export function deleteOperation(spec: ResourceSpec): Operation {
	return {
		description: forOperation(spec.resource, 'delete', [
			...spec.idFields,
			...optionsCollection([]),
		]),
		async execute(this: IExecuteFunctions, itemIndex: number, client: ExtractionServiceClient) {
			const id = readId(this, itemIndex, spec.id);
			await client.send({
				...byIdRequest(spec, id, itemIndex),
				method: 'DELETE',
				expect: 'nothing',
			});
			return [{ json: { id, deleted: true } }];
		},
	};
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
 * The description of an operation that creates jobs (parsing, extract, extraction): its own
 * fields, Wait for Completion (on by default), what shapes the output (e.g. Simplify), and the
 * Options collection with the wait options last.
 */
export function jobCreateDescription(
	resource: string,
	operation: string,
	spec: { fields: INodeProperties[]; output?: INodeProperties[]; options: INodeProperties[] },
): INodeProperties[] {
	return forOperation(resource, operation, [
		...spec.fields,
		waitForCompletionField,
		...(spec.output ?? []),
		...optionsCollection([...spec.options, ...waitOptionFields]),
	]);
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
			...optionsCollection([...(spec.options ?? []), ...waitOptionFields]),
		]),
		async execute(
			this: IExecuteFunctions,
			itemIndex: number,
			client: ExtractionServiceClient,
		): Promise<INodeExecutionData[]> {
			const id = readId(this, itemIndex, spec.id);
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
