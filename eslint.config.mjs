import tsParser from '@typescript-eslint/parser';
import * as jsoncParser from 'jsonc-eslint-parser';
import n8nNodesBase from 'eslint-plugin-n8n-nodes-base';
import communityNodes from '@n8n/eslint-plugin-community-nodes';

const ts = { parser: tsParser, parserOptions: { sourceType: 'module' } };

export default [
	{ ignores: ['dist/**', 'node_modules/**', 'emulator/**', 'test/**', 'scripts/**', 'bench/**', 'examples/**', '**/*.js', '**/*.mjs'] },
	{
		files: ['package.json'],
		languageOptions: { parser: jsoncParser },
		plugins: { 'n8n-nodes-base': n8nNodesBase, ...communityNodes.configs.recommended.plugins },
		rules: {
			...n8nNodesBase.configs.community.rules,
			...communityNodes.configs.recommended.rules,
		},
	},
	{
		files: ['credentials/**/*.ts'],
		languageOptions: ts,
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		rules: {
			...n8nNodesBase.configs.credentials.rules,
			// "Only applicable to nodes in the main repository" (the rule's own words): a community
			// credential links a full URL, which @n8n/community-nodes/credential-documentation-url checks.
			'n8n-nodes-base/cred-class-field-documentation-url-miscased': 'off',
		},
	},
	{
		files: ['nodes/**/*.ts'],
		languageOptions: ts,
		plugins: { 'n8n-nodes-base': n8nNodesBase },
		rules: {
			...n8nNodesBase.configs.nodes.rules,
			// These two older rules want the literal 'main'; n8n's current community rules
			// (node-connection-type-literal) want NodeConnectionTypes.Main, which is what n8n itself uses.
			'n8n-nodes-base/node-class-description-inputs-wrong-regular-node': 'off',
			'n8n-nodes-base/node-class-description-outputs-wrong': 'off',
		},
	},
	{
		files: ['nodes/**/*.ts', 'credentials/**/*.ts'],
		languageOptions: ts,
		plugins: communityNodes.configs.recommended.plugins,
		rules: communityNodes.configs.recommended.rules,
	},
];
