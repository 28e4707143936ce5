/**
 * End to end, part 4: the node's tools reached over MCP by any agent, in a real n8n 2.x
 * (scripts/n8n/install.sh 2).
 *
 *   npm run test:e2e:mcp                               # about 40 s warm
 *   npx tsx scripts/e2e/mcp.ts --keep --verbose        # keep the throwaway folder, print n8n's output
 *   npx tsx scripts/e2e/mcp.ts --tool Get_Extraction   # the other read tool, called with the extraction's id
 *
 * Options: --no-install (use the n8n cache as it is), --no-build, --keep, --verbose, --tool NAME
 * (the tool to call, default Find_Extractions), --search TEXT (its `search` argument, default
 * "mcp-invoice").
 *
 * The pieces, all on 127.0.0.1 and throwaway:
 * - the service emulator (emulator/launch.ts), with one extraction created first (a PDF invoice named
 *   mcp-invoice.pdf, the seeded Invoice schema) for the tool to find;
 * - n8n 2.41.1 (`n8n start`, SQLite, one main instance: scripts/editor/n8n.ts's server) with this
 *   package installed as a community package (the packed tarball) and
 *   N8N_COMMUNITY_PACKAGES_ALLOW_TOOL_USAGE=true (n8n offers community nodes as tools only then);
 * - examples/workflows/mcp-server.json itself (the importable example: MCP Server Trigger with Bearer
 *   Auth and three tool variants of the node: Find Extractions = Extraction → Get Many, Get Extraction
 *   = Extraction → Get, Get Parsing Markdown = Parsing → Get), imported with the two Extraction
 *   Service credentials and a Bearer Auth credential of a random token, then PUBLISHED
 *   (`n8n publish:workflow`) before `n8n start`, so its production URL /mcp/<path> is live;
 * - the official MCP TypeScript SDK's client (@modelcontextprotocol/sdk) over Streamable HTTP, the
 *   transport n8n 2.41's MCP Server Trigger (typeVersion ≥ 2) serves at that URL (a POST without a
 *   session starts one; a GET there is the older SSE transport).
 *
 * Checked: the production URL refuses a request without the token (403); the client connects with
 * it; it lists the example's three tools, each with the input its `$fromAI()` asks for; it calls the
 * tool with arguments (`{"search": "mcp-invoice"}`); the emulator saw that request
 * (`GET /extract/?search=mcp-invoice` answered 200: the token credential was accepted), and the tool
 * result carries the extraction's id. The last line:
 *
 *   mcp: 3 tools listed, Find_Extractions called, result has <extraction id>
 *
 * Exit code 0 only when every check passed (a tool that does not exist, a call that fails or a result
 * without the id: `mcp: FAILED (…)`, exit 1).
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { launchEmulator, type EmulatorProcess } from '../../emulator/launch';
import { makePdf } from '../../emulator/sample-pdf';
import { createContext, importFixtures, OWNER, setupOwner, startServer } from '../editor/n8n';
import { readArgs, RUNNER_FLAGS, runnerOptions, type RunnerOptions } from '../lib/args';
import { Checks } from '../lib/checks';
import { buildAndPack, installLine, installPackageInto } from '../lib/n8n';
import {
	cleanUpNow,
	commandError,
	removeAtExit,
	runMain,
	secs,
	tail,
	waitUntil,
} from '../lib/processes';
import {
	DEFAULT_SOURCE,
	loadExample,
	prepareWorkflow,
	SEEDED_INVOICE_SCHEMA,
	type ExampleNode,
} from '../n8n/examples';
import { makeRunRoot } from './services';

const EXAMPLE_FILE = 'mcp-server.json';
const MCP_TRIGGER = '@n8n/n8n-nodes-langchain.mcpTrigger';
const TOOL_TYPE = 'n8n-nodes-extraction-service.extractionServiceTool';
const DOCUMENT_NAME = 'mcp-invoice.pdf';
/** n8n 2.41's production path of MCP triggers (N8N_ENDPOINT_MCP, default `mcp`). */
const MCP_ENDPOINT = 'mcp';

interface Options extends RunnerOptions {
	tool: string;
	search: string;
}

function parseArgs(): Options {
	const { values: v } = readArgs(__filename, {
		...RUNNER_FLAGS,
		tool: { type: 'string' },
		search: { type: 'string' },
	});
	return {
		...runnerOptions(v),
		tool: v.tool ?? 'Find_Extractions',
		search: v.search ?? 'mcp-invoice',
	};
}

const checks = new Checks();
const check = checks.check.bind(checks);

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

/**
 * One extraction of a one-page PDF invoice named {@link DOCUMENT_NAME} (the seeded Invoice schema),
 * created at the emulator directly (`§unversioned-4.1`), for the tool to find.
 *
 * @returns its id
 * @throws Error when the emulator does not answer 201 with an id
 */
async function createExtraction(emulator: EmulatorProcess): Promise<string> {
	const pdf = await makePdf([
		[
			{ text: 'INVOICE', bold: true, size: 20 },
			'',
			'Invoice number: INV-MCP-2207',
			'Invoice date: 2026-11-22',
			'Vendor: MCP Test Supplies',
			'Total: 22.07 EUR',
			'Currency: EUR',
		],
	]);
	const form = new FormData();
	form.append(
		'document',
		new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }),
		DOCUMENT_NAME,
	);
	form.append('server', 'EU-1');
	form.append('schema', SEEDED_INVOICE_SCHEMA);
	const res = await fetch(`${emulator.url}/extract/`, {
		method: 'POST',
		headers: { authorization: emulator.token },
		body: form,
		signal: AbortSignal.timeout(30_000),
	});
	const body = (await res.json()) as { id?: string };
	if (res.status !== 201 || !body.id)
		throw new Error(
			`creating the extraction at the emulator: ${res.status} ${JSON.stringify(body).slice(0, 300)}`,
		);
	return body.id;
}

/**
 * A workflow's publication as n8n reports it (`GET /rest/workflows/:id/publication-status`, as the
 * owner): `published`, `pending`, … and each trigger's status, in one line.
 *
 * @throws Error when n8n does not answer 200
 */
async function publicationStatus(url: string, cookie: string, workflowId: string): Promise<string> {
	const res = await fetch(`${url}/rest/workflows/${workflowId}/publication-status`, {
		headers: { cookie },
		signal: AbortSignal.timeout(30_000),
	});
	const text = await res.text();
	if (res.status !== 200)
		throw new Error(`publication-status → ${res.status}: ${text.slice(0, 300)}`);
	const { data } = JSON.parse(text) as {
		data?: { status?: string; triggers?: Array<{ nodeId?: string; status?: string }> };
	};
	const triggers = (data?.triggers ?? []).map((t) => t.status ?? '?').join(', ');
	return `${data?.status ?? '?'}${triggers ? ` (trigger ${triggers})` : ''}`;
}

/** The text parts of a tool result, joined. */
function resultText(result: object): string {
	const content =
		'content' in result && Array.isArray(result.content) ? (result.content as unknown[]) : [];
	return content
		.map((c) =>
			c && typeof c === 'object' && (c as { type?: unknown }).type === 'text'
				? String((c as { text?: unknown }).text)
				: JSON.stringify(c),
		)
		.join('\n');
}

async function main(): Promise<number> {
	const opts = parseArgs();
	const t0 = Date.now();
	const n8n = await installLine('2', { install: opts.install });
	console.log(
		`n8n ${n8n.info.version} ${n8n.installed ? 'installed now' : 'cached'} (${secs(n8n.ms)})`,
	);
	const root = makeRunRoot('n8n-es-mcp-');
	removeAtExit(root, opts.keep);
	console.log(`Throwaway folder: ${root}${opts.keep ? ' (kept)' : ''}`);
	const { tarball, ms: packMs } = await buildAndPack(root, opts.build);
	console.log(`build + pack: ${secs(packMs)}`);

	const emulator = await launchEmulator({ processingMs: 300, quiet: !opts.verbose });
	const extractionId = await createExtraction(emulator);
	console.log(`emulator ${emulator.url}; extraction ${extractionId} (${DOCUMENT_NAME}) created`);

	// the example as it is in the repository (its copy gets an id; nothing else to rewrite in it)
	const example = loadExample(DEFAULT_SOURCE, EXAMPLE_FILE);
	const userFolder = path.join(root, 'n8n');
	const workflow = prepareWorkflow(
		example,
		DEFAULT_SOURCE,
		path.join(userFolder, 'files'),
		emulator.filesUrl,
	);
	const trigger = workflow.nodes.find((n) => n.type === MCP_TRIGGER);
	const bearer = (trigger?.credentials as Record<string, { id: string; name: string }> | undefined)
		?.httpBearerAuth;
	const webhookPath = (trigger?.parameters as { path?: unknown } | undefined)?.path;
	if (!trigger || !bearer || typeof webhookPath !== 'string' || !webhookPath)
		throw new Error(
			`${EXAMPLE_FILE} has no MCP Server Trigger with a path and a Bearer Auth credential`,
		);
	const toolNodes = workflow.nodes.filter((n) => n.type === TOOL_TYPE);

	// n8n: one user folder, SQLite, the package unpacked as a community package
	const echo = opts.verbose ? 'n8n| ' : undefined;
	const ctx = await createContext(n8n.info, userFolder, echo);
	ctx.env.N8N_COMMUNITY_PACKAGES_ALLOW_TOOL_USAGE = 'true';
	await installPackageInto(userFolder, tarball);
	const tSetup = Date.now();
	await importFixtures(ctx, emulator, workflow);
	const token = randomBytes(24).toString('hex');
	const bearerFile = path.join(root, 'bearer-credential.json');
	writeFileSync(
		bearerFile,
		JSON.stringify([{ ...bearer, type: 'httpBearerAuth', data: { token } }]),
	);
	for (const args of [
		['import:credentials', `--input=${bearerFile}`],
		['publish:workflow', `--id=${example.id}`],
	]) {
		const r = await ctx.cli(args);
		if (r.code !== 0) throw commandError(`n8n ${args[0]}`, r);
	}
	console.log(
		`"${example.name}" and its credentials imported, the workflow published (${secs(Date.now() - tSetup)})`,
	);
	const tStart = Date.now();
	const server = await startServer(ctx, 180_000, echo);
	// ready is not yet published: n8n 2.41 activates published workflows through its publication
	// service (an outbox consumed after start), so the production URL is registered some time later
	const cookie = await setupOwner(ctx.url, OWNER);
	let publication = '';
	await waitUntil('n8n to report the workflow "published"', 120_000, async () => {
		publication = await publicationStatus(ctx.url, cookie, example.id);
		return publication.startsWith('published') ? publication : undefined;
	}).catch((err: Error) => {
		throw new Error(`${err.message}; last status: ${publication}\n${tail(server.output(), 30)}`);
	});
	const mcpUrl = `${ctx.url}/${MCP_ENDPOINT}/${webhookPath}`;
	console.log(
		`n8n ${n8n.info.version} started, the workflow ${publication} (${secs(Date.now() - tStart)}); MCP production URL ${mcpUrl}`,
	);

	// 1. the production URL asks for the token
	const initialize = {
		jsonrpc: '2.0',
		id: 1,
		method: 'initialize',
		params: {
			protocolVersion: '2025-06-18',
			capabilities: {},
			clientInfo: { name: 'no-token', version: '0' },
		},
	};
	const anonymous = await fetch(mcpUrl, {
		method: 'POST',
		headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
		body: JSON.stringify(initialize),
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
		let text = '';
		let isError = false;
		try {
			const result = await client.callTool({ name: opts.tool, arguments: args });
			text = resultText(result);
			isError = result.isError === true;
		} catch (err) {
			text = `the call threw: ${(err as Error).message}`;
			isError = true;
		}
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
			seen
				.map(
					(q) =>
						`${q.method} ${q.path}${Object.keys(q.query).length ? `?${new URLSearchParams(q.query as Record<string, string>).toString()}` : ''} → ${q.status}`,
				)
				.join(', ') || 'no request reached the emulator',
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

	if (opts.verbose || checks.failed.length > 0)
		console.log(`n8n's output ends:\n${tail(server.output(), opts.verbose ? 200 : 30)}`);
	await server.stop();
	await emulator.stop();
	cleanUpNow();
	const failed = checks.failed;
	console.log(`\n${checks.summary(`; whole run ${secs(Date.now() - t0)}`)}`);
	console.log(
		failed.length === 0 && called
			? `mcp: ${listed} tools listed, ${opts.tool} called, result has ${extractionId}`
			: `mcp: FAILED (${failed.map((f) => f.name).join('; ')})`,
	);
	return failed.length === 0 && called ? 0 : 1;
}

runMain(main, {
	label: 'mcp',
	onSignal: (sig) =>
		console.error(`\n${sig}: stopping every server and removing the throwaway folder`),
});
