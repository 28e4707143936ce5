#!/usr/bin/env node
/**
 * n8n's package scanner, offline, on this package — the two lint passes n8n runs before it lists or
 * verifies a community package (`@n8n/scan-community-package`, its exported `analyzePackage`):
 *   1. the source files: package.json and nodes/, credentials/ (SOURCE_FILE_PATTERNS);
 *   2. the published tarball: `npm pack` unpacked, its .js files and package.json.
 * Inline eslint-disable comments are ignored by the scanner, as they are here.
 *
 * Run after `npm run build` (`npm run scan` does both). Prints one line per pass and the findings;
 * the last line reads `scan: N passed, M failed`; exits 1 when a pass finds a problem.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import {
	analyzePackage,
	SOURCE_FILE_PATTERNS,
} from '@n8n/scan-community-package/scanner/scanner.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const work = mkdtempSync(path.join(tmpdir(), 'scan-package-'));
let failed = 0;

/** Runs one pass and prints its verdict. */
async function pass(name, dir, patterns) {
	const result = await analyzePackage(dir, patterns);
	// A warning alone passes the scanner; print it anyway so it is seen.
	console.log(
		`${result.passed ? 'PASS' : 'FAIL'} ${name}${result.message ? `: ${result.message}` : ''}`,
	);
	if (result.details) console.log(result.details.replaceAll(dir, name));
	if (!result.passed) failed++;
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
} finally {
	rmSync(work, { recursive: true, force: true });
}
console.log(`scan: ${2 - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
