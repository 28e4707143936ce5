import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import type { InputFile } from '../../helpers/binary';
import { passThroughBinary } from '../../helpers/binary';
import { simplifyResult, withAbsoluteUrls } from '../../helpers/output';
import type { ExtractionServiceClient } from '../../transport';

/**
 * Output items for one v0 Extract (`v0-api.md §2.4`). With Simplify: `result` fields plus `id`,
 * `status`, `schema` (name) and `filename` (the document's), one item per element of an array
 * result when "Split Into Items" is on. Without: the full resource, with absolute URLs added.
 * `timedOut` and, with "Include Input Binary", the uploaded file are carried along.
 */
export async function extractItems(
	ctx: IExecuteFunctions,
	client: ExtractionServiceClient,
	extract: IDataObject,
	itemIndex: number,
	file?: InputFile,
): Promise<INodeExecutionData[]> {
	const simplify = ctx.getNodeParameter('simplify', itemIndex, true) as boolean;
	const options = ctx.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const binary = passThroughBinary(ctx, itemIndex, file);
	let jsons: IDataObject[];
	if (simplify) {
		const schema = (extract.schema ?? {}) as IDataObject;
		const parsing = (extract.parsing ?? {}) as IDataObject;
		const document = (parsing.document ?? {}) as IDataObject;
		const meta: IDataObject = { id: extract.id, status: extract.status, schema: schema.name ?? null, filename: document.filename ?? file?.fileName ?? null };
		if (extract.error) meta.error = extract.error;
		if (extract.timedOut) meta.timedOut = true;
		jsons = simplifyResult(extract.result, meta, options.splitIntoItems === true);
	} else {
		jsons = [withAbsoluteUrls(extract, await client.baseUrl('v0', itemIndex))];
	}
	return jsons.map((json) => (binary ? { json, binary } : { json }));
}
