import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { inputFiles, passThroughBinary } from '../../helpers/input-files';
import { multipartBody } from '../../helpers/multipart';
import { checkResource } from '../../../../shared/resource';
import { JobOutcomes, outcomeOf } from '../../helpers/outcomes';
import { withAbsoluteUrls } from '../../../../shared/absolute-urls';
import { readItemSettings } from '../../helpers/settings';
import { pageRange, parseJsonObject } from '../../../../shared/validation';
import { servicePath } from '../../../../shared/transport';
import {
	allBinaryPropertiesField,
	binaryPropertyField,
	includeInputBinaryField,
} from '../fields/binary';
import { optionsCollection } from '../fields/collections';
import { metadataField, pageRangeFields } from '../fields/job-options';
import { forOperation, type OperationExecute } from '../operation';

export const description = forOperation('document', 'upload', [
	binaryPropertyField,
	...optionsCollection([
		allBinaryPropertiesField,
		{
			displayName: 'File Name',
			name: 'filename',
			type: 'string',
			default: '',
			placeholder: 'e.g. invoice-2026-0042.pdf',
			description: 'Name to store the document under, instead of the uploaded file name',
		},
		includeInputBinaryField,
		metadataField,
		...pageRangeFields,
	]),
]);

/**
 * Document → Upload (`§v0-4.1`): stores each selected file as a reusable document, trimmed
 * to First/Last Page at upload. The answer is final (201 Document): there is no job to wait for.
 *
 * @returns one item per uploaded file: the Document (`§v0-2.1`) with `file_url_absolute`
 * @throws NodeOperationError for a missing/empty file, bad metadata or page range (before any request)
 */
export const execute: OperationExecute = async function (itemIndex, client) {
	const node = this.getNode();
	const { options, files: selection, output } = readItemSettings(this, itemIndex);
	const metadata = parseJsonObject(node, itemIndex, 'Metadata', options.metadata);
	const qs = pageRange(node, itemIndex, options.pdfPageStart, options.pdfPageEnd);
	const files = await inputFiles(this, itemIndex, selection);
	const baseUrl = await client.baseUrl('v0', itemIndex);
	// Each file is its own upload: one failing never discards the documents already stored.
	const upload = async (file: (typeof files)[number]): Promise<INodeExecutionData[]> => {
		const answer = await client.request<IDataObject>({
			family: 'v0',
			method: 'POST',
			path: servicePath('v0', 'documents'),
			qs,
			body: multipartBody(
				{
					filename: String(options.filename ?? '').trim() || undefined,
					metadata: metadata && Object.keys(metadata).length ? metadata : undefined,
				},
				[{ field: 'file', file }],
			),
			itemIndex,
			resourceName: 'Document',
		});
		const document = checkResource(node, 'Document', answer, itemIndex);
		client.recordCreated({ resourceName: 'Document', id: String(document.id), itemIndex });
		const binary = passThroughBinary(this, itemIndex, file, output.includeInputBinary);
		const json = withAbsoluteUrls(document, baseUrl);
		return [binary ? { json, binary } : { json }];
	};
	return new JobOutcomes(
		await Promise.all(
			files.map(async (file) => await outcomeOf(client, itemIndex, undefined, upload(file))),
		),
	);
};
