import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { InputFile } from '../../helpers/binary';
import { jobOutputItems } from '../../helpers/output';
import type { ExtractionServiceClient } from '../../transport';

/**
 * Output items for one v0 Extract (`v0-api.md §2.4`). Simplified: `result` fields plus `id`,
 * `status`, `schema` (its name) and `filename` (the document's); see `jobOutputItems`.
 */
export async function extractItems(
	ctx: IExecuteFunctions,
	client: ExtractionServiceClient,
	extract: IDataObject,
	itemIndex: number,
	file?: InputFile,
): Promise<INodeExecutionData[]> {
	const schema = (extract.schema ?? {}) as IDataObject;
	const document = (((extract.parsing ?? {}) as IDataObject).document ?? {}) as IDataObject;
	const meta: IDataObject = { id: extract.id, status: extract.status, schema: schema.name ?? null, filename: document.filename ?? file?.fileName ?? null };
	return await jobOutputItems(ctx, client, 'v0', extract, extract.result, meta, itemIndex, file);
}
