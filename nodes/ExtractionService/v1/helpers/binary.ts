import type { IBinaryData, IDataObject, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import type { FileSelection } from './settings';
import {
	streamedMultipart,
	type BinaryStream,
	type StreamedMultipart,
} from '../transport/multipart-stream';

/** Display name of the binary property parameter, used in error messages. */
export const BINARY_PARAMETER = 'Input Binary Field';

/** One input file, validated before any request; its bytes are read only when `blob()` is called. */
export interface InputFile {
	/** Binary property it came from (e.g. `attachment_0`). */
	propertyName: string;
	fileName: string;
	mimeType: string;
	/** Size in bytes, when n8n knows it without reading the file. */
	size?: number;
	/** Reads the bytes through n8n's binary helpers (every binary storage mode). */
	blob(): Promise<Blob>;
	/** Opens the stored file as a stream: set for binaries stored by id (filesystem, S3…) of known size. */
	stream?: () => Promise<BinaryStream>;
}

/**
 * Which binary properties of an item to upload: the parameter may name one property, several
 * separated by commas, or, with "All Binary Properties", every property of the item in n8n's order
 * (email triggers name attachments `attachment_0`, `attachment_1`, …).
 *
 * @throws NodeOperationError naming the parameter when no property matches
 */
export function binaryPropertyNames(
	ctx: IExecuteFunctions,
	itemIndex: number,
	parameterValue: string,
	allBinaryProperties: boolean,
): string[] {
	const item = ctx.getInputData()[itemIndex];
	const available = Object.keys(item?.binary ?? {});
	if (allBinaryProperties) {
		if (available.length === 0) {
			throw new NodeOperationError(
				ctx.getNode(),
				`Item ${itemIndex} has no binary data to upload`,
				{
					itemIndex,
					description:
						'The option "All Binary Properties" is on, but the input item carries no files.',
				},
			);
		}
		return available;
	}
	const names = String(parameterValue ?? '')
		.split(',')
		.map((n) => n.trim())
		.filter((n) => n.length > 0);
	if (names.length === 0) {
		throw new NodeOperationError(ctx.getNode(), `Parameter "${BINARY_PARAMETER}" is empty`, {
			itemIndex,
			description: 'Enter the name of the binary property that holds the file, for example "data".',
		});
	}
	for (const name of names) {
		if (!item?.binary?.[name]) {
			throw new NodeOperationError(
				ctx.getNode(),
				`Parameter "${BINARY_PARAMETER}": item ${itemIndex} has no binary property "${name}"`,
				{
					itemIndex,
					description: available.length
						? `The item's binary properties are: ${available.join(', ')}.`
						: 'The item carries no binary data. Connect a node that outputs a file (Read Files, HTTP Request, an email trigger…).',
				},
			);
		}
	}
	return names;
}

/**
 * Validates one binary property of an item and returns a lazy handle on its file.
 *
 * With `allowedExtensions` (`§unversioned-4.2`, `§unversioned-8.1`), the file's type is checked
 * before any request, from what the file says of itself:
 * - its name's extension (any case) and its MIME type (parameters and case ignored:
 *   `Application/PDF; name=x.pdf` is `application/pdf`): either saying an accepted type is enough
 *   when the other says nothing (no extension or `.bin`; no MIME type or a generic one such as
 *   `application/octet-stream`) or says the same type;
 * - its first bytes (`sniffFileType`: PDF, PNG, JPEG), read only when the name and the MIME type
 *   both say nothing, or say different types one of which is accepted (`invoice.pdf` labelled
 *   `application/json` by a storage, `scan.png` labelled `text/plain`): the bytes decide.
 * Otherwise (`offer.docx`, a PDF named `offer.docx` without a MIME type) the file is refused
 * without reading it. An accepted file is sent with the accepted type as its MIME type and, when
 * its name has no accepted extension, with that type's added (`scan` → `scan.pdf`): the service
 * reads the name's extension.
 *
 * @param binary the property's binary data (its presence checked by `binaryPropertyNames`)
 * @param allowedExtensions when given, the accepted extensions (lower-case, with dot) and their
 *   MIME types
 * @throws NodeOperationError when the file is empty, or its type is not accepted (`The file
 *   "offer.docx" (…) is not a type the service accepts`, the description saying how it was checked)
 */
async function inputFile(
	ctx: IExecuteFunctions,
	itemIndex: number,
	propertyName: string,
	binary: IBinaryData,
	allowedExtensions?: Record<string, string>,
): Promise<InputFile> {
	let fileName =
		binary.fileName || `${propertyName}${binary.fileExtension ? `.${binary.fileExtension}` : ''}`;
	let mimeType = binary.mimeType || 'application/octet-stream';
	const size = await binarySize(ctx, binary);
	if (size === 0) {
		throw new NodeOperationError(
			ctx.getNode(),
			`The file "${fileName}" in binary property "${propertyName}" is empty`,
			{
				itemIndex,
				description: 'The service cannot process an empty file. Check the node that produced it.',
			},
		);
	}
	if (allowedExtensions) {
		const extension = (/\.[^./\\]+$/.exec(fileName)?.[0] ?? '').toLowerCase();
		const essence = mimeEssence(mimeType);
		const acceptedTypes = Object.values(allowedExtensions);
		const byName = allowedExtensions[extension];
		const byMime = acceptedTypes.find((t) => t === essence);
		const nameSays = !GENERIC_EXTENSIONS.has(extension);
		const mimeSays = !GENERIC_MIME_TYPES.has(essence);
		// The bytes decide when the name and the MIME type both say nothing, or say different types
		// one of which is accepted (`invoice.pdf` labelled application/json by a storage).
		const disagree = nameSays && mimeSays && byName !== byMime;
		const readBytes = (!nameSays && !mimeSays) || (disagree && (byName ?? byMime) !== undefined);
		const sniffed = readBytes
			? sniffFileType(await fileHead(ctx, itemIndex, propertyName, binary))?.mimeType
			: undefined;
		const type = readBytes
			? acceptedTypes.find((t) => t === sniffed)
			: disagree
				? undefined
				: (byName ?? byMime);
		if (!type) {
			const accepted = Object.keys(allowedExtensions).join(', ');
			const kinds = [...new Set(acceptedTypes)].flatMap(
				(t) => SIGNATURES.find((k) => k.mimeType === t)?.name ?? [],
			);
			const why = disagree
				? 'Its file extension and MIME type say different types'
				: "The file's name and MIME type do not say what it is";
			throw new NodeOperationError(
				ctx.getNode(),
				`The file "${fileName}" (${mimeType}) is not a type the service accepts`,
				{
					itemIndex,
					description: readBytes
						? `Accepted: ${accepted}. ${why}, so its first bytes were checked: they are not those of a ${orList(kinds)}.`
						: `Accepted: ${accepted} (checked by file extension or MIME type).`,
				},
			);
		}
		if (!(extension in allowedExtensions)) {
			const typeExtension = Object.keys(allowedExtensions).find(
				(e) => allowedExtensions[e] === type,
			);
			fileName += typeExtension ?? '';
		}
		mimeType = type;
	}
	return {
		propertyName,
		fileName,
		mimeType,
		size,
		blob: async () => {
			const buffer = await ctx.helpers.getBinaryDataBuffer(itemIndex, propertyName);
			return new Blob([buffer as Uint8Array<ArrayBuffer>], { type: mimeType });
		},
		stream:
			binary.id && size !== undefined
				? async () => await ctx.helpers.getBinaryStream(binary.id as string)
				: undefined,
	};
}

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
const GENERIC_MIME_TYPES = new Set([
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
const GENERIC_EXTENSIONS = new Set(['', '.bin']);

/**
 * A MIME type as a header gives it, when it says what the file is: its essence (`mimeEssence`), or
 * undefined when absent or generic (`application/octet-stream` and the like).
 */
export function specificMimeType(header: string | undefined): string | undefined {
	const essence = mimeEssence(header);
	return GENERIC_MIME_TYPES.has(essence) ? undefined : essence;
}

/** "PDF, PNG or JPEG". */
function orList(names: string[]): string {
	return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}

/**
 * The first `SIGNATURE_BYTES` of a binary, reading no more than needed: the first chunks of a stored
 * file's stream (then closed), or the start of inline base64 data.
 */
async function fileHead(
	ctx: IExecuteFunctions,
	itemIndex: number,
	propertyName: string,
	binary: IBinaryData,
): Promise<Uint8Array> {
	if (binary.id && typeof ctx.helpers.getBinaryStream === 'function') {
		const stream = await ctx.helpers.getBinaryStream(binary.id, SIGNATURE_BYTES);
		const chunks: Uint8Array[] = [];
		let length = 0;
		try {
			for await (const chunk of stream as AsyncIterable<Uint8Array | string>) {
				const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
				chunks.push(bytes);
				length += bytes.length;
				if (length >= SIGNATURE_BYTES) break;
			}
		} finally {
			stream.destroy();
		}
		return Buffer.concat(chunks).subarray(0, SIGNATURE_BYTES);
	}
	if (!binary.id && typeof binary.data === 'string') {
		// Four base64 characters are three bytes.
		return Buffer.from(binary.data.slice(0, Math.ceil(SIGNATURE_BYTES / 3) * 4), 'base64');
	}
	const buffer = await ctx.helpers.getBinaryDataBuffer(itemIndex, propertyName);
	return buffer.subarray(0, SIGNATURE_BYTES);
}

/** Bytes of a binary without reading it: inline base64 length, or the stored file's metadata. */
async function binarySize(
	ctx: IExecuteFunctions,
	binary: IBinaryData,
): Promise<number | undefined> {
	if (binary.id) {
		try {
			const metadata = await ctx.helpers.getBinaryMetadata(binary.id);
			return typeof metadata.fileSize === 'number' ? metadata.fileSize : undefined;
		} catch {
			return undefined;
		}
	}
	if (typeof binary.data === 'string') return Buffer.byteLength(binary.data, 'base64');
	return undefined;
}

/**
 * A multipart body factory (`§v0-1 rule 3`, `§unversioned-1 rule 2`) built with Node's
 * native FormData — n8n Cloud does not allow the form-data package in nodes. Fields with undefined
 * values are left out; objects are sent as JSON strings (the reference does not show how objects
 * travel in multipart; JSON text is what a Django REST JSONField reads from a form).
 * The bytes are read when the factory runs, i.e. inside the transport's concurrency slot.
 * When every file is stored by id (n8n's filesystem/S3 binary modes), the body is streamed from
 * storage instead of read into memory (`multipart-stream.ts`); in-memory binaries use the FormData.
 */
export function multipartBody(
	fields: IDataObject,
	files: Array<{ field: string; file: InputFile }>,
): () => Promise<FormData | StreamedMultipart> {
	return async () => {
		const textFields: Array<[string, string]> = [];
		for (const [name, value] of Object.entries(fields)) {
			if (value === undefined || value === null) continue;
			if (Array.isArray(value)) for (const v of value) textFields.push([name, String(v)]);
			else
				textFields.push([name, typeof value === 'object' ? JSON.stringify(value) : String(value)]);
		}
		if (files.every(({ file }) => file.stream && file.size !== undefined)) {
			const streamed = await streamedMultipart(
				textFields,
				files.map(({ field, file }) => ({
					field,
					fileName: file.fileName,
					mimeType: file.mimeType,
					size: file.size as number,
					open: file.stream!,
				})),
			);
			if (streamed) return streamed;
		}
		const form = new FormData();
		for (const [name, value] of textFields) form.append(name, value);
		for (const { field, file } of files) form.append(field, await file.blob(), file.fileName);
		return form;
	};
}

/**
 * Turns downloaded bytes into an n8n binary output item (Document → Download, `§v0-4.4`;
 * Extraction → Download, `§unversioned-4.3`). The bytes' signature (`sniffFileType`: PDF, PNG,
 * JPEG, ZIP) decides the MIME type over `mimeType`, since storages label files wrongly (a PDF as
 * `application/json`); a file of no known signature (JSON, CSV …) keeps `mimeType`. A file name
 * without an extension gets the sniffed type's (`scan` → `scan.pdf`); one with an extension keeps it.
 *
 * @param json the item's JSON
 * @param bytes the whole file
 * @param fileName the file's name (from the service, the answer's headers or a default)
 * @param mimeType the answer's or the format's MIME type, without parameters
 * @param property binary property name to write (default `data`)
 */
export async function binaryOutput(
	ctx: IExecuteFunctions,
	json: IDataObject,
	bytes: Buffer,
	fileName: string,
	mimeType: string,
	property = 'data',
): Promise<INodeExecutionData> {
	const sniffed = sniffFileType(bytes.subarray(0, SIGNATURE_BYTES));
	const named =
		sniffed && !/\.[^./\\]+$/.test(fileName) ? `${fileName}${sniffed.extension}` : fileName;
	const data = await ctx.helpers.prepareBinaryData(bytes, named, sniffed?.mimeType ?? mimeType);
	return { json, binary: { [property]: data } };
}

/**
 * File name from a `Content-Disposition` header (`filename*=` or `filename=`), if present.
 */
export function fileNameFromDisposition(header: string | undefined): string | undefined {
	if (!header) return undefined;
	const star = /filename\*\s*=\s*(?:UTF-8'')?([^;]+)/i.exec(header);
	if (star) {
		try {
			return decodeURIComponent(star[1].trim().replace(/^"|"$/g, ''));
		} catch {
			/* fall through to the plain form */
		}
	}
	const plain = /filename\s*=\s*("([^"]*)"|[^;]+)/i.exec(header);
	return plain ? (plain[2] ?? plain[1]).trim() : undefined;
}

/**
 * Every file an item asks to upload, validated: the names in "Input Binary Field" (one or a comma
 * list), or every binary property with the option "All Binary Properties".
 *
 * @param selection the item's file selection (`readItemSettings`)
 * @param allowedExtensions see `inputFile`
 * @throws NodeOperationError naming the parameter for a missing property, an empty file or a refused type
 */
export async function inputFiles(
	ctx: IExecuteFunctions,
	itemIndex: number,
	selection: FileSelection,
	allowedExtensions?: Record<string, string>,
): Promise<InputFile[]> {
	const names = binaryPropertyNames(ctx, itemIndex, selection.names, selection.all);
	const binaries = ctx.getInputData()[itemIndex]?.binary ?? {};
	const files: InputFile[] = [];
	for (const name of names)
		files.push(await inputFile(ctx, itemIndex, name, binaries[name], allowedExtensions));
	return files;
}

/**
 * The input binary to pass on to an output item (option "Include Input Binary").
 *
 * @param include the option's value
 * @returns `{ [propertyName]: binary }` or undefined when the option is off
 */
export function passThroughBinary(
	ctx: IExecuteFunctions,
	itemIndex: number,
	file: InputFile | undefined,
	include: boolean,
): INodeExecutionData['binary'] {
	if (!file || !include) return undefined;
	const binary = ctx.getInputData()[itemIndex]?.binary?.[file.propertyName];
	return binary ? { [file.propertyName]: binary } : undefined;
}
