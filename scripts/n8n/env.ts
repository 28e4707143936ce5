/**
 * The environment every n8n process of the test tooling shares (test:n8n, the activated trigger, the
 * editor test, the end-to-end run and the agent run): logs on the console at `info` (at `warn`,
 * `n8n execute --rawOutput` prints nothing at all and still exits 0), and no telemetry, version
 * checks, templates or personalisation survey, which would call hosts this machine cannot reach.
 */
export const QUIET_N8N_ENV = {
	N8N_LOG_LEVEL: 'info',
	N8N_LOG_OUTPUT: 'console',
	N8N_DIAGNOSTICS_ENABLED: 'false',
	N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
	N8N_TEMPLATES_ENABLED: 'false',
	N8N_PERSONALIZATION_ENABLED: 'false',
} as const;
