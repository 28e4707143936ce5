#!/usr/bin/env node
/**
 * n8n's own checks of a community package, offline, on this package:
 *   1. n8n's package scanner (`@n8n/scan-community-package`, its exported `analyzePackage`), the
 *      lint n8n runs before it lists or verifies a package, on the source files: package.json and
 *      nodes/, credentials/ (SOURCE_FILE_PATTERNS);
 *   2. the same on the published tarball: `npm pack` unpacked, its .js files and package.json;
 *   3. `n8n-node lint` (@n8n/node-cli, the tool n8n's verification guidelines ask authors to use)
 *      in strict mode, on what ships staged alone: nodes/, credentials/, tsconfig.json and
 *      package.json with `"strict": true`, beside n8n-node's default eslint.config.mjs — so the
 *      shipped code provably passes n8n's strict mode (at the repository root, n8n-node lint would
 *      apply n8n Cloud's rules to the tooling too; README, "Repository layout");
 *   4. `n8n-node cloud-support` there: it must report cloud support enabled.
 * Inline eslint-disable comments are ignored by these checks, as they are by `npm run lint`.
 *
 * Run after `npm run build` (`npm run scan` does both). Prints one line per check and the findings;
 * the last line reads `scan: N passed, M failed`; exits 1 when a check finds a problem.
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
let failed = 0;
let passed = 0;

/** Runs one pass and prints its verdict. */
async function pass(name, dir, patterns) {
	const result = await analyzePackage(dir, patterns);
	// A warning alone passes the scanner; print it anyway so it is seen.
	console.log(
		`${result.passed ? 'PASS' : 'FAIL'} ${name}${result.message ? `: ${result.message}` : ''}`,
	);
	if (result.details) console.log(result.details.replaceAll(dir, name));
	if (result.passed) passed++;
	else failed++;
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
	console.log(`${ok ? 'PASS' : 'FAIL'} ${name}`);
	if (!ok) console.log(output.replaceAll(dir, name));
	if (ok) passed++;
	else failed++;
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
console.log(`scan: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
