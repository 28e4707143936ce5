/** Request bodies of both families: JSON, url-encoded and multipart forms (files may spill to disk); every byte read is counted. */
import type { IncomingMessage } from 'node:http';
import { Transform } from 'node:stream';
import { Busboy } from '@fastify/busboy';
import { HttpError, type AppContext } from './http';
import { storeStream, type StoredFile } from './storage';

export type BodyKind = 'json' | 'form' | 'multipart';

export interface UploadedFile {
	filename: string;
	mimetype: string;
	file: StoredFile;
}

export type ParsedBody =
	| { kind: 'none' }
	| { kind: 'json'; value: unknown }
	| { kind: 'form'; fields: Map<string, string[]>; files: Map<string, UploadedFile[]> };

/** A file field as the request log shows it: what arrived, never its bytes (`filename`: the field name when none was sent). */
export interface LoggedFile {
	field: string;
	filename: string;
	size: number;
	contentType: string;
}

/** A parsed body for the request log; a repeated text field as an array, as `LoggedRequest.query`. */
export type LoggedBody =
	| { kind: 'json'; value: unknown }
	| { kind: 'form'; fields: Record<string, string | string[]>; files: LoggedFile[] };

/** What the request log keeps of a parsed body; `undefined` for an empty body. */
function loggedBody(parsed: ParsedBody): LoggedBody | undefined {
	if (parsed.kind === 'none') return undefined;
	if (parsed.kind === 'json') return { kind: 'json', value: structuredClone(parsed.value) };
	const fields: Record<string, string | string[]> = {};
	for (const [name, values] of parsed.fields)
		fields[name] = values.length === 1 ? values[0] : [...values];
	const files: LoggedFile[] = [];
	for (const [field, uploads] of parsed.files)
		for (const u of uploads)
			files.push({ field, filename: u.filename, size: u.file.size, contentType: u.mimetype });
	return { kind: 'form', fields, files };
}

/** Limit of JSON and url-encoded bodies (read into memory); uploads have `maxUploadBytes`. */
const MAX_TEXT_BODY_BYTES = 16 * 1024 * 1024;

const MEDIA_TYPES: Record<string, BodyKind> = {
	'application/json': 'json',
	'application/x-www-form-urlencoded': 'form',
	'multipart/form-data': 'multipart',
};

/** The body of one request; read at most once, drained if the handler never reads it. */
export class IncomingBody {
	private consumed = false;
	/** Files written for this request and not (yet) kept by a record. */
	private readonly uploads = new Set<StoredFile>();

	/** `log` (the request's log entry) counts every byte read and gets the body a handler read. */
	constructor(
		private readonly raw: IncomingMessage,
		private readonly app: Pick<AppContext, 'tempDir' | 'maxUploadBytes'>,
		private readonly log: { bodyBytes: number; body?: LoggedBody },
	) {}

	/** Parses the body if its media type is one of `accept`, else 415 (DRF's answer; not shown). */
	async read(accept: BodyKind[]): Promise<ParsedBody> {
		const parsed = await this.parse(accept);
		this.log.body = loggedBody(parsed);
		return parsed;
	}

	private async parse(accept: BodyKind[]): Promise<ParsedBody> {
		const header = this.raw.headers['content-type'];
		const hasBody =
			this.raw.headers['transfer-encoding'] !== undefined ||
			Number(this.raw.headers['content-length'] ?? 0) > 0;
		if (!header && !hasBody) {
			this.consumed = true;
			return { kind: 'none' };
		}
		const mediaType = (header ?? '').split(';')[0].trim().toLowerCase();
		const kind = MEDIA_TYPES[mediaType];
		if (!kind || !accept.includes(kind))
			throw new HttpError(415, { detail: `Unsupported media type "${header ?? ''}" in request.` });
		if (kind === 'multipart') return this.readMultipart();
		// MAX_TEXT_BODY_BYTES is below SPILL_BYTES: always in memory.
		const text = (await storeStream(this.counted(), this.app.tempDir, MAX_TEXT_BODY_BYTES))
			.readAll()
			.toString('utf8');
		if (kind === 'form') {
			const fields = new Map<string, string[]>();
			for (const [k, v] of new URLSearchParams(text)) push(fields, k, v);
			return { kind: 'form', fields, files: new Map() };
		}
		if (text.trim() === '') return { kind: 'none' };
		try {
			return { kind: 'json', value: JSON.parse(text) };
		} catch (err) {
			// Django REST framework's wording (§v0-7: "malformed JSON" is a 400 cause).
			throw new HttpError(400, { detail: `JSON parse error - ${(err as Error).message}` });
		}
	}

	/** Marks an uploaded file as kept by a record: it survives {@link discardUploads}. */
	retain(file: StoredFile): void {
		this.uploads.delete(file);
	}

	/** Deletes the files of this request that no record kept. */
	discardUploads(): void {
		for (const f of this.uploads) f.discard();
		this.uploads.clear();
	}

	/** Reads and counts whatever the handler did not read, so the log has the full body size. */
	async drain(): Promise<void> {
		if (this.consumed || this.raw.readableEnded || this.raw.destroyed) return;
		this.consumed = true;
		for await (const chunk of this.raw) this.log.bodyBytes += (chunk as Buffer).length;
	}

	private counted(): Transform {
		this.consumed = true;
		const { log } = this;
		const counter = new Transform({
			transform(chunk: Buffer, _enc, done) {
				log.bodyBytes += chunk.length;
				done(null, chunk);
			},
		});
		this.raw.on('error', (err) => counter.destroy(err));
		return this.raw.pipe(counter);
	}

	private readMultipart(): Promise<ParsedBody> {
		const fields = new Map<string, string[]>();
		const files = new Map<string, UploadedFile[]>();
		const pending: Promise<void>[] = [];
		return new Promise<ParsedBody>((resolve, reject) => {
			// Throws for a content type without a boundary, before the body is read.
			const busboy = new Busboy({
				headers: this.raw.headers as { 'content-type': string },
				limits: { fieldSize: MAX_TEXT_BODY_BYTES, fieldNameSize: 1000 },
			});
			const source = this.counted();
			let failed = false;
			const fail = (err: unknown): void => {
				if (failed) return;
				failed = true;
				source.unpipe(busboy);
				source.resume(); // keep reading (and counting) the rest; the answer is an error anyway
				Promise.allSettled(pending).then(() => reject(err));
			};
			busboy.on('field', (name, value) => push(fields, name, value));
			busboy.on('file', (name, stream, filename, _enc, mimetype) => {
				const { tempDir, maxUploadBytes } = this.app;
				const task = storeStream(stream, tempDir, maxUploadBytes).then((file) => {
					this.uploads.add(file);
					// A part without a file name (undefined despite the types) is named after its field.
					if (!failed) push(files, name, { filename: filename ?? name, mimetype, file });
				});
				task.catch((err: unknown) => {
					stream.resume();
					fail(err);
				});
				pending.push(task);
			});
			busboy.on('error', fail);
			busboy.on('finish', () => {
				Promise.all(pending).then(() => {
					if (!failed) resolve({ kind: 'form', fields, files });
				}, fail);
			});
			source.on('error', fail);
			source.pipe(busboy);
		}).catch((err: unknown) => {
			if (err instanceof HttpError) throw err;
			// Django REST framework's wording for an unreadable multipart body.
			const message = err instanceof Error ? err.message : String(err);
			throw new HttpError(400, { detail: `Multipart form parse error - ${message}` });
		});
	}
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
	const list = map.get(key);
	if (list) list.push(value);
	else map.set(key, [value]);
}
