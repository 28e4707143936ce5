/**
 * The worker processes of the benchmark that run the node (bench/worker.ts, one fresh process per
 * measurement), children of scripts/lib/processes.ts like the emulator (emulator/launch.ts).
 */
import path from 'node:path';

import { ROOT, startService } from '../scripts/lib/processes';

/**
 * Runs `bench/<script> <args>` (default `worker.ts`) in a fresh process and returns the JSON of its
 * `RESULT {json}` line. stderr is passed through.
 *
 * @throws Error when the worker exits without a result or after `timeoutMs` (it is then killed)
 */
export async function runWorker<T>(
	args: string[],
	env: NodeJS.ProcessEnv,
	timeoutMs: number,
	script = 'worker.ts',
): Promise<T> {
	// `node --import tsx`: one process (the tsx CLI would add a parent process).
	const worker = startService(
		'worker',
		process.execPath,
		['--expose-gc', '--import', 'tsx', path.join(ROOT, 'bench', script), ...args],
		{ env },
	);
	// The node's MaxListenersExceededWarning (see BENCHMARKS.md) is counted, not repeated.
	let listenerWarnings = 0;
	let result: T | undefined;
	worker.onLine((line, stream) => {
		if (stream === 'stdout') {
			if (line.startsWith('RESULT ')) result = JSON.parse(line.slice(7)) as T;
			else if (line.trim()) process.stdout.write(`    [worker] ${line}\n`);
		} else if (/MaxListenersExceededWarning/.test(line)) listenerWarnings++;
		else if (!/^(\(Use `node --trace-warnings|\[worker exited)/.test(line))
			process.stderr.write(`${line}\n`);
	});
	const timer = setTimeout(() => void worker.kill(), timeoutMs);
	const { code, signal } = await worker.done;
	clearTimeout(timer);
	if (listenerWarnings)
		process.stdout.write(
			`    [worker] stderr: ${listenerWarnings} × MaxListenersExceededWarning (abort listeners on the node's AbortSignal)\n`,
		);
	if (result === undefined)
		throw new Error(
			`worker ${args[0]} ${signal ? `ended by ${signal} (timeout ${timeoutMs} ms)` : `exited with ${code}`} without a result`,
		);
	return result;
}
