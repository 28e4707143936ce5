/**
 * Run as a child process by `test/transport-promises.test.ts` (item 9), with `--expose-gc`: jest's
 * own references keep the signals alive, so the collector's effect shows only in a plain process.
 * Runs `RUNS` attempts against a fake request helper whose answer body never ends (a download
 * handed on, and a JSON answer being read), collects garbage while each waits, and prints how many
 * ended at their Request Timeout as one JSON line.
 */
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

import { attempt } from '../../nodes/shared/transport/attempt';

const RUNS = 20;
const TIMEOUT_MS = 50;
const node = { name: 'Extraction Service', type: 'x', typeVersion: 1, position: [0, 0] };
const collect = (globalThis as { gc?: () => void }).gc;
if (!collect) throw new Error('run with --expose-gc');

/** One attempt whose answer body never ends; resolves with the attempt's promise and the body. */
function start(expect?: 'binary') {
	const body = new Readable({ read: () => undefined });
	body.on('error', () => undefined); // n8n's binary storage listens for it
	const answer = async () => ({ statusCode: 200, headers: {}, body });
	const done = attempt(
		{
			ctx: { getNode: () => node, helpers: { httpRequestWithAuthentication: answer } } as never,
			requestTimeoutMs: TIMEOUT_MS,
			stopSignal: new AbortController().signal,
			cancelSignal: new AbortController().signal,
			credentialsDecrypted: { id: '', name: '', type: 'extractionServiceApi', data: {} },
		},
		{ family: 'v0', method: 'GET', path: '/v0/documents/x', itemIndex: 0, expect },
		'http://127.0.0.1:9/v0/documents/x',
	);
	return { done, body };
}

/** Collects garbage, then waits until the attempt's timer was due (timers run in the order they are due). */
async function collectAndWait(): Promise<void> {
	collect?.();
	await sleep(1);
	collect?.();
	await sleep(TIMEOUT_MS + 1);
	await new Promise((resolve) => setImmediate(resolve));
}

void (async () => {
	let downloads = 0;
	let answers = 0;
	for (let i = 0; i < RUNS; i++) {
		const download = start('binary');
		await download.done;
		await collectAndWait();
		if (download.body.destroyed) downloads++;

		let ended = false;
		void start().done.then(() => (ended = true));
		await collectAndWait();
		if (ended) answers++;
	}
	console.log(JSON.stringify({ runs: RUNS, downloads, answers }));
})();
