/**
 * The `/v0` family (§v0 of docs/service-api.md): documents, parsings, extracts. Authenticated with `X-API-Key`
 * (§v0-5); paths have no trailing slash (§v0-1 rule 1).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { AppContext, RequestContext, RouteDef } from './context';
import { queryValue, routesOf } from './context';
import {
	EMPTY_FILE,
	Input,
	isBlank,
	isUploadedFile,
	readBoolean,
	readChoice,
	readControls,
	readFile,
	readMetadata,
	readOptionalString,
	readPageRange,
	REQUIRED,
} from './fields';
import type { UploadedFile } from './body';
import { ErrorBag, isoTimestamp, isUuid, json, lookup, notFound, Router, type Reply } from './http';
import { fetchUrl, ingestFile, isHttpUrl, newJob, serviceCreatedAt } from './ingest';
import { listReply, metadataValues, readCreatedRange, searchFilter } from './listing';
import { PNG_REPLY } from './files';
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
const PARSING_STATUSES = [
	'IN_QUEUE',
	'IN_PROGRESS',
	'FINISHED',
	'PARTIAL_FINISHED',
	'ERROR',
] as const;

// ---------------------------------------------------------------------------------------------------
// Rendering

/** Document (§v0-2.1). */
function renderDocument(d: DocumentRecord): Record<string, unknown> {
	return {
		id: d.id,
		filename: d.filename,
		file_url: `/v0/documents/${d.id}/download`,
		metadata: d.metadata,
		page_count: d.source.pageCount,
		created_at: isoTimestamp(d.createdAt),
		updated_at: isoTimestamp(d.createdAt),
	};
}

/**
 * Parsing (§v0-2.3). While not final: markdown_content / ocr_content null, pages_* 0, no
 * pictures. When final: markdown (`# <filename>`, then `## Page N` and the page text per page) and
 * ocr_content `{"pages": [{"page_index", "text", "width", "height"}]}` — the internal structure of
 * ocr_content and of a picture's bbox is "not shown" (§v0-2.5); sizes are PDF points (image
 * pixels for images). A PARTIAL_FINISHED parsing (emulated) lost its last page.
 */
function renderParsing(app: AppContext, p: ParsingRecord, now: number): Record<string, unknown> {
	const doc = app.store.documents.get(p.documentId) as DocumentRecord;
	const state = jobState(p.job, now);
	const out: Record<string, unknown> = {
		id: p.id,
		document: renderDocument(doc),
		picture_description_enabled: p.pictureDescriptionEnabled,
		table_verification_enabled: p.tableVerificationEnabled,
		model: p.model,
		pictures: [],
		ocr_content: null,
		markdown_content: null,
		pages_total: 0,
		pages_success: 0,
		pages_failed: 0,
		status: statusLabel(state, 'IN_QUEUE'),
		metadata: p.metadata,
		error: null,
		created_at: isoTimestamp(p.createdAt),
		updated_at: isoTimestamp(state.updatedAt + p.job.shift),
	};
	const outcome = state.outcome;
	if (!outcome) return out;
	const pages = processedPages(p.job, outcome);
	const total = doc.source.pageCount;
	out.error = outcome.error;
	out.pages_total = total;
	out.pages_success = outcome.status === 'ERROR' ? 0 : pages.length;
	out.pages_failed = total - (out.pages_success as number);
	if (outcome.status === 'ERROR') return out;
	out.markdown_content =
		[`# ${doc.filename}`, ...pages.map((page, i) => `## Page ${i + 1}\n\n${page.text}`)].join(
			'\n\n',
		) + '\n';
	out.ocr_content = {
		pages: pages.map((page, i) => ({
			page_index: i,
			text: page.text,
			width: page.width,
			height: page.height,
		})),
	};
	if (p.pictureDescriptionEnabled) {
		out.pictures = pages.map((page, i) => ({
			id: p.pictureIds[i],
			parsing: p.id,
			name: `page-${i + 1}.png`,
			picture: `/v0/media/pictures/${p.pictureIds[i]}.png`,
			page_index: i,
			bbox: { x: 0, y: 0, width: page.width, height: page.height },
			description: `Emulated picture of page ${i + 1}`,
			created_at: isoTimestamp((state.finalAt as number) + p.job.shift),
		}));
	}
	return out;
}

/** Extract (§v0-2.4): `result` is null until FINISHED. */
function renderExtract(app: AppContext, e: ExtractRecord, now: number): Record<string, unknown> {
	const parsing = app.store.parsings.get(e.parsingId) as ParsingRecord;
	const state = jobState(e.job, now);
	let result: unknown = null;
	if (state.outcome?.status === 'FINISHED') {
		const parsingOutcome = jobState(parsing.job, now).outcome;
		const pages = parsingOutcome ? processedPages(parsing.job, parsingOutcome) : [];
		result = computeResult(
			e.schema.definition,
			pages.map((page) => page.text),
		);
	}
	return {
		id: e.id,
		schema: {
			id: e.schema.id,
			name: e.schema.name,
			description: e.schema.description,
			completion_mode: e.schema.completionMode,
		},
		parsing: renderParsing(app, parsing, now),
		result,
		status: statusLabel(state, 'IN_QUEUE'),
		error: state.outcome?.error ?? null,
		created_at: isoTimestamp(e.createdAt),
		updated_at: isoTimestamp(state.updatedAt + e.job.shift),
	};
}

// ---------------------------------------------------------------------------------------------------
// Inputs

/** The `document` field of §v0-4.5 / §v0-4.8: an existing id, one URL, a list of URLs, or a file. */
type DocumentInput =
	| { kind: 'id'; doc: DocumentRecord }
	| { kind: 'url'; url: string }
	| { kind: 'urls'; urls: string[] }
	| { kind: 'file'; upload: UploadedFile };

function readDocumentInput(
	app: AppContext,
	input: Input,
	errors: ErrorBag,
	allowList: boolean,
): DocumentInput | undefined {
	const value = input.get('document');
	const invalid = (message: string): undefined => {
		errors.add('document', message);
		return undefined;
	};
	if (isBlank(value)) return invalid(REQUIRED);
	if (isUploadedFile(value))
		return value.file.size === 0 ? invalid(EMPTY_FILE) : { kind: 'file', upload: value };
	if (Array.isArray(value)) {
		if (!allowList) return invalid('A list of URLs is not supported.');
		if (value.length === 0) return invalid('This list may not be empty.');
		const bad = value.findIndex((u) => typeof u !== 'string' || !isHttpUrl(u));
		return bad >= 0
			? invalid(`Item ${bad + 1} is not a valid URL.`)
			: { kind: 'urls', urls: value as string[] };
	}
	if (typeof value === 'string' && isUuid(value)) {
		const doc = app.store.documents.get(value);
		return doc ? { kind: 'id', doc } : invalid('Unknown document id.');
	}
	if (typeof value === 'string' && isHttpUrl(value)) return { kind: 'url', url: value };
	return invalid('Must be a document id, a URL or a file.');
}

function createDocument(
	app: AppContext,
	req: RequestContext,
	filename: string,
	source: FileRecord,
	metadata: Record<string, unknown>,
): DocumentRecord {
	req.body.retain(source.file);
	return app.store.add<DocumentRecord>(app.store.documents, {
		filename,
		source,
		metadata,
		createdAt: app.serviceNow(),
	});
}

/** The documents a `document` input designates, creating them for files and URLs (a URL's file name is its last path segment). */
async function resolveDocuments(
	app: AppContext,
	req: RequestContext,
	input: DocumentInput,
): Promise<DocumentRecord[]> {
	if (input.kind === 'id') return [input.doc];
	if (input.kind === 'file')
		return [
			createDocument(
				app,
				req,
				input.upload.filename,
				await ingestFile(app, input.upload.filename, input.upload.file, {}),
				{},
			),
		];
	const urls = input.kind === 'url' ? [input.url] : input.urls;
	const fetched: Awaited<ReturnType<typeof fetchUrl>>[] = [];
	try {
		for (const url of urls) fetched.push(await fetchUrl(app, url));
		const sources = await Promise.all(fetched.map((f) => ingestFile(app, f.name, f.file, {})));
		return sources.map((source) => createDocument(app, req, source.name, source, {}));
	} catch (err) {
		for (const f of fetched) f.file.discard();
		throw err;
	}
}

/** The options of a new parsing, and the test controls of its metadata. */
type ParsingOptions = Pick<
	ParsingRecord,
	'pictureDescriptionEnabled' | 'tableVerificationEnabled' | 'model' | 'metadata'
> & { controls: EmulatorControls };

/** Parsing options of §v0-4.5 (also read by §v0-4.8 for the parsing it creates). */
function readParsingOptions(input: Input, errors: ErrorBag): ParsingOptions {
	const metadata = readMetadata(input, errors);
	return {
		pictureDescriptionEnabled: readBoolean(input, 'picture_description_enabled', errors, false),
		tableVerificationEnabled: readBoolean(input, 'table_verification_enabled', errors, false),
		model: readChoice(input, 'model', MODELS, errors, 'PIGALLE') as string,
		metadata,
		controls: readControls(metadata, errors),
	};
}

function createParsing(
	app: AppContext,
	doc: DocumentRecord,
	opts: ParsingOptions,
	share = 1,
): ParsingRecord {
	const job = newJob(app, doc.source, opts.controls, { allowPartial: true, share });
	const parsing = app.store.add<ParsingRecord>(app.store.parsings, {
		documentId: doc.id,
		pictureDescriptionEnabled: opts.pictureDescriptionEnabled,
		tableVerificationEnabled: opts.tableVerificationEnabled,
		model: opts.model,
		metadata: opts.metadata,
		job,
		pictureIds: opts.pictureDescriptionEnabled
			? Array.from({ length: Math.max(1, doc.source.pageCount) }, () => randomUUID())
			: [],
		createdAt: serviceCreatedAt(job),
	});
	for (const pictureId of parsing.pictureIds) app.store.pictures.set(pictureId, parsing.id);
	return parsing;
}

// ---------------------------------------------------------------------------------------------------
// Handlers

/** POST /v0/documents (§v0-4.1): multipart `file`, `filename`, `metadata`; query pdf_page_start/end. */
async function uploadDocument(app: AppContext, req: RequestContext): Promise<Reply> {
	const input = Input.from(await req.body.read(['multipart', 'form']));
	const errors = new ErrorBag();
	const range = readPageRange(req.query, errors);
	const upload = readFile(input, 'file', errors);
	const filename = readOptionalString(input, 'filename', errors);
	const metadata = readMetadata(input, errors);
	readControls(metadata, errors);
	errors.throwIfAny();
	const file = upload as UploadedFile;
	const name = filename ?? file.filename;
	const doc = createDocument(
		app,
		req,
		name,
		await ingestFile(app, name, file.file, range),
		metadata ?? {},
	);
	return json(201, renderDocument(doc));
}

/** GET /v0/documents (§v0-4.2). */
async function listDocuments(app: AppContext, req: RequestContext): Promise<Reply> {
	const errors = new ErrorBag();
	return listReply(
		req,
		app.store.documents.values(),
		renderDocument,
		[
			readCreatedRange(req, errors),
			searchFilter(req, (d) => [d.filename, ...metadataValues(d.metadata)]),
		],
		errors,
	);
}

/**
 * GET /v0/documents/{id}/download (§v0-4.4): 302 to the files origin with a fresh signature,
 * no body.
 */
async function downloadDocument(app: AppContext, _req: RequestContext, id: string): Promise<Reply> {
	const doc = lookup(app.store.documents, id, 'Document');
	const signature = randomBytes(16).toString('hex');
	app.store.signatures.set(signature, doc.id);
	return {
		status: 302,
		headers: {
			location: `${app.filesUrl}/files/${doc.id}/${encodeURIComponent(doc.filename)}?signature=${signature}`,
		},
	};
}

/** POST /v0/parsing (§v0-4.5): one Parsing, or an array of Parsings for a list of URLs. */
async function createParsings(app: AppContext, req: RequestContext): Promise<Reply> {
	const input = Input.from(await req.body.read(['json', 'multipart', 'form']));
	const errors = new ErrorBag();
	const document = readDocumentInput(app, input, errors, true);
	const opts = readParsingOptions(input, errors);
	errors.throwIfAny();
	const docInput = document as DocumentInput;
	const parsings = (await resolveDocuments(app, req, docInput)).map((doc) =>
		createParsing(app, doc, opts),
	);
	const now = app.clock();
	const rendered = parsings.map((p) => renderParsing(app, p, now));
	return json(201, docInput.kind === 'urls' ? rendered : rendered[0]);
}

/** GET /v0/parsing (§v0-4.6). List items are full Parsings (fields beyond id and status: "not shown"). */
async function listParsings(app: AppContext, req: RequestContext): Promise<Reply> {
	const errors = new ErrorBag();
	const status = queryValue(req.query, 'status');
	if (
		status !== undefined &&
		status !== '' &&
		!(PARSING_STATUSES as readonly string[]).includes(status)
	) {
		errors.add('status', `Select a valid choice. ${status} is not one of the available choices.`);
	}
	return listReply(
		req,
		app.store.parsings.values(),
		(p) => renderParsing(app, p, req.now),
		[
			readCreatedRange(req, errors),
			searchFilter(req, (p) => [
				app.store.documents.get(p.documentId)?.filename,
				...metadataValues(p.metadata),
			]),
			status && ((p) => statusLabel(jobState(p.job, req.now), 'IN_QUEUE') === status),
		],
		errors,
	);
}

/**
 * POST /v0/extract (§v0-4.8): `schema` plus exactly one of `parsing` / `document`.
 * From a document, a new parsing is created first (§v0-3) and the whole extract takes the
 * processing time: half for the parsing, half for the extract after it. From a parsing, the extract
 * takes the full processing time. The emulator's test controls in `metadata` also apply to the extract
 * itself (the reference applies `metadata` only to a new parsing).
 */
async function createExtract(app: AppContext, req: RequestContext): Promise<Reply> {
	const input = Input.from(await req.body.read(['json', 'multipart', 'form']));
	const errors = new ErrorBag();
	const schemaId = input.get('schema');
	const schema = isUuid(schemaId) ? app.store.snapshotSchema(schemaId) : undefined;
	if (isBlank(schemaId)) errors.add('schema', REQUIRED);
	else if (!isUuid(schemaId)) errors.add('schema', 'Must be a valid UUID.');
	else if (!schema) errors.add('schema', 'Unknown schema id.');

	const hasDocument = !isBlank(input.get('document'));
	const parsingId = input.get('parsing');
	const hasParsing = !isBlank(parsingId);
	let parsing: ParsingRecord | undefined;
	let document: DocumentInput | undefined;
	if (hasDocument && hasParsing)
		errors.add('non_field_errors', 'Provide either document or parsing, not both.');
	else if (!hasDocument && !hasParsing)
		errors.add('non_field_errors', 'One of document or parsing is required.');
	else if (hasParsing) {
		parsing = isUuid(parsingId) ? app.store.parsings.get(parsingId) : undefined;
		const status = parsing && jobState(parsing.job, req.now).outcome?.status;
		if (!isUuid(parsingId)) errors.add('parsing', 'Must be a valid UUID.');
		else if (!parsing) errors.add('parsing', 'Unknown parsing id.');
		else if (status !== 'FINISHED' && status !== 'PARTIAL_FINISHED')
			errors.add('parsing', 'Parsing is not finished.');
	} else {
		document = readDocumentInput(app, input, errors, false);
	}
	const opts = readParsingOptions(input, errors);
	errors.throwIfAny();

	let job: Job;
	if (document) {
		const [doc] = await resolveDocuments(app, req, document);
		// The hold is the extract's: its parsing runs on.
		parsing = createParsing(
			app,
			doc,
			{ ...opts, controls: { ...opts.controls, hold: undefined } },
			0.5,
		);
		job = newJob(app, doc.source, opts.controls, {
			allowPartial: false,
			share: 0.5,
			after: parsing.job,
		});
	} else {
		parsing = parsing as ParsingRecord;
		job = newJob(app, parsing.job.source, opts.controls, { allowPartial: false });
	}
	const extract = app.store.add<ExtractRecord>(app.store.extracts, {
		schema: schema as SchemaSnapshot,
		parsingId: parsing.id,
		job,
		createdAt: serviceCreatedAt(job),
	});
	return json(201, renderExtract(app, extract, app.clock()));
}

/** Routes of the v0 family. */
export function v0Routes(router: Router<RouteDef>): void {
	const route = routesOf(router, 'api-key');
	route('POST', '/v0/documents', uploadDocument);
	route('GET', '/v0/documents', listDocuments);
	// GET /v0/documents/{id} (§v0-4.3)
	route('GET', '/v0/documents/:id', async (app, _req, { id }) =>
		json(200, renderDocument(lookup(app.store.documents, id, 'Document'))),
	);
	route('GET', '/v0/documents/:id/download', (app, req, { id }) => downloadDocument(app, req, id));
	route('POST', '/v0/parsing', createParsings);
	route('GET', '/v0/parsing', listParsings);
	route('GET', '/v0/parsing/:id', async (app, req, { id }) =>
		json(200, renderParsing(app, readJob(app.store.parsings, id, 'Parsing', req.now), req.now)),
	);
	route('POST', '/v0/extract', createExtract);
	route('GET', '/v0/extract/:id', async (app, req, { id }) =>
		json(200, renderExtract(app, readJob(app.store.extracts, id, 'Extract', req.now), req.now)),
	);
	// A picture's image (§v0-2.2 `picture`: "relative path of the image"); same key as the API.
	route('GET', '/v0/media/pictures/:pictureId.png', async (app, _req, { pictureId }) => {
		if (!app.store.pictures.has(pictureId)) throw notFound();
		return PNG_REPLY;
	});
}
