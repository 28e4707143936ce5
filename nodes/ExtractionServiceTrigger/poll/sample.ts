import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { fires } from './events';
import { EventList, PAGE_SIZE, idOf, isoTime, newest, type PollEnv } from './lists';

/** How far back a sample is looked for in a `/v0` list, widening until something is found (ms). */
const SAMPLE_SPANS = [60 * 60_000, 24 * 60 * 60_000, 30 * 24 * 60 * 60_000, undefined];

/** Pages read from each end of the extraction list when looking for a sample. */
const SAMPLE_SCAN_PAGES = 5;

/**
 * The most recent job (or document) that matches the event and the filters, for the editor's
 * "Fetch Test Event" (manual mode), so a user can map its fields. It reads and writes no state: the
 * cursor does not move.
 *
 * - `/v0` events: windows of the last hour, day, 30 days, then all time (`created_at_after`), the
 *   first that holds a match; in it, the items on the first and the last page (both ends, as the
 *   list's order is not shown) and the newest of them by `created_at`. A parsing is then read by
 *   id (`§v0-4.7`), as the trigger outputs it.
 * - Extractions: from each end of the list, the first extraction whose status fires (at most
 *   `SAMPLE_SCAN_PAGES` pages each), both read by id (`§unversioned-4.3`), the newer of the two.
 *
 * @throws NodeOperationError when nothing matches yet; NodeApiError for failed requests
 */
export async function sampleEvent(env: PollEnv): Promise<IDataObject> {
	const found = env.spec.strategy === 'window' ? await sampleWindow(env) : await sampleScan(env);
	if (found) return found;
	const filtered = Object.keys(env.filters).length > 0;
	throw new NodeOperationError(
		env.node,
		`No ${env.spec.resourceName.toLowerCase()} for the event "${env.spec.name}" was found${filtered ? ' with these filters' : ''}`,
		{
			description: `The test event is the most recent one at the service. ${
				env.spec.value === 'documentUploaded'
					? 'Upload a document'
					: `Create a ${env.spec.resourceName.toLowerCase()} that ends this way`
			}${filtered ? ', or loosen the filters,' : ''} and fetch again; the active workflow fires on new ones anyway.`,
		},
	);
}

/** The newest item of a `/v0` event (its full parsing, for parsings), or undefined. */
async function sampleWindow(env: PollEnv): Promise<IDataObject | undefined> {
	const list = new EventList(env);
	const now = Date.now();
	for (const span of SAMPLE_SPANS) {
		const candidates: IDataObject[] = [];
		for (const status of env.spec.statuses ?? [undefined]) {
			const qs: IDataObject = {
				...(status ? { status } : {}),
				...(span ? { created_at_after: isoTime(now - span) } : {}),
			};
			const first = await list.page(qs, 1);
			candidates.push(...first.results);
			if (first.next && first.count !== undefined && first.results.length > 0) {
				const last = Math.ceil(first.count / first.results.length);
				if (last > 1) candidates.push(...(await list.pageOrEmpty(qs, last, PAGE_SIZE)).results);
			}
		}
		const pick = newest(
			candidates.filter((item) => idOf(item) !== undefined && fires(env.spec, item.status)),
		);
		if (!pick) continue;
		return env.spec.kind ? await list.job(idOf(pick) as string) : pick;
	}
	return undefined;
}

/** The newer of the first matching extraction at each end of the list (read by id), or undefined. */
async function sampleScan(env: PollEnv): Promise<IDataObject | undefined> {
	const list = new EventList(env);
	const first = await list.page({}, 1);
	const firstMatch = (items: IDataObject[]) =>
		items.find((item) => idOf(item) !== undefined && fires(env.spec, item.status));
	const ids: string[] = [];
	// From the front: the first match on the first pages.
	for (let n = 1, page = first; n <= SAMPLE_SCAN_PAGES; n++) {
		const hit = firstMatch(page.results);
		if (hit) {
			ids.push(idOf(hit) as string);
			break;
		}
		if (!page.next) break;
		page = await list.pageOrEmpty({}, n + 1);
	}
	// From the back: the last match on the last pages (the first page, when it is the only one).
	const last =
		first.next && first.count !== undefined && first.results.length > 0
			? Math.ceil(first.count / first.results.length)
			: 1;
	for (let n = last; n >= 1 && n > last - SAMPLE_SCAN_PAGES; n--) {
		const page = n === 1 ? first : await list.pageOrEmpty({}, n);
		const hit = firstMatch([...page.results].reverse());
		if (hit) {
			ids.push(idOf(hit) as string);
			break;
		}
	}
	const read = await list.jobs([...new Set(ids)]);
	return newest(
		[...read.values()].filter((job): job is IDataObject => !!job && fires(env.spec, job.status)),
	);
}
