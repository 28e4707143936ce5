import { randomBytes } from 'crypto';
import type { IExecuteFunctions } from 'n8n-workflow';

/**
 * A Node.js Readable as n8n's binary helpers return it. The type is taken from n8n-workflow's own
 * signature of `getBinaryStream`: n8n Cloud does not let nodes import 'stream'.
 */
export type BinaryStream = Awaited<ReturnType<IExecuteFunctions['helpers']['getBinaryStream']>>;

/** A file part whose bytes are read from n8n's binary data storage only while the body is sent. */
export interface StreamedFilePart {
	/** Form field name, e.g. `file` or `document`. */
	field: string;
	fileName: string;
	mimeType: string;
	/** Exact size of the file in bytes (from the binary's metadata): the Content-Length needs it. */
	size: number;
	/** Opens the stored file (`this.helpers.getBinaryStream(id)`); called once per body. */
	open: () => Promise<BinaryStream>;
}

/**
 * A `multipart/form-data` request body streamed from n8n's binary data storage, with the headers
 * it must be sent with. The transport passes `stream` as the request body (n8n's request helper
 * accepts a raw Readable and pipes it) and destroys it once the attempt settles.
 */
/**
 * A file to upload that could not be read (n8n's binary storage failed, or the stored file does not
 * hold the size its metadata gives): the node's own failure, never the network's (`attempt.ts`).
 */
export class UploadReadError extends Error {
	constructor(
		readonly fileName: string,
		cause: unknown,
	) {
		super(cause instanceof Error ? cause.message : String(cause));
		this.name = 'UploadReadError';
	}
}

export interface StreamedMultipart {
	readonly streamedMultipart: true;
	stream: BinaryStream;
	/** `Content-Type: multipart/form-data; boundary=…` and the exact `Content-Length` in bytes. */
	headers: { 'Content-Type': string; 'Content-Length': string };
}

/** Whether a built body is a `StreamedMultipart` (as opposed to FormData, a Buffer or JSON). */
export function isStreamedMultipart(body: unknown): body is StreamedMultipart {
	return (
		typeof body === 'object' &&
		body !== null &&
		(body as Partial<StreamedMultipart>).streamedMultipart === true
	);
}

type ReadableFrom = (
	iterable: AsyncIterable<Uint8Array>,
	options?: { objectMode?: boolean; highWaterMark?: number },
) => BinaryStream;

const CRLF = '\r\n';
/** Bytes read ahead of the socket: bounds the memory of one upload. */
const HIGH_WATER_MARK = 64 * 1024;

/** Quotes a name the way browsers, undici and axios do in Content-Disposition (`"` → %22, CR/LF → %0D/%0A). */
function escapeName(name: string): string {
	return name.replace(/[\r\n"]/g, (c) => ({ '\r': '%0D', '\n': '%0A', '"': '%22' })[c] as string);
}

/**
 * Builds a streamed `multipart/form-data` body (`§v0-1 rule 3`: file uploads are multipart;
 * used for `POST /v0/documents` (`§v0-4.1`) and the other upload endpoints of both families) whose file
 * parts are read from n8n's binary data storage while the request is being sent, so memory stays
 * bounded (about 64 KiB per upload) whatever the file size. The encoding is the one axios gives a
 * native FormData: for each part `--<boundary>CRLF`, `Content-Disposition: form-data; name="…"`
 * (`; filename="…"` and a `Content-Type` line for files), a blank line, the value, CRLF; then
 * `--<boundary>--CRLF`. Text values have their line breaks normalised to CRLF.
 *
 * Node's Readable is reached without importing 'stream': the static `Readable.from` is inherited by
 * the constructor of the stream `getBinaryStream` returns (fs.ReadStream, or the storage SDK's
 * stream), and wraps an async generator into a Readable.
 *
 * @param textFields name/value pairs sent before the files, in order
 * @param files the file parts; each is opened when the body reaches it, and closed when it ends or
 *   the body is destroyed
 * @returns the body and its headers; `undefined` when the stream runtime does not offer
 *   `Readable.from` (the caller then falls back to an in-memory FormData)
 * @throws Error from the body stream (the request fails) when a stored file does not hold exactly
 *   `size` bytes: a body shorter or longer than its Content-Length would be truncated or rejected
 */
export async function streamedMultipart(
	textFields: Array<[string, string]>,
	files: StreamedFilePart[],
): Promise<StreamedMultipart | undefined> {
	if (files.length === 0) return undefined;
	// The first file is opened now: its constructor gives `from`; the generator reads it first.
	const first = await files[0].open();
	const from = (first.constructor as { from?: unknown }).from;
	if (typeof from !== 'function') {
		first.destroy();
		return undefined;
	}

	const boundary = `----n8nFormBoundary${randomBytes(16).toString('hex')}`;
	const delimiter = Buffer.from(`--${boundary}${CRLF}`);
	const footer = Buffer.from(`--${boundary}--${CRLF}`);
	const crlf = Buffer.from(CRLF);
	const textParts = textFields.map(([name, value]) =>
		Buffer.from(
			`Content-Disposition: form-data; name="${escapeName(name)}"${CRLF}${CRLF}${value.replace(/\r\n|\r|\n/g, CRLF)}`,
		),
	);
	const fileHeads = files.map((f) =>
		Buffer.from(
			`Content-Disposition: form-data; name="${escapeName(f.field)}"; filename="${escapeName(f.fileName)}"${CRLF}` +
				`Content-Type: ${(f.mimeType || 'application/octet-stream').replace(/[\r\n]/g, '')}${CRLF}${CRLF}`,
		),
	);
	let length = footer.length;
	for (const part of textParts) length += delimiter.length + part.length + crlf.length;
	files.forEach(
		(f, i) => (length += delimiter.length + fileHeads[i].length + f.size + crlf.length),
	);

	const opened: BinaryStream[] = [first];
	async function* body(): AsyncGenerator<Uint8Array> {
		try {
			for (const part of textParts) {
				yield delimiter;
				yield part;
				yield crlf;
			}
			for (let i = 0; i < files.length; i++) {
				yield delimiter;
				yield fileHeads[i];
				const file = i === 0 ? first : await files[i].open();
				if (i > 0) opened.push(file);
				let sent = 0;
				for await (const chunk of file as AsyncIterable<Uint8Array>) {
					sent += chunk.length;
					if (sent > files[i].size) break;
					yield chunk;
				}
				if (sent !== files[i].size) {
					throw new UploadReadError(
						files[i].fileName,
						`The stored file "${files[i].fileName}" holds ${sent > files[i].size ? 'more' : sent} bytes instead of ${files[i].size}`,
					);
				}
				yield crlf;
			}
			yield footer;
		} finally {
			for (const file of opened) file.destroy();
		}
	}

	const stream = (from as ReadableFrom).call(first.constructor, body(), {
		objectMode: false,
		highWaterMark: HIGH_WATER_MARK,
	});
	// A body destroyed before it was read (the request failed early) must still close the files.
	stream.once('close', () => {
		for (const file of opened) file.destroy();
	});
	return {
		streamedMultipart: true,
		stream,
		headers: {
			'Content-Type': `multipart/form-data; boundary=${boundary}`,
			'Content-Length': String(length),
		},
	};
}
