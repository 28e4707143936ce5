/**
 * A SCRIPTED OpenAI-compatible chat model for scripts/e2e/agent.ts. It is a STUB: it stands in for
 * a real chat model, which cannot exist here (no network, no model weights), and it understands
 * nothing — it follows a two-step script so that the test can check what n8n's AI Agent does
 * around a model:
 *
 * 1. a request without a `tool` message → an assistant message asking for one tool call: the first
 *    offered tool whose name matches `toolName`, with `toolArguments` (finish_reason `tool_calls`);
 * 2. a request carrying the `tool` message that answers that call → a final answer quoting the
 *    first match of `idPattern` in the tool's result (finish_reason `stop`).
 *
 * Endpoint: `POST /v1/chat/completions` (also `GET /v1/models`, in case anything lists models).
 * Answers non-streaming JSON, or Server-Sent Events (`chat.completion.chunk` deltas, `[DONE]`) when
 * the request says `stream: true`. Listens on 127.0.0.1 on a free port; every request is logged
 * (path, parsed body, what was answered).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatMessage {
	role: string;
	content?: unknown;
	tool_call_id?: string;
	tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
}

export interface ChatRequestBody {
	model?: string;
	stream?: boolean;
	messages: ChatMessage[];
	tools?: Array<{
		type: string;
		function?: { name?: string; description?: string; parameters?: unknown };
	}>;
	[key: string]: unknown;
}

export interface ModelRequest {
	method: string;
	path: string;
	body: ChatRequestBody;
	/** A short description of the answer. */
	answer: string;
	/** Set when this request was answered with a tool call: that call's id. */
	toolCallId?: string;
}

export interface ScriptedModel {
	url: string;
	requests: ModelRequest[];
	stop(): Promise<void>;
}

export interface Script {
	/** Which offered tool to call (matched against the tools' names in the request). */
	toolName: RegExp;
	toolArguments: Record<string, unknown>;
	/** What to quote from the tool's result in the final answer. */
	idPattern: RegExp;
}

type Completion = {
	content: string | null;
	toolCall?: { id: string; name: string; arguments: string };
};

function respond(script: Script, body: ChatRequestBody, n: number): Completion {
	const toolMessages = body.messages.filter((m) => m.role === 'tool');
	if (toolMessages.length === 0) {
		const tool = (body.tools ?? [])
			.map((t) => t.function?.name ?? '')
			.find((name) => script.toolName.test(name));
		if (!tool) return { content: `No tool matching ${script.toolName} was offered.` };
		return {
			content: null,
			toolCall: {
				id: `call_scripted_${n}`,
				name: tool,
				arguments: JSON.stringify(script.toolArguments),
			},
		};
	}
	const result = toolMessages
		.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
		.join('\n');
	const found = script.idPattern.exec(result)?.[0];
	return {
		content: found
			? `The extraction you are looking for is ${found}.`
			: 'The tool found no extraction.',
	};
}

function completionJson(c: Completion, model: string, n: number): unknown {
	return {
		id: `chatcmpl-scripted-${n}`,
		object: 'chat.completion',
		created: Math.floor(Date.now() / 1000),
		model,
		choices: [
			{
				index: 0,
				message: {
					role: 'assistant',
					content: c.content,
					...(c.toolCall
						? {
								tool_calls: [
									{
										id: c.toolCall.id,
										type: 'function',
										function: { name: c.toolCall.name, arguments: c.toolCall.arguments },
									},
								],
							}
						: {}),
				},
				finish_reason: c.toolCall ? 'tool_calls' : 'stop',
			},
		],
		usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
	};
}

function completionChunks(c: Completion, model: string, n: number): unknown[] {
	const base = {
		id: `chatcmpl-scripted-${n}`,
		object: 'chat.completion.chunk',
		created: Math.floor(Date.now() / 1000),
		model,
	};
	const chunk = (delta: unknown, finish: string | null) => ({
		...base,
		choices: [{ index: 0, delta, finish_reason: finish }],
	});
	if (c.toolCall) {
		return [
			chunk(
				{
					role: 'assistant',
					content: null,
					tool_calls: [
						{
							index: 0,
							id: c.toolCall.id,
							type: 'function',
							function: { name: c.toolCall.name, arguments: '' },
						},
					],
				},
				null,
			),
			chunk({ tool_calls: [{ index: 0, function: { arguments: c.toolCall.arguments } }] }, null),
			chunk({}, 'tool_calls'),
		];
	}
	return [
		chunk({ role: 'assistant', content: '' }, null),
		chunk({ content: c.content }, null),
		chunk({}, 'stop'),
	];
}

export async function startScriptedModel(script: Script): Promise<ScriptedModel> {
	const requests: ModelRequest[] = [];
	const server = http.createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on('data', (c: Buffer) => chunks.push(c));
		req.on('end', () => {
			const path = (req.url ?? '/').split('?')[0];
			if (req.method === 'GET' && path === '/v1/models') {
				res.writeHead(200, { 'content-type': 'application/json' }).end(
					JSON.stringify({
						object: 'list',
						data: [{ id: 'gpt-4o-mini', object: 'model', owned_by: 'scripted' }],
					}),
				);
				return;
			}
			if (req.method !== 'POST' || path !== '/v1/chat/completions') {
				res
					.writeHead(404, { 'content-type': 'application/json' })
					.end(JSON.stringify({ error: { message: `scripted model: no ${req.method} ${path}` } }));
				return;
			}
			let body: ChatRequestBody;
			try {
				body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequestBody;
				if (!Array.isArray(body.messages)) throw new Error('no messages');
			} catch (err) {
				res.writeHead(400, { 'content-type': 'application/json' }).end(
					JSON.stringify({
						error: { message: `scripted model: bad body: ${(err as Error).message}` },
					}),
				);
				return;
			}
			const n = requests.length + 1;
			const c = respond(script, body, n);
			const model = body.model ?? 'scripted';
			requests.push({
				method: req.method,
				path,
				body,
				answer: c.toolCall
					? `tool call ${c.toolCall.name}(${c.toolCall.arguments})`
					: `answer ${JSON.stringify(c.content)}`,
				toolCallId: c.toolCall?.id,
			});
			if (body.stream === true) {
				res.writeHead(200, {
					'content-type': 'text/event-stream',
					'cache-control': 'no-cache',
					connection: 'keep-alive',
				});
				for (const ch of completionChunks(c, model, n))
					res.write(`data: ${JSON.stringify(ch)}\n\n`);
				res.end('data: [DONE]\n\n');
			} else {
				res
					.writeHead(200, { 'content-type': 'application/json' })
					.end(JSON.stringify(completionJson(c, model, n)));
			}
		});
	});
	await new Promise<void>((resolve, reject) => {
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => resolve());
	});
	const { port } = server.address() as AddressInfo;
	return {
		url: `http://127.0.0.1:${port}`,
		requests,
		stop: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}
