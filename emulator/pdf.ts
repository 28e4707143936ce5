/** The real work behind a parsing (§v0-2.3) and an extraction (§unversioned-2.1): type, page count, trimming (pdf-lib), text (pdfjs-dist). */
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { PDFDocument } from 'pdf-lib';
import type { StoredFile } from './storage';

export type FileKind = 'pdf' | 'png' | 'jpeg' | 'other';

/** Text and size (PDF points, image pixels; null when unknown) of one page. */
export interface PageContent {
	text: string;
	width: number | null;
	height: number | null;
}

/** Identifies PDF, PNG and JPEG by their magic bytes. */
export function sniffKind(head: Buffer): FileKind {
	// Readers accept the PDF header anywhere in the first 1 KiB.
	if (head.subarray(0, 1024).includes('%PDF-')) return 'pdf';
	if (head.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
		return 'png';
	if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'jpeg';
	return 'other';
}

/** Pixel size of a PNG (IHDR) or JPEG (first SOFn marker); nulls when it cannot be read. */
export function imageSize(
	bytes: Buffer,
	kind: 'png' | 'jpeg',
): { width: number | null; height: number | null } {
	if (kind === 'png' && bytes.length >= 24)
		return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
	if (kind === 'jpeg') {
		let i = 2;
		while (i + 9 < bytes.length && bytes[i] === 0xff) {
			const marker = bytes[i + 1];
			const length = bytes.readUInt16BE(i + 2);
			const isSof =
				marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
			if (isSof) return { width: bytes.readUInt16BE(i + 7), height: bytes.readUInt16BE(i + 5) };
			i += 2 + length;
		}
	}
	return { width: null, height: null };
}

/** PDFs up to this size are loaded with pdf-lib to count pages; larger ones are scanned as a stream. */
const PDF_LIB_MAX_BYTES = 96 * 1024 * 1024;

/**
 * Page count of a PDF: pdf-lib's, else (too large, or not loadable) a streaming count of `/Type /Page`
 * objects, which cannot see pages inside compressed object streams; at least 1.
 */
export async function countPdfPages(file: StoredFile): Promise<number> {
	if (file.size <= PDF_LIB_MAX_BYTES) {
		try {
			const doc = await PDFDocument.load(file.readAll(), {
				ignoreEncryption: true,
				updateMetadata: false,
			});
			return doc.getPageCount();
		} catch {
			// counted by the scan below
		}
	}
	return Math.max(1, await scanPageObjects(file));
}

async function scanPageObjects(file: StoredFile): Promise<number> {
	const re = /\/Type\s*\/Page(?![A-Za-z])/g;
	let count = 0;
	let carry = '';
	for await (const chunk of file.stream()) {
		const text = carry + (chunk as Buffer).toString('latin1');
		re.lastIndex = 0;
		let lastEnd = 0;
		for (let m = re.exec(text); m; m = re.exec(text)) {
			if (m.index + m[0].length >= text.length) break; // the next chunk decides whether it is "/Pages"
			count++;
			lastEnd = m.index + m[0].length;
		}
		// Keep a short tail so that a token split between chunks is still found, but never re-count a match.
		carry = text.slice(Math.max(lastEnd, text.length - 16));
	}
	return count;
}

/** The pages `start..end` (1-based, inclusive) of a PDF as a new PDF (§v0-4.1, §unversioned-4.2). */
export async function trimPdf(bytes: Buffer, start: number, end: number): Promise<Buffer> {
	const src = await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false });
	const out = await PDFDocument.create({ updateMetadata: false });
	const indices = Array.from({ length: end - start + 1 }, (_, i) => start - 1 + i);
	for (const page of await out.copyPages(src, indices)) out.addPage(page);
	return Buffer.from(await out.save());
}

/**
 * Page text with pdfjs-dist in one long-lived worker thread (pdf-text-worker.mjs): pdfjs-dist is ESM
 * only and cannot be imported from the CommonJS jest VM. Answers are matched by a message id.
 */
export class PdfTextExtractor {
	private worker: Worker | undefined;
	private nextId = 1;
	private readonly pending = new Map<
		number,
		{ resolve: (p: PageContent[]) => void; reject: (e: Error) => void }
	>();

	extract(bytes: Buffer): Promise<PageContent[]> {
		const worker = this.start();
		const id = this.nextId++;
		// A private copy is transferred, so the caller's buffer stays usable.
		const data = new Uint8Array(bytes).buffer;
		return new Promise<PageContent[]>((resolve, reject) => {
			this.pending.set(id, { resolve, reject });
			worker.postMessage({ id, data }, [data]);
		});
	}

	async close(): Promise<void> {
		const worker = this.worker;
		this.worker = undefined;
		this.failAll(new Error('The PDF text extractor was closed.'));
		if (worker) await worker.terminate();
	}

	/** The worker, started unless running (index.ts starts it at once, so pdfjs loads before the first upload). */
	start(): Worker {
		if (this.worker) return this.worker;
		const worker = new Worker(path.join(__dirname, 'pdf-text-worker.mjs'));
		worker.on('message', (answer: { id: number; pages?: PageContent[]; error?: string }) => {
			const waiter = this.pending.get(answer.id);
			if (!waiter) return;
			this.pending.delete(answer.id);
			if (answer.pages) waiter.resolve(answer.pages);
			else waiter.reject(new Error(answer.error ?? 'unknown error'));
		});
		worker.on('error', (err) => this.failAll(err));
		worker.on('exit', () => {
			if (this.worker === worker) this.worker = undefined;
			this.failAll(new Error('The PDF text worker exited.'));
		});
		this.worker = worker;
		return worker;
	}

	private failAll(err: Error): void {
		for (const waiter of this.pending.values()) waiter.reject(err);
		this.pending.clear();
	}
}
