import type { IDataObject } from 'n8n-workflow';

import { checkAgainstSchemaField } from '../../../../shared/fields/check';
import { inputFiles, passThroughBinary } from '../../helpers/input-files';
import { multipartBody } from '../../helpers/multipart';
import { createAndWait } from '../../helpers/create';
import { JOB_KINDS } from '../../../../shared/kinds';
import { jobKeys, readReuseKey, withKey } from '../../helpers/reuse';
import { readItemSettings } from '../../helpers/settings';
import {
	UUID_PLACEHOLDER,
	pageRange,
	parseJsonObject,
	requireUuid,
} from '../../../../shared/validation';
import {
	allBinaryPropertiesField,
	binaryPropertyField,
	includeInputBinaryField,
} from '../fields/binary';
import { metadataField, pageRangeFields, reuseExistingJobField } from '../fields/job-options';
import { schemaLocator } from '../fields/locators';
import { extractionItems } from '../../../../shared/output';
import { simplifyField, splitIntoItemsField } from '../../../../shared/fields/output';
import { jobCreateDescription, type OperationExecute } from '../operation';
import { EXTRACTION_FILE_TYPES, serverField } from './common';

export const description = jobCreateDescription('extraction', 'create', {
	fields: [
		binaryPropertyField,
		serverField,
		schemaLocator(
			false,
			'Schema that defines the data to extract; without one, the extraction gives the content only',
		),
	],
	output: [simplifyField],
	options: [
		allBinaryPropertiesField,
		checkAgainstSchemaField,
		{
			displayName: 'Classifier ID',
			name: 'classifier',
			type: 'string',
			default: '',
			placeholder: UUID_PLACEHOLDER,
			description: 'ID of a classifier that labels the document',
		},
		includeInputBinaryField,
		metadataField,
		...pageRangeFields,
		reuseExistingJobField,
		splitIntoItemsField,
	],
});

/**
 * Extraction → Create (`§unversioned-4.2`): uploads each selected file (.pdf, .png, .jpg, .jpeg
 * only, checked by extension and MIME type before upload, `§unversioned-8.1`) with `server`,
 * `schema`, `classifier`, `metadata` and the page range (Reuse Existing Job: a file whose key finds
 * a job is not uploaded again, see helpers/reuse.ts); with Wait for Completion polls
 * `GET /extract/{id}/` (`§unversioned-4.3`: 200 and 202 both carry the resource) until `FINISHED`
 * or `ERROR`.
 *
 * @returns one item per extraction (or per element of a list with "Split Into Items")
 * @throws NodeOperationError for refused input before any request; NodeApiError 403 "Insufficient credits"
 */
export const execute: OperationExecute = async function (itemIndex, client) {
	const node = this.getNode();
	const { options, wait, output, files: selection } = readItemSettings(this, itemIndex);
	const schemaValue = String(
		this.getNodeParameter('schema', itemIndex, '', { extractValue: true }) ?? '',
	).trim();
	const schema = schemaValue ? requireUuid(node, itemIndex, 'Schema', schemaValue) : undefined;
	const metadata = parseJsonObject(node, itemIndex, 'Metadata', options.metadata);
	const qs = pageRange(node, itemIndex, options.pdfPageStart, options.pdfPageEnd);
	const reuse = readReuseKey(node, itemIndex, options.reuseExistingJob);
	const fields: IDataObject = {
		server: this.getNodeParameter('server', itemIndex) as string,
		schema,
		classifier: String(options.classifier ?? '').trim() || undefined,
	};
	const files = await inputFiles(this, itemIndex, selection, EXTRACTION_FILE_TYPES);
	const keys = reuse
		? jobKeys(
				reuse,
				files.map((file) => file.fileName),
			)
		: [];
	const requests = files.map((file, index) => {
		const key = keys[index];
		return {
			body: multipartBody({ ...fields, metadata: withKey(metadata, key) }, [
				{ field: 'document', file },
			]),
			qs,
			file,
			reuse: key,
		};
	});
	return await createAndWait(
		this,
		client,
		JOB_KINDS.extraction,
		itemIndex,
		requests,
		wait,
		async (extraction, file) =>
			await extractionItems(
				client,
				extraction,
				itemIndex,
				output,
				file?.fileName,
				passThroughBinary(this, itemIndex, file, output.includeInputBinary),
			),
	);
};
