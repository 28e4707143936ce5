/**
 * Child processes of the benchmark: the emulator (its CLI, so its memory and CPU stay out of the
 * node's figures) and the workers that run the node (bench/worker.ts, one fresh process per
 * measurement). Every child started here is tracked and killed by its own pid on exit.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

import type { LoggedRequest } from '../emulator';

export const ROOT = path.join(__dirname, '..');

const children = new Set<ChildProcess>();

/** Kills every child still running (SIGTERM), by pid. */
export function killChildren(): void {
	for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
	children.clear();
}

/** `node --import tsx <script>`: one process (the tsx CLI would add a parent process). */
function spawnTs(script: string, args: string[], env: NodeJS.ProcessEnv, nodeFlags: string[] = []): ChildProcess {
	const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', path.join(ROOT, script), ...args], {
		cwd: ROOT,
		env,
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	children.add(child);
	child.once('exit', () => children.delete(child));
	return child;
}

export interface EmulatorChild {
	url: string;
	filesUrl: string;
	apiKey: string;
	pid: number;
	/** Request log (REQ lines received so far), arrival order of the answers. */
	requests: LoggedRequest[];
	/** Waits until no REQ line arrived for `quietMs` (the log of finished requests is complete). */
	settle(quietMs?: number): Promise<void>;
	stop(): Promise<void>;
}

/**
 * Starts `emulator/cli.ts --port 0 --processing-ms <ms> --log-requests --quiet` on 127.0.0.1 and
 * reads its `EMULATOR_READY {json}` line (bounded by `timeoutMs`).
 */
export async function startEmulatorChild(processingMs: number, timeoutMs = 30_000): Promise<EmulatorChild> {
	const child = spawnTs(
		'emulator/cli.ts',
		['--host', '127.0.0.1', '--port', '0', '--processing-ms', String(processingMs), '--log-requests', '--quiet'],
		{ ...process.env },
	);
	const requests: LoggedRequest[] = [];
	let lastLine = Date.now();
	let stderr = '';
	child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
	const lines = createInterface({ input: child.stdout! });
	const ready = new Promise<{ url: string; filesUrl: string; apiKey: string }>((resolve, reject) => {
		const timer = setTimeout(() => reject(new Error(`emulator not ready after ${timeoutMs} ms\n${stderr}`)), timeoutMs);
		child.once('exit', (code) => reject(new Error(`emulator exited with ${code}\n${stderr}`)));
		lines.on('line', (line) => {
			if (line.startsWith('REQ ')) {
				requests.push(JSON.parse(line.slice(4)) as LoggedRequest);
				lastLine = Date.now();
			} else if (line.startsWith('EMULATOR_READY ')) {
				clearTimeout(timer);
				resolve(JSON.parse(line.slice('EMULATOR_READY '.length)));
			}
		});
	});
	const info = await ready;
	return {
		...info,
		pid: child.pid!,
		requests,
		async settle(quietMs = 300) {
			for (let i = 0; i < 100 && Date.now() - lastLine < quietMs; i++) await sleep(quietMs);
		},
		async stop() {
			if (child.exitCode !== null || child.signalCode !== null) return;
			const exited = new Promise((resolve) => child.once('exit', resolve));
			child.kill('SIGTERM');
			await Promise.race([exited, sleep(10_000)]);
			if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
		},
	};
}

/**
 * Runs `bench/worker.ts <args>` in a fresh process and returns the JSON of its `RESULT {json}` line.
 * stderr is passed through. Rejects when the worker exits without a result or after `timeoutMs`.
 */
export async function runWorker<T>(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<T> {
	const child = spawnTs('bench/worker.ts', args, env, ['--expose-gc']);
	// The node's MaxListenersExceededWarning (see BENCHMARKS.md) is counted, not repeated.
	let listenerWarnings = 0;
	createInterface({ input: child.stderr! }).on('line', (line) => {
		if (/MaxListenersExceededWarning/.test(line)) listenerWarnings++;
		else if (!/^\(Use `node --trace-warnings/.test(line)) process.stderr.write(`${line}\n`);
	});
	let result: T | undefined;
	createInterface({ input: child.stdout! }).on('line', (line) => {
		if (line.startsWith('RESULT ')) result = JSON.parse(line.slice(7)) as T;
		else if (line.trim()) process.stdout.write(`    [worker] ${line}\n`);
	});
	const code = await new Promise<number | null>((resolve) => {
		const timer = setTimeout(() => {
			child.kill('SIGTERM');
			resolve(null);
		}, timeoutMs);
		child.once('close', (c) => {
			clearTimeout(timer);
			resolve(c);
		});
	});
	if (listenerWarnings) process.stdout.write(`    [worker] stderr: ${listenerWarnings} × MaxListenersExceededWarning (abort listeners on the node's AbortSignal)\n`);
	if (result === undefined) throw new Error(`worker ${args[0]} ${code === null ? `timed out after ${timeoutMs} ms` : `exited with ${code}`} without a result`);
	return result;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
