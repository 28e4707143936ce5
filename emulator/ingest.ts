/**
 * Turning an upload (or a fetched URL) into a {@link FileRecord}, and creating jobs. Shared by
 * `POST /v0/documents`, `/v0/parsing`, `/v0/extract` (§v0-4.1, §v0-4.5, §v0-4.8) and
 * `POST /extract/`, `/workflow/{id}/extract/` (§unversioned-4.2, §unversioned-4.10).
 */
import { Readable } from 'node:stream';
import { isIP } from 'node:net';
import type { AppContext } from './context';
import { checkPageRange, type PageRange } from './fields';
import { ErrorBag, fieldError } from './http';
import { countPdfPages, imageSize, sniffKind, trimPdf, type PageContent } from './pdf';
import { SPILL_BYTES, storeBuffer, storeStream, type StoredFile } from './storage';
import type { EmulatorControls, FileRecord, Job } from './store';

/**
 * Analyses a file: type by magic bytes, page count, optional trimming to a page range (PDF only, as
 * §v0-4.1 and §unversioned-4.2 say), then page text in the background.
 *
 * PDFs larger than 32 MB ({@link SPILL_BYTES}) skip the pdfjs text extraction (their pages have empty
 * text) so that a 200 MB upload is not loaded into memory; their page count comes from pdf-lib when
 * the file fits in memory, else from a streaming scan (see countPdfPages). Trimming such a file loads
 * it into memory (only when a page range is requested).
 *
 * Throws 400 with `pdf_page_start` / `pdf_page_end` errors when the range exceeds the page count.
 */
export async function ingestFile(
	app: AppContext,
	name: string,
	stored: StoredFile,
	range: PageRange,
): Promise<FileRecord> {
	const kind = sniffKind(await stored.head(1024));
	let file = stored;
	let pageCount = kind === 'pdf' ? await countPdfPages(file) : kind === 'other' ? 0 : 1;
	if (kind === 'pdf') {
		const errors = new ErrorBag();
		const trim = checkPageRange(range, pageCount, errors);
		errors.throwIfAny();
		if (trim && (trim.start > 1 || trim.end < pageCount)) {
			file = await storeBuffer(await trimPdf(stored.readAll(), trim.start, trim.end), app.tempDir);
			stored.discard();
			pageCount = trim.end - trim.start + 1;
		}
	}
	const record: FileRecord = { name, file, kind, pageCount };
	if (kind === 'pdf' && file.size <= SPILL_BYTES) {
		app.pdf.extract(file.readAll()).then(
			(pages) => finishAnalysis(app, record, pages),
			(err: unknown) =>
				finishAnalysis(app, record, undefined, err instanceof Error ? err.message : String(err)),
		);
	} else if (kind === 'pdf') {
		finishAnalysis(
			app,
			record,
			Array.from({ length: pageCount }, () => ({ text: '', width: null, height: null })),
		);
	} else if (kind === 'png' || kind === 'jpeg') {
		finishAnalysis(app, record, [{ text: '', ...imageSize(await file.head(64 * 1024), kind) }]);
	} else {
		finishAnalysis(app, record, []);
	}
	return record;
}

/** Records the analysis result; `analyzedAt` is the base clock (epoch ms) at that moment. */
function finishAnalysis(
	app: AppContext,
	record: FileRecord,
	pages: PageContent[] | undefined,
	error?: string,
): void {
	record.pages = pages ?? [];
	record.analysisError = error;
	record.analyzedAt = app.clock();
}

/**
 * Creates a job that starts now (base clock, `AppContext.clock`; its `shift` is the service clock's
 * offset at this moment, so `createdAt + shift` is the service's `created_at`); its processing time is
 * the metadata override, else the emulator's setting (a draw when a range is set).
 */
export function newJob(
	app: AppContext,
	source: FileRecord,
	controls: EmulatorControls,
	opts: { allowPartial: boolean; share?: number; after?: Job },
): Job {
	const total = controls.processingMs ?? app.store.jobProcessingMs();
	const own = controls.failFiles?.includes(source.name)
		? { ...controls, outcome: 'ERROR' as const }
		: controls;
	const { base, service } = app.readClocks();
	return {
		createdAt: base,
		shift: service - base,
		durationMs: total * (opts.share ?? 1),
		source,
		controls: own,
		allowPartial: opts.allowPartial,
		after: opts.after,
		held: own.hold !== undefined,
		readsLeft: typeof own.hold === 'number' ? own.hold : undefined,
	};
}

/** The `created_at` (epoch ms, service clock) of a record whose job is `job`. */
export function serviceCreatedAt(job: Job): number {
	return job.createdAt + job.shift;
}

/** http(s) URL check for the `document` field (§v0-4.5: "public or pre-signed URL"). */
export function isHttpUrl(value: string): boolean {
	if (!/^https?:\/\//i.test(value)) return false;
	try {
		new URL(value);
		return true;
	} catch {
		return false;
	}
}

/** The emulator never leaves the machine: only loopback hosts may be fetched. */
function isLoopback(hostname: string): boolean {
	const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
	if (host === 'localhost' || host.endsWith('.localhost')) return true;
	if (isIP(host) === 4) return host.startsWith('127.');
	return host === '::1' || host === '0:0:0:0:0:0:0:1';
}

const MAX_REDIRECTS = 5;

/**
 * Downloads a URL input (§v0-4.5 / §v0-4.8). Only loopback hosts are fetched (redirects are
 * followed by hand so that they cannot leave loopback either); any failure, including a non-2xx answer,
 * → 400 `{"document": ["URL could not be fetched."]}`. The file name is the URL's last path segment.
 */
export async function fetchUrl(
	app: AppContext,
	url: string,
): Promise<{ name: string; file: StoredFile }> {
	const failure = fieldError('document', 'URL could not be fetched.');
	let current = new URL(url);
	for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
		if (!isLoopback(current.hostname) || !/^https?:$/.test(current.protocol)) throw failure;
		let res: Response;
		try {
			res = await fetch(current, { redirect: 'manual', signal: AbortSignal.timeout(30_000) });
		} catch {
			throw failure;
		}
		const location = res.headers.get('location');
		if (res.status >= 300 && res.status < 400 && location) {
			await res.body?.cancel();
			current = new URL(location, current);
			continue;
		}
		if (!res.ok || !res.body) {
			await res.body?.cancel();
			throw failure;
		}
		try {
			const file = await storeStream(
				Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>),
				app.tempDir,
				app.maxUploadBytes,
			);
			return { name: lastSegment(current), file };
		} catch {
			throw failure;
		}
	}
	throw failure;
}

function lastSegment(url: URL): string {
	const segment = url.pathname.split('/').filter(Boolean).pop() ?? '';
	try {
		return decodeURIComponent(segment) || 'document';
	} catch {
		return segment || 'document';
	}
}
