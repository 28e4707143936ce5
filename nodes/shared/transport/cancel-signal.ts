/**
 * n8n-core's `httpRequestWithAuthentication` sets every request's `abortSignal` to
 * `this.getExecutionCancelSignal()` — the whole execution's — overwriting the one the node passes.
 * One attempt must still be abortable on its own (its Request Timeout, the wait's deadline, a
 * sibling item's failure), so the request is made on a context that inherits everything from the
 * node's and answers `getExecutionCancelSignal()` with the attempt's signal. n8n lines that read
 * `abortSignal` itself get the same signal there (the client sets both).
 *
 * @param ctx the node's context (an execution, a list search, a trigger's poll)
 * @param signal the attempt's signal
 * @returns a context for one request: `ctx` with `getExecutionCancelSignal()` giving `signal`
 */
export function withCancelSignal<C extends object>(ctx: C, signal: AbortSignal): C {
	return Object.create(ctx, { getExecutionCancelSignal: { value: () => signal } }) as C;
}
