/**
 * The emulator as a child process, for callers that keep it out of their own process: the benchmarks
 * (bench/run.ts: its memory and CPU stay out of the node's figures) and the real-n8n runs
 * (scripts/n8n/run-examples.ts). Starts cli.ts with `--log-requests` as one Node process
 * (`node --import tsx`; the tsx CLI would add a parent process), reads its `EMULATOR_READY {json}`
 * line and collects its `REQ {json}` lines; a child of scripts/lib/processes.ts, so an emulator still
 * running when this process exits gets SIGTERM (it then removes its temporary files itself).
 */
import path from 'node:path';

import { sleep, startService } from '../scripts/lib/processes';
import type { Emulator, LoggedRequest } from './index';

/** Prefix of cli.ts's first machine-readable line, followed by {@link EmulatorReady} as JSON. */
export const READY_PREFIX = 'EMULATOR_READY ';
/** Prefix of cli.ts's answer to a control line on its stdin (`random-faults …`). */
export const CONTROL_PREFIX = 'CONTROL ';
/** Prefix of each request-log line of cli.ts with `--log-requests`, followed by a LoggedRequest as JSON. */
export const REQUEST_PREFIX = 'REQ ';

/** What cli.ts announces once it listens: the two origins' URLs, the v0 API key and the unversioned token. */
export type EmulatorReady = Pick<Emulator, 'url' | 'filesUrl' | 'apiKey' | 'token'>;

export interface LaunchOptions {
	/** Processing time of every job, ms (`--processing-ms`). */
	processingMs: number;
	/** With a value above processingMs, each job's time is drawn between the two (`--processing-max-ms`). */
	processingMaxMs?: number;
	/** Errors answered at random, as cli.ts's `--random-faults` spec (e.g. `*:429:0.03,GET:503:0.05`). */
	randomFaults?: string;
	/** No error output from the emulator (`--quiet`); default false. */
	quiet?: boolean;
	/** How long to wait for the READY line, ms; default 60 000. */
	readyTimeoutMs?: number;
}

/** A running emulator child process. */
export interface EmulatorProcess extends EmulatorReady {
	pid: number;
	/** The request log: one entry per answered request, in the order of the answers. */
	requests: LoggedRequest[];
	/**
	 * Replaces the random faults of the running emulator (a `--random-faults` spec, or `off`), through
	 * a control line on its stdin; resolves once it acknowledged.
	 *
	 * @throws Error when the spec is refused or no acknowledgement comes within 10 s
	 */
	setRandomFaults(spec: string): Promise<void>;
	/**
	 * Waits until `quietMs` (default 300) have passed without a new request-log line, counted from
	 * this call at the earliest (a request just answered may still be on its way); at most 100 × `quietMs`.
	 */
	settle(quietMs?: number): Promise<void>;
	/** SIGTERM, then SIGKILL after 10 s; resolves once the child has exited. */
	stop(): Promise<void>;
}

const CLI = path.join(__dirname, 'cli.ts');

/**
 * Starts `emulator/cli.ts --host 127.0.0.1 --port 0 --processing-ms N [--processing-max-ms M] --log-requests [--quiet]`.
 *
 * @throws Error with the child's output when it exits before its READY line, or prints none within
 *   `readyTimeoutMs` (the child is then killed)
 */
export async function launchEmulator(options: LaunchOptions): Promise<EmulatorProcess> {
	const args = [
		'--host',
		'127.0.0.1',
		'--port',
		'0',
		'--processing-ms',
		String(options.processingMs),
		...(options.processingMaxMs !== undefined
			? ['--processing-max-ms', String(options.processingMaxMs)]
			: []),
		...(options.randomFaults ? ['--random-faults', options.randomFaults] : []),
		'--log-requests',
		...(options.quiet ? ['--quiet'] : []),
	];
	// SIGTERM when this process exits: the emulator then removes its temporary files itself
	const service = startService('emulator', process.execPath, ['--import', 'tsx', CLI, ...args], {
		stdin: true,
		exitSignal: 'SIGTERM',
	});
	const requests: LoggedRequest[] = [];
	/** Waiting setRandomFaults calls, answered in order by the CONTROL lines. */
	const controlAnswers: Array<(answer: string) => void> = [];
	let lastRequestAt = Date.now();
	service.onLine((line, stream) => {
		if (stream !== 'stdout') return;
		if (line.startsWith(CONTROL_PREFIX))
			controlAnswers.shift()?.(line.slice(CONTROL_PREFIX.length));
		else if (line.startsWith(REQUEST_PREFIX)) {
			requests.push(JSON.parse(line.slice(REQUEST_PREFIX.length)) as LoggedRequest);
			lastRequestAt = Date.now();
		}
	});
	const readyLine = await service
		.waitForLine(new RegExp(`^${READY_PREFIX}`), options.readyTimeoutMs ?? 60_000)
		.catch(async (err: Error) => {
			await service.kill();
			throw new Error(`the emulator did not start: ${err.message}`);
		});
	const ready = JSON.parse(readyLine.slice(READY_PREFIX.length)) as EmulatorReady;

	return {
		...ready,
		pid: service.pid,
		requests,
		async setRandomFaults(spec: string) {
			const answer = new Promise<string>((resolve, reject) => {
				const timer = setTimeout(
					() =>
						reject(
							new Error(`the emulator did not acknowledge "random-faults ${spec}" within 10 s`),
						),
					10_000,
				);
				controlAnswers.push((a) => {
					clearTimeout(timer);
					resolve(a);
				});
			});
			service.child.stdin!.write(`random-faults ${spec}\n`);
			const a = await answer;
			if (a.startsWith('error '))
				throw new Error(`the emulator refused "random-faults ${spec}": ${a.slice(6)}`);
		},
		async settle(quietMs = 300) {
			const calledAt = Date.now();
			for (let i = 0; i < 100 && Date.now() - Math.max(lastRequestAt, calledAt) < quietMs; i++)
				await sleep(quietMs);
		},
		stop: () => service.stop(10_000),
	};
}
