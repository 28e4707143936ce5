/**
 * Issue 20, item 6: a 401 or 403 from the storage host a download redirects to is worded as a refused
 * or expired link (naming the storage origin only), not as credits or a wrong API key. Written to
 * fail before the fix.
 */
import { onDocument } from './helpers/params';
import { useNode } from './helpers/setup';

const { emulator, runNode } = useNode({ processingMs: 0 });

afterEach(() => emulator().clearFaults());

async function uploadedDocumentId(): Promise<string> {
	const { items, error } = await runNode(
		{ resource: 'document', operation: 'upload', binaryPropertyName: 'data' },
		[
			{
				json: {},
				binary: {
					data: {
						data: Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64'),
						mimeType: 'application/pdf',
						fileName: 'a.pdf',
					},
				},
			},
		],
	);
	if (error) throw error;
	return String(items[0].json.id);
}

describe('A download link the storage host refuses', () => {
	it.each([
		[401, 'a path the storage answers 401 (no key is sent to another origin)', undefined],
		[403, 'a pre-signed link that expired', 403],
	])('HTTP %s: %s', async (status, _label, fault) => {
		const id = await uploadedDocumentId();
		// "Storage": the emulator under another origin (localhost instead of 127.0.0.1), so the node sends no key there.
		const port = new URL(emulator().url).port;
		const storagePath = fault ? '/storage/a.pdf' : `/v0/documents/${id}`;
		const storage = `http://localhost:${port}${storagePath}?X-Signature=abc123`;
		emulator().injectFaults({ method: 'GET', path: `/v0/documents/${id}/download` }, [
			{ status: 302, location: storage },
		]);
		if (fault) emulator().injectFaults({ method: 'GET', path: storagePath }, [{ status: fault }]);
		const { error } = await runNode(onDocument('download', id));
		expect({
			message: error?.message,
			description: String((error as { description?: string } | undefined)?.description ?? ''),
		}).toEqual({
			message: `The download link was refused or has expired (HTTP ${status} from http://localhost:${port})`,
			description: expect.stringMatching(/Get .* fresh link/),
		});
		expect(
			`${error?.message} ${String((error as { description?: string } | undefined)?.description)}`,
		).not.toMatch(/abc123|X-Signature|credits|API key/i);
	});
});
