/**
 * End to end, part 3: the node as an AI agent's tool, in a real n8n 2.x (scripts/n8n/install.sh 2),
 * with a person approving the calls that change data.
 *
 *   npm run test:e2e:agent                         # about a minute warm
 *   npx tsx scripts/e2e/agent.ts --keep --verbose  # keep the throwaway folder, print n8n's output
 *
 * Options: --no-install, --no-build, --keep (the folder keeps model-requests.json: every request the
 * scripted model got), --verbose, --search TEXT (what the model searches for, default "invoice").
 *
 * examples/workflows/ai-agent-with-approval.json runs as it is, published (n8n-with-package.ts): a
 * public chat trigger, the AI Agent (version 3) with an OpenAI Chat Model whose credential points at
 * agent-model.ts — a SCRIPTED stub standing in for a chat model, which cannot exist here — the read
 * tools connected to the agent, the data-changing tools behind "Approve in Chat" (n8n's chatHitlTool).
 * This run chats as the hosted chat page does: POST /webhook/<id>/chat, then the /chat WebSocket
 * (answering heartbeats) for the messages, and "clicks" a button by GETting its link.
 *
 * 1. "Which extraction holds invoice INV-AGENT-7731?": the stub asks for Find_Extractions; checked:
 *    the tools were offered, the chat input reached the model, the emulator saw
 *    `GET /extract/?search=invoice`, the tool's result (with the extraction's id) went back to the
 *    model, and the answer in the chat quotes that id.
 * 2. "Delete the extraction <id>": the stub asks for Delete_Extraction; checked: the chat shows the
 *    call with Approve and Decline while the emulator saw no DELETE; after Approve it saw
 *    `DELETE /extract/<id>/` and the answer quotes the id.
 * 3. The same for another extraction, declined: no DELETE, and the model is told the user rejected it.
 *
 * The last lines:
 *
 *   agent: tool called 1 time, result reached the answer
 *   agent: Delete_Extraction waited for approval, ran after Approve, not after Decline
 */
import { randomUUID } from 'node:crypto';
import { on } from 'node:events';
import { writeFileSync } from 'node:fs';
import path from 'node:path';

import WebSocket from 'ws';

import type { EmulatorProcess } from '../../emulator/launch';
import { readArgs, RUNNER_FLAGS, runnerOptions } from '../lib/args';
import { requestLine, type Example } from '../n8n/examples';
import { startScriptedModel, text, type ModelRequest } from './agent-model';
import { createExtraction, runPublished, type Published } from './n8n-with-package';

const INVOICE_NUMBER = 'INV-AGENT-7731';
const FIND_INPUT = `Which extraction holds invoice ${INVOICE_NUMBER}? Give me its id.`;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;

const { values: v } = readArgs(__filename, { ...RUNNER_FLAGS, search: { type: 'string' } });
const opts = { ...runnerOptions(v), search: v.search ?? 'invoice' };

/** A message the chat shows: text, or (a send-and-wait approval) text with buttons. */
interface ChatMessage {
	text: string;
	buttons: Array<{ text: string; link: string }>;
}

/**
 * One conversation as n8n's hosted chat page has it: the message POSTed to the chat trigger's
 * production URL (`{action: 'sendMessage', sessionId, chatInput}` → `{executionId, resumeToken}`),
 * then that execution's `/chat` WebSocket, answering its heartbeats.
 *
 * @returns `next()`: the next message the chat shows (rejects when the socket closes first, or 4
 *   minutes after the start); `close()`
 * @throws Error when the trigger does not start an execution
 */
async function startChat(baseUrl: string, webhookId: string, chatInput: string) {
	const sessionId = randomUUID();
	const res = await fetch(`${baseUrl}/webhook/${webhookId}/chat`, {
		method: 'POST',
		headers: { 'content-type': 'application/json' },
		body: JSON.stringify({ action: 'sendMessage', sessionId, chatInput }),
		signal: AbortSignal.timeout(30_000),
	});
	const started = (await res.json()) as { executionId?: string; resumeToken?: string };
	if (!started.executionId)
		throw new Error(`chat trigger → ${res.status}: ${JSON.stringify(started)}`);
	const { executionId, resumeToken: token = '' } = started;
	const query = new URLSearchParams({ sessionId, executionId, isPublic: 'true', token });
	const ws = new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/chat?${query.toString()}`);
	ws.on('message', (d) => void (String(d) === 'n8n|heartbeat' && ws.send('n8n|heartbeat-ack')));
	const messages = on(ws, 'message', { close: ['close'], signal: AbortSignal.timeout(240_000) });
	return {
		async next(): Promise<ChatMessage> {
			for (let r = await messages.next(); !r.done; r = await messages.next()) {
				const s = String((r.value as unknown[])[0]);
				if (s.startsWith('n8n|')) continue;
				const m = (s.startsWith('{') ? JSON.parse(s) : { text: s }) as Partial<ChatMessage>;
				return { text: m.text ?? '', buttons: m.buttons ?? [] };
			}
			throw new Error('the chat closed without a message');
		},
		close: () => ws.close(),
	};
}

/** The `tool` messages of a request to the model. */
const toolMessages = (req: ModelRequest) => req.body.messages.filter((m) => m.role === 'tool');

/** A browser's User-Agent: n8n answers a bot's GET of an approval link (a link preview) with nothing. */
const BROWSER =
	'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

/** The text lines of a one-page invoice. */
const invoice = (number: string) => [`Invoice number: ${number}`, 'Total: 77.31 EUR'];

/** The emulator's API requests since `from` with this method and a path matching `pattern`. */
const seenSince = (emulator: EmulatorProcess, from: number, method: string, pattern: RegExp) =>
	emulator.requests
		.slice(from)
		.filter((q) => q.origin === 'api' && q.method === method && pattern.test(q.path));

let model: Awaited<ReturnType<typeof startScriptedModel>>;
let found = '';

/**
 * Asks the agent to delete an extraction made now (the find round lists every invoice), checks
 * that the chat asks first while nothing was deleted, clicks `button` and checks what the service
 * and the model saw then.
 *
 * @returns whether the round's checks passed
 */
async function approvalRound(
	{ emulator, ctx, check }: Published,
	webhookId: string,
	button: 'Approve' | 'Decline',
): Promise<boolean> {
	const id = await createExtraction(emulator, `agent-${button}.pdf`, invoice(`INV-${button}`));
	const from = emulator.requests.length;
	const asked = model.requests.length;
	const deletes = () => seenSince(emulator, from, 'DELETE', new RegExp(`^/extract/${id}/?$`));
	const chat = await startChat(ctx.url, webhookId, `Delete the extraction ${id}.`);
	try {
		const ask = await chat.next();
		await emulator.settle();
		const labels = ask.buttons.map((b) => b.text);
		check(
			`${button}: the chat asks before Delete_Extraction runs, and nothing was deleted`,
			ask.text.includes('Delete_Extraction') &&
				ask.text.includes(id) &&
				labels.includes('Approve') &&
				labels.includes('Decline') &&
				deletes().length === 0,
			`chat: ${JSON.stringify(ask.text.slice(0, 200))} [${labels.join(' | ')}]; DELETEs seen: ${deletes().length}`,
		);
		const clicked = await fetch(ask.buttons.find((b) => b.text === button)?.link ?? '', {
			headers: { 'user-agent': BROWSER },
			signal: AbortSignal.timeout(30_000),
		});
		await clicked.text();
		const reply = await chat.next();
		await emulator.settle();
		const seen = deletes();
		const told = model.requests.slice(asked).flatMap(toolMessages).map(text).join(' ');
		const detail = `GET the ${button} link → ${clicked.status}; emulator: ${seen.map(requestLine).join(', ') || 'no DELETE'}`;
		return button === 'Approve'
			? check(
					'after Approve the tool ran: the service saw the DELETE, the answer has the id',
					clicked.status === 200 &&
						seen.length === 1 &&
						seen[0].status < 300 &&
						reply.text.includes(id),
					`${detail}; chat: ${reply.text.slice(0, 200)}`,
				)
			: check(
					'after Decline the tool did not run, and the model was told so',
					clicked.status === 200 && seen.length === 0 && /rejected/i.test(told),
					`${detail}; tool message: ${told.slice(0, 200)}`,
				);
	} catch (err) {
		return check(`${button}: the approval round`, false, (err as Error).message);
	} finally {
		chat.close();
	}
}

/** The scripted model, the extraction to find, and the example's OpenAI credential pointing at the model. */
async function beforeImport(em: EmulatorProcess, ex: Example) {
	model = await startScriptedModel({
		toolCall: (message) =>
			/^Delete/.test(message)
				? { tool: /^Delete_Extraction$/, arguments: { extractionId: UUID.exec(message)?.[0] } }
				: { tool: /find/i, arguments: { search: opts.search } },
		idPattern: UUID,
	});
	found = await createExtraction(em, 'agent-invoice.pdf', invoice(INVOICE_NUMBER));
	console.log(`emulator ${em.url}, scripted model ${model.url}; extraction ${found} created`);
	const openAi = ex.workflow.nodes.find((n) => n.type.endsWith('.lmChatOpenAi'))?.credentials;
	const { openAiApi } = (openAi ?? {}) as Record<string, object>;
	if (!openAiApi) throw new Error('the example has no OpenAI Chat Model with a credential');
	const data = { apiKey: 'sk-scripted-stub', url: `${model.url}/v1` };
	return { credentials: [{ ...openAiApi, type: 'openAiApi', data }] };
}

/** The three chats, on the published example. */
async function main(run: Published) {
	const { emulator, ctx, check } = run;
	const trigger = run.workflow.nodes.find((n) => n.type.endsWith('.chatTrigger'));
	const webhookId = String(trigger?.webhookId ?? '');

	// 1. a read tool runs without asking anyone
	const before = emulator.requests.length;
	const findChat = await startChat(ctx.url, webhookId, FIND_INPUT);
	const answer = await findChat.next().catch((err: Error) => ({ text: err.message, buttons: [] }));
	findChat.close();
	const calls = [...model.requests];
	const toolCalls = calls.filter((q) => q.toolCallId);
	const [first] = calls;
	const offered = (first?.body.tools ?? []).map((t) => t.function?.name).join(', ');
	check(
		'the model was asked, with the tools offered',
		/find/i.test(offered),
		first
			? `first request offers ${offered || 'no tools'}`
			: 'no request reached the scripted model',
	);
	const userMessage = first?.body.messages.find((m) => m.role === 'user');
	check(
		'the chat input reached the model',
		!!userMessage && text(userMessage).includes(INVOICE_NUMBER),
		`user message: ${userMessage ? text(userMessage).slice(0, 160) : '-'}`,
	);
	const searches = seenSince(emulator, before, 'GET', /^\/extract\/?$/);
	check(
		`the tool ran with the model's arguments (search "${opts.search}")`,
		toolCalls.length === 1 && searches.length === 1 && searches[0].query.search === opts.search,
		`${toolCalls.length} tool call(s) asked for; emulator: ${searches.map(requestLine).join(', ') || 'no list request'}`,
	);
	const toolResult = calls
		.flatMap(toolMessages)
		.find((m) => m.tool_call_id === toolCalls[0]?.toolCallId);
	check(
		'the tool result went back to the model, with the extraction id',
		!!toolResult && text(toolResult).includes(found),
		toolResult
			? `tool message for ${toolResult.tool_call_id}: ${text(toolResult).slice(0, 200)}`
			: 'no request carried a tool message answering the call',
	);
	check(
		"the agent's answer quotes the extraction id",
		answer.text.includes(found),
		`chat message: ${answer.text.slice(0, 300)}`,
	);

	// 2 and 3. a data-changing tool waits for a person
	const done =
		(await approvalRound(run, webhookId, 'Approve')) &&
		(await approvalRound(run, webhookId, 'Decline'));

	writeFileSync(
		path.join(ctx.userFolder, '..', 'model-requests.json'),
		JSON.stringify(model.requests, null, 2),
	);
	for (const [i, q] of model.requests.entries())
		console.log(
			`model request ${i + 1}: stream=${q.body.stream === true} tools=[${(q.body.tools ?? []).map((t) => t.function?.name).join(', ')}] messages=[${q.body.messages.map((m) => m.role).join(', ')}] → ${q.answer}`,
		);
	await model.stop();
	const ran = searches.length;
	const okLine =
		`agent: tool called ${ran} time${ran === 1 ? '' : 's'}, result reached the answer\n` +
		'agent: Delete_Extraction waited for approval, ran after Approve, not after Decline';
	return { done, okLine };
}

runPublished('agent', opts, 'ai-agent-with-approval.json', beforeImport, main);
