/**
 * Issue 33: `npm run test:n8n` says when a newer patch of a tested n8n line becomes installable.
 * n8n publishes a release and its own packages (`@n8n/…`, `n8n-…`, pinned to exact versions)
 * one by one, and not always all of them: n8n 2.41.3 was listed while its `@n8n/agents@0.26.2` was
 * not in the registry, so it could not be installed. A newer patch is installable here when every
 * exact pin of n8n's own packages in its `dependencies` is in the registry (the rest are ranges npm
 * resolves to versions that exist).
 */
import { runCommand } from './processes';

/** A newer patch of a line and what keeps it from installing (nothing: it installs). */
export interface NewerPatch {
	version: string;
	/** `name@version` of n8n's own packages it pins that the registry does not have. */
	missing: string[];
}

/**
 * The versions of `all` in the same major.minor line as `current` with a higher patch, oldest
 * first (pre-releases left out).
 */
export function newerInLine(all: string[], current: string): string[] {
	const [major, minor, patch] = current.split('.').map(Number);
	return all
		.map((v) => ({ v, parts: /^(\d+)\.(\d+)\.(\d+)$/.exec(v)?.slice(1).map(Number) }))
		.filter(({ parts }) => parts && parts[0] === major && parts[1] === minor && parts[2] > patch)
		.sort((a, b) => (a.parts as number[])[2] - (b.parts as number[])[2])
		.map(({ v }) => v);
}

/** The `name@version` of n8n's own packages a release pins to an exact version. */
export function ownExactPins(dependencies: Record<string, string>): string[] {
	return Object.entries(dependencies)
		.filter(([name]) => name.startsWith('@n8n/') || name.startsWith('n8n-'))
		.filter(([, version]) => /^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version))
		.map(([name, version]) => `${name}@${version}`);
}

/** `npm view <spec> <field> --json`, parsed; undefined when npm has nothing (404) or fails. */
async function npmView(spec: string, field: string): Promise<unknown> {
	const r = await runCommand('npm', ['view', spec, field, '--json'], { timeoutMs: 60_000 });
	if (r.code !== 0 || !r.stdout.trim()) return undefined;
	try {
		return JSON.parse(r.stdout) as unknown;
	} catch {
		return undefined;
	}
}

/**
 * The newer patches of n8n `current` at the registry, each with the pins that keep it from
 * installing (checked 8 at a time).
 *
 * @throws Error when the registry cannot be read
 */
export async function newerPatches(current: string): Promise<NewerPatch[]> {
	const all = await npmView('n8n', 'versions');
	if (!Array.isArray(all)) throw new Error('npm view n8n versions gave nothing');
	const patches: NewerPatch[] = [];
	for (const version of newerInLine(all as string[], current)) {
		const dependencies = (await npmView(`n8n@${version}`, 'dependencies')) as
			Record<string, string> | undefined;
		const pins = ownExactPins(dependencies ?? {});
		const missing: string[] = [];
		for (let i = 0; i < pins.length; i += 8)
			await Promise.all(
				pins.slice(i, i + 8).map(async (pin) => {
					if ((await npmView(pin, 'version')) === undefined) missing.push(pin);
				}),
			);
		patches.push({ version, missing: missing.sort() });
	}
	return patches;
}

/**
 * One line for the summary of `test:n8n`: the newest installable patch (to test next: set it in
 * scripts/n8n/install.sh), or why the newer ones do not install, or that `current` is the newest.
 */
export function describePatches(current: string, patches: NewerPatch[]): string {
	const installable = patches.filter((p) => p.missing.length === 0).at(-1);
	if (installable)
		return `NEWER PATCH INSTALLABLE: n8n ${installable.version} (tested ${current}) — set it in scripts/n8n/install.sh and the README's Compatibility table`;
	if (patches.length === 0) return `n8n ${current} is the newest patch of its line`;
	const why = (p: NewerPatch) =>
		`${p.version} is listed but ${p.missing.length} of n8n's own packages it pins are not in the registry (${p.missing.slice(0, 3).join(', ')}${p.missing.length > 3 ? ', …' : ''})`;
	return `n8n ${current} is the newest installable patch of its line: ${patches.map(why).join('; ')}`;
}
