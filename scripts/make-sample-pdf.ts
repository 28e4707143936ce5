/**
 * Writes the sample invoice the demo and tests use: `examples/files/invoice.pdf`, a one-page text
 * PDF whose lines ("Invoice number: INV-2026-0042", …) carry the fields of the seeded "Invoice"
 * schema. Generated with pdf-lib so its content is known exactly; the output is committed.
 *
 * Usage: npm run sample-pdf [-- OUT.pdf]
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { PDFDocument, StandardFonts, rgb } from 'pdf-lib';

/** The invoice's lines, as they appear on the page (label: value). */
export const SAMPLE_INVOICE_LINES = [
	'ACME Supplies GmbH',
	'Hauptstrasse 12, 10115 Berlin',
	'',
	'INVOICE',
	'',
	'Invoice number: INV-2026-0042',
	'Invoice date: 2026-11-02',
	'Due date: 2026-12-02',
	'Vendor name: ACME Supplies GmbH',
	'Customer name: Northwind Traders SARL',
	'',
	'Description: Recycled paper A4, 40 boxes',
	'Amount: 980.00',
	'Description: Toner cartridges, 6 units',
	'Amount: 254.50',
	'',
	'Total amount: 1,234.50',
	'Currency: EUR',
	'',
	'Thank you for your business. Payment within 30 days.',
];

export async function makeSampleInvoice(): Promise<Uint8Array> {
	const pdf = await PDFDocument.create();
	pdf.setTitle('Invoice INV-2026-0042');
	pdf.setAuthor('ACME Supplies GmbH');
	pdf.setCreationDate(new Date('2026-11-02T09:00:00Z'));
	pdf.setModificationDate(new Date('2026-11-02T09:00:00Z'));
	const font = await pdf.embedFont(StandardFonts.Helvetica);
	const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
	const page = pdf.addPage([595, 842]);
	let y = 780;
	for (const line of SAMPLE_INVOICE_LINES) {
		if (line) {
			const heading = line === 'INVOICE' || line.startsWith('Total');
			page.drawText(line, { x: 60, y, size: heading ? 14 : 11, font: heading ? bold : font, color: rgb(0.1, 0.1, 0.1) });
		}
		y -= 22;
	}
	return await pdf.save({ useObjectStreams: false });
}

if (require.main === module) {
	const out = process.argv[2] ?? path.join(__dirname, '..', 'examples', 'files', 'invoice.pdf');
	void makeSampleInvoice().then((bytes) => {
		writeFileSync(out, bytes);
		console.log(`Wrote ${out} (${bytes.length} bytes)`);
	});
}
