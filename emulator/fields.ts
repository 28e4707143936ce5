/**
 * Field readers shared by both families: one view over JSON and form bodies that collects its field
 * errors, the emulator's test controls and page ranges. Messages follow Django REST framework, whose
 * error shapes both references show (§v0-7, §unversioned-7).
 */
import type { ParsedBody, UploadedFile } from './body';
import { ErrorBag, HttpError, queryValue, type Query } from './http';
import type { EmulatorControls, FinalStatus } from './store';

export const REQUIRED = 'This field is required.';
export const EMPTY_FILE = 'The submitted file is empty.';

/** Absent, null or '' (what DRF treats as "not given" for optional fields). */
export function isBlank(value: unknown): boolean {
	return value === undefined || value === null || value === '';
}

export function isUploadedFile(value: unknown): value is UploadedFile {
	return typeof value === 'object' && value !== null && 'file' in value && 'filename' in value;
}

/** Where a field's errors go: another key, each message prefixed (a workflow's `extracts[i]document`). */
export interface ErrorAt {
	field: string;
	prefix: string;
}

const TRUE_VALUES = ['true', 't', 'yes', 'y', 'on', '1'];
const FALSE_VALUES = ['false', 'f', 'no', 'n', 'off', '0'];
const OUTCOMES: readonly FinalStatus[] = ['FINISHED', 'PARTIAL_FINISHED', 'ERROR'];
const DRF_TYPE_NAMES: Record<string, string> = { string: 'str', number: 'int', boolean: 'bool' };

/** A request body seen as named fields, whatever its encoding; its readers collect field errors in `errors`. */
export class Input {
	readonly errors = new ErrorBag();

	private constructor(
		/** 'form' for multipart and url-encoded bodies (all values are strings or files). */
		readonly source: 'json' | 'form',
		private readonly json: Record<string, unknown>,
		private readonly fields = new Map<string, string[]>(),
		private readonly files = new Map<string, UploadedFile[]>(),
	) {}

	/** A JSON body must be an object (DRF: "Invalid data. Expected a dictionary, but got list."). */
	static from(body: ParsedBody): Input {
		if (body.kind === 'form') return new Input('form', {}, body.fields, body.files);
		const value = body.kind === 'json' ? body.value : {};
		if (value !== null && typeof value === 'object' && !Array.isArray(value))
			return new Input('json', value as Record<string, unknown>);
		// What JSON leaves here: a list, null (typeof 'object'), a string, a number or a boolean.
		const got = Array.isArray(value) ? 'list' : (DRF_TYPE_NAMES[typeof value] ?? 'null');
		throw new HttpError(400, {
			non_field_errors: [`Invalid data. Expected a dictionary, but got ${got}.`],
		});
	}

	has(name: string): boolean {
		return this.source === 'json'
			? this.json[name] !== undefined
			: this.fields.has(name) || this.files.has(name);
	}

	/** JSON: the value. Form: the uploaded file, else the text (an array when the field is repeated). */
	get(name: string): unknown {
		if (this.source === 'json') return this.json[name];
		const file = this.files.get(name);
		if (file) return file[0];
		const texts = this.fields.get(name);
		return texts && texts.length === 1 ? texts[0] : texts;
	}

	/** Every form field name (text and file), for encodings such as `extracts[0]document`. */
	formFieldNames(): string[] {
		return [...this.fields.keys(), ...this.files.keys()];
	}

	/** A required, non-empty file field. */
	file(field: string, at: ErrorAt = { field, prefix: '' }): UploadedFile | undefined {
		const upload = this.files.get(field)?.[0];
		if (upload && upload.file.size > 0) return upload;
		const message = upload
			? EMPTY_FILE
			: this.has(field)
				? 'The submitted data was not a file. Check the encoding type on the form.'
				: 'No file was submitted.';
		this.errors.add(at.field, at.prefix + message);
		return undefined;
	}

	/** JSON booleans, 0/1, or the strings DRF's BooleanField accepts. */
	boolean(name: string, fallback: boolean): boolean {
		const value = this.get(name);
		if (value === undefined || value === null) return fallback;
		// true, false, 0 and 1 read as their text; a file, list or object as no text.
		const text = typeof value === 'object' ? '' : String(value).trim().toLowerCase();
		if (TRUE_VALUES.includes(text)) return true;
		if (FALSE_VALUES.includes(text)) return false;
		this.errors.add(name, 'Must be a valid boolean.');
		return fallback;
	}

	/** A choice; without `fallback` it is required. */
	choice<T extends string>(name: string, choices: readonly T[], fallback?: T): T | undefined {
		const value = this.get(name);
		if (isBlank(value)) {
			if (fallback === undefined) this.errors.add(name, REQUIRED);
			return fallback;
		}
		if ((choices as readonly unknown[]).includes(value)) return value as T;
		const shown = typeof value === 'string' ? value : JSON.stringify(value);
		this.errors.add(name, `"${shown}" is not a valid choice.`);
		return fallback;
	}

	/** An optional string; '' and null give null. */
	optionalString(name: string): string | null {
		const value = this.get(name);
		if (isBlank(value)) return null;
		if (typeof value === 'string') return value;
		this.errors.add(name, 'Not a valid string.');
		return null;
	}

	/**
	 * `metadata` (§v0-4.1, §v0-4.5, §v0-4.8, §unversioned-4.2): a JSON object or null (in a form, a
	 * JSON string; '' is absent).
	 */
	metadata(): Record<string, unknown> | null {
		let value = this.get('metadata');
		if (value === undefined || value === null) return null;
		if (this.source === 'form') {
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
		this.errors.add('metadata', 'Must be a JSON object.');
		return null;
	}

	/** The emulator's test controls a `metadata` carries (README: *Test controls*). */
	controls(metadata: Record<string, unknown> | null): EmulatorControls {
		if (!metadata) return {};
		const { emulator_outcome: outcome, emulator_processing_ms: ms, emulator_hold: hold } = metadata;
		const failFiles = metadata.emulator_fail_files;
		const controls: EmulatorControls = {};
		const invalid = (message: string): void => this.errors.add('metadata', message);
		if (OUTCOMES.includes(outcome as FinalStatus)) controls.outcome = outcome as FinalStatus;
		else if (outcome !== undefined)
			invalid(`emulator_outcome must be one of ${OUTCOMES.join(', ')}.`);
		const n = typeof ms === 'string' && ms.trim() !== '' ? Number(ms) : ms;
		if (typeof n === 'number' && Number.isFinite(n) && n >= 0) controls.processingMs = n;
		else if (ms !== undefined) invalid('emulator_processing_ms must be a non-negative number.');
		if (typeof metadata.emulator_error === 'string') controls.reason = metadata.emulator_error;
		if (hold === true || (Number.isInteger(hold) && (hold as number) >= 1))
			controls.hold = hold as true | number;
		else if (hold !== undefined && hold !== false)
			invalid('emulator_hold must be true, false or a whole number ≥ 1.');
		if (Array.isArray(failFiles) && failFiles.every((f) => typeof f === 'string'))
			controls.failFiles = failFiles as string[];
		else if (failFiles !== undefined) invalid('emulator_fail_files must be a list of file names.');
		return controls;
	}
}

/** Requested page range (1-based, inclusive); either end may be absent. */
export interface PageRange {
	start?: number;
	end?: number;
}

/** A query parameter that must be a whole number ≥ 1; absent or '' → undefined. */
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

/** `pdf_page_start` / `pdf_page_end` (§v0-4.1, §unversioned-4.2); the page count is checked by {@link checkPageRange}. */
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
