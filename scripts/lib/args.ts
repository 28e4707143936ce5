/**
 * Command lines of the tooling, read with Node's `util.parseArgs`: strict (an unknown flag or a
 * missing value is an error), `--help` / `-h` on every script.
 */
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Flags = NonNullable<ParseArgsConfig['options']>;

/** Prints `message (see --help)` and exits with code 2. */
export function usageError(message: string): never {
	console.error(`${message} (see --help)`);
	process.exit(2);
}

/**
 * Reads `argv` (default: this process's arguments). `--help` prints `help` (a script's path: its
 * header comment; other text as it is) and exits 0; a wrong command line exits 2 (see usageError).
 *
 * @returns parseArgs's `values` (and `positionals`, when `allowPositionals`)
 */
export function readArgs<const O extends Flags, const P extends boolean = false>(
	help: string,
	options: O,
	allowPositionals?: P,
	argv = process.argv.slice(2),
): ReturnType<typeof parseArgs<{ options: O; strict: true; allowPositionals: P }>> {
	if (argv.includes('--help') || argv.includes('-h')) {
		// a script's path: its header comment (up to the first `*\/`)
		console.log(help.endsWith('.ts') ? readFileSync(help, 'utf8').split('*/')[0] : help);
		process.exit(0);
	}
	try {
		return parseArgs({
			args: argv,
			options,
			strict: true,
			allowPositionals: (allowPositionals ?? false) as P,
		});
	} catch (err) {
		return usageError((err as Error).message);
	}
}

/**
 * A numeric flag's value: `dflt` when absent.
 *
 * @param min the smallest value allowed (default 0); `integer`: whole numbers only
 * @returns the number (exits with a usage error when it is not one, or below `min`)
 */
export function numberFlag(
	flag: string,
	value: string | undefined,
	dflt: number,
	min = 0,
	integer = false,
): number {
	if (value === undefined) return dflt;
	const n = Number(value);
	if (value.trim() === '' || !Number.isFinite(n) || n < min || (integer && !Number.isInteger(n)))
		usageError(`--${flag} needs ${integer ? 'a whole number' : 'a number'} ≥ ${min}, got ${value}`);
	return n;
}

/** The flags every runner that installs and starts n8n takes. */
export const RUNNER_FLAGS = {
	'no-install': { type: 'boolean' },
	'no-build': { type: 'boolean' },
	keep: { type: 'boolean' },
	verbose: { type: 'boolean' },
} as const;

/** What `RUNNER_FLAGS` ask for: install n8n when missing, build first, keep the folders, print n8n's output. */
export interface RunnerOptions {
	install: boolean;
	build: boolean;
	keep: boolean;
	verbose: boolean;
}

/** The values of `RUNNER_FLAGS` as options. */
export function runnerOptions(v: { [K in keyof typeof RUNNER_FLAGS]?: boolean }): RunnerOptions {
	return {
		install: v['no-install'] !== true,
		build: v['no-build'] !== true,
		keep: v.keep === true,
		verbose: v.verbose === true,
	};
}
