/**
 * Node version 2 (and what both versions now show): Execution Settings in their own collection,
 * IDs with a list endpoint as resource locators, and options shown only where they apply. What a
 * user sees is computed with n8n-workflow's own `NodeHelpers.displayParameter`, the function the
 * editor uses; what the node does is run through n8n-core.
 */
import type { INodeParameters, INodeProperties, INodeTypeDescription } from 'n8n-workflow';
import { NodeHelpers } from 'n8n-workflow';

import { ExtractionService } from '../nodes/ExtractionService/ExtractionService.node';
import { runListSearch } from '../scripts/engine';
import {
	V2,
	byId,
	extractionCreate,
	extractionWithOptions,
	listAll,
	onExtraction,
} from './helpers/params';
import { INVOICE_SCHEMA, useNode } from './helpers/setup';

const { emulator, runNode, credentialsFor, apiRequests, fileItem } = useNode();
const description: INodeTypeDescription = new ExtractionService().description;

afterEach(() => emulator().clearFaults());

/** The parameter values the editor holds for these values on a node version: defaults filled in. */
function editorValues(
	desc: INodeTypeDescription,
	version: number,
	parameters: INodeParameters,
): INodeParameters {
	const node = { typeVersion: version, parameters };
	return (
		NodeHelpers.getNodeParameters(desc.properties, parameters, true, false, node as never, desc) ??
		{}
	);
}

/** The top-level parameters the editor shows for these parameter values on a node version. */
function shown(version: number, parameters: INodeParameters): INodeProperties[] {
	const values = editorValues(description, version, parameters);
	return description.properties.filter((p) =>
		NodeHelpers.displayParameter(values, p, { typeVersion: version }, description),
	);
}

/** The options of a shown collection (e.g. `options`) the editor offers for these values. */
function offered(version: number, parameters: INodeParameters, collection: string): string[] {
	const node = { typeVersion: version };
	const values = editorValues(description, version, parameters);
	const property = shown(version, parameters).find((p) => p.name === collection);
	if (!property) return [];
	return (property.options as INodeProperties[])
		.filter((option) =>
			NodeHelpers.displayParameter(
				(values[collection] ?? {}) as INodeParameters,
				option,
				node,
				description,
				values,
			),
		)
		.map((option) => option.displayName);
}

const names = (properties: INodeProperties[]) => properties.map((p) => p.name);

describe('Execution Settings (version 2)', () => {
	const extraction = { resource: 'extraction', operation: 'create' };

	it("version 2: a collection of their own with a notice; Options keep only the operation's options", () => {
		expect(names(shown(2, extraction))).toEqual(
			expect.arrayContaining(['executionSettingsNotice', 'executionSettings']),
		);
		expect(
			shown(2, extraction).find((p) => p.name === 'executionSettingsNotice')?.displayName,
		).toMatch(/apply to all items of this execution/);
		expect(offered(2, extraction, 'executionSettings')).toEqual([
			'Concurrency',
			'Max Retries',
			'Request Timeout',
		]);
		expect(offered(2, extraction, 'options')).not.toEqual(expect.arrayContaining(['Concurrency']));
		expect(offered(2, extraction, 'options')).toContain('Wait Timeout');
	});

	it('version 1: unchanged, the settings stay in Options and there is no Execution Settings', () => {
		expect(names(shown(1, extraction))).not.toContain('executionSettings');
		expect(offered(1, extraction, 'options')).toEqual(
			expect.arrayContaining(['Concurrency', 'Max Retries', 'Request Timeout']),
		);
	});

	it('version 2 reads them from Execution Settings: Max Retries 0 fails at the first 503, 1 recovers', async () => {
		/** Document → Get Many on version 2 with this Max Retries, its first answer a 503. */
		const listAfter503 = async (maxRetries: number) => {
			emulator().clearLog();
			emulator().injectFaults({ method: 'GET', path: '/v0/documents' }, [{ status: 503 }]);
			const parameters = listAll('document', { executionSettings: { maxRetries } });
			return await runNode(parameters, undefined, V2);
		};
		expect((await listAfter503(0)).error?.message).toBe('The service failed with HTTP 503');
		expect((await listAfter503(1)).error).toBeUndefined();
		expect(apiRequests().map((r) => r.status)).toEqual([503, 200]);
	});
});

describe('Options shown only where they apply (both versions)', () => {
	it.each([1, 2])(
		'v%i: Wait Timeout and On Timeout only while Wait for Completion is on',
		(version) => {
			const create = { resource: 'extract', operation: 'create', source: 'binary' };
			expect(offered(version, { ...create, waitForCompletion: true }, 'options')).toEqual(
				expect.arrayContaining(['Wait Timeout', 'On Timeout']),
			);
			expect(offered(version, { ...create, waitForCompletion: false }, 'options')).not.toEqual(
				expect.arrayContaining(['Wait Timeout']),
			);
			expect(offered(version, { ...create, waitForCompletion: false }, 'options')).not.toContain(
				'On Timeout',
			);
		},
	);

	it.each([1, 2])('v%i: Split Into Items only with Simplify', (version) => {
		const get = { resource: 'extraction', operation: 'get' };
		expect(offered(version, { ...get, simplify: true }, 'options')).toContain('Split Into Items');
		expect(offered(version, { ...get, simplify: false }, 'options')).not.toContain(
			'Split Into Items',
		);
	});

	it('Extract → Create: Model, Picture Description, Table Verification and Metadata only for sources that make a parsing', () => {
		const parsingOptions = ['Metadata', 'Model', 'Picture Description', 'Table Verification'];
		for (const source of ['binary', 'documentId', 'url']) {
			expect(offered(2, { resource: 'extract', operation: 'create', source }, 'options')).toEqual(
				expect.arrayContaining(parsingOptions),
			);
		}
		const fromParsing = offered(
			2,
			{ resource: 'extract', operation: 'create', source: 'parsingId' },
			'options',
		);
		for (const option of parsingOptions) expect(fromParsing).not.toContain(option);
	});

	it('Last Page added alone keeps the whole document (default 0: not sent)', async () => {
		const lastPage = (
			description.properties.find(
				(p) => p.name === 'options' && JSON.stringify(p.displayOptions).includes('extraction'),
			)?.options as INodeProperties[]
		).find((o) => o.name === 'pdfPageEnd');
		expect(lastPage?.default).toBe(0);
		const { error } = await runNode(
			extractionWithOptions({ pdfPageEnd: 0 }),
			[await fileItem()],
			V2,
		);
		expect(error).toBeUndefined();
		expect(apiRequests().find((r) => r.method === 'POST')?.query).toEqual({});
	});
});

describe('IDs with a list endpoint are resource locators (version 2)', () => {
	it.each([
		[{ resource: 'document', operation: 'get' }, 'documentId'],
		[{ resource: 'document', operation: 'download' }, 'documentId'],
		[{ resource: 'parsing', operation: 'get' }, 'parsingId'],
		[{ resource: 'parsing', operation: 'create', source: 'documentId' }, 'documentId'],
		[{ resource: 'extract', operation: 'create', source: 'parsingId' }, 'parsingId'],
		[{ resource: 'extraction', operation: 'get' }, 'extractionId'],
		[{ resource: 'extraction', operation: 'delete' }, 'extractionId'],
		[{ resource: 'extraction', operation: 'download' }, 'extractionId'],
	])('%o: %s is a locator on v2 and a string on v1', (parameters, name) => {
		const v2 = shown(2, parameters).filter((p) => p.name === name);
		const v1 = shown(1, parameters).filter((p) => p.name === name);
		expect(v2.map((p) => [p.type, p.modes?.map((m) => m.name)])).toEqual([
			['resourceLocator', ['list', 'id']],
		]);
		expect(v1.map((p) => p.type)).toEqual(['string']);
	});

	it('the /v0 Schema ID stays a string that says where an id comes from (the /v0 API cannot list schemas)', () => {
		const schemaId = shown(2, { resource: 'extract', operation: 'create' }).find(
			(p) => p.name === 'schemaId',
		);
		expect(schemaId?.type).toBe('string');
		expect(schemaId?.description).toMatch(/cannot list schemas/);
	});

	it('From List finds documents, parsings and extractions; the picked value runs', async () => {
		const upload = await runNode(
			{ resource: 'document', operation: 'upload', options: { filename: 'locator-needle.pdf' } },
			[await fileItem()],
		);
		const documentId = String(upload.items[0].json.id);
		const parsing = await runNode(
			{
				resource: 'parsing',
				operation: 'create',
				source: 'documentId',
				documentId: { __rl: true, mode: 'list', value: documentId },
			},
			undefined,
			V2,
		);
		expect(parsing.error).toBeUndefined();
		const extraction = await runNode(
			extractionCreate({ schema: byId(INVOICE_SCHEMA) }),
			[await fileItem()],
			V2,
		);
		expect(extraction.error).toBeUndefined();
		const credentials = credentialsFor();

		const documents = await runListSearch('searchDocuments', {
			parameters: { resource: 'document', operation: 'get' },
			credentials,
			filter: 'locator-needle',
		});
		expect(documents.results).toEqual([
			expect.objectContaining({ name: 'locator-needle.pdf', value: documentId }),
		]);
		const parsings = await runListSearch('searchParsings', {
			parameters: { resource: 'parsing', operation: 'get' },
			credentials,
			filter: 'locator-needle',
		});
		expect(parsings.results.map((r) => r.value)).toEqual([parsing.items[0].json.id]);
		const extractions = await runListSearch('searchExtractions', {
			parameters: { resource: 'extraction', operation: 'get' },
			credentials,
			filter: 'invoice.pdf',
		});
		expect(extractions.results.map((r) => r.value)).toContain(extraction.items[0].json.id);

		const got = await runNode(
			{
				resource: 'document',
				operation: 'get',
				documentId: { __rl: true, mode: 'list', value: documentId },
			},
			undefined,
			V2,
		);
		expect(got.items[0].json).toMatchObject({ id: documentId, filename: 'locator-needle.pdf' });
		const gotById = await runNode(
			onExtraction('get', byId(extraction.items[0].json.id)),
			undefined,
			V2,
		);
		expect(gotById.items[0].json).toMatchObject({
			id: extraction.items[0].json.id,
			status: 'FINISHED',
		});
	});

	it('a locator By ID that is not a UUID is refused by n8n before the node runs; an expression giving one, by the node', async () => {
		const typed = await runNode(onExtraction('get', byId('nope')), undefined, V2);
		expect(typed.error?.message).toBe(
			"The 'Extraction Service' node has issues:\n- Not a valid extraction ID: expected a UUID",
		);
		const mapped = await runNode(
			onExtraction('get', byId('={{ $json.id }}')),
			[{ json: { id: 'nope' } }],
			V2,
		);
		expect(mapped.error?.message).toBe('Parameter "Extraction ID" must be a UUID, got "nope"');
		expect(emulator().requests).toEqual([]);
	});
});

describe("As an AI agent's tool", () => {
	// n8n wraps a usableAsTool node as "<name>Tool"; `@tool` display options look at that name.
	const tool: INodeTypeDescription = { ...description, name: `${description.name}Tool` };
	const choices = (desc: INodeTypeDescription, parameters: INodeParameters, name: string) => {
		const node = { typeVersion: 2 };
		const values = editorValues(desc, 2, parameters);
		const property = desc.properties.find(
			(p) => p.name === name && NodeHelpers.displayParameter(values, p, node, desc),
		);
		return ((property?.options ?? []) as Array<{ value: string; displayOptions?: object }>)
			.filter((option) => NodeHelpers.displayParameter(values, option as never, node, desc))
			.map((option) => option.value);
	};

	it('offers no binary upload: no Binary File source, no Upload / Create-from-file operation, no Workflow resource', () => {
		expect(choices(tool, { resource: 'extract', operation: 'create' }, 'source')).toEqual([
			'documentId',
			'parsingId',
			'url',
		]);
		expect(choices(description, { resource: 'extract', operation: 'create' }, 'source')).toEqual([
			'binary',
			'documentId',
			'parsingId',
			'url',
		]);
		expect(choices(tool, { resource: 'parsing', operation: 'create' }, 'source')).toEqual([
			'documentId',
			'urlList',
			'url',
		]);
		expect(choices(tool, { resource: 'document' }, 'operation')).toEqual([
			'download',
			'get',
			'getAll',
		]);
		expect(choices(tool, { resource: 'extraction' }, 'operation')).toEqual([
			'delete',
			'download',
			'get',
			'getAll',
		]);
		expect(choices(tool, {}, 'resource')).not.toContain('workflow');
		expect(choices(description, {}, 'resource')).toContain('workflow');
	});

	it('its description tells an agent what it takes: URLs, UUIDs, and that chat files cannot be sent', () => {
		const usable = description.usableAsTool;
		const text = typeof usable === 'object' ? usable.replacements?.description : undefined;
		expect(text).toMatch(/pre-signed http\(s\) URL/);
		expect(text).toMatch(/UUIDs such as [0-9a-f-]{36}/);
		expect(text).toMatch(/cannot be sent/);
		expect(description.builderHint?.searchHint).toMatch(/invoices/);
	});
});

describe('UI text', () => {
	it('every placeholder of a value reads "e.g. …"; resource options explain Extract vs Extraction', () => {
		const placeholders: string[] = [];
		const walk = (properties: INodeProperties[]) => {
			for (const p of properties) {
				if (p.placeholder && !['collection', 'fixedCollection', 'resourceLocator'].includes(p.type))
					placeholders.push(p.placeholder);
				if (p.type === 'collection') walk((p.options ?? []) as INodeProperties[]);
				for (const mode of p.modes ?? [])
					if (mode.type === 'string' && mode.placeholder) placeholders.push(mode.placeholder);
			}
		};
		walk(description.properties);
		expect(placeholders.length).toBeGreaterThan(10);
		expect(placeholders.filter((p) => !p.startsWith('e.g. '))).toEqual([]);
		const resource = description.properties.find((p) => p.name === 'resource');
		const options = resource?.options as Array<{ name: string; description: string }>;
		expect(options.find((o) => o.name === 'Extract')?.description).toMatch(/step by step/);
		expect(options.find((o) => o.name === 'Extraction')?.description).toMatch(/one step/);
	});
});
