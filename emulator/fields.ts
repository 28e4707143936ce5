/**
 * Field readers shared by both families: one view over JSON and form bodies, booleans, choices,
 * metadata, page ranges and the emulator's test controls. Messages follow Django REST framework,
 * which both references' error shapes match (§v0-7, §unversioned-7).
 */
import type { ParsedBody, UploadedFile } from './body';
import { queryValue, type Query } from './context';
import { ErrorBag, HttpError } from './http';
import type { EmulatorControls, FinalStatus } from './store';

export const REQUIRED = 'This field is required.';
export const EMPTY_FILE = 'The submitted file is empty.';

/** Absent, null or '' (what DRF treats as "not given" for optional fields). */
export function isBlank(value: unknown): boolean {
	return value === undefined || value === null || value === '';
}

/** A request body seen as named fields, whatever its encoding. */
export class Input {
	private constructor(
		/** 'json' for a JSON body; 'form' for multipart and url-encoded bodies (all values are strings or files). */
		readonly source: 'json' | 'form',
		private readonly json: Record<string, unknown>,
		private readonly fields: Map<string, string[]>,
		private readonly files: Map<string, UploadedFile[]>,
	) {}

	/** A JSON body must be an object (DRF: "Invalid data. Expected a dictionary, but got list."). */
	static from(body: ParsedBody): Input {
		if (body.kind === 'form') return new Input('form', {}, body.fields, body.files);
		const value = body.kind === 'json' ? body.value : {};
		if (value === null || typeof value !== 'object' || Array.isArray(value)) {
			const got = Array.isArray(value)
				? 'list'
				: value === null
					? 'null'
					: typeof value === 'string'
						? 'str'
						: typeof value === 'number'
							? 'int'
							: 'bool';
			throw new HttpError(400, {
				non_field_errors: [`Invalid data. Expected a dictionary, but got ${got}.`],
			});
		}
		return new Input('json', value as Record<string, unknown>, new Map(), new Map());
	}

	has(name: string): boolean {
		return this.source === 'json'
			? this.json[name] !== undefined
			: this.fields.has(name) || this.files.has(name);
	}

	/** JSON: the value. Form: the uploaded file, else the text value (an array when the field is repeated). */
	get(name: string): unknown {
		if (this.source === 'json') return this.json[name];
		const file = this.files.get(name);
		if (file) return file[0];
		const texts = this.fields.get(name);
		if (!texts) return undefined;
		return texts.length === 1 ? texts[0] : texts;
	}

	file(name: string): UploadedFile | undefined {
		return this.files.get(name)?.[0];
	}

	/** Every form field name (text and file), for encodings such as `extracts[0]document`. */
	formFieldNames(): string[] {
		return [...this.fields.keys(), ...this.files.keys()];
	}
}

export function isUploadedFile(value: unknown): value is UploadedFile {
	return typeof value === 'object' && value !== null && 'file' in value && 'filename' in value;
}

/**
 * A required file field: 'No file was submitted.' when absent, DRF's "not a file" message when sent as
 * text, 'The submitted file is empty.' for 0 bytes. Errors go to `errorField` (default: the field),
 * prefixed with `prefix`.
 */
export function readFile(
	input: Input,
	field: string,
	errors: ErrorBag,
	errorField = field,
	prefix = '',
): UploadedFile | undefined {
	const upload = input.file(field);
	if (!upload)
		errors.add(
			errorField,
			prefix +
				(input.has(field)
					? 'The submitted data was not a file. Check the encoding type on the form.'
					: 'No file was submitted.'),
		);
	else if (upload.file.size === 0) errors.add(errorField, prefix + EMPTY_FILE);
	else return upload;
	return undefined;
}

const TRUE_VALUES = new Set(['true', 't', 'yes', 'y', 'on', '1']);
const FALSE_VALUES = new Set(['false', 'f', 'no', 'n', 'off', '0']);

/** A boolean field: JSON booleans, or the strings DRF's BooleanField accepts ("true"/"false", ...). */
export function readBoolean(
	input: Input,
	name: string,
	errors: ErrorBag,
	fallback: boolean,
): boolean {
	const value = input.get(name);
	if (value === undefined || value === null) return fallback;
	if (typeof value === 'boolean') return value;
	if (typeof value === 'number' && (value === 0 || value === 1)) return value === 1;
	if (typeof value === 'string') {
		const v = value.trim().toLowerCase();
		if (TRUE_VALUES.has(v)) return true;
		if (FALSE_VALUES.has(v)) return false;
	}
	errors.add(name, 'Must be a valid boolean.');
	return fallback;
}

/** A choice field: `"X" is not a valid choice.`; `fallback` undefined means required. */
export function readChoice<T extends string>(
	input: Input,
	name: string,
	choices: readonly T[],
	errors: ErrorBag,
	fallback?: T,
): T | undefined {
	const value = input.get(name);
	if (isBlank(value)) {
		if (fallback === undefined) errors.add(name, REQUIRED);
		return fallback;
	}
	if (typeof value === 'string' && (choices as readonly string[]).includes(value))
		return value as T;
	errors.add(
		name,
		`"${typeof value === 'string' ? value : JSON.stringify(value)}" is not a valid choice.`,
	);
	return fallback;
}

/** An optional string field; '' and null give null. */
export function readOptionalString(input: Input, name: string, errors: ErrorBag): string | null {
	const value = input.get(name);
	if (isBlank(value)) return null;
	if (typeof value === 'string') return value;
	errors.add(name, 'Not a valid string.');
	return null;
}

/**
 * `metadata` (§v0-4.1/§v0-4.5/§v0-4.8, §unversioned-4.2): a JSON object or null. In a form it
 * is a JSON string ('' counts as absent); in a JSON body it is an object. Anything else →
 * `{"metadata": ["Must be a JSON object."]}`.
 */
export function readMetadata(input: Input, errors: ErrorBag): Record<string, unknown> | null {
	let value = input.get('metadata');
	if (value === undefined || value === null) return null;
	if (input.source === 'form') {
		if (value === '') return null;
		try {
			value = typeof value === 'string' ? JSON.parse(value) : undefined;
		} catch {
			value = undefined;
		}
		if (value === null) return null;
	}
	if (typeof value === 'object' && value !== null && !Array.isArray(value))
		return value as Record<string, unknown>;
	errors.add('metadata', 'Must be a JSON object.');
	return null;
}

const OUTCOMES: readonly FinalStatus[] = ['FINISHED', 'PARTIAL_FINISHED', 'ERROR'];

/**
 * Emulator test controls carried in the create request's metadata (an emulator extension, not part of
 * the references): `emulator_outcome` (FINISHED | PARTIAL_FINISHED | ERROR), `emulator_processing_ms`
 * (number, overrides the processing time of the job), `emulator_error` (reason in the ERROR message),
 * `emulator_fail_files` (file names whose jobs end ERROR, e.g. one attachment among several) and
 * `emulator_hold` (true: the job stays IN_PROGRESS until `Emulator.releaseJobs`; n: until its n-th
 * read by id).
 */
export function readControls(
	metadata: Record<string, unknown> | null,
	errors: ErrorBag,
): EmulatorControls {
	const controls: EmulatorControls = {};
	if (!metadata) return controls;
	const outcome = metadata.emulator_outcome;
	if (outcome !== undefined) {
		if (typeof outcome === 'string' && (OUTCOMES as readonly string[]).includes(outcome))
			controls.outcome = outcome as FinalStatus;
		else errors.add('metadata', `emulator_outcome must be one of ${OUTCOMES.join(', ')}.`);
	}
	const ms = metadata.emulator_processing_ms;
	if (ms !== undefined) {
		const n = typeof ms === 'string' && ms.trim() !== '' ? Number(ms) : ms;
		if (typeof n === 'number' && Number.isFinite(n) && n >= 0) controls.processingMs = n;
		else errors.add('metadata', 'emulator_processing_ms must be a non-negative number.');
	}
	if (typeof metadata.emulator_error === 'string') controls.reason = metadata.emulator_error;
	const hold = metadata.emulator_hold;
	if (hold === true || (Number.isInteger(hold) && (hold as number) >= 1))
		controls.hold = hold as true | number;
	else if (hold !== undefined && hold !== false)
		errors.add('metadata', 'emulator_hold must be true, false or a whole number ≥ 1.');
	const failFiles = metadata.emulator_fail_files;
	if (failFiles !== undefined) {
		if (Array.isArray(failFiles) && failFiles.every((f) => typeof f === 'string'))
			controls.failFiles = failFiles as string[];
		else errors.add('metadata', 'emulator_fail_files must be a list of file names.');
	}
	return controls;
}

/** Requested page range (1-based, inclusive); either end may be absent. */
export interface PageRange {
	start?: number;
	end?: number;
}

/**
 * A query parameter that must be a whole number ≥ 1 (pages, sizes, page ranges), else a field error;
 * absent or '' → undefined.
 */
export function readPositiveInt(query: Query, name: string, errors: ErrorBag): number | undefined {
	const raw = queryValue(query, name);
	if (raw === undefined || raw === '') return undefined;
	if (!/^\d+$/.test(raw.trim())) {
		errors.add(name, 'A valid integer is required.');
		return undefined;
	}
	const n = Number(raw);
	if (n < 1) errors.add(name, 'Ensure this value is greater than or equal to 1.');
	return n;
}

/**
 * `pdf_page_start` / `pdf_page_end` query parameters (§v0-4.1, §unversioned-4.2):
 * positive integers with start ≤ end. The upper bound (≤ page count) is checked by {@link checkPageRange}
 * once the file is known.
 */
export function readPageRange(query: Query, errors: ErrorBag): PageRange {
	const start = readPositiveInt(query, 'pdf_page_start', errors);
	const end = readPositiveInt(query, 'pdf_page_end', errors);
	if (start && end && start > end)
		errors.add('pdf_page_end', 'Ensure this value is greater than or equal to pdf_page_start.');
	return { start, end };
}

/** Resolves a range against the page count: `null` when nothing is to be trimmed. */
export function checkPageRange(
	range: PageRange,
	pageCount: number,
	errors: ErrorBag,
): { start: number; end: number } | null {
	if (range.start === undefined && range.end === undefined) return null;
	const start = range.start ?? 1;
	const end = range.end ?? pageCount;
	if (start > pageCount)
		errors.add('pdf_page_start', `Ensure this value is less than or equal to ${pageCount}.`);
	if (end > pageCount)
		errors.add('pdf_page_end', `Ensure this value is less than or equal to ${pageCount}.`);
	if (start > end && range.end === undefined)
		errors.add('pdf_page_start', `Ensure this value is less than or equal to ${end}.`);
	return errors.has('pdf_page_start') || errors.has('pdf_page_end') ? null : { start, end };
}
