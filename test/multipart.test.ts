/**
 * Issue 33: a small stored file is uploaded in a FormData, a large one streamed from n8n's binary
 * storage (helpers/multipart.ts). Bench measure 6 showed the streamed body costing about 12 KiB an
 * item more than a FormData for a 67-byte file (a generator, a Readable and an opened file a request).
 */
import { Readable } from 'node:stream';

import { STREAM_ABOVE_BYTES, multipartBody } from '../nodes/ExtractionService/v1/helpers/multipart';
import type { InputFile } from '../nodes/ExtractionService/v1/helpers/input-files';
import { isStreamedMultipart } from '../nodes/shared/transport/multipart-stream';

/** A file stored by id (n8n's filesystem or S3 mode) of `size` bytes: both ways to read it count their use. */
function storedFile(size: number) {
	const used = { blob: 0, stream: 0 };
	const file: InputFile = {
		propertyName: 'data',
		fileName: 'invoice.png',
		mimeType: 'image/png',
		size,
		blob: async () => {
			used.blob++;
			return new Blob([Buffer.alloc(size, 1)]);
		},
		stream: async () => {
			used.stream++;
			return Readable.from([Buffer.alloc(size, 1)]) as never;
		},
	};
	return { file, used };
}

describe('Uploads of files stored by id', () => {
	it('a file of at most 1 MiB goes in a FormData (read once), a larger one is streamed', async () => {
		expect(STREAM_ABOVE_BYTES).toBe(1024 * 1024);
		const small = storedFile(67);
		const smallBody = await multipartBody({ schema: 's' }, [{ field: 'file', file: small.file }])();
		expect(smallBody).toBeInstanceOf(FormData);
		expect(small.used).toEqual({ blob: 1, stream: 0 });
		const edge = storedFile(STREAM_ABOVE_BYTES);
		expect(await multipartBody({}, [{ field: 'file', file: edge.file }])()).toBeInstanceOf(
			FormData,
		);

		const large = storedFile(STREAM_ABOVE_BYTES + 1);
		const largeBody = await multipartBody({ schema: 's' }, [{ field: 'file', file: large.file }])();
		expect(isStreamedMultipart(largeBody)).toBe(true);
		expect(large.used).toEqual({ blob: 0, stream: 1 });
		if (isStreamedMultipart(largeBody)) largeBody.stream.destroy();
	});

	it('several files together count: over 1 MiB in all, they are streamed', async () => {
		const files = [storedFile(700 * 1024), storedFile(700 * 1024)];
		const body = await multipartBody(
			{},
			files.map(({ file }) => ({ field: 'file', file })),
		)();
		expect(isStreamedMultipart(body)).toBe(true);
		if (isStreamedMultipart(body)) body.stream.destroy();
	});
});
