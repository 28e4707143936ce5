/**
 * Writes the sample invoices the demo, tests and example workflows use: `examples/files/invoice.pdf`
 * (ACME, INV-2026-0042) and `examples/files/invoice-2.pdf` (Globex, GX-7781), one-page text PDFs
 * whose lines ("Invoice number: …") carry the fields of the seeded "Invoice" schema. Generated with
 * pdf-lib so their content is known exactly; the output is committed and byte-stable.
 *
 * Usage: npm run sample-pdf            # both files
 *        npm run sample-pdf -- OUT.pdf # the first invoice only, to OUT.pdf
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

/** The second invoice (example workflows with several attachments). */
export const SECOND_INVOICE_LINES = [
	'Globex Office Ltd',
	'',
	'INVOICE',
	'',
	'Invoice number: GX-7781',
	'Invoice date: 2026-11-05',
	'Due date: 2026-12-05',
	'Vendor name: Globex Office Ltd',
	'Customer name: Northwind Traders SARL',
	'',
	'Description: Office chairs, 4 units',
	'Amount: 596.00',
	'',
	'Total amount: 596.00',
	'Currency: GBP',
];

export async function makeSampleInvoice(lines = SAMPLE_INVOICE_LINES, date = '2026-11-02'): Promise<Uint8Array> {
	const pdf = await PDFDocument.create();
	pdf.setTitle(`Invoice ${(lines.find((l) => l.startsWith('Invoice number')) ?? '').replace('Invoice number: ', '')}`.trim());
	pdf.setAuthor(lines[0]);
	pdf.setCreationDate(new Date(`${date}T09:00:00Z`));
	pdf.setModificationDate(new Date(`${date}T09:00:00Z`));
	const font = await pdf.embedFont(StandardFonts.Helvetica);
	const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
	const page = pdf.addPage([595, 842]);
	let y = 780;
	for (const line of lines) {
		if (line) {
			const heading = line === 'INVOICE' || line.startsWith('Total');
			page.drawText(line, { x: 60, y, size: heading ? 14 : 11, font: heading ? bold : font, color: rgb(0.1, 0.1, 0.1) });
		}
		y -= 22;
	}
	return await pdf.save({ useObjectStreams: false });
}

if (require.main === module) {
	const dir = path.join(__dirname, '..', 'examples', 'files');
	const jobs: Array<[string, Promise<Uint8Array>]> = process.argv[2]
		? [[process.argv[2], makeSampleInvoice()]]
		: [
				[path.join(dir, 'invoice.pdf'), makeSampleInvoice()],
				[path.join(dir, 'invoice-2.pdf'), makeSampleInvoice(SECOND_INVOICE_LINES, '2026-11-05')],
			];
	for (const [out, bytes] of jobs) {
		void bytes.then((b) => {
			writeFileSync(out, b);
			console.log(`Wrote ${out} (${b.length} bytes)`);
		});
	}
}
