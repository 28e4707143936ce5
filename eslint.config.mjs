// n8n's own lint rules, exactly as n8n applies them when it verifies a community package: the flat
// config of n8n's package scanner (@n8n/scan-community-package `buildScanConfig`), which by its own
// comment mirrors `n8n-node lint`'s rule sets (@n8n/community-nodes recommended, with n8n Cloud's
// rules; the n8n-nodes-base community / credentials / nodes rule sets, with the same rules off) and
// parses package.json with the TypeScript parser, so the package.json rules really run.
// `npm run lint` passes --no-inline-config: the scanner ignores eslint-disable comments, so must we.
// The scanner's own two passes (source and tarball) run in `npm run scan` (scripts/scan-package.mjs).
import { buildScanConfig } from '@n8n/scan-community-package/scanner/scanner.mjs';

export default [
	{
		ignores: [
			'dist/**',
			'node_modules/**',
			'emulator/**',
			'test/**',
			'scripts/**',
			'bench/**',
			'examples/**',
			'docs/**',
			'**/*.js',
			'**/*.mjs',
		],
	},
	...(await buildScanConfig()),
];
