/**
 * playwright-core and Debian's Chromium, for the editor test (scripts/editor/run.ts).
 *
 * Nothing here downloads a browser: Chromium is Debian's package (`/usr/bin/chromium`, installed
 * with apt when missing) and playwright-core is only the driver. playwright-core is meant to be a
 * devDependency of the package; until `npm ci` has put it into node_modules, it is installed once
 * into the same cache as the n8n servers (`~/.cache/n8n-nodes-extraction-service/playwright-core-VERSION`).
 *
 * The module is loaded at run time and typed by the small interfaces below (only what the test
 * uses), so `npm run typecheck` passes whether or not playwright-core is installed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

/** The version installed into the cache when the package's node_modules has none (keep equal to the devDependency). */
export const PLAYWRIGHT_CORE_VERSION = '1.65.1';

/** Debian's Chromium (the `chromium` package); override with CHROMIUM_PATH. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Chromium's flags here: root needs --no-sandbox; the rest keeps it from reaching the internet
 * (only loopback is used) and from first-run work.
 */
export const CHROMIUM_ARGS = [
	'--no-sandbox',
	'--disable-gpu',
	'--disable-quic',
	'--no-first-run',
	'--disable-background-networking',
	'--disable-component-update',
	'--disable-sync',
	'--disable-dev-shm-usage',
	'--no-proxy-server',
];

// ---------------------------------------------------------------------------------------------
// the part of playwright-core's API the test uses

/** Options of the waits and actions below (ms). */
export interface TimeoutOption {
	timeout?: number;
}

/** playwright's Locator (subset). */
export interface Locator {
	click(options?: TimeoutOption & { force?: boolean }): Promise<void>;
	dblclick(options?: TimeoutOption): Promise<void>;
	hover(options?: TimeoutOption): Promise<void>;
	fill(value: string, options?: TimeoutOption): Promise<void>;
	waitFor(
		options?: TimeoutOption & { state?: 'attached' | 'detached' | 'visible' | 'hidden' },
	): Promise<void>;
	isVisible(): Promise<boolean>;
	count(): Promise<number>;
	innerText(options?: TimeoutOption): Promise<string>;
	allInnerTexts(): Promise<string[]>;
	inputValue(options?: TimeoutOption): Promise<string>;
	first(): Locator;
	last(): Locator;
	nth(index: number): Locator;
	filter(options: { hasText?: string | RegExp; visible?: boolean }): Locator;
	locator(selector: string, options?: { hasText?: string | RegExp }): Locator;
	getByTestId(testId: string | RegExp): Locator;
	getByRole(role: string, options?: { name?: string | RegExp; exact?: boolean }): Locator;
	getByText(text: string | RegExp, options?: { exact?: boolean }): Locator;
}

/** playwright's Response (subset). */
export interface Response {
	url(): string;
	status(): number;
	text(): Promise<string>;
	request(): { method(): string };
}

/** playwright's Page (subset). */
export interface Page {
	goto(
		url: string,
		options?: TimeoutOption & { waitUntil?: 'load' | 'domcontentloaded' | 'commit' },
	): Promise<Response | null>;
	url(): string;
	screenshot(
		options?: TimeoutOption & {
			path?: string;
			fullPage?: boolean;
			animations?: 'disabled' | 'allow';
		},
	): Promise<Buffer>;
	waitForURL(url: RegExp | ((url: URL) => boolean), options?: TimeoutOption): Promise<void>;
	waitForResponse(
		predicate: (response: Response) => boolean,
		options?: TimeoutOption,
	): Promise<Response>;
	waitForTimeout(ms: number): Promise<void>;
	locator(selector: string, options?: { hasText?: string | RegExp }): Locator;
	getByTestId(testId: string | RegExp): Locator;
	getByRole(role: string, options?: { name?: string | RegExp; exact?: boolean }): Locator;
	getByText(text: string | RegExp, options?: { exact?: boolean }): Locator;
	keyboard: { press(key: string): Promise<void> };
	mouse: { move(x: number, y: number): Promise<void> };
	on(event: 'console', listener: (message: { type(): string; text(): string }) => void): void;
	on(event: 'pageerror', listener: (error: Error) => void): void;
	setDefaultTimeout(ms: number): void;
	setDefaultNavigationTimeout(ms: number): void;
}

/** playwright's BrowserContext (subset). */
export interface BrowserContext {
	newPage(): Promise<Page>;
	close(): Promise<void>;
}

/** playwright's Browser (subset). */
export interface Browser {
	version(): string;
	newContext(options?: {
		viewport?: { width: number; height: number };
		baseURL?: string;
		locale?: string;
		deviceScaleFactor?: number;
	}): Promise<BrowserContext>;
	close(): Promise<void>;
}

/** playwright-core's module (subset). */
export interface PlaywrightCore {
	chromium: {
		launch(options: {
			executablePath: string;
			headless?: boolean;
			args?: string[];
			timeout?: number;
			env?: NodeJS.ProcessEnv;
			handleSIGINT?: boolean;
			handleSIGTERM?: boolean;
			handleSIGHUP?: boolean;
		}): Promise<Browser>;
	};
	selectors: { setTestIdAttribute(attribute: string): void };
}

// ---------------------------------------------------------------------------------------------
// installing and loading

function cacheDir(): string {
	const base =
		process.env.N8N_CACHE_DIR ??
		path.join(process.env.HOME ?? os.homedir(), '.cache', 'n8n-nodes-extraction-service');
	return path.join(base, `playwright-core-${PLAYWRIGHT_CORE_VERSION}`);
}

/** npm's settings inherited from `npm run` (ignore_scripts, local_prefix, …) removed, as install.sh does. */
function npmEnv(): NodeJS.ProcessEnv {
	const keep = new Set([
		'npm_config_registry',
		'npm_config_cache',
		'npm_config_cafile',
		'npm_config_proxy',
		'npm_config_https_proxy',
		'npm_config_noproxy',
		'npm_config_strict_ssl',
		'npm_config_userconfig',
		'npm_config_globalconfig',
	]);
	const env: NodeJS.ProcessEnv = {};
	for (const [k, v] of Object.entries(process.env))
		if (!k.toLowerCase().startsWith('npm_config_') || keep.has(k.toLowerCase())) env[k] = v;
	// playwright-core has no install script, but never let anything fetch a browser
	env.PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD = '1';
	return env;
}

/** The version in the package.json next to a resolved playwright-core entry point. */
function packageVersion(modulePath: string): string {
	try {
		return (
			(
				JSON.parse(readFileSync(path.join(path.dirname(modulePath), 'package.json'), 'utf8')) as {
					version?: string;
				}
			).version ?? '?'
		);
	} catch {
		return '?';
	}
}

/**
 * Where playwright-core comes from: the package's node_modules (the devDependency), else the cache,
 * else a fresh install into the cache (`npm install playwright-core@PLAYWRIGHT_CORE_VERSION`,
 * scripts off; about a second with npm's cache warm).
 *
 * @returns the resolved module path and where it was found
 * @throws Error when npm cannot install it
 */
export function resolvePlaywrightCore(log: (line: string) => void): {
	modulePath: string;
	source: string;
} {
	try {
		const modulePath = require.resolve('playwright-core', { paths: [ROOT] });
		return {
			modulePath,
			source: `the package's node_modules (playwright-core ${packageVersion(modulePath)})`,
		};
	} catch {
		/* not installed in the package: use the cache */
	}
	const dir = cacheDir();
	const marker = path.join(dir, '.install-complete');
	const cached = path.join(dir, 'node_modules', 'playwright-core');
	if (!existsSync(marker) || !existsSync(cached)) {
		log(
			`playwright-core is not in node_modules (add the devDependency); installing ${PLAYWRIGHT_CORE_VERSION} into ${dir}`,
		);
		rmSync(dir, { recursive: true, force: true });
		mkdirSync(dir, { recursive: true });
		writeFileSync(
			path.join(dir, 'package.json'),
			JSON.stringify({ name: 'editor-test-playwright-core', private: true }, null, 2),
		);
		const r = spawnSync(
			'npm',
			[
				'install',
				`playwright-core@${PLAYWRIGHT_CORE_VERSION}`,
				'--ignore-scripts',
				'--no-audit',
				'--no-fund',
				'--loglevel=error',
			],
			{
				cwd: dir,
				env: npmEnv(),
				encoding: 'utf8',
				timeout: 300_000,
			},
		);
		if (r.status !== 0)
			throw new Error(
				`npm install playwright-core@${PLAYWRIGHT_CORE_VERSION} failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stderr}`,
			);
		writeFileSync(
			marker,
			`playwright-core ${PLAYWRIGHT_CORE_VERSION} installed on ${new Date().toISOString()}\n`,
		);
	}
	const modulePath = require.resolve('playwright-core', { paths: [dir] });
	return {
		modulePath,
		source: `the cache (playwright-core ${packageVersion(modulePath)}, ${dir})`,
	};
}

/** Loads playwright-core (see resolvePlaywrightCore) with n8n's `data-test-id` as the test id attribute. */
export function loadPlaywrightCore(modulePath: string): PlaywrightCore {
	// eslint-disable-next-line @typescript-eslint/no-require-imports
	const pw = require(modulePath) as PlaywrightCore;
	pw.selectors.setTestIdAttribute('data-test-id');
	return pw;
}

/**
 * Makes sure Debian's Chromium is there: when CHROMIUM_PATH is missing, `apt-get install -y
 * chromium` (after `apt-get update` if the first attempt fails). Needs root.
 *
 * @returns Chromium's version line
 * @throws Error when it cannot be installed or does not run
 */
export function ensureChromium(log: (line: string) => void): string {
	if (!existsSync(CHROMIUM_PATH)) {
		if (process.env.CHROMIUM_PATH) throw new Error(`CHROMIUM_PATH=${CHROMIUM_PATH} does not exist`);
		if (process.getuid?.() !== 0)
			throw new Error(
				`${CHROMIUM_PATH} is missing and this is not root: run \`sudo apt-get install -y chromium\``,
			);
		const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
		const install = (): ReturnType<typeof spawnSync> =>
			spawnSync('apt-get', ['install', '-y', '-q', 'chromium'], {
				env,
				encoding: 'utf8',
				timeout: 900_000,
			});
		log(`${CHROMIUM_PATH} is missing: apt-get install -y chromium`);
		let r = install();
		if (r.status !== 0) {
			log('apt-get install failed; apt-get update, then again');
			spawnSync('apt-get', ['update', '-q'], { env, encoding: 'utf8', timeout: 600_000 });
			r = install();
		}
		if (r.status !== 0 || !existsSync(CHROMIUM_PATH))
			throw new Error(`apt-get install chromium failed:\n${String(r.stderr ?? '').slice(-2000)}`);
	}
	const v = spawnSync(CHROMIUM_PATH, ['--version'], { encoding: 'utf8', timeout: 30_000 });
	const line =
		String(v.stdout ?? '')
			.trim()
			.split('\n')
			.at(-1) ?? '';
	if (!/Chromium \d+/.test(line))
		throw new Error(
			`${CHROMIUM_PATH} --version printed no version: ${String(v.stdout ?? '')}${String(v.stderr ?? '')}`,
		);
	return line;
}
