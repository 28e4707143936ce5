/** Helpers of the emulator's own tests: one in-process emulator per test file, raw HTTP calls to it, forms, polling, seeded ids. */
import { startEmulator, type Emulator, type EmulatorOptions } from '../../emulator';
import { makePdf } from '../../emulator/sample-pdf';

/** Seeded schemas and workflows (emulator/seed.json). */
export const INVOICE_SCHEMA = '3f0c1a52-7d4e-4c1b-9a51-2b6f0e8d9c41';
export const LINES_SCHEMA = '6b1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
export const WORKFLOW_EU = '0d5c5f0e-8b7a-4c52-9a3e-6f1e2d3c4b5a';
export const WORKFLOW_PLAIN = '1e6d6a1f-9c8b-4d63-8b4f-7a2f3e4d5c6b';

/** A UUID no record has. */
export const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

/**
 * A four-page invoice: page 1 has the Invoice schema's labels (INV-1, 2024-03-01, ACME Corporation,
 * 1,234.50 EUR), pages 2 and 4 one invoice line each (Consulting 1,000.00; Travel 234.50).
 */
export function fourPageInvoice(): Promise<Buffer> {
	return makePdf([
		[
			'ACME Corporation',
			'Invoice number: INV-1',
			'Invoice date: 2024-03-01',
			'Vendor: ACME Corporation',
			'Total: 1,234.50 EUR',
			'Currency: EUR',
		],
		['Line description: Consulting', 'Line amount: 1,000.00', 'Description: Consulting'],
		['Nothing relevant here'],
		['Description: Travel', 'Amount: 234.50'],
	]);
}

/** One answer; `body` parsed when it is JSON, else its text. */
export interface Answer {
	status: number;
	headers: Headers;
	body: any;
	bytes: Buffer;
}

/** A request body: JSON, a multipart form, or text with its content type (default text/plain). */
export interface CallInit {
	headers?: Record<string, string>;
	json?: unknown;
	form?: FormData;
	text?: string;
	contentType?: string;
}

export interface FormFile {
	name: string;
	bytes: Buffer;
}

/** A multipart form; an array value repeats the field, in order. */
export function form(
	fields: Record<string, string | FormFile | Array<string | FormFile>>,
): FormData {
	const fd = new FormData();
	for (const [name, value] of Object.entries(fields))
		for (const one of Array.isArray(value) ? value : [value])
			if (typeof one === 'string') fd.append(name, one);
			else fd.append(name, new Blob([new Uint8Array(one.bytes)]), one.name);
	return fd;
}

/** Whether a job (§v0-3, §unversioned-3) is final. */
const isFinal = (a: Answer): boolean =>
	['FINISHED', 'PARTIAL_FINISHED', 'ERROR'].includes(a.body.status);

/** The emulator of one test file and calls to it; see {@link useEmulatorClient}. */
export class EmulatorClient {
	constructor(private readonly current: () => Emulator | undefined) {}

	/** The running emulator; throws outside the file's tests. */
	get emu(): Emulator {
		const emulator = this.current();
		if (!emulator) throw new Error('emulator not started');
		return emulator;
	}

	/** The credential header of each family (§v0-5, §unversioned-5). */
	v0 = (): Record<string, string> => ({ 'x-api-key': this.emu.apiKey });
	tok = (): Record<string, string> => ({ authorization: this.emu.token });

	/** One request, redirects not followed; `url` is a path on the API origin or absolute. Throws when the connection fails. */
	async call(method: string, url: string, init: CallInit = {}): Promise<Answer> {
		const headers: Record<string, string> = { ...(init.headers ?? {}) };
		let body: BodyInit | undefined;
		if (init.json !== undefined) {
			headers['content-type'] = 'application/json';
			body = JSON.stringify(init.json);
		} else if (init.form) {
			body = init.form;
		} else if (init.text !== undefined) {
			headers['content-type'] = init.contentType ?? 'text/plain';
			body = init.text;
		}
		const target = url.startsWith('http') ? url : this.emu.url + url;
		const res = await fetch(target, { method, headers, body, redirect: 'manual' });
		const bytes = Buffer.from(await res.arrayBuffer());
		const isJson =
			(res.headers.get('content-type') ?? '').startsWith('application/json') && bytes.length > 0;
		return {
			status: res.status,
			headers: res.headers,
			body: isJson ? JSON.parse(bytes.toString('utf8')) : bytes.toString('utf8'),
			bytes,
		};
	}

	/** {@link call} with the credential of the path's family; `init.headers` win. */
	async send(method: string, url: string, init: CallInit = {}): Promise<Answer> {
		const family = /^(https?:\/\/[^/]+)?\/v0\//.test(url) ? this.v0() : this.tok();
		return await this.call(method, url, { ...init, headers: { ...family, ...init.headers } });
	}

	/** GETs `url` every 50 ms until `done` holds; throws after `timeoutMs` (under jest's timeout) with the last answer. */
	async poll(url: string, done = isFinal, timeoutMs = 50_000): Promise<Answer> {
		const deadline = Date.now() + timeoutMs;
		for (;;) {
			const a = await this.send('GET', url);
			if (done(a)) return a;
			if (Date.now() > deadline)
				throw new Error(
					`timeout polling ${url}: last ${a.status} ${JSON.stringify(a.body).slice(0, 300)}`,
				);
			await new Promise((resolve) => setTimeout(resolve, 50));
		}
	}
}

/** Starts an emulator (quiet, with `options`) before the file's tests and closes it after them. */
export function useEmulatorClient(options: EmulatorOptions = {}): EmulatorClient {
	let emulator: Emulator | undefined;
	beforeAll(async () => {
		emulator = await startEmulator({ quiet: true, ...options });
	});
	afterAll(async () => {
		await emulator?.close();
		emulator = undefined;
	});
	return new EmulatorClient(() => emulator);
}

/** {@link fourPageInvoice} as `bytes` and as the form file `invoice.pdf`, made before the file's tests. */
export function useInvoice(): { bytes: Buffer; file: FormFile } {
	const file: FormFile = { name: 'invoice.pdf', bytes: Buffer.alloc(0) };
	const invoice: { bytes: Buffer; file: FormFile } = { bytes: file.bytes, file };
	beforeAll(async () => {
		invoice.bytes = file.bytes = await fourPageInvoice();
	});
	return invoice;
}
