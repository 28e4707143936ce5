/**
 * Issue 30, item 6, through n8n's engine against the emulator; written to fail before the fix.
 * Upload file types are accepted by extension or MIME type (parameters and case ignored), or, for a
 * file whose name and type say nothing, by its first bytes; downloads take their MIME type from the
 * bytes' signature, so Extraction → Create accepts a PDF a storage labelled `application/json`.
 */
import fc from 'fast-check';
import type { IBinaryData, INodeExecutionData } from 'n8n-workflow';

import { SIGNATURE_BYTES, sniffFileType } from '../nodes/ExtractionService/v1/helpers/file-types';
import { byId, extractionCreate, onDocument, onExtraction } from './helpers/params';
import { INVOICE_SCHEMA, SAMPLE_PDF, useNode } from './helpers/setup';

const { emulator, runNode, apiRequests, fileItem } = useNode({ processingMs: 0 });

afterEach(() => emulator().clearFaults());

const TINY_PNG = Buffer.from(
	'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg==',
	'base64',
);

/** An inline (base64) binary, as n8n 1.x's in-memory mode and many nodes give them. */
const inline = (bytes: Buffer, fields: Partial<IBinaryData>): IBinaryData => ({
	data: bytes.toString('base64'),
	mimeType: 'application/octet-stream',
	...fields,
});

/** The files of the last Extraction → Create request (`POST /extract/`). */
const uploaded = () =>
	apiRequests()
		.filter((r) => r.method === 'POST' && r.path === '/extract/')
		.flatMap((r) => (r.body?.kind === 'form' ? r.body.files : []));

const create = async (input: INodeExecutionData[]) =>
	await runNode(extractionCreate({ waitForCompletion: false }), input);

describe('File types: extension or MIME type, else the first bytes (issue 30, item 6)', () => {
	it.each([
		['a MIME type with parameters', 'invoice.pdf', 'application/pdf; name=invoice.pdf'],
		['a MIME type in capitals', 'invoice.pdf', 'Application/PDF'],
		['a name in capitals, no MIME type', 'INVOICE.PDF', 'application/octet-stream'],
		// The name and the MIME type disagree: the bytes (a PDF) decide.
		['a known extension, a MIME type the storage got wrong', 'invoice.pdf', 'application/json'],
		['a known extension, an old MIME type', 'invoice.pdf', 'application/x-pdf'],
	])('accepted: %s (%s, %s)', async (_label, fileName, mimeType) => {
		const { error } = await create([
			await fileItem({ data: { bytes: SAMPLE_PDF, fileName, mimeType } }),
		]);
		expect(error).toBeUndefined();
		expect(uploaded()).toEqual([
			expect.objectContaining({ filename: fileName, contentType: 'application/pdf' }),
		]);
	});

	it('accepted by MIME type alone: the name sent gets the type’s extension', async () => {
		const { error } = await create([
			await fileItem({
				data: { bytes: SAMPLE_PDF, fileName: 'scan', mimeType: 'application/pdf' },
			}),
		]);
		expect(error).toBeUndefined();
		expect(uploaded()).toEqual([
			expect.objectContaining({ filename: 'scan.pdf', contentType: 'application/pdf' }),
		]);
	});

	it.each([
		['stored by id', 'PDF', SAMPLE_PDF, 'application/pdf', '.pdf'],
		['stored by id', 'PNG', TINY_PNG, 'image/png', '.png'],
		['inline', 'PDF', SAMPLE_PDF, 'application/pdf', '.pdf'],
		[
			'inline',
			'JPEG',
			Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 0x4a, 0x46]),
			'image/jpeg',
			'.jpg',
		],
	])(
		'a file without a name or type (%s): its first bytes say %s',
		async (storage, _kind, bytes, type, extension) => {
			const binary =
				storage === 'inline'
					? inline(bytes, {})
					: (
							await fileItem({
								data: { bytes, fileName: '', mimeType: 'application/octet-stream' },
							})
						).binary!.data;
			const { error } = await create([{ json: {}, binary: { data: binary } }]);
			// The JPEG is only a header: the emulator refuses its content, after the node accepted it.
			if (type !== 'image/jpeg') expect(error).toBeUndefined();
			expect(uploaded()).toEqual([
				expect.objectContaining({ filename: `data${extension}`, contentType: type }),
			]);
		},
	);

	it.each([
		[
			'a known type by name and MIME type',
			{
				fileName: 'offer.docx',
				mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
			},
			Buffer.from('PK\x03\x04 not a pdf'),
			'The file "offer.docx" (application/vnd.openxmlformats-officedocument.wordprocessingml.document) is not a type the service accepts',
		],
		[
			'no name, no type, bytes of no accepted type',
			{},
			Buffer.from('just some text'),
			'The file "data" (application/octet-stream) is not a type the service accepts',
		],
		[
			'a PDF named .docx: the name says what it is',
			{ fileName: 'offer.docx', mimeType: 'application/octet-stream' },
			SAMPLE_PDF,
			'The file "offer.docx" (application/octet-stream) is not a type the service accepts',
		],
		[
			'an accepted name, another MIME type, and bytes of no accepted type',
			{ fileName: 'scan.png', mimeType: 'text/plain' },
			Buffer.from('hello'),
			'The file "scan.png" (text/plain) is not a type the service accepts',
		],
	])('refused before any request: %s', async (label, fields, bytes, message) => {
		const { error } = await create([{ json: {}, binary: { data: inline(bytes, fields) } }]);
		expect(error?.message).toBe(message);
		const accepted = 'Accepted: .pdf, .png, .jpg, .jpeg';
		const bytesChecked =
			'so its first bytes were checked: they are not those of a PDF, PNG or JPEG.';
		expect(error?.description).toBe(
			label.startsWith('no name')
				? `${accepted}. The file's name and MIME type do not say what it is, ${bytesChecked}`
				: label.startsWith('an accepted name')
					? `${accepted}. Its file extension and MIME type say different types, ${bytesChecked}`
					: `${accepted} (checked by file extension or MIME type).`,
		);
		expect(apiRequests()).toEqual([]);
	});

	it('property: any MIME type with parameters or in any case is judged as the plain type', async () => {
		const types = ['application/pdf', 'image/png', 'image/jpeg', 'application/json', 'text/csv'];
		const mixCase = (text: string, flips: boolean[]) =>
			[...text].map((c, i) => (flips[i % flips.length] ? c.toUpperCase() : c)).join('');
		await fc.assert(
			fc.asyncProperty(
				fc.constantFrom(...types),
				fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
				fc.array(
					fc.tuple(fc.stringMatching(/^[a-z-]{1,8}$/), fc.stringMatching(/^[a-zA-Z0-9.]{0,10}$/)),
					{ maxLength: 3 },
				),
				fc.constantFrom('x', 'x.pdf', 'x.PNG', 'x.docx'),
				async (type, flips, parameters, fileName) => {
					const decorated = [mixCase(type, flips), ...parameters.map(([k, v]) => `${k}=${v}`)].join(
						'; ',
					);
					/** What the node made of the file: its refusal, or the part it uploaded. */
					const outcome = async (mimeType: string) => {
						emulator().clearLog();
						const binary = inline(Buffer.from('text'), { fileName, mimeType });
						const { error } = await create([{ json: {}, binary: { data: binary } }]);
						return {
							refusal: /is not a type/.test(error?.message ?? '')
								? error?.message.replace(mimeType, '<type>')
								: undefined,
							uploaded: uploaded(),
						};
					};
					expect(await outcome(decorated)).toEqual(await outcome(type));
				},
			),
			{ numRuns: 15 },
		);
	});
});

describe('sniffFileType: the signatures', () => {
	const SIGNED: Array<[number[], string | undefined]> = [
		[[0x25, 0x50, 0x44, 0x46, 0x2d], 'application/pdf'],
		[[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'image/png'],
		[[0xff, 0xd8, 0xff], 'image/jpeg'],
		[[0x50, 0x4b, 0x03, 0x04], 'application/zip'],
	];

	it('property: a signature at the start names its type, whatever follows', () => {
		fc.assert(
			fc.property(
				fc.constantFrom(...SIGNED),
				fc.uint8Array({ maxLength: 2 * SIGNATURE_BYTES }),
				([signature, type], rest) => {
					expect(sniffFileType(Uint8Array.from([...signature, ...rest]))?.mimeType).toBe(type);
				},
			),
		);
	});

	it('property: %PDF- after junk within the first bytes is a PDF, not after them; text is nothing', () => {
		fc.assert(
			fc.property(
				fc.integer({ min: 0, max: 2 * SIGNATURE_BYTES }),
				fc.string({ unit: fc.constantFrom('a', ' ', '\n', '{', '"', ',') }),
				(junk, text) => {
					const pdf = Buffer.concat([Buffer.alloc(junk, 0x20), Buffer.from('%PDF-1.7')]);
					const within = junk + 5 <= SIGNATURE_BYTES;
					expect(sniffFileType(pdf)?.mimeType).toBe(within ? 'application/pdf' : undefined);
					expect(sniffFileType(Buffer.from(text))).toBeUndefined();
				},
			),
		);
	});
});

describe('Downloads take their type from the bytes (issue 30, item 6)', () => {
	/** A document uploaded through the node (Document → Upload), named `fileName`. */
	async function uploadedDocument(fileName: string): Promise<string> {
		const { items, error } = await runNode(
			{ resource: 'document', operation: 'upload', binaryPropertyName: 'data' },
			[
				{
					json: {},
					binary: { data: inline(SAMPLE_PDF, { fileName, mimeType: 'application/pdf' }) },
				},
			],
		);
		if (error) throw error;
		return String(items[0].json.id);
	}

	/** The next download of document `id` answers the PDF's bytes labelled `contentType`. */
	const mislabel = (id: string, contentType: string) =>
		emulator().injectFaults({ method: 'GET', path: `/v0/documents/${id}/download` }, [
			{ status: 200, body: SAMPLE_PDF.toString('latin1'), encoding: 'latin1', contentType },
		]);

	it('a PDF the storage labels application/json is a PDF, and Extraction → Create accepts it', async () => {
		const id = await uploadedDocument('invoice.pdf');
		mislabel(id, 'application/json');
		const download = await runNode(onDocument('download', id));
		expect(download.error).toBeUndefined();
		const binary = download.items[0].binary!.data;
		expect({ mimeType: binary.mimeType, fileName: binary.fileName }).toEqual({
			mimeType: 'application/pdf',
			fileName: 'invoice.pdf',
		});
		emulator().clearLog();
		const created = await create(download.items);
		expect(created.error).toBeUndefined();
		expect(uploaded()).toEqual([
			expect.objectContaining({ filename: 'invoice.pdf', contentType: 'application/pdf' }),
		]);
	});

	it('a document named without an extension gets the extension of its bytes', async () => {
		const id = await uploadedDocument('scan-0042');
		mislabel(id, 'application/octet-stream');
		const download = await runNode(onDocument('download', id));
		expect(download.error).toBeUndefined();
		const binary = download.items[0].binary!.data;
		expect({ mimeType: binary.mimeType, fileName: binary.fileName }).toEqual({
			mimeType: 'application/pdf',
			fileName: 'scan-0042.pdf',
		});
	});

	it("Extraction → Download: a CSV answered with a generic type gets the format's type (text/csv)", async () => {
		const created = await runNode(extractionCreate({ schema: byId(INVOICE_SCHEMA) }), [
			await fileItem(),
		]);
		if (created.error) throw created.error;
		const id = String(created.items[0].json.id);
		// The read of the extraction answers as the service does; the download after it with its file
		// labelled application/octet-stream (faults match the path, which both requests share).
		emulator().injectFaults({ method: 'GET', path: `/extract/${id}/` }, [
			{ delayMs: 0 },
			{
				status: 200,
				body: 'invoice_number,total\r\nINV-1,12.5\r\n',
				contentType: 'application/octet-stream',
			},
		]);
		const download = await runNode(onExtraction('download', id, { format: 'csv' }));
		expect(download.error).toBeUndefined();
		const binary = download.items[0].binary!.data;
		expect(binary.mimeType).toBe('text/csv');
		expect(binary.fileName).toMatch(/\.csv$/);
	});
});
