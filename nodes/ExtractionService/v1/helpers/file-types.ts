/**
 * What a file is: by its first bytes (its signature) and by the MIME types and extensions that say
 * nothing of it (`§unversioned-8.1`; downloads, `§v0-4.4`, `§unversioned-4.3`).
 */

/** How many first bytes `sniffFileType` reads (a PDF's `%PDF-` may come after some junk). */
export const SIGNATURE_BYTES = 1024;

/** A file type known by its first bytes. */
interface Signature {
	/** What messages call it. */
	name: string;
	mimeType: string;
	/** The extension a file of the type gets (lower-case, with dot). */
	extension: string;
	matches: (head: Uint8Array) => boolean;
}

const startsWith = (head: Uint8Array, bytes: number[]) => bytes.every((b, i) => head[i] === b);

/** `%PDF-` within the first bytes, as PDF readers (and the emulator) accept it. */
function hasPdfHeader(head: Uint8Array): boolean {
	const marker = [0x25, 0x50, 0x44, 0x46, 0x2d];
	const end = Math.min(head.length, SIGNATURE_BYTES) - marker.length;
	for (let i = 0; i <= end; i++) if (marker.every((b, j) => head[i + j] === b)) return true;
	return false;
}

/**
 * The signatures `sniffFileType` knows, in the order it tries them: those at the very start first,
 * so that a ZIP holding a PDF is a ZIP.
 */
const SIGNATURES: Signature[] = [
	{
		name: 'PNG',
		mimeType: 'image/png',
		extension: '.png',
		matches: (h) => startsWith(h, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
	},
	{
		name: 'JPEG',
		mimeType: 'image/jpeg',
		extension: '.jpg',
		matches: (h) => startsWith(h, [0xff, 0xd8, 0xff]),
	},
	{
		name: 'ZIP',
		mimeType: 'application/zip',
		extension: '.zip',
		matches: (h) => startsWith(h, [0x50, 0x4b, 0x03, 0x04]),
	},
	{ name: 'PDF', mimeType: 'application/pdf', extension: '.pdf', matches: hasPdfHeader },
];

/**
 * The type of a file by its first bytes (its signature): PDF (`%PDF-` within the first
 * `SIGNATURE_BYTES`), PNG (`89 50 4E 47 0D 0A 1A 0A`), JPEG (`FF D8 FF`) or ZIP (`PK 03 04`); the
 * types of `§unversioned-8.1`, and the images download of `§unversioned-4.3`. Text formats (JSON,
 * CSV) have no signature: undefined.
 *
 * @param head the file's first bytes (`SIGNATURE_BYTES` suffice; fewer for a shorter file)
 * @returns the MIME type and extension (`.pdf`, `.png`, `.jpg`, `.zip`), or undefined
 */
export function sniffFileType(
	head: Uint8Array,
): { mimeType: string; extension: string } | undefined {
	const found = SIGNATURES.find((signature) => signature.matches(head));
	return found && { mimeType: found.mimeType, extension: found.extension };
}

/**
 * A MIME type's essence: lower-case, parameters and spaces dropped
 * (`Application/PDF; name=x.pdf` → `application/pdf`); '' for none.
 */
export function mimeEssence(mimeType: string | undefined): string {
	return String(mimeType ?? '')
		.split(';')[0]
		.trim()
		.toLowerCase();
}

/** MIME types that say nothing of what a file is (storages and mail clients label unknown files so). */
export const GENERIC_MIME_TYPES: ReadonlySet<string> = new Set([
	'',
	'application/octet-stream',
	'binary/octet-stream',
	'application/binary',
	'application/x-binary',
	'application/unknown',
	'application/download',
	'application/x-download',
	'application/force-download',
]);

/** Extensions that say nothing of what a file is: none, or `.bin` (Outlook's `ATT00001.bin`). */
export const GENERIC_EXTENSIONS: ReadonlySet<string> = new Set(['', '.bin']);

/**
 * A MIME type as a header gives it, when it says what the file is: its essence (`mimeEssence`), or
 * undefined when absent or generic (`application/octet-stream` and the like).
 */
export function specificMimeType(header: string | undefined): string | undefined {
	const essence = mimeEssence(header);
	return GENERIC_MIME_TYPES.has(essence) ? undefined : essence;
}

/** What messages call a file type known by its signature (`PDF`, `PNG`, …), or undefined. */
export function signatureName(mimeType: string): string | undefined {
	return SIGNATURES.find((signature) => signature.mimeType === mimeType)?.name;
}
