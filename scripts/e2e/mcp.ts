/**
 * End to end, part 4: the node's tools over MCP, in a real n8n 2.x (scripts/n8n/install.sh 2).
 *
 *   npm run test:e2e:mcp                              # about 40 s warm
 *   npx tsx scripts/e2e/mcp.ts --tool Get_Extraction  # the other read tool, called with the id
 *
 * Options: --no-install, --no-build, --keep, --verbose, --tool NAME (default Find_Extractions),
 * --search TEXT (its argument, default "mcp-invoice").
 *
 * examples/workflows/mcp-server.json runs as it is, published (n8n-with-package.ts), its Bearer Auth
 * credential given a random token; the official MCP SDK client speaks Streamable HTTP (what the MCP
 * Server Trigger serves from typeVersion 2) to its production URL /mcp/<path>. Checked: 403 without
 * the token; the client connects with it; it lists the example's tools, each with its `$fromAI()`
 * inputs; the call reaches the emulator (answered 200: the token credential was accepted) and its
 * result carries the extraction's id. The last line:
 *
 *   mcp: 3 tools listed, Find_Extractions called, result has <extraction id>
 */
import { randomBytes } from 'node:crypto';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import type { EmulatorProcess } from '../../emulator/launch';
import { readArgs, RUNNER_FLAGS, runnerOptions } from '../lib/args';
import { requestLine, type Example, type ExampleNode } from '../n8n/examples';
import { createExtraction, runPublished, type Published } from './n8n-with-package';

const MCP_TRIGGER = '@n8n/n8n-nodes-langchain.mcpTrigger';
const TOOL_TYPE = 'n8n-nodes-extraction-service.extractionServiceTool';
const DOCUMENT_NAME = 'mcp-invoice.pdf';
/** n8n 2.41's production path of MCP triggers (N8N_ENDPOINT_MCP, default `mcp`). */
const MCP_ENDPOINT = 'mcp';

const { values: v } = readArgs(__filename, {
	...RUNNER_FLAGS,
	tool: { type: 'string' },
	search: { type: 'string' },
});
const opts = {
	...runnerOptions(v),
	tool: v.tool ?? 'Find_Extractions',
	search: v.search ?? 'mcp-invoice',
};
let extractionId = '';
const token = randomBytes(24).toString('hex');

/** The tool name n8n gives a node (n8n-workflow's nodeNameToToolName: runs of other characters become `_`). */
function toolName(nodeName: string): string {
	return nodeName.replace(/[^a-zA-Z0-9_-]+/g, '_');
}

/** The `$fromAI('<key>', …)` keys in a node's parameters: the inputs its tool asks for. */
function fromAiKeys(node: ExampleNode): string[] {
	return [...JSON.stringify(node.parameters ?? {}).matchAll(/\$fromAI\(\s*'([^']+)'/g)].map(
		(m) => m[1],
	);
}

/** The text parts of a tool result, joined (other parts as JSON). */
function resultText(result: object): string {
	const parts = 'content' in result && Array.isArray(result.content) ? result.content : [];
	return (parts as Array<{ type?: string; text?: string }>)
		.map((c) => (c.type === 'text' ? String(c.text) : JSON.stringify(c)))
		.join('\n');
}

/** The extraction to find, and the example's Bearer Auth credential with a random token. */
async function beforeImport(emulator: EmulatorProcess, example: Example) {
	const lines = ['Invoice number: INV-MCP-2207', 'Vendor: MCP Test Supplies', 'Total: 22.07 EUR'];
	extractionId = await createExtraction(emulator, DOCUMENT_NAME, lines);
	console.log(`emulator ${emulator.url}; extraction ${extractionId} (${DOCUMENT_NAME}) created`);
	const trigger = example.workflow.nodes.find((n) => n.type === MCP_TRIGGER);
	const bearer = (trigger?.credentials as Record<string, object> | undefined)?.httpBearerAuth;
	if (!bearer) throw new Error('mcp-server.json has no MCP Server Trigger with Bearer Auth');
	return { credentials: [{ ...bearer, type: 'httpBearerAuth', data: { token } }] };
}

/** The checks, on the published example. */
async function main({ emulator, workflow, ctx, check }: Published) {
	const trigger = workflow.nodes.find((n) => n.type === MCP_TRIGGER);
	const webhookPath = (trigger?.parameters as { path?: unknown } | undefined)?.path;
	if (typeof webhookPath !== 'string' || !webhookPath)
		throw new Error('mcp-server.json has no MCP Server Trigger with a path');
	const toolNodes = workflow.nodes.filter((n) => n.type === TOOL_TYPE);
	const mcpUrl = `${ctx.url}/${MCP_ENDPOINT}/${webhookPath}`;
	console.log(`MCP production URL ${mcpUrl}`);

	// 1. the production URL asks for the token
	const anonymous = await fetch(mcpUrl, {
		method: 'POST',
		headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
		body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
		signal: AbortSignal.timeout(30_000),
	});
	await anonymous.text();
	check(
		'the production URL refuses a client without the Bearer token',
		anonymous.status === 403,
		`POST ${mcpUrl} without Authorization → ${anonymous.status}`,
	);

	// 2. the official client, over Streamable HTTP, with the token
	const client = new Client({ name: 'n8n-nodes-extraction-service-e2e', version: '1.0.0' });
	const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), {
		requestInit: { headers: { authorization: `Bearer ${token}` } },
	});
	let listed = 0;
	let called = false;
	try {
		await client.connect(transport);
		const serverInfo = client.getServerVersion();
		check(
			'the client connected (Streamable HTTP, Bearer token)',
			transport.sessionId !== undefined,
			`server ${serverInfo?.name ?? '?'} ${serverInfo?.version ?? ''}, session ${transport.sessionId ?? 'none'}`,
		);

		// 3. the tools: one per tool node of the example, each asking for its $fromAI() inputs
		const { tools } = await client.listTools();
		listed = tools.length;
		const expected = toolNodes.map((n) => ({ name: toolName(n.name), inputs: fromAiKeys(n) }));
		const missing = expected.filter((e) => {
			const tool = tools.find((t) => t.name === e.name);
			const props = Object.keys(tool?.inputSchema.properties ?? {});
			return !tool || !e.inputs.every((k) => props.includes(k));
		});
		check(
			`the ${expected.length} tools of the example are listed, with their inputs`,
			tools.length === expected.length && missing.length === 0,
			`${tools.map((t) => `${t.name}(${Object.keys(t.inputSchema.properties ?? {}).join(', ')})`).join(', ') || 'no tools'}${missing.length ? `; missing or without their inputs: ${missing.map((m) => `${m.name}(${m.inputs.join(', ')})`).join(', ')}` : ''}`,
		);

		// 4. one call with arguments: it reaches the service, and its result carries the extraction
		const args: Record<string, string> =
			opts.tool === toolName('Get Extraction') ? { extractionId } : { search: opts.search };
		const before = emulator.requests.length;
		const { text, isError } = await client.callTool({ name: opts.tool, arguments: args }).then(
			(result) => ({ text: resultText(result), isError: result.isError === true }),
			(err: Error) => ({ text: `the call threw: ${err.message}`, isError: true }),
		);
		await emulator.settle();
		const seen = emulator.requests
			.slice(before)
			.filter((q) => q.origin === 'api' && /^\/extract\//.test(q.path));
		const matching = seen.filter(
			(q) =>
				q.method === 'GET' &&
				(args.search !== undefined
					? /^\/extract\/?$/.test(q.path) && q.query.search === args.search
					: q.path.replace(/\/$/, '') === `/extract/${args.extractionId}`),
		);
		check(
			`the service saw the call of ${opts.tool} ${JSON.stringify(args)}`,
			// 200: the credential's token was accepted (the log shows it as ***)
			matching.length === 1 && matching[0].status === 200,
			seen.map(requestLine).join(', ') || 'no request reached the emulator',
		);
		called = check(
			'the tool result carries the extraction',
			!isError && text.includes(extractionId),
			`${isError ? 'error result: ' : ''}${text.slice(0, 300) || '(empty)'}`,
		);
		await transport.terminateSession();
	} catch (err) {
		check('the MCP session', false, (err as Error).message);
	} finally {
		await client.close();
	}

	const okLine = `mcp: ${listed} tools listed, ${opts.tool} called, result has ${extractionId}`;
	return { done: called, okLine };
}

runPublished('mcp', opts, 'mcp-server.json', beforeImport, main);
