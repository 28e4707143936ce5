/**
 * Writes emulator/static/{a,b,c}.pdf, the files origin's URL inputs (§v0-4.5, §v0-4.8), kept in the
 * repository: `npx tsx emulator/make-static.ts`.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { makePdf } from './sample-pdf';

async function main(): Promise<void> {
	for (const [i, letter] of ['A', 'B', 'C'].entries()) {
		const file = path.join(__dirname, 'static', `${letter.toLowerCase()}.pdf`);
		const lines = [
			`Static document ${letter}`,
			`Invoice number: STATIC-${letter}-00${i + 1}`,
			`Total amount: ${(i + 1) * 100}.00 EUR`,
		];
		writeFileSync(file, await makePdf([lines], { producer: 'extraction-service emulator' }));
		console.log(`wrote ${file}`);
	}
}

main().catch((err: unknown) => {
	console.error(err);
	process.exit(1);
});
