/**
 * The child processes of the tooling, in one registry per process. Each runs in its own process
 * group (n8n, PostgreSQL and Dovecot start helpers of their own); every one still running when this
 * process exits (normally, on an error, on a signal with {@link runMain}) is ended with its whole
 * group, then the cleanups (throwaway folders) run.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { createWriteStream, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';

export const ROOT = path.resolve(__dirname, '..', '..');

/** Running children and the signal each gets at exit (SIGKILL unless it cleans up after itself). */
const children = new Map<ChildProcess, NodeJS.Signals>();
const cleanups: Array<() => void> = [];
let exitHookInstalled = false;

export const sleep = (ms: number): Promise<void> =>
	new Promise((resolve) => setTimeout(resolve, ms));

/** `12.3s`: a duration in ms as seconds for reports. */
export const secs = (ms: number): string => `${(ms / 1000).toFixed(1)}s`;

/** The last `lines` lines of `text`. */
export function tail(text: string, lines = 25): string {
	return text.trimEnd().split('\n').slice(-lines).join('\n');
}

/** Sends `signal` to the child's whole process group (the child alone when that fails). */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
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

/** Removes `dir` at exit (unless `keep`), after every child ended, retrying while one may still write. */
export function removeAtExit(dir: string, keep = false): void {
	if (keep) return;
	cleanups.push(() =>
		rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }),
	);
	installExitHook();
}

function installExitHook(): void {
	if (!exitHookInstalled) process.on('exit', cleanUpNow);
	exitHookInstalled = true;
}

/** Whether a process of these groups still runs (not a zombie: ours are reaped only later); Linux's /proc. */
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

/** Blocks (this also runs in the exit hook) until the groups are gone, at most `ms`. */
function waitForGroups(groups: Set<number>, ms: number): void {
	const until = Date.now() + ms;
	const pause = new Int32Array(new SharedArrayBuffer(4));
	while (groups.size > 0 && groupsAlive(groups) && Date.now() < until)
		Atomics.wait(pause, 0, 0, 50);
}

/**
 * Ends every child still running (its exit signal to its group, SIGKILL to what is left after 5 s),
 * then runs the cleanups. Synchronous (it runs in the exit hook); safe to call twice.
 */
export function cleanUpNow(): void {
	const groups = new Set(
		[...children.keys()].map((c) => c.pid).filter((pid): pid is number => pid !== undefined),
	);
	const all = [...children];
	children.clear();
	for (const [child, signal] of all) killGroup(child, signal);
	waitForGroups(groups, 5000);
	for (const [child] of all) killGroup(child, 'SIGKILL');
	waitForGroups(groups, 1000);
	for (const fn of cleanups.splice(0)) {
		try {
			fn();
		} catch {
			/* best effort at exit */
		}
	}
}

/** How {@link runMain} handles a signal. */
export interface MainOptions {
	/** What failed, in the message of an exception (`<label> FAILED: …`). */
	label: string;
	/** Called on the first signal; once it settles (at most 30 s) every child is killed, exit 130. */
	onSignal?: (signal: NodeJS.Signals) => void | Promise<void>;
}

/**
 * Runs a script's `main` and exits with its code (an exception: `<label> FAILED: <stack>`, 1), after
 * {@link cleanUpNow}. A second signal more than 2 s after the first ends the run at once (a
 * terminal's Ctrl-C arrives twice: from the terminal and relayed by tsx).
 */
export function runMain(main: () => Promise<number>, options: MainOptions): void {
	installExitHook();
	let firstSignalAt = 0;
	const finish = (): never => {
		cleanUpNow();
		process.exit(130);
	};
	for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
		process.on(sig, () => {
			if (firstSignalAt) {
				if (Date.now() - firstSignalAt > 2000) finish();
				return;
			}
			firstSignalAt = Date.now();
			setTimeout(finish, 30_000).unref();
			const stopped = Promise.resolve(
				options.onSignal
					? options.onSignal(sig)
					: console.error(`\n${sig}: stopping every child process`),
			);
			// at least 100 ms: under `npx tsx`, tsx must first tell its parent that the signal arrived
			// (an IPC message), or the parent kills this process mid-cleanup
			void Promise.all([stopped.catch(() => undefined), sleep(100)]).then(finish);
		});
	}
	main().then(
		(code) => {
			cleanUpNow();
			process.exit(code);
		},
		(err: unknown) => {
			console.error(
				`\n${options.label} FAILED: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
			);
			cleanUpNow();
			process.exit(1);
		},
	);
}

/** Where (default: the repository's root) and as whom (PostgreSQL refuses root) a child runs. */
export interface SpawnOptions {
	cwd?: string;
	env?: NodeJS.ProcessEnv;
	uid?: number;
	gid?: number;
}

function spawnInGroup(
	cmd: string,
	args: string[],
	opts: SpawnOptions,
	stdio: StdioOptions,
	exitSignal: NodeJS.Signals,
): ChildProcess {
	const child = spawn(cmd, args, {
		cwd: opts.cwd ?? ROOT,
		env: opts.env ?? process.env,
		uid: opts.uid,
		gid: opts.gid,
		stdio,
		detached: true,
	});
	children.set(child, exitSignal);
	installExitHook();
	return child;
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

/**
 * Runs a command to its end in its own process group (SIGTERM after `timeoutMs`, SIGKILL 5 s later;
 * what it left in its group is killed when it exits).
 *
 * @param opts.input written to its stdin; `echo`: its output copied to stderr after this prefix
 * @throws Error when it cannot be spawned
 */
export function runCommand(
	cmd: string,
	args: string[],
	opts: SpawnOptions & { timeoutMs: number; input?: string; echo?: string },
): Promise<Done> {
	const t0 = Date.now();
	return new Promise((resolve, reject) => {
		const child = spawnInGroup(
			cmd,
			args,
			opts,
			[opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
			'SIGKILL',
		);
		const out = { stdout: '', stderr: '' };
		let timedOut = false;
		for (const stream of ['stdout', 'stderr'] as const)
			child[stream]!.setEncoding('utf8').on('data', (c: string) => {
				out[stream] += c;
				if (opts.echo !== undefined) process.stderr.write(c.replace(/^(?=.)/gm, opts.echo));
			});
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
			resolve({ code, signal, ...out, ms: Date.now() - t0, timedOut });
		});
	});
}

/** `<what> failed (exit N)` or `<what> timed out`, with the tail of the command's output. */
export function commandError(what: string, r: Done): Error {
	return new Error(
		`${what} ${r.timedOut ? 'timed out' : `failed (exit ${r.code}${r.signal ? `, ${r.signal}` : ''})`}:\n${tail(`${r.stdout}\n${r.stderr}`, 30)}`,
	);
}

/** A long-running child (a server, a worker) and its recent output. */
export interface Service {
	name: string;
	child: ChildProcess;
	pid: number;
	/** Resolves when it has exited. */
	done: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
	/** Its last 20 000 characters of output (stdout and stderr, by line). */
	output(): string;
	exited(): boolean;
	/** Calls `fn` with each output line from now on. */
	onLine(fn: (line: string, stream: 'stdout' | 'stderr') => void): void;
	/** The first line (kept or later) that matches; rejects after `timeoutMs` or when it exits. */
	waitForLine(pattern: RegExp, timeoutMs: number): Promise<string>;
	/** Its stop signal to it alone (it stops its helpers), SIGKILL to its group after `graceMs` (10 s). */
	stop(graceMs?: number): Promise<void>;
	/** SIGKILL to its group at once. */
	kill(): Promise<void>;
}

const OUTPUT_CHARS = 20_000;

/**
 * Starts a long-running command in its own process group.
 *
 * @param opts.logFile each output line also goes there, after its time; `echo`: to stderr after this
 *   prefix (`true`: `[name] `); `stopSignal`: what `stop()` sends (SIGTERM); `exitSignal`: what its
 *   group gets when this process exits (SIGKILL); `stdin`: a pipe to its stdin
 */
export function startService(
	name: string,
	cmd: string,
	args: string[],
	opts: SpawnOptions & {
		logFile?: string;
		echo?: boolean | string;
		stopSignal?: NodeJS.Signals;
		exitSignal?: NodeJS.Signals;
		stdin?: boolean;
	} = {},
): Service {
	const child = spawnInGroup(
		cmd,
		args,
		opts,
		[opts.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
		opts.exitSignal ?? 'SIGKILL',
	);
	const log = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : undefined;
	const echo = opts.echo === true ? `[${name}] ` : opts.echo || undefined;
	const recent: string[] = [];
	let chars = 0;
	const listeners: Array<(line: string, stream: 'stdout' | 'stderr') => void> = [];
	const onLine = (line: string, stream: 'stdout' | 'stderr'): void => {
		recent.push(line);
		chars += line.length + 1;
		while (chars > OUTPUT_CHARS && recent.length > 1) chars -= recent.shift()!.length + 1;
		log?.write(`${new Date().toISOString()} ${line}\n`);
		if (echo !== undefined) process.stderr.write(`${echo}${line}\n`);
		for (const fn of listeners) fn(line, stream);
	};
	for (const stream of ['stdout', 'stderr'] as const)
		createInterface({ input: child[stream]! }).on('line', (l) => onLine(l, stream));
	const exited = (): boolean => child.exitCode !== null || child.signalCode !== null;
	const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
		child.once('exit', (code, signal) => {
			onLine(`[${name} exited: ${signal ?? `code ${code}`}]`, 'stderr');
			// helpers in its group (task runners, PostgreSQL's backends): end them with it
			killGroup(child, 'SIGKILL');
			children.delete(child);
			log?.end();
			resolve({ code, signal });
		}),
	);
	child.on('error', (err) => onLine(`[spawn error] ${err.message}`, 'stderr'));
	const output = (): string => recent.join('\n');
	return {
		name,
		child,
		pid: child.pid ?? -1,
		done,
		output,
		exited,
		onLine: (fn) => void listeners.push(fn),
		waitForLine(pattern, timeoutMs) {
			const hit = recent.find((l) => pattern.test(l));
			if (hit !== undefined) return Promise.resolve(hit);
			return new Promise((resolve, reject) => {
				const fail = (why: string): void => {
					clearTimeout(timer);
					reject(new Error(`${name} ${why} ${pattern}; its output ends:\n${tail(output())}`));
				};
				const timer = setTimeout(
					() => fail(`printed no line matching within ${timeoutMs} ms:`),
					timeoutMs,
				);
				listeners.push((line) => {
					if (!pattern.test(line)) return;
					clearTimeout(timer);
					resolve(line);
				});
				void done.then(({ code, signal }) =>
					fail(`exited (${signal ?? `code ${code}`}) before a line matching`),
				);
			});
		},
		async stop(graceMs = 10_000) {
			if (exited()) return;
			// only the service itself: it stops its helpers (a group SIGTERM would hit PostgreSQL's backends first)
			child.kill(opts.stopSignal ?? 'SIGTERM');
			const killer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
			await done;
			clearTimeout(killer);
		},
		async kill() {
			if (exited()) return;
			killGroup(child, 'SIGKILL');
			await done;
		},
	};
}

/** Thrown by {@link waitUntil} when its time is up. */
export class WaitTimeout extends Error {}

/**
 * Polls `check` every `everyMs` until it returns a value other than undefined or false (an
 * exception counts as not yet).
 *
 * @throws WaitTimeout naming `what`, then `detail()` or the last error `check` threw, after `timeoutMs`
 */
export async function waitUntil<T>(
	what: string,
	timeoutMs: number,
	check: () => Promise<T | undefined> | T | undefined,
	everyMs = 500,
	detail?: () => string | Promise<string>,
): Promise<Exclude<T, false>> {
	const deadline = Date.now() + timeoutMs;
	let lastError: unknown;
	for (;;) {
		try {
			const v = await check();
			if (v !== undefined && v !== false) return v as Exclude<T, false>;
		} catch (err) {
			lastError = err;
		}
		if (Date.now() >= deadline) {
			const why = detail
				? `: ${await detail()}`
				: lastError
					? ` (last error: ${(lastError as Error).message})`
					: '';
			throw new WaitTimeout(`timed out after ${secs(timeoutMs)} waiting for ${what}${why}`);
		}
		await sleep(everyMs);
	}
}
