/**
 * Issue 20, item 3: answers that are valid but unusual — a UTF-8 byte-order mark, a charset other
 * than UTF-8, JSON nested very deep, `__proto__` among extracted fields. Each case was written to
 * fail before its fix.
 */
import { extractGet } from './helpers/params';
import { useNode } from './helpers/setup';

const { emulator, runNode } = useNode({ processingMs: 0 });

afterEach(() => emulator().clearFaults());

const UUID = '0f1e2d3c-4b5a-4697-8899-aabbccddeeff';
const get = extractGet(UUID);
const extract = (extra: Record<string, unknown> = {}) => ({
	id: UUID,
	status: 'FINISHED',
	document_name: 'invoice.pdf',
	result: { total: 12 },
	...extra,
});

/** Serves the next GET of the extract with these raw bytes and Content-Type. */
function serve(body: string, contentType: string): void {
	emulator().injectFaults({ method: 'GET', path: `/v0/extract/${UUID}` }, [
		{ status: 200, body, contentType },
	]);
}

describe('Answers that are valid but unusual', () => {
	it('JSON after a UTF-8 byte-order mark is read (it was refused as "text that is not JSON")', async () => {
		serve(`\uFEFF${JSON.stringify(extract())}`, 'application/json');
		const { items, error } = await runNode(get);
		expect({ error: error?.message, id: items[0]?.json.id }).toEqual({
			error: undefined,
			id: UUID,
		});
	});

	it('an answer in charset=iso-8859-1 is decoded by its charset (it was read as UTF-8: mojibake)', async () => {
		const json = JSON.stringify(extract({ result: { supplier: 'Müller Straße Café' } }));
		emulator().injectFaults({ method: 'GET', path: `/v0/extract/${UUID}` }, [
			{
				status: 200,
				body: json,
				contentType: 'application/json; charset=iso-8859-1',
				encoding: 'latin1',
			},
		]);
		const { items, error } = await runNode(get);
		// Simplify (on by default) puts the extracted fields at the top level.
		expect({ error: error?.message, supplier: items[0]?.json.supplier }).toEqual({
			error: undefined,
			supplier: 'Müller Straße Café',
		});
	});

	it('JSON nested 10,000 deep is refused with a clear error (it was "Maximum call stack size exceeded")', async () => {
		const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
		serve(`{"id":"${UUID}","status":"FINISHED","result":${deep}}`, 'application/json');
		const { error } = await runNode(get);
		expect(error?.message).toBe(
			'The service answered HTTP 200 with JSON nested deeper than 256 levels instead of a JSON object',
		);
	});

	it('a "__proto__" field in extracted data is kept as data, and nothing else gets it (it was dropped)', async () => {
		serve(
			`{"id":"${UUID}","status":"FINISHED","result":{"__proto__":{"polluted":true},"total":12}}`,
			'application/json',
		);
		const { items, error } = await runNode(get);
		// Simplify (on by default) puts the extracted fields at the top level.
		const json = items[0]?.json ?? {};
		expect({
			error: error?.message,
			total: json.total,
			value: Object.getOwnPropertyDescriptor(json, '__proto__')?.value,
		}).toEqual({ error: undefined, total: 12, value: { polluted: true } });
		expect(({} as Record<string, unknown>).polluted).toBeUndefined();
	});
});
