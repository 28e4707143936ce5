/**
 * The unversioned family (§unversioned of docs/service-api.md): extractions `/extract/`, schemas
 * `/schema/`, workflow uploads `/workflow/{id}/extract/`. The raw token in `Authorization`
 * (§unversioned-5); every path ends with `/` (§unversioned-1 rule 1).
 */
import path from 'node:path';
import JSZip from 'jszip';
import type { UploadedFile } from './body';
import { Input, readPageRange, REQUIRED, type ErrorAt, type PageRange } from './fields';
import { fileReply, PNG_REPLY, TINY_PNG } from './files';
import { fieldError, isoTimestamp, isUuid, json, lookup, notFound, queryValue } from './http';
import type { AppContext, Handler, Reply, RequestContext, Routes } from './http';
import { ingestFile, newJob, serviceCreatedAt } from './ingest';
import { listReply, metadataValues, searchFilter } from './listing';
import { sniffKind } from './pdf';
import { computeResult } from './schema-result';
import { jobState, processedPages, readJob, statusLabel, type JobState } from './state';
import { SERVERS } from './store';
import type { ExtractionRecord, FileRecord, Job, SchemaRecord, SchemaSnapshot } from './store';

const ACCEPTED_EXTENSIONS = ['.pdf', '.png', '.jpg', '.jpeg'];
const DOWNLOADS = ['csv', 'json', 'images'];

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
 * `extraction_step` (§unversioned-2.1; the order is "not shown", §unversioned-3): OCR →
 * (CLASSIFICATION with a classifier) → (PARSING → LOCATION with a schema), spread evenly over the
 * IN_PROGRESS time; CREATED reports the first step, a final extraction the last.
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
 * Extraction (§unversioned-2.1): `content` and `extracted_data` null until FINISHED (the latter
 * without a schema always); `credit_used` once final; `classifier_result` always null (classifiers
 * are not emulated); `error` as in the list item (§unversioned-2.2).
 */
function renderExtraction(e: ExtractionRecord, now: number): Record<string, unknown> {
	const state = jobState(e.job, now);
	const finished = state.outcome?.status === 'FINISHED';
	const texts = processedPages(e.job, state.outcome).map((p) => p.text);
	return {
		...extractionFields(e, state),
		content_images: pageImages(e),
		content: finished ? texts.join('\n\n') : null,
		extracted_data: finished && e.schema ? computeResult(e.schema.definition, texts) : null,
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

/** What an extraction (§unversioned-2.1) and its list item (§unversioned-2.2) both show. */
function extractionFields(e: ExtractionRecord, state: JobState): Record<string, unknown> {
	return {
		id: e.id,
		document_name: e.source.name,
		document_url: `/extract/${e.id}/document/`,
		workflow: e.workflowId,
		workflow_session_id: e.workflowSessionId,
		classifier: e.classifier,
		server: e.server,
		status: statusLabel(state, 'CREATED'),
		error: state.outcome?.error ?? null,
	};
}

/** A document upload: a non-empty file with an accepted extension AND PDF/PNG/JPEG bytes (§unversioned-4.2, §unversioned-8.1). */
async function readDocument(
	input: Input,
	field: string,
	at: ErrorAt = { field, prefix: '' },
): Promise<UploadedFile | undefined> {
	const upload = input.file(field, at);
	if (!upload) return undefined;
	if (
		ACCEPTED_EXTENSIONS.includes(path.extname(upload.filename).toLowerCase()) &&
		sniffKind(await upload.file.head(1024)) !== 'other'
	)
		return upload;
	const message = 'Unsupported file type. Accepted: .pdf, .png, .jpg, .jpeg';
	input.errors.add(at.field, at.prefix + message);
	return undefined;
}

/** What a create call decides for its extractions. */
type ExtractionSettings = Pick<
	ExtractionRecord,
	'server' | 'schema' | 'classifier' | 'workflowId' | 'workflowSessionId' | 'metadata'
>;

/** A new extraction of `source` whose job is `job`; it costs 1 credit a page. */
export function addExtraction(
	app: AppContext,
	source: FileRecord,
	settings: ExtractionSettings,
	job: Job,
): ExtractionRecord {
	return app.store.add<ExtractionRecord>(app.store.extractions, {
		source,
		...settings,
		job,
		cost: Math.max(1, source.pageCount),
		createdAt: serviceCreatedAt(job),
	});
}

/**
 * One extraction per upload, once `input`'s `metadata` is read and no field is invalid (else 400);
 * a workflow's share a fresh `workflow_session_id`. Credits (§unversioned-8.3, amount "not shown"): 1
 * a page of the stored document, taken at creation for all uploads at once; too few → 403 `credits`
 * and nothing is made. An ERROR extraction is not refunded.
 */
async function createExtractions(
	app: AppContext,
	req: RequestContext,
	input: Input,
	uploads: UploadedFile[],
	settings: Omit<ExtractionSettings, 'metadata' | 'workflowSessionId'> & { range: PageRange },
): Promise<Reply> {
	const metadata = input.metadata();
	const controls = input.controls(metadata);
	input.errors.throwIfAny();
	const { range, ...fields } = settings;
	const workflowSessionId = fields.workflowId === null ? null : app.store.nextWorkflowSession();
	const sources = [];
	for (const upload of uploads)
		sources.push(await ingestFile(app, upload.filename, upload.file, range));
	const cost = sources.reduce((sum, s) => sum + Math.max(1, s.pageCount), 0);
	const { store } = app;
	const shortfall = `Insufficient credits: ${cost} needed, ${store.credits} available.`;
	if (store.credits < cost) throw fieldError('credits', shortfall, 403);
	store.credits -= cost;
	const records = sources.map((source) => {
		req.body.retain(source.file);
		const job = newJob(app, source, controls, { allowPartial: false });
		return addExtraction(app, source, { ...fields, workflowSessionId, metadata }, job);
	});
	const now = app.clock();
	const rendered = records.map((r) => renderExtraction(r, now));
	// Several items (a workflow upload): "not shown"; an array.
	return json(201, rendered.length === 1 ? rendered[0] : rendered);
}

/** POST /extract/ (§unversioned-4.2). */
async function createExtraction(app: AppContext, req: RequestContext): Promise<Reply> {
	const input = Input.from(await req.body.read(['multipart']));
	const { errors } = input;
	const range = readPageRange(req.query, errors);
	const upload = await readDocument(input, 'document');
	const server = input.choice('server', SERVERS);
	const schemaId = input.optionalString('schema');
	const schema = isUuid(schemaId) ? app.store.snapshotSchema(schemaId) : undefined;
	if (schemaId !== null && !isUuid(schemaId)) errors.add('schema', 'Must be a valid UUID.');
	else if (schemaId !== null && !schema)
		errors.add('schema', `Invalid pk "${schemaId}" - object does not exist.`);
	const classifier = input.optionalString('classifier');
	return createExtractions(app, req, input, [upload as UploadedFile], {
		server: server as ExtractionRecord['server'],
		schema: schema ?? null,
		classifier,
		workflowId: null,
		range,
	});
}

/** GET /extract/ (§unversioned-4.1). `meta_key` + `meta_value` together: that key has that value. */
async function listExtractions(app: AppContext, req: RequestContext): Promise<Reply> {
	const workflowId = queryValue(req.query, 'workflow_id');
	const sessionRaw = queryValue(req.query, 'workflow_session_id');
	const metaKey = queryValue(req.query, 'meta_key');
	const metaValue = queryValue(req.query, 'meta_value');
	// The current schema object (null once deleted), §unversioned-2.2.
	const schemaOf = (e: ExtractionRecord) =>
		(e.schema && app.store.schemas.get(e.schema.id)) || null;
	const render = (e: ExtractionRecord) => {
		const schema = schemaOf(e);
		const fields = extractionFields(e, jobState(e.job, req.now));
		return { ...fields, schema: schema && renderSchema(schema) };
	};
	return listReply(req, app.store.extractions.values(), render, (errors) => {
		const session =
			sessionRaw && /^-?\d+$/.test(sessionRaw.trim()) ? Number(sessionRaw) : undefined;
		if (sessionRaw && session === undefined) errors.add('workflow_session_id', 'Enter a number.');
		return [
			searchFilter(req, (e) => [e.source.name, schemaOf(e)?.name]),
			workflowId && ((e) => e.workflowId === workflowId),
			session !== undefined && ((e) => e.workflowSessionId === session),
			metaKey && ((e) => metaKey in (e.metadata ?? {})),
			metaValue &&
				((e) => {
					const meta = e.metadata ?? {};
					const only = metaKey ? { [metaKey]: meta[metaKey] } : meta;
					return metadataValues(only).includes(metaValue);
				}),
		];
	});
}

/**
 * GET /extract/{id}/ (§unversioned-4.3): 202 until final (the condition is "not shown"), then 200.
 * `download` is only read when given (the reference's default "csv" would hide the resource); it
 * needs a schema and a FINISHED extraction, else 400.
 */
const retrieveExtraction: Handler = async (app, req, { id }) => {
	const e = readJob(app.store.extractions, id, 'Extraction', req.now);
	const resource = renderExtraction(e, req.now);
	const download = queryValue(req.query, 'download');
	const final = resource.status === 'FINISHED' || resource.status === 'ERROR';
	if (download === undefined) return json(final ? 200 : 202, resource);
	if (!DOWNLOADS.includes(download))
		throw fieldError('download', `"${download}" is not a valid choice.`);
	if (!e.schema)
		throw fieldError('download', 'This extraction has no schema: there is nothing to download.');
	if (resource.status !== 'FINISHED') throw fieldError('download', 'Extraction is not finished.');
	const base = path.parse(e.source.name).name || e.id;
	if (download === 'json')
		return fileReply(`${base}.json`, JSON.stringify(resource), 'application/json');
	if (download === 'csv') {
		const csv = toCsv(resource.extracted_data, schemaColumns(e.schema));
		return fileReply(`${base}.csv`, csv, 'text/csv');
	}
	const zip = new JSZip();
	for (const image of pageImages(e)) zip.file(image.name, TINY_PNG);
	const bytes = await zip.generateAsync({ type: 'nodebuffer' });
	return fileReply(`${base}-images.zip`, bytes, 'application/zip');
};

/** Property names of a schema (of its items for an array): the CSV header when there are no rows. */
function schemaColumns(schema: SchemaSnapshot): string[] {
	const def = schema.definition ?? {};
	const obj = def.type === 'array' ? (def.items as Record<string, unknown> | undefined) : def;
	const props = obj?.properties;
	return props && typeof props === 'object' ? Object.keys(props) : [];
}

/**
 * RFC 4180 CSV of `extracted_data`: the header is the union of the rows' keys in first-seen order,
 * one row per object; null → empty field, nested values as JSON.
 */
function toCsv(data: unknown, fallbackColumns: string[]): string {
	const rows = (Array.isArray(data) ? data : [data]).filter(
		(r): r is Record<string, unknown> => typeof r === 'object' && r !== null,
	);
	const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
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

/**
 * Body of POST / PUT /schema/ (§unversioned-4.6, §unversioned-4.8): `name`, `description` required
 * non-blank strings; `schema` required, a JSON object or null (in a form, a JSON string; blank is
 * null); `additional_informations` an optional string.
 */
function readSchemaFields(
	input: Input,
): Pick<SchemaRecord, 'name' | 'description' | 'additionalInformations' | 'definition'> {
	const { errors } = input;
	const requiredText = (name: string): string => {
		const value = input.get(name);
		if (value === undefined || value === null) errors.add(name, REQUIRED);
		else if (typeof value !== 'string') errors.add(name, 'Not a valid string.');
		else if (value.trim() === '') errors.add(name, 'This field may not be blank.');
		return typeof value === 'string' ? value : '';
	};
	const name = requiredText('name');
	const description = requiredText('description');
	const additionalInformations = input.optionalString('additional_informations');
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

/** `extracts[<index>]<field>`: DRF's form encoding of a list of nested objects (html.parse_html_list). */
const EXTRACTS_FIELD = /^extracts\[([0-9]+)\](.*)$/;

/**
 * POST /workflow/{id}/extract/ (§unversioned-4.10). The multipart encoding of `extracts` is "not
 * shown"; the emulator reads DRF's (`extracts[0]document`, …, in index order). Each item makes an
 * extraction with the workflow's schema and server; a top-level `metadata` (emulator extension)
 * applies to each.
 */
const workflowExtract: Handler = async (app, req, { id }) => {
	const workflow = lookup(app.store.workflows, id, 'Workflow');
	const input = Input.from(await req.body.read(['multipart']));
	const indices = new Set<number>();
	for (const name of input.formFieldNames()) {
		const m = EXTRACTS_FIELD.exec(name);
		if (m) indices.add(Number(m[1]));
	}
	if (indices.size === 0) input.errors.add('extracts', REQUIRED);
	const uploads: UploadedFile[] = [];
	for (const index of [...indices].sort((a, b) => a - b)) {
		const field = `extracts[${index}]document`;
		const upload = await readDocument(input, field, { field: 'extracts', prefix: `${field}: ` });
		if (upload) uploads.push(upload);
	}
	return createExtractions(app, req, input, uploads, {
		server: workflow.server,
		schema: workflow.schemaId ? (app.store.snapshotSchema(workflow.schemaId) ?? null) : null,
		classifier: null,
		workflowId: workflow.id,
		range: {},
	});
};

const lookupExtraction = (app: AppContext, id: string): ExtractionRecord =>
	lookup(app.store.extractions, id, 'Extraction');
const lookupSchema = (app: AppContext, id: string): SchemaRecord =>
	lookup(app.store.schemas, id, 'Schema');

/** The unversioned family's routes. */
export const unversionedRoutes: Routes = {
	'GET /extract/': listExtractions,
	'POST /extract/': createExtraction,
	'GET /extract/:id/': retrieveExtraction,
	// §unversioned-4.4: status and body "not shown" → 204 without body.
	'DELETE /extract/:id/': async (app, _req, { id }) => {
		const e = lookupExtraction(app, id);
		app.store.extractions.delete(e.id);
		e.source.file.discard();
		return { status: 204 };
	},
	// `document_url` (§unversioned-2.1).
	'GET /extract/:id/document/': async (app, _req, { id }) => {
		const e = lookupExtraction(app, id);
		return fileReply(e.source.name, e.source.file);
	},
	// `content_images[].url` (§unversioned-2.1).
	'GET /extract/:id/images/:name/': async (app, _req, { id, name }) => {
		if (!pageImages(lookupExtraction(app, id)).some((image) => image.name === name))
			throw notFound();
		return PNG_REPLY;
	},
	'GET /schema/': async (app, req) => listReply(req, app.store.schemas.values(), renderSchema),
	'POST /schema/': async (app, req) => {
		const fields = readSchemaFields(Input.from(await req.body.read(['json'])));
		const now = app.serviceNow();
		const record = app.store.add<SchemaRecord>(app.store.schemas, {
			...fields,
			completionMode: 'CLASSIC',
			createdAt: now,
			updatedAt: now,
		});
		return json(201, renderSchema(record));
	},
	'GET /schema/:id/': async (app, _req, { id }) => json(200, renderSchema(lookupSchema(app, id))),
	'PUT /schema/:id/': async (app, req, { id }) => {
		const record = lookupSchema(app, id);
		const body = await req.body.read(['json', 'form', 'multipart']);
		Object.assign(record, readSchemaFields(Input.from(body)), { updatedAt: app.serviceNow() });
		return json(200, renderSchema(record));
	},
	// §unversioned-4.9: status and body "not shown" → 204 without body.
	'DELETE /schema/:id/': async (app, _req, { id }) => {
		app.store.schemas.delete(lookupSchema(app, id).id);
		return { status: 204 };
	},
	'POST /workflow/:id/extract/': workflowExtract,
};
