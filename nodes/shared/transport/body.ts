/**
 * Reading answers as streams, only as far as needed (`§node`, Checked answers): the caps, the
 * capped reader, and the byte and header helpers the client and its answer checks share.
 */
import type { IDataObject } from 'n8n-workflow';

/**
 * Most bytes of a 2xx answer the node reads where it expects JSON, in bytes: 32 MiB. A page of 100 extractions with their data is well under 1 MiB, and the largest
 * extraction results (hundreds of pages of line items) a few MiB; 32 MiB leaves room for those while
 * keeping what one answer costs (its bytes, its text, the parsed JSON: about 4 times its size) far
 * from what an n8n worker has. Beyond it the answer is refused as unusable while it streams, and the
 * rest is not read. Downloads (`binary`) are not limited.
 */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/**
 * Most bytes the node reads of an answer it will not use as data, in bytes: 64 KiB. That is every 4xx/5xx answer — downloads' too — whose message is in its first lines
 * (a field-error body is a few hundred bytes; the error shows 500 characters of it), and the body of
 * a 3xx, which is never read. The rest is left unread (the connection is closed), and the error says
 * the answer was cut.
 */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * Largest file a download stores, in bytes: 1 GiB. The file streams from the service into n8n's
 * binary data storage (`helpers/downloads.ts`) and is never held whole by the node; n8n's own
 * in-memory binary mode (`default`) holds what it stores, so larger files want the filesystem or
 * S3 mode. A `Content-Length` beyond it fails the download before any byte is read, and a body that
 * goes on beyond it fails while it streams.
 */
export const MAX_DOWNLOAD_BYTES = 1024 * 1024 * 1024;

/**
 * Reads a streamed body up to `cap` bytes, then stops (leaving the loop destroys the stream, which
 * closes the connection: nothing more is received). A body that is not a stream (an n8n line that
 * buffered it) is taken as it is.
 *
 * @param cap most bytes to keep (Infinity: the whole body)
 * @returns the bytes read, and whether the body went on beyond `cap`
 */
export async function readCapped(
	body: unknown,
	cap: number,
): Promise<{ bytes: Buffer; cut: boolean }> {
	if (!body || typeof body !== 'object' || !(Symbol.asyncIterator in body)) {
		const bytes = toBuffer(body);
		return bytes.length > cap
			? { bytes: bytes.subarray(0, cap), cut: true }
			: { bytes, cut: false };
	}
	const chunks: Buffer[] = [];
	let size = 0;
	for await (const chunk of body as AsyncIterable<Uint8Array | string>) {
		const part =
			typeof chunk === 'string'
				? Buffer.from(chunk)
				: Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
		if (size + part.length > cap) {
			chunks.push(part.subarray(0, cap - size));
			return { bytes: Buffer.concat(chunks), cut: true };
		}
		chunks.push(part);
		size += part.length;
	}
	return { bytes: Buffer.concat(chunks), cut: false };
}

/** Any answer body (a Buffer, bytes, text, JSON) as bytes. */
export function toBuffer(body: unknown): Buffer {
	if (Buffer.isBuffer(body)) return body;
	if (body instanceof ArrayBuffer) return Buffer.from(body);
	if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
	if (typeof body === 'string') return Buffer.from(body, 'utf8');
	if (body === undefined || body === null) return Buffer.alloc(0);
	return Buffer.from(JSON.stringify(body), 'utf8');
}

/** Response headers with lower-case names, several values joined. */
export function lowerCaseHeaders(headers: IDataObject | undefined): Record<string, string> {
	const out: Record<string, string> = {};
	for (const [k, v] of Object.entries(headers ?? {}))
		out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : String(v);
	return out;
}

/**
 * The encoding a body's byte-order mark names (UTF-8 `EF BB BF`, UTF-16 `FE FF` / `FF FE`), which
 * wins over the charset a `Content-Type` declares (WHATWG Encoding standard, "decode": a proxy may
 * label UTF-8 bytes ISO-8859-1).
 */
function encodingOfBom(bytes: Uint8Array): string | undefined {
	if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
	if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
	if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
	return undefined;
}

/**
 * The text of a body (`§node`, Checked answers): decoded by the encoding its byte-order mark names,
 * else by the charset its `Content-Type` declares, else as UTF-8; the mark itself is dropped.
 *
 * @param bytes the body as received
 * @param contentType the `Content-Type` header ('' when absent)
 * @returns the text, or undefined when the body has no mark and the declared charset is not one
 *   the WHATWG Encoding standard knows (the caller names it in its error)
 */
export function decodeBody(bytes: Uint8Array, contentType = ''): string | undefined {
	const label =
		encodingOfBom(bytes) ?? /charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1] ?? 'utf-8';
	let decoder: TextDecoder;
	try {
		decoder = new TextDecoder(label);
	} catch {
		return undefined;
	}
	return decoder.decode(bytes).replace(/^\uFEFF/, '');
}
