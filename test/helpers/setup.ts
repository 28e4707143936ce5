/**
 * Shared test setup: one emulator per test file on a free loopback port, workflows run through
 * n8n-core's WorkflowExecute (scripts/engine.ts), and builders for input items.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import type { IDataObject, INode, INodeExecutionData } from 'n8n-workflow';

import { startEmulator, type Emulator, type EmulatorOptions } from '../../emulator';
import {
	binaryProperty,
	runWorkflow,
	shutdownEngine,
	singleNodeWorkflow,
	type RunResult,
} from '../../scripts/engine';

export const SAMPLE_PDF = readFileSync(
	path.join(__dirname, '..', '..', 'examples', 'files', 'invoice.pdf'),
);

/** Seeded schema ids (emulator/seed.json). */
export const INVOICE_SCHEMA = '3f0c1a52-7d4e-4c1b-9a51-2b6f0e8d9c41';
export const INVOICE_LINES_SCHEMA = '6b1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
export const WORKFLOW_WITH_SCHEMA = '0d5c5f0e-8b7a-4c52-9a3e-6f1e2d3c4b5a';

/** The sample invoice's expected extraction with the Invoice schema. */
export const SAMPLE_RESULT = {
	invoice_number: 'INV-2026-0042',
	invoice_date: '2026-11-02',
	vendor_name: 'ACME Supplies GmbH',
	customer_name: 'Northwind Traders SARL',
	total_amount: 1234.5,
	currency: 'EUR',
	due_date: '2026-12-02',
};

/**
 * Starts an emulator before the file's tests and stops it (and n8n-core's timers) after them.
 *
 * @returns a getter for the running emulator
 */
export function useEmulator(options: EmulatorOptions = {}): () => Emulator {
	let emulator: Emulator | undefined;
	beforeAll(async () => {
		emulator = await startEmulator({ processingMs: 1000, quiet: true, ...options });
	});
	afterAll(async () => {
		await emulator?.close();
		emulator = undefined; // its records (up to 50,000 seeded jobs) are garbage from here on
		await shutdownEngine();
	});
	beforeEach(() => emulator?.clearLog());
	return () => {
		if (!emulator) throw new Error('emulator not started');
		return emulator;
	};
}

/** Credentials of both types pointing at the emulator. */
export function credentialsFor(
	emulator: Emulator,
	overrides: { apiKey?: string; token?: string; baseUrl?: string } = {},
) {
	const baseUrl = overrides.baseUrl ?? `${emulator.url}/`;
	return {
		extractionServiceApi: { baseUrl, apiKey: overrides.apiKey ?? emulator.apiKey },
		extractionServiceTokenApi: { baseUrl, token: overrides.token ?? emulator.token },
	};
}

/** An input item with files as binary properties (default: the sample invoice as `data`). */
export async function fileItem(
	files: Record<string, { bytes: Buffer; fileName: string; mimeType?: string }> = {
		data: { bytes: SAMPLE_PDF, fileName: 'invoice.pdf' },
	},
	json: IDataObject = {},
): Promise<INodeExecutionData> {
	const binary: NonNullable<INodeExecutionData['binary']> = {};
	for (const [name, file] of Object.entries(files)) {
		binary[name] = await binaryProperty(
			file.bytes,
			file.fileName,
			file.mimeType ?? 'application/pdf',
		);
	}
	return { json, binary };
}

/** Runs the node once with the given parameters over `input` items. */
export async function runNode(
	emulator: Emulator,
	parameters: Record<string, unknown>,
	input: INodeExecutionData[] = [{ json: {} }],
	options: {
		node?: Partial<INode>;
		credentials?: ReturnType<typeof credentialsFor>;
		onStart?: (e: { cancel: () => void }) => void;
	} = {},
): Promise<RunResult & { items: INodeExecutionData[] }> {
	const result = await runWorkflow({
		workflow: singleNodeWorkflow(parameters as INode['parameters'], options.node),
		startNode: 'Extraction Service',
		input,
		credentials: options.credentials ?? credentialsFor(emulator),
		onStart: options.onStart,
	});
	return { ...result, items: result.output('Extraction Service') };
}

/** The emulator's API requests (files origin excluded unless asked), without the noise of other origins. */
export function apiRequests(emulator: Emulator, origin: 'api' | 'files' = 'api') {
	return emulator.requests.filter((r) => r.origin === origin);
}
