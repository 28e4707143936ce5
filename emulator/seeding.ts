/**
 * Bulk records for scale tests and benchmarks (`Emulator.seedJobs`, `seedDocuments`, `releaseJobs`):
 * real records of each family made without uploads or PDF work. Each has its own record of one shared
 * blank page, already analysed, so a seeded job's state depends only on the clock or its release.
 */
import { type AppContext } from './http';
import { newJob, serviceCreatedAt } from './ingest';
import { makePdf } from './sample-pdf';
import { release, SEEDED_FAILURE } from './state';
import { StoredFile } from './storage';
import type { EmulatorControls, FileRecord, FinalStatus } from './store';
import { addExtraction } from './unversioned';
import { addDocument, addParsing } from './v0';

/** Options of `Emulator.seedJobs`. */
export interface SeedJobOptions {
	/** The jobs stay IN_PROGRESS until `Emulator.releaseJobs`. Default false. */
	hold?: boolean;
	/** Default FINISHED; ERROR gives "Seeded failure"; PARTIAL_FINISHED for parsings only. */
	outcome?: FinalStatus;
	/** ms from creation to the final state when not held; default 0. */
	processingMs?: number;
	/** `metadata` of each parsing / extraction; default null. */
	metadata?: Record<string, unknown>;
	/** File names are `${namePrefix}-${i}.pdf`, i from 0; default 'seed'. */
	namePrefix?: string;
}

/** Page size of the seeded PDFs (US Letter, PDF points). */
const PAGE = { width: 612, height: 792 };

/** The bytes every seeded file shares: one blank page. */
export const blankPdf = (): Promise<Buffer> =>
	makePdf([[]], { pageSize: [PAGE.width, PAGE.height] });

/** The analysed pages of every seeded file (shared, never modified). */
const SEEDED_PAGES = [{ text: '', ...PAGE }];

function seededFile(app: AppContext, name: string, analyzedAt?: number): FileRecord {
	const file = StoredFile.fromBuffer(app.blankPdf);
	return { name, file, kind: 'pdf', pageCount: 1, pages: SEEDED_PAGES, analyzedAt };
}

/**
 * Creates `n` parsings (each with its own document) or extractions; ids oldest first. Each reads the
 * clocks once, as uploads one after the other would. Seeded extractions report `credit_used` 1 but
 * take nothing from the balance (bulk seeds must not run out of credits).
 */
export function seedJobs(
	app: AppContext,
	kind: 'extraction' | 'parsing',
	n: number,
	options: SeedJobOptions = {},
): string[] {
	const controls: EmulatorControls = {
		outcome: options.outcome ?? 'FINISHED',
		...(options.outcome === 'ERROR' ? { message: SEEDED_FAILURE } : {}),
		processingMs: Math.max(0, options.processingMs ?? 0),
		...(options.hold ? { hold: true } : {}),
	};
	const metadata = options.metadata ?? null;
	return names(n, options.namePrefix).map((name) => {
		const source = seededFile(app, name);
		const job = newJob(app, source, controls, { allowPartial: kind === 'parsing' });
		source.analyzedAt = job.createdAt;
		const own = metadata && { ...metadata };
		if (kind === 'extraction') {
			const settings = {
				server: 'EU-1',
				schema: null,
				classifier: null,
				workflowId: null,
				workflowSessionId: null,
				metadata: own,
			} as const;
			return addExtraction(app, source, settings, job).id;
		}
		const doc = addDocument(app, source, {}, undefined, serviceCreatedAt(job));
		const parsing = {
			pictureDescriptionEnabled: false,
			tableVerificationEnabled: false,
			model: 'PIGALLE',
			metadata: own,
		};
		return addParsing(app, doc, parsing, job).id;
	});
}

/** Creates `n` documents, as `POST /v0/documents` would (§v0-4.1); ids oldest first. */
export function seedDocuments(
	app: AppContext,
	n: number,
	options: { namePrefix?: string; metadata?: Record<string, unknown> } = {},
): string[] {
	return names(n, options.namePrefix).map((name) => {
		const { base, service } = app.readClocks();
		const metadata = { ...(options.metadata ?? {}) };
		return addDocument(app, seededFile(app, name, base), metadata, undefined, service).id;
	});
}

/**
 * Makes held jobs final now: those of `ids` (parsing, extract or extraction ids; throws for an
 * unknown one), or all, with `outcome` (default: the job's own). A job not held is left as it is.
 */
export function releaseJobs(app: AppContext, ids?: string[], outcome?: FinalStatus): void {
	const { parsings, extracts, extractions } = app.store;
	const jobs = ids
		? ids.map((id) => {
				const job = app.store.job(id)?.job;
				if (!job) throw new Error(`The emulator has no parsing, extract or extraction ${id}`);
				return job;
			})
		: [...parsings.values(), ...extracts.values(), ...extractions.values()].map((r) => r.job);
	const now = app.clock();
	for (const job of jobs) release(job, now, outcome);
}

/** `${prefix}-${i}.pdf` for i from 0 to n - 1. */
function names(n: number, prefix = 'seed'): string[] {
	if (!Number.isInteger(n) || n < 0)
		throw new Error(`The number of records to seed must be a whole number ≥ 0, not ${n}`);
	return Array.from({ length: n }, (_, i) => `${prefix}-${i}.pdf`);
}
