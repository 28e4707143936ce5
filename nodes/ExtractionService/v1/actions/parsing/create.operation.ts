import type { IDataObject, IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { NodeOperationError, updateDisplayOptions } from 'n8n-workflow';

import { inputFiles, multipartBody, passThroughBinary } from '../../helpers/binary';
import { JOB_KINDS, createAndWait, type JobRequest } from '../../helpers/jobs';
import { withAbsoluteUrls } from '../../helpers/output';
import { parseJsonObject, parseUrlList, requireHttpUrl, requireUuid } from '../../helpers/validation';
import type { ExtractionServiceClient } from '../../transport';
import {
	allBinaryPropertiesField,
	binaryPropertyField,
	includeInputBinaryField,
	metadataField,
	modelField,
	optionsCollection,
	pictureDescriptionField,
	tableVerificationField,
	treatPartialAsErrorField,
	waitForCompletionField,
	waitOptionFields,
} from '../common.descriptions';
import { sourceFields } from '../common.fields';

const properties: INodeProperties[] = [
	...sourceFields(['binary', 'documentId', 'url', 'urlList'], 'What to parse', binaryPropertyField),
	waitForCompletionField,
	optionsCollection([
		{ ...allBinaryPropertiesField, displayOptions: { show: { '/source': ['binary'] } } },
		{ ...includeInputBinaryField, displayOptions: { show: { '/source': ['binary'] } } },
		metadataField,
		modelField,
		pictureDescriptionField,
		tableVerificationField,
		treatPartialAsErrorField,
		...waitOptionFields,
	]),
];

export const description = updateDisplayOptions({ show: { resource: ['parsing'], operation: ['create'] } }, properties);

/**
 * Parsing → Create (`v0-api.md §4.5`) from a file, a document ID, a URL or a list of URLs (the
 * service then answers an array: one output item per parsing, all paired to the input item). With
 * Wait for Completion, polls `GET /v0/parsing/{id}` (§4.7) until `FINISHED`, `PARTIAL_FINISHED` or
 * `ERROR` (§3); PARTIAL_FINISHED is output unless "Treat Partial as Error" is on.
 *
 * @returns one item per parsing: the Parsing (§2.3) with absolute `file_url`/`picture` URLs
 * @throws NodeOperationError for invalid input (before any request), ERROR, timeouts
 */
export async function execute(this: IExecuteFunctions, itemIndex: number, client: ExtractionServiceClient): Promise<INodeExecutionData[]> {
	const node = this.getNode();
	const source = this.getNodeParameter('source', itemIndex) as string;
	const options = this.getNodeParameter('options', itemIndex, {}) as IDataObject;
	const metadata = parseJsonObject(node, itemIndex, 'Metadata', options.metadata);
	const fields: IDataObject = {
		picture_description_enabled: options.pictureDescriptionEnabled,
		table_verification_enabled: options.tableVerificationEnabled,
		model: options.model,
		metadata: metadata && Object.keys(metadata).length ? metadata : undefined,
	};
	const requests: JobRequest[] = [];
	if (source === 'binary') {
		for (const file of await inputFiles(this, itemIndex)) {
			requests.push({ body: multipartBody(fields, [{ field: 'document', file }]), file });
		}
	} else if (source === 'documentId') {
		requests.push({ body: { ...fields, document: requireUuid(node, itemIndex, 'Document ID', this.getNodeParameter('documentId', itemIndex)) } });
	} else if (source === 'url') {
		requests.push({ body: { ...fields, document: requireHttpUrl(node, itemIndex, 'URL', this.getNodeParameter('url', itemIndex)) } });
	} else if (source === 'urlList') {
		requests.push({ body: { ...fields, document: parseUrlList(node, itemIndex, 'URLs', this.getNodeParameter('urls', itemIndex)) } });
	} else {
		throw new NodeOperationError(node, `Parameter "Source" has an unknown value "${source}"`, { itemIndex });
	}

	const baseUrl = await client.baseUrl('v0', itemIndex);
	return await createAndWait(this, client, JOB_KINDS.parsing, itemIndex, requests, async (parsing, file) => {
		const binary = passThroughBinary(this, itemIndex, file);
		const json = withAbsoluteUrls(parsing, baseUrl);
		return [binary ? { json, binary } : { json }];
	});
}
