import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { inputFiles, multipartBody } from '../../helpers/binary';
import { JOB_KINDS, createAndWait } from '../../helpers/jobs';
import { pageRange, parseJsonObject, requireUuid } from '../../helpers/validation';
import type { ExtractionServiceClient } from '../../transport';
import {
	allBinaryPropertiesField,
	binaryPropertyField,
	includeInputBinaryField,
	metadataField,
	optionsCollection,
	splitIntoItemsField,
	waitForCompletionField,
	waitOptionFields,
} from '../common.descriptions';
import { pageRangeFields } from '../common.fields';
import { schemaLocator } from '../schema/common';
import { EXTRACTION_FILE_TYPES, extractionItems, extractionSimplifyField, serverField } from './common';

const properties: INodeProperties[] = [
	binaryPropertyField,
	serverField,
	schemaLocator(false, 'Schema that defines the data to extract; without one, the extraction gives the content only'),
	waitForCompletionField,
	extractionSimplifyField,
	optionsCollection([
		allBinaryPropertiesField,
		{
			displayName: 'Classifier ID',
			name: 'classifier',
			type: 'string',
			default: '',
			description: 'ID of a classifier that labels the document',
		},
		includeInputBinaryField,
		metadataField,
		...pageRangeFields,
		splitIntoItemsField,
		...waitOptionFields,
	]),
];

export const description = updateDisplayOptions({ show: { resource: ['extraction'], operation: ['create'] } }, properties);

/**
 * Extraction → Create (`unversioned-api.md §4.2`): uploads each selected file (.pdf, .png, .jpg,
 * .jpeg only, checked by extension and MIME type before upload, §8.1) with `server`, `schema`,
 * `classifier`, `metadata` and the page range; with Wait for Completion polls `GET /extract/{id}/`
 * (§4.3: 200 and 202 both carry the resource) until `FINISHED` or `ERROR`.
 *
 * @returns one item per extraction (or per element of a list with "Split Into Items")
 * @throws NodeOperationError for refused input before any request; NodeApiError 403 "Insufficient credits"
 */
export async function execute(this: IExecuteFunctions, itemIndex: number, client: ExtractionServiceClient): Promise<INodeExecutionData[]> {
	const node = this.getNode();
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const schemaValue = String(this.getNodeParameter('schema', itemIndex, '', { extractValue: true }) ?? '').trim();
	const schema = schemaValue ? requireUuid(node, itemIndex, 'Schema', schemaValue) : undefined;
	const metadata = parseJsonObject(node, itemIndex, 'Metadata', options.metadata);
	const qs = pageRange(node, itemIndex, options.pdfPageStart, options.pdfPageEnd);
	const fields: IDataObject = {
		server: this.getNodeParameter('server', itemIndex) as string,
		schema,
		classifier: String(options.classifier ?? '').trim() || undefined,
		metadata: metadata && Object.keys(metadata).length ? metadata : undefined,
	};
	const files = await inputFiles(this, itemIndex, EXTRACTION_FILE_TYPES);
	const requests = files.map((file) => ({ body: multipartBody(fields, [{ field: 'document', file }]), qs, file }));
	return await createAndWait(this, client, JOB_KINDS.extraction, itemIndex, requests, async (extraction, file) =>
		await extractionItems(this, client, extraction, itemIndex, file),
	);
}
