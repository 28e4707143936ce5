/**
 * Agents: safe by default (issue 22). In the node's tool variant (an AI agent's tool, the MCP Server
 * Trigger's), from node version 3, operations that cost credits or change data are neither offered
 * nor run unless the user turns on Allow Billed or Destructive Operations; the regular node and tool
 * nodes saved with version 2 (test/fixtures/saved-v2-tools.json) behave as before. What the editor
 * offers is computed with n8n-workflow's `NodeHelpers`, as the editor does; what runs goes through
 * n8n-core with the tool variant as n8n derives it (`TOOL_NODE_TYPE` in scripts/engine.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import type {
	INode,
	INodeParameters,
	INodePropertyOptions,
	INodeTypeDescription,
} from 'n8n-workflow';
import { NodeHelpers } from 'n8n-workflow';

import { ExtractionService } from '../nodes/ExtractionService/ExtractionService.node';
import { NODE_TYPE, TOOL_NODE_TYPE, runWorkflow } from '../scripts/engine';
import { useNode } from './helpers/setup';

const { emulator, runNode, credentialsFor, apiRequests, fileItem } = useNode({ processingMs: 0 });

const regular: INodeTypeDescription = new ExtractionService().description;
const tool: INodeTypeDescription = { ...regular, name: `${regular.name}Tool` };

/** The node and its parameter values for `parameters` on a node version, as the editor resolves them. */
function resolved(
	description: INodeTypeDescription,
	version: number,
	parameters: INodeParameters,
): { node: INode; values: INodeParameters } {
	const node = { typeVersion: version, parameters } as INode;
	const values =
		NodeHelpers.getNodeParameters(
			description.properties,
			parameters,
			true,
			false,
			node,
			description,
		) ?? {};
	return { node, values };
}

/** The operations the editor offers for `parameters` on a node version, regular or tool. */
function offered(
	description: INodeTypeDescription,
	version: number,
	parameters: INodeParameters,
): string[] {
	const { node, values } = resolved(description, version, parameters);
	const selector = description.properties.find(
		(p) => p.name === 'operation' && NodeHelpers.displayParameter(values, p, node, description),
	);
	return ((selector?.options ?? []) as INodePropertyOptions[])
		.filter((option) => NodeHelpers.displayParameter(values, option, node, description))
		.map((option) => String(option.value));
}

/** The operation a node starts on for `parameters` (its default, as the editor resolves it). */
const chosen = (description: INodeTypeDescription, version: number, parameters: INodeParameters) =>
	resolved(description, version, parameters).values.operation;

/** Creates one extraction with the regular node and returns its id. */
async function newExtraction(): Promise<string> {
	const { items, error } = await runNode(
		{ resource: 'extraction', operation: 'create', waitForCompletion: false },
		[await fileItem()],
		{ node: { typeVersion: 3 } },
	);
	expect(error).toBeUndefined();
	return String(items[0].json.id);
}

/** Runs Extraction → Delete of `id` on the tool variant (or the regular node) of a version. */
async function deleteAs(
	type: string,
	typeVersion: number,
	id: string,
	extra: INodeParameters = {},
) {
	emulator().clearLog();
	return await runNode(
		{
			resource: 'extraction',
			operation: 'delete',
			extractionId: { __rl: true, mode: 'id', value: id },
			...extra,
		},
		[{ json: {} }],
		{ node: { type, typeVersion } },
	);
}

describe('What the editor offers an agent', () => {
	it.each([
		['extraction', ['download', 'get', 'getAll']],
		['schema', ['get', 'getAll']],
		['parsing', ['get', 'getAll']],
		['extract', ['get']],
		['document', ['download', 'get', 'getAll']],
	])('tool, version 3, switch off: %s offers reads only', (resource, reads) => {
		expect(offered(tool, 3, { resource })).toEqual(reads);
	});

	it.each(['extraction', 'schema', 'parsing', 'extract', 'document'])(
		'a new tool node, version 3, switch off: %s starts on an operation it offers (the editor flags any other)',
		(resource) => {
			const started = chosen(tool, 3, { resource });
			expect(started).toBe('get');
			expect(offered(tool, 3, { resource })).toContain(started);
			// switched on, the value the user had stays offered
			expect(offered(tool, 3, { resource, allowChanges: true })).toContain(started);
		},
	);

	it('the regular node, and tools saved with version 2, start on the operations they started on', () => {
		expect(chosen(regular, 3, { resource: 'extraction' })).toBe('create');
		expect(chosen(tool, 2, { resource: 'extraction' })).toBe('create');
		expect(chosen(regular, 1, { resource: 'schema' })).toBe('create');
	});

	it('tool, version 3, switch on: deletes, updates and billed creates come back (binary uploads stay hidden)', () => {
		const on = { allowChanges: true };
		expect(offered(tool, 3, { resource: 'extraction', ...on })).toEqual([
			'delete',
			'download',
			'get',
			'getAll',
		]);
		expect(offered(tool, 3, { resource: 'schema', ...on })).toEqual([
			'create',
			'delete',
			'get',
			'getAll',
			'update',
		]);
		expect(offered(tool, 3, { resource: 'extract', ...on })).toEqual(['create', 'get']);
	});

	it('the regular node, and tools saved with version 2, offer every operation as before', () => {
		expect(offered(regular, 3, { resource: 'schema' })).toEqual([
			'create',
			'delete',
			'get',
			'getAll',
			'update',
		]);
		expect(offered(tool, 2, { resource: 'extraction' })).toEqual([
			'delete',
			'download',
			'get',
			'getAll',
		]);
	});

	it('the switch is a tool parameter of version 3 only', () => {
		const shown = (description: INodeTypeDescription, version: number) => {
			const node = { typeVersion: version, parameters: {} } as INode;
			const switchField = description.properties.find((p) => p.name === 'allowChanges')!;
			return NodeHelpers.displayParameter({}, switchField, node, description);
		};
		expect([shown(tool, 3), shown(tool, 2), shown(regular, 3)]).toEqual([true, false, false]);
	});
});

describe('What an agent can run', () => {
	it('tool, version 3, switch off: a Delete is refused before any request', async () => {
		const id = await newExtraction();
		const { error } = await deleteAs(TOOL_NODE_TYPE, 3, id);
		expect(error?.message).toBe(
			"This tool's operation (extraction → delete) costs credits or changes data, and an AI agent may not run it",
		);
		expect(String(error?.description)).toContain('Allow Billed or Destructive Operations');
		expect(apiRequests()).toEqual([]);
	});

	it('tool, version 3, switch on: the Delete runs', async () => {
		const id = await newExtraction();
		const { items, error } = await deleteAs(TOOL_NODE_TYPE, 3, id, { allowChanges: true });
		expect({ error: error?.message, json: items[0]?.json }).toEqual({
			error: undefined,
			json: { id, deleted: true },
		});
	});

	it('tool, version 3, switch set by an expression (an agent could fill it with $fromAI): refused before any request (the Delete ran)', async () => {
		const id = await newExtraction();
		const { error } = await deleteAs(TOOL_NODE_TYPE, 3, id, { allowChanges: '={{ true }}' });
		expect(error?.message).toBe(
			"This tool's operation (extraction → delete) costs credits or changes data, and an AI agent may not run it",
		);
		expect(String(error?.description)).toContain('not by an expression');
		expect(apiRequests()).toEqual([]);
	});

	it('the switch takes no expression in the editor (it did)', () => {
		const switchField = tool.properties.find((p) => p.name === 'allowChanges');
		expect(switchField?.noDataExpression).toBe(true);
	});

	it('tool, version 3, switch off: a read runs', async () => {
		const id = await newExtraction();
		const { items, error } = await runNode(
			{
				resource: 'extraction',
				operation: 'get',
				extractionId: { __rl: true, mode: 'id', value: id },
			},
			[{ json: {} }],
			{ node: { type: TOOL_NODE_TYPE, typeVersion: 3 } },
		);
		expect({ error: error?.message, id: items[0]?.json.id }).toEqual({ error: undefined, id });
	});

	it('the regular node, version 3: Delete runs without any switch', async () => {
		const id = await newExtraction();
		const { items, error } = await deleteAs(NODE_TYPE, 3, id);
		expect({ error: error?.message, deleted: items[0]?.json.deleted }).toEqual({
			error: undefined,
			deleted: true,
		});
	});

	it('a tool saved with version 2 (JSON written before version 3) still deletes', async () => {
		const id = await newExtraction();
		const saved = JSON.parse(
			readFileSync(path.join(__dirname, 'fixtures', 'saved-v2-tools.json'), 'utf8'),
		);
		const { output, error } = await runWorkflow({
			workflow: saved,
			startNode: 'Delete Extraction',
			input: [{ json: { id } }],
			credentials: credentialsFor(),
		});
		expect({ error: error?.message, json: output('Delete Extraction')[0]?.json }).toEqual({
			error: undefined,
			json: { id, deleted: true },
		});
	});
});

describe("Every tool's description says what it does, what it costs and what it returns", () => {
	const resources = ['document', 'extract', 'extraction', 'parsing', 'schema'];
	const cases = resources.flatMap((resource) =>
		offered(tool, 3, { resource, allowChanges: true }).map((operation) => [resource, operation]),
	);

	it.each(cases)('%s → %s', (resource, operation) => {
		const node = {
			typeVersion: 3,
			parameters: { resource, operation, descriptionType: 'auto' },
		} as unknown as INode;
		const description = NodeHelpers.getToolDescriptionForNode(node, {
			description: tool,
		} as never);
		expect(description).toMatch(/ in Extraction Service$/);
		// the cost: credits for what is billed, "at no cost" otherwise
		expect(description).toMatch(/credits|at no cost|for good/);
		// what comes back
		expect(description).toMatch(/ with | returns | get its | get it back| file/);
	});
});
