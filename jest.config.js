/** @type {import('jest').Config} */
module.exports = {
	testEnvironment: 'node',
	roots: ['<rootDir>/test'],
	testMatch: ['**/*.test.ts'],
	// Type checking runs once in `npm run typecheck`; here ts-jest only transpiles, which keeps the
	// suite fast on a 2-core machine.
	transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
	testTimeout: 60_000,
	// n8n-core keeps module-level state (DI container, binary data service): one worker per file.
	maxWorkers: 2,
};
