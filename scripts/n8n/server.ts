/**
 * A running n8n 2.x for the examples `n8n execute` cannot show (trigger-run.ts, data-table-run.ts):
 * an emulator in this process, a throwaway user folder with the package installed, and then
 * `n8n start` with the owner signed in, reached over n8n's REST API as the editor does (both from
 * scripts/lib/n8n-server.ts).
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { startEmulator, type Emulator } from '../../emulator';
import type { LineInfo } from '../lib/n8n';
import { prepareN8n, type PackagedN8n } from '../lib/n8n-server';
import { removeAtExit, tail } from '../lib/processes';
import type { ExampleSource } from './examples';

/** What run-examples.ts gives a run in `n8n start`. */
export interface ServerRunOptions {
	/** Line 2 as install.sh describes it. */
	info: LineInfo;
	/** The packed package (npm pack). */
	tarball: string;
	source: ExampleSource;
	keep: boolean;
	verbose: boolean;
}

/** What a run in `n8n start` reports (it never throws: a failure is in `message`). */
export interface ServerRunResult {
	ok: boolean;
	/** Its result line (`trigger: …`, `data table: …`), when it got that far. */
	line?: string;
	message?: string;
	ms: number;
	timings: Record<string, number>;
}

/** What {@link runInServer} gives its body: n8n with the package (started by the body), and more. */
export interface ServerRun extends PackagedN8n {
	emu: Emulator;
	log(message: string): void;
	/** The result so far: the body sets its `line`, and `message` for a failure it does not throw. */
	result: ServerRunResult;
}

/**
 * One run in its own `n8n start`: an emulator and a user folder with the package, then `body`,
 * which starts the server when it needs it; both are stopped at the end. An error the body throws
 * is the result's message (with n8n's last output when `verbose`).
 *
 * @param o.tag prefixes its log lines; `env`: the server's and the CLI's settings beyond n8nEnv's
 */
export async function runInServer(
	o: ServerRunOptions & {
		tag: string;
		prefix: string;
		processingMs: number;
		env?: Record<string, string>;
	},
	body: (run: ServerRun) => Promise<void>,
): Promise<ServerRunResult> {
	const t0 = Date.now();
	const result: ServerRunResult = { ok: false, ms: 0, timings: {} };
	const log = (m: string): void => console.log(`[${o.tag}] ${m}`);
	const echo = o.verbose ? `[${o.tag}] n8n| ` : undefined;
	const userFolder = mkdtempSync(path.join(os.tmpdir(), o.prefix));
	removeAtExit(userFolder, o.keep);
	let emu: Emulator | undefined;
	let n8n: PackagedN8n | undefined;
	try {
		// the emulator's temporary folder inside the user folder: a Ctrl+C that ends this process before
		// emu.close() still leaves nothing behind (startEmulator makes it before its first await)
		const tmp = path.join(userFolder, 'emulator-tmp');
		mkdirSync(tmp);
		const { TMPDIR } = process.env;
		process.env.TMPDIR = tmp;
		const started = startEmulator({ processingMs: o.processingMs, quiet: echo === undefined });
		if (TMPDIR === undefined) delete process.env.TMPDIR;
		else process.env.TMPDIR = TMPDIR;
		emu = await started;
		n8n = await prepareN8n(o.info, userFolder, o.tarball, { echo, env: o.env });
		result.timings.folder = Date.now() - t0;
		await body(Object.assign(n8n, { emu, log, result }));
		result.ok = result.message === undefined;
	} catch (err) {
		result.message = (err as Error).message;
		if (n8n?.server && o.verbose)
			result.message += `\n  n8n output:\n${tail(n8n.server.output(), 20)}`;
	} finally {
		const t = Date.now();
		await n8n?.server?.stop(10_000);
		await emu?.close();
		result.timings.stop = Date.now() - t;
		result.ms = Date.now() - t0;
		if (o.keep) log(`kept user folder ${userFolder}`);
	}
	return result;
}
