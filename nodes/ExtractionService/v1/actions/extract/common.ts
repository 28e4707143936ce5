import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { jobOutputItems } from '../../helpers/output';
import type { OutputSettings } from '../../helpers/settings';
import type { ExtractionServiceClient } from '../../transport';

/**
 * Output items for one v0 Extract (`§v0-2.4`). Simplified: `result` fields plus `id`, `status`,
 * `schema` (its name) and `filename` (the document's); see `jobOutputItems`.
 *
 * @param fileName the uploaded file's name, when the document's is not known
 * @param binary the input file to pass on, if any
 */
export async function extractItems(
	client: ExtractionServiceClient,
	extract: IDataObject,
	itemIndex: number,
	output: OutputSettings,
	fileName?: string,
	binary?: INodeExecutionData['binary'],
): Promise<INodeExecutionData[]> {
	const schema = (extract.schema ?? {}) as IDataObject;
	const document = (((extract.parsing ?? {}) as IDataObject).document ?? {}) as IDataObject;
	const meta: IDataObject = {
		id: extract.id,
		status: extract.status,
		schema: schema.name ?? null,
		filename: document.filename ?? fileName ?? null,
	};
	return await jobOutputItems(
		client,
		'v0',
		extract,
		extract.result,
		meta,
		itemIndex,
		output,
		binary,
	);
}
