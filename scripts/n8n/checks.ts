/**
 * Checks of the example workflows run in a real n8n server (`npm run test:n8n`,
 * scripts/n8n/run-examples.ts). One entry per file in examples/workflows/: the runner fails a
 * workflow that has no entry here ("no check for X.json"), so a new example cannot slip through
 * untested. A check throws with a clear message when the output is wrong.
 *
 * Adding an example = adding examples/workflows/NAME.json + an entry `'NAME.json': (run) => {…}` here.
 * What the runner does to the copy it imports (never to the original) is described in
 * scripts/n8n/README.md: `/home/node/.n8n-files/…` paths point into run.filesDir, where examples/files/* are copied;
 * https://files.example.com is the emulator's files origin; credentials `esApiCredential1` /
 * `esTokenCred1` point at the emulator. Before any check, the runner has verified that this n8n has
 * every node type and typeVersion the workflow uses.
 *
 * Expected values come from the emulator's data: examples/files/invoice.pdf and invoice-2.pdf, the
 * seeded "Invoice" schema (emulator/seed.json), and emulator/static/{a,b,c}.pdf.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import {
	at,
	expectEqual,
	expectTrue,
	preview,
	type Check,
	type Json,
	type N8nRun,
} from './n8n-run';
import { readFirstSheet } from './xlsx';

/** The two sample invoices, as the seeded "Invoice" schema extracts them. */
const INVOICE_1 = {
	filename: 'invoice.pdf',
	invoice_number: 'INV-2026-0042',
	total_amount: 1234.5,
	currency: 'EUR',
};
const INVOICE_2 = {
	filename: 'invoice-2.pdf',
	invoice_number: 'GX-7781',
	total_amount: 596,
	currency: 'GBP',
};

/** The Metadata key the upload example sets and the trigger example filters on. */
const CORRELATION_KEY = 'batch';

/** All items of a node are FINISHED jobs. */
function expectFinished(run: N8nRun, node: string): void {
	run
		.json(node)
		.forEach((item, i) =>
			expectEqual(item.status, 'FINISHED', `"${node}" item ${i} status (item: ${preview(item)})`),
		);
}

export const checks: Record<string, Check> = {
	// A PDF from disk → extract with a seeded schema, full (not simplified) output.
	'extract-invoice.json': (run) => {
		const items = run.json('Extract Invoice');
		expectEqual(items.length, 1, '"Extract Invoice" item count');
		const job = items[0];
		expectEqual(job.status, 'FINISHED', `"Extract Invoice" status (item: ${preview(job)})`);
		expectEqual(
			at(job, 'result.invoice_number'),
			'INV-2026-0042',
			'"Extract Invoice" result.invoice_number',
		);
		expectEqual(at(job, 'result.total_amount'), 1234.5, '"Extract Invoice" result.total_amount');
		expectTrue(
			run.items('Read Invoice PDF')[0]?.binary?.data,
			'"Read Invoice PDF" produced no binary "data"',
		);
	},

	// One "email" item with two attachments → one extraction per attachment → n8n's own Convert to
	// File node writes them as rows of an .xlsx.
	'email-attachments-to-spreadsheet.json': async (run) => {
		const node = 'Extract Each Attachment';
		const items = run.json(node);
		expectEqual(items.length, 2, `"${node}" item count (one per attachment)`);
		expectFinished(run, node);
		for (const [i, want] of [INVOICE_1, INVOICE_2].entries()) {
			for (const [k, v] of Object.entries(want))
				expectEqual(items[i][k], v, `"${node}" item ${i} ${k}`);
		}
		const out = run.items('Spreadsheet');
		expectEqual(out.length, 1, '"Spreadsheet" item count');
		expectEqual(out[0].binary?.data?.fileName, 'invoices.xlsx', '"Spreadsheet" file name');
		const sheet = await readFirstSheet(run.binaryData('Spreadsheet'));
		expectEqual(sheet.name, 'Invoices', 'sheet name');
		expectEqual(sheet.records.length, 2, `spreadsheet data rows (rows: ${preview(sheet.rows)})`);
		for (const [i, want] of [INVOICE_1, INVOICE_2].entries()) {
			for (const [k, v] of Object.entries(want))
				expectEqual(sheet.records[i][k], v, `spreadsheet row ${i + 2} column ${k}`);
		}
	},

	// Three URLs (the emulator's static PDFs) → one parsing each → markdown.
	'parse-urls-to-markdown.json': (run) => {
		expectEqual(run.json('Parse URLs').length, 3, '"Parse URLs" item count (one per URL)');
		expectFinished(run, 'Parse URLs');
		const md = run.json('Markdown');
		expectEqual(
			md.map((m) => m.file),
			['a.pdf', 'b.pdf', 'c.pdf'],
			'"Markdown" files',
		);
		for (const [i, [letter, n]] of [
			['A', '001'],
			['B', '002'],
			['C', '003'],
		].entries()) {
			expectEqual(md[i].status, 'FINISHED', `"Markdown" item ${i} status`);
			const text = String(md[i].markdown ?? '');
			expectTrue(
				text.includes(`Invoice number: STATIC-${letter}-${n}`),
				`"Markdown" item ${i} lacks "Invoice number: STATIC-${letter}-${n}": ${preview(text)}`,
			);
		}
	},

	// Create a schema → extract the invoice with it (unversioned API, token credential) → download CSV.
	'schema-extraction-csv.json': (run) => {
		const schema = run.json('Create Schema');
		expectEqual(schema.length, 1, '"Create Schema" item count');
		expectEqual(schema[0].name, 'Invoice totals', '"Create Schema" name');
		expectTrue(
			typeof schema[0].id === 'string' && schema[0].id,
			`"Create Schema" returned no id: ${preview(schema[0])}`,
		);

		const ex = run.json('Extract');
		expectEqual(ex.length, 1, '"Extract" item count');
		expectEqual(ex[0].status, 'FINISHED', `"Extract" status (item: ${preview(ex[0])})`);
		expectEqual(ex[0].invoice_number, INVOICE_1.invoice_number, '"Extract" invoice_number');
		expectEqual(ex[0].total_amount, INVOICE_1.total_amount, '"Extract" total_amount');
		expectEqual(ex[0].currency, INVOICE_1.currency, '"Extract" currency');
		// extracted with the new 3-field schema, not the seeded "Invoice" one
		expectEqual(
			ex[0].vendor_name,
			undefined,
			'"Extract" vendor_name (not a field of "Invoice totals")',
		);

		const dl = run.items('Download CSV');
		expectEqual(dl.length, 1, '"Download CSV" item count');
		expectEqual(dl[0].binary?.data?.fileName, 'invoice.csv', '"Download CSV" file name');
		const csv = run.binaryData('Download CSV').toString('utf8');
		const lines = csv.trim().split(/\r?\n/);
		expectEqual(
			lines[0],
			'invoice_number,total_amount,currency',
			`CSV header (CSV: ${preview(csv)})`,
		);
		expectEqual(lines[1], 'INV-2026-0042,1234.5,EUR', `CSV row (CSV: ${preview(csv)})`);
	},

	// An AI Agent (chat trigger + OpenAI model) using the node as a tool: `n8n execute` cannot run
	// it here (no chat model reachable, no start node for the CLI). The runner imported it and found
	// every node type in this n8n; here: the tools are our node's tool variant.
	'ai-agent-tool.json': (run) => {
		expectTrue(
			!run.executed,
			`expected ai-agent-tool.json not to be executable by the CLI, but it was executed`,
		);
		const tools = run.workflow.nodes
			.filter((n) => n.type === 'n8n-nodes-extraction-service.extractionServiceTool')
			.map((n) => n.name);
		expectEqual(
			tools,
			['Find Extractions', 'Read Extraction'],
			'nodes of type n8n-nodes-extraction-service.extractionServiceTool',
		);
	},
	// The node's tools behind an MCP Server Trigger: `n8n execute` cannot start it, so here it is only
	// imported and type-checked on both lines; it runs for real, published, with an MCP client
	// calling a tool, in `npm run test:e2e:mcp` (scripts/e2e/mcp.ts).
	'mcp-server.json': (run) => {
		expectTrue(
			!run.executed,
			'expected mcp-server.json not to be executable by the CLI (it starts with an MCP Server Trigger), but it was executed',
		);
		const tools = run.workflow.nodes
			.filter((n) => n.type === 'n8n-nodes-extraction-service.extractionServiceTool')
			.map((n) => n.name);
		expectEqual(
			tools,
			['Find Extractions', 'Get Extraction', 'Get Parsing Markdown'],
			'nodes of type n8n-nodes-extraction-service.extractionServiceTool',
		);
	},
	// Email Trigger (IMAP) → Postgres: needs a mailbox, a database and queue mode, so here it is only
	// imported and type-checked on both lines; it runs for real in `npm run test:e2e` (scripts/e2e/run.ts).
	'e2e-email-to-postgres.json': (run) => {
		expectTrue(
			!run.executed,
			'expected e2e-email-to-postgres.json not to be executable by the CLI (it starts with an IMAP trigger), but it was executed',
		);
		const types = run.workflow.nodes
			.map((n) => n.type)
			.filter((t) => t !== 'n8n-nodes-base.stickyNote');
		expectEqual(
			types,
			[
				'n8n-nodes-base.emailReadImap',
				'n8n-nodes-base.code',
				'n8n-nodes-extraction-service.extractionService',
				'n8n-nodes-base.set',
				'n8n-nodes-base.postgres',
				'n8n-nodes-base.convertToFile',
				'n8n-nodes-base.readWriteFile',
			],
			'node types of e2e-email-to-postgres.json',
		);
	},

	// Flow 2 of the end-to-end run (scripts/e2e/run.ts): the same mails uploaded without waiting,
	// and an Extraction Service Trigger writing the finished ones. Imported and type-checked here on
	// both lines; they run for real, published, in `npm run test:e2e`.
	'e2e-email-upload-without-waiting.json': (run) => {
		expectTrue(
			!run.executed,
			'expected e2e-email-upload-without-waiting.json not to be executable by the CLI (it starts with an IMAP trigger), but it was executed',
		);
		const nodes = run.workflow.nodes.filter((n) => n.type !== 'n8n-nodes-base.stickyNote');
		expectEqual(
			nodes.map((n) => n.type),
			[
				'n8n-nodes-base.emailReadImap',
				'n8n-nodes-base.code',
				'n8n-nodes-extraction-service.extractionService',
			],
			'node types of e2e-email-upload-without-waiting.json',
		);
		const upload = nodes[2];
		expectEqual(
			at(upload, 'parameters.waitForCompletion'),
			false,
			'Upload Invoices: Wait for Completion',
		);
		expectTrue(
			String(at(upload, 'parameters.options.metadata')).includes("source: 'email-async'"),
			`Upload Invoices: Metadata must set the source the trigger workflow filters on, got ${preview(at(upload, 'parameters.options.metadata'))}`,
		);
		expectEqual(
			at(upload, 'parameters.options.reuseExistingJob.key.key'),
			'n8nJobKey',
			'Upload Invoices: Reuse Existing Job key',
		);
	},
	'e2e-finished-extractions-to-postgres.json': (run) => {
		expectTrue(
			!run.executed,
			'expected e2e-finished-extractions-to-postgres.json not to be executable by the CLI (it starts with a polling trigger), but it was executed',
		);
		const nodes = run.workflow.nodes.filter((n) => n.type !== 'n8n-nodes-base.stickyNote');
		expectEqual(
			nodes.map((n) => n.type),
			[
				'n8n-nodes-extraction-service.extractionServiceTrigger',
				'n8n-nodes-base.set',
				'n8n-nodes-base.postgres',
				'n8n-nodes-base.convertToFile',
				'n8n-nodes-base.readWriteFile',
			],
			'node types of e2e-finished-extractions-to-postgres.json',
		);
		expectEqual(
			at(nodes[0], 'parameters.filters'),
			{ metaKey: 'source', metaValue: 'email-async' },
			"trigger filters (the upload workflow's source)",
		);
		expectEqual(
			at(nodes[0], 'parameters.simplify'),
			false,
			'trigger Simplify (off: the row needs the metadata)',
		);
	},
	// The Error Workflow of the end-to-end flows: Error Trigger → retry once through n8n's public API.
	'e2e-retry-failed-execution.json': (run) => {
		expectTrue(
			!run.executed,
			'expected e2e-retry-failed-execution.json not to be executable by the CLI (it starts with an Error Trigger), but it was executed',
		);
		const nodes = run.workflow.nodes.filter((n) => n.type !== 'n8n-nodes-base.stickyNote');
		expectEqual(
			nodes.map((n) => n.type),
			['n8n-nodes-base.errorTrigger', 'n8n-nodes-base.code', 'n8n-nodes-base.httpRequest'],
			'node types of e2e-retry-failed-execution.json',
		);
		expectTrue(
			/\/api\/v1\/executions\/\{\{ \$json\.execution\.id \}\}\/retry$/.test(
				String(at(nodes[2], 'parameters.url')),
			),
			`Retry Execution URL: ${preview(at(nodes[2], 'parameters.url'))}`,
		);
		expectEqual(
			at(nodes[2], 'parameters.nodeCredentialType'),
			'n8nApi',
			'Retry Execution credential type',
		);
	},

	// Manual Trigger → two PDFs as one "email" → Batch (the correlation key) → Extraction → Create
	// with Wait for Completion off: the execution ends with the jobs created, not finished. The
	// companion trigger workflow picks them up; scripts/n8n/trigger-run.ts tests that pair in a running
	// n8n 2.x (the trigger activated), see scripts/n8n/trigger-check.ts.
	'upload-without-waiting.json': (run) => {
		const node = 'Upload Attachments';
		const items = run.json(node);
		expectEqual(items.length, 2, `"${node}" item count (one per attachment)`);
		const batch = run.json('Batch')[0]?.[CORRELATION_KEY];
		expectTrue(
			typeof batch === 'string' && /^invoices-\d+$/.test(batch),
			`"Batch" ${CORRELATION_KEY} should be "invoices-<execution id>", got ${preview(batch)}`,
		);
		items.forEach((item, i) => {
			// not waited for: the service has the job, it is not final yet
			expectTrue(
				item.status === 'CREATED' || item.status === 'IN_PROGRESS',
				`"${node}" item ${i} status should not be final (not waited for), got ${preview(item.status)} (item: ${preview(item)})`,
			);
			expectTrue(
				typeof item.id === 'string' && item.id,
				`"${node}" item ${i} has no id: ${preview(item)}`,
			);
			expectEqual(
				at(item, `metadata.${CORRELATION_KEY}`),
				batch,
				`"${node}" item ${i} metadata.${CORRELATION_KEY}`,
			);
		});
		expectEqual(
			items.map((item) => item.document_name),
			['invoice.pdf', 'invoice-2.pdf'],
			`"${node}" document names`,
		);
		expectTrue(
			items[0].id !== items[1].id,
			`"${node}" created one job for both attachments: ${preview(items.map((item) => item.id))}`,
		);
	},

	// Extraction Service Trigger (Extraction Finished, Metadata Key "batch") → a row per extraction.
	// A polling trigger cannot run under `n8n execute`: here it is imported and type-checked on both
	// lines and its settings checked; the runner then activates it in a running n8n 2.x server
	// (scripts/n8n/trigger-run.ts) and counts what fires.
	'trigger-finished-extractions.json': (run) => {
		expectTrue(
			!run.executed,
			'expected trigger-finished-extractions.json not to be executable by the CLI (it starts with a polling trigger), but it was executed',
		);
		const nodes = run.workflow.nodes.filter((n) => n.type !== 'n8n-nodes-base.stickyNote');
		expectEqual(
			nodes.map((n) => n.type),
			['n8n-nodes-extraction-service.extractionServiceTrigger', 'n8n-nodes-base.set'],
			'node types of trigger-finished-extractions.json',
		);
		const trigger = nodes[0];
		expectEqual(at(trigger, 'parameters.event'), 'extractionFinished', 'trigger event');
		expectEqual(
			at(trigger, 'parameters.filters.metaKey'),
			CORRELATION_KEY,
			'trigger filter Metadata Key',
		);
		expectEqual(
			at(trigger, 'parameters.simplify'),
			false,
			'trigger Simplify (off: the row needs the metadata)',
		);
		expectEqual(
			at(trigger, 'parameters.pollTimes.item'),
			[{ mode: 'everyMinute' }],
			'trigger Poll Times',
		);
		expectEqual(
			at(trigger, 'credentials.extractionServiceTokenApi.id'),
			'esTokenCred1',
			'trigger credential',
		);
		// the key it filters on is the key the upload example writes
		const upload = JSON.parse(
			readFileSync(
				path.join(__dirname, '..', '..', 'examples', 'workflows', 'upload-without-waiting.json'),
				'utf8',
			),
		) as { nodes: Json[] };
		const metadata = String(
			at(
				upload.nodes.find((n) => n.name === 'Upload Attachments'),
				'parameters.options.metadata',
			) ?? '',
		);
		expectTrue(
			metadata.includes(`${CORRELATION_KEY}:`),
			`upload-without-waiting.json's Metadata (${metadata}) does not set the key "${CORRELATION_KEY}" the trigger filters on`,
		);
	},
};
