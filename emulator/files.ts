/**
 * The files origin: where `GET /v0/documents/{id}/download` redirects (§v0-4.4), and static PDFs
 * for URL inputs (§v0-4.5). A separate origin, like the storage behind pre-signed URLs, so the
 * request log shows that the API key never reaches it.
 */
import { createReadStream, existsSync } from 'node:fs';
import path from 'node:path';
import { HttpError, notFound, type Reply, type Routes } from './http';
import { StoredFile } from './storage';

const CONTENT_TYPES: Record<string, string> = {
	'.pdf': 'application/pdf',
	'.png': 'image/png',
	'.jpg': 'image/jpeg',
	'.jpeg': 'image/jpeg',
};

function contentTypeFor(name: string): string {
	return CONTENT_TYPES[path.extname(name).toLowerCase()] ?? 'application/octet-stream';
}

/** `attachment; filename="..."` (quotes and non-ASCII characters replaced; RFC 5987 form added for the latter). */
export function attachment(name: string): string {
	const ascii = name.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
	return ascii === name
		? `attachment; filename="${name}"`
		: `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** A file answer named `name`: Content-Type by extension unless given, attachment disposition. */
export function fileReply(
	name: string,
	file: StoredFile | Buffer | string,
	contentType = contentTypeFor(name),
): Reply {
	const stored = file instanceof StoredFile;
	const headers = {
		'content-type': contentType,
		'content-length': String(stored ? file.size : Buffer.byteLength(file)),
		'content-disposition': attachment(name),
	};
	return { status: 200, body: stored ? file.stream() : file, headers };
}

/** A tiny valid PNG (1×1, grey): the emulator's stand-in for page images and pictures. */
export const TINY_PNG = Buffer.from(
	'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg==',
	'base64',
);

/** The answer of an image URL (§v0-2.2 `picture`, §unversioned-2.1 `content_images`): the tiny PNG. */
export const PNG_REPLY: Reply = {
	status: 200,
	body: TINY_PNG,
	headers: { 'content-type': 'image/png' },
};

/** The files origin's routes (no authentication). */
export const filesRoutes: Routes = {
	// The target of the v0 download redirect.
	'GET /files/:id/:name': async (app, req, params) => {
		const doc = app.store.documents.get(params.id);
		if (!doc || doc.source.name !== params.name) throw notFound();
		const signature = req.query.signature;
		if (typeof signature !== 'string' || app.store.signatures.get(signature) !== doc.id)
			throw new HttpError(403, { detail: 'Invalid or missing signature.' });
		return fileReply(doc.source.name, doc.source.file);
	},
	// The PDFs of emulator/static/ (make-static.ts).
	'GET /static/:name': async (_app, _req, params) => {
		const name = path.basename(params.name);
		const file = path.join(__dirname, 'static', name);
		if (name !== params.name || !existsSync(file)) throw notFound();
		const headers = { 'content-type': contentTypeFor(name) };
		return { status: 200, body: createReadStream(file), headers };
	},
};
