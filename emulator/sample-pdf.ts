/**
 * The one builder of small text PDFs (pdf-lib), for the emulator's static files, the sample invoices
 * and the tests. `Label: value` lines are what the emulator's schema results read. The same
 * arguments give the same bytes.
 */
import { PDFDocument, StandardFonts, rgb } from 'pdf-lib';

/** One text line, plain or styled; an empty text leaves a blank line. */
export type PdfLine = string | { text: string; bold?: boolean; size?: number };

/**
 * Layout in PDF points (defaults: A4 `[595, 842]`, `x` 50, `lineHeight` 24, `fontSize` 14, black;
 * the first line's baseline at 780) and document information (unset unless given, except
 * `date`: 2024-01-01T00:00:00Z, so the bytes are stable).
 */
export interface PdfOptions {
	pageSize?: [number, number];
	x?: number;
	lineHeight?: number;
	fontSize?: number;
	/** Red, green, blue from 0 to 1. */
	color?: [number, number, number];
	title?: string;
	author?: string;
	producer?: string;
	date?: Date;
}

/**
 * A PDF with one page per entry of `pages` and one Helvetica text line per string (Helvetica-Bold for
 * a line marked `bold`), top to bottom, saved without object streams.
 *
 * @returns the PDF's bytes
 */
export async function makePdf(pages: PdfLine[][], options: PdfOptions = {}): Promise<Buffer> {
	const { pageSize = [595, 842], x = 50, lineHeight = 24, fontSize = 14 } = options;
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
				y: 780 - i * lineHeight,
				size: line.size ?? fontSize,
				font: line.bold ? bold : regular,
				color,
			});
		});
	}
	return Buffer.from(await doc.save({ useObjectStreams: false }));
}
