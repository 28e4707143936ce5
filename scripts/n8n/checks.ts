/**
 * The checks of examples/workflows/ in a real n8n (`npm run test:n8n`): one entry per file, so a new
 * example without a check fails ("no check for X.json"). A check throws when the output is wrong.
 * Expected values come from examples/files/invoice.pdf and invoice-2.pdf with the seeded "Invoice"
 * schema (emulator/seed.json) and emulator/static/{a,b,c}.pdf. See scripts/n8n/README.md.
 */
import { DEFAULT_SOURCE, loadExample } from './examples';
import {
	at,
	expectEqual,
	expectTrue,
	preview,
	type Check,
	type Json,
	type N8nRun,
} from './n8n-run';
import { INVOICES } from './trigger-check';
import { readFirstSheet } from './xlsx';

const INVOICE_1 = { filename: 'invoice.pdf', ...INVOICES['invoice.pdf'] };
const INVOICE_2 = { filename: 'invoice-2.pdf', ...INVOICES['invoice-2.pdf'] };

/** The Metadata key the upload example sets and the trigger example filters on. */
const CORRELATION_KEY = 'batch';
const TOOL_TYPE = 'n8n-nodes-extraction-service.extractionServiceTool';

/** All items of a node are FINISHED jobs. */
function expectFinished(run: N8nRun, node: string): void {
	for (const [i, item] of run.json(node).entries())
		expectEqual(item.status, 'FINISHED', `"${node}" item ${i} status (item: ${preview(item)})`);
}

/** Each `path: value` of `want` at `obj`, named `what path`. */
function expectAt(obj: unknown, what: string, want: Record<string, unknown>): void {
	for (const [p, value] of Object.entries(want)) expectEqual(at(obj, p), value, `${what} ${p}`);
}

/**
 * A workflow `n8n execute` cannot start (chat, MCP, IMAP, polling or Error trigger): it was only
 * imported and type-checked. Its nodes but sticky notes, whose types must be `types` when given.
 */
function importedOnly(run: N8nRun, types?: string[]): N8nRun['workflow']['nodes'] {
	expectTrue(
		!run.executed,
		`expected ${run.workflowFile} not to be executable by the CLI, but it was executed`,
	);
	const nodes = run.workflow.nodes.filter((n) => n.type !== 'n8n-nodes-base.stickyNote');
	const nodeTypes = nodes.map((n) => n.type);
	if (types) expectEqual(nodeTypes, types, `node types of ${run.workflowFile}`);
	return nodes;
}

/** The names of the node's tool variants in a workflow run only by an agent or an MCP client; returns those nodes. */
function expectTools(run: N8nRun, names: string[]): N8nRun['workflow']['nodes'] {
	const tools = importedOnly(run).filter((n) => n.type === TOOL_TYPE);
	const toolNames = tools.map((n) => n.name);
	expectEqual(toolNames, names, `nodes of type ${TOOL_TYPE}`);
	return tools;
}

export const checks: Record<string, Check> = {
	// A PDF from disk → extract with a seeded schema, full (not simplified) output.
	'extract-invoice.json': (run) => {
		const items = run.json('Extract Invoice');
		expectEqual(items.length, 1, '"Extract Invoice" item count');
		expectFinished(run, 'Extract Invoice');
		expectAt(items[0], '"Extract Invoice"', {
			'result.invoice_number': 'INV-2026-0042',
			'result.total_amount': 1234.5,
		});
		expectTrue(
			run.items('Read Invoice PDF')[0]?.binary?.data,
			'"Read Invoice PDF" produced no binary "data"',
		);
	},

	// One "email" with two attachments → one extraction each → an .xlsx by n8n's Convert to File.
	'email-attachments-to-spreadsheet.json': async (run) => {
		const node = 'Extract Each Attachment';
		const items = run.json(node);
		expectEqual(items.length, 2, `"${node}" item count (one per attachment)`);
		expectFinished(run, node);
		const out = run.items('Spreadsheet');
		expectEqual(out.length, 1, '"Spreadsheet" item count');
		expectEqual(out[0].binary?.data?.fileName, 'invoices.xlsx', '"Spreadsheet" file name');
		const sheet = await readFirstSheet(run.binaryData('Spreadsheet'));
		expectEqual(sheet.name, 'Invoices', 'sheet name');
		expectEqual(sheet.records.length, 2, `spreadsheet data rows (rows: ${preview(sheet.rows)})`);
		for (const [i, want] of [INVOICE_1, INVOICE_2].entries()) {
			for (const [k, v] of Object.entries(want)) {
				expectEqual(items[i][k], v, `"${node}" item ${i} ${k}`);
				expectEqual(sheet.records[i][k], v, `spreadsheet row ${i + 2} column ${k}`);
			}
		}
	},

	// Three URLs (the emulator's static PDFs) → one parsing each → markdown.
	'parse-urls-to-markdown.json': (run) => {
		expectEqual(run.json('Parse URLs').length, 3, '"Parse URLs" item count (one per URL)');
		expectFinished(run, 'Parse URLs');
		expectFinished(run, 'Markdown');
		const md = run.json('Markdown');
		const files = md.map((m) => m.file);
		expectEqual(files, ['a.pdf', 'b.pdf', 'c.pdf'], '"Markdown" files');
		for (const [i, id] of ['STATIC-A-001', 'STATIC-B-002', 'STATIC-C-003'].entries()) {
			const text = String(md[i].markdown ?? '');
			expectTrue(
				text.includes(`Invoice number: ${id}`),
				`"Markdown" item ${i} lacks "Invoice number: ${id}": ${preview(text)}`,
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
		expectFinished(run, 'Extract');
		// extracted with the new 3-field schema, not the seeded "Invoice" one (no vendor_name)
		const { invoice_number, total_amount, currency } = INVOICE_1;
		expectAt(ex[0], '"Extract"', {
			invoice_number,
			total_amount,
			currency,
			vendor_name: undefined,
		});
		const dl = run.items('Download CSV');
		expectEqual(dl.length, 1, '"Download CSV" item count');
		expectEqual(dl[0].binary?.data?.fileName, 'invoice.csv', '"Download CSV" file name');
		const csv = run.binaryData('Download CSV').toString('utf8');
		expectEqual(
			csv.trim().split(/\r?\n/),
			['invoice_number,total_amount,currency', 'INV-2026-0042,1234.5,EUR'],
			`CSV lines (CSV: ${preview(csv)})`,
		);
	},

	// An AI Agent (chat trigger, OpenAI model) with the node as tools: scripts/e2e/agent.ts runs it.
	'ai-agent-tool.json': (run) => void expectTools(run, ['Find Extractions', 'Read Extraction']),

	// The reads go to the agent; what changes data goes to it through the person's approval (n8n 2.6+).
	// It runs for real in `npm run test:e2e:agent`.
	'ai-agent-with-approval.json': (run) => {
		const tools = expectTools(run, [
			'Find Extractions',
			'Read Extraction',
			'Delete Extraction',
			'Create Schema',
			'Update Schema',
			'Delete Schema',
		]);
		const connections = run.workflow.connections as Record<string, Json>;
		for (const tool of tools) {
			const changes = at(tool, 'parameters.allowChanges') === true;
			expectEqual(
				at(connections[tool.name], 'ai_tool.0.0.node'),
				changes ? 'Approve in Chat' : 'AI Agent',
				`${tool.name}'s connection`,
			);
		}
	},
	// The node's tools behind an MCP Server Trigger: scripts/e2e/mcp.ts runs it, published.
	'mcp-server.json': (run) =>
		void expectTools(run, ['Find Extractions', 'Get Extraction', 'Get Parsing Markdown']),

	// The end-to-end flows (IMAP, Postgres, queue mode): scripts/e2e/run.ts runs them, published.
	'e2e-email-to-postgres.json': (run) =>
		void importedOnly(run, [
			'n8n-nodes-base.emailReadImap',
			'n8n-nodes-base.code',
			'n8n-nodes-extraction-service.extractionService',
			'n8n-nodes-base.set',
			'n8n-nodes-base.postgres',
			'n8n-nodes-base.convertToFile',
			'n8n-nodes-base.readWriteFile',
		]),
	'e2e-email-upload-without-waiting.json': (run) => {
		const [, , upload] = importedOnly(run, [
			'n8n-nodes-base.emailReadImap',
			'n8n-nodes-base.code',
			'n8n-nodes-extraction-service.extractionService',
		]);
		expectAt(upload, 'Upload Invoices', {
			'parameters.waitForCompletion': false,
			'parameters.options.reuseExistingJob.key.key': 'n8nJobKey',
		});
		const metadata = at(upload, 'parameters.options.metadata');
		expectTrue(
			String(metadata).includes("source: 'email-async'"),
			`Upload Invoices: Metadata must set the source the trigger workflow filters on, got ${preview(metadata)}`,
		);
	},
	'e2e-finished-extractions-to-postgres.json': (run) => {
		const [trigger] = importedOnly(run, [
			'n8n-nodes-extraction-service.extractionServiceTrigger',
			'n8n-nodes-base.set',
			'n8n-nodes-base.postgres',
			'n8n-nodes-base.convertToFile',
			'n8n-nodes-base.readWriteFile',
		]);
		// Simplify off: the row needs the metadata; the source is the upload workflow's
		expectAt(trigger, 'trigger', {
			'parameters.filters': { metaKey: 'source', metaValue: 'email-async' },
			'parameters.simplify': false,
		});
	},
	// The end-to-end flows' Error Workflow: Error Trigger → retry once through n8n's public API.
	'e2e-retry-failed-execution.json': (run) => {
		const [, , retry] = importedOnly(run, [
			'n8n-nodes-base.errorTrigger',
			'n8n-nodes-base.code',
			'n8n-nodes-base.httpRequest',
		]);
		expectTrue(
			/\/api\/v1\/executions\/\{\{ \$json\.execution\.id \}\}\/retry$/.test(
				String(at(retry, 'parameters.url')),
			),
			`Retry Execution URL: ${preview(at(retry, 'parameters.url'))}`,
		);
		expectAt(retry, 'Retry Execution', { 'parameters.nodeCredentialType': 'n8nApi' });
	},
	// A person in the loop (issue 23): IMAP trigger, Check Against Schema, a Send and Wait form per
	// incomplete document; it runs for real in `npm run test:e2e`'s review phase (scripts/e2e).
	'e2e-email-review-to-postgres.json': (run) => {
		const nodes = importedOnly(run);
		const node = (name: string): unknown => nodes.find((n) => n.name === name);
		expectAt(node('Extract Invoices'), 'Extract Invoices', {
			'parameters.options.checkAgainstSchema': true,
		});
		expectAt(node('Review Invoice'), 'Review Invoice', {
			'parameters.operation': 'sendAndWait',
			'parameters.responseType': 'customForm',
		});
		expectAt(node('Ask for Review'), 'Ask for Review', {
			'parameters.options.waitForSubWorkflow': false,
		});
	},

	// Mail → Extraction → Data table, upsert on extraction_id: data-table-run.ts runs it in n8n start.
	'email-to-data-table.json': (run) => {
		const nodes = importedOnly(run, [
			'n8n-nodes-base.manualTrigger',
			'n8n-nodes-base.readWriteFile',
			'n8n-nodes-base.readWriteFile',
			'n8n-nodes-base.merge',
			'n8n-nodes-base.set',
			'n8n-nodes-extraction-service.extractionService',
			'n8n-nodes-base.set',
			'n8n-nodes-base.dataTable',
		]);
		expectAt(nodes.at(-1), 'Save to Data Table', {
			'parameters.operation': 'upsert',
			'parameters.filters.conditions': [
				{ keyName: 'extraction_id', condition: 'eq', keyValue: '={{ $json.extraction_id }}' },
			],
		});
		expectAt(nodes[5], 'Extract Invoices', {
			'parameters.options.reuseExistingJob.key.key': 'n8nJobKey',
		});
	},

	// Two PDFs as one "email" → Batch (the correlation key) → Extraction → Create, Wait for
	// Completion off: the jobs are created, not finished. trigger-run.ts runs it with the trigger.
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
			expectTrue(
				item.status === 'CREATED' || item.status === 'IN_PROGRESS',
				`"${node}" item ${i} status should not be final (not waited for), got ${preview(item.status)} (item: ${preview(item)})`,
			);
			expectTrue(
				typeof item.id === 'string' && item.id,
				`"${node}" item ${i} has no id: ${preview(item)}`,
			);
			expectAt(item, `"${node}" item ${i}`, { [`metadata.${CORRELATION_KEY}`]: batch });
		});
		const names = items.map((item) => item.document_name);
		expectEqual(names, ['invoice.pdf', 'invoice-2.pdf'], `"${node}" document names`);
		expectTrue(
			items[0].id !== items[1].id,
			`"${node}" created one job for both attachments: ${preview(items.map((item) => item.id))}`,
		);
	},

	// Extraction Service Trigger (Extraction Finished, Metadata Key "batch") → a row per extraction:
	// a polling trigger, activated in a running n8n 2.x by trigger-run.ts.
	'trigger-finished-extractions.json': (run) => {
		const [trigger] = importedOnly(run, [
			'n8n-nodes-extraction-service.extractionServiceTrigger',
			'n8n-nodes-base.set',
		]);
		expectAt(trigger, 'trigger', {
			'parameters.event': 'extractionFinished',
			'parameters.filters.metaKey': CORRELATION_KEY,
			'parameters.simplify': false,
			'parameters.pollTimes.item': [{ mode: 'everyMinute' }],
			'credentials.extractionServiceTokenApi.id': 'esTokenCred1',
		});
		// the key it filters on is the key the upload example writes
		const upload = loadExample(DEFAULT_SOURCE, 'upload-without-waiting.json').workflow;
		const node = upload.nodes.find((n) => n.name === 'Upload Attachments');
		const metadata = String(at(node, 'parameters.options.metadata') ?? '');
		expectTrue(
			metadata.includes(`${CORRELATION_KEY}:`),
			`upload-without-waiting.json's Metadata (${metadata}) does not set the key "${CORRELATION_KEY}" the trigger filters on`,
		);
	},
};
