/**
 * Generates the static PDFs served by the files origin at GET /static/{name} (URL inputs of
 * §v0-4.5 / §v0-4.8: "public or pre-signed URL"). Run once: `npx tsx emulator/make-static.ts`;
 * the output (emulator/static/a.pdf, b.pdf, c.pdf) is kept in the repository.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { makePdf } from './sample-pdf';

const DOCS: Array<{ file: string; lines: string[] }> = [
	{
		file: 'a.pdf',
		lines: ['Static document A', 'Invoice number: STATIC-A-001', 'Total amount: 100.00 EUR'],
	},
	{
		file: 'b.pdf',
		lines: ['Static document B', 'Invoice number: STATIC-B-002', 'Total amount: 200.00 EUR'],
	},
	{
		file: 'c.pdf',
		lines: ['Static document C', 'Invoice number: STATIC-C-003', 'Total amount: 300.00 EUR'],
	},
];

async function main(): Promise<void> {
	const dir = path.join(__dirname, 'static');
	mkdirSync(dir, { recursive: true });
	for (const { file, lines } of DOCS) {
		writeFileSync(
			path.join(dir, file),
			await makePdf([lines], { producer: 'extraction-service emulator' }),
		);
		console.log(`wrote ${path.join(dir, file)}`);
	}
}

main().catch((err: unknown) => {
	console.error(err);
	process.exit(1);
});
