/**
 * Bulk creation of records for scale tests and benchmarks (`Emulator.seedJobs`, `seedDocuments`,
 * `releaseJobs`): real records of each family — listed, read by id, filtered and (extractions)
 * deleted like uploaded ones — made without uploads or PDF work. Each has its own tiny one-page PDF,
 * already analysed (empty text), so a seeded job's state depends only on the clock (§v0-3,
 * §unversioned-3) or on its release.
 */
import type { AppContext } from './context';
import { newJob, serviceCreatedAt } from './ingest';
import type { PageContent } from './pdf';
import { makePdf } from './sample-pdf';
import { release, SEEDED_FAILURE } from './state';
import { StoredFile } from './storage';
import type {
	DocumentRecord,
	EmulatorControls,
	ExtractionRecord,
	FileRecord,
	FinalStatus,
	ParsingRecord,
} from './store';

/** Options of `Emulator.seedJobs`. */
export interface SeedJobOptions {
	/** The jobs stay unfinished (`IN_PROGRESS`) until `Emulator.releaseJobs`. Default false. */
	hold?: boolean;
	/** Final status (default FINISHED; ERROR gives the error text "Seeded failure"; PARTIAL_FINISHED: parsings only, else FINISHED). */
	outcome?: FinalStatus;
	/** ms from creation (base clock) to the final state when not held; default 0: final at once. */
	processingMs?: number;
	/** `metadata` of each parsing / extraction (default null, as a create request without it). */
	metadata?: Record<string, unknown>;
	/** File names are `${namePrefix}-${i}.pdf`, i from 0 (the index in the returned ids); default 'seed'. */
	namePrefix?: string;
}

/** Page size of the seeded PDFs (US Letter, PDF points). */
const PAGE = { width: 612, height: 792 };

/** The bytes every seeded file shares: one blank page. */
export const blankPdf = (): Promise<Buffer> =>
	makePdf([[]], { pageSize: [PAGE.width, PAGE.height] });

/** The analysed pages of every seeded file (one blank page; shared, never modified). */
const SEEDED_PAGES: PageContent[] = [{ text: '', ...PAGE }];

/** A seeded file: its own record (deleting one discards only its own), the shared bytes, analysed at `now` (base clock). */
function seededFile(app: AppContext, name: string, now?: number): FileRecord {
	return {
		name,
		file: StoredFile.fromBuffer(app.blankPdf),
		kind: 'pdf',
		pageCount: 1,
		pages: SEEDED_PAGES,
		analyzedAt: now,
	};
}

/**
 * Creates `n` parsings (each with its own document) or extractions at once; returns their ids, oldest
 * first. Each is created at the current clocks, read once per record (base clock for its timeline,
 * service clock for its `created_at`), and listed after every record made before it. Seeded
 * extractions report `credit_used` 1 once final but take nothing from the credit balance
 * (§unversioned-8.3 is about uploads; bulk seeds must not run out of credits).
 */
export function seedJobs(
	app: AppContext,
	kind: 'extraction' | 'parsing',
	n: number,
	options: SeedJobOptions = {},
): string[] {
	const count = wholeCount(n);
	const prefix = options.namePrefix ?? 'seed';
	const controls: EmulatorControls = {
		outcome: options.outcome ?? 'FINISHED',
		...(options.outcome === 'ERROR' ? { message: SEEDED_FAILURE } : {}),
		processingMs: Math.max(0, options.processingMs ?? 0),
		...(options.hold ? { hold: true } : {}),
	};
	const metadata = options.metadata ?? null;
	const { store } = app;
	const ids: string[] = [];
	for (let i = 0; i < count; i++) {
		// One clock reading per record (newJob's), as for uploads one after the other (a clock that ticks
		// on each reading gives each record its own created_at); the file is analysed at that moment.
		const name = `${prefix}-${i}.pdf`;
		const source = seededFile(app, name);
		const job = newJob(app, source, controls, { allowPartial: kind === 'parsing' });
		source.analyzedAt = job.createdAt;
		if (kind === 'extraction') {
			const record = store.add<ExtractionRecord>(store.extractions, {
				documentName: name,
				source,
				server: 'EU-1',
				schema: null,
				classifier: null,
				workflowId: null,
				workflowSessionId: null,
				metadata: metadata && { ...metadata },
				job,
				cost: 1,
				createdAt: serviceCreatedAt(job),
			});
			ids.push(record.id);
		} else {
			const doc = store.add<DocumentRecord>(store.documents, {
				filename: name,
				source,
				metadata: {},
				createdAt: serviceCreatedAt(job),
			});
			const parsing = store.add<ParsingRecord>(store.parsings, {
				documentId: doc.id,
				pictureDescriptionEnabled: false,
				tableVerificationEnabled: false,
				model: 'PIGALLE',
				metadata: metadata && { ...metadata },
				job,
				pictureIds: [],
				createdAt: serviceCreatedAt(job),
			});
			ids.push(parsing.id);
		}
	}
	return ids;
}

/** Creates `n` documents at once, as `POST /v0/documents` would (§v0-4.1), named `${namePrefix}-${i}.pdf` (i from 0); ids oldest first. */
export function seedDocuments(
	app: AppContext,
	n: number,
	options: { namePrefix?: string; metadata?: Record<string, unknown> } = {},
): string[] {
	const count = wholeCount(n);
	const prefix = options.namePrefix ?? 'seed';
	const ids: string[] = [];
	for (let i = 0; i < count; i++) {
		const { base, service } = app.readClocks();
		const name = `${prefix}-${i}.pdf`;
		const doc = app.store.add<DocumentRecord>(app.store.documents, {
			filename: name,
			source: seededFile(app, name, base),
			metadata: { ...(options.metadata ?? {}) },
			createdAt: service,
		});
		ids.push(doc.id);
	}
	return ids;
}

/**
 * Makes held jobs (seeded with `hold`, or created with `emulator_hold`) final now (base clock): those
 * of `ids` (parsing, extract or extraction ids), or all held ones when `ids` is omitted, with
 * `outcome` (default: the job's own). An id of a job that
 * is not held (any more) is left as it is; an id the emulator does not know throws.
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

function wholeCount(n: number): number {
	if (!Number.isInteger(n) || n < 0)
		throw new Error(`The number of records to seed must be a whole number ≥ 0, not ${n}`);
	return n;
}
