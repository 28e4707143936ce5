import { passThroughBinary } from '../../helpers/input-files';
import { createAndWait } from '../../helpers/create';
import { JOB_KINDS } from '../../../../shared/kinds';
import { withAbsoluteUrls } from '../../../../shared/absolute-urls';
import { readReuseKey } from '../../helpers/reuse';
import { readItemSettings } from '../../helpers/settings';
import { documentSourceRequests, parsingOptions } from '../../helpers/sources';
import { binarySourceOptionFields } from '../fields/binary';
import { parsingOptionFields, reuseExistingJobField } from '../fields/job-options';
import { sourceFields } from '../fields/source';
import { treatPartialAsErrorField } from '../fields/wait';
import { jobCreateDescription, type OperationExecute } from '../operation';

export const description = jobCreateDescription('parsing', 'create', {
	fields: sourceFields(['binary', 'documentId', 'url', 'urlList'], 'What to parse'),
	options: [
		...binarySourceOptionFields,
		...parsingOptionFields,
		// One request for a list of URLs makes several parsings: no key can name one of them.
		{
			...reuseExistingJobField,
			displayOptions: { show: { '/source': ['binary', 'documentId', 'url'] } },
		},
		treatPartialAsErrorField,
	],
});

/**
 * Parsing → Create (`§v0-4.5`) from a file, a document ID, a URL or a list of URLs (the service then
 * answers an array: one output item per parsing, all paired to the input item). With Wait for
 * Completion, polls `GET /v0/parsing/{id}` (`§v0-4.7`) until `FINISHED`, `PARTIAL_FINISHED` or
 * `ERROR` (`§v0-3`); PARTIAL_FINISHED is output unless "Treat Partial as Error" is on.
 *
 * @returns one item per parsing: the Parsing (`§v0-2.3`) with absolute `file_url`/`picture` URLs
 * @throws NodeOperationError for invalid input (before any request), ERROR, timeouts
 */
export const execute: OperationExecute = async function (itemIndex, client) {
	const settings = readItemSettings(this, itemIndex);
	const source = this.getNodeParameter('source', itemIndex) as string;
	const fields = parsingOptions(this.getNode(), itemIndex, settings.options);
	const reuse =
		source === 'urlList'
			? undefined
			: readReuseKey(this.getNode(), itemIndex, settings.options.reuseExistingJob);
	const requests = await documentSourceRequests(
		this,
		itemIndex,
		source,
		fields,
		settings.files,
		reuse,
	);
	const baseUrl = await client.baseUrl('v0', itemIndex);
	return await createAndWait(
		this,
		client,
		JOB_KINDS.parsing,
		itemIndex,
		requests,
		settings.wait,
		async (parsing, file) => {
			const binary = passThroughBinary(this, itemIndex, file, settings.output.includeInputBinary);
			const json = withAbsoluteUrls(parsing, baseUrl);
			return [binary ? { json, binary } : { json }];
		},
	);
};
