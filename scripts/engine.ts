/**
 * Runs the package's nodes through n8n's own engine, the way n8n's node tests do: n8n-core's
 * `WorkflowExecute` (`runWorkflow`), `LoadOptionsContext` (`runListSearch`), `RoutingNode`
 * (`runCredentialTest`) and `PollContext` + `PollTriggerExecutor` (`createTriggerHarness`). Nothing
 * of a node's context is faked; only a server's surroundings are: plain credentials, and a
 * pass-through type for n8n's built-in nodes before ours in example workflows (never executed: a run
 * starts at our node with the given items). For the tests, the demo, the benchmarks and users' own.
 *
 * Call `shutdownEngine()` once at the end (jest `afterAll`): n8n-core keeps a 60 s cleanup interval.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// n8n-core reads these when its modules load: its files stay out of the user's home folder, a fixed
// key spares the "generated a key" notice, and its own log lines are noise (callers print the node's).
process.env.N8N_USER_FOLDER ??= mkdtempSync(path.join(tmpdir(), 'n8n-engine-'));
process.env.N8N_DIAGNOSTICS_ENABLED ??= 'false';
process.env.N8N_ENCRYPTION_KEY ??= 'extraction-service-harness-key';
process.env.N8N_LOG_LEVEL ??= 'silent';

import { Container } from '@n8n/di';
import {
	BinaryDataService,
	ExecuteContext,
	ExecutionLifecycleHooks,
	LoadOptionsContext,
	PollContext,
	PollTriggerExecutor,
	RoutingNode,
	WorkflowExecute,
} from 'n8n-core';
import type {
	IBinaryData,
	ICredentialDataDecryptedObject,
	ICredentialsHelper,
	ICredentialsDecrypted,
	ICredentialType,
	IDataObject,
	IExecuteFunctions,
	IHttpRequestOptions,
	INode,
	INodeCredentialTestResult,
	INodeExecutionData,
	INodeListSearchResult,
	INodeParameters,
	INodeType,
	INodeTypes,
	IPollFunctions,
	IRun,
	IVersionedNodeType,
	IWorkflowBase,
	IWorkflowExecuteAdditionalData,
	IConnections,
	WorkflowActivateMode,
} from 'n8n-workflow';
import { createRunExecutionData, NodeHelpers, Workflow } from 'n8n-workflow';

export const NODE_TYPE = 'n8n-nodes-extraction-service.extractionService';
/** The node's tool variant (type `…extractionServiceTool`), as n8n derives it for an AI agent. */
export const TOOL_NODE_TYPE = `${NODE_TYPE}Tool`;
/** The trigger's node type name, as a workflow refers to it. */
export const TRIGGER_NODE_TYPE = 'n8n-nodes-extraction-service.extractionServiceTrigger';

/** Credential data by credential type name, e.g. `{ extractionServiceApi: { baseUrl, apiKey } }`. */
export type CredentialMap = Record<string, ICredentialDataDecryptedObject>;

/** The node and credential types the harness knows. Tests may pass the compiled node (dist) instead. */
export interface EngineTypes {
	node: INodeType | IVersionedNodeType;
	credentials: ICredentialType[];
}

/** A node of ours in a harness workflow, referring to both credentials (their data: the run's map). */
const ourNode = (id: string, name: string, type: string, parameters: INodeParameters): INode => ({
	id,
	name,
	type,
	typeVersion: 1,
	position: [0, 0],
	parameters,
	credentials: {
		extractionServiceApi: { id: '1', name: 'Extraction Service API' },
		extractionServiceTokenApi: { id: '2', name: 'Extraction Service Token API' },
	},
});

/**
 * A description of a node that does nothing, as n8n's No Operation node: the stand-in for built-in
 * nodes (executed, it passes its items through) and CredentialsTester's temporary type.
 */
const noOpDescription = (name: string, version: number | number[]) =>
	({
		displayName: name,
		name,
		group: ['organization'],
		version,
		description: 'No Operation',
		defaults: { name },
		inputs: ['main'],
		outputs: ['main'],
		properties: [],
	}) as unknown as INodeType['description'];

const PASS_THROUGH: INodeType = {
	description: noOpDescription('passThrough', [1, 1.1, 2]),
	async execute(this: IExecuteFunctions) {
		return [this.getInputData()];
	},
};

/** n8n's `INodeTypes` over a lookup by type name. */
function nodeTypesOf(byName: (name: string) => INodeType | IVersionedNodeType): INodeTypes {
	return {
		getByName: byName,
		getByNameAndVersion: (name: string, version?: number) =>
			NodeHelpers.getVersionedNodeType(byName(name), version),
		getKnownTypes: () => ({}),
	};
}

/** The only type a workflow knows (any other name is a harness misuse). */
const only = (typeName: string, type: INodeType) =>
	nodeTypesOf((name) => {
		if (name !== typeName) throw new Error(`The harness knows no node type "${name}"`);
		return type;
	});

/**
 * Requires a file of the package by path, from the TypeScript sources (jest compiles them) or the
 * build (what n8n loads; `npm run build` first): a plain `require('./X.node')` outside jest would
 * pick up the codex `X.node.json` beside `X.node.ts` instead of the code.
 */
function load(from: 'source' | 'dist', file: string) {
	const root = path.resolve(__dirname, '..', from === 'dist' ? 'dist' : '.');
	return require(path.join(root, file + (from === 'dist' ? '.js' : '.ts')));
}

/** The package's node and credential types, from the TypeScript sources or the build (see `load`). */
export function loadTypes(from: 'source' | 'dist' = 'source'): EngineTypes {
	const { ExtractionService } = load(from, 'nodes/ExtractionService/ExtractionService.node');
	const credential = (name: string) => new (load(from, `credentials/${name}.credentials`)[name])();
	return {
		node: new ExtractionService(),
		credentials: [credential('ExtractionServiceApi'), credential('ExtractionServiceTokenApi')],
	};
}

/** The Extraction Service Trigger's node type, from the TypeScript sources or the build. */
export function loadTriggerType(from: 'source' | 'dist' = 'source'): INodeType {
	const file = 'nodes/ExtractionServiceTrigger/ExtractionServiceTrigger.node';
	return new (load(from, file).ExtractionServiceTrigger)() as INodeType;
}

function nodeTypesFor(types: EngineTypes): INodeTypes {
	// The tool variant as n8n's `convertNodeToAiTool` makes it: the same node with `Tool` added to
	// its name, so that parameters shown only to tools (`@tool` display options) apply.
	const node = types.node as INodeType;
	const tool = Object.create(node) as INodeType;
	tool.description = { ...node.description, name: `${node.description.name}Tool` };
	return nodeTypesOf((name) =>
		name === NODE_TYPE ? types.node : name === TOOL_NODE_TYPE ? tool : PASS_THROUGH,
	);
}

/** Plain credentials; authentication through each credential type's own `authenticate`. */
function plainCredentialsHelper(
	credentials: CredentialMap,
	types: ICredentialType[],
): ICredentialsHelper {
	const helper: Omit<ICredentialsHelper, 'getCredentials'> = {
		getParentTypes: () => [],
		async authenticate(data, typeName, requestOptions) {
			const type = types.find((t) => t.name === typeName);
			if (typeof type?.authenticate === 'function')
				return await type.authenticate(data, requestOptions as IHttpRequestOptions);
			if (type?.authenticate)
				throw new Error(`The harness only supports function authentication (${typeName})`);
			return requestOptions as IHttpRequestOptions;
		},
		preAuthentication: async () => undefined,
		runPreAuthentication: async () => undefined,
		async getDecrypted(_additionalData, _nodeCredentials, type) {
			const data = credentials[type];
			if (!data) throw new Error(`No credentials of type ${type} were given to the harness`);
			return data;
		},
		updateCredentials: async () => {},
		updateCredentialsOauthTokenData: async () => {},
		getCredentialsProperties: () => [],
		isCredentialUsableByNode: () => true,
	};
	return helper as ICredentialsHelper;
}

let binaryDataReady: Promise<void> | undefined;

/**
 * Configures n8n-core's binary data service once per process, in the mode
 * `N8N_DEFAULT_BINARY_DATA_MODE` gives (`default` = in memory, `filesystem` = files), as n8n does.
 */
export async function initBinaryData(): Promise<void> {
	binaryDataReady ??= Container.get(BinaryDataService).init();
	await binaryDataReady;
}

/** Stores bytes as an n8n binary item property with the engine's binary data service (any mode). */
export async function binaryProperty(
	bytes: Buffer,
	fileName: string,
	mimeType: string,
	workflowId = 'harness',
	executionId = 'harness',
): Promise<IBinaryData> {
	await initBinaryData();
	return await Container.get(BinaryDataService).store(
		{ type: 'execution', workflowId, executionId },
		bytes,
		{
			data: '',
			mimeType,
			fileName,
			fileExtension: path.extname(fileName).replace('.', ''),
			fileSize: String(bytes.length),
		},
	);
}

/** What n8n's server gives an execution: hooks, credentials, URLs. */
function additionalDataFor(
	hooks: ExecutionLifecycleHooks | undefined,
	credentials: CredentialMap,
	types: ICredentialType[],
): IWorkflowExecuteAdditionalData {
	const base = 'http://localhost:5678';
	return {
		hooks,
		credentialsHelper: plainCredentialsHelper(credentials, types),
		executionId: 'harness-execution',
		restApiUrl: `${base}/rest`,
		instanceBaseUrl: `${base}/`,
		formWaitingBaseUrl: `${base}/form-waiting`,
		webhookBaseUrl: `${base}/webhook`,
		webhookWaitingBaseUrl: `${base}/webhook-waiting`,
		webhookTestBaseUrl: `${base}/webhook-test`,
		userId: 'harness-user',
		variables: {},
		async executeWorkflow() {
			throw new Error('Sub-workflows are not available in the harness');
		},
		async getRunExecutionData() {},
		logAiEvent() {},
		setExecutionStatus() {},
		sendDataToUI() {},
	} as unknown as IWorkflowExecuteAdditionalData;
}

export interface RunOptions {
	workflow: Pick<IWorkflowBase, 'nodes' | 'connections'> & Partial<IWorkflowBase>;
	/** Name of the node where execution starts; it receives `input` as its input items. */
	startNode: string;
	input: INodeExecutionData[];
	credentials: CredentialMap;
	types?: EngineTypes;
	/** Called with the running execution, e.g. to cancel it (`execution.cancel()`). */
	onStart?: (execution: { cancel: () => void }) => void;
}

/** Outcome of a run: the node outputs by node name (first run, main output 0), and the raw IRun. */
export interface RunResult {
	run: IRun;
	/** Output items of each executed node. */
	output: (nodeName: string) => INodeExecutionData[];
	/** The error the run stopped with, if any. */
	error?: Error & IDataObject;
}

/**
 * Executes a workflow with n8n-core's `WorkflowExecute.processRunExecutionData`, starting at
 * `startNode` with `input`, and resolves when n8n's `workflowExecuteAfter` hook fires. A workflow
 * n8n refuses to start (a node with issues, e.g. an empty required parameter) gives `error` and no
 * `run`.
 */
export async function runWorkflow(options: RunOptions): Promise<RunResult> {
	await initBinaryData();
	const types = options.types ?? loadTypes('source');
	const workflowData = {
		id: 'harness',
		name: 'Harness',
		active: false,
		isArchived: false,
		createdAt: new Date(),
		updatedAt: new Date(),
		settings: { executionOrder: 'v1' },
		...options.workflow,
	} as IWorkflowBase;
	const workflow = new Workflow({
		id: workflowData.id,
		name: workflowData.name,
		nodes: workflowData.nodes as INode[],
		connections: workflowData.connections as IConnections,
		active: false,
		nodeTypes: nodeTypesFor(types),
		settings: workflowData.settings,
	});
	const startNode = workflow.getNode(options.startNode);
	if (!startNode) throw new Error(`The workflow has no node named "${options.startNode}"`);

	const hooks = new ExecutionLifecycleHooks('manual', 'harness-execution', workflowData);
	const done = new Promise<IRun>((resolve) => hooks.addHandler('workflowExecuteAfter', resolve));
	const runExecutionData = createRunExecutionData({
		executionData: {
			nodeExecutionStack: [{ node: startNode, data: { main: [options.input] }, source: null }],
		},
	});
	const execute = new WorkflowExecute(
		additionalDataFor(hooks, options.credentials, types.credentials),
		'manual',
		runExecutionData,
	);
	let execution: ReturnType<WorkflowExecute['processRunExecutionData']>;
	try {
		execution = execute.processRunExecutionData(workflow);
	} catch (error) {
		const run = undefined as unknown as IRun;
		return { run, error: error as Error & IDataObject, output: () => [] };
	}
	options.onStart?.({ cancel: () => execution.cancel() });
	await execution.catch(() => undefined);
	const run = await done;
	const runData = run.data.resultData.runData;
	return {
		run,
		error: run.data.resultData.error as (Error & IDataObject) | undefined,
		output: (nodeName: string) => runData[nodeName]?.[0]?.data?.main?.[0] ?? [],
	};
}

/** A one-node workflow: our node with the given parameters, named "Extraction Service". */
export function singleNodeWorkflow(
	parameters: INode['parameters'],
	extra: Partial<INode> = {},
): RunOptions['workflow'] {
	const id = '8f3a7c52-1d0e-4c2b-9b1a-5e6f7a8b9c0d';
	const node = ourNode(id, 'Extraction Service', NODE_TYPE, parameters);
	return { nodes: [{ ...node, ...extra }], connections: {} };
}

/** Stops n8n-core's background timers so a test process can exit. */
export async function shutdownEngine(): Promise<void> {
	try {
		const { SSHClientsManager } = require('n8n-core/dist/execution-engine/ssh-clients-manager') as {
			SSHClientsManager: new (...args: unknown[]) => { onShutdown(): void };
		};
		if (Container.has(SSHClientsManager)) Container.get(SSHClientsManager).onShutdown();
	} catch {
		/* not loaded: nothing to stop */
	}
}

/**
 * Calls one of the node's `methods.listSearch` functions the way n8n's editor does, with n8n-core's
 * real LoadOptionsContext (the "From List" mode of a resource locator).
 */
export async function runListSearch(
	method: string,
	options: {
		parameters: INode['parameters'];
		credentials: CredentialMap;
		filter?: string;
		paginationToken?: string;
		types?: EngineTypes;
	},
): Promise<INodeListSearchResult> {
	const types = options.types ?? loadTypes('source');
	const workflow = new Workflow({
		id: 'harness',
		nodes: singleNodeWorkflow(options.parameters).nodes as INode[],
		connections: {},
		active: false,
		nodeTypes: nodeTypesFor(types),
	});
	const context = new LoadOptionsContext(
		workflow,
		workflow.getNode('Extraction Service')!,
		additionalDataFor(undefined, options.credentials, types.credentials),
		'parameters.schema',
	);
	const nodeType = NodeHelpers.getVersionedNodeType(types.node, 1) as INodeType;
	const search = nodeType.methods?.listSearch?.[method];
	if (!search) throw new Error(`The node has no listSearch method "${method}"`);
	return await search.call(context, options.filter, options.paginationToken);
}

/** What a failed routing request carries, as CredentialsTester reads it (`error.cause`). */
interface CredentialTestError {
	message?: string;
	cause?: { response?: { status: number; statusText?: string }; code?: string };
}

/**
 * Presses a credential type's "Test" button the way n8n's server does (packages/cli
 * `CredentialsTester.testCredentials`, its declarative `test` request branch): the credential's
 * defaults applied to `credentialData`, a temporary No-Op node type whose one property routes
 * `test.request`, run by n8n-core's `RoutingNode` in mode `internal` with one empty item,
 * authenticated by the type's own `authenticate`. Outcomes are mapped as n8n maps them: an HTTP
 * error matching a `responseCode` rule gives that rule's message, else `statusText` or
 * `Received HTTP status code: N`; a network error its `code` (e.g. `ECONNREFUSED`); any other error
 * its message; a success matching a `responseSuccessBody` rule that rule's message.
 *
 * @param typeName credential type name, e.g. `extractionServiceApi`
 * @param credentialData the credential's fields as the user typed them, e.g. `{ baseUrl, apiKey }`
 * @param types node and credential types (default: the TypeScript sources)
 * @returns `{ status: 'OK' | 'Error', message }`; throws only for a harness misuse (an unknown type)
 */
export async function runCredentialTest(
	typeName: string,
	credentialData: ICredentialDataDecryptedObject,
	types: EngineTypes = loadTypes('source'),
): Promise<INodeCredentialTestResult> {
	const credentialType = types.credentials.find((t) => t.name === typeName);
	if (!credentialType) throw new Error(`The harness knows no credential type "${typeName}"`);
	const testRequest = credentialType.test;
	if (!testRequest)
		return { status: 'Error', message: 'No testing function found for this credential.' };

	const data = NodeHelpers.getNodeParameters(
		credentialType.properties,
		credentialData as INodeParameters,
		true,
		false,
		null,
		null,
	) as ICredentialDataDecryptedObject;
	const credentials: ICredentialsDecrypted = {
		id: 'harness-credential',
		name: 'Harness credential',
		type: typeName,
		data,
	};
	const noOp = noOpDescription('n8n-nodes-base.noOp', 1);
	const node: INode = {
		...ourNode('temp', 'Temp-Node', noOp.name, {}),
		credentials: { [typeName]: { id: credentials.id, name: credentials.name } },
	};
	const nodeType: INodeType = {
		description: {
			...noOp,
			credentials: [{ name: typeName, required: true }],
			properties: [
				{
					displayName: 'Temp',
					name: 'temp',
					type: 'string',
					routing: { request: testRequest.request },
					default: '',
				},
			],
		},
	};
	const workflow = new Workflow({
		nodes: [node],
		connections: {},
		active: false,
		nodeTypes: only(noOp.name, nodeType),
	});
	const context = new ExecuteContext(
		workflow,
		node,
		{
			...additionalDataFor(undefined, { [typeName]: data }, types.credentials),
			currentNodeParameters: node.parameters,
		},
		'internal',
		createRunExecutionData({ resultData: { runData: {} } }),
		0,
		[],
		{ main: [[{ json: {} }]] },
		{ node, data: {}, source: null },
		[],
	);

	let response: INodeExecutionData[][] | null | undefined;
	try {
		response = await new RoutingNode(context, nodeType, credentials).runNode();
	} catch (caught) {
		const error = caught as CredentialTestError;
		if (error.cause?.response) {
			const { status, statusText } = error.cause.response;
			const rule = testRequest.rules?.find(
				(r) => r.type === 'responseCode' && r.properties.value === status,
			);
			if (rule) return { status: 'Error', message: rule.properties.message };
			if (status < 199 || status > 299)
				return { status: 'Error', message: statusText || `Received HTTP status code: ${status}` };
		} else if (error.cause?.code) {
			return { status: 'Error', message: error.cause.code };
		}
		return { status: 'Error', message: String(error.message) };
	}

	const body = (response?.[0]?.[0]?.json ?? {}) as INodeParameters;
	for (const rule of testRequest.rules ?? []) {
		if (
			rule.type === 'responseSuccessBody' &&
			NodeHelpers.getParameterValueByPath(body, rule.properties.key, '') === rule.properties.value
		)
			return { status: 'Error', message: rule.properties.message };
	}
	return { status: 'OK', message: 'Connection successful!' };
}

/** What one poll gave: the items n8n would start the workflow with, or the error it would report. */
export interface PollRun {
	/** Items of the first output (empty when the poll returned null). */
	items: INodeExecutionData[];
	/** Whether the poll returned data (n8n emits it and starts an execution). */
	emitted: boolean;
	/** The error the poll failed with (n8n's `__emitError`, or thrown in test and manual runs). */
	error?: Error & IDataObject;
}

/** A trigger in a workflow whose static data lives across polls (see `createTriggerHarness`). */
export interface TriggerHarness {
	/** The workflow: n8n keeps the node's static data on it (`workflow.staticData`). */
	workflow: Workflow;
	node: INode;
	/** The poll n8n runs when the workflow is activated (`executePollTrigger(true)`). */
	activate(): Promise<PollRun>;
	/** A scheduled poll of the active workflow (`executePollTrigger()`). */
	poll(): Promise<PollRun>;
	/** The editor's "Fetch Test Event": mode `manual`, as `WorkflowExecute.executePollNode` runs it. */
	fetchTestEvent(): Promise<PollRun>;
	/** A JSON copy of the node's static data (what n8n would save with the workflow). */
	staticData(): IDataObject;
	/** Every emit so far, in order (one execution each): overlapping polls cannot say whose is whose. */
	emits(): INodeExecutionData[][];
}

export interface TriggerHarnessOptions {
	/** The trigger node's parameters (`event`, `filters`, `options`, `simplify`, …). */
	parameters: INode['parameters'];
	/** The trigger's node version (default 1, as the harness's workflows were saved). */
	typeVersion?: number;
	credentials: CredentialMap;
	/** Default: the trigger from the TypeScript sources and the package's credentials. */
	types?: { trigger: INodeType; credentials: ICredentialType[] };
	/** Static data to start from (a workflow saved after earlier polls). */
	staticData?: IDataObject;
	/**
	 * Poll as n8n 2.41 does with `N8N_POLLER_DURABLE_CURSORS_ENABLED`: each poll works on its own copy
	 * of the node's static data, committed only when it emits or returns nothing (a failed poll
	 * commits nothing). Default false: one static-data object shared by every poll.
	 */
	durableCursors?: boolean;
}

/**
 * A polling trigger run through n8n-core's own poll path, as `ActiveWorkflows.activatePollTrigger`
 * sets it up: one `PollContext` (mode `trigger`, activation `activate`) and one `PollTriggerExecutor`
 * function for the active workflow, called with `testingTrigger` at activation, then once per poll
 * time; the workflow, and with it the node's static data, stays in memory between polls as in a
 * server. With `durableCursors`, each scheduled poll gets a context of its own in activation mode
 * `update`, as n8n 2.41's scheduler makes them. "Fetch Test Event" is `executePollNode`'s call: a
 * `PollContext` in mode and activation `manual`, and `poll()` called on it.
 */
export function createTriggerHarness(options: TriggerHarnessOptions): TriggerHarness {
	const types = options.types ?? {
		trigger: loadTriggerType('source'),
		credentials: loadTypes('source').credentials,
	};
	const id = '5b0e2c1d-7a4f-4e3b-9c2d-1f0a9b8c7d6e';
	const node = {
		...ourNode(id, 'Extraction Service Trigger', TRIGGER_NODE_TYPE, options.parameters),
		typeVersion: options.typeVersion ?? 1,
	};
	const workflow = new Workflow({
		id: 'harness-trigger',
		name: 'Trigger harness',
		nodes: [node],
		connections: {},
		active: true,
		nodeTypes: only(TRIGGER_NODE_TYPE, types.trigger),
		staticData: options.staticData,
		settings: { executionOrder: 'v1' },
	});
	const additionalData = additionalDataFor(undefined, options.credentials, types.credentials);
	let current: PollRun = { items: [], emitted: false };
	const everyEmit: INodeExecutionData[][] = [];
	const copy = (data: IDataObject) => JSON.parse(JSON.stringify(data)) as IDataObject;
	const shared = () => workflow.getStaticData('node', node);
	// Durable cursors: the running poll's own copy of the static data, and its commit.
	const staging = new AsyncLocalStorage<{ data: IDataObject }>();
	const durable = options.durableCursors === true;
	const commit = (): void => {
		const staged = staging.getStore()?.data;
		if (!durable || !staged) return;
		const target = shared();
		for (const key of Object.keys(target)) delete target[key];
		Object.assign(target, copy(staged));
	};
	const executorFor = (activation: WorkflowActivateMode) => {
		const context = new PollContext(
			workflow,
			node,
			additionalData,
			'trigger',
			activation,
			(data) => {
				current.emitted = true;
				current.items = data[0] ?? [];
				everyEmit.push(data[0] ?? []);
				commit(); // with the execution the emit starts
			},
			(error) => {
				current.error = error as Error & IDataObject;
			},
			async () => commit(),
			// As n8n 2.41: an activation poll that returns nothing commits nothing, so the first
			// scheduled poll starts from the static data saved before the activation.
			async (poll) => (durable ? await staging.run({ data: copy(shared()) }, poll) : await poll()),
			() => (durable ? (staging.getStore()?.data ?? shared()) : shared()),
		);
		return Container.get(PollTriggerExecutor).create(
			workflow,
			node,
			context as IPollFunctions,
			() => true,
		);
	};
	const activeExecutor = executorFor('activate');

	const scheduled = async (testingTrigger: boolean): Promise<PollRun> => {
		const run: PollRun = { items: [], emitted: false };
		current = run;
		const executor = durable && !testingTrigger ? executorFor('update') : activeExecutor;
		try {
			await executor(testingTrigger);
		} catch (error) {
			// The activation poll (testingTrigger) throws instead of reporting through __emitError.
			run.error = error as Error & IDataObject;
		}
		return run;
	};

	return {
		workflow,
		node,
		activate: async () => await scheduled(true),
		poll: async () => await scheduled(false),
		async fetchTestEvent() {
			const context = new PollContext(workflow, node, additionalData, 'manual', 'manual');
			try {
				const data = await types.trigger.poll!.call(context);
				return { items: data?.[0] ?? [], emitted: data !== null };
			} catch (error) {
				return { items: [], emitted: false, error: error as Error & IDataObject };
			}
		},
		staticData: () => copy(shared()),
		emits: () => [...everyEmit],
	};
}
