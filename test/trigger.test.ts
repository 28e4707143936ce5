/**
 * The Extraction Service Trigger through n8n-core's real poll path (scripts/engine.ts
 * `createTriggerHarness`: PollContext + PollTriggerExecutor, static data kept on the Workflow between
 * polls), against the emulator. Jobs are created through the action node (`runNode`) or the
 * emulator's HTTP API, and waited for until final before a poll that should see them; no assertion
 * depends on timing.
 *
 * The tests that depend on where new items appear in a list run under both list orders the
 * emulator offers (`setListOrder`): the reference does not show the order.
 */
import { inspect } from 'node:util';

import type { IDataObject, INodeExecutionData } from 'n8n-workflow';

import { heldAnswer, type ListOrder } from '../emulator';
import { createTriggerHarness, type PollRun, type TriggerHarness } from '../scripts/engine';
import { markOf, packMarks } from '../nodes/ExtractionServiceTrigger/poll/marks';
import { timestampMs } from '../nodes/ExtractionServiceTrigger/poll/lists';
import { EmulatorClient, form } from './emulator/client';
import { INVOICE_SCHEMA, SAMPLE_PDF, useNode } from './helpers/setup';

const { emulator, runNode, credentialsFor, fileItem } = useNode({ processingMs: 100 });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const byId = (value: string) => ({ __rl: true, mode: 'id', value });
let fileCounter = 0;
const nextName = (prefix: string) => `${prefix}-${++fileCounter}.pdf`;

const api = new EmulatorClient(emulator);

/** One call to the emulator's API with the path family's secret; throws on a non-2xx answer. */
async function call(method: string, path: string, form?: FormData) {
	const answer = await api.send(method, path, { form });
	if (answer.status >= 300)
		throw new Error(`${method} ${path} answered ${answer.status}: ${answer.bytes.toString()}`);
	return (answer.body || {}) as IDataObject;
}

/** A multipart form with the sample invoice under `field` and some text fields. */
const pdfForm = (field: string, name: string, fields: Record<string, string> = {}): FormData =>
	form({ [field]: { name, bytes: SAMPLE_PDF }, ...fields });

/** Reads a job until its status is final (`§v0-3`, `§unversioned-3`). */
const settle = async (path: string) => (await api.poll(path)).body as IDataObject;

/** Options of a job the emulator makes: its outcome, and whether it waits (test controls in `metadata`). */
interface JobOptions {
	outcome?: 'ERROR' | 'PARTIAL_FINISHED';
	/** The job stays IN_PROGRESS until the test releases it (`release`); implies `settle: false`. */
	hold?: boolean;
	metadata?: IDataObject;
	/** Wait until the job is final (default true). */
	settle?: boolean;
}

const controls = (options: JobOptions): IDataObject => ({
	emulator_processing_ms: 0,
	...(options.hold ? { emulator_hold: true } : {}),
	...(options.outcome ? { emulator_outcome: options.outcome } : {}),
	...options.metadata,
});

/**
 * A job of the sample invoice named `<prefix>-<n>.pdf` created at `path` (`/v0/parsing` or
 * `/extract/`), final unless `options` say otherwise.
 */
async function createJob(
	path: string,
	prefix: string,
	options: JobOptions,
	fields: Record<string, string> = {},
): Promise<IDataObject> {
	const metadata = JSON.stringify(controls(options));
	const upload = pdfForm('document', nextName(prefix), { ...fields, metadata });
	const created = await call('POST', path, upload);
	if (options.settle === false || options.hold) return created;
	return await settle(path.endsWith('/') ? `${path}${created.id}/` : `${path}/${created.id}`);
}

/** An extraction (`POST /extract/`, `§unversioned-4.2`) with the Invoice schema. */
const extraction = async (options: JobOptions = {}) =>
	await createJob('/extract/', 'invoice', options, { server: 'EU-1', schema: INVOICE_SCHEMA });

/** A parsing of an uploaded file (`POST /v0/parsing`, `§v0-4.5`). */
const parsing = async (options: JobOptions = {}, prefix = 'scan') =>
	await createJob('/v0/parsing', prefix, options);

/** Makes held jobs final (the emulator decides when a job finishes, not a processing time). */
function release(jobs: IDataObject[] | string[]): void {
	emulator().releaseJobs(jobs.map((job) => (typeof job === 'string' ? job : String(job.id))));
}

/** An uploaded document (`POST /v0/documents`, `§v0-4.1`), named `<prefix>-<n>.pdf`. */
async function documentUpload(prefix = 'upload'): Promise<IDataObject> {
	return await call('POST', '/v0/documents', pdfForm('file', nextName(prefix)));
}

/** A trigger for `event` with the emulator's credentials (mutable: a test may swap a secret). */
function trigger(
	event: string,
	parameters: IDataObject = {},
	credentials = credentialsFor(),
): TriggerHarness {
	return createTriggerHarness({ parameters: { event, ...parameters }, credentials });
}

/** Runs a poll and fails the test with the poll's error, if any. */
async function ok(run: Promise<PollRun>): Promise<INodeExecutionData[]> {
	const result = await run;
	if (result.error) throw result.error;
	return result.items;
}

const ids = (items: INodeExecutionData[]) => items.map((item) => String(item.json.id));

/**
 * Polls until every id in `expected` has fired, collecting every id fired on the way, then polls
 * `extraPolls` more times; at most `maxPolls` polls. Returns every id fired, repetitions included,
 * so a test can check each fired exactly once.
 */
async function pollUntilFired(
	harness: TriggerHarness,
	expected: string[],
	maxPolls = 30,
	extraPolls = 2,
): Promise<string[]> {
	const fired: string[] = [];
	for (let n = 0; n < maxPolls && !expected.every((id) => fired.includes(id)); n++) {
		fired.push(...ids(await ok(harness.poll())));
		if (!expected.every((id) => fired.includes(id))) await sleep(50);
	}
	for (let n = 0; n < extraPolls; n++) fired.push(...ids(await ok(harness.poll())));
	return fired;
}

const sorted = (values: string[]) => [...values].sort();

/** `fired`, then what polls fire until every one of `expected` has fired (see pollUntilFired). */
const withTheRest = async (harness: TriggerHarness, fired: string[], expected: string[]) => [
	...fired,
	...(await pollUntilFired(
		harness,
		expected.filter((id) => !fired.includes(id)),
	)),
];

/**
 * With pages of 1, the first poll reads the new extractions on 45 pages (a poll reads up to 1,000
 * pages, `MAX_WINDOW_PAGES`) and fires each once; the next poll fires nothing again.
 */
async function firesAcrossPages(harness: TriggerHarness, made: string[]): Promise<void> {
	emulator().setMaxPageSize(1);
	expect(sorted(ids(await ok(harness.poll())))).toEqual(sorted(made));
	expect(ids(await ok(harness.poll()))).toEqual([]);
}

async function batchTrigger(name: string) {
	const harness = trigger('extractionFinished', { filters: { metaKey: 'batch', metaValue: name } });
	await ok(harness.activate());
	const metadata = { batch: name };
	const held = async (n: number) =>
		await Promise.all(
			Array.from({ length: n }, async () => await extraction({ hold: true, metadata })),
		);
	return {
		harness,
		async final(n: number): Promise<string[]> {
			const made: string[] = [];
			for (let i = 0; i < n; i++) made.push(String((await extraction({ metadata })).id));
			return made;
		},
		held: async (n: number) => (await held(n)).map((job) => String(job.id)),
	};
}

/** A describe for each list order the emulator offers (the reference does not show the order). */
function describeListOrders(title: string, tests: (order: ListOrder) => void): void {
	describe.each<ListOrder>(['newest-first', 'oldest-first'])(`${title}, list %s`, (order) => {
		beforeAll(() => emulator().setListOrder(order));
		afterAll(() => emulator().setListOrder('newest-first'));
		afterEach(() => emulator().setMaxPageSize(100));
		tests(order);
	});
}

describeListOrders('Extraction Finished / Failed', (order) => {
	it('emits nothing old after activation; each new finished extraction fires exactly once across many polls', async () => {
		const old = [await extraction(), await extraction()];
		const harness = trigger('extractionFinished');
		const activation = await harness.activate();
		expect(activation.error).toBeUndefined();
		expect(activation.emitted).toBe(false);
		expect(await ok(harness.poll())).toEqual([]);

		// Three invoices through the action node (Extraction → Create, waiting for them).
		const input = await Promise.all(
			[1, 2, 3].map(
				async () => await fileItem({ data: { bytes: SAMPLE_PDF, fileName: nextName('node') } }),
			),
		);
		const created = await runNode(
			{
				resource: 'extraction',
				operation: 'create',
				binaryPropertyName: 'data',
				server: 'EU-1',
				schema: byId(INVOICE_SCHEMA),
			},
			input,
		);
		expect(created.error).toBeUndefined();
		const createdIds = ids(created.items);
		expect(createdIds).toHaveLength(3);

		const first = await ok(harness.poll());
		expect(sorted(ids(first))).toEqual(sorted(createdIds));
		// Output like Extraction → Get with Simplify: the extracted fields at the top level.
		expect(first[0].json).toMatchObject({
			status: 'FINISHED',
			invoice_number: 'INV-2026-0042',
			currency: 'EUR',
		});
		expect(first[0].json.document_name).toMatch(/^node-\d+\.pdf$/);

		const later = [
			...ids(await ok(harness.poll())),
			...ids(await ok(harness.poll())),
			...ids(await ok(harness.poll())),
		];
		expect(later).toEqual([]);
		const one = await extraction();
		expect(ids(await ok(harness.poll()))).toEqual([one.id]);
		expect(ids(await ok(harness.poll()))).toEqual([]);
		expect(old).toHaveLength(2);
	});

	it('fires each extraction once while pages shift under the poller (page size 2, jobs created between and during polls, finishing out of order)', async () => {
		emulator().setMaxPageSize(2);
		await extraction();
		const harness = trigger('extractionFinished');
		expect((await harness.activate()).emitted).toBe(false);

		const expected: string[] = [];
		const fired: string[] = [];
		// A slow job first, then faster ones: the slow one is pushed deeper while it runs.
		const slow = await extraction({ hold: true });
		expected.push(String(slow.id));
		for (let burst = 0; burst < 3; burst++) {
			const jobs = await Promise.all([1, 2, 3].map(async () => await extraction()));
			expected.push(...jobs.map((job) => String(job.id)));
			fired.push(...ids(await ok(harness.poll())));
		}
		// Two extractions created while a poll is between two list pages: new finished ones first, so
		// the poll reads a second page (newest first: page 2; oldest first: the last page), which the
		// emulator holds until the two were created.
		const burst = await Promise.all([1, 2, 3].map(async () => await extraction()));
		expected.push(...burst.map((job) => String(job.id)));
		const secondPage = heldAnswer();
		emulator().injectFaults({ method: 'GET', path: '/extract/' }, [{}, secondPage.fault]);
		const during = harness.poll();
		await secondPage.arrived;
		const meanwhile = await Promise.all(
			[1, 2].map(async () => await extraction({ settle: false })),
		);
		expected.push(...meanwhile.map((job) => String(job.id)));
		secondPage.release();
		fired.push(...ids(await ok(during)));
		emulator().clearFaults();

		release([slow]);
		for (const job of [slow, ...meanwhile]) await settle(`/extract/${String(job.id)}/`);
		expect(sorted(await withTheRest(harness, fired, expected))).toEqual(sorted(expected));
	});

	it('fires a backlog listed on 45 pages of one item in one poll, each extraction once', async () => {
		const { harness, final } = await batchTrigger(`backlog-${order}`);
		await firesAcrossPages(harness, await final(45));
	});

	it('a burst seen unfinished (more than a poll reads by id) fires whole on the first poll after it finished, read from its list pages', async () => {
		const { harness, held } = await batchTrigger(`burst-${order}`);
		emulator().setMaxPageSize(10);
		const burstIds = await held(60);
		// The poll sees all 60 unfinished and follows them.
		expect(ids(await ok(harness.poll()))).toEqual([]);
		release(burstIds);
		for (const id of burstIds) await settle(`/extract/${id}/`);

		emulator().clearLog();
		const fired = ids(await ok(harness.poll()));
		expect(sorted(fired)).toEqual(sorted(burstIds));
		// Found on the 6 list pages, then each read once by id for its data: no read by id to find them.
		const readsById = emulator().requests.filter(
			(r) => r.method === 'GET' && /^\/extract\/[^/]+\/$/.test(r.path),
		).length;
		expect(readsById).toBe(burstIds.length);
		expect(await ok(harness.poll())).toEqual([]);
	});

	it('a burst seen unfinished still fires each extraction once when older ones were deleted meanwhile (positions moved)', async () => {
		const { harness, final, held } = await batchTrigger(`burst-deleted-${order}`);
		emulator().setMaxPageSize(10);
		const older = await final(12);
		const burstIds = await held(50);
		const first = ids(await ok(harness.poll()));
		expect(sorted(first)).toEqual(sorted(older));
		for (const id of older) await call('DELETE', `/extract/${id}/`);
		release(burstIds);
		for (const id of burstIds) await settle(`/extract/${id}/`);
		expect(sorted(await pollUntilFired(harness, burstIds, 5))).toEqual(sorted(burstIds));
	});

	it('fires new extractions once when as many old ones were deleted meanwhile (the count did not change)', async () => {
		const { harness, final } = await batchTrigger(`deletions-${order}`);
		const old = await final(5);
		expect(sorted(ids(await ok(harness.poll())))).toEqual(sorted(old));
		emulator().setMaxPageSize(2);

		for (const id of old.slice(0, 3)) await call('DELETE', `/extract/${id}/`);
		const fresh = await final(3);
		expect(sorted(await pollUntilFired(harness, fresh, 3))).toEqual(sorted(fresh));
	});

	it('a workflow that deletes each extraction it handled: the next poll finds where it stopped by date, fires each new one once, replays nothing', async () => {
		const { harness, final } = await batchTrigger(`delete-after-${order}`);
		const make = async () => (await final(1))[0];
		// Twelve handled; the newest eight (every one the trigger names as where it stopped) deleted,
		// the four older stay: the next poll must find the boundary between them and the new ones.
		const handled: string[] = [];
		for (let n = 0; n < 12; n++) handled.push(await make());
		expect(sorted(ids(await ok(harness.poll())))).toEqual(sorted(handled));
		for (const id of handled.slice(4)) await call('DELETE', `/extract/${id}/`);
		const fired: string[] = [];
		const created: string[] = [];
		for (let round = 0; round < 3; round++) {
			const fresh = [await make(), await make()];
			created.push(...fresh);
			const run = await harness.poll();
			expect(run.error).toBeUndefined();
			const got = ids(run.items);
			fired.push(...got);
			// The workflow deletes what it handled.
			for (const id of got) await call('DELETE', `/extract/${id}/`);
		}
		// Nothing new, and every extraction the edge named deleted: nothing fires again.
		const quiet = await harness.poll();
		expect(quiet.error).toBeUndefined();
		expect(quiet.items).toEqual([]);
		expect(sorted(fired)).toEqual(sorted(created));
	});

	it('fires each extraction once when the first ones listed have dates against the list order (two created together, the second stamped earlier)', async () => {
		const { harness, held } = await batchTrigger(`against-${order}`);
		// Created together: the service stamps the second one 2 s earlier than the first, yet lists it
		// after it (as concurrent creates can be): the two dates point to the wrong order.
		const together = [...(await held(1)), ...(await held(1))];
		emulator().backdate(together[1], 2000);
		expect(ids(await ok(harness.poll()))).toEqual([]);
		const later: string[] = [];
		for (let n = 0; n < 6; n++) later.push(...(await held(1)));
		release(later.filter((_, n) => n % 2 === 0));
		const fired = ids(await ok(harness.poll()));
		const made = [...together, ...later];
		release(made);
		for (const id of made) await settle(`/extract/${id}/`);
		const all = await withTheRest(harness, fired, made);
		expect(sorted(all)).toEqual(sorted(made));
	});

	it('fires each new extraction once when the two listed at activation have dates against the list order', async () => {
		const name = `against-at-activation-${order}`;
		const metadata = { batch: name };
		const first = String((await extraction({ metadata })).id);
		const second = String((await extraction({ metadata })).id);
		emulator().backdate(second, 2000);
		const harness = trigger('extractionFinished', {
			filters: { metaKey: 'batch', metaValue: name },
		});
		await ok(harness.activate());
		const later: string[] = [];
		for (let n = 0; n < 6; n++) later.push(String((await extraction({ metadata })).id));
		const all = await pollUntilFired(harness, later);
		expect(sorted(all)).toEqual(sorted(later));
		expect(all).not.toContain(first);
	});

	it('fires each extraction once when the first poll after an empty list reads it while more are created (a page held until two were created)', async () => {
		const { harness, final } = await batchTrigger(`growing-${order}`);
		emulator().setMaxPageSize(2);
		const before = await final(5);
		// The poll's second list page waits until two more extractions exist: newest first, every
		// page after page 1 then holds items two places older than page 1's count said.
		const secondPage = heldAnswer();
		emulator().injectFaults({ method: 'GET', path: '/extract/' }, [{}, secondPage.fault]);
		const during = harness.poll();
		await secondPage.arrived;
		const meanwhile = await final(2);
		secondPage.release();
		const fired = ids(await ok(during));
		emulator().clearFaults();
		const made = [...before, ...meanwhile];
		const all = await withTheRest(harness, fired, made);
		expect(sorted(all)).toEqual(sorted(made));
	});

	it("fires failed extractions on Extraction Failed only, with the service's reason", async () => {
		const failed = trigger('extractionFailed');
		const finished = trigger('extractionFinished');
		await ok(failed.activate());
		await ok(finished.activate());
		const bad = await extraction({
			outcome: 'ERROR',
			metadata: { emulator_error: 'unreadable scan' },
		});
		const good = await extraction();

		const failures = await ok(failed.poll());
		expect(ids(failures)).toEqual([bad.id]);
		expect(failures[0].json).toMatchObject({
			status: 'ERROR',
			error: 'Emulated processing failure: unreadable scan',
		});
		expect(ids(await ok(finished.poll()))).toEqual([good.id]);
		expect(await ok(failed.poll())).toEqual([]);
		expect(await ok(finished.poll())).toEqual([]);
	});

	it('manual mode returns the most recent matching extraction and does not move the cursor', async () => {
		const harness = trigger('extractionFinished', {
			filters: { metaKey: 'mailbox', metaValue: `inbox-${order}` },
		});
		await ok(harness.activate());
		const before = harness.staticData();
		const earlier = await extraction({ metadata: { mailbox: `inbox-${order}` } });
		const latest = await extraction({ metadata: { mailbox: `inbox-${order}` } });
		await extraction({ metadata: { mailbox: 'other' } });

		const sample = await harness.fetchTestEvent();
		expect(sample.error).toBeUndefined();
		expect(ids(sample.items)).toEqual([latest.id]);
		expect(sample.items[0].json.invoice_number).toBe('INV-2026-0042');
		expect(harness.staticData()).toEqual(before);

		// The cursor did not move: the next poll still fires both, and only the filtered ones.
		expect(sorted(ids(await ok(harness.poll())))).toEqual(
			sorted([String(earlier.id), String(latest.id)]),
		);
	});
});

describe('Extraction trigger: failing polls keep the cursor', () => {
	afterEach(() => emulator().clearFaults());

	it('a 401 (expired token, secrets echoed back) fails the poll with a clear message, keeps the state, and the next good poll fires each job once', async () => {
		const credentials = credentialsFor();
		const harness = trigger('extractionFinished', {}, credentials);
		await ok(harness.activate());
		const job = await extraction();
		const before = harness.staticData();

		credentials.extractionServiceTokenApi.token = emulator().expiredToken;
		const expired = await harness.poll();
		expect(expired.emitted).toBe(false);
		expect(expired.error?.message).toBe('The token has expired');
		expect(harness.staticData()).toEqual(before);

		credentials.extractionServiceTokenApi.token = emulator().token;
		emulator().injectFaults({ method: 'GET', path: '/extract/' }, [
			{ status: 401, echoHeaders: true },
		]);
		const echoed = await harness.poll();
		expect(echoed.error?.message).toBe('The token is missing or invalid');
		expect(inspect(echoed.error, { depth: 10 })).toContain('[redacted]');
		expect(inspect(echoed.error, { depth: 10 })).not.toContain(emulator().token);
		expect(harness.staticData()).toEqual(before);

		expect(ids(await ok(harness.poll()))).toEqual([job.id]);
		expect(await ok(harness.poll())).toEqual([]);
	});

	it('a 5xx on the list fails the poll (after retries) and keeps the state; on the reads by id it leaves those jobs for the next poll (issue 31 item 6); the next good poll fires each job once', async () => {
		const harness = trigger('extractionFinished');
		await ok(harness.activate());
		const jobs = [await extraction(), await extraction()];
		const before = harness.staticData();

		emulator().injectFaults({ method: 'GET', path: '/extract/' }, [
			{ status: 503, retryAfter: '0', forever: true },
		]);
		const listFails = await harness.poll();
		expect(listFails.error?.message).toMatch(/503/);
		expect(harness.staticData()).toEqual(before);
		const listAttempts = emulator().requests.filter(
			(r) => r.path === '/extract/' && r.status === 503,
		).length;
		expect(listAttempts).toBe(4); // the first try and the client's 3 retries

		emulator().clearFaults();
		emulator().injectFaults({ method: 'GET', path: /^\/extract\/[0-9a-f-]+\/$/ }, [
			{ status: 502, retryAfter: '0', forever: true },
		]);
		// Each job whose read failed waits for the next poll (followed, one failure counted): no error
		// until a job's reads failed 3 polls in a row (test/trigger-stuck.test.ts).
		const readFails = await harness.poll();
		expect(readFails.error).toBeUndefined();
		expect(readFails.items).toEqual([]);
		expect(emulator().requests.filter((r) => r.status === 502).length).toBe(8); // 2 jobs × 4 tries

		emulator().clearFaults();
		expect(sorted(ids(await ok(harness.poll())))).toEqual(
			sorted(jobs.map((job) => String(job.id))),
		);
		expect(await ok(harness.poll())).toEqual([]);
	});
});

describeListOrders('Document Uploaded', (order) => {
	it('emits nothing old after activation; each upload fires exactly once', async () => {
		await documentUpload();
		const harness = trigger('documentUploaded');
		expect((await harness.activate()).emitted).toBe(false);
		expect(await ok(harness.poll())).toEqual([]);

		const uploads = [await documentUpload(), await documentUpload(), await documentUpload()];
		const fired = await ok(harness.poll());
		expect(sorted(ids(fired))).toEqual(sorted(uploads.map((doc) => String(doc.id))));
		const created = fired.map((item) => String(item.json.created_at));
		expect(created).toEqual([...created].sort()); // oldest first
		const firstUpload = fired.find((item) => item.json.id === uploads[0].id);
		expect(firstUpload?.json.file_url_absolute).toBe(
			`${emulator().url}/v0/documents/${String(uploads[0].id)}/download`,
		);
		expect(await ok(harness.poll())).toEqual([]);
		const last = await documentUpload();
		expect(ids(await ok(harness.poll()))).toEqual([last.id]);
		expect(await ok(harness.poll())).toEqual([]);
	});

	it("fires once a document whose created_at is minutes before the activation (a service clock behind n8n's)", async () => {
		const harness = trigger('documentUploaded');
		await ok(harness.activate());
		expect(await ok(harness.poll())).toEqual([]);
		const skewed = await documentUpload();
		emulator().backdate(String(skewed.id), 3 * 60_000);
		expect(ids(await ok(harness.poll()))).toEqual([skewed.id]);
		expect(await ok(harness.poll())).toEqual([]);
	});

	it('reads a backlog of 150 pages (pages of 1) in one poll, each document once', async () => {
		const harness = trigger('documentUploaded', { filters: { search: `backlog-${order}` } });
		await ok(harness.activate());
		const uploads: string[] = [];
		for (let n = 0; n < 150; n++)
			uploads.push(String((await documentUpload(`backlog-${order}`)).id));
		// Pages of 1: 150 pages, read whole in one poll (up to half of n8n's poll budget).
		emulator().setMaxPageSize(1);
		try {
			expect(sorted(ids(await ok(harness.poll())))).toEqual(sorted(uploads));
			expect(await ok(harness.poll())).toEqual([]);
		} finally {
			emulator().setMaxPageSize(100);
		}
	});
});

describe('Parsing Finished / Failed', () => {
	it('fires finished (also partially) and failed parsings once each, on their own events, also one that finishes polls later', async () => {
		const finished = trigger('parsingFinished');
		const failed = trigger('parsingFailed');
		await ok(finished.activate());
		await ok(failed.activate());
		expect(await ok(finished.poll())).toEqual([]);

		const slow = await parsing({ hold: true });
		const done = await parsing();
		const partial = await parsing({ outcome: 'PARTIAL_FINISHED' });
		const broken = await parsing({ outcome: 'ERROR' });

		const firstFinished = await ok(finished.poll());
		expect(sorted(ids(firstFinished))).toEqual(sorted([String(done.id), String(partial.id)]));
		const partialItem = firstFinished.find((item) => item.json.id === partial.id);
		expect(partialItem?.json).toMatchObject({
			status: 'PARTIAL_FINISHED',
			pages_failed: 1,
			error: '1 page(s) could not be processed',
		});
		expect(typeof partialItem?.json.markdown_content).toBe('string'); // the full parsing, read by id
		const failures = await ok(failed.poll());
		expect(ids(failures)).toEqual([broken.id]);
		expect(failures[0].json.status).toBe('ERROR');

		release([slow]);
		await settle(`/v0/parsing/${String(slow.id)}`);
		expect(await pollUntilFired(finished, [String(slow.id)])).toEqual([slow.id]);
		expect(await ok(failed.poll())).toEqual([]);
	});

	it('a parsing still running when the window moves past its creation fires once when it finishes (followed by id)', async () => {
		const harness = trigger('parsingFinished');
		await ok(harness.activate());
		const slow = await parsing({ hold: true });
		expect(await ok(harness.poll())).toEqual([]);
		// A parsing dated 11 minutes after the slow one: the window (10 minutes behind the newest
		// item) moves past the slow parsing, which is then followed by id.
		const later = String((await parsing()).id);
		emulator().backdate(later, -11 * 60_000);
		await settle(`/v0/parsing/${later}`);
		expect(ids(await ok(harness.poll()))).toEqual([later]);
		const state = harness.staticData();
		expect(Date.parse(String(state.from))).toBeGreaterThan(Date.parse(String(slow.created_at)));
		expect(state.follow).toEqual([slow.id]);
		release([slow]);
		await settle(`/v0/parsing/${String(slow.id)}`);
		expect(await pollUntilFired(harness, [String(slow.id)])).toEqual([slow.id]);
		expect(harness.staticData().follow).toEqual([]);
		emulator().backdate(later, 11 * 60_000); // back in the present, for the tests after this one
	});

	it('a state of another version (version 2, written before the trigger was released) starts afresh: what exists does not fire, a new parsing does', async () => {
		const fresh = trigger('parsingFinished');
		await ok(fresh.activate());
		const { fingerprint } = fresh.staticData();
		const handled = await parsing();
		const saved = {
			v: 2,
			strategy: 'window',
			fingerprint,
			from: String(handled.created_at),
			tail: packMarks([markOf(String(handled.id), timestampMs(handled.created_at) as number)]),
			pending: '',
		};
		const upgraded = createTriggerHarness({
			parameters: { event: 'parsingFinished' },
			credentials: credentialsFor(),
			staticData: { 'node:Extraction Service Trigger': saved },
		});
		expect(await ok(upgraded.activate())).toEqual([]);
		expect(upgraded.staticData()).toMatchObject({ v: 3, follow: [] });
		const later = await parsing();
		expect(ids(await ok(upgraded.poll()))).toEqual([later.id]);
		expect(await ok(upgraded.poll())).toEqual([]);
	});

	it('manual mode returns the most recent finished parsing in full and leaves the state alone; with nothing matching it says so', async () => {
		const harness = trigger('parsingFinished', { filters: { search: 'no-such-file' } });
		await ok(harness.activate());
		const before = harness.staticData();
		const none = await harness.fetchTestEvent();
		expect(none.error?.message).toBe(
			'No parsing for the event "Parsing Finished" was found with these filters',
		);

		const latest = await parsing();
		const sample = await trigger('parsingFinished').fetchTestEvent();
		expect(ids(sample.items)).toEqual([latest.id]);
		expect(sample.items[0].json.status).toBe('FINISHED');
		expect(typeof sample.items[0].json.markdown_content).toBe('string');
		expect(harness.staticData()).toEqual(before);
	});
});

describe('Include Existing Since and a changed configuration', () => {
	it('with Include Existing Since, activation outputs what exists since that date, once', async () => {
		const since = new Date(Date.now() - 1000).toISOString();
		const existing = [await documentUpload(), await documentUpload()];
		const withSince = trigger('documentUploaded', { options: { includeExistingSince: since } });
		const activation = await ok(withSince.activate());
		expect(ids(activation)).toEqual(expect.arrayContaining(existing.map((doc) => String(doc.id))));
		expect(await ok(withSince.poll())).toEqual([]);

		const finishedBefore = await extraction();
		const extractions = trigger('extractionFinished', { options: { includeExistingSince: since } });
		expect(ids(await ok(extractions.activate()))).toContain(finishedBefore.id);
		expect(await ok(extractions.poll())).toEqual([]);
	});

	it('a filter edit goes on from the saved state (issue 31 item 8): a document uploaded before the edit and not yet fired fires once; another Include Existing Since starts afresh', async () => {
		const first = trigger('documentUploaded');
		await ok(first.activate());
		const between = await documentUpload();
		const saved = first.staticData();
		const savedFingerprint = saved.fingerprint;
		const refiltered = createTriggerHarness({
			parameters: { event: 'documentUploaded', filters: { search: String(between.filename) } },
			credentials: credentialsFor(),
			staticData: { 'node:Extraction Service Trigger': saved },
		});
		expect(ids(await ok(refiltered.activate()))).toEqual([between.id]);
		expect(await ok(refiltered.poll())).toEqual([]);
		expect(refiltered.staticData().fingerprint).not.toBe(savedFingerprint);

		const since = createTriggerHarness({
			parameters: {
				event: 'documentUploaded',
				options: { includeExistingSince: new Date(Date.now() + 3_600_000).toISOString() },
			},
			credentials: credentialsFor(),
			staticData: { 'node:Extraction Service Trigger': refiltered.staticData() },
		});
		await documentUpload();
		expect(await ok(since.activate())).toEqual([]);
		expect(since.staticData().fingerprint).not.toBe(refiltered.staticData().fingerprint);
	});
});

/**
 * Two polls of `harness`, the second started and finished while the first waits for its answer to
 * `GET /v0/documents` (held by the emulator until then); the second must do nothing. Returns what
 * the two emitted (the harness cannot tell whose a poll's emit is while another runs).
 */
async function overlappingPolls(harness: TriggerHarness): Promise<INodeExecutionData[][]> {
	const held = heldAnswer();
	emulator().injectFaults({ method: 'GET', path: '/v0/documents' }, [held.fault]);
	const before = harness.emits().length;
	const first = harness.poll();
	await held.arrived;
	expect(await harness.poll()).toEqual({ items: [], emitted: false });
	held.release();
	await first;
	return harness.emits().slice(before);
}

/** Two new documents, then two polls that overlap: one execution with each, once; then nothing. */
async function overlapFiresOnce(harness: TriggerHarness, prefix: string): Promise<void> {
	expect((await harness.activate()).error).toBeUndefined();
	const fresh = [
		String((await documentUpload(prefix)).id),
		String((await documentUpload(prefix)).id),
	];
	const emitted = await overlappingPolls(harness);
	expect(emitted).toHaveLength(1);
	expect(sorted(ids(emitted[0]))).toEqual(sorted(fresh));
	expect(await ok(harness.poll())).toEqual([]);
}

describe('Polls that overlap', () => {
	// n8n 2.41 starts a node's next poll even while the previous one still runs (a slow service).
	it('a poll started while the previous one still runs does nothing: each job fires once', async () => {
		await overlapFiresOnce(trigger('documentUploaded'), 'overlap');
	});
});

describe("n8n's durable cursors (each poll on its own copy of the static data, committed with its execution)", () => {
	const durable = (event: string, parameters: IDataObject = {}) =>
		createTriggerHarness({
			parameters: { event, ...parameters },
			credentials: credentialsFor(),
			durableCursors: true,
		});

	it('each job fires once for every strategy; a failing poll commits nothing and the next good poll fires each job once', async () => {
		const extractions = durable('extractionFinished', {
			filters: { metaKey: 'batch', metaValue: 'durable' },
		});
		const documents = durable('documentUploaded', { filters: { search: 'upload-durable' } });
		const parsings = durable('parsingFinished', { filters: { search: 'parsed-durable' } });
		for (const harness of [extractions, documents, parsings])
			expect((await harness.activate()).error).toBeUndefined();
		const made = {
			extractions: [String((await extraction({ metadata: { batch: 'durable' } })).id)],
			documents: [String((await documentUpload('upload-durable')).id)],
			parsings: [String((await parsing({}, 'parsed-durable')).id)],
		};
		expect(ids(await ok(extractions.poll()))).toEqual(made.extractions);
		expect(ids(await ok(documents.poll()))).toEqual(made.documents);
		expect(ids(await ok(parsings.poll()))).toEqual(made.parsings);

		const more = [String((await extraction({ metadata: { batch: 'durable' } })).id)];
		emulator().injectFaults(
			{ method: 'GET', path: '/extract/' },
			Array.from({ length: 4 }, () => ({ status: 500 })),
		); // one poll: 1 + 3 retries
		expect((await extractions.poll()).error).toBeDefined();
		emulator().clearFaults();
		expect(ids(await ok(extractions.poll()))).toEqual(more);
		for (const harness of [extractions, documents, parsings])
			expect(await ok(harness.poll())).toEqual([]);
	});

	it('a poll started while the previous one still runs does nothing (the copies are not shared): each job fires once', async () => {
		const harness = durable('documentUploaded', { filters: { search: 'overlap-durable' } });
		await overlapFiresOnce(harness, 'overlap-durable');
	});
});

describe.each([false, true])(
	'A document dated behind the cursor (durable cursors: %s)',
	(durableCursors) => {
		const harnessFor = (search: string) =>
			createTriggerHarness({
				parameters: { event: 'documentUploaded', filters: { search } },
				credentials: credentialsFor(),
				durableCursors,
			});

		it('inside the 10-minute margin it fires once; further behind, the poll fails once naming how many and from when, then goes on', async () => {
			const prefix = `behind-${String(durableCursors)}`;
			await documentUpload(prefix);
			const harness = harnessFor(prefix);
			expect((await harness.activate()).error).toBeUndefined();
			const first = String((await documentUpload(prefix)).id);
			expect(ids(await ok(harness.poll()))).toEqual([first]);

			// Listed late by 4 minutes: inside the window, so it fires.
			const late = String((await documentUpload(prefix)).id);
			emulator().backdate(late, 4 * 60_000);
			expect(ids(await ok(harness.poll()))).toEqual([late]);
			expect(await ok(harness.poll())).toEqual([]);

			// Listed 15 minutes behind: before the window; reported once, not output.
			const far = String((await documentUpload(prefix)).id);
			emulator().backdate(far, 15 * 60_000);
			const failed = await harness.poll();
			expect(failed.error?.message).toMatch(
				/^Document appeared dated before the trigger's window \(\d{4}-\d\d-\d\dT[\d:.]+Z\)$/,
			);
			expect(String(failed.error?.description)).toContain('Created Before');
			const after = String((await documentUpload(prefix)).id);
			expect(ids(await ok(harness.poll()))).toEqual([after]);
			expect(await ok(harness.poll())).toEqual([]);
		});
	},
);
