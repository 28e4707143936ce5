/**
 * The emulator as a child process (`node --import tsx cli.ts --log-requests`), for callers that keep
 * it out of their own process: the benchmarks and the real-n8n runs. A child of
 * scripts/lib/processes.ts, so it gets SIGTERM when this process exits (and removes its files).
 */
import path from 'node:path';

import { sleep, startService } from '../scripts/lib/processes';
import type { Emulator, LoggedRequest } from './index';

/** cli.ts's stdout: its first line (+ {@link EmulatorReady} JSON), answers to stdin control lines, request-log lines (+ LoggedRequest JSON). */
export const READY_PREFIX = 'EMULATOR_READY ';
export const CONTROL_PREFIX = 'CONTROL ';
export const REQUEST_PREFIX = 'REQ ';

/** What cli.ts announces once it listens. */
export type EmulatorReady = Pick<Emulator, 'url' | 'filesUrl' | 'apiKey' | 'token'>;

/** cli.ts's `--processing-ms`, `--processing-max-ms` and `--quiet`. */
export interface LaunchOptions {
	processingMs: number;
	processingMaxMs?: number;
	quiet?: boolean;
	/** How long to wait for the READY line, ms; default 60 000. */
	readyTimeoutMs?: number;
}

/** A running emulator child process. */
export interface EmulatorProcess extends EmulatorReady {
	pid: number;
	/** One entry per answered request, in the order of the answers. */
	requests: LoggedRequest[];
	/**
	 * Replaces the random faults (a `--random-faults` spec, or `off`) through a stdin control line.
	 *
	 * @throws Error when the spec is refused or not acknowledged within 10 s
	 */
	setRandomFaults(spec: string): Promise<void>;
	/** Waits until `quietMs` (default 300) pass without a request-log line, from this call on; at most 100 × `quietMs`. */
	settle(quietMs?: number): Promise<void>;
	/** SIGTERM, then SIGKILL after 10 s; resolves once the child has exited. */
	stop(): Promise<void>;
}

const CLI = path.join(__dirname, 'cli.ts');

/**
 * Starts cli.ts on a free loopback port.
 *
 * @throws Error with the child's output when it prints no READY line within `readyTimeoutMs`
 */
export async function launchEmulator(options: LaunchOptions): Promise<EmulatorProcess> {
	const args = ['--host', '127.0.0.1', '--port', '0', '--log-requests'];
	args.push('--processing-ms', String(options.processingMs));
	if (options.processingMaxMs !== undefined)
		args.push('--processing-max-ms', String(options.processingMaxMs));
	if (options.quiet) args.push('--quiet');
	const service = startService('emulator', process.execPath, ['--import', 'tsx', CLI, ...args], {
		stdin: true,
		exitSignal: 'SIGTERM',
	});
	const requests: LoggedRequest[] = [];
	// setRandomFaults calls waiting, answered in order by the CONTROL lines
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
			let timer: NodeJS.Timeout | undefined;
			const a = await new Promise<string>((resolve, reject) => {
				const late = `the emulator did not acknowledge "random-faults ${spec}" within 10 s`;
				timer = setTimeout(() => reject(new Error(late)), 10_000);
				controlAnswers.push(resolve);
				service.child.stdin!.write(`random-faults ${spec}\n`);
			}).finally(() => clearTimeout(timer));
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
