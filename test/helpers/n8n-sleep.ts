/**
 * n8n-workflow's `sleep`, replaced for a simulated clock (test/helpers/trigger-model.ts,
 * test/helpers/fault-sequences.ts): every wait of the node goes through it (retries, holds, polls).
 */
import path from 'node:path';

/**
 * Replaces `sleep` in the very module n8n-workflow re-exports it from (its export reads the property
 * at each call), in this module system's registry (jest's under jest).
 *
 * @param sleep the replacement: how long a wait of `ms` takes
 * @returns a function that puts the real `sleep` back
 */
export function replaceN8nSleep(sleep: (ms: number) => Promise<void>): () => void {
	const workflowDir = path.dirname(require.resolve('n8n-workflow'));
	const load: NodeJS.Require = require;
	const sleeping = load(require.resolve('@n8n/utils/sleep', { paths: [workflowDir] })) as {
		sleep: (ms: number) => Promise<void>;
	};
	const realSleep = sleeping.sleep;
	sleeping.sleep = sleep;
	return () => {
		sleeping.sleep = realSleep;
	};
}
