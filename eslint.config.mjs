// n8n's own lint rules, as n8n applies them to a community package:
// - `@n8n/node-cli`'s `config` (what `n8n-node lint` runs, with n8n Cloud support): js and
//   typescript-eslint recommended, import-x, @n8n/community-nodes recommended, and the
//   n8n-nodes-base community / credentials / nodes rule sets — for the files n8n loads;
// - package.json goes through the TypeScript parser, as in that config and the scanner
//   (@n8n/scan-community-package), so the package.json rules really run.
// `npm run lint` passes --no-inline-config: the scanner ignores eslint-disable comments, so must we.
// The scanner's own two passes (source and tarball) run in `npm run scan` (scripts/scan-package.mjs).
import { config } from '@n8n/node-cli/eslint';

export default [
	{ ignores: ['dist/**', 'node_modules/**', 'emulator/**', 'test/**', 'scripts/**', 'bench/**', 'examples/**', 'docs/**', '**/*.js', '**/*.mjs'] },
	...config,
];
