import { createHash } from 'node:crypto';

import { makePdf } from '../emulator/sample-pdf';
import {
	attachments,
	extractCreate,
	extractGet,
	extractWithOptions,
	onDocument,
	parsingCreate,
} from './helpers/params';
import { INVOICE_LINES_SCHEMA, SAMPLE_PDF, SAMPLE_RESULT, useNode } from './helpers/setup';

const { emulator, runNode, apiRequests, fileItem } = useNode();
const sha = (b: Buffer | Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A text PDF with one line of text per page. */
const pdfWithPages = (pages: string[]): Promise<Buffer> => makePdf(pages.map((text) => [text]));

async function uploadDocument(
	extra: Record<string, unknown> = {},
	bytes: Buffer = SAMPLE_PDF,
	fileName = 'invoice.pdf',
) {
	const { items, error } = await runNode(
		{ resource: 'document', operation: 'upload', binaryPropertyName: 'data', ...extra },
		[await fileItem({ data: { bytes, fileName } })],
	);
	if (error) throw error;
	return items[0].json as Record<string, unknown>;
}

describe('Document (§v0-4.1–4.4)', () => {
	it('uploads with a file name override and metadata, and adds the absolute file URL', async () => {
		const doc = await uploadDocument({
			options: { filename: 'renamed.pdf', metadata: '{"source": "email"}' },
		});
		expect(doc).toMatchObject({
			filename: 'renamed.pdf',
			metadata: { source: 'email' },
			page_count: 1,
		});
		expect(doc.file_url_absolute).toBe(`${emulator().url}${String(doc.file_url)}`);
	});

	it('trims pages at upload (First Page / Last Page)', async () => {
		const doc = await uploadDocument(
			{ options: { pdfPageStart: 2, pdfPageEnd: 3 } },
			await pdfWithPages(['one', 'two', 'three', 'four']),
			'four.pdf',
		);
		expect(doc.page_count).toBe(2);
		expect(apiRequests().find((r) => r.method === 'POST')?.query).toEqual({
			pdf_page_start: '2',
			pdf_page_end: '3',
		});
	});

	it('gets a document by id', async () => {
		const doc = await uploadDocument();
		const { items } = await runNode(onDocument('get', doc.id));
		expect(items[0].json).toMatchObject({ id: doc.id, filename: 'invoice.pdf' });
	});

	it("downloads through the 302: the same bytes, the document's name and MIME type, and no key sent to the file host", async () => {
		const doc = await uploadDocument({}, SAMPLE_PDF, 'original-invoice.pdf');
		emulator().clearLog();
		const { items, error } = await runNode(
			onDocument('download', doc.id, { binaryPropertyName: 'file' }),
		);
		expect(error).toBeUndefined();
		const binary = items[0].binary!.file;
		expect(binary.fileName).toBe('original-invoice.pdf');
		expect(binary.mimeType).toBe('application/pdf');
		const { Container } = await import('@n8n/di');
		const { BinaryDataService } = await import('n8n-core');
		expect(sha(await Container.get(BinaryDataService).getAsBuffer(binary))).toBe(sha(SAMPLE_PDF));
		const fileHits = apiRequests('files');
		expect(fileHits).toHaveLength(1);
		expect(fileHits[0].headers['x-api-key']).toBeUndefined();
		expect(apiRequests().find((r) => r.path.endsWith('/download'))?.headers['x-api-key']).toBe(
			emulator().apiKey,
		);
	});

	it('Get Many with Return All follows `next` over 3 pages when the service caps the page size', async () => {
		for (const n of [1, 2, 3, 4, 5])
			await uploadDocument({
				options: { filename: `paged-${n}.pdf`, metadata: '{"run": "pagination"}' },
			});
		emulator().setMaxPageSize(2);
		emulator().clearLog();
		try {
			const { items } = await runNode({
				resource: 'document',
				operation: 'getAll',
				returnAll: true,
				filters: { search: 'pagination' },
			});
			expect(items.map((i) => i.json.filename).sort()).toEqual([
				'paged-1.pdf',
				'paged-2.pdf',
				'paged-3.pdf',
				'paged-4.pdf',
				'paged-5.pdf',
			]);
			expect(apiRequests().map((r) => r.query.page)).toEqual(['1', '2', '3']);
			emulator().clearLog();
			const limited = await runNode({
				resource: 'document',
				operation: 'getAll',
				returnAll: false,
				limit: 3,
				filters: { search: 'pagination' },
			});
			expect(limited.items).toHaveLength(3);
			expect(apiRequests().map((r) => r.query.page)).toEqual(['1', '2']);
		} finally {
			emulator().setMaxPageSize(100);
		}
	});

	it('Get Many: Limit, and the search filter', async () => {
		// Two documents of its own, so the Limit is tested when the test runs alone too.
		await uploadDocument({ options: { filename: 'needle-report.pdf' } });
		await uploadDocument({ options: { filename: 'hay.pdf' } });
		const limited = await runNode({
			resource: 'document',
			operation: 'getAll',
			returnAll: false,
			limit: 2,
		});
		expect(limited.items).toHaveLength(2);
		const found = await runNode({
			resource: 'document',
			operation: 'getAll',
			returnAll: true,
			filters: { search: 'needle' },
		});
		expect(found.items.map((i) => i.json.filename)).toEqual(['needle-report.pdf']);
	});
});

describe('Parsing (§v0-4.5–4.7)', () => {
	it('parses a binary file into markdown containing its words, with absolute picture URLs', async () => {
		const { items } = await runNode(
			parsingCreate({ source: 'binary', options: { pictureDescriptionEnabled: true } }),
			[await fileItem()],
		);
		const parsing = items[0].json as Record<string, any>;
		expect(parsing.status).toBe('FINISHED');
		expect(parsing.markdown_content).toContain('Invoice number: INV-2026-0042');
		expect(parsing.pictures.length).toBeGreaterThan(0);
		expect(parsing.pictures[0].picture_absolute).toBe(
			`${emulator().url}${parsing.pictures[0].picture}`,
		);
		expect(parsing.document.file_url_absolute).toMatch(
			/^http:\/\/127\.0\.0\.1:\d+\/v0\/documents\/.+\/download$/,
		);
	});

	it('parses an uploaded document by id and a single URL', async () => {
		const doc = await uploadDocument();
		const byId = await runNode(parsingCreate({ source: 'documentId', documentId: doc.id }));
		expect(byId.items[0].json).toMatchObject({ status: 'FINISHED', document: { id: doc.id } });
		const byUrl = await runNode(
			parsingCreate({ source: 'url', url: `${emulator().filesUrl}/static/a.pdf` }),
		);
		expect(byUrl.items[0].json.markdown_content).toContain('Static document A');
	});

	it('fans a list of 3 URLs out into 3 items, each paired to its input item', async () => {
		const urls = ['a', 'b', 'c'].map((n) => `${emulator().filesUrl}/static/${n}.pdf`);
		const { items } = await runNode(parsingCreate({ source: 'urlList', urls: urls.join('\n') }), [
			{ json: { batch: 1 } },
		]);
		expect(items).toHaveLength(3);
		expect(items.map((i) => (i.json.document as { filename: string }).filename)).toEqual([
			'a.pdf',
			'b.pdf',
			'c.pdf',
		]);
		expect(items.map((i) => i.json.markdown_content)).toEqual([
			expect.stringContaining('Static document A'),
			expect.stringContaining('Static document B'),
			expect.stringContaining('Static document C'),
		]);
		expect(items.every((i) => JSON.stringify(i.pairedItem) === JSON.stringify({ item: 0 }))).toBe(
			true,
		);
		expect(apiRequests().filter((r) => r.method === 'POST')).toHaveLength(1);
	});

	it('outputs PARTIAL_FINISHED with the page counts, or fails it with "Treat Partial as Error"', async () => {
		const bytes = await pdfWithPages(['p1', 'p2', 'p3']);
		const partial = {
			source: 'binary',
			options: { metadata: '{"emulator_outcome": "PARTIAL_FINISHED"}' },
		};
		const { items } = await runNode(parsingCreate(partial), [
			await fileItem({ data: { bytes, fileName: 'three.pdf' } }),
		]);
		expect(items[0].json).toMatchObject({
			status: 'PARTIAL_FINISHED',
			pages_total: 3,
			pages_failed: 1,
			pages_success: 2,
			error: expect.any(String),
		});
		const strict = await runNode(
			parsingCreate({ ...partial, options: { ...partial.options, treatPartialAsError: true } }),
			[await fileItem({ data: { bytes, fileName: 'three.pdf' } })],
		);
		expect(strict.error?.message).toMatch(
			/^Parsing [0-9a-f-]{36} finished partially: 1 of 3 pages failed/,
		);
	});

	it('gets a parsing and lists parsings by status', async () => {
		const created = await runNode(parsingCreate({ source: 'binary' }), [await fileItem()]);
		const id = created.items[0].json.id;
		const got = await runNode({ resource: 'parsing', operation: 'get', parsingId: id });
		expect(got.items[0].json).toMatchObject({ id, status: 'FINISHED' });
		const listed = await runNode({
			resource: 'parsing',
			operation: 'getAll',
			returnAll: true,
			filters: { status: 'FINISHED' },
		});
		expect(listed.items.map((i) => i.json.id)).toContain(id);
		expect(
			apiRequests().find((r) => r.path === '/v0/parsing' && r.method === 'GET')?.query.status,
		).toBe('FINISHED');
	});
});

describe('Extract from every source (§v0-4.8)', () => {
	it('from a parsing ID, a document ID and a URL', async () => {
		const doc = await uploadDocument();
		const parsing = await runNode(parsingCreate({ source: 'documentId', documentId: doc.id }));
		const fromParsing = await runNode(
			extractCreate({ source: 'parsingId', parsingId: parsing.items[0].json.id }),
		);
		expect(fromParsing.items[0].json).toMatchObject({ status: 'FINISHED', ...SAMPLE_RESULT });
		const posted = apiRequests().filter((r) => r.method === 'POST' && r.path === '/v0/extract');
		expect(posted.at(-1)?.contentType).toMatch(/^application\/json/);

		const fromDocument = await runNode(extractCreate({ source: 'documentId', documentId: doc.id }));
		expect(fromDocument.items[0].json).toMatchObject({
			status: 'FINISHED',
			invoice_number: 'INV-2026-0042',
		});
		const fromUrl = await runNode(
			extractCreate({ source: 'url', url: `${emulator().filesUrl}/static/b.pdf` }),
		);
		expect(fromUrl.items[0].json).toMatchObject({ status: 'FINISHED', filename: 'b.pdf' });
	});

	it('never sends both parsing and document: a saved workflow carrying both sends only the selected source', async () => {
		const doc = await uploadDocument();
		const parsing = await runNode(parsingCreate({ source: 'documentId', documentId: doc.id }));
		// The emulator answers 400 "Provide either document or parsing, not both" if both arrive.
		const { items, error } = await runNode(
			extractCreate({
				source: 'parsingId',
				parsingId: parsing.items[0].json.id,
				documentId: doc.id,
			}),
		);
		expect(error).toBeUndefined();
		expect(items[0].json.status).toBe('FINISHED');
	});

	it('refuses an empty or malformed source ID before any request', async () => {
		const blank = await runNode(extractCreate({ source: 'parsingId', parsingId: '' }));
		expect(blank.error?.message).toContain('Parameter "Parsing ID" is required'); // n8n's own check
		const empty = await runNode(
			extractCreate({ source: 'parsingId', parsingId: '={{ $json.parsing }}' }),
			[{ json: { parsing: '' } }],
		);
		expect(empty.error?.message).toBe('Parameter "Parsing ID" is empty'); // ours, for expressions
		const malformed = await runNode(extractCreate({ source: 'documentId', documentId: 'doc-42' }));
		expect(malformed.error?.message).toBe('Parameter "Document ID" must be a UUID, got "doc-42"');
		expect(apiRequests()).toHaveLength(0);
	});

	it('Split Into Items: one item per element of an array result', async () => {
		// The Invoice lines schema reads one {description, amount} per page that has them.
		const bytes = await makePdf([
			['Description: Paper', 'Amount: 980.00'],
			['Description: Toner', 'Amount: 254.50'],
			['Description: Delivery', 'Amount: 15.00'],
		]);
		const { items } = await runNode(
			extractCreate({
				source: 'binary',
				schemaId: INVOICE_LINES_SCHEMA,
				options: { splitIntoItems: true },
			}),
			[await fileItem({ data: { bytes, fileName: 'lines.pdf' } })],
		);
		const meta = {
			id: expect.any(String),
			status: 'FINISHED',
			schema: 'Invoice lines',
			filename: 'lines.pdf',
		};
		expect(items.map((i) => i.json)).toEqual([
			{ ...meta, index: 0, description: 'Paper', amount: 980 },
			{ ...meta, index: 1, description: 'Toner', amount: 254.5 },
			{ ...meta, index: 2, description: 'Delivery', amount: 15 },
		]);
		expect(new Set(items.map((i) => i.json.id)).size).toBe(1);
		expect(items.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 0 }, { item: 0 }]);
	});

	it('passes the input binary through with "Include Input Binary"', async () => {
		const { items } = await runNode(
			extractCreate({ source: 'binary', options: { includeInputBinary: true } }),
			[await fileItem()],
		);
		expect(items[0].binary?.data.fileName).toBe('invoice.pdf');
	});
});

describe('Waiting, as users need it (§v0-3)', () => {
	const slowExtract = (options: Record<string, unknown>) =>
		extractWithOptions({ metadata: '{"emulator_hold": true}', ...options });

	it('stops polling within a second when the execution is cancelled', async () => {
		let cancelAt = 0;
		const { run } = await runNode(slowExtract({}), [await fileItem()], {
			onStart: (execution) => {
				setTimeout(() => {
					cancelAt = Date.now();
					execution.cancel();
				}, 2500);
			},
		});
		const endedAt = Date.now();
		expect(run.status).toBe('canceled');
		expect(endedAt - cancelAt).toBeLessThan(1000);
		await new Promise((resolve) => setTimeout(resolve, 6000)); // longer than the longest poll interval
		const late = apiRequests().filter((r) => r.at > cancelAt + 1000);
		expect(late).toEqual([]);
	});

	it('On Timeout "Output Unfinished Item": outputs id and status, and a later Get resumes it', async () => {
		const { items, error } = await runNode(
			{
				...slowExtract({
					timeout: 2,
					onTimeout: 'outputUnfinished',
					metadata: '{"emulator_hold": true}',
				}),
			},
			[await fileItem()],
		);
		expect(error).toBeUndefined();
		expect(items[0].json).toMatchObject({
			id: expect.any(String),
			status: expect.stringMatching(/IN_QUEUE|IN_PROGRESS/),
			timedOut: true,
		});
		emulator().releaseJobs([String(items[0].json.id)]);
		const resumed = await runNode(extractGet(items[0].json.id, { waitForCompletion: true }));
		expect(resumed.items[0].json).toMatchObject({
			id: items[0].json.id,
			status: 'FINISHED',
			...SAMPLE_RESULT,
		});
	});

	it('"All Binary Properties": 3 attachments become 3 jobs and 3 items with their file names, paired to the one input item', async () => {
		const item = await attachments('first.pdf', 'second.pdf', 'third.pdf');
		const { items } = await runNode(extractWithOptions({ allBinaryProperties: true }), [item]);
		expect(items.map((i) => i.json.filename)).toEqual(['first.pdf', 'second.pdf', 'third.pdf']);
		expect(items.every((i) => i.json.invoice_number === 'INV-2026-0042')).toBe(true);
		expect(items.map((i) => i.pairedItem)).toEqual([{ item: 0 }, { item: 0 }, { item: 0 }]);
	});

	it('a comma-separated Input Binary Field uploads the named files only', async () => {
		const item = await attachments('first.pdf', 'second.pdf', 'third.pdf');
		const { items } = await runNode(
			parsingCreate({ binaryPropertyName: 'attachment_2, attachment_0' }),
			[item],
		);
		expect(items.map((i) => (i.json.document as { filename: string }).filename)).toEqual([
			'third.pdf',
			'first.pdf',
		]);
	});

	it("runs 10 items' jobs together: every job is created before any is polled, and output follows input order", async () => {
		emulator().setProcessingMs(3000);
		try {
			const inputs = await Promise.all(
				Array.from({ length: 10 }, (_, i) =>
					fileItem({ data: { bytes: SAMPLE_PDF, fileName: `doc-${i}.pdf` } }),
				),
			);
			const { items } = await runNode(extractCreate(), inputs);
			expect(items.map((i) => i.json.filename)).toEqual(inputs.map((_, i) => `doc-${i}.pdf`));
			const log = apiRequests();
			const creates = log.filter((r) => r.method === 'POST');
			const polls = log.filter((r) => r.method === 'GET');
			expect(creates).toHaveLength(10);
			// Sequential waiting would poll job 1 to the end before creating job 2.
			expect(Math.max(...creates.map((r) => r.at))).toBeLessThan(
				Math.min(...polls.map((r) => r.at)),
			);
			// Each job is polled about T / interval times, not once per other job.
			expect(polls.length).toBeLessThanOrEqual(10 * (Math.ceil(3000 / 2000) + 2));
		} finally {
			emulator().setProcessingMs(1000);
		}
	});
});
