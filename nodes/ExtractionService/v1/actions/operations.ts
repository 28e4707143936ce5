import type { IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ExtractionServiceClient } from '../transport';
import * as extract from './extract/Extract.resource';

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
	extract: { create: extract.create, get: extract.get },
} satisfies Record<string, Record<string, Operation>>;

export type ResourceName = keyof typeof operations;
