import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ExtractionServiceClient } from '../transport';
import * as document from './document/Document.resource';
import * as extract from './extract/Extract.resource';
import * as extraction from './extraction/Extraction.resource';
import * as parsing from './parsing/Parsing.resource';
import * as schema from './schema/Schema.resource';
import * as workflow from './workflow/Workflow.resource';

/** An operation module: its UI description and what it does for one input item. */
export interface Operation {
	/**
	 * Runs the operation for one item. Returns its output items without `pairedItem` (the router adds
	 * it); throws for the item's failure (the router applies Continue On Fail).
	 */
	execute(this: IExecuteFunctions, itemIndex: number, client: ExtractionServiceClient): Promise<INodeExecutionData[]>;
}

/** Every resource's operations, by the `resource` and `operation` parameter values. */
export const operations = {
	// /v0 family (v0-api.md), API key credential
	document: { upload: document.upload, get: document.get, getAll: document.getAll, download: document.download },
	parsing: { create: parsing.create, get: parsing.get, getAll: parsing.getAll },
	extract: { create: extract.create, get: extract.get },
	// unversioned family (unversioned-api.md), token credential
	extraction: {
		create: extraction.create,
		get: extraction.get,
		getAll: extraction.getAll,
		delete: extraction.delete,
		download: extraction.download,
	},
	schema: { create: schema.create, get: schema.get, getAll: schema.getAll, update: schema.update, delete: schema.delete },
	workflow: { upload: workflow.upload },
} satisfies Record<string, Record<string, Operation>>;

export type ResourceName = keyof typeof operations;
