import type { IDataObject } from 'n8n-workflow';

import type { InputFile } from './input-files';
import {
	UploadReadError,
	streamedMultipart,
	type StreamedMultipart,
} from '../../../shared/transport/multipart-stream';

/**
 * Total size of the files above which a body of files stored by id is streamed (bytes): below it a
 * FormData holds them, which costs n8n's request path less per request (bench measure 6: about
 * 12 KiB an item less for a 67-byte file), and at most this much memory a request in flight.
 */
export const STREAM_ABOVE_BYTES = 1024 * 1024;

/**
 * A multipart body factory (`§v0-1 rule 3`, `§unversioned-1 rule 2`) built with Node's
 * native FormData — n8n Cloud does not allow the form-data package in nodes. Fields with undefined
 * values are left out; objects are sent as JSON strings (the reference does not show how objects
 * travel in multipart; JSON text is what a Django REST JSONField reads from a form).
 * The bytes are read when the factory runs, i.e. inside the transport's concurrency slot.
 * When every file is stored by id (n8n's filesystem/S3 binary modes) and together they are larger
 * than `STREAM_ABOVE_BYTES`, the body is streamed from storage instead of read into memory
 * (`multipart-stream.ts`); smaller files and in-memory binaries use the FormData.
 * A file that cannot be read fails the factory with an `UploadReadError` naming it.
 */
export function multipartBody(
	fields: IDataObject,
	files: Array<{ field: string; file: InputFile }>,
): () => Promise<FormData | StreamedMultipart> {
	return async () => {
		const textFields: Array<[string, string]> = [];
		for (const [name, value] of Object.entries(fields)) {
			if (value === undefined || value === null) continue;
			if (Array.isArray(value)) for (const v of value) textFields.push([name, String(v)]);
			else
				textFields.push([name, typeof value === 'object' ? JSON.stringify(value) : String(value)]);
		}
		let reading = files[0]?.file.fileName ?? '';
		try {
			const total = files.reduce((sum, { file }) => sum + (file.size ?? Infinity), 0);
			if (
				total > STREAM_ABOVE_BYTES &&
				files.every(({ file }) => file.stream && file.size !== undefined)
			) {
				const streamed = await streamedMultipart(
					textFields,
					files.map(({ field, file }) => ({
						field,
						fileName: file.fileName,
						mimeType: file.mimeType,
						size: file.size as number,
						open: file.stream!,
					})),
				);
				if (streamed) return streamed;
			}
			const form = new FormData();
			for (const [name, value] of textFields) form.append(name, value);
			for (const { field, file } of files) {
				reading = file.fileName;
				form.append(field, await file.blob(), file.fileName);
			}
			return form;
		} catch (error) {
			throw error instanceof UploadReadError ? error : new UploadReadError(reading, error);
		}
	};
}
