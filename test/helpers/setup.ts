/**
 * Shared test setup: one emulator per test file on a free loopback port, workflows run through
 * n8n-core's WorkflowExecute (scripts/engine.ts), and builders for input items. A test file calls
 * `useNode()` once and gets the helpers bound to its emulator.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import type { IDataObject, INode, INodeExecutionData } from 'n8n-workflow';

import type { Emulator, EmulatorOptions } from '../../emulator';
import {
	binaryProperty,
	runWorkflow,
	shutdownEngine,
	singleNodeWorkflow,
	type RunResult,
} from '../../scripts/engine';
import { useEmulatorClient } from '../emulator/client';

export const SAMPLE_PDF = readFileSync(
	path.join(__dirname, '..', '..', 'examples', 'files', 'invoice.pdf'),
);

/** Seeded ids (emulator/seed.json), named as the node's tests know them. */
export {
	INVOICE_SCHEMA,
	LINES_SCHEMA as INVOICE_LINES_SCHEMA,
	WORKFLOW_EU as WORKFLOW_WITH_SCHEMA,
} from '../emulator/client';

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
	const client = useEmulatorClient({ processingMs: 1000, ...options });
	afterAll(shutdownEngine);
	beforeEach(() => client.emu.clearLog());
	return () => client.emu;
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
	for (const [name, { bytes, fileName, mimeType = 'application/pdf' }] of Object.entries(files))
		binary[name] = await binaryProperty(bytes, fileName, mimeType);
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
		/** The workflow's time zone (its settings' `timezone`, what `getTimezone()` gives); default n8n's. */
		timezone?: string;
	} = {},
): Promise<RunResult & { items: INodeExecutionData[] }> {
	const workflow = singleNodeWorkflow(parameters as INode['parameters'], options.node);
	if (options.timezone !== undefined)
		workflow.settings = { executionOrder: 'v1', timezone: options.timezone };
	const result = await runWorkflow({
		workflow,
		startNode: 'Extraction Service',
		input,
		credentials: options.credentials ?? credentialsFor(emulator),
		onStart: options.onStart,
	});
	return { ...result, items: result.output('Extraction Service') };
}

/**
 * Creates a schema at the emulator (`POST /schema/`, §unversioned-4.6) with this definition.
 *
 * @returns the new schema's id
 * @throws Error when the emulator does not answer 201
 */
export async function createSchema(
	emulator: Emulator,
	definition: unknown,
	name = 'Checked',
): Promise<string> {
	const answer = await fetch(`${emulator.url}/schema/`, {
		method: 'POST',
		headers: { authorization: emulator.token, 'content-type': 'application/json' },
		body: JSON.stringify({ name, description: 'Made by a test', schema: definition }),
	});
	if (answer.status !== 201) throw new Error(`POST /schema/ answered ${answer.status}`);
	return ((await answer.json()) as { id: string }).id;
}

/** The emulator's API requests (files origin excluded unless asked), without the noise of other origins. */
export function apiRequests(emulator: Emulator, origin: 'api' | 'files' = 'api') {
	return emulator.requests.filter((r) => r.origin === origin);
}

/**
 * `useEmulator` with the helpers bound to the file's emulator: `runNode(parameters, input, options)`,
 * `credentialsFor(overrides)`, `apiRequests(origin)`, and `fileItem`.
 */
export function useNode(options: EmulatorOptions = {}) {
	const emulator = useEmulator(options);
	type Rest<F> = F extends (emulator: Emulator, ...rest: infer R) => infer T
		? (...rest: R) => T
		: never;
	const bind = <F extends (emulator: Emulator, ...rest: never[]) => unknown>(f: F) =>
		((...rest: never[]) => f(emulator(), ...rest)) as Rest<F>;
	return {
		emulator,
		runNode: bind(runNode),
		credentialsFor: bind(credentialsFor),
		apiRequests: bind(apiRequests),
		createSchema: bind(createSchema),
		fileItem,
	};
}
