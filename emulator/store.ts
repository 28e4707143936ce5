/**
 * In-memory records of both API families. Schemas live in ONE store shared by the two families:
 * whether schemas created through the unversioned endpoints are accepted by `/v0/extract` is
 * "not shown" (§v0-2.5); the emulator accepts them.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FileKind, PageContent } from './pdf';
import type { StoredFile } from './storage';

/** Servers of an extraction (§unversioned-2.1). */
export const SERVERS = ['EU-1', 'FR-1', 'FR-2', 'FR-3'] as const;
export type Server = (typeof SERVERS)[number];

/** A stored file plus what the analysis found in it. Shared by v0 documents and unversioned extractions. */
export interface FileRecord {
	name: string;
	file: StoredFile;
	kind: FileKind;
	pageCount: number;
	/** Set once the analysis is done (text extraction for PDFs; immediately for other files). */
	pages?: PageContent[];
	analysisError?: string;
	/** Base clock (`AppContext.clock`, epoch ms) when the analysis finished; a job cannot be final before that. */
	analyzedAt?: number;
}

export type FinalStatus = 'FINISHED' | 'PARTIAL_FINISHED' | 'ERROR';

/** Test controls read from the create request's metadata (`emulator_outcome`, `emulator_processing_ms`, `emulator_error`, `emulator_fail_files`, `emulator_hold`). */
export interface EmulatorControls {
	outcome?: FinalStatus;
	reason?: string;
	/** File names whose jobs end ERROR whatever `outcome` says (one failing attachment among several). */
	failFiles?: string[];
	processingMs?: number;
	/** `emulator_hold`: true holds the job until `Emulator.releaseJobs`; a whole number n releases it at its n-th read by id. */
	hold?: true | number;
	/** The whole error message of an ERROR outcome, instead of "Emulated processing failure: <reason>" (seeded jobs: "Seeded failure"). */
	message?: string;
}

/** One asynchronous job (a parsing, an extract or an extraction); its state is derived from time (see state.ts). */
export interface Job {
	/** Base clock (`AppContext.clock`, epoch ms) when the job was created: the start of its timeline. */
	createdAt: number;
	/**
	 * The service's clock minus the base clock when the job was created (ms; the clock offset of
	 * `Emulator.setClockOffset`): added to the job's times when they are shown (`updated_at`), so that
	 * they read on the same clock as the record's `created_at`.
	 */
	shift: number;
	durationMs: number;
	source: FileRecord;
	controls: EmulatorControls;
	/** PARTIAL_FINISHED exists for parsings only (§v0-3). */
	allowPartial: boolean;
	/** A job that must be final before this one starts (the parsing of an extract created from a document). */
	after?: Job;
	/** Seeded with `hold` (`Emulator.seedJobs`) or created with `emulator_hold`: `IN_PROGRESS` until released (`Emulator.releaseJobs`, or its reads by id). */
	held?: boolean;
	/** `emulator_hold: n`: the reads by id still to come until the n-th releases the job. */
	readsLeft?: number;
	/** Base clock (epoch ms) when a held job was released: final from then on. */
	releasedAt?: number;
}

export interface SchemaRecord {
	id: string;
	seq: number;
	name: string;
	description: string;
	additionalInformations: string | null;
	definition: Record<string, unknown> | null;
	completionMode: 'CLASSIC' | 'VANILLA';
	createdAt: number;
	updatedAt: number;
}

export interface WorkflowRecord {
	id: string;
	name: string;
	schemaId: string | null;
	server: Server;
}

export interface DocumentRecord {
	id: string;
	seq: number;
	filename: string;
	source: FileRecord;
	metadata: Record<string, unknown>;
	createdAt: number;
}

export interface ParsingRecord {
	id: string;
	seq: number;
	documentId: string;
	pictureDescriptionEnabled: boolean;
	tableVerificationEnabled: boolean;
	model: string;
	metadata: Record<string, unknown> | null;
	job: Job;
	/** Ids of the pictures the parsing reports once final (one per page when picture_description_enabled). */
	pictureIds: string[];
	createdAt: number;
}

/** The schema as it was when an extract or extraction was created (later edits do not change a job). */
export interface SchemaSnapshot {
	id: string;
	name: string;
	description: string;
	completionMode: 'CLASSIC' | 'VANILLA';
	definition: Record<string, unknown> | null;
}

export interface ExtractRecord {
	id: string;
	seq: number;
	schema: SchemaSnapshot;
	parsingId: string;
	job: Job;
	createdAt: number;
}

export interface ExtractionRecord {
	id: string;
	seq: number;
	documentName: string;
	source: FileRecord;
	server: Server;
	schema: SchemaSnapshot | null;
	classifier: string | null;
	workflowId: string | null;
	workflowSessionId: number | null;
	metadata: Record<string, unknown> | null;
	job: Job;
	cost: number;
	createdAt: number;
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

	/**
	 * When set above `processingMs`, each job's processing time is drawn uniformly from
	 * [processingMs, processingMaxMs] (so that jobs of a load overlap and finish out of order).
	 */
	public processingMaxMs?: number;

	constructor(
		public credits: number,
		public processingMs: number,
	) {}

	/** Processing time of a new job without a metadata override: `processingMs`, or a draw up to `processingMaxMs`. */
	jobProcessingMs(): number {
		const max = this.processingMaxMs;
		if (max === undefined || max <= this.processingMs) return this.processingMs;
		return Math.round(this.processingMs + Math.random() * (max - this.processingMs));
	}

	/** Stores a new record under a fresh UUID with the next creation sequence number (lists are ordered by it). */
	add<T extends { id: string; seq: number }>(
		map: Map<string, T>,
		fields: Omit<T, 'id' | 'seq'>,
	): T {
		const record = { id: randomUUID(), seq: ++this.seq, ...fields } as T;
		map.set(record.id, record);
		return record;
	}

	/** The parsing, extract or extraction `id`, whatever its family. */
	job(id: string): ParsingRecord | ExtractRecord | ExtractionRecord | undefined {
		return this.parsings.get(id) ?? this.extracts.get(id) ?? this.extractions.get(id);
	}

	/** A fresh `workflow_session_id` (§unversioned-4.10). */
	nextWorkflowSession(): number {
		return ++this.workflowSession;
	}

	/** Loads schemas and workflows from the seed JSON file; the schemas' created_at / updated_at are `now` (epoch ms, the service's clock). */
	loadSeed(file: string, now: number): void {
		const seed = JSON.parse(readFileSync(file, 'utf8')) as SeedFile;
		for (const s of seed.schemas ?? []) {
			this.schemas.set(s.id, {
				id: s.id,
				seq: ++this.seq,
				name: s.name,
				description: s.description,
				additionalInformations: s.additional_informations ?? null,
				definition: s.schema,
				completionMode: s.completion_mode ?? 'CLASSIC',
				createdAt: now,
				updatedAt: now,
			});
		}
		for (const w of seed.workflows ?? []) {
			this.workflows.set(w.id, { id: w.id, name: w.name, schemaId: w.schema, server: w.server });
		}
	}

	snapshotSchema(id: string): SchemaSnapshot | undefined {
		const s = this.schemas.get(id);
		return (
			s && {
				id: s.id,
				name: s.name,
				description: s.description,
				completionMode: s.completionMode,
				definition: s.definition,
			}
		);
	}

	/** Releases every stored file. */
	discardFiles(): void {
		for (const d of this.documents.values()) d.source.file.discard();
		for (const e of this.extractions.values()) e.source.file.discard();
	}
}
