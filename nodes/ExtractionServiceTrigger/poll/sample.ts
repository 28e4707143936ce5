import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { fires, type EventSpec } from './events';
import { EventList, idOf, isoTime, timestampMs, type PollEnv } from './lists';

/** How far back a sample is looked for in a `/v0` list, widening until something is found (ms). */
const SAMPLE_SPANS = [60 * 60_000, 24 * 60 * 60_000, 30 * 24 * 60 * 60_000, undefined];

/** Pages read from each end of the extraction list when looking for a sample. */
const SAMPLE_SCAN_PAGES = 5;

/**
 * The most recent job (or document) that matches the event and the filters, for the editor's
 * "Fetch Test Event" (manual mode), so a user can map its fields. It reads and writes no state.
 * The list's order is not shown, so both ends are read (the last page found from `count`):
 *
 * - `/v0` events: windows of the last hour, day, 30 days, then all time (`created_at_after`), the
 *   first that holds a match; of its first and last page, the newest match by `created_at`. A
 *   parsing is then read by id (`§v0-4.7`), as the trigger outputs it.
 * - Extractions: the first match from each end (at most `SAMPLE_SCAN_PAGES` pages each), both read
 *   by id (`§unversioned-4.3`, list items carry no date), the newer of the two.
 *
 * @throws NodeOperationError when nothing matches yet; NodeApiError for failed requests
 */
export async function sampleEvent(env: PollEnv): Promise<IDataObject> {
	const { spec } = env;
	const list = new EventList(env);
	let found: IDataObject | undefined;
	if (spec.strategy === 'scan') {
		const ends = matching(spec, await endItems(list, {}, SAMPLE_SCAN_PAGES));
		const ids = [...new Set([ends[0], ends[ends.length - 1]].filter(Boolean).map(idOf))];
		const read = await list.jobs(ids as string[]);
		found = newest(
			[...read.values()].filter((job): job is IDataObject => !!job && fires(spec, job.status)),
		);
	}
	for (const span of spec.strategy === 'window' ? SAMPLE_SPANS : []) {
		const candidates: IDataObject[] = [];
		for (const status of spec.statuses ?? [undefined])
			candidates.push(
				...(await endItems(list, {
					...(status ? { status } : {}),
					...(span ? { created_at_after: isoTime(Date.now() - span) } : {}),
				})),
			);
		const pick = newest(matching(spec, candidates));
		if (!pick) continue;
		found = spec.kind ? await list.job(idOf(pick) as string) : pick;
		break;
	}
	if (found) return found;
	const filtered = Object.keys(env.filters).length > 0;
	throw new NodeOperationError(
		env.node,
		`No ${spec.resourceName.toLowerCase()} for the event "${spec.name}" was found${filtered ? ' with these filters' : ''}`,
		{
			description: `The test event is the most recent one at the service. ${
				spec.value === 'documentUploaded'
					? 'Upload a document'
					: `Create a ${spec.resourceName.toLowerCase()} that ends this way`
			}${filtered ? ', or loosen the filters,' : ''} and fetch again; the active workflow fires on new ones anyway.`,
		},
	);
}

/** The items that could be the sample: with an id, in a status that fires the event. */
function matching(spec: EventSpec, items: IDataObject[]): IDataObject[] {
	return items.filter((item) => idOf(item) !== undefined && fires(spec, item.status));
}

/** The newest of some resources by `created_at` (ties and undated: the first given). */
function newest(resources: IDataObject[]): IDataObject | undefined {
	const ms = (resource: IDataObject) => timestampMs(resource.created_at) ?? -Infinity;
	return resources.reduce<IDataObject | undefined>(
		(best, resource) => (!best || ms(resource) > ms(best) ? resource : best),
		undefined,
	);
}

/**
 * The items at both ends of a query, in list order: at most `pages` pages from page 1 forwards and
 * from the last (by `count`) backwards, each end stopping at a page that holds a `matching` item.
 */
async function endItems(list: EventList, qs: IDataObject, pages = 1): Promise<IDataObject[]> {
	const hit = (items: IDataObject[]) => matching(list.env.spec, items).length > 0;
	let page = await list.page(qs, 1);
	const { count, next, results } = page;
	const front = [...results];
	let n = 1;
	for (; n < pages && page.next && !hit(page.results); n++) {
		page = await list.pageOrEmpty(qs, n + 1);
		front.push(...page.results);
	}
	const last =
		next && count !== undefined && results.length > 0 ? Math.ceil(count / results.length) : 1;
	const back: IDataObject[] = [];
	for (let m = last; m > n && m > last - pages; m--) {
		const behind = await list.pageOrEmpty(qs, m);
		back.unshift(...behind.results);
		if (hit(behind.results)) break;
	}
	return [...front, ...back];
}
