/**
 * Writes the sample invoices the demo, tests and example workflows use: `examples/files/invoice.pdf`
 * (ACME, INV-2026-0042) and `examples/files/invoice-2.pdf` (Globex, GX-7781), one-page text PDFs
 * whose lines ("Invoice number: …") carry the fields of the seeded "Invoice" schema. Generated with
 * the shared PDF builder (emulator/sample-pdf.ts) so their content is known exactly; the output is
 * committed and byte-stable.
 *
 * Usage: npm run sample-pdf            # both files
 *        npm run sample-pdf -- OUT.pdf # the first invoice only, to OUT.pdf
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';

import { makePdf } from '../emulator/sample-pdf';

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

/**
 * A one-page invoice PDF: `lines` top to bottom, the heading `INVOICE` and the `Total…` line in bold,
 * built with the shared builder (emulator/sample-pdf.ts) so the bytes are stable.
 *
 * @param date the invoice date (`YYYY-MM-DD`); the PDF's creation and modification date are 09:00 UTC that day
 * @returns the PDF's bytes
 */
export async function makeSampleInvoice(
	lines = SAMPLE_INVOICE_LINES,
	date = '2026-11-02',
): Promise<Buffer> {
	const invoiceNumber = (lines.find((l) => l.startsWith('Invoice number')) ?? '').replace(
		'Invoice number: ',
		'',
	);
	const styled = lines.map((text) =>
		text === 'INVOICE' || text.startsWith('Total') ? { text, bold: true, size: 14 } : text,
	);
	return await makePdf([styled], {
		title: `Invoice ${invoiceNumber}`.trim(),
		author: lines[0],
		date: new Date(`${date}T09:00:00Z`),
		x: 60,
		lineHeight: 22,
		fontSize: 11,
		color: [0.1, 0.1, 0.1],
	});
}

if (require.main === module) {
	const dir = path.join(__dirname, '..', 'examples', 'files');
	const jobs: Array<[string, Promise<Buffer>]> = process.argv[2]
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
