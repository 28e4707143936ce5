/**
 * emulator/launch.ts, the child-process launcher of the benchmarks and the real-n8n runs: the
 * child announces itself, its request log arrives line by line (secrets masked), and stop() ends it.
 */
import { launchEmulator, type EmulatorProcess } from '../../emulator/launch';

let child: EmulatorProcess | undefined;

afterEach(async () => {
	await child?.stop();
	child = undefined;
});

const isRunning = (pid: number): boolean => {
	try {
		process.kill(pid, 0);
		return true;
	} catch {
		return false;
	}
};

it('starts cli.ts, reads its READY line and request log, and stops it', async () => {
	child = await launchEmulator({ processingMs: 100, quiet: true });
	expect(child.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
	expect(child.filesUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
	expect([child.apiKey, child.token]).toEqual(['emulator-api-key', 'emulator-token']);

	const answer = await fetch(`${child.url}/v0/parsing?search=x`, {
		method: 'POST',
		headers: { 'x-api-key': child.apiKey, 'content-type': 'application/json' },
		body: JSON.stringify({ document: 'not-a-document' }),
	});
	expect(answer.status).toBe(400);
	await child.settle(200);
	expect(child.requests).toHaveLength(1);
	expect(child.requests[0]).toMatchObject({
		origin: 'api',
		method: 'POST',
		path: '/v0/parsing',
		query: { search: 'x' },
		status: 400,
		body: { kind: 'json', value: { document: 'not-a-document' } },
	});
	expect(child.requests[0].headers['x-api-key']).toBe('***');

	const { pid } = child;
	await child.stop();
	expect(isRunning(pid)).toBe(false);
});
