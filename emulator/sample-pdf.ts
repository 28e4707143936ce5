/**
 * Small text PDFs for the emulator's static files, self-check and tests: one page per entry of
 * `pages`, one text line per string. Text lines of the form `Label: value` are what the emulator's
 * schema results read (see schema-result.ts).
 */
import { PDFDocument, StandardFonts } from 'pdf-lib';

export async function makePdf(pages: string[][]): Promise<Buffer> {
	const doc = await PDFDocument.create();
	// Fixed metadata keeps the output byte-stable between runs.
	doc.setCreationDate(new Date('2024-01-01T00:00:00Z'));
	doc.setModificationDate(new Date('2024-01-01T00:00:00Z'));
	doc.setProducer('extraction-service emulator');
	const font = await doc.embedFont(StandardFonts.Helvetica);
	for (const lines of pages) {
		const page = doc.addPage([595, 842]);
		lines.forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 24, size: 14, font }));
	}
	return Buffer.from(await doc.save({ useObjectStreams: false }));
}
