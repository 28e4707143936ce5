/**
 * Issue 20, item 4: no answer is read whole whatever its size. An error body is read up to 64 KiB and
 * the rest is left unread; a JSON answer beyond 32 MiB is refused with a clear error while it streams.
 * The emulator makes the bodies on the fly and counts what it could send before the node left, so the
 * test holds no large body itself. Written to fail before the fix.
 */
import { MAX_ANSWER_BYTES } from '../nodes/ExtractionService/v1/transport';
import { runNode, useEmulator } from './helpers/setup';

const emulator = useEmulator({ processingMs: 0 });

afterEach(() => emulator().clearFaults());

const MiB = 1024 * 1024;
const UUID = '0f1e2d3c-4b5a-4697-8899-aabbccddeeff';
const path = `/v0/documents/${UUID}`;
const sent = () =>
	emulator()
		.requests.filter((r) => r.path === path)
		.map((r) => r.sentBytes ?? 0);

describe('Answers are read only as far as the node needs', () => {
	it('a 400 MiB error page: the error comes at once, and the node stopped reading (it read it all, or crashed)', async () => {
		emulator().clearLog();
		emulator().injectFaults({ method: 'GET', path }, [
			{ status: 400, streamBytes: 400 * MiB, contentType: 'text/html' },
		]);
		const { error } = await runNode(emulator(), {
			resource: 'document',
			operation: 'get',
			documentId: UUID,
			options: { maxRetries: 0 },
		});
		expect(error?.message).toMatch(/^The service rejected the request: \[/);
		// Socket buffers hold some MiB; reading all of it would send all 400.
		expect(Math.max(...sent())).toBeLessThan(64 * MiB);
	});

	it(`a JSON answer beyond ${MAX_ANSWER_BYTES / MiB} MiB is refused with a clear error while it streams`, async () => {
		emulator().clearLog();
		emulator().injectFaults({ method: 'GET', path }, [{ status: 200, streamBytes: 400 * MiB }]);
		const { error } = await runNode(emulator(), {
			resource: 'document',
			operation: 'get',
			documentId: UUID,
		});
		expect(error?.message).toBe(
			`The service answered HTTP 200 with an answer larger than ${MAX_ANSWER_BYTES / MiB} MiB instead of a JSON object`,
		);
		expect(Math.max(...sent())).toBeLessThan(MAX_ANSWER_BYTES + 32 * MiB);
	});
});
