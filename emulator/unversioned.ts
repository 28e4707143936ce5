/**
 * The unversioned family (§unversioned of docs/service-api.md): extractions `/extract/`, schemas `/schema/`, workflow
 * uploads `/workflow/{id}/extract/`. Authenticated with the raw token in `Authorization`
 * (§unversioned-5); every path ends with `/` (§unversioned-1 rule 1).
 */
import path from 'node:path';
import JSZip from 'jszip';
import type { UploadedFile } from './body';
import type { AppContext, RequestContext, RouteDef } from './context';
import { queryValue, routesOf } from './context';
import { attachment, fileReply, PNG_REPLY, TINY_PNG } from './files';
import {
	Input,
	readChoice,
	readControls,
	readFile,
	readMetadata,
	readOptionalString,
	readPageRange,
	REQUIRED,
	type PageRange,
} from './fields';
import {
	ErrorBag,
	fieldError,
	isoTimestamp,
	isUuid,
	json,
	lookup,
	notFound,
	Router,
	type Reply,
} from './http';
import { ingestFile, newJob, serviceCreatedAt } from './ingest';
import { listReply, searchFilter } from './listing';
import { sniffKind } from './pdf';
import { computeResult } from './schema-result';
import { jobState, processedPages, readJob, statusLabel, type JobState } from './state';
import {
	SERVERS,
	type EmulatorControls,
	type ExtractionRecord,
	type SchemaRecord,
	type SchemaSnapshot,
	type Server,
} from './store';

const ACCEPTED_EXTENSIONS = ['.pdf', '.png', '.jpg', '.jpeg'];
const UNSUPPORTED_TYPE = 'Unsupported file type. Accepted: .pdf, .png, .jpg, .jpeg';
const DOWNLOADS = ['csv', 'json', 'images'] as const;

// ---------------------------------------------------------------------------------------------------
// Rendering

/** Schema (§unversioned-2.3). */
function renderSchema(s: SchemaRecord): Record<string, unknown> {
	return {
		id: s.id,
		name: s.name,
		description: s.description,
		additional_informations: s.additionalInformations,
		schema: s.definition,
		created_at: isoTimestamp(s.createdAt),
		updated_at: isoTimestamp(s.updatedAt),
	};
}

/**
 * `extraction_step` (§unversioned-2.1). The order is "not shown" (§unversioned-3); the emulator walks
 * OCR → (CLASSIFICATION when a classifier is set) → (PARSING → LOCATION when a schema is set),
 * spreading the steps evenly over the IN_PROGRESS time. CREATED reports the first step, a final
 * extraction the last one.
 */
function stepOf(e: ExtractionRecord, state: JobState, now: number): string {
	const steps = [
		'OCR',
		...(e.classifier ? ['CLASSIFICATION'] : []),
		...(e.schema ? ['PARSING', 'LOCATION'] : []),
	];
	if (state.phase === 'queued') return steps[0];
	if (state.phase === 'final') return steps[steps.length - 1];
	const span = Math.max(1, state.plannedEnd - state.runningFrom);
	const progress = Math.min(0.999, Math.max(0, (now - state.runningFrom) / span));
	return steps[Math.floor(progress * steps.length)];
}

function pageImages(e: ExtractionRecord): Array<{ name: string; url: string }> {
	return Array.from({ length: Math.max(1, e.source.pageCount) }, (_, i) => ({
		name: `page-${i + 1}.png`,
		url: `/extract/${e.id}/images/page-${i + 1}.png/`,
	}));
}

/**
 * Extraction (§unversioned-2.1). `content` and `extracted_data` are null until FINISHED
 * (`extracted_data` stays null without a schema); `credit_used` is reported once final;
 * `classifier_result` is always null (classifiers are not emulated; their fields are "not shown",
 * §unversioned-2.3). `error` (not in the §unversioned-2.1 table) holds the failure message of an ERROR extraction, as in the
 * list item of §unversioned-2.2.
 */
function renderExtraction(e: ExtractionRecord, now: number): Record<string, unknown> {
	const state = jobState(e.job, now);
	const finished = state.outcome?.status === 'FINISHED';
	const pages = finished && state.outcome ? processedPages(e.job, state.outcome) : [];
	return {
		...extractionFields(e, state),
		content_images: pageImages(e),
		content: finished ? pages.map((p) => p.text).join('\n\n') : null,
		extracted_data:
			finished && e.schema
				? computeResult(
						e.schema.definition,
						pages.map((p) => p.text),
					)
				: null,
		schema: e.schema?.id ?? null,
		classifier_result: null,
		extraction_step: stepOf(e, state, now),
		extraction_time:
			state.finalAt === undefined ? null : Math.round(state.finalAt - e.job.createdAt) / 1000,
		credit_used: state.phase === 'final' ? e.cost : null,
		metadata: e.metadata,
		created_at: isoTimestamp(e.createdAt),
	};
}

/** Extraction list item (§unversioned-2.2); `schema` is the current schema object (null once deleted). */
function renderListItem(
	app: AppContext,
	e: ExtractionRecord,
	now: number,
): Record<string, unknown> {
	const schema = e.schema && app.store.schemas.get(e.schema.id);
	return {
		...extractionFields(e, jobState(e.job, now)),
		schema: schema ? renderSchema(schema) : null,
	};
}

/** What an extraction (§unversioned-2.1) and its list item (§unversioned-2.2) both show. */
function extractionFields(e: ExtractionRecord, state: JobState): Record<string, unknown> {
	return {
		id: e.id,
		document_name: e.documentName,
		document_url: `/extract/${e.id}/document/`,
		workflow: e.workflowId,
		workflow_session_id: e.workflowSessionId,
		classifier: e.classifier,
		server: e.server,
		status: statusLabel(state, 'CREATED'),
		error: state.outcome?.error ?? null,
	};
}

// ---------------------------------------------------------------------------------------------------
// Extraction creation (shared by POST /extract/ and POST /workflow/{id}/extract/)

/**
 * A document upload: present, not empty, with an accepted extension AND PDF/PNG/JPEG magic bytes
 * (§unversioned-4.2, §unversioned-8.1); else a 400 field error (under `errorField`, prefixed with `prefix`).
 */
async function readDocument(
	input: Input,
	field: string,
	errors: ErrorBag,
	errorField = field,
	prefix = '',
): Promise<UploadedFile | undefined> {
	const upload = readFile(input, field, errors, errorField, prefix);
	if (!upload) return undefined;
	if (
		ACCEPTED_EXTENSIONS.includes(path.extname(upload.filename).toLowerCase()) &&
		sniffKind(await upload.file.head(1024)) !== 'other'
	)
		return upload;
	errors.add(errorField, prefix + UNSUPPORTED_TYPE);
	return undefined;
}

/** What a create call decides for its extractions: the record's settings plus test controls and page range. */
type ExtractionSettings = Pick<
	ExtractionRecord,
	'server' | 'schema' | 'classifier' | 'workflowId' | 'workflowSessionId' | 'metadata'
> & {
	controls: EmulatorControls;
	range: PageRange;
};

/**
 * Creates one extraction per upload. Credits (§unversioned-8.3: consumed per extraction, amount
 * "not shown"): 1 credit per page of the stored (trimmed) document, taken from the balance at creation
 * for all uploads of the request at once; a balance below the cost → 403
 * `{"credits": ["Insufficient credits: <cost> needed, <balance> available."]}` and nothing is created.
 * Credits are not refunded when an extraction ends in ERROR.
 */
async function createExtractions(
	app: AppContext,
	req: RequestContext,
	uploads: UploadedFile[],
	settings: ExtractionSettings,
): Promise<ExtractionRecord[]> {
	const sources = [];
	for (const upload of uploads)
		sources.push(await ingestFile(app, upload.filename, upload.file, settings.range));
	const cost = sources.reduce((sum, s) => sum + Math.max(1, s.pageCount), 0);
	if (app.store.credits < cost) {
		throw fieldError(
			'credits',
			`Insufficient credits: ${cost} needed, ${app.store.credits} available.`,
			403,
		);
	}
	app.store.credits -= cost;
	return sources.map((source) => {
		req.body.retain(source.file);
		const job = newJob(app, source, settings.controls, { allowPartial: false });
		return app.store.add<ExtractionRecord>(app.store.extractions, {
			documentName: source.name,
			source,
			server: settings.server,
			schema: settings.schema,
			classifier: settings.classifier,
			workflowId: settings.workflowId,
			workflowSessionId: settings.workflowSessionId,
			metadata: settings.metadata,
			job,
			cost: Math.max(1, source.pageCount),
			createdAt: serviceCreatedAt(job),
		});
	});
}

/** POST /extract/ (§unversioned-4.2). */
async function createExtraction(app: AppContext, req: RequestContext): Promise<Reply> {
	const input = Input.from(await req.body.read(['multipart']));
	const errors = new ErrorBag();
	const range = readPageRange(req.query, errors);
	const upload = await readDocument(input, 'document', errors);
	const server = readChoice(input, 'server', SERVERS, errors);
	const schemaId = readOptionalString(input, 'schema', errors);
	let schema: SchemaSnapshot | null = null;
	if (schemaId !== null) {
		if (!isUuid(schemaId)) errors.add('schema', 'Must be a valid UUID.');
		else schema = app.store.snapshotSchema(schemaId) ?? null;
		if (isUuid(schemaId) && !schema)
			errors.add('schema', `Invalid pk "${schemaId}" - object does not exist.`);
	}
	const classifier = readOptionalString(input, 'classifier', errors);
	const metadata = readMetadata(input, errors);
	const controls = readControls(metadata, errors);
	errors.throwIfAny();
	const [record] = await createExtractions(app, req, [upload as UploadedFile], {
		server: server as Server,
		schema,
		classifier,
		workflowId: null,
		workflowSessionId: null,
		metadata,
		controls,
		range,
	});
	return json(201, renderExtraction(record, app.clock()));
}

/** GET /extract/ (§unversioned-4.1). `meta_key` + `meta_value` together match that key having that value. */
async function listExtractions(app: AppContext, req: RequestContext): Promise<Reply> {
	const errors = new ErrorBag();
	const workflowId = queryValue(req.query, 'workflow_id');
	const sessionRaw = queryValue(req.query, 'workflow_session_id');
	const metaKey = queryValue(req.query, 'meta_key');
	const metaValue = queryValue(req.query, 'meta_value');
	let session: number | undefined;
	if (sessionRaw !== undefined && sessionRaw !== '') {
		if (/^-?\d+$/.test(sessionRaw.trim())) session = Number(sessionRaw);
		else errors.add('workflow_session_id', 'Enter a number.');
	}
	const asText = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));
	return listReply(
		req,
		app.store.extractions.values(),
		(e) => renderListItem(app, e, req.now),
		[
			searchFilter(req, (e) => [
				e.documentName,
				e.schema && app.store.schemas.get(e.schema.id)?.name,
			]),
			workflowId && ((e) => e.workflowId === workflowId),
			session !== undefined && ((e) => e.workflowSessionId === session),
			metaKey && ((e) => metaKey in (e.metadata ?? {})),
			metaValue &&
				((e) => {
					const meta = e.metadata ?? {};
					const values = metaKey ? [meta[metaKey]] : Object.values(meta);
					return values.some((v) => v !== undefined && asText(v) === metaValue);
				}),
		],
		errors,
	);
}

function lookupExtraction(app: AppContext, id: string): ExtractionRecord {
	return lookup(app.store.extractions, id, 'Extraction');
}

/**
 * GET /extract/{id}/ (§unversioned-4.3). The condition for 202 is "not shown": 202 while the
 * extraction is not final (CREATED, IN_PROGRESS), 200 once FINISHED or ERROR.
 *
 * `download`: the reference says "when download is omitted, csv is selected", but this endpoint is
 * also the retrieve endpoint; the emulator returns the resource when the parameter is absent and a file
 * only when it is given. Downloads need a schema ("when the extraction has no schema, nothing is
 * downloaded" → 400) and a FINISHED extraction (else 400).
 */
async function retrieveExtraction(
	app: AppContext,
	req: RequestContext,
	id: string,
): Promise<Reply> {
	const e = readJob(app.store.extractions, id, 'Extraction', req.now);
	const resource = renderExtraction(e, req.now);
	const download = queryValue(req.query, 'download');
	if (download === undefined)
		return json(
			resource.status === 'FINISHED' || resource.status === 'ERROR' ? 200 : 202,
			resource,
		);
	if (!(DOWNLOADS as readonly string[]).includes(download))
		throw fieldError('download', `"${download}" is not a valid choice.`);
	if (!e.schema)
		throw fieldError('download', 'This extraction has no schema: there is nothing to download.');
	if (resource.status !== 'FINISHED') throw fieldError('download', 'Extraction is not finished.');
	const base = path.parse(e.documentName).name || e.id;
	if (download === 'json') {
		return {
			status: 200,
			body: JSON.stringify(resource),
			headers: {
				'content-type': 'application/json',
				'content-disposition': attachment(`${base}.json`),
			},
		};
	}
	if (download === 'csv') {
		return {
			status: 200,
			body: toCsv(resource.extracted_data, schemaColumns(e.schema)),
			headers: { 'content-type': 'text/csv', 'content-disposition': attachment(`${base}.csv`) },
		};
	}
	const zip = new JSZip();
	for (const image of pageImages(e)) zip.file(image.name, TINY_PNG);
	const body = await zip.generateAsync({ type: 'nodebuffer' });
	return {
		status: 200,
		body,
		headers: {
			'content-type': 'application/zip',
			'content-disposition': attachment(`${base}-images.zip`),
		},
	};
}

/** Property names of a schema (of its items for an array schema): the CSV header when there are no rows. */
function schemaColumns(schema: SchemaSnapshot): string[] {
	const def = schema.definition ?? {};
	const obj = def.type === 'array' ? (def.items as Record<string, unknown> | undefined) : def;
	const props = obj?.properties;
	return props && typeof props === 'object' ? Object.keys(props) : [];
}

/**
 * CSV of `extracted_data` (RFC 4180: CRLF line ends, fields with `,` `"` CR or LF quoted, quotes
 * doubled): header = the keys of the object (the union of the keys of the items, in first-seen order,
 * for an array), one row per object; null → empty field, nested values as JSON.
 */
export function toCsv(data: unknown, fallbackColumns: string[]): string {
	const rows = (Array.isArray(data) ? data : [data]).filter(
		(r): r is Record<string, unknown> => typeof r === 'object' && r !== null,
	);
	const columns: string[] = [];
	for (const row of rows)
		for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
	if (columns.length === 0) columns.push(...fallbackColumns);
	const cell = (v: unknown): string => {
		const text =
			v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
		return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
	};
	return [columns.map(cell), ...rows.map((row) => columns.map((c) => cell(row[c])))]
		.map((r) => `${r.join(',')}\r\n`)
		.join('');
}

// ---------------------------------------------------------------------------------------------------
// Schemas (§unversioned-4.5–§unversioned-4.9)

function lookupSchema(app: AppContext, id: string): SchemaRecord {
	return lookup(app.store.schemas, id, 'Schema');
}

/** The fields of a schema that a create or update sets. */
type SchemaFields = Pick<
	SchemaRecord,
	'name' | 'description' | 'additionalInformations' | 'definition'
>;

/**
 * Body of POST / PUT /schema/ (§unversioned-4.6, §unversioned-4.8): `name`, `description` required non-blank
 * strings; `schema` key required, a JSON object or null (in form encodings, a JSON string; '' or
 * "null" is null); `additional_informations` optional string or null.
 */
function readSchemaFields(input: Input): SchemaFields {
	const errors = new ErrorBag();
	const requiredText = (name: string): string => {
		const value = input.get(name);
		if (value === undefined || value === null) errors.add(name, REQUIRED);
		else if (typeof value !== 'string') errors.add(name, 'Not a valid string.');
		else if (value.trim() === '') errors.add(name, 'This field may not be blank.');
		return typeof value === 'string' ? value : '';
	};
	const name = requiredText('name');
	const description = requiredText('description');
	const additionalInformations = readOptionalString(input, 'additional_informations', errors);
	let definition: unknown = input.get('schema');
	if (!input.has('schema')) errors.add('schema', REQUIRED);
	else if (input.source === 'form') {
		try {
			definition =
				typeof definition === 'string' && definition.trim() !== '' ? JSON.parse(definition) : null;
		} catch {
			definition = undefined;
		}
	}
	const isObject = typeof definition === 'object' && !Array.isArray(definition);
	if (input.has('schema') && !isObject) errors.add('schema', 'Must be a JSON object or null.');
	errors.throwIfAny();
	return {
		name,
		description,
		additionalInformations,
		definition: definition as Record<string, unknown> | null,
	};
}

async function createSchema(app: AppContext, req: RequestContext): Promise<Reply> {
	const fields = readSchemaFields(Input.from(await req.body.read(['json'])));
	const now = app.serviceNow();
	const record = app.store.add<SchemaRecord>(app.store.schemas, {
		...fields,
		completionMode: 'CLASSIC',
		createdAt: now,
		updatedAt: now,
	});
	return json(201, renderSchema(record));
}

async function updateSchema(app: AppContext, req: RequestContext, id: string): Promise<Reply> {
	const record = lookupSchema(app, id);
	const fields = readSchemaFields(Input.from(await req.body.read(['json', 'form', 'multipart'])));
	Object.assign(record, fields, { updatedAt: app.serviceNow() });
	return json(200, renderSchema(record));
}

// ---------------------------------------------------------------------------------------------------
// Workflow uploads (§unversioned-4.10)

/** `extracts[<index>]<field>`: the form encoding Django REST framework reads for a list of nested objects (html.parse_html_list). */
const EXTRACTS_FIELD = /^extracts\[([0-9]+)\](.*)$/;

/**
 * POST /workflow/{id}/extract/. The multipart encoding of the `extracts` array is "not shown"; the
 * emulator reads DRF's: `extracts[0]document`, `extracts[1]document`, … (items ordered by index).
 * Each item creates an extraction with the workflow's schema and server, sharing a fresh
 * `workflow_session_id`. The response for several items is "not shown": one item → one Extraction
 * object (as documented), several → an array of Extractions. An optional top-level `metadata` field
 * (emulator extension) applies to every extraction.
 */
async function workflowExtract(app: AppContext, req: RequestContext, id: string): Promise<Reply> {
	const workflow = lookup(app.store.workflows, id, 'Workflow');
	const input = Input.from(await req.body.read(['multipart']));
	const errors = new ErrorBag();
	const indices = new Set<number>();
	for (const name of input.formFieldNames()) {
		const m = EXTRACTS_FIELD.exec(name);
		if (m) indices.add(Number(m[1]));
	}
	if (indices.size === 0) errors.add('extracts', REQUIRED);
	const uploads: UploadedFile[] = [];
	for (const index of [...indices].sort((a, b) => a - b)) {
		const field = `extracts[${index}]document`;
		const upload = await readDocument(input, field, errors, 'extracts', `${field}: `);
		if (upload) uploads.push(upload);
	}
	const metadata = readMetadata(input, errors);
	const controls = readControls(metadata, errors);
	errors.throwIfAny();
	const records = await createExtractions(app, req, uploads, {
		server: workflow.server,
		schema: workflow.schemaId ? (app.store.snapshotSchema(workflow.schemaId) ?? null) : null,
		classifier: null,
		workflowId: workflow.id,
		workflowSessionId: app.store.nextWorkflowSession(),
		metadata,
		controls,
		range: {},
	});
	const now = app.clock();
	const rendered = records.map((r) => renderExtraction(r, now));
	return json(201, rendered.length === 1 ? rendered[0] : rendered);
}

// ---------------------------------------------------------------------------------------------------

/** Routes of the unversioned family. */
export function unversionedRoutes(router: Router<RouteDef>): void {
	const route = routesOf(router, 'token');
	route('GET', '/extract/', listExtractions);
	route('POST', '/extract/', createExtraction);
	route('GET', '/extract/:id/', (app, req, { id }) => retrieveExtraction(app, req, id));
	// DELETE /extract/{id}/ (§unversioned-4.4): status and body "not shown" → 204 without body; unknown id → 404.
	route('DELETE', '/extract/:id/', async (app, _req, { id }) => {
		const e = lookupExtraction(app, id);
		app.store.extractions.delete(e.id);
		e.source.file.discard();
		return { status: 204 };
	});
	// The document of an extraction (§unversioned-2.1 `document_url`).
	route('GET', '/extract/:id/document/', async (app, _req, { id }) => {
		const e = lookupExtraction(app, id);
		return fileReply(e.documentName, e.source.file);
	});
	// A page image (§unversioned-2.1 `content_images[].url`).
	route('GET', '/extract/:id/images/:name/', async (app, _req, { id, name }) => {
		const e = lookupExtraction(app, id);
		if (!pageImages(e).some((image) => image.name === name)) throw notFound();
		return PNG_REPLY;
	});
	route('GET', '/schema/', async (app, req) =>
		listReply(req, app.store.schemas.values(), renderSchema),
	);
	route('POST', '/schema/', createSchema);
	route('GET', '/schema/:id/', async (app, _req, { id }) =>
		json(200, renderSchema(lookupSchema(app, id))),
	);
	route('PUT', '/schema/:id/', (app, req, { id }) => updateSchema(app, req, id));
	// DELETE /schema/{id}/ (§unversioned-4.9): status and body "not shown" → 204 without body.
	route('DELETE', '/schema/:id/', async (app, _req, { id }) => {
		app.store.schemas.delete(lookupSchema(app, id).id);
		return { status: 204 };
	});
	route('POST', '/workflow/:id/extract/', (app, req, { id }) => workflowExtract(app, req, id));
}
