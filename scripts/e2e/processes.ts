/**
 * Child processes of the end-to-end run: each in its own process group (n8n starts task runners,
 * Dovecot and PostgreSQL start helpers of their own), its whole output written to a log file (each
 * line prefixed with the time it arrived) and
 * its recent output kept for error messages; every one of them is killed when this process ends,
 * whether normally, on an error or on a signal, and the throwaway folders are removed then.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync, rmSync, type WriteStream } from 'node:fs';
import net from 'node:net';
import { createInterface } from 'node:readline';

const children = new Set<ChildProcess>();
const cleanups: Array<() => void> = [];

/** Sends `signal` to the child's whole process group (the child alone when that fails). */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
	if (child.pid === undefined) return;
	try {
		process.kill(-child.pid, signal);
	} catch {
		if (child.exitCode !== null || child.signalCode !== null) return;
		try {
			child.kill(signal);
		} catch {
			/* already gone */
		}
	}
}

/** Runs `fn` at exit, after every child has been killed (folders to remove and the like). */
export function onCleanup(fn: () => void): void {
	cleanups.push(fn);
}

/** Removes `dir` at exit (unless `keep`). */
export function removeAtExit(dir: string, keep = false): void {
	// retries: a server killed a moment ago may still be writing its last files
	if (!keep)
		onCleanup(() => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }));
}

/**
 * Whether a process of one of these process groups is still running (zombies do not count: our own
 * children are reaped only once the event loop runs again). Reads /proc (Linux); false without it.
 */
function groupsAlive(groups: Set<number>): boolean {
	let entries: string[];
	try {
		entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
	} catch {
		return false;
	}
	for (const pid of entries) {
		try {
			// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses: read after the last ')'
			const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
			const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
			if (state !== 'Z' && groups.has(Number(pgrp))) return true;
		} catch {
			/* gone meanwhile */
		}
	}
	return false;
}

/**
 * Kills every child still running (SIGKILL to each process group), waits (synchronously, at most
 * 5 s: this also runs in the exit hook) until those groups are gone, then runs the cleanups; safe
 * to call twice.
 */
export function cleanUpNow(): void {
	const groups = new Set(
		[...children].map((c) => c.pid).filter((pid): pid is number => pid !== undefined),
	);
	for (const child of children) killGroup(child, 'SIGKILL');
	children.clear();
	const until = Date.now() + 5000;
	const pause = new Int32Array(new SharedArrayBuffer(4));
	while (groups.size > 0 && groupsAlive(groups) && Date.now() < until)
		Atomics.wait(pause, 0, 0, 50);
	for (const fn of cleanups.splice(0)) {
		try {
			fn();
		} catch {
			/* best effort at exit */
		}
	}
}

/**
 * Runs a script's `main` and exits with its code (an exception: its stack, then code 1), after
 * `cleanUpNow` either way. The last line of each runner of scripts/e2e.
 *
 * @param label what failed, in the message of an exception (`<label> FAILED: …`)
 */
export function runMain(main: () => Promise<number>, label: string): void {
	main().then(
		(code) => {
			cleanUpNow();
			process.exit(code);
		},
		(err: unknown) => {
			console.error(
				`\n${label} FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
			);
			cleanUpNow();
			process.exit(1);
		},
	);
}

let hooksInstalled = false;

/** Installs the exit and signal hooks once; SIGINT, SIGTERM and SIGHUP end the run with code 130. */
export function installExitHooks(onSignal: (signal: NodeJS.Signals) => void): void {
	if (hooksInstalled) return;
	hooksInstalled = true;
	process.on('exit', cleanUpNow);
	let signalled = false;
	for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
		process.on(sig, () => {
			// tsx relays the terminal's SIGINT once more: one message, one cleanup
			if (signalled) return;
			signalled = true;
			onSignal(sig);
			// not in this tick: under `npx tsx`, tsx's own handler must first tell its parent that the
			// signal arrived (an IPC message), or the parent kills this process mid-cleanup
			setTimeout(() => {
				cleanUpNow();
				process.exit(130);
			}, 100);
		});
	}
}

/** The end of a command run with {@link runCommand}. */
export interface Done {
	code: number | null;
	signal: NodeJS.Signals | null;
	stdout: string;
	stderr: string;
	ms: number;
	timedOut: boolean;
}

/** Where and as whom a child runs. */
export interface SpawnOptions {
	cwd?: string;
	env?: NodeJS.ProcessEnv;
	/** Run as this user and group (only as root; PostgreSQL refuses to run as root). */
	uid?: number;
	gid?: number;
}

/**
 * Runs a command to its end in its own process group; after `timeoutMs` it gets SIGTERM, then
 * SIGKILL 5 s later. What it left in its group is killed when it exits.
 */
export function runCommand(
	cmd: string,
	args: string[],
	opts: SpawnOptions & { timeoutMs: number; input?: string },
): Promise<Done> {
	const t0 = Date.now();
	return new Promise((resolve, reject) => {
		const child = spawn(cmd, args, {
			cwd: opts.cwd,
			env: opts.env ?? process.env,
			uid: opts.uid,
			gid: opts.gid,
			stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
			detached: true,
		});
		children.add(child);
		let stdout = '';
		let stderr = '';
		let timedOut = false;
		child.stdout!.setEncoding('utf8').on('data', (c: string) => void (stdout += c));
		child.stderr!.setEncoding('utf8').on('data', (c: string) => void (stderr += c));
		if (opts.input !== undefined) child.stdin!.end(opts.input);
		const timer = setTimeout(() => {
			timedOut = true;
			killGroup(child, 'SIGTERM');
			setTimeout(() => killGroup(child, 'SIGKILL'), 5000).unref();
		}, opts.timeoutMs);
		child.on('error', (err) => {
			children.delete(child);
			clearTimeout(timer);
			reject(err);
		});
		child.on('close', (code, signal) => {
			clearTimeout(timer);
			killGroup(child, 'SIGKILL');
			children.delete(child);
			resolve({ code, signal, stdout, stderr, ms: Date.now() - t0, timedOut });
		});
	});
}

/** A long-running child (a server) with its log file and its recent output. */
export interface Service {
	name: string;
	child: ChildProcess;
	pid: number;
	logFile: string;
	/** The last 20 000 characters of its stdout and stderr. */
	output(): string;
	exited(): boolean;
	/** Calls `fn` with each output line from now on (stdout and stderr). */
	onLine(fn: (line: string) => void): void;
	/** Resolves with the first line (seen so far or later) that matches; rejects after `timeoutMs` or when the service exits. */
	waitForLine(pattern: RegExp, timeoutMs: number): Promise<string>;
	/** Its stop signal (SIGTERM unless set) to the service, SIGKILL to its group after `graceMs` (default 10 s); resolves once it has exited. */
	stop(graceMs?: number): Promise<void>;
	/** SIGKILL to its group at once (the fault round's "worker dies"). */
	kill(): Promise<void>;
}

const OUTPUT_CHARS = 20_000;

/** Starts a long-running command in its own process group; its output goes to `logFile` too. */
export function startService(
	name: string,
	cmd: string,
	args: string[],
	opts: SpawnOptions & {
		logFile: string;
		echo?: boolean;
		/** what `stop()` sends first; default SIGTERM */ stopSignal?: NodeJS.Signals;
	},
): Service {
	const child = spawn(cmd, args, {
		cwd: opts.cwd,
		env: opts.env ?? process.env,
		uid: opts.uid,
		gid: opts.gid,
		stdio: ['ignore', 'pipe', 'pipe'],
		detached: true,
	});
	children.add(child);
	const log: WriteStream = createWriteStream(opts.logFile, { flags: 'a' });
	let out = '';
	const seen: string[] = [];
	const listeners: Array<(line: string) => void> = [];
	const onLine = (line: string): void => {
		out = (out + line + '\n').slice(-OUTPUT_CHARS);
		log.write(`${new Date().toISOString()} ${line}\n`);
		if (opts.echo) process.stderr.write(`[${name}] ${line}\n`);
		seen.push(line);
		if (seen.length > 5000) seen.splice(0, seen.length - 5000);
		for (const fn of listeners) fn(line);
	};
	createInterface({ input: child.stdout! }).on('line', onLine);
	createInterface({ input: child.stderr! }).on('line', onLine);
	const exited = (): boolean => child.exitCode !== null || child.signalCode !== null;
	const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
	child.once('exit', (code, signal) => {
		onLine(`[${name} exited: ${signal ?? `code ${code}`}]`);
		// helpers in its group (task runners, PostgreSQL's backends): end them with it
		killGroup(child, 'SIGKILL');
		children.delete(child);
		log.end();
	});
	child.on('error', (err) => onLine(`[spawn error] ${err.message}`));
	const service: Service = {
		name,
		child,
		pid: child.pid ?? -1,
		logFile: opts.logFile,
		output: () => out,
		exited,
		onLine: (fn) => void listeners.push(fn),
		waitForLine(pattern, timeoutMs) {
			const hit = seen.find((l) => pattern.test(l));
			if (hit !== undefined) return Promise.resolve(hit);
			return new Promise((resolve, reject) => {
				const timer = setTimeout(
					() =>
						reject(
							new Error(
								`${name}: no line matching ${pattern} within ${timeoutMs} ms; its output ends:\n${tail(out)}`,
							),
						),
					timeoutMs,
				);
				listeners.push((line) => {
					if (pattern.test(line)) {
						clearTimeout(timer);
						resolve(line);
					}
				});
				void gone.then(() => {
					clearTimeout(timer);
					reject(
						new Error(
							`${name} exited (${child.signalCode ?? `code ${child.exitCode}`}) before a line matching ${pattern}; its output ends:\n${tail(out)}`,
						),
					);
				});
			});
		},
		async stop(graceMs = 10_000) {
			if (exited()) return;
			// only the service itself: it stops its helpers (a group SIGTERM would hit PostgreSQL's backends first)
			child.kill(opts.stopSignal ?? 'SIGTERM');
			const killer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
			await gone;
			clearTimeout(killer);
		},
		async kill() {
			if (exited()) return;
			killGroup(child, 'SIGKILL');
			await gone;
		},
	};
	return service;
}

/** The last `lines` lines of `text`. */
export function tail(text: string, lines = 25): string {
	return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** A loopback port nothing listens on now. */
export function freePort(): Promise<number> {
	return new Promise((resolve, reject) => {
		const srv = net.createServer();
		srv.once('error', reject);
		srv.listen(0, '127.0.0.1', () => {
			const { port } = srv.address() as net.AddressInfo;
			srv.close(() => resolve(port));
		});
	});
}

export const sleep = (ms: number): Promise<void> =>
	new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` every `everyMs` until it returns a value other than undefined.
 *
 * @throws Error naming `what` (and the last error `check` threw) after `timeoutMs`
 */
export async function waitUntil<T>(
	what: string,
	timeoutMs: number,
	check: () => Promise<T | undefined>,
	everyMs = 500,
): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	let lastError: unknown;
	for (;;) {
		try {
			const v = await check();
			if (v !== undefined) return v;
		} catch (err) {
			lastError = err;
		}
		if (Date.now() >= deadline) {
			throw new Error(
				`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}`,
			);
		}
		await sleep(everyMs);
	}
}
