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
 * @param binary the property's binary data (its presence checked by `binaryPropertyNames`)
 * @param allowedExtensions when given (lower-case, with dot), the file must have one of these
 *   extensions or a matching MIME type (`§unversioned-8.1`)
 * @throws NodeOperationError when the file is empty, or its type is not allowed
 */
async function inputFile(
	ctx: IExecuteFunctions,
	itemIndex: number,
	propertyName: string,
	binary: IBinaryData,
	allowedExtensions?: Record<string, string>,
): Promise<InputFile> {
	const fileName =
		binary.fileName || `${propertyName}${binary.fileExtension ? `.${binary.fileExtension}` : ''}`;
	const mimeType = binary.mimeType || 'application/octet-stream';
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
		const byExtension = extension in allowedExtensions;
		const byMime = Object.values(allowedExtensions).includes(mimeType.toLowerCase());
		if (!byExtension || (!byMime && mimeType !== 'application/octet-stream')) {
			throw new NodeOperationError(
				ctx.getNode(),
				`The file "${fileName}" (${mimeType}) is not a type the service accepts`,
				{
					itemIndex,
					description: `Accepted: ${Object.keys(allowedExtensions).join(', ')} (checked by file extension and MIME type before upload).`,
				},
			);
		}
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
 * Turns downloaded bytes into an n8n binary output item.
 *
 * @param json the item's JSON
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
	const data = await ctx.helpers.prepareBinaryData(bytes, fileName, mimeType);
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
