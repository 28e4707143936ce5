/**
 * Runs the emulator until SIGINT / SIGTERM.
 *
 *   npm run emulator -- --port 8080 --processing-ms 6000 --credits 100 [--log-requests]
 *
 * First line on stdout (machine-readable; launch.ts starts the emulator as a child process and reads it):
 *   EMULATOR_READY {"url":"...","filesUrl":"...","apiKey":"...","token":"..."}
 * With --log-requests, every answered request is printed as `REQ <LoggedRequest JSON>`.
 */
import { createInterface } from 'node:readline';

import { numberFlag, readArgs, usageError } from '../scripts/lib/args';
import { parseRandomFaults } from './faults';
import { startEmulator, type EmulatorOptions, type LoggedRequest } from './index';
import { CONTROL_PREFIX, READY_PREFIX, REQUEST_PREFIX, type EmulatorReady } from './launch';

const USAGE = `Usage: tsx emulator/cli.ts [options]
  --help                    this text
  --host <host>             listen address (default 127.0.0.1)
  --port <n>                API port (default 0 = a free port)
  --files-port <n>          files origin port (default 0 = a free port)
  --api-key <key>           v0 X-API-Key (default emulator-api-key)
  --token <token>           unversioned token (default emulator-token)
  --expired-token <token>   token answered as expired (default emulator-expired-token)
  --processing-ms <n>       processing time of every job (default 3000)
  --processing-max-ms <n>   with a value above --processing-ms: each job's time is drawn
                            uniformly between the two (default: unset, every job the same)
  --credits <n>             unversioned credit balance (default 10000)
  --seed <file>             seed JSON (default emulator/seed.json)
  --max-upload-bytes <n>    upload limit (default 536870912)
  --list-order <order>      newest-first (default) or oldest-first: the order of every list
  --random-faults <spec>    answer API requests at random with an error: comma-separated
                            METHOD:STATUS:PROBABILITY (METHOD * = any; 429 gets Retry-After: 1),
                            e.g. "*:429:0.03,GET:503:0.05"
  --log-requests            print each request as a "REQ {json}" line
  --quiet                   no error output`;

const NUMBER_FLAGS = [
	'port',
	'files-port',
	'processing-ms',
	'processing-max-ms',
	'credits',
	'max-upload-bytes',
];
const STRING_FLAGS = ['host', 'api-key', 'token', 'expired-token', 'seed', 'list-order'];

/** The EmulatorOptions key of a flag: camel case, `--seed` → seedFile. */
const optionKey = (flag: string): string =>
	flag === 'seed' ? 'seedFile' : flag.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());

/** Reads the command line (scripts/lib/args.ts: strict, `--help`, exit code 2 for a wrong one). */
function readOptions(): { options: EmulatorOptions; logRequests: boolean } {
	const values: Record<string, string | boolean | undefined> = readArgs(USAGE, {
		'log-requests': { type: 'boolean' },
		'random-faults': { type: 'string' },
		quiet: { type: 'boolean' },
		...Object.fromEntries(
			[...NUMBER_FLAGS, ...STRING_FLAGS].map((flag) => [flag, { type: 'string' as const }]),
		),
	}).values;
	const options: Record<string, unknown> = { quiet: values.quiet === true ? true : undefined };
	for (const flag of NUMBER_FLAGS)
		if (values[flag] !== undefined)
			options[optionKey(flag)] = numberFlag(flag, values[flag] as string, 0);
	for (const flag of STRING_FLAGS)
		if (values[flag] !== undefined) options[optionKey(flag)] = values[flag];
	try {
		if (typeof values['random-faults'] === 'string')
			options.randomFaults = parseRandomFaults(values['random-faults']);
	} catch (err) {
		usageError((err as Error).message);
	}
	if (![undefined, 'newest-first', 'oldest-first'].includes(options.listOrder as string))
		usageError('--list-order needs newest-first or oldest-first');
	return { options: options as EmulatorOptions, logRequests: values['log-requests'] === true };
}

async function main(): Promise<void> {
	const { options, logRequests } = readOptions();
	// Secrets stay out of logs, even the emulator's own: auth headers are printed as "***".
	if (logRequests)
		options.onRequestLogged = (entry: LoggedRequest) =>
			console.log(`${REQUEST_PREFIX}${JSON.stringify(redactAuth(entry))}`);
	const emulator = await startEmulator(options);
	const { url, filesUrl, apiKey, token } = emulator;
	const ready: EmulatorReady = { url, filesUrl, apiKey, token };
	console.log(`${READY_PREFIX}${JSON.stringify(ready)}`);
	console.log(`Extraction service emulator
  API:          ${emulator.url}   (v0: X-API-Key: ${emulator.apiKey}; unversioned: Authorization: ${emulator.token})
  Files origin: ${emulator.filesUrl}
  Expired token (401 "Token is expired"): ${emulator.expiredToken}
Press Ctrl+C to stop.`);
	// close() answers every call with the same promise: a second signal changes nothing.
	const stop = (): void => {
		emulator.close().then(
			() => process.exit(0),
			(err: unknown) => {
				console.error(err);
				process.exit(1);
			},
		);
	};
	process.on('SIGINT', stop);
	process.on('SIGTERM', stop);
	// Control lines on stdin (a test harness changing the service's mood mid-run):
	// `random-faults SPEC` (as --random-faults) or `random-faults off`; each is acknowledged on stdout.
	createInterface({ input: process.stdin }).on('line', (line) => {
		const m = /^random-faults\s+(.+)$/.exec(line.trim());
		if (!m) return;
		try {
			emulator.setRandomFaults(m[1] === 'off' ? [] : parseRandomFaults(m[1]));
			console.log(`${CONTROL_PREFIX}random-faults ${m[1]}`);
		} catch (err) {
			console.log(`${CONTROL_PREFIX}error ${(err as Error).message}`);
		}
	});
}

main().catch((err: unknown) => {
	console.error(err);
	process.exit(1);
});

/** The log entry with `authorization` and `x-api-key` masked (their presence still shows). */
function redactAuth(entry: LoggedRequest): LoggedRequest {
	const headers = { ...entry.headers };
	for (const name of ['authorization', 'x-api-key'])
		if (headers[name] !== undefined) headers[name] = '***';
	return { ...entry, headers };
}
