#!/usr/bin/env node
/**
 * n8n's own checks of a community package, offline, on this package:
 *   1. n8n's package scanner (`@n8n/scan-community-package`'s `analyzePackage`, run before n8n lists
 *      or verifies a package) on the source files (SOURCE_FILE_PATTERNS);
 *   2. the same on the published tarball (`npm pack`, unpacked);
 *   3. `n8n-node lint` in strict mode (@n8n/node-cli, as n8n's verification guidelines ask) on what
 *      ships, staged alone with `"strict": true` and n8n-node's default eslint.config.mjs (at the
 *      root it would apply n8n Cloud's rules to the tooling too);
 *   4. `n8n-node cloud-support` there: cloud support must be enabled.
 * Inline eslint-disable comments are ignored, as by `npm run lint`.
 *
 * Run after `npm run build` (`npm run scan` does both). Prints a PASS/FAIL line per check with the
 * findings, last `scan: N passed, M failed`; exits 1 when a check finds a problem.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
	cpSync,
	mkdtempSync,
	readFileSync,
	readdirSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { fileURLToPath } from 'node:url';

import {
	analyzePackage,
	SOURCE_FILE_PATTERNS,
} from '@n8n/scan-community-package/scanner/scanner.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(path.join(tmpdir(), 'scan-package-'));
const counts = { passed: 0, failed: 0 };

/** Prints a check's verdict and its findings (a scanner warning too: it passes, but is seen). */
function verdict(ok, name, dir, message, details) {
	console.log(`${ok ? 'PASS' : 'FAIL'} ${name}${message ? `: ${message}` : ''}`);
	if (details) console.log(details.replaceAll(dir, name));
	counts[ok ? 'passed' : 'failed']++;
}

/** Runs the scanner on `dir`. */
async function pass(name, dir, patterns) {
	const result = await analyzePackage(dir, patterns);
	verdict(result.passed, name, dir, result.message, result.details);
}

/** Runs an `n8n-node` command in `dir`; passes when it exits 0 and its output matches `expect`. */
function n8nNode(name, dir, args, expect = /./) {
	const run = spawnSync(path.join(root, 'node_modules', '.bin', 'n8n-node'), args, {
		cwd: dir,
		encoding: 'utf8',
		stdio: ['ignore', 'pipe', 'pipe'],
	});
	const output = stripVTControlCharacters(`${run.stdout}${run.stderr}`);
	const ok = run.status === 0 && expect.test(output);
	verdict(ok, name, dir, '', ok ? '' : output);
}

/** What ships, staged alone as `n8n-node` expects a package: see check 3 above. */
function stageShipped() {
	const stage = path.join(work, 'shipped');
	for (const entry of ['nodes', 'credentials', 'tsconfig.json'])
		cpSync(path.join(root, entry), path.join(stage, entry), { recursive: true });
	const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
	pkg.n8n = { ...pkg.n8n, strict: true };
	writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(pkg, null, '\t')}\n`);
	cpSync(
		path.join(
			root,
			'node_modules/@n8n/node-cli/dist/template/templates/shared/default/eslint.config.mjs',
		),
		path.join(stage, 'eslint.config.mjs'),
	);
	symlinkSync(path.join(root, 'node_modules'), path.join(stage, 'node_modules'));
	return stage;
}

try {
	await pass('source', root, SOURCE_FILE_PATTERNS);
	execFileSync('npm', ['pack', '--silent', '--pack-destination', work], {
		cwd: root,
		stdio: ['ignore', 'ignore', 'inherit'],
	});
	const tarball = readdirSync(work).find((f) => f.endsWith('.tgz'));
	execFileSync('tar', ['-xzf', path.join(work, tarball), '-C', work]);
	await pass('tarball', path.join(work, 'package'), ['**/*.js', 'package.json']);
	const stage = stageShipped();
	n8nNode('n8n-node lint (strict)', stage, ['lint']);
	n8nNode('n8n-node cloud-support', stage, ['cloud-support'], /Cloud support is ENABLED/);
} finally {
	rmSync(work, { recursive: true, force: true });
}
console.log(`scan: ${counts.passed} passed, ${counts.failed} failed`);
process.exit(counts.failed ? 1 : 0);
