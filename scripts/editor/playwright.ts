/**
 * Debian's Chromium (`/usr/bin/chromium`, installed with apt when missing) driven by playwright-core
 * (a devDependency; only the driver: nothing here downloads a browser), for the editor test
 * (scripts/editor/run.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

import { chromium, selectors } from 'playwright-core';

export type { Browser, Locator, Page } from 'playwright-core';
export { chromium };

// n8n's editor marks its elements with data-test-id
selectors.setTestIdAttribute('data-test-id');

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

/**
 * Makes sure Debian's Chromium is there: when CHROMIUM_PATH is missing, `apt-get update` and
 * `apt-get install -y chromium` (needs root).
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
		log(`${CHROMIUM_PATH} is missing: apt-get update, apt-get install -y chromium`);
		const r = spawnSync('sh', ['-c', 'apt-get update -q && apt-get install -y -q chromium'], {
			env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
			encoding: 'utf8',
			timeout: 1_500_000,
		});
		if (r.status !== 0 || !existsSync(CHROMIUM_PATH))
			throw new Error(`apt-get install chromium failed:\n${String(r.stderr ?? '').slice(-2000)}`);
	}
	const v = spawnSync(CHROMIUM_PATH, ['--version'], { encoding: 'utf8', timeout: 30_000 });
	const line = (v.stdout ?? '').trim().split('\n').at(-1) ?? '';
	if (!/Chromium \d+/.test(line))
		throw new Error(
			`${CHROMIUM_PATH} --version printed no version: ${v.stdout ?? ''}${v.stderr ?? ''}`,
		);
	return line;
}
