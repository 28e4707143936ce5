/**
 * A real n8n for the tooling (test:n8n, the activated trigger, the editor test, the end-to-end and
 * agent runs, bench/binary-modes.ts): an installed line (scripts/n8n/install.sh, cached outside the
 * package), this package packed and unpacked into a throwaway N8N_USER_FOLDER as n8n's community
 * package installer lays it out, and the environment every n8n process gets.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { commandError, ROOT, runCommand, tail, type Done } from './processes';

export const PACKAGE_NAME = 'n8n-nodes-extraction-service';
const INSTALL_SH = path.join(ROOT, 'scripts', 'n8n', 'install.sh');

/** The credentials the example workflows reference (ids ≤ 16 characters, as n8n's import requires). */
export const API_CREDENTIAL = {
	id: 'esApiCredential1',
	name: 'Extraction Service API',
	type: 'extractionServiceApi',
};
export const TOKEN_CREDENTIAL = {
	id: 'esTokenCred1',
	name: 'Extraction Service Token API',
	type: 'extractionServiceTokenApi',
};

/** An installed n8n line, as install.sh prints it (`N8N_LINE {json}`). */
export interface LineInfo {
	line: string;
	version: string;
	dir: string;
	nodeBin: string;
	n8nBin: string;
	/** What this line needs to start at all (install.sh says why), e.g. line 1's expression engine. */
	env: Record<string, string>;
}

/**
 * `bash scripts/n8n/install.sh [--no-install] LINE`: installs the line into the cache when needed
 * (minutes, once), then describes it.
 *
 * @param opts.echo install.sh's output is copied to stderr after this prefix
 * @returns the line, how long it took, and whether it was installed now (a cold run)
 * @throws Error naming the cause (npm's error line) when the install fails or prints no N8N_LINE
 */
export async function installLine(
	line: string,
	opts: { install?: boolean; echo?: string } = {},
): Promise<{ info: LineInfo; ms: number; installed: boolean }> {
	const args = [INSTALL_SH, ...(opts.install === false ? ['--no-install'] : []), line];
	const r = await runCommand('bash', args, { timeoutMs: 1_800_000, echo: opts.echo });
	if (r.code !== 0) {
		const lines = r.stderr.split('\n');
		const cause =
			lines.find(
				(l) => /npm error (notarget|404|code E)/.test(l) && !/npm error code ETARGET/.test(l),
			) ?? lines.filter((l) => l.trim() && !/A complete log/.test(l)).at(-1);
		throw new Error(
			`scripts/n8n/install.sh ${line} failed (exit ${r.code}): ${cause?.trim() ?? ''}${opts.echo === undefined ? `\n${tail(r.stderr)}` : ''}`,
		);
	}
	const infoLine = r.stdout.split('\n').find((l) => l.startsWith('N8N_LINE '));
	if (!infoLine) throw new Error(`install.sh printed no N8N_LINE line:\n${tail(r.stdout)}`);
	return {
		info: JSON.parse(infoLine.slice('N8N_LINE '.length)) as LineInfo,
		ms: r.ms,
		installed: !/: cached/.test(r.stderr),
	};
}

/**
 * `npm run build` (unless `build` is false), then `npm pack` into `dir` (only what `files`
 * publishes reaches n8n).
 *
 * @returns the tarball's path and how long both took
 * @throws Error when either fails
 */
export async function buildAndPack(
	dir: string,
	build = true,
): Promise<{ tarball: string; ms: number; buildMs?: number }> {
	const t0 = Date.now();
	let buildMs: number | undefined;
	if (build) {
		const b = await runCommand('npm', ['run', 'build', '--silent'], { timeoutMs: 300_000 });
		if (b.code !== 0) throw commandError('npm run build', b);
		buildMs = b.ms;
	}
	const p = await runCommand(
		'npm',
		['pack', '--pack-destination', dir, '--ignore-scripts', '--json', '--loglevel=error'],
		{ timeoutMs: 120_000 },
	);
	if (p.code !== 0) throw commandError('npm pack', p);
	const [{ filename }] = JSON.parse(p.stdout) as Array<{ filename: string }>;
	return { tarball: path.join(dir, path.basename(filename)), ms: Date.now() - t0, buildMs };
}

/**
 * The tarball unpacked into USER/.n8n/nodes/node_modules/NAME with dev/peer/optional dependencies
 * removed from its package.json, as n8n's CommunityPackagesService leaves it: n8n-workflow then
 * resolves to the server's own copy (a symlink to the work tree would load this repository's).
 *
 * @throws Error when tar fails, or the package has runtime dependencies (none today; n8n's
 *   installer would install them, this does not)
 */
export async function installPackageInto(userFolder: string, tarball: string): Promise<void> {
	const nodesDir = path.join(userFolder, '.n8n', 'nodes');
	const pkgDir = path.join(nodesDir, 'node_modules', PACKAGE_NAME);
	mkdirSync(pkgDir, { recursive: true });
	const t = await runCommand('tar', ['-xzf', tarball, '-C', pkgDir, '--strip-components=1'], {
		timeoutMs: 60_000,
	});
	if (t.code !== 0) throw commandError('tar', t);
	const pkgJsonPath = path.join(pkgDir, 'package.json');
	const pkg = JSON.parse(readFileSync(pkgJsonPath, 'utf8')) as Record<string, unknown>;
	if (Object.keys(pkg.dependencies ?? {}).length > 0)
		throw new Error(
			`${PACKAGE_NAME} has runtime dependencies, which installPackageInto does not install`,
		);
	for (const k of ['devDependencies', 'peerDependencies', 'optionalDependencies']) delete pkg[k];
	writeFileSync(pkgJsonPath, JSON.stringify(pkg, null, 2));
	const installed = {
		name: 'installed-nodes',
		private: true,
		dependencies: { [PACKAGE_NAME]: pkg.version },
	};
	writeFileSync(path.join(nodesDir, 'package.json'), JSON.stringify(installed, null, 2));
}

/**
 * The environment of one n8n process: its user folder and encryption key, logs on the console at
 * `info` (at `warn`, `n8n execute --rawOutput` prints nothing at all and still exits 0), no
 * telemetry, version checks, templates, banners or verified-packages list (hosts this machine cannot
 * reach), Read/Write Files from Disk limited to `filesDir`, its task broker on `brokerPort` on
 * loopback (n8n 2.x starts one on 5679 even for `n8n execute`: never collide with an n8n the
 * developer runs), SQLite unless `extra` says otherwise, no proxy (everything is on loopback), and
 * what the line needs. Left at n8n's defaults on purpose, as users get them:
 * N8N_BLOCK_ENV_ACCESS_IN_NODE, the expression engine of line 2.
 */
export function n8nEnv(o: {
	line: Pick<LineInfo, 'nodeBin' | 'env'>;
	userFolder: string;
	filesDir: string;
	brokerPort: number;
	encryptionKey?: string;
	extra?: Record<string, string>;
}): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = {
		...process.env,
		PATH: `${path.dirname(o.line.nodeBin)}${path.delimiter}${process.env.PATH ?? ''}`,
		NODE_ENV: 'production',
		N8N_USER_FOLDER: o.userFolder,
		N8N_ENCRYPTION_KEY: o.encryptionKey ?? randomBytes(24).toString('hex'),
		N8N_LOG_LEVEL: 'info',
		N8N_LOG_OUTPUT: 'console',
		N8N_DIAGNOSTICS_ENABLED: 'false',
		N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
		N8N_TEMPLATES_ENABLED: 'false',
		N8N_PERSONALIZATION_ENABLED: 'false',
		N8N_HIRING_BANNER_ENABLED: 'false',
		N8N_VERIFIED_PACKAGES_ENABLED: 'false',
		N8N_DYNAMIC_BANNERS_ENABLED: 'false',
		N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
		N8N_RESTRICT_FILE_ACCESS_TO: o.filesDir,
		N8N_RUNNERS_BROKER_PORT: String(o.brokerPort),
		N8N_RUNNERS_BROKER_LISTEN_ADDRESS: '127.0.0.1',
		DB_TYPE: 'sqlite',
		...o.line.env,
		...o.extra,
	};
	for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY']) {
		delete env[k];
		delete env[k.toLowerCase()];
	}
	env.NO_PROXY = env.no_proxy = '127.0.0.1,localhost';
	return env;
}

/** Runs `n8n <args>` of `line` in `userFolder` with `env` to its end (default timeout 180 s). */
export function n8nCli(
	line: Pick<LineInfo, 'nodeBin' | 'n8nBin'>,
	userFolder: string,
	env: NodeJS.ProcessEnv,
	echo?: string,
): (args: string[], timeoutMs?: number) => Promise<Done> {
	return (args, timeoutMs = 180_000) =>
		runCommand(line.nodeBin, [line.n8nBin, ...args], { cwd: userFolder, env, timeoutMs, echo });
}

/**
 * Writes `data` as JSON to `file` and imports it with `n8n import:credentials` (plain `data`: n8n
 * encrypts it) or `n8n import:workflow`.
 *
 * @throws Error (commandError) when the import fails
 */
export async function n8nImport(
	cli: ReturnType<typeof n8nCli>,
	kind: 'credentials' | 'workflow',
	file: string,
	data: unknown,
	timeoutMs?: number,
): Promise<Done> {
	writeFileSync(file, JSON.stringify(data, null, 2));
	const r = await cli([`import:${kind}`, `--input=${file}`], timeoutMs);
	if (r.code !== 0) throw commandError(`n8n import:${kind}`, r);
	return r;
}

/** The last JSON object in `n8n execute --rawOutput`'s stdout (n8n 2.x prints log lines before it). */
export function lastJsonDocument(stdout: string): Record<string, unknown> | undefined {
	const lines = stdout.split('\n');
	for (let s = lines.length - 1; s >= 0; s--) {
		if (!lines[s].startsWith('{')) continue;
		for (let e = lines.length; e > s; e--) {
			if (!lines[e - 1].trimEnd().endsWith('}')) continue;
			try {
				const doc = JSON.parse(lines.slice(s, e).join('\n')) as unknown;
				if (doc && typeof doc === 'object' && !Array.isArray(doc))
					return doc as Record<string, unknown>;
			} catch {
				/* not this slice */
			}
		}
	}
	return undefined;
}
