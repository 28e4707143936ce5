/**
 * The n8n-core cancel-signal override (nodes/shared/transport/cancel-signal.ts): n8n-core's
 * own `httpRequestWithAuthentication` overwrites a request's `abortSignal` with the context's
 * `getExecutionCancelSignal()`; on the context `withCancelSignal` makes, the request that reaches n8n's
 * outbound HTTP carries the attempt's signal, and everything else still comes from the node's context.
 * n8n's outbound HTTP is replaced by a recorder through n8n's own DI container.
 */
import { OutboundHttp } from '@n8n/backend-network';
import { Container } from '@n8n/di';
import { httpRequestWithAuthentication } from 'n8n-core/dist/execution-engine/node-execution-context/utils/request-helpers/authentication';
import type { IHttpRequestOptions } from 'n8n-workflow';

import { withCancelSignal } from '../nodes/shared/transport/cancel-signal';

const execution = new AbortController();
const ctx = {
	getExecutionCancelSignal: () => execution.signal,
	getNode: () => ({ name: 'Extraction Service' }),
	helpers: {},
	logger: console,
};
const additionalData = {
	credentialsHelper: {
		getParentTypes: () => [],
		preAuthentication: async () => undefined,
		authenticate: async (_c: unknown, _t: string, options: IHttpRequestOptions) => options,
	},
};

let sent: IHttpRequestOptions | undefined;
beforeAll(() => {
	const recorder = {
		requests: () => ({
			request: async (options: IHttpRequestOptions) => {
				sent = options;
				return { statusCode: 200, body: '{}', headers: {} };
			},
		}),
	};
	Container.set(OutboundHttp, recorder as unknown as OutboundHttp);
});
afterAll(() => Container.reset());

/** Sends one request through n8n-core's own helper on `context`; returns the options it sent on. */
async function sendOn(context: object): Promise<IHttpRequestOptions | undefined> {
	sent = undefined;
	await httpRequestWithAuthentication.call(
		context as never,
		'extractionServiceApi',
		{
			url: 'http://127.0.0.1/v0/documents',
			method: 'GET',
			abortSignal: new AbortController().signal,
		},
		{} as never,
		ctx.getNode() as never,
		additionalData as never,
		{ credentialsDecrypted: { id: '1', name: 'x', type: 'extractionServiceApi', data: {} } },
	);
	return sent;
}

describe('withCancelSignal', () => {
	it("n8n-core replaces the node's abortSignal with the execution's: the attempt's own signal is lost", async () => {
		expect((await sendOn(ctx))?.abortSignal).toBe(execution.signal);
	});

	it("on the context it makes, the attempt's signal is what n8n-core sends on", async () => {
		const attempt = new AbortController();
		expect((await sendOn(withCancelSignal(ctx, attempt.signal)))?.abortSignal).toBe(attempt.signal);
	});

	it("the rest of the context is the node's own", () => {
		const attempt = new AbortController();
		const made = withCancelSignal(ctx, attempt.signal);
		expect([made.getNode, made.helpers, made.logger]).toEqual([
			ctx.getNode,
			ctx.helpers,
			ctx.logger,
		]);
		expect(ctx.getExecutionCancelSignal()).toBe(execution.signal);
	});
});
