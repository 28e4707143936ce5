/**
 * The one builder of small text PDFs (pdf-lib), for the emulator's static files, the sample invoices
 * (scripts/make-sample-pdf.ts) and the tests: one page per entry of `pages`, one text line per entry
 * of a page. Text lines of the form `Label: value` are what the emulator's schema results read (see
 * schema-result.ts). The output is byte-stable: the same arguments give the same bytes.
 */
import { PDFDocument, StandardFonts, rgb } from 'pdf-lib';

/** One text line: its text, or its text with a style. An empty text leaves a blank line. */
export type PdfLine = string | { text: string; bold?: boolean; size?: number };

/** Layout and document information of {@link makePdf}; lengths in PDF points (1/72 inch). */
export interface PdfOptions {
	/** Page width and height; default A4 portrait, `[595, 842]`. */
	pageSize?: [number, number];
	/** Left edge of the text; default 50. */
	x?: number;
	/** Baseline of the first line; default 780. */
	top?: number;
	/** Distance between baselines; default 24. */
	lineHeight?: number;
	/** Font size of a line without its own `size`; default 14. */
	fontSize?: number;
	/** Text colour as red, green, blue from 0 to 1; default pdf-lib's black. */
	color?: [number, number, number];
	/** Document title and author; not set by default. */
	title?: string;
	author?: string;
	/** Producer; default pdf-lib's own. */
	producer?: string;
	/** Creation and modification date (fixed, so the bytes are stable); default 2024-01-01T00:00:00Z. */
	date?: Date;
}

/**
 * A PDF with one page per entry of `pages` and one Helvetica text line per string (Helvetica-Bold for
 * a line marked `bold`), top to bottom, saved without object streams.
 *
 * @returns the PDF's bytes
 */
export async function makePdf(pages: PdfLine[][], options: PdfOptions = {}): Promise<Buffer> {
	const { pageSize = [595, 842], x = 50, top = 780, lineHeight = 24, fontSize = 14 } = options;
	const doc = await PDFDocument.create();
	if (options.title !== undefined) doc.setTitle(options.title);
	if (options.author !== undefined) doc.setAuthor(options.author);
	if (options.producer !== undefined) doc.setProducer(options.producer);
	const date = options.date ?? new Date('2024-01-01T00:00:00Z');
	doc.setCreationDate(date);
	doc.setModificationDate(date);
	const lines = pages.map((page) =>
		page.map((line) => (typeof line === 'string' ? { text: line } : line)),
	);
	const regular = await doc.embedFont(StandardFonts.Helvetica);
	const bold = lines.some((page) => page.some((line) => line.bold))
		? await doc.embedFont(StandardFonts.HelveticaBold)
		: regular;
	const color = options.color && rgb(...options.color);
	for (const pageLines of lines) {
		const page = doc.addPage(pageSize);
		pageLines.forEach((line, i) => {
			if (line.text === '') return;
			page.drawText(line.text, {
				x,
				y: top - i * lineHeight,
				size: line.size ?? fontSize,
				font: line.bold ? bold : regular,
				color,
			});
		});
	}
	return Buffer.from(await doc.save({ useObjectStreams: false }));
}
