import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { inputFiles, multipartBody } from '../../helpers/binary';
import { JOB_KINDS, createAndWait } from '../../helpers/jobs';
import { requireUuid } from '../../helpers/validation';
import { servicePath, type ExtractionServiceClient } from '../../transport';
import {
	allBinaryPropertiesField,
	binaryPropertyField,
	optionsCollection,
	splitIntoItemsField,
	waitForCompletionField,
	waitOptionFields,
} from '../common.descriptions';
import { idField } from '../common.fields';
import { EXTRACTION_FILE_TYPES, extractionItems, extractionSimplifyField } from '../extraction/common';

const properties: INodeProperties[] = [
	idField('Workflow ID', 'workflowId', 'ID of the workflow (a configuration set up in the Extraction Service) to upload to'),
	{ ...binaryPropertyField, description: 'All files of the item go to the workflow in one call; each becomes an extraction and an output item' },
	waitForCompletionField,
	extractionSimplifyField,
	optionsCollection([allBinaryPropertiesField, splitIntoItemsField, ...waitOptionFields]),
];

export const description = updateDisplayOptions({ show: { resource: ['workflow'], operation: ['upload'] } }, properties);

/**
 * Workflow → Upload (`unversioned-api.md §4.10`): sends every selected file of the item in ONE
 * request to `POST /workflow/{id}/extract/`.
 *
 * The multipart shape of the `extracts` array is "not shown" (§4.10). We send the encoding Django
 * REST framework's form parser reads for a list of nested objects (`parse_html_list`, pattern
 * `^extracts\[([0-9]+)\](.*)$`): fields `extracts[0]document`, `extracts[1]document`, … — the
 * emulator reads exactly this. The answer is "one object" per §4.10, and its shape for several items
 * is not shown: one object and an array are both accepted; each extraction is waited for.
 *
 * @returns one item per extraction created
 * @throws NodeApiError 404 when the workflow does not exist
 */
export async function execute(this: IExecuteFunctions, itemIndex: number, client: ExtractionServiceClient): Promise<INodeExecutionData[]> {
	const id = requireUuid(this.getNode(), itemIndex, 'Workflow ID', this.getNodeParameter('workflowId', itemIndex));
	const files = await inputFiles(this, itemIndex, EXTRACTION_FILE_TYPES);
	const body = multipartBody({} as IDataObject, files.map((file, i) => ({ field: `extracts[${i}]document`, file })));
	const upload = { body, path: `${servicePath('unversioned', 'workflow', id)}extract/`, notFound: { resourceName: 'Workflow', resourceId: id } };
	return await createAndWait(this, client, JOB_KINDS.extraction, itemIndex, [upload], async (extraction) =>
		await extractionItems(this, client, extraction, itemIndex),
	);
}
