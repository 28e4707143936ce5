/**
 * The main job, end to end: a PDF goes through our node inside n8n's own execution engine
 * (n8n-core WorkflowExecute), to the service, and back as extracted data.
 *
 *   npm run demo                      # the sample invoice, against the embedded service emulator
 *   npm run demo -- some.pdf          # any PDF (or PNG/JPEG)
 *   EXTRACTION_SERVICE_URL=https://… EXTRACTION_SERVICE_API_KEY=… npm run demo -- some.pdf --schema <uuid>
 *                                     # the same workflow against a real account
 *
 * It runs `examples/workflows/extract-invoice.json` — the workflow a user imports — starting at its
 * "Extract Invoice" node with the file as the binary item "Read Invoice PDF" would produce, using the
 * compiled package in dist/ (what n8n loads). Exit code 1 when the extract did not finish.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { startEmulator, type Emulator } from '../emulator';
import { binaryProperty, loadTypes, runWorkflow, shutdownEngine } from './engine';
import { readArgs } from './lib/args';
import { ROOT } from './lib/processes';
import { SEEDED_INVOICE_SCHEMA } from './n8n/examples';

const MIME: Record<string, string> = {
	'.pdf': 'application/pdf',
	'.png': 'image/png',
	'.jpg': 'image/jpeg',
	'.jpeg': 'image/jpeg',
};

/** The file (default: the sample invoice) and `--schema`, read with scripts/lib/args.ts. */
function parseArgs(): { file: string; schema?: string } {
	const { values, positionals } = readArgs(__filename, { schema: { type: 'string' } }, true);
	const given = positionals.at(-1);
	return {
		file: given
			? path.resolve(process.env.INIT_CWD ?? process.cwd(), given)
			: path.join(ROOT, 'examples', 'files', 'invoice.pdf'),
		schema: values.schema,
	};
}

async function main(): Promise<number> {
	const { file, schema } = parseArgs();
	const realUrl = process.env.EXTRACTION_SERVICE_URL;
	const realKey = process.env.EXTRACTION_SERVICE_API_KEY;
	if (realUrl && !realKey)
		throw new Error('EXTRACTION_SERVICE_URL is set but EXTRACTION_SERVICE_API_KEY is not');
	if (realUrl && !schema)
		throw new Error(
			'Against a real account, pass the schema to use: npm run demo -- FILE.pdf --schema <uuid>',
		);

	let emulator: Emulator | undefined;
	let credentials: { baseUrl: string; apiKey: string };
	if (realUrl) {
		credentials = { baseUrl: realUrl, apiKey: realKey! };
		console.log(`Service: ${new URL(realUrl).origin} (real account)`);
	} else {
		emulator = await startEmulator({ quiet: true });
		credentials = { baseUrl: emulator.url, apiKey: emulator.apiKey };
		console.log(`Service: emulator at ${emulator.url}`);
	}

	try {
		const workflow = JSON.parse(
			readFileSync(path.join(ROOT, 'examples', 'workflows', 'extract-invoice.json'), 'utf8'),
		);
		const node = workflow.nodes.find((n: { name: string }) => n.name === 'Extract Invoice');
		// The example carries a placeholder schema ID for users to replace; the emulator's seeded
		// Invoice schema stands in for it here (against a real account, --schema gives yours).
		node.parameters.schemaId = schema ?? SEEDED_INVOICE_SCHEMA;
		const bytes = readFileSync(file);
		const fileName = path.basename(file);
		const mimeType = MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
		console.log(`File: ${file} (${bytes.length} bytes)`);
		console.log('Running examples/workflows/extract-invoice.json in n8n-core WorkflowExecute…');

		const started = Date.now();
		const result = await runWorkflow({
			workflow,
			startNode: 'Extract Invoice',
			input: [
				{ json: { fileName }, binary: { data: await binaryProperty(bytes, fileName, mimeType) } },
			],
			credentials: { extractionServiceApi: credentials },
			types: loadTypes('dist'),
		});
		const seconds = ((Date.now() - started) / 1000).toFixed(1);
		if (result.error) {
			console.error(`\nThe workflow failed after ${seconds} s: ${result.error.message}`);
			if (result.error.description) console.error(String(result.error.description));
			return 1;
		}
		const [item] = result.output('Extract Invoice');
		const extract = item?.json ?? {};
		const parsing = (extract.parsing ?? {}) as Record<string, unknown>;
		const text = String(parsing.markdown_content ?? '');
		const summary = {
			id: extract.id,
			status: extract.status,
			schema: (extract.schema as { name?: string } | undefined)?.name,
			filename: (parsing.document as { filename?: string } | undefined)?.filename,
			pages: (parsing.document as { page_count?: number } | undefined)?.page_count,
			result: extract.result,
			textLength: text.length,
			text: text.length > 600 ? `${text.slice(0, 600)}…` : text,
			pairedItem: item?.pairedItem,
		};
		console.log(`\nExtract (after ${seconds} s):`);
		console.log(JSON.stringify(summary, null, 2));
		return extract.status === 'FINISHED' ? 0 : 1;
	} finally {
		await emulator?.close();
		await shutdownEngine();
	}
}

main().then(
	(code) => process.exit(code),
	(error: Error) => {
		console.error(error.message);
		process.exit(1);
	},
);
