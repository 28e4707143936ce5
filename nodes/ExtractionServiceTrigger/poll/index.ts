import type { IDataObject, INodeExecutionData, IPollFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { filterQuery } from '../../shared/filters';
import { extractionItems } from '../../shared/output';
import { withAbsoluteUrls } from '../../shared/absolute-urls';
import { isoDateTime } from '../../shared/validation';
import { DEFAULT_CLIENT_SETTINGS, ExtractionServiceClient } from '../../shared/transport';
import { EVENTS } from './events';
import { MAX_READ_FAILURES, SOFT_BUDGET_SHARE, type PollEnv } from './lists';
import { sampleEvent } from './sample';
import { pollScan } from './scan';
import {
	MAX_UNREAD_KEPT,
	loadState,
	saveState,
	type ScanState,
	type TriggerState,
	type Unreadable,
	type UnreadReport,
	type WindowState,
} from './state';
import { pollWindow } from './window';

/** n8n's poll budget when the running n8n does not say it (`getPollBudgetMs`, n8n 2.x): 5 minutes. */
const DEFAULT_POLL_BUDGET_MS = 5 * 60_000;

/** Share of the poll budget the poll's requests may use; the rest is left for n8n to take the result. */
const BUDGET_SHARE = 0.9;

/**
 * The trigger's `poll()` (`docs/service-api.md` §trigger): at every poll time (mode `trigger`) it
 * reads the state, polls (`window.ts` for the `/v0` events, `scan.ts` for extractions) and saves
 * the state; for the editor's "Fetch Test Event" (mode `manual`) it returns a sample (`sample.ts`).
 *
 * @returns one output with an item per job (per list element with Split Into Items), or null
 * @throws NodeOperationError for a bad parameter, (manual mode) when nothing matches, for jobs
 *   given up (`unreadableError`) or what a poll reports (§trigger 11–12); NodeApiError for the
 *   service's errors (401: key or token; 5xx on a list after retries; …)
 */
export async function pollTrigger(this: IPollFunctions): Promise<INodeExecutionData[][] | null> {
	const node = this.getNode();
	const eventName = this.getNodeParameter('event', 'extractionFinished') as string;
	const spec = EVENTS.find((event) => event.value === eventName);
	if (!spec) throw new NodeOperationError(node, `The event "${eventName}" is not supported`);
	const options = this.getNodeParameter('options', {}) as IDataObject;
	// Without a zone, in the workflow's time zone.
	const sinceText = isoDateTime(
		node,
		0,
		'Include Existing Since',
		options.includeExistingSince,
		this.getTimezone(),
	);
	const since = sinceText === undefined ? undefined : Date.parse(sinceText);
	const budget =
		typeof this.getPollBudgetMs === 'function' ? this.getPollBudgetMs() : DEFAULT_POLL_BUDGET_MS;
	const client = new ExtractionServiceClient(this, DEFAULT_CLIENT_SETTINGS);
	const started = Date.now();
	const env: PollEnv = {
		node,
		client,
		spec,
		filters: filterQuery(
			this,
			0,
			this.getNodeParameter('filters', {}) as IDataObject,
			EVENT_FILTERS[spec.strategy],
		),
		deadline: started + budget * BUDGET_SHARE,
		softDeadline: started + budget * SOFT_BUDGET_SHARE,
	};
	const baseUrl = await client.baseUrl(spec.family);

	if (this.getMode() === 'manual')
		return [await outputItems(this, env, [await sampleEvent(env)], baseUrl)];

	const data = this.getWorkflowStaticData('node');
	// n8n starts a node's next poll even while the previous one still runs (§trigger 6): such a
	// poll does nothing (one running longer than the poll budget is taken as lost).
	const key = `${this.getWorkflow().id ?? ''}:${node.id ?? node.name}`;
	const runningSince = RUNNING.get(key);
	if (runningSince !== undefined && started - runningSince < budget) return null;
	RUNNING.set(key, started);
	try {
		const fingerprint = JSON.stringify({
			event: spec.value,
			filters: env.filters,
			// As written: a new workflow time zone keeps the state.
			since: sinceText === undefined ? null : String(options.includeExistingSince).trim(),
			baseUrl,
		});
		const saved = loadState(data, fingerprint);
		let state = saved;
		// n8n's durable cursors save no state until a poll outputs something (§trigger 13): a poll
		// that finds none goes on from the last such poll's (an activation only after a filter edit).
		const keptKey = `${key}:${spec.value}`;
		const kept = ACTIVATIONS.get(keptKey);
		if (saved) ACTIVATIONS.delete(keptKey);
		else if (
			kept &&
			(!FRESH_START_MODES.has(this.getActivationMode()) || kept.fingerprint !== fingerprint)
		)
			state = loadState(kept as unknown as IDataObject, fingerprint);
		// Durable cursors do not commit the state of a poll that reported an error: go on from it.
		const loaded = state && JSON.stringify(state);
		const reported = REPORTED.get(key);
		if (reported && loaded === reported.before) state = reported.after;
		const outcome =
			spec.strategy === 'window'
				? await pollWindow(env, state as WindowState | undefined, since, fingerprint)
				: await pollScan(env, state as ScanState | undefined, since, fingerprint);
		const items = await outputItems(this, env, outcome.resources, baseUrl);
		// Jobs given up: reported once, by a poll with nothing to output (§trigger 1–2).
		const report = toReport(state, outcome.unreadable);
		const reportNow = report.unread !== undefined && items.length === 0 && !outcome.error;
		const next: TriggerState = reportNow ? outcome.state : { ...outcome.state, ...report };
		saveState(data, next);
		if (!saved) ACTIVATIONS.set(keptKey, next);
		if (outcome.error || reportNow) {
			// Keyed by the state as loaded: polls that go on loading it go on from this one.
			if (loaded) REPORTED.set(key, { before: loaded, after: next });
			throw outcome.error ?? unreadableError(env, report);
		}
		REPORTED.delete(key);
		return items.length > 0 ? [items] : null;
	} finally {
		if (RUNNING.get(key) === started) RUNNING.delete(key);
	}
}

/** The jobs to report after a poll: the state's and the poll's, at most `MAX_UNREAD_KEPT` by name, the rest by count. */
function toReport(state: TriggerState | undefined, dropped: Unreadable[] = []): UnreadReport {
	const all = [...(state?.unread ?? []), ...dropped];
	const more = (state?.unreadMore ?? 0) + Math.max(0, all.length - MAX_UNREAD_KEPT);
	return {
		...(all.length > 0 ? { unread: all.slice(0, MAX_UNREAD_KEPT) } : {}),
		...(more > 0 ? { unreadMore: more } : {}),
	};
}

/** The error that names the jobs given up, each with its last failure (the client's message, redacted). */
function unreadableError(env: PollEnv, report: UnreadReport): NodeOperationError {
	const unread = report.unread ?? [];
	const resource = env.spec.resourceName.toLowerCase();
	const total = unread.length + (report.unreadMore ?? 0);
	const what =
		total === 1
			? `${resource} ${unread[0].id}`
			: `${total} ${resource}s (${unread.map((job) => job.id).join(', ')}${report.unreadMore ? ', …' : ''})`;
	return new NodeOperationError(
		env.node,
		`The trigger could not read ${what} ${MAX_READ_FAILURES} polls in a row and stopped following ${total === 1 ? 'it' : 'them'}: ${total === 1 ? 'it does' : 'they do'} not fire`,
		{
			description: `${unread.map((job) => `${job.id}: ${job.error}`).join('; ')}. The other ${resource}s fired. Check ${total === 1 ? 'it' : 'them'} with ${env.spec.resourceName} → Get.`,
		},
	);
}

/** The state of the last poll that found no saved state, by workflow, node and event (durable cursors). */
const ACTIVATIONS = new Map<string, TriggerState>();

/** Activation modes of a poll that starts afresh when it finds no saved state (n8n's `WorkflowActivateMode`). */
const FRESH_START_MODES = new Set<string>(['activate', 'init', 'leadershipChange', 'manual']);

/** Polls running in this process: start (epoch ms) by workflow and node (see the overlap guard in `pollTrigger`). */
const RUNNING = new Map<string, number>();

/** The state a poll that failed with a reported error went on to, by workflow and node, and the state it started from. */
const REPORTED = new Map<string, { before: string; after: TriggerState }>();

/** The filters each kind of event takes (the extraction list's, or `search` for the /v0 lists). */
const EVENT_FILTERS = {
	scan: ['metaKey', 'metaValue', 'search', 'workflowId', 'workflowSessionId'],
	window: ['search'],
};

/**
 * Output items, as the Get operations output them: extractions with Simplify (version 2 keeps `id`,
 * `status`, `document_name` beside an extracted field of that name) and Split Into Items; parsings
 * and documents with absolute URLs added (`…_absolute`).
 */
async function outputItems(
	ctx: IPollFunctions,
	env: PollEnv,
	resources: IDataObject[],
	baseUrl: string,
): Promise<INodeExecutionData[]> {
	const { client, spec } = env;
	if (spec.strategy === 'scan') {
		const options = ctx.getNodeParameter('options', {}) as IDataObject;
		const output = {
			simplify: ctx.getNodeParameter('simplify', true) as boolean,
			keepJobFields: ctx.getNode().typeVersion >= 2,
			splitIntoItems: options.splitIntoItems === true,
			includeInputBinary: false,
			check:
				spec.value === 'extractionFinished' && options.checkAgainstSchema === true ? {} : undefined,
		};
		const items: INodeExecutionData[] = [];
		for (const extraction of resources)
			items.push(...(await extractionItems(client, extraction, 0, output)));
		return items;
	}
	return resources.map((resource) => ({ json: withAbsoluteUrls(resource, baseUrl) }));
}
