import type { IDataObject } from 'n8n-workflow';

import { binaryOutput, fileNameFromDisposition } from '../../helpers/downloads';
import { specificMimeType } from '../../helpers/file-types';
import { withAbsoluteUrls } from '../../../../shared/absolute-urls';
import { outputBinaryField } from '../fields/binary';
import { optionsCollection } from '../fields/collections';
import { DOCUMENT_ID, idParameter } from '../fields/locators';
import { byIdRequest, forOperation, type OperationExecute, readId } from '../operation';

export const description = forOperation('document', 'download', [
	...idParameter({ ...DOCUMENT_ID, description: 'The document to download' }),
	outputBinaryField,
	...optionsCollection([]),
]);

/**
 * Document → Download (`§v0-4.4`): reads the document (`§v0-4.3`) for its file name, then
 * follows the 302 to the file URL. The API key is sent only to the Base URL's origin: a pre-signed
 * URL elsewhere is fetched without it (the credential's `authenticate` checks the origin).
 *
 * @returns the Document as JSON and the file as a binary with the document's name (the file's
 *   extension added when the name has none) and the MIME type its bytes say (PDF, PNG, JPEG, ZIP),
 *   else the answer's
 * @throws NodeApiError 404 naming the document
 */
export const execute: OperationExecute = async function (itemIndex, client) {
	const id = readId(this, itemIndex, DOCUMENT_ID);
	const property = this.getNodeParameter('binaryPropertyName', itemIndex, 'data') as string;
	const request = byIdRequest(
		{ family: 'v0', segment: 'documents', resourceName: 'Document' },
		id,
		itemIndex,
	);
	const document = await client.request<IDataObject>({ ...request, method: 'GET' });
	const file = await client.download({
		...request,
		method: 'GET',
		path: `${request.path}/download`,
	});
	// A name without an extension, and a generic or wrong type, are made good by the file's first
	// bytes where they say the type (`binaryOutput`): storages label files wrongly.
	const fileName =
		String(document.filename ?? '') ||
		fileNameFromDisposition(file.headers['content-disposition']) ||
		id;
	const mimeType = specificMimeType(file.headers['content-type']) ?? 'application/octet-stream';
	return [
		await binaryOutput(
			this,
			itemIndex,
			withAbsoluteUrls(document, await client.baseUrl('v0', itemIndex)),
			file.body,
			fileName,
			mimeType,
			property,
		),
	];
};
