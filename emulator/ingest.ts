/**
 * An upload or a fetched URL turned into a {@link FileRecord}, and new jobs; for the create
 * endpoints of both families (§v0-4.1, §v0-4.5, §v0-4.8, §unversioned-4.2, §unversioned-4.10).
 */
import { Readable } from 'node:stream';
import { isIP } from 'node:net';
import { checkPageRange, type PageRange } from './fields';
import { ErrorBag, fieldError, type AppContext } from './http';
import { countPdfPages, imageSize, sniffKind, trimPdf, type PageContent } from './pdf';
import { SPILL_BYTES, storeStream, type StoredFile } from './storage';
import type { EmulatorControls, FileRecord, Job } from './store';

/**
 * Sniffs the type, counts pages, trims a PDF to `range` (400 on `pdf_page_start` / `pdf_page_end`
 * beyond the page count), then extracts page text in the background. PDFs above {@link SPILL_BYTES}
 * skip the text extraction (empty text), so a 200 MB upload is not loaded into memory.
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
			const trimmed = await trimPdf(stored.readAll(), trim.start, trim.end);
			file = await storeStream([trimmed], app.tempDir, Number.POSITIVE_INFINITY);
			stored.discard();
			pageCount = trim.end - trim.start + 1;
		}
	}
	const record: FileRecord = { name, file, kind, pageCount };
	const analysed = (pages: PageContent[], error?: string): void => {
		record.pages = pages;
		record.analysisError = error;
		record.analyzedAt = app.clock();
	};
	if (kind === 'pdf' && file.size <= SPILL_BYTES)
		app.pdf
			.extract(file.readAll())
			.then(analysed, (err: unknown) =>
				analysed([], err instanceof Error ? err.message : String(err)),
			);
	else if (kind === 'pdf')
		analysed(Array.from({ length: pageCount }, () => ({ text: '', width: null, height: null })));
	else if (kind === 'other') analysed([]);
	else analysed([{ text: '', ...imageSize(await file.head(64 * 1024), kind) }]);
	return record;
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
	return /^https?:\/\//i.test(value) && URL.canParse(value);
}

/** The emulator never leaves the machine: only loopback hosts may be fetched. */
function isLoopback(url: URL): boolean {
	// WHATWG URLs give the host lower-cased and an IPv6 address compressed, in brackets.
	const host = url.hostname;
	if (!/^https?:$/.test(url.protocol)) return false;
	if (host === 'localhost' || host.endsWith('.localhost')) return true;
	return isIP(host) === 4 ? host.startsWith('127.') : host === '[::1]';
}

const MAX_REDIRECTS = 5;

/**
 * Downloads a URL input (§v0-4.5, §v0-4.8), following redirects by hand so that they cannot leave
 * loopback either. Any failure, a non-2xx answer included, → 400 "URL could not be fetched.".
 */
export async function fetchUrl(
	app: AppContext,
	url: string,
): Promise<{ name: string; file: StoredFile }> {
	let current = new URL(url);
	try {
		for (let hop = 0; hop <= MAX_REDIRECTS && isLoopback(current); hop++) {
			const res = await fetch(current, { redirect: 'manual', signal: AbortSignal.timeout(30_000) });
			const redirect = res.status >= 300 && res.status < 400 && res.headers.get('location');
			if (redirect || !res.ok || !res.body) {
				await res.body?.cancel();
				if (!redirect) break;
				current = new URL(redirect, current);
				continue;
			}
			const body = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream);
			const file = await storeStream(body, app.tempDir, app.maxUploadBytes);
			return { name: lastSegment(current), file };
		}
	} catch {
		// reported below, as every other failure
	}
	throw fieldError('document', 'URL could not be fetched.');
}

/** The URL's last path segment, decoded. */
function lastSegment(url: URL): string {
	const segment = url.pathname.split('/').filter(Boolean).pop() ?? '';
	try {
		return decodeURIComponent(segment) || 'document';
	} catch {
		return segment || 'document';
	}
}
