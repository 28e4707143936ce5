import type { IExecuteFunctions, INodeExecutionData, INodeProperties } from 'n8n-workflow';
import { updateDisplayOptions } from 'n8n-workflow';

import { passThroughBinary } from '../../helpers/binary';
import { JOB_KINDS, createAndWait } from '../../helpers/jobs';
import { withAbsoluteUrls } from '../../helpers/output';
import { documentSourceRequests, parsingOptions } from '../../helpers/sources';
import type { ExtractionServiceClient } from '../../transport';
import {
	binarySourceOptionFields,
	binaryPropertyField,
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
		...binarySourceOptionFields,
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
	const source = this.getNodeParameter('source', itemIndex) as string;
	const requests = await documentSourceRequests(this, itemIndex, source, parsingOptions(this, itemIndex));
	const baseUrl = await client.baseUrl('v0', itemIndex);
	return await createAndWait(this, client, JOB_KINDS.parsing, itemIndex, requests, async (parsing, file) => {
		const binary = passThroughBinary(this, itemIndex, file);
		const json = withAbsoluteUrls(parsing, baseUrl);
		return [binary ? { json, binary } : { json }];
	});
}
