import type { IBinaryData, IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { MAX_DOWNLOAD_BYTES, type DownloadBody } from '../../../shared/transport';

import { SIGNATURE_BYTES, sniffFileType } from './file-types';

/**
 * Turns a downloaded file into an n8n binary output item (Document → Download, `§v0-4.4`;
 * Extraction → Download, `§unversioned-4.3`). The file's stream goes on into n8n's binary data
 * storage (`prepareBinaryData` takes a stream: in the filesystem and S3 modes it is written as it
 * comes, never held whole), at most `MAX_DOWNLOAD_BYTES`. Its first bytes' signature (`sniffFileType`:
 * PDF, PNG, JPEG, ZIP) decides the MIME type over `mimeType`, since storages label files wrongly (a
 * PDF as `application/json`); a file of no known signature (JSON, CSV …) keeps `mimeType`. A file
 * name without an extension gets the sniffed type's (`scan` → `scan.pdf`); one with an extension
 * keeps it.
 *
 * @param json the item's JSON
 * @param body the file: its stream (as `client.download` gives it) or its bytes
 * @param fileName the file's name (from the service, the answer's headers or a default)
 * @param mimeType the answer's or the format's MIME type, without parameters
 * @param property binary property name to write (default `data`)
 * @throws NodeOperationError when the file goes on beyond `MAX_DOWNLOAD_BYTES`, or its stream
 *   breaks off (the connection, Request Timeout): nothing is stored
 */
export async function binaryOutput(
	ctx: IExecuteFunctions,
	itemIndex: number,
	json: IDataObject,
	body: DownloadBody,
	fileName: string,
	mimeType: string,
	property = 'data',
): Promise<INodeExecutionData> {
	// Bytes that came whole are one chunk.
	const chunks = Buffer.isBuffer(body) ? [body][Symbol.iterator]() : body[Symbol.asyncIterator]();
	let read = 0;
	const next = async (): Promise<Buffer | undefined> => {
		const step = await chunks.next();
		if (step.done) return undefined;
		const chunk = Buffer.from(step.value as Uint8Array | string);
		read += chunk.length;
		if (read > MAX_DOWNLOAD_BYTES)
			throw new Error(
				`the file goes on beyond ${MAX_DOWNLOAD_BYTES / 1024 ** 3} GiB, more than the node stores`,
			);
		return chunk;
	};
	let stored: IBinaryData;
	let named = fileName;
	try {
		// The first chunks, as far as the signature needs.
		const head: Buffer[] = [];
		for (let chunk = await next(); chunk; chunk = await next()) {
			head.push(chunk);
			if (read >= SIGNATURE_BYTES) break;
		}
		const sniffed = sniffFileType(Buffer.concat(head).subarray(0, SIGNATURE_BYTES));
		named = sniffed && !/\.[^./\\]+$/.test(fileName) ? `${fileName}${sniffed.extension}` : fileName;
		const type = sniffed?.mimeType ?? mimeType;
		async function* rest(): AsyncGenerator<Buffer> {
			yield* head;
			for (let chunk = await next(); chunk; chunk = await next()) yield chunk;
		}
		const from = Buffer.isBuffer(body)
			? undefined
			: (body.constructor as { from?: ReadableFrom }).from;
		if (typeof from === 'function') {
			stored = await ctx.helpers.prepareBinaryData(
				from.call(body.constructor, rest()),
				named,
				type,
			);
		} else {
			// Bytes as they came, or a stream without `Readable.from`: read whole (within the cap).
			const all: Buffer[] = [];
			for await (const chunk of rest()) all.push(chunk);
			stored = await ctx.helpers.prepareBinaryData(Buffer.concat(all), named, type);
		}
	} catch (error) {
		(body as { destroy?: () => void }).destroy?.();
		throw new NodeOperationError(
			ctx.getNode(),
			`The download of ${named} broke off after ${read} bytes: ${cause(error)}`,
			{
				itemIndex,
				description:
					'Nothing was stored. Run it again; a Request Timeout too short for the file ends a download too.',
			},
		);
	}
	return { json, binary: { [property]: stored } };
}

/** Why a download's stream ended early, in words. */
function cause(error: unknown): string {
	const name = error instanceof Error ? error.name : '';
	if (name === 'CancelledError' || name === 'AbortError' || name === 'CanceledError')
		return 'the Request Timeout ran out, or the execution was stopped';
	return error instanceof Error ? error.message : String(error);
}

/** `Readable.from`, reached through the constructor of the stream n8n gave (nodes import no 'stream'). */
type ReadableFrom = (
	iterable: AsyncIterable<Buffer>,
) => Parameters<IExecuteFunctions['helpers']['prepareBinaryData']>[0];

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
