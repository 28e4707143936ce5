/**
 * Runs a workflow through n8n's own execution engine (n8n-core `WorkflowExecute` with n8n-workflow's
 * `Workflow`), the way n8n's node tests do, for the tests and the demo. Nothing of
 * `IExecuteFunctions` is faked: the node gets n8n-core's real execute context, request helpers,
 * binary data service and cancellation signal. Only the surroundings of a server are replaced: a
 * credentials helper holding plain credentials, and pass-through types for n8n's built-in nodes
 * that sit before ours in example workflows (they are never executed: the run starts at our node
 * with the given input items).
 *
 * Call `shutdownEngine()` once at the end (jest `afterAll`): n8n-core keeps a 60 s cleanup interval.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// n8n-core reads these when its modules load: keep its files out of the user's home folder, and
// select where binary data lives before BinaryDataService is configured.
process.env.N8N_USER_FOLDER ??= mkdtempSync(path.join(tmpdir(), 'n8n-engine-'));
process.env.N8N_DIAGNOSTICS_ENABLED ??= 'false';
// A fixed key for the throwaway user folder, so n8n-core does not announce generating one.
process.env.N8N_ENCRYPTION_KEY ??= 'extraction-service-harness-key';
// The node's errors are asserted or printed by the callers; n8n-core's own log lines are noise here.
process.env.N8N_LOG_LEVEL ??= 'silent';

import { Container } from '@n8n/di';
import {
	BinaryDataService,
	ExecuteContext,
	ExecutionLifecycleHooks,
	LoadOptionsContext,
	RoutingNode,
	WorkflowExecute,
} from 'n8n-core';
import type {
	IBinaryData,
	ICredentialDataDecryptedObject,
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
	IRun,
	IVersionedNodeType,
	IWorkflowBase,
	IWorkflowExecuteAdditionalData,
	IConnections,
	ITaskDataConnections,
} from 'n8n-workflow';
import { createRunExecutionData, ICredentialsHelper, NodeHelpers, Workflow } from 'n8n-workflow';
// The trigger harness (`createTriggerHarness`, at the end): n8n-core's poll path.
import { PollContext, PollTriggerExecutor } from 'n8n-core';
import type { IPollFunctions, WorkflowActivateMode } from 'n8n-workflow';

export const NODE_TYPE = 'n8n-nodes-extraction-service.extractionService';

/** Credential data by credential type name, e.g. `{ extractionServiceApi: { baseUrl, apiKey } }`. */
export type CredentialMap = Record<string, ICredentialDataDecryptedObject>;

/** Stand-in for n8n built-in nodes that precede ours in example workflows: passes items through. */
class PassThrough implements INodeType {
	description = {
		displayName: 'Pass Through',
		name: 'passThrough',
		group: ['input'],
		version: [1, 1.1, 2],
		description: 'Stand-in for an n8n built-in node; never executed by the harness',
		defaults: { name: 'Pass Through' },
		inputs: ['main'],
		outputs: ['main'],
		properties: [],
	} as unknown as INodeType['description'];

	async execute(this: IExecuteFunctions): Promise<INodeExecutionData[][]> {
		return [this.getInputData()];
	}
}

/** The node and credential types the harness knows. Tests may pass the compiled node (dist) instead. */
export interface EngineTypes {
	node: INodeType | IVersionedNodeType;
	credentials: ICredentialType[];
}

/**
 * The package's node and credential types, from the TypeScript sources (`'source'`, for jest, which
 * compiles them) or from the build (`'dist'`, what n8n loads; run `npm run build` first).
 * Loaded by path at run time: next to `X.node.ts` sits the codex `X.node.json`, which a plain
 * `require('./X.node')` outside jest would pick up instead of the code.
 */
export function loadTypes(from: 'source' | 'dist' = 'source'): EngineTypes {
	const root = path.resolve(__dirname, '..', from === 'dist' ? 'dist' : '.');
	const ext = from === 'dist' ? '.js' : '.ts';
	const { ExtractionService } = require(
		path.join(root, 'nodes/ExtractionService/ExtractionService.node' + ext),
	);
	const { ExtractionServiceApi } = require(
		path.join(root, 'credentials/ExtractionServiceApi.credentials' + ext),
	);
	const { ExtractionServiceTokenApi } = require(
		path.join(root, 'credentials/ExtractionServiceTokenApi.credentials' + ext),
	);
	return {
		node: new ExtractionService(),
		credentials: [new ExtractionServiceApi(), new ExtractionServiceTokenApi()],
	};
}

/** The node's tool variant (type `…extractionServiceTool`), as n8n derives it for an AI agent. */
export const TOOL_NODE_TYPE = `${NODE_TYPE}Tool`;

/**
 * The tool variant of a node type as n8n makes it (n8n's `convertNodeToAiTool`): the same node with
 * `Tool` added to its name, so that parameters shown only to tools (`@tool` display options) apply.
 */
function toolVariant(node: INodeType): INodeType {
	const variant = Object.create(node) as INodeType;
	variant.description = { ...node.description, name: `${node.description.name}Tool` };
	return variant;
}

function nodeTypesFor(types: EngineTypes): INodeTypes {
	const passThrough = new PassThrough();
	const tool = toolVariant(types.node as INodeType);
	const byName = (name: string): INodeType | IVersionedNodeType =>
		name === NODE_TYPE ? types.node : name === TOOL_NODE_TYPE ? tool : passThrough;
	return {
		getByName: byName,
		getByNameAndVersion: (name: string, version?: number) =>
			NodeHelpers.getVersionedNodeType(byName(name), version),
		getKnownTypes: () => ({}),
	};
}

/** Plain credentials; authentication through each credential type's own `authenticate`. */
class PlainCredentialsHelper extends ICredentialsHelper {
	constructor(
		private readonly credentials: CredentialMap,
		private readonly types: ICredentialType[],
	) {
		super();
	}

	getParentTypes(): string[] {
		return [];
	}

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		typeName: string,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		const type = this.types.find((t) => t.name === typeName);
		if (typeof type?.authenticate === 'function')
			return await type.authenticate(credentials, requestOptions);
		if (type?.authenticate)
			throw new Error(`The harness only supports function authentication (${typeName})`);
		return requestOptions;
	}

	async preAuthentication(): Promise<ICredentialDataDecryptedObject | undefined> {
		return undefined;
	}

	async runPreAuthentication(): Promise<ICredentialDataDecryptedObject | undefined> {
		return undefined;
	}

	async getCredentials(): Promise<never> {
		throw new Error('Not available in the test harness');
	}

	async getDecrypted(
		_additionalData: unknown,
		_nodeCredentials: unknown,
		type: string,
	): Promise<ICredentialDataDecryptedObject> {
		const data = this.credentials[type];
		if (!data) throw new Error(`No credentials of type ${type} were given to the harness`);
		return data;
	}

	async updateCredentials(): Promise<void> {}

	async updateCredentialsOauthTokenData(): Promise<void> {}

	getCredentialsProperties(): [] {
		return [];
	}

	isCredentialUsableByNode(): boolean {
		return true;
	}
}

let binaryDataReady: Promise<void> | undefined;

/**
 * Configures n8n-core's binary data service once per process. The mode comes from
 * `N8N_DEFAULT_BINARY_DATA_MODE` (`default` = in memory, `filesystem` = files under the user folder),
 * as in an n8n server.
 */
export async function initBinaryData(): Promise<void> {
	binaryDataReady ??= Container.get(BinaryDataService).init();
	await binaryDataReady;
}

/**
 * Turns bytes into an n8n binary item property through the engine's binary data service (so the
 * node reads it the way it reads real n8n binaries, in whichever mode is configured).
 */
export async function binaryProperty(
	bytes: Buffer,
	fileName: string,
	mimeType: string,
	workflowId = 'harness',
	executionId = 'harness',
): Promise<IBinaryData> {
	await initBinaryData();
	const service = Container.get(BinaryDataService);
	const extension = path.extname(fileName).replace('.', '');
	return await service.store({ type: 'execution', workflowId, executionId }, bytes, {
		data: '',
		mimeType,
		fileName,
		fileExtension: extension,
		fileSize: String(bytes.length),
	});
}

/** What n8n's server gives an execution: hooks, credentials, URLs (plain object; see the header). */
function additionalDataFor(
	hooks: ExecutionLifecycleHooks | undefined,
	credentials: CredentialMap,
	types: EngineTypes,
): IWorkflowExecuteAdditionalData {
	return {
		hooks,
		credentialsHelper: new PlainCredentialsHelper(credentials, types.credentials),
		executionId: 'harness-execution',
		restApiUrl: 'http://localhost:5678/rest',
		instanceBaseUrl: 'http://localhost:5678/',
		formWaitingBaseUrl: 'http://localhost:5678/form-waiting',
		webhookBaseUrl: 'http://localhost:5678/webhook',
		webhookWaitingBaseUrl: 'http://localhost:5678/webhook-waiting',
		webhookTestBaseUrl: 'http://localhost:5678/webhook-test',
		currentNodeParameters: undefined,
		executionTimeoutTimestamp: undefined,
		userId: 'harness-user',
		variables: {},
		async executeWorkflow() {
			throw new Error('Sub-workflows are not available in the harness');
		},
		async getRunExecutionData() {
			return undefined;
		},
		logAiEvent() {},
		setExecutionStatus() {},
		sendDataToUI() {},
	} as unknown as IWorkflowExecuteAdditionalData;
}

/** Options of one run. */
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
 * `startNode` with `input`, and resolves when n8n's `workflowExecuteAfter` hook fires.
 */
export async function runWorkflow(options: RunOptions): Promise<RunResult> {
	await initBinaryData();
	const types = options.types ?? loadTypes('source');
	const workflowData: IWorkflowBase = {
		id: 'harness',
		name: 'Harness',
		active: false,
		isArchived: false,
		createdAt: new Date(),
		updatedAt: new Date(),
		settings: { executionOrder: 'v1' },
		...options.workflow,
		connections: options.workflow.connections as IConnections,
		nodes: options.workflow.nodes as INode[],
	} as IWorkflowBase;
	const workflow = new Workflow({
		id: workflowData.id,
		name: workflowData.name,
		nodes: workflowData.nodes,
		connections: workflowData.connections,
		active: false,
		nodeTypes: nodeTypesFor(types),
		settings: workflowData.settings,
	});
	const startNode = workflow.getNode(options.startNode);
	if (!startNode) throw new Error(`The workflow has no node named "${options.startNode}"`);

	const hooks = new ExecutionLifecycleHooks('manual', 'harness-execution', workflowData);
	let finished!: (run: IRun) => void;
	const done = new Promise<IRun>((resolve) => (finished = resolve));
	hooks.addHandler('workflowExecuteAfter', (run) => finished(run));

	const additionalData = additionalDataFor(hooks, options.credentials, types);

	const runExecutionData = createRunExecutionData({
		executionData: {
			nodeExecutionStack: [{ node: startNode, data: { main: [options.input] }, source: null }],
		},
	});
	const execute = new WorkflowExecute(additionalData, 'manual', runExecutionData);
	let execution: ReturnType<WorkflowExecute['processRunExecutionData']>;
	try {
		execution = execute.processRunExecutionData(workflow);
	} catch (error) {
		// n8n refuses to start a workflow whose nodes have issues (e.g. an empty required parameter).
		return {
			run: undefined as unknown as IRun,
			error: error as Error & IDataObject,
			output: () => [],
		};
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
	return {
		nodes: [
			{
				id: '8f3a7c52-1d0e-4c2b-9b1a-5e6f7a8b9c0d',
				name: 'Extraction Service',
				type: NODE_TYPE,
				typeVersion: 1,
				position: [0, 0],
				parameters,
				credentials: {
					extractionServiceApi: { id: '1', name: 'Extraction Service API' },
					extractionServiceTokenApi: { id: '2', name: 'Extraction Service Token API' },
				},
				...extra,
			},
		],
		connections: {},
	};
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
	const workflowData = singleNodeWorkflow(options.parameters);
	const workflow = new Workflow({
		id: 'harness',
		nodes: workflowData.nodes as INode[],
		connections: {},
		active: false,
		nodeTypes: nodeTypesFor(types),
	});
	const node = workflow.getNode('Extraction Service')!;
	const context = new LoadOptionsContext(
		workflow,
		node,
		additionalDataFor(undefined, options.credentials, types),
		'parameters.schema',
	);
	const nodeType = NodeHelpers.getVersionedNodeType(types.node, 1) as INodeType;
	const search = nodeType.methods?.listSearch?.[method];
	if (!search) throw new Error(`The node has no listSearch method "${method}"`);
	return await search.call(context, options.filter, options.paginationToken);
}

/**
 * The description n8n's CredentialsTester starts from for a credential type with its own `test`:
 * the built-in "No Operation, do nothing" node (`n8n-nodes-base.noOp`, version 1, no properties).
 * Only `name` and `version` matter to the run (the temporary node's type and typeVersion).
 */
const NO_OP_DESCRIPTION = {
	displayName: 'No Operation, do nothing',
	name: 'n8n-nodes-base.noOp',
	group: ['organization'],
	version: 1,
	description: 'No Operation',
	defaults: { name: 'No Operation, do nothing' },
	inputs: ['main'],
	outputs: ['main'],
	properties: [],
} as unknown as INodeType['description'];

/** What a failed routing request carries, as CredentialsTester reads it (`error.cause`). */
interface CredentialTestError {
	message?: string;
	cause?: { response?: { status: number; statusText?: string }; code?: string };
}

/**
 * Presses a credential type's "Test" button the way n8n's server does (packages/cli
 * `CredentialsTester.testCredentials`, declarative `test` request branch), with n8n-core's real
 * `ExecuteContext` and `RoutingNode`: the credential's defaults are applied to `credentialData`
 * (`NodeHelpers.getNodeParameters`, as `CredentialsHelper.applyDefaultsAndOverwrites`), a temporary
 * node type copied from the No-Op node gets one property whose `routing.request` is the type's
 * `test.request`, and a one-node workflow runs it in mode `internal` with one empty input item.
 * The request is authenticated by the type's own `authenticate` (the harness's credentials helper,
 * as n8n's `CredentialsHelper.authenticate` does for function authentication).
 *
 * The outcome is mapped as n8n maps it: a thrown error with an HTTP response is matched against
 * `test.rules` of type `responseCode` (→ that rule's message), then any non-2xx status gives
 * `statusText` or `Received HTTP status code: N`; an error with a network `code` (e.g.
 * `ECONNREFUSED`) gives the code; any other error gives its message. A success is checked against
 * `responseSuccessBody` rules, else it is `{ status: 'OK', message: 'Connection successful!' }`.
 *
 * @param typeName credential type name, e.g. `extractionServiceApi`
 * @param credentialData the credential's fields as the user typed them, e.g. `{ baseUrl, apiKey }`
 * @param types node and credential types (default: the TypeScript sources)
 * @returns n8n's `INodeCredentialTestResult`: `{ status: 'OK' | 'Error', message }`; never throws for a
 *   failed test (only for a harness misuse such as an unknown type name)
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
	const credentialsDecrypted: ICredentialsDecrypted = {
		id: 'harness-credential',
		name: 'Harness credential',
		type: typeName,
		data,
	};

	const node: INode = {
		id: 'temp',
		parameters: {},
		name: 'Temp-Node',
		type: NO_OP_DESCRIPTION.name,
		typeVersion: 1,
		position: [0, 0],
		credentials: { [typeName]: { id: credentialsDecrypted.id!, name: credentialsDecrypted.name } },
	};
	const nodeTypeCopy: INodeType = {
		description: {
			...NO_OP_DESCRIPTION,
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
	// The temporary type is the only one this workflow knows (n8n registers it in a mock NodeTypes).
	const nodeTypes: INodeTypes = {
		getByName: () => nodeTypeCopy,
		getByNameAndVersion: (name: string, version?: number) => {
			if (name !== NO_OP_DESCRIPTION.name) throw new Error(`Unknown node type "${name}"`);
			return NodeHelpers.getVersionedNodeType(nodeTypeCopy, version);
		},
		getKnownTypes: () => ({}),
	};
	const workflow = new Workflow({ nodes: [node], connections: {}, active: false, nodeTypes });

	const inputData: ITaskDataConnections = { main: [[{ json: {} }]] };
	const additionalData = {
		...additionalDataFor(undefined, { [typeName]: data }, types),
		currentNodeParameters: node.parameters,
	} as IWorkflowExecuteAdditionalData;
	const executeFunctions = new ExecuteContext(
		workflow,
		node,
		additionalData,
		'internal',
		createRunExecutionData({ resultData: { runData: {} } }),
		0,
		[],
		inputData,
		{ node, data: {}, source: null },
		[],
	);

	let response: INodeExecutionData[][] | null | undefined;
	try {
		response = await new RoutingNode(
			executeFunctions,
			nodeTypeCopy,
			credentialsDecrypted,
		).runNode();
	} catch (caught) {
		const error = caught as CredentialTestError;
		if (error.cause?.response) {
			const { status, statusText } = error.cause.response;
			for (const rule of testRequest.rules ?? []) {
				if (rule.type === 'responseCode' && rule.properties.value === status) {
					return { status: 'Error', message: rule.properties.message };
				}
			}
			if (status < 199 || status > 299) {
				return { status: 'Error', message: statusText || `Received HTTP status code: ${status}` };
			}
		} else if (error.cause?.code) {
			return { status: 'Error', message: error.cause.code };
		}
		return { status: 'Error', message: String(error.message) };
	}

	for (const rule of testRequest.rules ?? []) {
		if (rule.type === 'responseSuccessBody') {
			const body = response?.[0]?.[0]?.json ?? {};
			if (
				NodeHelpers.getParameterValueByPath(body as INodeParameters, rule.properties.key, '') ===
				rule.properties.value
			) {
				return { status: 'Error', message: rule.properties.message };
			}
		}
	}
	return { status: 'OK', message: 'Connection successful!' };
}

/** The trigger's node type name, as a workflow refers to it. */
export const TRIGGER_NODE_TYPE = 'n8n-nodes-extraction-service.extractionServiceTrigger';

/**
 * The Extraction Service Trigger's node type, from the TypeScript sources or the build (see
 * `loadTypes`: loaded by path, so the codex JSON next to the node file is not picked up instead).
 */
export function loadTriggerType(from: 'source' | 'dist' = 'source'): INodeType {
	const root = path.resolve(__dirname, '..', from === 'dist' ? 'dist' : '.');
	const ext = from === 'dist' ? '.js' : '.ts';
	const { ExtractionServiceTrigger } = require(
		path.join(root, 'nodes/ExtractionServiceTrigger/ExtractionServiceTrigger.node' + ext),
	);
	return new ExtractionServiceTrigger() as INodeType;
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
	/** The poll n8n runs when the workflow is activated (`executePollTrigger(true)`, activation `activate`). */
	activate(): Promise<PollRun>;
	/** A scheduled poll of the active workflow (`executePollTrigger()`). */
	poll(): Promise<PollRun>;
	/** The editor's "Fetch Test Event": mode `manual`, as n8n-core's `WorkflowExecute.executePollNode` runs it. */
	fetchTestEvent(): Promise<PollRun>;
	/** A JSON copy of the node's static data (what n8n would save with the workflow). */
	staticData(): IDataObject;
	/**
	 * Every emit so far, in order (each is one execution n8n would start). With polls that overlap,
	 * a poll's own `items` cannot say which emit was whose; this can count them all.
	 */
	emits(): INodeExecutionData[][];
}

/** Options of `createTriggerHarness`. */
export interface TriggerHarnessOptions {
	/** The trigger node's parameters (`event`, `filters`, `options`, `simplify`, …). */
	parameters: INode['parameters'];
	credentials: CredentialMap;
	/** Default: the trigger from the TypeScript sources and the package's credentials. */
	types?: { trigger: INodeType; credentials: ICredentialType[] };
	/** Static data to start from (a workflow saved after earlier polls). */
	staticData?: IDataObject;
	/**
	 * Poll as n8n 2.41 does with durable cursors on (`N8N_POLLER_DURABLE_CURSORS_ENABLED`): each poll
	 * works on its own copy of the node's static data (PollContext's `resolveNodeStaticData` inside
	 * `__runPoll`), which is committed only when the poll emits (with its execution) or returns
	 * nothing (`__commitCursor`); a poll that fails commits nothing. Default false: the classic
	 * scheduling, one static-data object shared by every poll.
	 */
	durableCursors?: boolean;
}

/**
 * A polling trigger run the way n8n runs it, through n8n-core's own poll path: one
 * `PollContext(workflow, node, additionalData, 'trigger', 'activate', __emit, __emitError)` and one
 * `PollTriggerExecutor` function for the active workflow, as `ActiveWorkflows.activatePollTrigger`
 * makes them — called with `testingTrigger` at activation (`activate()`), then once per poll time
 * (`poll()`): the poll runs in n8n's staging scope, then `__emit` gets the data, or `__emitError`
 * the error, or the cursor is committed when nothing was emitted. With `durableCursors`, each
 * scheduled poll gets a poll context of its own in activation mode `update`, as n8n 2.41's scheduler
 * makes them. The workflow object persists
 * between polls, and with it the node's static data (`workflow.staticData`), as in an n8n server
 * where the active workflow stays in memory. Manual mode is `WorkflowExecute.executePollNode`'s
 * call: a `PollContext` in mode and activation `manual`, and `poll()` called on it.
 *
 * Only the surroundings of a server are replaced, as in `runWorkflow`: plain credentials through
 * the credential types' own `authenticate`.
 */
export function createTriggerHarness(options: TriggerHarnessOptions): TriggerHarness {
	const types = options.types ?? {
		trigger: loadTriggerType('source'),
		credentials: loadTypes('source').credentials,
	};
	const nodeTypes: INodeTypes = {
		getByName: () => types.trigger,
		getByNameAndVersion: (name: string, version?: number) => {
			if (name !== TRIGGER_NODE_TYPE)
				throw new Error(`The trigger harness knows no node type "${name}"`);
			return NodeHelpers.getVersionedNodeType(types.trigger, version);
		},
		getKnownTypes: () => ({}),
	};
	const node: INode = {
		id: '5b0e2c1d-7a4f-4e3b-9c2d-1f0a9b8c7d6e',
		name: 'Extraction Service Trigger',
		type: TRIGGER_NODE_TYPE,
		typeVersion: 1,
		position: [0, 0],
		parameters: options.parameters,
		credentials: {
			extractionServiceApi: { id: '1', name: 'Extraction Service API' },
			extractionServiceTokenApi: { id: '2', name: 'Extraction Service Token API' },
		},
	};
	const workflow = new Workflow({
		id: 'harness-trigger',
		name: 'Trigger harness',
		nodes: [node],
		connections: {},
		active: true,
		nodeTypes,
		staticData: options.staticData,
		settings: { executionOrder: 'v1' },
	});
	const additionalData = additionalDataFor(undefined, options.credentials, {
		node: types.trigger,
		credentials: types.credentials,
	});
	// As in n8n's ActiveWorkflows.activatePollTrigger: one poll context (activation `activate`) and
	// one executor function for the life of the active workflow, called once at activation with
	// `testingTrigger` true, then at each poll time.
	let current: PollRun = { items: [], emitted: false };
	const everyEmit: INodeExecutionData[][] = [];
	// Durable cursors: the poll's own copy of the node's static data, and its commit.
	const staging = new AsyncLocalStorage<{ data: IDataObject }>();
	const shared = () => workflow.getStaticData('node', node);
	const commit = (): void => {
		const staged = staging.getStore()?.data;
		if (!staged) return;
		const target = shared();
		for (const key of Object.keys(target)) delete target[key];
		Object.assign(target, JSON.parse(JSON.stringify(staged)) as IDataObject);
	};
	const durable = options.durableCursors === true;
	const contextFor = (activation: WorkflowActivateMode): PollContext =>
		new PollContext(
			workflow,
			node,
			additionalData,
			'trigger',
			activation,
			(data) => {
				current.emitted = true;
				current.items = data[0] ?? [];
				everyEmit.push(data[0] ?? []);
				if (durable) commit(); // committed with the execution the emit starts
			},
			(error) => {
				current.error = error as Error & IDataObject;
			},
			async () => {
				if (durable) commit();
			},
			async (poll) => {
				if (!durable) return await poll();
				// As n8n 2.41: the activation poll (testingTrigger) that returns nothing commits nothing, so
				// the first scheduled poll starts from the static data saved before the activation.
				return await staging.run(
					{ data: JSON.parse(JSON.stringify(shared())) as IDataObject },
					poll,
				);
			},
			() => (durable ? (staging.getStore()?.data ?? shared()) : shared()),
		);
	const executorFor = (activation: WorkflowActivateMode) =>
		Container.get(PollTriggerExecutor).create(
			workflow,
			node,
			contextFor(activation) as IPollFunctions,
			() => true,
		);
	const activeExecutor = executorFor('activate');
	// With durable cursors, n8n 2.41's scheduler runs each scheduled poll on a poll context of its own,
	// activation mode `update` (TriggerExecutionContextFactory.createPollExecutionContext); the
	// activation poll runs on the one ActiveWorkflows made.
	const executePollTrigger = async (testingTrigger: boolean) =>
		await (durable && !testingTrigger ? executorFor('update') : activeExecutor)(testingTrigger);

	const scheduled = async (testingTrigger: boolean): Promise<PollRun> => {
		const run: PollRun = { items: [], emitted: false };
		current = run;
		try {
			await executePollTrigger(testingTrigger);
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
		staticData: () =>
			JSON.parse(JSON.stringify(workflow.getStaticData('node', node))) as IDataObject,
		emits: () => [...everyEmit],
	};
}
