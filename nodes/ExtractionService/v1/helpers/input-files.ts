import type { IBinaryData, IExecuteFunctions, INodeExecutionData } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import {
	GENERIC_EXTENSIONS,
	GENERIC_MIME_TYPES,
	SIGNATURE_BYTES,
	mimeEssence,
	signatureName,
	sniffFileType,
} from './file-types';
import type { FileSelection } from './settings';
import type { BinaryStream } from '../../../shared/transport/multipart-stream';

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
			const kinds = [...new Set(acceptedTypes)].flatMap((t) => signatureName(t) ?? []);
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
