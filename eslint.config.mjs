// Two rule sets, one lint (`npm run lint`, with --no-inline-config: n8n's checks ignore eslint-disable
// comments, so must we).
// - What ships (nodes/, credentials/, package.json): the config `n8n-node lint` applies (@n8n/node-cli's
//   exported `config`, with n8n Cloud's rules), limited to those files. `npm run scan` also runs
//   `n8n-node lint` itself in strict mode on the shipped files staged alone (scripts/scan-package.mjs).
// - The tooling (emulator/, scripts/, bench/, test/, every .mjs): typescript-eslint's recommended rules.
import { config as n8nNodeConfig } from '@n8n/node-cli/eslint';
import tseslint from 'typescript-eslint';

const SHIPPED = ['nodes/**/*.ts', 'credentials/**/*.ts'];
const TOOLING = [
	'emulator/**/*.ts',
	'scripts/**/*.ts',
	'bench/**/*.ts',
	'test/**/*.ts',
	'**/*.mjs',
];

export default [
	{ ignores: ['dist/**', 'node_modules/**', 'examples/**', 'docs/**', '**/*.js'] },
	// n8n-node's rules for every `**/*.ts` apply to the shipped files only.
	...n8nNodeConfig.map((config) =>
		config.files?.includes('**/*.ts') ? { ...config, files: SHIPPED } : config,
	),
	{
		// No import cycle among the shipped modules (one job per module, data flowing one way). The
		// rule needs to be told that `.ts` files are modules and how to parse them; type-only imports
		// do not count (TypeScript erases them).
		files: SHIPPED,
		settings: {
			'import-x/extensions': ['.ts'],
			'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
		},
		rules: { 'import-x/no-cycle': 'error' },
	},
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
