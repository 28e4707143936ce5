import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { ApiFamily, ExtractionServiceClient } from '../../../shared/transport';
import { withAbsoluteUrls } from '../../../shared/absolute-urls';
import { filterQuery } from '../../../shared/filters';
import { wholeNumber } from '../../../shared/validation';

/**
 * A "Get Many" operation: reads `returnAll`, `limit` and the `filters` collection of the item,
 * validates them, and pages through the list (`page`/`size`, while `next` is set).
 *
 * @param list the list endpoint
 * @returns one item per list element, with absolute URLs added
 * @throws NodeOperationError for a Limit below 1 or an unreadable date (before any request)
 */
export async function listItems(
	ctx: IExecuteFunctions,
	client: ExtractionServiceClient,
	itemIndex: number,
	list: { family: ApiFamily; path: string; resourceName: string },
): Promise<INodeExecutionData[]> {
	const node = ctx.getNode();
	const returnAll = ctx.getNodeParameter('returnAll', itemIndex, false) as boolean;
	const limit = returnAll
		? 0
		: wholeNumber(node, itemIndex, 'Limit', ctx.getNodeParameter('limit', itemIndex, 50), 1);
	const filters = ctx.getNodeParameter('filters', itemIndex, {}) as IDataObject;
	const qs = filterQuery(ctx, itemIndex, filters);
	const results = await client.getAll(
		{
			family: list.family,
			method: 'GET',
			path: list.path,
			qs,
			itemIndex,
			resourceName: list.resourceName,
		},
		returnAll,
		limit,
	);
	const baseUrl = await client.baseUrl(list.family, itemIndex);
	return results.map((json) => ({ json: withAbsoluteUrls(json, baseUrl) }));
}
