/**
 * A SCRIPTED OpenAI-compatible chat model for scripts/e2e/agent.ts. It is a STUB: it stands in for
 * a real chat model, which cannot exist here (no network, no model weights), and it understands
 * nothing — it follows a two-step script so that the test can check what n8n's AI Agent does
 * around a model:
 *
 * 1. a request without a `tool` message → one tool call: `script.toolCall(last user message)`
 *    names the tool (the first offered one whose name matches) and its arguments; a tool behind a
 *    human-review step (its schema has `toolParameters`) gets them as `{ toolParameters, hitlParameters: {} }`;
 * 2. a request carrying a `tool` message → a final answer quoting the first match of `idPattern`
 *    in the tool results, or the start of those results.
 *
 * `POST /v1/chat/completions` only (JSON; `stream: true` is refused: n8n's AI Agent does not stream
 * behind a Respond to Chat node), on 127.0.0.1 on a free port; every request is logged with its
 * parsed body and what was answered.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatMessage {
	role: string;
	content?: unknown;
	tool_call_id?: string;
}

export interface ChatRequestBody {
	model?: string;
	stream?: boolean;
	messages: ChatMessage[];
	tools?: Array<{ function?: { name?: string; parameters?: { properties?: object } } }>;
}

export interface ModelRequest {
	body: ChatRequestBody;
	/** A short description of the answer. */
	answer: string;
	/** Set when this request was answered with a tool call: that call's id. */
	toolCallId?: string;
}

export interface Script {
	/** The tool call answering a user message (`tool` is matched against the offered tools' names). */
	toolCall(userMessage: string): { tool: RegExp; arguments: Record<string, unknown> };
	/** What to quote from the tool's result in the final answer. */
	idPattern: RegExp;
}

/** The text of a message's content (a string, or parts). */
export const text = (m: ChatMessage): string =>
	typeof m.content === 'string' ? m.content : JSON.stringify(m.content);

/** Request `n` as logged, and the assistant message answering it. */
function respond(
	script: Script,
	body: ChatRequestBody,
	n: number,
): { logged: ModelRequest; message: object } {
	const say = (content: string) => ({
		logged: { body, answer: `answer ${JSON.stringify(content)}` },
		message: { role: 'assistant', content },
	});
	const results = body.messages.filter((m) => m.role === 'tool').map(text);
	if (results.length > 0) {
		const found = script.idPattern.exec(results.join('\n'))?.[0];
		return say(found ? `The extraction is ${found}.` : `The tool said: ${results[0]}`);
	}
	const user = body.messages.filter((m) => m.role === 'user').at(-1);
	const call = script.toolCall(user ? text(user) : '');
	const tool = (body.tools ?? []).find((t) => call.tool.test(t.function?.name ?? ''))?.function;
	if (!tool?.name) return say(`No tool matching ${call.tool} was offered.`);
	const gated = tool.parameters?.properties && 'toolParameters' in tool.parameters.properties;
	const args = gated ? { toolParameters: call.arguments, hitlParameters: {} } : call.arguments;
	const f = { name: tool.name, arguments: JSON.stringify(args) };
	const id = `call_scripted_${n}`;
	return {
		logged: { body, answer: `tool call ${f.name}(${f.arguments})`, toolCallId: id },
		message: {
			role: 'assistant',
			content: null,
			tool_calls: [{ id, type: 'function', function: f }],
		},
	};
}

/** Starts the stub; `stop()` closes it and its connections. */
export async function startScriptedModel(
	script: Script,
): Promise<{ url: string; requests: ModelRequest[]; stop(): Promise<void> }> {
	const requests: ModelRequest[] = [];
	const server = http.createServer(async (req, res) => {
		const chunks: Buffer[] = [];
		for await (const c of req) chunks.push(c as Buffer);
		const json = (status: number, value: unknown) =>
			res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
		let body: ChatRequestBody | undefined;
		try {
			body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatRequestBody;
		} catch {
			/* answered below */
		}
		if (
			req.method !== 'POST' ||
			req.url !== '/v1/chat/completions' ||
			!Array.isArray(body?.messages) ||
			body.stream === true
		)
			return void json(400, {
				error: { message: `scripted model: no ${req.method} ${req.url} with messages, unstreamed` },
			});
		const n = requests.length + 1;
		const { logged, message } = respond(script, body, n);
		requests.push(logged);
		json(200, {
			id: `chatcmpl-scripted-${n}`,
			object: 'chat.completion',
			created: Math.floor(Date.now() / 1000),
			model: body.model ?? 'scripted',
			choices: [{ index: 0, message, finish_reason: logged.toolCallId ? 'tool_calls' : 'stop' }],
			usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
		});
	});
	await once(server.listen(0, '127.0.0.1'), 'listening');
	return {
		url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
		requests,
		stop: async () => {
			server.closeAllConnections();
			server.close();
			await once(server, 'close');
		},
	};
}
