// Two rule sets, one lint.
// - What ships (nodes/, credentials/, package.json): n8n's own rules, exactly as n8n applies them when it
//   verifies a community package — the flat config of n8n's package scanner
//   (@n8n/scan-community-package `buildScanConfig`, which mirrors `n8n-node lint`'s rule sets and parses
//   package.json with the TypeScript parser, so the package.json rules really run). `npm run lint`
//   passes --no-inline-config: the scanner ignores eslint-disable comments, so must we.
// - The tooling (emulator/, scripts/, bench/, test/, every .mjs): typescript-eslint's recommended rules.
import tseslint from 'typescript-eslint';
import { buildScanConfig } from '@n8n/scan-community-package/scanner/scanner.mjs';

const SHIPPED = ['nodes/**/*.ts', 'credentials/**/*.ts', 'package.json'];
const TOOLING = [
	'emulator/**/*.ts',
	'scripts/**/*.ts',
	'bench/**/*.ts',
	'test/**/*.ts',
	'**/*.mjs',
];

export default [
	{ ignores: ['dist/**', 'node_modules/**', 'examples/**', 'docs/**', '**/*.js'] },
	...(await buildScanConfig()).map((config) => ({ ...config, files: config.files ?? SHIPPED })),
	...tseslint.configs.recommended.map((config) => ({ ...config, files: TOOLING })),
	{
		files: TOOLING,
		rules: {
			// `const { a: _a, ...rest } = x` drops a field on purpose.
			'@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
		},
	},
	{
		// Tests read the emulator's answers and n8n's output as untyped JSON.
		files: ['test/**/*.ts'],
		rules: { '@typescript-eslint/no-explicit-any': 'off' },
	},
	{
		// The harness loads the node from nodes/ or dist/ by path at run time (`loadTypes`).
		files: ['scripts/engine.ts'],
		rules: { '@typescript-eslint/no-require-imports': 'off' },
	},
];
