/**
 * Exactly once, even when n8n runs the same input again: the Reuse Existing Job option
 * (helpers/reuse.ts). A re-run of the same input creates no new job; a job that failed is created
 * again; the /v0 lookup (loose `search`) is made exact by reading each candidate.
 */
import type { INodeExecutionData } from 'n8n-workflow';

import { SAMPLE_PDF, useNode } from './helpers/setup';

const { emulator, runNode, apiRequests, fileItem } = useNode();
afterEach(() => emulator().clearFaults());

const reuse = (value: string, key = 'n8nJobKey') => ({ reuseExistingJob: { key: { key, value } } });
const createExtraction = (options: Record<string, unknown>) => ({
	resource: 'extraction',
	operation: 'create',
	server: 'EU-1',
	options: { allBinaryProperties: true, ...options },
});
const posts = (path: string) => apiRequests().filter((r) => r.method === 'POST' && r.path === path);
const mail = (id: string, names: string[]) =>
	fileItem(
		Object.fromEntries(
			names.map((name, i) => [`attachment_${i}`, { bytes: SAMPLE_PDF, fileName: name }]),
		),
		{ messageId: id },
	);
const ids = (items: INodeExecutionData[]) => items.map((i) => i.json.id);
/** The metadata a logged multipart create carried (the emulator logs form fields as text). */
const metadataOf = (request: ReturnType<typeof posts>[number]) => {
	const body = request.body as { kind: string; fields: Record<string, string> } | undefined;
	if (body?.kind !== 'form') throw new Error(`expected a form body, got ${JSON.stringify(body)}`);
	return JSON.parse(body.fields.metadata) as Record<string, unknown>;
};

describe('Reuse Existing Job: Extraction → Create', () => {
	it('a re-run of the same mail creates 0 new jobs and outputs the same extractions', async () => {
		const parameters = createExtraction({
			allBinaryProperties: true,
			...reuse('={{ $json.messageId }}'),
		});
		const first = await runNode(parameters, [
			await mail('<m1@example.com>', ['a.pdf', 'b.pdf', 'c.pdf']),
		]);
		expect(first.error).toBeUndefined();
		expect(posts('/extract/')).toHaveLength(3);
		// Each attachment carries its own key on the wire: the value, ':' and the file name.
		expect(
			posts('/extract/')
				.map((r) => metadataOf(r).n8nJobKey)
				.sort(),
		).toEqual(['<m1@example.com>:a.pdf', '<m1@example.com>:b.pdf', '<m1@example.com>:c.pdf']);

		emulator().clearLog();
		const again = await runNode(parameters, [
			await mail('<m1@example.com>', ['a.pdf', 'b.pdf', 'c.pdf']),
		]);
		expect(again.error).toBeUndefined();
		expect(posts('/extract/')).toHaveLength(0);
		expect(ids(again.items)).toEqual(ids(first.items));
		expect(again.items.map((i) => i.json.status)).toEqual(['FINISHED', 'FINISHED', 'FINISHED']);
	});

	it("keeps the user's own metadata beside the key; another mail gets its own jobs", async () => {
		const parameters = createExtraction({
			metadata: '{"source": "mail"}',
			...reuse('={{ $json.messageId }}'),
		});
		await runNode(parameters, [await mail('<m2@example.com>', ['x.pdf'])]);
		expect(metadataOf(posts('/extract/')[0])).toEqual({
			source: 'mail',
			n8nJobKey: '<m2@example.com>:x.pdf',
		});
		emulator().clearLog();
		await runNode(parameters, [await mail('<m3@example.com>', ['x.pdf'])]);
		expect(posts('/extract/')).toHaveLength(1);
	});

	it('a job that ended ERROR is not reused: the re-run creates it again', async () => {
		const parameters = createExtraction({
			metadata: '{"emulator_fail_files": ["bad.pdf"]}',
			...reuse('={{ $json.messageId }}'),
		});
		const first = await runNode(parameters, [await mail('<m4@example.com>', ['bad.pdf'])]);
		expect(first.error?.message).toMatch(/failed/);
		emulator().clearLog();
		await runNode(parameters, [await mail('<m4@example.com>', ['bad.pdf'])]);
		expect(posts('/extract/')).toHaveLength(1);
	});

	it("n8n's Retry On Fail (3 items, 1 failing): 9 jobs without the option, 5 with it (only the failing one again)", async () => {
		const items = async () => [
			await mail('<r1@example.com>', ['ok1.pdf']),
			await mail('<r2@example.com>', ['bad.pdf']),
			await mail('<r3@example.com>', ['ok3.pdf']),
		];
		const retry = { retryOnFail: true, maxTries: 3, waitBetweenTries: 0 };
		const failing = { metadata: '{"emulator_fail_files": ["bad.pdf"]}' };
		const without = await runNode(createExtraction(failing), await items(), {
			node: retry,
		});
		expect(without.error?.message).toMatch(/failed/);
		expect(posts('/extract/')).toHaveLength(9);
		emulator().clearLog();
		const withOption = await runNode(
			createExtraction({ ...failing, ...reuse('={{ $json.messageId }}') }),
			await items(),
			{ node: retry },
		);
		expect(withOption.error?.message).toMatch(/failed/);
		expect(posts('/extract/')).toHaveLength(5);
	});

	it('two attachments with the same file name get keys of their own: both uploaded, a re-run reuses each', async () => {
		const parameters = createExtraction(reuse('={{ $json.messageId }}'));
		const input = async () => [await mail('<m6@example.com>', ['invoice.pdf', 'invoice.pdf'])];
		const first = await runNode(parameters, await input());
		expect(first.error).toBeUndefined();
		// The first file of a name keeps `<value>:<file name>`; a later one of the same name adds #2, #3 …
		// (the two creates run at once: the order they reach the service in is not the node's promise)
		expect(
			posts('/extract/')
				.map((r) => String(metadataOf(r).n8nJobKey))
				.sort(),
		).toEqual(['<m6@example.com>:invoice.pdf', '<m6@example.com>:invoice.pdf#2']);
		expect(new Set(ids(first.items)).size).toBe(2);
		emulator().clearLog();
		const again = await runNode(parameters, await input());
		expect(again.error).toBeUndefined();
		expect(posts('/extract/')).toHaveLength(0);
		expect(ids(again.items)).toEqual(ids(first.items));
	});

	it('the lookup reads every page of candidates: a job behind 21 failed re-runs is still found', async () => {
		const parameters = createExtraction(reuse('<m7@example.com>'));
		const first = await runNode(parameters, [await mail('<m7@example.com>', ['a.pdf'])]);
		expect(first.error).toBeUndefined();
		// 21 failed jobs with the same key, newer than the good one: the list shows them first.
		emulator().seedJobs('extraction', 21, {
			outcome: 'ERROR',
			metadata: { n8nJobKey: '<m7@example.com>:a.pdf' },
		});
		emulator().clearLog();
		const again = await runNode(parameters, [await mail('<m7@example.com>', ['a.pdf'])]);
		expect(again.error).toBeUndefined();
		expect(posts('/extract/')).toHaveLength(0);
		expect(ids(again.items)).toEqual(ids(first.items));
	});

	it('an empty value is refused before any request, naming the option', async () => {
		const { error } = await runNode(createExtraction(reuse('')), [
			await mail('<m5@example.com>', ['a.pdf']),
		]);
		expect(error?.message).toBe('Parameter "Reuse Existing Job" has an empty Metadata Value');
		expect(emulator().requests).toEqual([]);
	});
});

describe('Reuse Existing Job: Parsing → Create (/v0: search, then an exact check)', () => {
	const createParsing = (options: Record<string, unknown>) => ({
		resource: 'parsing',
		operation: 'create',
		source: 'binary',
		options,
	});

	it('a re-run creates 0 new parsings; a value that merely contains the key is not taken for it', async () => {
		// A parsing whose key value contains the one looked up below: `search` finds it, the exact check rejects it.
		await runNode(createParsing(reuse('X-p1')), [
			await fileItem({ data: { bytes: SAMPLE_PDF, fileName: 'p.pdf' } }),
		]);
		emulator().clearLog();
		const first = await runNode(createParsing(reuse('p1')), [
			await fileItem({ data: { bytes: SAMPLE_PDF, fileName: 'p.pdf' } }),
		]);
		expect(first.error).toBeUndefined();
		expect(posts('/v0/parsing')).toHaveLength(1);
		emulator().clearLog();
		const again = await runNode(createParsing(reuse('p1')), [
			await fileItem({ data: { bytes: SAMPLE_PDF, fileName: 'p.pdf' } }),
		]);
		expect(posts('/v0/parsing')).toHaveLength(0);
		expect(ids(again.items)).toEqual(ids(first.items));
		expect(
			apiRequests().find((r) => r.path === '/v0/parsing' && r.method === 'GET')?.query,
		).toMatchObject({ search: 'p1:p.pdf' });
	});
});
