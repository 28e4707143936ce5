/**
 * Child processes of the editor test: each in its own process group (n8n starts task runners of its
 * own), all killed when this process ends, whether normally, on an error or on a signal.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';

const children = new Set<ChildProcess>();
const cleanups: Array<() => void> = [];

/** Sends `signal` to the child's whole process group (the child alone when that fails). */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
	if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
	try {
		process.kill(-child.pid, signal);
	} catch {
		try {
			child.kill(signal);
		} catch {
			/* already gone */
		}
	}
}

/** SIGKILL to what is left of an exited child's process group (helpers it started, e.g. n8n's task runners). */
function killLeftovers(child: ChildProcess): void {
	if (child.pid === undefined) return;
	try {
		process.kill(-child.pid, 'SIGKILL');
	} catch {
		/* the group is empty */
	}
}

/** Runs `fn` at exit (before the remaining children are killed); for folders to remove and the like. */
export function onCleanup(fn: () => void): void {
	cleanups.push(fn);
}

/** Removes `dir` at exit (retrying while a process just killed may still be writing into it). */
export function removeAtExit(dir: string): void {
	onCleanup(() => rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 }));
}

/** Kills every child still running (SIGKILL, process groups) and runs the cleanups; safe to call twice. */
export function cleanUpNow(): void {
	for (const child of children) {
		killGroup(child, 'SIGKILL');
		killLeftovers(child);
	}
	children.clear();
	for (const fn of cleanups.splice(0)) {
		try {
			fn();
		} catch {
			/* best effort at exit */
		}
	}
}

let hooksInstalled = false;

/**
 * Installs the exit and signal hooks once. On SIGINT, SIGTERM or SIGHUP, `onSignal` gets up to
 * `graceMs` to stop things in order (browser, server, emulator), then the remaining children are
 * killed, the cleanups run and the process exits with 130. A signal more than 2 s after the first
 * skips the wait.
 */
export function installExitHooks(
	onSignal: (signal: NodeJS.Signals) => Promise<void>,
	graceMs = 30_000,
): void {
	if (hooksInstalled) return;
	hooksInstalled = true;
	process.on('exit', cleanUpNow);
	let firstSignalAt = 0;
	const finish = (): never => {
		cleanUpNow();
		process.exit(130);
	};
	for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
		process.on(sig, () => {
			// Ctrl-C reaches this process twice (from the terminal and relayed by tsx): only a
			// signal that comes later means "stop now"
			if (firstSignalAt) {
				if (Date.now() - firstSignalAt > 2000) finish();
				return;
			}
			firstSignalAt = Date.now();
			setTimeout(finish, graceMs).unref();
			onSignal(sig).then(finish, finish);
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

/**
 * Runs a command to its end in its own process group; after `timeoutMs` it gets SIGTERM, then
 * SIGKILL 5 s later. Helpers it left in its group are killed when it exits.
 */
export function runCommand(
	cmd: string,
	args: string[],
	opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number; echo?: (chunk: string) => void },
): Promise<Done> {
	const t0 = Date.now();
	return new Promise((resolve, reject) => {
		const child = spawn(cmd, args, {
			cwd: opts.cwd,
			env: opts.env ?? process.env,
			stdio: ['ignore', 'pipe', 'pipe'],
			detached: true,
		});
		children.add(child);
		let stdout = '';
		let stderr = '';
		let timedOut = false;
		child.stdout!.setEncoding('utf8').on('data', (c: string) => {
			stdout += c;
			opts.echo?.(c);
		});
		child.stderr!.setEncoding('utf8').on('data', (c: string) => {
			stderr += c;
			opts.echo?.(c);
		});
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
			killLeftovers(child);
			children.delete(child);
			resolve({ code, signal, stdout, stderr, ms: Date.now() - t0, timedOut });
		});
	});
}

/** A long-running child (the n8n server) and its recent output. */
export interface Service {
	child: ChildProcess;
	/** The last `maxChars` of its stdout and stderr. */
	output(): string;
	/** Whether it has exited. */
	exited(): boolean;
	/** SIGTERM to its group, SIGKILL after `graceMs` (default 10 s); resolves once it has exited. */
	stop(graceMs?: number): Promise<void>;
}

/** Starts a long-running command in its own process group, keeping the tail of its output. */
export function startService(
	cmd: string,
	args: string[],
	opts: { cwd: string; env: NodeJS.ProcessEnv; echo?: (chunk: string) => void; maxChars?: number },
): Service {
	const child = spawn(cmd, args, {
		cwd: opts.cwd,
		env: opts.env,
		stdio: ['ignore', 'pipe', 'pipe'],
		detached: true,
	});
	children.add(child);
	const max = opts.maxChars ?? 20_000;
	let out = '';
	const keep = (c: string): void => {
		out = (out + c).slice(-max);
		opts.echo?.(c);
	};
	child.stdout!.setEncoding('utf8').on('data', keep);
	child.stderr!.setEncoding('utf8').on('data', keep);
	const exited = (): boolean => child.exitCode !== null || child.signalCode !== null;
	const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
	child.once('exit', () => {
		// its task runners are in its group: end them with it
		killLeftovers(child);
		children.delete(child);
	});
	child.on('error', (err) => keep(`\n[spawn error] ${err.message}\n`));
	return {
		child,
		output: () => out,
		exited,
		async stop(graceMs = 10_000) {
			if (exited()) return;
			killGroup(child, 'SIGTERM');
			const killer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
			await gone;
			clearTimeout(killer);
		},
	};
}

/** The last `lines` lines of `text`. */
export function tail(text: string, lines = 25): string {
	return text.trimEnd().split('\n').slice(-lines).join('\n');
}
