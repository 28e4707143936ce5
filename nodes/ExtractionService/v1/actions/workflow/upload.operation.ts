import type { IDataObject } from 'n8n-workflow';

import { inputFiles } from '../../helpers/input-files';
import { multipartBody } from '../../helpers/multipart';
import { createAndWait } from '../../helpers/create';
import { JOB_KINDS } from '../../../../shared/kinds';
import { readItemSettings } from '../../helpers/settings';
import { UUID_PLACEHOLDER, requireUuid } from '../../../../shared/validation';
import { servicePath } from '../../../../shared/transport';
import { allBinaryPropertiesField, binaryPropertyField } from '../fields/binary';
import { extractionItems } from '../../../../shared/output';
import { simplifyField, splitIntoItemsField } from '../../../../shared/fields/output';
import { jobCreateDescription, type OperationExecute } from '../operation';
import { EXTRACTION_FILE_TYPES } from '../extraction/common';

export const description = jobCreateDescription('workflow', 'upload', {
	fields: [
		{
			displayName: 'Workflow ID',
			name: 'workflowId',
			type: 'string',
			default: '',
			required: true,
			placeholder: UUID_PLACEHOLDER,
			description:
				'ID of the workflow (a configuration set up in the Extraction Service dashboard) to upload to; the API has no list of workflows',
		},
		{
			...binaryPropertyField,
			description:
				'All files of the item go to the workflow in one call; each becomes an extraction and an output item',
		},
	],
	output: [simplifyField],
	options: [allBinaryPropertiesField, splitIntoItemsField],
});

/**
 * Workflow → Upload (`§unversioned-4.10`): sends every selected file of the item in ONE
 * request to `POST /workflow/{id}/extract/`.
 *
 * The multipart shape of the `extracts` array is "not shown". We send the encoding Django
 * REST framework's form parser reads for a list of nested objects (`parse_html_list`, pattern
 * `^extracts\[([0-9]+)\](.*)$`): fields `extracts[0]document`, `extracts[1]document`, … — the
 * emulator reads exactly this. The answer is "one object", and its shape for several items
 * is not shown: one object and an array are both accepted; each extraction is waited for.
 *
 * @returns one item per extraction created
 * @throws NodeApiError 404 when the workflow does not exist
 */
export const execute: OperationExecute = async function (itemIndex, client) {
	const id = requireUuid(
		this.getNode(),
		itemIndex,
		'Workflow ID',
		this.getNodeParameter('workflowId', itemIndex),
	);
	const { wait, output, files: selection } = readItemSettings(this, itemIndex);
	const files = await inputFiles(this, itemIndex, selection, EXTRACTION_FILE_TYPES);
	const body = multipartBody(
		{} as IDataObject,
		files.map((file, i) => ({ field: `extracts[${i}]document`, file })),
	);
	const upload = {
		body,
		path: `${servicePath('unversioned', 'workflow', id)}extract/`,
		notFound: { resourceName: 'Workflow', resourceId: id },
	};
	return await createAndWait(
		this,
		client,
		JOB_KINDS.extraction,
		itemIndex,
		[upload],
		wait,
		async (extraction) => await extractionItems(client, extraction, itemIndex, output),
	);
};
