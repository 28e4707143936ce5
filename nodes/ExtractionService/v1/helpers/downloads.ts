import type { IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';

import { SIGNATURE_BYTES, sniffFileType } from './file-types';

/**
 * Turns downloaded bytes into an n8n binary output item (Document → Download, `§v0-4.4`;
 * Extraction → Download, `§unversioned-4.3`). The bytes' signature (`sniffFileType`: PDF, PNG,
 * JPEG, ZIP) decides the MIME type over `mimeType`, since storages label files wrongly (a PDF as
 * `application/json`); a file of no known signature (JSON, CSV …) keeps `mimeType`. A file name
 * without an extension gets the sniffed type's (`scan` → `scan.pdf`); one with an extension keeps it.
 *
 * @param json the item's JSON
 * @param bytes the whole file
 * @param fileName the file's name (from the service, the answer's headers or a default)
 * @param mimeType the answer's or the format's MIME type, without parameters
 * @param property binary property name to write (default `data`)
 */
export async function binaryOutput(
	ctx: IExecuteFunctions,
	json: IDataObject,
	bytes: Buffer,
	fileName: string,
	mimeType: string,
	property = 'data',
): Promise<INodeExecutionData> {
	const sniffed = sniffFileType(bytes.subarray(0, SIGNATURE_BYTES));
	const named =
		sniffed && !/\.[^./\\]+$/.test(fileName) ? `${fileName}${sniffed.extension}` : fileName;
	const data = await ctx.helpers.prepareBinaryData(bytes, named, sniffed?.mimeType ?? mimeType);
	return { json, binary: { [property]: data } };
}

/**
 * File name from a `Content-Disposition` header (`filename*=` or `filename=`), if present.
 */
export function fileNameFromDisposition(header: string | undefined): string | undefined {
	if (!header) return undefined;
	const star = /filename\*\s*=\s*(?:UTF-8'')?([^;]+)/i.exec(header);
	if (star) {
		try {
			return decodeURIComponent(star[1].trim().replace(/^"|"$/g, ''));
		} catch {
			/* fall through to the plain form */
		}
	}
	const plain = /filename\s*=\s*("([^"]*)"|[^;]+)/i.exec(header);
	return plain ? (plain[2] ?? plain[1]).trim() : undefined;
}
