/**
 * Writes a large but valid one-page PDF for the upload benchmark, without holding it in memory:
 * catalog, page tree, one page whose content stream is `bytes` long (repeated line-drawing
 * operators), a classic xref table and trailer. Written in 1 MiB chunks; the SHA-256 of the file
 * is computed on the way, so the benchmark can check the service stored it byte for byte.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

const CHUNK = 1024 * 1024;
/** A valid content-stream line: move to (0,0), line to (612,792), stroke. */
const LINE = '0 0 m 612 792 l S\n';
/**
 * A number as 10 digits: the xref table's width, and the stream's /Length and `startxref` too
 * (leading zeros are allowed in a PDF integer), so everything around the stream data has a fixed
 * size and the stream's length follows from the file's.
 */
const ten = (n: number): string => String(n).padStart(10, '0');

/**
 * @param file path to write
 * @param totalBytes size of the whole file in bytes (≥ 1 KiB); the content stream fills the rest
 * @returns the file's size (exactly `totalBytes`) and its SHA-256 (hex)
 */
export async function writeLargePdf(
	file: string,
	totalBytes: number,
): Promise<{ size: number; sha256: string }> {
	const hash = createHash('sha256');
	const out = createWriteStream(file);
	let offset = 0;
	const offsets: number[] = [];
	const write = async (data: Buffer | string): Promise<void> => {
		const buf = typeof data === 'string' ? Buffer.from(data, 'latin1') : data;
		hash.update(buf);
		offset += buf.length;
		if (!out.write(buf)) await once(out, 'drain');
	};
	const object = async (n: number, body: string): Promise<void> => {
		offsets[n] = offset;
		await write(`${n} 0 obj\n${body}\nendobj\n`);
	};

	await write('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n');
	await object(1, '<< /Type /Catalog /Pages 2 0 R >>');
	await object(2, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>');
	await object(3, '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>');
	offsets[4] = offset;
	const header = (length: number): string => `4 0 obj\n<< /Length ${ten(length)} >>\nstream\n`;
	const end = '\nendstream\nendobj\n';
	const entries = offsets.slice(1).map((o) => `${ten(o)} 00000 n \n`);
	const xref = (startxref: number): string =>
		`xref\n0 5\n0000000000 65535 f \n${entries.join('')}trailer\n<< /Size 5 /Root 1 0 R >>\n` +
		`startxref\n${ten(startxref)}\n%%EOF\n`;
	const length = totalBytes - offset - header(0).length - end.length - xref(0).length;
	if (length < LINE.length) throw new Error(`totalBytes ${totalBytes} is too small for a PDF`);

	await write(header(length));
	const block = Buffer.from(LINE.repeat(Math.floor(CHUNK / LINE.length)), 'latin1');
	let left = length;
	while (left > 0) {
		const n = Math.min(left, block.length);
		// Whole lines, then spaces to pad the last partial chunk (whitespace is valid content).
		await write(
			n === block.length
				? block
				: Buffer.concat([
						block.subarray(0, n - (n % LINE.length)),
						Buffer.alloc(n % LINE.length, 0x20),
					]),
		);
		left -= n;
	}
	await write(end);
	await write(xref(offset));
	out.end();
	await once(out, 'finish');
	if (offset !== totalBytes)
		throw new Error(`PDF writer produced ${offset} bytes instead of ${totalBytes}`);
	return { size: offset, sha256: hash.digest('hex') };
}
