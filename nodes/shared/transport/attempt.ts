/**
 * One HTTP attempt of a request (`docs/service-api.md` §node, Retries and timeouts): its timer, its
 * signals, its streamed answer read as far as needed.
 */
import type {
	ICredentialsDecrypted,
	IHttpRequestOptions,
	IN8nHttpFullResponse,
} from 'n8n-workflow';

import { MAX_ANSWER_BYTES, MAX_ERROR_BODY_BYTES, readCapped } from './body';
import { withCancelSignal } from './cancel-signal';
import { CREDENTIAL_TYPE } from './families';
import { isStreamedMultipart, type StreamedMultipart } from './multipart-stream';
import { CancelledError } from './sleep';
import type { Context, ServiceRequest } from './types';

/** Longest wait a Node timer takes (2³¹ − 1 ms, about 24.8 days): longer ones fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The least time left to a deadline for which an attempt is still started (ms). */
const MIN_ATTEMPT_MS = 100;

/** What one HTTP attempt gave: an answer (any status), or the failure and whether the attempt's own time ran out. */
export type AttemptOutcome =
	| {
			response: IN8nHttpFullResponse;
			error?: undefined;
			timedOut?: undefined;
			/** The body went on beyond what was read (see `readCapped`). */
			cut?: boolean;
			local?: undefined;
	  }
	| {
			response?: undefined;
			error: unknown;
			timedOut: boolean;
			cut?: undefined;
			/** The body could not be built or read (`UploadReadError`): the node's failure, not the network's. */
			local?: boolean;
	  };

/** What an attempt runs with besides the request. */
export interface AttemptContext {
	ctx: Context;
	/** Timeout of one attempt (ms, Request Timeout). */
	requestTimeoutMs: number;
	/** Aborts reads and polls (the execution stops, or a sibling item failed without Continue On Fail). */
	stopSignal: AbortSignal;
	/** Aborts creates too (only when the execution is cancelled: a create's answer names a job). */
	cancelSignal: AbortSignal;
	credentialsDecrypted: ICredentialsDecrypted;
}

/**
 * One HTTP attempt, through `httpRequestWithAuthentication`, aborted at min(Request Timeout, time
 * left to `req.deadline`) or when its stop signal aborts (`stopSignal` for GET and DELETE,
 * `cancelSignal` for creates).
 *
 * The attempt's own signal reaches n8n-core through `withCancelSignal` (cancel-signal.ts). Should
 * an n8n line honour neither that nor `abortSignal`, the wait still ends on time: the attempt
 * also races its signal, leaving the request to finish on its own.
 *
 * Every answer is asked for as a stream (`encoding: 'stream'`, which n8n passes to axios as
 * `responseType`, its body then the response stream) and read by `readCapped`: a 3xx or error
 * answer up to `MAX_ERROR_BODY_BYTES`, a JSON answer up to `MAX_ANSWER_BYTES`; a download's 2xx body
 * is returned unread, as the stream it is (`DownloadBody`).
 *
 * @param url the absolute URL
 * @returns the answer (any status) with its body as a Buffer and `cut` when it went on beyond
 *   its cap, or the failure and whether the attempt's own time ran out (never throws)
 */
export async function attempt(
	at: AttemptContext,
	req: ServiceRequest,
	url: string,
): Promise<AttemptOutcome> {
	if (at.stopSignal.aborted) return { error: new CancelledError(), timedOut: false };
	// No request is started that could not be answered before its deadline.
	if (req.deadline !== undefined && req.deadline - Date.now() < MIN_ATTEMPT_MS)
		return { error: new CancelledError(), timedOut: true };
	// Whole ms within what a timer can wait (a fraction or more than about 24.8 days is a RangeError).
	const left = req.deadline === undefined ? Infinity : req.deadline - Date.now();
	const timeoutMs = Math.min(
		MAX_TIMER_MS,
		Math.max(1, Math.ceil(Math.min(at.requestTimeoutMs, left))),
	);
	const stop = req.method === 'GET' || req.method === 'DELETE' ? at.stopSignal : at.cancelSignal;
	const timeout = AbortSignal.timeout(timeoutMs);
	const signal = AbortSignal.any([stop, timeout]);
	// Node 20 collects a timeout signal that only an AbortSignal.any holds (nodejs/node#57736), and
	// the attempt's time then never runs out: a listener of its own keeps it until it fires, or until
	// the attempt ends (a download handed on: until its stream closes).
	const holdTimeout = (): void => undefined;
	const releaseTimeout = () => timeout.removeEventListener('abort', holdTimeout);
	timeout.addEventListener('abort', holdTimeout, { once: true });
	let handedOn = false;
	let built: unknown;
	try {
		built = typeof req.body === 'function' ? await req.body() : req.body;
	} catch (error) {
		return { error, timedOut: false, local: true };
	}
	// A streamed multipart body travels as a raw Readable with its own Content-Type/-Length; a
	// file that fails while it is sent fails the body stream, and the attempt with its error.
	const streamed: StreamedMultipart | undefined = isStreamedMultipart(built) ? built : undefined;
	let bodyError: unknown;
	streamed?.stream.once('error', (error: unknown) => (bodyError = error));
	let stopListening = (): void => undefined;
	try {
		const body = streamed ? streamed.stream : built;
		const isJsonBody =
			body !== undefined && !streamed && !(body instanceof FormData) && !Buffer.isBuffer(body);
		const options: IHttpRequestOptions = {
			method: req.method,
			url,
			qs: req.qs,
			body: body as IHttpRequestOptions['body'],
			headers: {
				Accept: req.expect === 'binary' ? '*/*' : 'application/json',
				...(streamed?.headers ?? {}),
			},
			json: isJsonBody,
			returnFullResponse: true,
			ignoreHttpStatusErrors: true,
			disableFollowRedirect: true,
			timeout: timeoutMs,
			abortSignal: signal,
			// Every answer is streamed, so that no more of it is read than needed (`readCapped`).
			encoding: 'stream',
		};
		const aborted = new Promise<never>((_, reject) => {
			const onAbort = () => reject(new CancelledError());
			signal.addEventListener('abort', onAbort, { once: true });
			stopListening = () => signal.removeEventListener('abort', onAbort);
		});
		const request = at.ctx.helpers.httpRequestWithAuthentication.call(
			withCancelSignal(at.ctx, signal),
			CREDENTIAL_TYPE[req.family],
			options,
			{ credentialsDecrypted: at.credentialsDecrypted },
		) as Promise<IN8nHttpFullResponse>;
		request.catch(() => undefined); // settles on its own when the race below is lost
		const response = await Promise.race([request, aborted]);
		// A downloaded file is not read here: its stream goes on to n8n's binary storage
		// (`helpers/downloads.ts`), still bound by this attempt's signal (Request Timeout, deadline).
		if (req.expect === 'binary' && response.statusCode < 300) {
			// Should an n8n line not honour the signal, the stream is ended at it anyway.
			const stream = response.body as {
				destroy?: (error: Error) => void;
				once?: (event: 'close', listener: () => void) => void;
			};
			signal.addEventListener('abort', () => stream.destroy?.(new CancelledError()), {
				once: true,
			});
			handedOn = typeof stream.once === 'function';
			stream.once?.('close', releaseTimeout);
			return { response };
		}
		// A 3xx's or an error's body up to MAX_ERROR_BODY_BYTES (a download's too), a JSON answer
		// up to MAX_ANSWER_BYTES; the rest is left unread.
		const cap = response.statusCode >= 300 ? MAX_ERROR_BODY_BYTES : MAX_ANSWER_BYTES;
		const read = readCapped(response.body, cap);
		read.catch(() => undefined);
		const { bytes, cut } = await Promise.race([read, aborted]);
		return { response: { ...response, body: bytes }, cut };
	} catch (error) {
		if (bodyError !== undefined) return { error: bodyError, timedOut: false, local: true };
		return { error, timedOut: signal.aborted && !stop.aborted };
	} finally {
		stopListening();
		if (!handedOn) releaseTimeout();
		// Closes the stored files when the service answered before reading the whole body.
		streamed?.stream.destroy();
	}
}
