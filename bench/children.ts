/**
 * The worker processes of the benchmark that run the node (bench/worker.ts, one fresh process per
 * measurement). Every child started here is tracked and killed by its own pid on exit. The emulator
 * child comes from emulator/launch.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

const ROOT = path.join(__dirname, '..');

const children = new Set<ChildProcess>();

/** Kills every child still running (SIGTERM), by pid. */
export function killChildren(): void {
	for (const child of children)
		if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
	children.clear();
}

/**
 * Runs `bench/<script> <args>` (default `worker.ts`) in a fresh process and returns the JSON of its
 * `RESULT {json}` line. stderr is passed through. Rejects when the worker exits without a result or
 * after `timeoutMs`.
 */
export async function runWorker<T>(
	args: string[],
	env: NodeJS.ProcessEnv,
	timeoutMs: number,
	script = 'worker.ts',
): Promise<T> {
	// `node --import tsx`: one process (the tsx CLI would add a parent process).
	const child = spawn(
		process.execPath,
		['--expose-gc', '--import', 'tsx', path.join(ROOT, 'bench', script), ...args],
		{
			cwd: ROOT,
			env,
			stdio: ['ignore', 'pipe', 'pipe'],
		},
	);
	children.add(child);
	child.once('exit', () => children.delete(child));
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
	if (listenerWarnings)
		process.stdout.write(
			`    [worker] stderr: ${listenerWarnings} × MaxListenersExceededWarning (abort listeners on the node's AbortSignal)\n`,
		);
	if (result === undefined)
		throw new Error(
			`worker ${args[0]} ${code === null ? `timed out after ${timeoutMs} ms` : `exited with ${code}`} without a result`,
		);
	return result;
}
