/**
 * End to end, part 3: the node as an AI agent's tool, in a real n8n 2.x (scripts/n8n/install.sh 2).
 *
 *   npx tsx scripts/e2e/agent.ts                  # opt-in; a warm run takes about half a minute
 *   npx tsx scripts/e2e/agent.ts --keep --verbose # keep the throwaway folder, print n8n's output
 *
 * Options: --no-install (use the n8n cache as it is), --no-build, --keep (keep the throwaway folder,
 * with model-requests.json: every request the scripted model got), --verbose, --timeout S
 * (`n8n execute`, default 300), --search TEXT (what the scripted model searches for, default "invoice").
 *
 * No queue mode here: this part tests the agent ↔ tool ↔ model round trip, not the deployment, so
 * it runs one `n8n execute` on n8n's default SQLite database (the queue-mode stack is run.ts).
 *
 * The pieces, all on 127.0.0.1 and throwaway:
 * - the service emulator (emulator/launch.ts); one extraction is created there first (a PDF
 *   invoice, the seeded Invoice schema) so that the tool has something to find;
 * - agent-model.ts: a SCRIPTED OpenAI-compatible chat completions server. It is a stub standing in
 *   for a chat model, which cannot exist here: it asks for the tool "Find Extractions" with
 *   `{"search": "invoice"}`, then answers with a sentence quoting the extraction id it finds in
 *   the tool result that n8n sent back. It logs every request;
 * - n8n 2.41.1 with this package installed as a community package (the packed tarball, as run.ts);
 *   an OpenAI credential whose Base URL (`url`) points at the stub; the Extraction Service token
 *   credential pointing at the emulator;
 * - the workflow: the AI Agent, the OpenAI Chat Model and the two tool nodes of
 *   examples/workflows/ai-agent-tool.json, taken from that file as they are, with its chat trigger
 *   replaced by Manual Trigger → Set (`chatInput`), since `n8n execute` cannot start a chat trigger.
 *   (Built here rather than as a new file in examples/workflows/: every file there must have a check
 *   in scripts/n8n/checks.ts for `npm run test:n8n`.)
 *
 * Checked: the stub got a request offering the tools; the model's tool call reached the tool (the
 * emulator saw `GET /extract/?search=invoice`); the next request to the stub carries a `tool`
 * message answering that call whose content holds the extraction's id; the agent's output (from
 * `n8n execute --rawOutput`) contains the id the stub quoted. The last line:
 *
 *   agent: tool called 1 time, result reached the answer
 *
 * Exit code 0 only when every check passed.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { launchEmulator } from '../../emulator/launch';
import { makePdf } from '../../emulator/sample-pdf';
import { numberFlag, readArgs, RUNNER_FLAGS, runnerOptions, type RunnerOptions } from '../lib/args';
import { Checks } from '../lib/checks';
import {
	buildAndPack,
	installLine,
	installPackageInto,
	lastJsonDocument,
	n8nCli,
	n8nEnv,
	n8nImport,
	TOKEN_CREDENTIAL,
} from '../lib/n8n';
import { freePort } from '../lib/ports';
import { cleanUpNow, removeAtExit, ROOT, runMain, secs, tail } from '../lib/processes';
import { SEEDED_INVOICE_SCHEMA } from '../n8n/examples';
import { startScriptedModel, type ModelRequest } from './agent-model';
import { makeRunRoot } from './services';

const EXAMPLE = path.join(ROOT, 'examples', 'workflows', 'ai-agent-tool.json');
const WORKFLOW_ID = 'e2eAiAgentTool01';
const OPENAI_CREDENTIAL = {
	id: 'e2eOpenAiStub01',
	name: 'Scripted Model (stub)',
	type: 'openAiApi',
};
const INVOICE_NUMBER = 'INV-AGENT-7731';
const CHAT_INPUT = `Which extraction holds invoice ${INVOICE_NUMBER}? Give me its id.`;

interface Options extends RunnerOptions {
	timeoutS: number;
	search: string;
}

function parseArgs(): Options {
	const { values: v } = readArgs(__filename, {
		...RUNNER_FLAGS,
		timeout: { type: 'string' },
		search: { type: 'string' },
	});
	return {
		...runnerOptions(v),
		timeoutS: numberFlag('timeout', v.timeout, 300, 10),
		search: v.search ?? 'invoice',
	};
}

const checks = new Checks();
const check = checks.check.bind(checks);

type Node = {
	name: string;
	type: string;
	typeVersion: number;
	position: [number, number];
	parameters: Record<string, unknown>;
	credentials?: Record<string, { id: string; name: string }>;
} & Record<string, unknown>;
type Workflow = {
	nodes: Node[];
	connections: Record<
		string,
		Record<string, Array<Array<{ node: string; type: string; index: number }>>>
	>;
} & Record<string, unknown>;

/** examples/workflows/ai-agent-tool.json with Manual Trigger → Set (chatInput) instead of its chat trigger, the model's credential set. */
function agentWorkflow(): Workflow {
	const example = JSON.parse(readFileSync(EXAMPLE, 'utf8')) as Workflow;
	const chatTrigger = example.nodes.find((n) => n.type === '@n8n/n8n-nodes-langchain.chatTrigger');
	const agent = example.nodes.find((n) => n.type === '@n8n/n8n-nodes-langchain.agent');
	if (!chatTrigger || !agent) throw new Error(`${EXAMPLE} has no chat trigger or no AI Agent`);
	const nodes: Node[] = example.nodes
		.filter((n) => n !== chatTrigger && n.type !== 'n8n-nodes-base.stickyNote')
		.map((n) =>
			n.type === '@n8n/n8n-nodes-langchain.lmChatOpenAi'
				? {
						...n,
						credentials: { openAiApi: { id: OPENAI_CREDENTIAL.id, name: OPENAI_CREDENTIAL.name } },
					}
				: n,
		);
	nodes.push(
		{
			id: 'a9e2e000-0000-4000-8000-000000000001',
			name: 'Start',
			type: 'n8n-nodes-base.manualTrigger',
			typeVersion: 1,
			position: [-240, 0],
			parameters: {},
		},
		{
			id: 'a9e2e000-0000-4000-8000-000000000002',
			name: 'Chat Message',
			type: 'n8n-nodes-base.set',
			typeVersion: 3.4,
			position: [0, 0],
			parameters: {
				mode: 'manual',
				assignments: {
					assignments: [
						{
							id: 'a9e2e000-0000-4000-8000-000000000003',
							name: 'chatInput',
							value: CHAT_INPUT,
							type: 'string',
						},
					],
				},
				options: {},
			},
		},
	);
	const connections = { ...example.connections };
	delete connections[chatTrigger.name];
	connections.Start = { main: [[{ node: 'Chat Message', type: 'main', index: 0 }]] };
	connections['Chat Message'] = { main: [[{ node: agent.name, type: 'main', index: 0 }]] };
	return {
		...example,
		id: WORKFLOW_ID,
		name: 'E2E: AI Agent with the Extraction Service tool (scripted model)',
		active: false,
		nodes,
		connections,
		pinData: {},
	};
}

/** The last JSON document in stdout (n8n 2.x prints log lines before it), as scripts/n8n/run-examples.ts reads it. */
/** The JSON of a node's output items in an IRun. */
function nodeJson(run: Record<string, unknown>, node: string): Array<Record<string, unknown>> {
	const runData = (
		run.data as
			| {
					resultData?: {
						runData?: Record<
							string,
							Array<{ data?: { main?: Array<Array<{ json: Record<string, unknown> }>> } }>
						>;
					};
			  }
			| undefined
	)?.resultData?.runData;
	return (runData?.[node] ?? []).flatMap((r) => r.data?.main?.[0] ?? []).map((i) => i.json);
}

/** The ids of the tool calls in an assistant message the stub sent, and the `tool` messages n8n sent back. */
function toolMessages(req: ModelRequest): Array<{ tool_call_id?: string; content: string }> {
	return req.body.messages
		.filter((m) => m.role === 'tool')
		.map((m) => ({
			tool_call_id: m.tool_call_id,
			content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content),
		}));
}

async function main(): Promise<number> {
	const opts = parseArgs();
	const t0 = Date.now();
	const n8n = await installLine('2', { install: opts.install });
	console.log(
		`n8n ${n8n.info.version} ${n8n.installed ? 'installed now' : 'cached'} (${secs(n8n.ms)})`,
	);
	const root = makeRunRoot('n8n-es-agent-');
	removeAtExit(root, opts.keep);
	console.log(`Throwaway folder: ${root}${opts.keep ? ' (kept)' : ''}`);
	const { tarball, ms: packMs } = await buildAndPack(root, opts.build);
	console.log(`build + pack: ${secs(packMs)}`);

	const emulator = await launchEmulator({ processingMs: 300, quiet: true });
	const model = await startScriptedModel({
		toolName: /find/i,
		toolArguments: { search: opts.search },
		idPattern: /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/,
	});
	console.log(`emulator ${emulator.url}, scripted model ${model.url}`);

	// the extraction the agent is to find
	const form = new FormData();
	const pdf = await makePdf([
		[
			{ text: 'INVOICE', bold: true, size: 20 },
			'',
			`Invoice number: ${INVOICE_NUMBER}`,
			'Invoice date: 2026-11-22',
			'Vendor: Agent Test Supplies',
			'Total: 77.31 EUR',
			'Currency: EUR',
		],
	]);
	form.append(
		'document',
		new Blob([new Uint8Array(pdf)], { type: 'application/pdf' }),
		'agent-invoice.pdf',
	);
	form.append('server', 'EU-1');
	form.append('schema', SEEDED_INVOICE_SCHEMA);
	const created = await fetch(`${emulator.url}/extract/`, {
		method: 'POST',
		headers: { authorization: emulator.token },
		body: form,
		signal: AbortSignal.timeout(30_000),
	});
	const extraction = (await created.json()) as { id?: string };
	if (created.status !== 201 || !extraction.id)
		throw new Error(
			`creating the extraction at the emulator: ${created.status} ${JSON.stringify(extraction).slice(0, 300)}`,
		);
	const extractionId = extraction.id;
	console.log(
		`extraction created at the emulator: ${extractionId} (agent-invoice.pdf, ${INVOICE_NUMBER})`,
	);

	// n8n: one user folder, SQLite, the package unpacked as a community package
	const userFolder = path.join(root, 'n8n');
	const filesDir = path.join(root, 'files');
	mkdirSync(filesDir, { recursive: true });
	await installPackageInto(userFolder, tarball);
	const env = n8nEnv({ line: n8n.info, userFolder, filesDir, brokerPort: await freePort() });
	const cli = n8nCli(n8n.info, userFolder, env, opts.verbose ? 'n8n| ' : undefined);
	const tSetup = Date.now();
	const credentials = [
		{ ...TOKEN_CREDENTIAL, data: { baseUrl: emulator.url, token: emulator.token } },
		{ ...OPENAI_CREDENTIAL, data: { apiKey: 'sk-scripted-stub', url: `${model.url}/v1` } },
	];
	await n8nImport(cli, 'credentials', path.join(root, 'credentials.json'), credentials, 300_000);
	await n8nImport(cli, 'workflow', path.join(root, 'workflow.json'), agentWorkflow());
	console.log(`n8n database + import: ${secs(Date.now() - tSetup)}`);

	const emulatorBefore = emulator.requests.length;
	const tExec = Date.now();
	const r = await cli(['execute', `--id=${WORKFLOW_ID}`, '--rawOutput'], opts.timeoutS * 1000);
	console.log(
		`n8n execute: exit ${r.code}${r.timedOut ? ' (timed out)' : ''}, ${secs(Date.now() - tExec)}`,
	);
	if (r.code !== 0 && !opts.verbose) console.log(tail(`${r.stdout}\n${r.stderr}`, 40));
	await emulator.settle();

	// what the stub saw (also in model-requests.json, with --keep)
	const calls = model.requests;
	writeFileSync(path.join(root, 'model-requests.json'), JSON.stringify(calls, null, 2));
	for (const [i, q] of calls.entries()) {
		console.log(
			`model request ${i + 1}: POST ${q.path} stream=${q.body.stream === true} model=${q.body.model} tools=[${(q.body.tools ?? []).map((t) => t.function?.name).join(', ')}] ` +
				`messages=[${q.body.messages.map((m) => m.role).join(', ')}] → ${q.answer}`,
		);
	}
	const toolCalls = calls.filter((q) => q.toolCallId);
	const first = calls[0];
	check(
		'the model was asked, with the tools offered',
		!!first && (first.body.tools ?? []).some((t) => /find/i.test(t.function?.name ?? '')),
		first
			? `first request offers ${(first.body.tools ?? []).map((t) => t.function?.name).join(', ') || 'no tools'}`
			: 'no request reached the scripted model',
	);
	check(
		'the chat input reached the model',
		!!first &&
			first.body.messages.some(
				(m) => m.role === 'user' && String(m.content).includes(INVOICE_NUMBER),
			),
		first
			? `user message: ${JSON.stringify(first.body.messages.find((m) => m.role === 'user')?.content ?? null).slice(0, 160)}`
			: '-',
	);
	const searches = emulator.requests
		.slice(emulatorBefore)
		.filter((q) => q.origin === 'api' && q.method === 'GET' && /\/extract\/?$/.test(q.path));
	const searchedWith = searches.map((q) => q.query.search);
	check(
		`the tool ran with the model's arguments (search "${opts.search}")`,
		toolCalls.length === 1 && searchedWith.length === 1 && searchedWith[0] === opts.search,
		`${toolCalls.length} tool call(s) asked for; emulator: ${searches.map((q) => `${q.method} ${q.path}?search=${String(q.query.search)} → ${q.status}`).join(', ') || 'no list request'}`,
	);
	const answered = calls.find((q) => q.toolCallId === undefined && toolMessages(q).length > 0);
	const toolResult = answered
		? toolMessages(answered).find((m) => m.tool_call_id === toolCalls[0]?.toolCallId)
		: undefined;
	check(
		'the tool result went back to the model, with the extraction id',
		!!toolResult && toolResult.content.includes(extractionId),
		toolResult
			? `tool message for ${toolResult.tool_call_id}: ${toolResult.content.slice(0, 200)}`
			: 'no request carried a tool message answering the call',
	);
	const run = lastJsonDocument(r.stdout);
	const output = run ? nodeJson(run, 'AI Agent').map((j) => j.output) : [];
	const answer = typeof output[0] === 'string' ? output[0] : '';
	check(
		"the agent's answer quotes the extraction id",
		r.code === 0 && answer.includes(extractionId),
		`AI Agent output: ${JSON.stringify(output).slice(0, 300)}`,
	);

	await Promise.all([emulator.stop(), model.stop()]);
	cleanUpNow();
	const failed = checks.failed;
	console.log(`\n${checks.summary(`; whole run ${secs(Date.now() - t0)}`)}`);
	const ok = failed.length === 0;
	const ran = searches.length;
	console.log(
		ok
			? `agent: tool called ${ran} time${ran === 1 ? '' : 's'}, result reached the answer`
			: `agent: FAILED (${failed.map((f) => f.name).join('; ')})`,
	);
	return ok ? 0 : 1;
}

runMain(main, {
	label: 'agent',
	onSignal: (sig) =>
		console.error(`\n${sig}: stopping every server and removing the throwaway folder`),
});
