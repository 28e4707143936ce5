/**
 * In-memory records of both families. Schemas live in one store: whether `/v0/extract` accepts
 * schemas made through the unversioned endpoints is "not shown" (§v0-2.5); the emulator does.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FileKind, PageContent } from './pdf';
import type { StoredFile } from './storage';

/** Servers of an extraction (§unversioned-2.1). */
export const SERVERS = ['EU-1', 'FR-1', 'FR-2', 'FR-3'] as const;
export type Server = (typeof SERVERS)[number];

/** A stored file plus what its analysis found. */
export interface FileRecord {
	name: string;
	file: StoredFile;
	kind: FileKind;
	pageCount: number;
	/** Set once the analysis is done. */
	pages?: PageContent[];
	analysisError?: string;
	/** Base clock when the analysis finished; a job cannot be final before that. */
	analyzedAt?: number;
}

export type FinalStatus = 'FINISHED' | 'PARTIAL_FINISHED' | 'ERROR';

/** Test controls from a create request's metadata (`emulator_*`, README: *Test controls*). */
export interface EmulatorControls {
	outcome?: FinalStatus;
	reason?: string;
	failFiles?: string[];
	processingMs?: number;
	/** true: held until `Emulator.releaseJobs`; n: released at its n-th read by id. */
	hold?: true | number;
	/** The whole error message of an ERROR outcome (seeded jobs: "Seeded failure"). */
	message?: string;
}

/** One asynchronous job (parsing, extract or extraction); its state derives from time (state.ts). */
export interface Job {
	/** Base clock at creation: the start of its timeline. */
	createdAt: number;
	/** Service clock minus base clock at creation: added to the job's times when shown. */
	shift: number;
	durationMs: number;
	source: FileRecord;
	controls: EmulatorControls;
	/** PARTIAL_FINISHED exists for parsings only (§v0-3). */
	allowPartial: boolean;
	/** A job that must be final before this one starts (the parsing of an extract made from a document). */
	after?: Job;
	held?: boolean;
	/** `emulator_hold: n`: reads by id still to come until the n-th releases the job. */
	readsLeft?: number;
	/** Base clock when a held job was released. */
	releasedAt?: number;
}

/** What every listed record has: a UUID, its creation sequence (lists are ordered by it), created_at. */
interface Stored {
	id: string;
	seq: number;
	/** Service clock, epoch ms. */
	createdAt: number;
}

export interface SchemaRecord extends Stored {
	name: string;
	description: string;
	additionalInformations: string | null;
	definition: Record<string, unknown> | null;
	completionMode: 'CLASSIC' | 'VANILLA';
	updatedAt: number;
}

/** A schema as it was when a job was created (later edits do not change the job). */
export type SchemaSnapshot = Readonly<SchemaRecord>;

export interface WorkflowRecord {
	id: string;
	name: string;
	schemaId: string | null;
	server: Server;
}

/** A v0 document; its filename is its file's name. */
export interface DocumentRecord extends Stored {
	source: FileRecord;
	metadata: Record<string, unknown>;
}

export interface ParsingRecord extends Stored {
	document: DocumentRecord;
	pictureDescriptionEnabled: boolean;
	tableVerificationEnabled: boolean;
	model: string;
	metadata: Record<string, unknown> | null;
	job: Job;
	/** One per page when picture_description_enabled. */
	pictureIds: string[];
}

export interface ExtractRecord extends Stored {
	schema: SchemaSnapshot;
	parsing: ParsingRecord;
	job: Job;
}

/** An unversioned extraction; its document_name is its file's name. */
export interface ExtractionRecord extends Stored {
	source: FileRecord;
	server: Server;
	schema: SchemaSnapshot | null;
	classifier: string | null;
	workflowId: string | null;
	workflowSessionId: number | null;
	metadata: Record<string, unknown> | null;
	job: Job;
	cost: number;
}

interface SeedFile {
	schemas?: Array<{
		id: string;
		name: string;
		description: string;
		additional_informations?: string | null;
		completion_mode?: 'CLASSIC' | 'VANILLA';
		schema: Record<string, unknown> | null;
	}>;
	workflows?: Array<{ id: string; name: string; schema: string | null; server: Server }>;
}

/** All records of one emulator instance. */
export class Store {
	readonly schemas = new Map<string, SchemaRecord>();
	readonly workflows = new Map<string, WorkflowRecord>();
	readonly documents = new Map<string, DocumentRecord>();
	readonly parsings = new Map<string, ParsingRecord>();
	readonly extracts = new Map<string, ExtractRecord>();
	readonly extractions = new Map<string, ExtractionRecord>();
	/** Picture id → parsing id (§v0-2.2). */
	readonly pictures = new Map<string, string>();
	/** Download signature → document id (§v0-4.4). */
	readonly signatures = new Map<string, string>();
	private seq = 0;
	private workflowSession = 0;
	/** Above `processingMs`: each job's time is drawn uniformly from [processingMs, processingMaxMs]. */
	public processingMaxMs?: number;

	constructor(
		public credits: number,
		public processingMs: number,
	) {}

	/** Processing time of a new job without a metadata override. */
	jobProcessingMs(): number {
		const max = this.processingMaxMs;
		if (max === undefined || max <= this.processingMs) return this.processingMs;
		return Math.round(this.processingMs + Math.random() * (max - this.processingMs));
	}

	/** Stores a record under `id` (default a fresh UUID) with the next sequence number (lists are ordered by it). */
	add<T extends { id: string; seq: number }>(
		map: Map<string, T>,
		fields: Omit<T, 'id' | 'seq'>,
		id: string = randomUUID(),
	): T {
		const record = { id, seq: ++this.seq, ...fields } as T;
		map.set(record.id, record);
		return record;
	}

	job(id: string): ParsingRecord | ExtractRecord | ExtractionRecord | undefined {
		return this.parsings.get(id) ?? this.extracts.get(id) ?? this.extractions.get(id);
	}

	/** A fresh `workflow_session_id` (§unversioned-4.10). */
	nextWorkflowSession(): number {
		return ++this.workflowSession;
	}

	/** Loads schemas and workflows; the schemas' dates are `now` (service clock). */
	loadSeed(file: string, now: number): void {
		const seed = JSON.parse(readFileSync(file, 'utf8')) as SeedFile;
		for (const s of seed.schemas ?? [])
			this.add<SchemaRecord>(
				this.schemas,
				{
					name: s.name,
					description: s.description,
					additionalInformations: s.additional_informations ?? null,
					definition: s.schema,
					completionMode: s.completion_mode ?? 'CLASSIC',
					createdAt: now,
					updatedAt: now,
				},
				s.id,
			);
		for (const w of seed.workflows ?? [])
			this.workflows.set(w.id, { id: w.id, name: w.name, schemaId: w.schema, server: w.server });
	}

	snapshotSchema(id: string): SchemaSnapshot | undefined {
		const s = this.schemas.get(id);
		return s && { ...s };
	}

	discardFiles(): void {
		for (const d of this.documents.values()) d.source.file.discard();
		for (const e of this.extractions.values()) e.source.file.discard();
	}
}
