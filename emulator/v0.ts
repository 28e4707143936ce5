/**
 * The `/v0` family (§v0 of docs/service-api.md): documents, parsings, extracts. `X-API-Key`
 * (§v0-5); no trailing slash (§v0-1 rule 1).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { UploadedFile } from './body';
import { EMPTY_FILE, Input, isBlank, isUploadedFile, readPageRange, REQUIRED } from './fields';
import { PNG_REPLY } from './files';
import { isoTimestamp, isUuid, json, lookup, notFound, queryValue } from './http';
import type { AppContext, Params, Reply, RequestContext, Routes } from './http';
import { fetchUrl, ingestFile, isHttpUrl, newJob, serviceCreatedAt } from './ingest';
import { listReply, metadataValues, readCreatedRange, searchFilter } from './listing';
import { computeResult } from './schema-result';
import { jobState, processedPages, readJob, statusLabel } from './state';
import type {
	DocumentRecord,
	EmulatorControls,
	ExtractRecord,
	FileRecord,
	Job,
	ParsingRecord,
	SchemaSnapshot,
} from './store';

const MODELS = ['PIGALLE', 'PIGALLE_LITE'] as const;
const PARSING_STATUSES = ['IN_QUEUE', 'IN_PROGRESS', 'FINISHED', 'PARTIAL_FINISHED', 'ERROR'];

/** Document (§v0-2.1). */
function renderDocument(d: DocumentRecord): Record<string, unknown> {
	return {
		id: d.id,
		filename: d.source.name,
		file_url: `/v0/documents/${d.id}/download`,
		metadata: d.metadata,
		page_count: d.source.pageCount,
		created_at: isoTimestamp(d.createdAt),
		updated_at: isoTimestamp(d.createdAt),
	};
}

/**
 * Parsing (§v0-2.3). Until final: contents null, pages_* 0, no pictures. Once final: markdown
 * (`# <filename>`, then `## Page N` and each page's text) and ocr_content pages with their size (PDF
 * points, image pixels), whose structure is "not shown" (§v0-2.5).
 */
function renderParsing(p: ParsingRecord, now: number): Record<string, unknown> {
	const doc = p.document;
	const state = jobState(p.job, now);
	const { outcome } = state;
	const pages = processedPages(p.job, outcome);
	const done = outcome !== undefined && outcome.status !== 'ERROR';
	const total = outcome ? doc.source.pageCount : 0;
	const markdown = [
		`# ${doc.source.name}`,
		...pages.map((page, i) => `## Page ${i + 1}\n\n${page.text}`),
	];
	return {
		id: p.id,
		document: renderDocument(doc),
		picture_description_enabled: p.pictureDescriptionEnabled,
		table_verification_enabled: p.tableVerificationEnabled,
		model: p.model,
		pictures: !p.pictureDescriptionEnabled
			? []
			: pages.map((page, i) => ({
					id: p.pictureIds[i],
					parsing: p.id,
					name: `page-${i + 1}.png`,
					picture: `/v0/media/pictures/${p.pictureIds[i]}.png`,
					page_index: i,
					bbox: { x: 0, y: 0, width: page.width, height: page.height },
					description: `Emulated picture of page ${i + 1}`,
					created_at: isoTimestamp((state.finalAt as number) + p.job.shift),
				})),
		ocr_content: done ? { pages: pages.map((page, i) => ({ page_index: i, ...page })) } : null,
		markdown_content: done ? `${markdown.join('\n\n')}\n` : null,
		pages_total: total,
		pages_success: pages.length,
		pages_failed: total - pages.length,
		status: statusLabel(state, 'IN_QUEUE'),
		metadata: p.metadata,
		error: outcome?.error ?? null,
		created_at: isoTimestamp(p.createdAt),
		updated_at: isoTimestamp(state.updatedAt + p.job.shift),
	};
}

/** Extract (§v0-2.4): `result` is null until FINISHED. */
function renderExtract(e: ExtractRecord, now: number): Record<string, unknown> {
	const { parsing } = e;
	const state = jobState(e.job, now);
	const texts = processedPages(parsing.job, jobState(parsing.job, now).outcome).map((p) => p.text);
	return {
		id: e.id,
		schema: {
			id: e.schema.id,
			name: e.schema.name,
			description: e.schema.description,
			completion_mode: e.schema.completionMode,
		},
		parsing: renderParsing(parsing, now),
		result: state.outcome?.status === 'FINISHED' ? computeResult(e.schema.definition, texts) : null,
		status: statusLabel(state, 'IN_QUEUE'),
		error: state.outcome?.error ?? null,
		created_at: isoTimestamp(e.createdAt),
		updated_at: isoTimestamp(state.updatedAt + e.job.shift),
	};
}

/** The `document` field of §v0-4.5 / §v0-4.8: an existing id, one URL, a list of URLs, or a file. */
type DocumentInput =
	| { kind: 'id'; doc: DocumentRecord }
	| { kind: 'urls'; urls: string[]; list: boolean }
	| { kind: 'file'; upload: UploadedFile };

function readDocumentInput(
	app: AppContext,
	input: Input,
	allowList: boolean,
): DocumentInput | undefined {
	const value = input.get('document');
	const invalid = (message: string): undefined => void input.errors.add('document', message);
	if (isBlank(value)) return invalid(REQUIRED);
	if (isUploadedFile(value))
		return value.file.size === 0 ? invalid(EMPTY_FILE) : { kind: 'file', upload: value };
	if (Array.isArray(value)) {
		if (!allowList) return invalid('A list of URLs is not supported.');
		if (value.length === 0) return invalid('This list may not be empty.');
		const bad = value.findIndex((u) => typeof u !== 'string' || !isHttpUrl(u));
		return bad >= 0
			? invalid(`Item ${bad + 1} is not a valid URL.`)
			: { kind: 'urls', urls: value as string[], list: true };
	}
	if (isUuid(value)) {
		const doc = app.store.documents.get(value);
		return doc ? { kind: 'id', doc } : invalid('Unknown document id.');
	}
	if (typeof value === 'string' && isHttpUrl(value))
		return { kind: 'urls', urls: [value], list: false };
	return invalid('Must be a document id, a URL or a file.');
}

/** A new document named as its file (created_at: now on the service clock unless given); `req` keeps its upload. */
export function addDocument(
	app: AppContext,
	source: FileRecord,
	metadata: Record<string, unknown>,
	req?: RequestContext,
	createdAt = app.serviceNow(),
): DocumentRecord {
	req?.body.retain(source.file);
	return app.store.add<DocumentRecord>(app.store.documents, { source, metadata, createdAt });
}

/** The documents a `document` input designates, created for files and URLs (named by the URL's last segment). */
async function resolveDocuments(
	app: AppContext,
	req: RequestContext,
	input: DocumentInput,
): Promise<DocumentRecord[]> {
	if (input.kind === 'id') return [input.doc];
	if (input.kind === 'file') {
		const { filename, file } = input.upload;
		return [addDocument(app, await ingestFile(app, filename, file, {}), {}, req)];
	}
	const fetched: Awaited<ReturnType<typeof fetchUrl>>[] = [];
	try {
		for (const url of input.urls) fetched.push(await fetchUrl(app, url));
		const sources = await Promise.all(fetched.map((f) => ingestFile(app, f.name, f.file, {})));
		return sources.map((source) => addDocument(app, source, {}, req));
	} catch (err) {
		for (const f of fetched) f.file.discard();
		throw err;
	}
}

/** The options of a new parsing (§v0-4.5; also read by §v0-4.8), and its test controls. */
type ParsingOptions = Pick<
	ParsingRecord,
	'pictureDescriptionEnabled' | 'tableVerificationEnabled' | 'model' | 'metadata'
>;

function readParsingOptions(input: Input): ParsingOptions & { controls: EmulatorControls } {
	const metadata = input.metadata();
	return {
		pictureDescriptionEnabled: input.boolean('picture_description_enabled', false),
		tableVerificationEnabled: input.boolean('table_verification_enabled', false),
		model: input.choice('model', MODELS, 'PIGALLE') as string,
		metadata,
		controls: input.controls(metadata),
	};
}

/** A new parsing of `doc` whose job is `job`; one picture id per page when pictures are asked. */
export function addParsing(
	app: AppContext,
	doc: DocumentRecord,
	opts: ParsingOptions,
	job: Job,
): ParsingRecord {
	const parsing = app.store.add<ParsingRecord>(app.store.parsings, {
		document: doc,
		...opts,
		job,
		pictureIds: opts.pictureDescriptionEnabled
			? Array.from({ length: Math.max(1, doc.source.pageCount) }, () => randomUUID())
			: [],
		createdAt: serviceCreatedAt(job),
	});
	for (const pictureId of parsing.pictureIds) app.store.pictures.set(pictureId, parsing.id);
	return parsing;
}

/** POST /v0/documents (§v0-4.1). */
async function uploadDocument(app: AppContext, req: RequestContext): Promise<Reply> {
	const input = Input.from(await req.body.read(['multipart', 'form']));
	const range = readPageRange(req.query, input.errors);
	const upload = input.file('file');
	const filename = input.optionalString('filename');
	const metadata = input.metadata();
	input.controls(metadata);
	input.errors.throwIfAny();
	const { file, filename: sent } = upload as UploadedFile;
	const name = filename ?? sent;
	const source = await ingestFile(app, name, file, range);
	return json(201, renderDocument(addDocument(app, source, metadata ?? {}, req)));
}

/** GET /v0/documents/{id}/download (§v0-4.4): 302 to the files origin with a fresh signature. */
async function downloadDocument(app: AppContext, _req: RequestContext, { id }: Params) {
	const doc = lookup(app.store.documents, id, 'Document');
	const signature = randomBytes(16).toString('hex');
	app.store.signatures.set(signature, doc.id);
	const name = encodeURIComponent(doc.source.name);
	const location = `${app.filesUrl}/files/${doc.id}/${name}?signature=${signature}`;
	return { status: 302, headers: { location } };
}

/** POST /v0/parsing (§v0-4.5): one Parsing, or an array of them for a list of URLs. */
async function createParsings(app: AppContext, req: RequestContext): Promise<Reply> {
	const input = Input.from(await req.body.read(['json', 'multipart', 'form']));
	const document = readDocumentInput(app, input, true);
	const { controls, ...opts } = readParsingOptions(input);
	input.errors.throwIfAny();
	const docInput = document as DocumentInput;
	const parsings = (await resolveDocuments(app, req, docInput)).map((doc) =>
		addParsing(app, doc, opts, newJob(app, doc.source, controls, { allowPartial: true })),
	);
	const now = app.clock();
	const rendered = parsings.map((p) => renderParsing(p, now));
	return json(201, docInput.kind === 'urls' && docInput.list ? rendered : rendered[0]);
}

/** GET /v0/parsing (§v0-4.6). List items are full Parsings (fields beyond id and status: "not shown"). */
async function listParsings(app: AppContext, req: RequestContext): Promise<Reply> {
	const status = queryValue(req.query, 'status');
	const render = (p: ParsingRecord) => renderParsing(p, req.now);
	return listReply(req, app.store.parsings.values(), render, (errors) => {
		if (status && !PARSING_STATUSES.includes(status))
			errors.add('status', `Select a valid choice. ${status} is not one of the available choices.`);
		return [
			readCreatedRange(req, errors),
			searchFilter(req, (p) => [p.document.source.name, ...metadataValues(p.metadata)]),
			status && ((p) => statusLabel(jobState(p.job, req.now), 'IN_QUEUE') === status),
		];
	});
}

/**
 * POST /v0/extract (§v0-4.8): `schema` plus exactly one of `parsing` / `document`. From a document,
 * a new parsing is made first (§v0-3) and each takes half the processing time; from a parsing, the
 * extract takes all of it. The test controls of `metadata` apply to the extract too.
 */
async function createExtract(app: AppContext, req: RequestContext): Promise<Reply> {
	const input = Input.from(await req.body.read(['json', 'multipart', 'form']));
	const { errors } = input;
	const schemaId = input.get('schema');
	const schema = isUuid(schemaId) ? app.store.snapshotSchema(schemaId) : undefined;
	if (isBlank(schemaId)) errors.add('schema', REQUIRED);
	else if (!isUuid(schemaId)) errors.add('schema', 'Must be a valid UUID.');
	else if (!schema) errors.add('schema', 'Unknown schema id.');

	const hasDocument = !isBlank(input.get('document'));
	const parsingId = input.get('parsing');
	const hasParsing = !isBlank(parsingId);
	let parsing = isUuid(parsingId) ? app.store.parsings.get(parsingId) : undefined;
	let document: DocumentInput | undefined;
	if (hasDocument && hasParsing)
		errors.add('non_field_errors', 'Provide either document or parsing, not both.');
	else if (!hasDocument && !hasParsing)
		errors.add('non_field_errors', 'One of document or parsing is required.');
	else if (hasParsing) {
		const status = parsing && jobState(parsing.job, req.now).outcome?.status;
		if (!isUuid(parsingId)) errors.add('parsing', 'Must be a valid UUID.');
		else if (!parsing) errors.add('parsing', 'Unknown parsing id.');
		else if (status !== 'FINISHED' && status !== 'PARTIAL_FINISHED')
			errors.add('parsing', 'Parsing is not finished.');
	} else document = readDocumentInput(app, input, false);
	const { controls, ...opts } = readParsingOptions(input);
	errors.throwIfAny();

	if (document) {
		const [doc] = await resolveDocuments(app, req, document);
		// The hold is the extract's: its parsing runs on.
		const parsingControls = { ...controls, hold: undefined };
		const parsingJob = newJob(app, doc.source, parsingControls, { allowPartial: true, share: 0.5 });
		parsing = addParsing(app, doc, opts, parsingJob);
	}
	const basis = parsing as ParsingRecord;
	// After a parsing made here, the other half of the time.
	const afterParsing = document && { share: 0.5, after: basis.job };
	const job = newJob(app, basis.job.source, controls, { allowPartial: false, ...afterParsing });
	const extract = app.store.add<ExtractRecord>(app.store.extracts, {
		schema: schema as SchemaSnapshot,
		parsing: basis,
		job,
		createdAt: serviceCreatedAt(job),
	});
	return json(201, renderExtract(extract, app.clock()));
}

/** The v0 family's routes. */
export const v0Routes: Routes = {
	'POST /v0/documents': uploadDocument,
	'GET /v0/documents': async (app, req) =>
		listReply(req, app.store.documents.values(), renderDocument, (errors) => [
			readCreatedRange(req, errors),
			searchFilter(req, (d) => [d.source.name, ...metadataValues(d.metadata)]),
		]),
	'GET /v0/documents/:id': async (app, _req, { id }) =>
		json(200, renderDocument(lookup(app.store.documents, id, 'Document'))),
	'GET /v0/documents/:id/download': downloadDocument,
	'POST /v0/parsing': createParsings,
	'GET /v0/parsing': listParsings,
	'GET /v0/parsing/:id': async (app, req, { id }) =>
		json(200, renderParsing(readJob(app.store.parsings, id, 'Parsing', req.now), req.now)),
	'POST /v0/extract': createExtract,
	'GET /v0/extract/:id': async (app, req, { id }) =>
		json(200, renderExtract(readJob(app.store.extracts, id, 'Extract', req.now), req.now)),
	// A picture's image (§v0-2.2 `picture`: "relative path of the image"); same key as the API.
	'GET /v0/media/pictures/:pictureId.png': async (app, _req, { pictureId }) => {
		if (!app.store.pictures.has(pictureId)) throw notFound();
		return PNG_REPLY;
	},
};
