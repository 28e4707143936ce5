/**
 * The check of the activated trigger run (scripts/n8n/trigger-check.ts), on made-up observations: it passes a
 * clean run and names each way a trigger can go wrong (fired twice, fired an old job, fired one it
 * must not, missed one, wrong row, no failed poll recorded).
 */
import {
	evaluateTrigger,
	triggerLine,
	type CreatedJob,
	type TriggerObservation,
} from '../../scripts/n8n/trigger-check';

const job = (id: string, file: string, batch: string | undefined, role: string): CreatedJob => ({
	id,
	file,
	batch,
	role,
});
const row = (j: CreatedJob) => ({
	extraction_id: j.id,
	batch: j.batch,
	file_name: j.file,
	status: 'FINISHED',
	...(j.file === 'invoice.pdf'
		? { invoice_number: 'INV-2026-0042', total_amount: 1234.5, currency: 'EUR' }
		: { invoice_number: 'GX-7781', total_amount: 596, currency: 'GBP' }),
});

const OLD = job('old-a', 'invoice.pdf', 'old-1', 'old, with the key');
const A1 = job('a1', 'invoice.pdf', 'invoices-1', 'workflow A');
const A2 = job('a2', 'invoice-2.pdf', 'invoices-1', 'workflow A');
const ERR = job('err', 'invoice.pdf', 'err-1', 'ends ERROR');

function observation(
	executions: TriggerObservation['executions'],
	extra: Partial<TriggerObservation> = {},
): TriggerObservation {
	return {
		before: [OLD],
		expected: [A1, A2],
		mustNotFire: [ERR],
		executions,
		failedExecutions: 1,
		faultInjected: true,
		...extra,
	};
}

describe('evaluateTrigger', () => {
	it('passes when every new job fired once, over several executions', () => {
		const { counts, problems } = evaluateTrigger(
			observation([
				{ id: '1', mode: 'trigger', rows: [row(A1)] },
				{ id: '2', mode: 'trigger', rows: [row(A2)] },
			]),
		);
		expect(problems).toEqual([]);
		expect(triggerLine(counts)).toBe('trigger: 2 created, 2 fired, 0 duplicates, 0 old');
	});

	it('counts a job fired twice as a duplicate', () => {
		const { counts, problems } = evaluateTrigger(
			observation([
				{ id: '1', mode: 'trigger', rows: [row(A1), row(A2)] },
				{ id: '2', mode: 'trigger', rows: [row(A2)] },
			]),
		);
		expect(triggerLine(counts)).toBe('trigger: 2 created, 3 fired, 1 duplicates, 0 old');
		expect(problems).toEqual(['extraction a2 fired 2 times (executions 1, 2)']);
	});

	it('flags an old job, a job that must not fire, a missing one and an unknown id', () => {
		const { counts, problems } = evaluateTrigger(
			observation([
				{
					id: '1',
					mode: 'trigger',
					rows: [row(A1), row(OLD), row(ERR), { ...row(A1), extraction_id: 'zz' }],
				},
			]),
		);
		expect(counts).toMatchObject({ created: 2, old: 1, unexpected: 2, missing: 1, duplicates: 0 });
		expect(problems).toEqual([
			'extraction old-a (old, with the key), finished before the activation, fired',
			'extraction err (ends ERROR) must not fire, but did',
			'extraction zz fired, but this run never created it',
			'extraction a2 (workflow A, invoice-2.pdf) never fired',
		]);
		expect(triggerLine(counts)).toBe(
			'trigger: 2 created, 4 fired, 0 duplicates, 1 old (2 unexpected, 1 missing)',
		);
	});

	it('checks each row against its job', () => {
		const { problems } = evaluateTrigger(
			observation([
				{
					id: '1',
					mode: 'trigger',
					rows: [row(A1), { ...row(A2), batch: null, invoice_number: 'INV-2026-0042' }],
				},
			]),
		);
		expect(problems).toEqual([
			'execution 1, row of a2 (workflow A): batch is null, expected "invoices-1"',
			'execution 1, row of a2 (workflow A): invoice_number is "INV-2026-0042", expected "GX-7781"',
		]);
	});

	it('wants the failed poll recorded when one was injected', () => {
		const rows = [{ id: '1', mode: 'trigger', rows: [row(A1), row(A2)] }];
		expect(evaluateTrigger(observation(rows, { failedExecutions: 0 })).problems).toEqual([
			'a poll was failed on purpose (503), but n8n recorded no failed execution of the trigger workflow',
		]);
		expect(
			evaluateTrigger(observation(rows, { failedExecutions: 0, faultInjected: false })).problems,
		).toEqual([]);
	});
});
