/**
 * The check of the activated trigger run (trigger-run.ts). What must hold: every extraction created
 * after the activation with the Metadata Key `batch` that finishes fires exactly once; nothing that
 * finished before the activation fires, nor one without the key or ending ERROR; every row shows its
 * extraction's batch, file and invoice data; a poll failed on purpose (503) was recorded by n8n.
 */
import { preview, type Json } from './n8n-run';

/** An extraction the run created at the emulator. */
export interface CreatedJob {
	id: string;
	file: string;
	/** Its metadata `batch`, if it has one. */
	batch?: string;
	/** Why it was created (for messages): "old", "slow", "during the outage", … */
	role: string;
}

/** One successful execution of the trigger workflow: the rows its row node output. */
export interface FiredExecution {
	id: string;
	mode?: string;
	rows: Json[];
}

export interface TriggerObservation {
	/** Finished before the activation (some with the key): must never fire. */
	before: CreatedJob[];
	/** Created after the activation with the key, ending FINISHED: each must fire once. */
	expected: CreatedJob[];
	/** Created after the activation without the key, or ending ERROR: must not fire. */
	mustNotFire: CreatedJob[];
	executions: FiredExecution[];
	/** Failed executions of the trigger workflow (a failed poll is saved as one). */
	failedExecutions: number;
	/** Whether a poll was failed on purpose (and so at least one failed execution is expected). */
	faultInjected: boolean;
}

export interface TriggerCounts {
	created: number;
	/** Rows over all executions. */
	fired: number;
	/** Rows beyond the first for the same extraction. */
	duplicates: number;
	/** Fired, but finished before the activation. */
	old: number;
	/** Fired, but must not (no key, ERROR) or nobody created it. */
	unexpected: number;
	/** Expected, never fired. */
	missing: number;
}

/** What an invoice file extracts to with the seeded Invoice schema (examples/files/). */
export const INVOICES: Record<
	string,
	{ invoice_number: string; total_amount: number; currency: string }
> = {
	'invoice.pdf': { invoice_number: 'INV-2026-0042', total_amount: 1234.5, currency: 'EUR' },
	'invoice-2.pdf': { invoice_number: 'GX-7781', total_amount: 596, currency: 'GBP' },
};

/** The counts and every problem found (none: the run passed). */
export function evaluateTrigger(obs: TriggerObservation): {
	counts: TriggerCounts;
	problems: string[];
} {
	const problems: string[] = [];
	const rows = obs.executions.flatMap((e) => e.rows.map((row) => ({ execution: e.id, row })));
	const byId = new Map<string, string[]>();
	for (const { execution, row } of rows) {
		const id = typeof row.extraction_id === 'string' ? row.extraction_id : '';
		if (!id) {
			problems.push(`execution ${execution} output a row without extraction_id: ${preview(row)}`);
			continue;
		}
		byId.set(id, [...(byId.get(id) ?? []), execution]);
	}
	const expected = new Map(obs.expected.map((j) => [j.id, j]));
	const before = new Map(obs.before.map((j) => [j.id, j]));
	const mustNot = new Map(obs.mustNotFire.map((j) => [j.id, j]));

	const duplicates = [...byId].filter(([, executions]) => executions.length > 1);
	for (const [id, executions] of duplicates)
		problems.push(
			`extraction ${id} fired ${executions.length} times (executions ${executions.join(', ')})`,
		);
	const old = [...byId.keys()].filter((id) => before.has(id));
	for (const id of old)
		problems.push(
			`extraction ${id} (${before.get(id)?.role}), finished before the activation, fired`,
		);
	const unexpected = [...byId.keys()].filter((id) => !expected.has(id) && !before.has(id));
	for (const id of unexpected) {
		const job = mustNot.get(id);
		problems.push(
			job
				? `extraction ${id} (${job.role}) must not fire, but did`
				: `extraction ${id} fired, but this run never created it`,
		);
	}
	const missing = [...expected.keys()].filter((id) => !byId.has(id));
	for (const id of missing)
		problems.push(
			`extraction ${id} (${expected.get(id)?.role}, ${expected.get(id)?.file}) never fired`,
		);

	// each row shows its extraction: batch from the metadata, the file, the invoice data, FINISHED
	const seen = new Set<string>();
	for (const { execution, row } of rows) {
		const job = expected.get(String(row.extraction_id));
		if (!job || seen.has(job.id)) continue;
		seen.add(job.id);
		const want: Json = {
			batch: job.batch,
			file_name: job.file,
			status: 'FINISHED',
			...INVOICES[job.file],
		};
		for (const [key, value] of Object.entries(want))
			if (JSON.stringify(row[key]) !== JSON.stringify(value))
				problems.push(
					`execution ${execution}, row of ${job.id} (${job.role}): ${key} is ${JSON.stringify(row[key])}, expected ${JSON.stringify(value)}`,
				);
	}
	for (const e of obs.executions)
		if (e.mode && e.mode !== 'trigger')
			problems.push(`execution ${e.id} has mode ${e.mode}, expected trigger`);
	if (obs.faultInjected && obs.failedExecutions === 0)
		problems.push(
			'a poll was failed on purpose (503), but n8n recorded no failed execution of the trigger workflow',
		);

	const counts: TriggerCounts = {
		created: expected.size,
		fired: rows.length,
		duplicates: duplicates.reduce((sum, [, executions]) => sum + executions.length - 1, 0),
		old: old.length,
		unexpected: unexpected.length,
		missing: missing.length,
	};
	if (counts.fired !== counts.created && problems.length === 0)
		problems.push(`${counts.created} created, but ${counts.fired} rows fired`);
	return { counts, problems };
}

/** The run's one-line result: `trigger: <created> created, <fired> fired, <duplicates> duplicates, <old> old`. */
export function triggerLine(counts: TriggerCounts): string {
	const extra = [
		counts.unexpected ? `${counts.unexpected} unexpected` : '',
		counts.missing ? `${counts.missing} missing` : '',
	].filter(Boolean);
	return `trigger: ${counts.created} created, ${counts.fired} fired, ${counts.duplicates} duplicates, ${counts.old} old${extra.length ? ` (${extra.join(', ')})` : ''}`;
}
