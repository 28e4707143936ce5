import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { binaryOutput, fileNameFromDisposition } from '../../helpers/downloads';
import { specificMimeType } from '../../helpers/file-types';
import { outputBinaryField } from '../fields/binary';
import { optionsCollection } from '../fields/collections';
import { EXTRACTION_ID, idParameter } from '../fields/locators';
import { byIdRequest, forOperation, type OperationExecute, readId } from '../operation';

/** Download formats (`§unversioned-4.3` `download=`): what users pick, and the file each gives. */
const FORMATS: Record<
	string,
	{ name: string; description: string; suffix: string; mimeType: string }
> = {
	csv: {
		name: 'CSV',
		description: 'The extracted data as a table',
		suffix: '.csv',
		mimeType: 'text/csv',
	},
	images: {
		name: 'Images (ZIP)',
		description: 'The images of the document, zipped',
		suffix: '-images.zip',
		mimeType: 'application/zip',
	},
	json: {
		name: 'JSON',
		description: 'The full extraction as JSON',
		suffix: '.json',
		mimeType: 'application/json',
	},
};

export const description = forOperation('extraction', 'download', [
	...idParameter({ ...EXTRACTION_ID, description: 'The extraction to download' }),
	{
		displayName: 'Format',
		name: 'format',
		type: 'options',
		options: Object.entries(FORMATS).map(([value, format]) => ({
			name: format.name,
			value,
			description: format.description,
		})),
		default: 'csv',
		description: 'What to download',
	},
	outputBinaryField,
	...optionsCollection([]),
]);

/**
 * Extraction → Download (`§unversioned-4.3` with `download=csv|json|images`) as an n8n
 * binary. "When the extraction has no schema, nothing is downloaded": the node reads the
 * extraction first and says so, and that it must be FINISHED, before asking for the file.
 *
 * @returns the extraction id/format as JSON and the file (`<document>.csv`, `.json`, `-images.zip`)
 * @throws NodeOperationError when the extraction has no schema or is not finished
 */
export const execute: OperationExecute = async function (itemIndex, client) {
	const node = this.getNode();
	const id = readId(this, itemIndex, EXTRACTION_ID);
	const format = this.getNodeParameter('format', itemIndex) as string;
	const property = this.getNodeParameter('binaryPropertyName', itemIndex, 'data') as string;
	const kind = FORMATS[format];
	if (!kind)
		throw new NodeOperationError(node, `Parameter "Format" has an unknown value "${format}"`, {
			itemIndex,
		});
	const request = byIdRequest(
		{ family: 'unversioned', segment: 'extract', resourceName: 'Extraction' },
		id,
		itemIndex,
	);

	const extraction = await client.request<IDataObject>({ ...request, method: 'GET' });
	if (!extraction.schema) {
		throw new NodeOperationError(
			node,
			`Extraction ${id} has no schema: there is nothing to download`,
			{
				itemIndex,
				description:
					'Only extractions created with a schema have data to download. Use Get to read its content instead.',
			},
		);
	}
	if (extraction.status !== 'FINISHED') {
		throw new NodeOperationError(
			node,
			`Extraction ${id} is not finished yet (status ${String(extraction.status)})`,
			{
				itemIndex,
				description: 'Use Get with Wait for Completion first, then download.',
			},
		);
	}
	const file = await client.download({ ...request, method: 'GET', qs: { download: format } });
	const base = String(extraction.document_name ?? id).replace(/\.[^.]+$/, '');
	const fileName =
		fileNameFromDisposition(file.headers['content-disposition']) ?? `${base}${kind.suffix}`;
	// The format's type when the answer's says nothing (application/octet-stream); the bytes' own
	// where they have a signature (the images' ZIP: `binaryOutput`).
	const mimeType = specificMimeType(file.headers['content-type']) ?? kind.mimeType;
	return [
		await binaryOutput(
			this,
			itemIndex,
			{ id, format, fileName, document_name: extraction.document_name ?? null },
			file.body,
			fileName,
			mimeType,
			property,
		),
	];
};
