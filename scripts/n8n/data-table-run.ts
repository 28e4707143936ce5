/**
 * examples/workflows/email-to-data-table.json in a running n8n 2.x: Data tables need `n8n start`
 * (`n8n execute` loads no backend module, so its Data table node has no table to reach). Run by
 * run-examples.ts after line 2. The table the example writes to is created over n8n's REST API as
 * a user creates it in the editor (`POST /rest/projects/:projectId/data-tables`, the columns the
 * example's Table Row sets); the workflow runs twice on the server, and after each run the table's
 * rows are read back (`GET …/data-tables/:id/rows`). Checked: one row per extraction with its
 * values; the second run (the same mail: Reuse Existing Job gives the same extractions) updates
 * those rows instead of adding rows. Result line: `data table: <extractions> extractions, <rows>
 * rows after run 1, <rows> after run 2, <duplicates> duplicates`.
 */
import {
	importFixtures,
	runInServer,
	type ServerRunOptions,
	type ServerRunResult,
} from '../lib/n8n-server';
import { prepareWorkflow, type Example } from './examples';
import { at, expectEqual, preview, type Json } from './n8n-run';
import { INVOICES } from './trigger-check';

export const DATA_TABLE_FILE = 'email-to-data-table.json';
const START_NODE = "When clicking 'Execute workflow'";
const EXTRACT_NODE = 'Extract Invoices';
const ROW_NODE = 'Table Row';

/** The run; never throws (a failure is in `message`). */
export function runDataTableExample(
	o: ServerRunOptions & { example: Example },
): Promise<ServerRunResult> {
	const run = { ...o, tag: 'data table', processingMs: 1500 };
	return runInServer(run, async ({ emu, ctx, filesDir, start, log, result }) => {
		const t0 = Date.now();
		const workflow = prepareWorkflow(o.example, o.source, filesDir, emu.filesUrl);
		await importFixtures(ctx, emu, workflow);
		const { rest } = await start(120_000);
		result.timings.setup = Date.now() - t0;
		// the table, as a user makes it: its name in the example's Data table node, its columns the
		// fields Table Row sets (a Number for number fields, else a String)
		const tableNode = workflow.nodes.find((n) => n.type === 'n8n-nodes-base.dataTable');
		const name = String(at(tableNode, 'parameters.dataTableId.value'));
		const assignments = at(
			workflow.nodes.find((n) => n.name === ROW_NODE),
			'parameters.assignments.assignments',
		) as Array<{ name: string; type: string }>;
		const columns = assignments.map((a) => ({
			name: a.name,
			type: a.type === 'number' ? 'number' : 'string',
		}));
		const project = await rest.call('GET', '/rest/projects/personal');
		const tables = `/rest/projects/${String(project.id)}/data-tables`;
		const table = await rest.call('POST', tables, { name, columns });
		log(
			`Data table "${name}" (${String(table.id)}) created: ${columns.map((c) => c.name).join(', ')}`,
		);
		const readRows = async (): Promise<Json[]> =>
			(await rest.call('GET', `${tables}/${String(table.id)}/rows?take=100`)).data as Json[];

		const runs: Array<{ n: number; extractions: Json[]; rows: Json[] }> = [];
		for (const n of [1, 2]) {
			const t = Date.now();
			const { id, run } = await rest.run(o.example, START_NODE, 120_000);
			const extractions = run.json(EXTRACT_NODE);
			const rows = await readRows();
			runs.push({ n, extractions, rows });
			result.timings[`run ${n}`] = Date.now() - t;
			log(`run ${n} (execution ${id}): ${extractions.length} extractions, ${rows.length} rows`);
		}
		const [first, second] = runs;
		const duplicates = second.rows.length - new Set(second.rows.map((r) => r.extraction_id)).size;
		result.line = `data table: ${first.extractions.length} extractions, ${first.rows.length} rows after run 1, ${second.rows.length} after run 2, ${duplicates} duplicates`;
		for (const { n, extractions, rows } of runs) {
			expectEqual(extractions.length, 2, `run ${n}: "${EXTRACT_NODE}" items (one per attachment)`);
			expectEqual(rows.length, extractions.length, `run ${n}: rows (${preview(rows)})`);
			// one row per extraction of this run, with the extraction's values
			for (const e of extractions) {
				const mine = rows.filter((r) => r.extraction_id === e.id);
				expectEqual(mine.length, 1, `run ${n}: rows of extraction ${String(e.id)}`);
				const want: Json = {
					file_name: e.document_name,
					status: 'FINISHED',
					message_id: '<invoices-2026-11@mail.example.com>',
					...INVOICES[String(e.document_name)],
				};
				for (const [k, v] of Object.entries(want))
					expectEqual(mine[0][k], v, `run ${n}: row of ${String(e.id)}: ${k}`);
			}
		}
		const ids = (list: Json[]): unknown[] => list.map((x) => x.id);
		expectEqual(
			ids(second.extractions),
			ids(first.extractions),
			"run 2's extractions (Reuse Existing Job finds run 1's)",
		);
		expectEqual(
			ids(second.rows).sort(),
			ids(first.rows).sort(),
			"the rows' ids after run 2 (the upsert updates them)",
		);
	});
}
