/**
 * Bytes of uploaded and fetched files: in memory up to {@link SPILL_BYTES}, then in the emulator's
 * temporary directory (removed on close), so a 200 MB upload keeps memory flat.
 */
import {
	createReadStream,
	createWriteStream,
	readFileSync,
	unlink,
	type WriteStream,
} from 'node:fs';
import { open } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { HttpError } from './http';

export const SPILL_BYTES = 32 * 1024 * 1024;

/** The bytes of one file, in memory or in a temporary file. */
export class StoredFile {
	constructor(
		readonly size: number,
		private buffer: Buffer | undefined,
		private readonly diskPath: string | undefined,
	) {}

	static fromBuffer(buffer: Buffer): StoredFile {
		return new StoredFile(buffer.length, buffer, undefined);
	}

	/** All bytes (reads the temporary file when the file is on disk). */
	readAll(): Buffer {
		return this.buffer ?? readFileSync(this.diskPath as string);
	}

	/** The first `n` bytes, without reading the whole file. */
	async head(n: number): Promise<Buffer> {
		if (this.buffer) return this.buffer.subarray(0, n);
		const handle = await open(this.diskPath as string, 'r');
		try {
			const out = Buffer.alloc(Math.min(n, this.size));
			const { bytesRead } = await handle.read(out, 0, out.length, 0);
			return out.subarray(0, bytesRead);
		} finally {
			await handle.close();
		}
	}

	stream(): Readable {
		return this.buffer ? Readable.from([this.buffer]) : createReadStream(this.diskPath as string);
	}

	/** Releases the bytes (deletes the temporary file). */
	discard(): void {
		this.buffer = undefined;
		if (this.diskPath) unlink(this.diskPath, () => undefined);
	}
}

/** Reads a stream into a {@link StoredFile} (spilled into `tempDir`); 413 when it is longer than `maxBytes`. */
export async function storeStream(
	source: AsyncIterable<Buffer | Uint8Array> | Iterable<Buffer>,
	tempDir: string,
	maxBytes: number,
): Promise<StoredFile> {
	const chunks: Buffer[] = [];
	let size = 0;
	let out: WriteStream | undefined;
	let diskPath: string | undefined;
	try {
		for await (const raw of source) {
			const chunk = Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
			size += chunk.length;
			if (size > maxBytes) throw tooLarge(maxBytes);
			if (out) {
				if (!out.write(chunk)) await once(out, 'drain');
				continue;
			}
			chunks.push(chunk);
			if (size > SPILL_BYTES) {
				diskPath = path.join(tempDir, randomUUID());
				out = createWriteStream(diskPath);
				for (const c of chunks.splice(0)) if (!out.write(c)) await once(out, 'drain');
			}
		}
		if (!out) return StoredFile.fromBuffer(Buffer.concat(chunks, size));
		out.end();
		await once(out, 'finish');
		return new StoredFile(size, undefined, diskPath);
	} catch (err) {
		if (out) {
			out.destroy();
			if (diskPath) unlink(diskPath, () => undefined);
		}
		throw err;
	}
}

/** Size limits are "not shown" (§v0-8, §unversioned-8). */
function tooLarge(maxBytes: number): HttpError {
	return new HttpError(413, { detail: `Request body is too large (limit ${maxBytes} bytes).` });
}
