import type { IDataObject } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { fires, isFinal } from './events';
import {
	EventList,
	MAX_FIRING_PER_POLL,
	PAGE_SIZE,
	byCreation,
	idOf,
	isoTime,
	outOfTime,
	timestampMs,
	type PollEnv,
} from './lists';
import { byHash, hashId, markOf, packMarks, unpackMarks } from './marks';
import { STATE_VERSION, type Unreadable, type WindowState } from './state';

/**
 * The `/v0` events (Document Uploaded, Parsing Finished, Parsing Failed): `docs/service-api.md`
 * §trigger points 7–13 (the numbers in the comments below). Each poll reads the window (every item
 * created at or after `from`) whole and fires what is final and not in `seen`.
 */

/** How far behind the newest item the window starts (ms, the service's time): items listed this late still fire. */
export const MARGIN_MS = 10 * 60_000;

/** Most handled items the window keeps: a quiet poll reads ≤ 9 pages of 100 and one count. */
export const MAX_SEEN = 900;

/** Most pages a poll reads of one list (within `PollEnv.softDeadline`): a guard against a list that never ends. */
export const MAX_WINDOW_PAGES = 1000;

/** What a poll found and the state to keep if it is output. */
export interface PollOutcome<S> {
	/** Resources that fire, oldest first (by `created_at`). */
	resources: IDataObject[];
	state: S;
	/** When set (and nothing fires), the poll fails with this error after `state` is saved. */
	error?: NodeOperationError;
	/** Jobs dropped because their read by id failed `MAX_READ_FAILURES` polls in a row: reported once. */
	unreadable?: Unreadable[];
}

/** A listed item with its id and `created_at` in epoch ms (undefined when the list item has none). */
interface Listed {
	id: string;
	item: IDataObject;
	ms?: number;
}

/**
 * One poll of a `/v0` event (§trigger 7–12); without a state, an activation (§trigger 10; `since`:
 * Include Existing Since, epoch ms).
 *
 * @returns what fires (parsings read by id, oldest first), the state to save, and `error` (with
 *   nothing firing) for items behind the window (§trigger 11) or a window not read whole (12)
 * @throws NodeApiError for a failed list request (the state is then kept: nothing is lost)
 */
export async function pollWindow(
	env: PollEnv,
	state: WindowState | undefined,
	since: number | undefined,
	fingerprint: string,
): Promise<PollOutcome<WindowState>> {
	const { spec } = env;
	const list = new EventList(env, state?.fails);
	// At activation what exists is handled without firing (with Include Existing Since: before it).
	const existing = (ms: number | undefined) =>
		!state && (since === undefined || (ms !== undefined && ms < since));
	const work = state
		? {
				from: Date.parse(state.from),
				seen: byHash(unpackMarks(state.seen)),
				follow: [...state.follow],
			}
		: await activate(env, list, since);
	const behind = await countBehind(list, work.from);
	const read = await readList(list, env, { created_at_after: isoTime(work.from) });
	const fired: IDataObject[] = [];
	const handled = (id: string, ms = work.from) => work.seen.set(hashId(id), markOf(id, ms));
	// 1. Followed jobs, by id (§trigger 9).
	const followed = await list.followed(work.follow);
	work.follow = followed.follow;
	for (const [id, job] of followed.final) {
		if (fires(spec, job.status)) fired.push(job);
		handled(id, timestampMs(job.created_at));
	}

	// 2. The window: what is not handled yet (not seen, not followed), oldest first (§trigger 7–8).
	const following = new Set(work.follow);
	const inWindow = (l: Listed) => l.ms === undefined || l.ms >= work.from;
	const open = read.items
		.filter((l) => !work.seen.has(hashId(l.id)) && !following.has(l.id))
		.filter(inWindow)
		.sort((a, b) => (a.ms ?? Infinity) - (b.ms ?? Infinity));
	const needsRead = (l: Listed) =>
		l.ms === undefined ||
		(!!spec.kind &&
			(typeof l.item.status !== 'string' ||
				(!existing(l.ms) && isFinal(spec, l.item.status) && fires(spec, l.item.status))));
	const unhandled: Listed[] = [];
	let reads = 0;
	for (let i = 0; i < open.length;) {
		if (reads >= MAX_FIRING_PER_POLL || (i > 0 && outOfTime(env))) {
			for (const l of open.slice(i)) unhandled.push(l);
			break;
		}
		const batch = open.slice(i, i + PAGE_SIZE);
		i += batch.length;
		const ids = batch.filter(needsRead).map((l) => l.id);
		reads += ids.length;
		const got = await list.jobs(ids);
		for (const l of batch) {
			let { item, ms } = l;
			if (ids.includes(l.id)) {
				if (list.failed.has(l.id)) {
					// Given up (`MAX_READ_FAILURES`): handled, not met as new again.
					if (list.countFailure(l.id)) handled(l.id, ms);
					else unhandled.push(l);
					continue;
				}
				const full = got.get(l.id);
				if (!full) continue; // deleted since it was listed
				item = full;
				ms = timestampMs(full.created_at) ?? ms;
				if (ms !== undefined && !inWindow({ ...l, ms })) continue;
			}
			delete list.fails[l.id];
			if (spec.kind && !isFinal(spec, item.status)) {
				unhandled.push({ id: l.id, item, ms });
				continue;
			}
			if (!existing(ms) && fires(spec, item.status)) fired.push(item);
			handled(l.id, ms);
		}
	}

	const followedBefore = work.follow.length;
	// 3. Move the window on (§trigger 9).
	let from = work.from;
	if (read.complete) {
		const keys = [...work.seen.values()].map((mark) => mark.key).sort((a, b) => b - a);
		// A loop, not Math.max(...): a read of 1,000 pages holds more values than a call takes.
		let newest = Math.max(work.from, keys[0] ?? -Infinity);
		for (const l of read.items) newest = Math.max(newest, l.ms ?? -Infinity);
		const target = Math.max(newest - MARGIN_MS, keys.length > MAX_SEEN ? keys[MAX_SEEN - 1] : 0);
		let bound = Infinity;
		for (const l of unhandled) {
			const unfinished = !!spec.kind && l.ms !== undefined && !isFinal(spec, l.item.status);
			if (unfinished && (l.ms as number) < Math.max(target, work.from)) work.follow.push(l.id);
			else bound = Math.min(bound, l.ms ?? work.from);
		}
		from = Math.max(work.from, Math.min(target, bound));
	}
	const seen = [...work.seen.values()].filter((mark) => mark.key >= from);
	// 4. Items dated behind the window that were not there at the last poll (§trigger 11).
	const filtered = read.items.every((l) => l.ms !== undefined && l.ms >= work.from);
	const crossed = work.seen.size - seen.length + work.follow.length - followedBefore;
	const appeared =
		behind !== undefined && state?.older !== undefined && filtered ? behind - state.older : 0;
	// Reported by a poll with nothing to fire (§trigger 2); until then counted as new.
	const older = appeared > 0 && fired.length > 0 ? (state?.older ?? 0) : behind;
	const next: WindowState = {
		v: STATE_VERSION,
		strategy: 'window',
		fingerprint,
		from: isoTime(from),
		seen: packMarks(seen),
		follow: work.follow,
		...(Object.keys(list.fails).length > 0 ? { fails: list.fails } : {}),
		...(older !== undefined && filtered ? { older: older + crossed } : {}),
	};
	return {
		resources: byCreation(fired),
		state: next,
		unreadable: list.dropped,
		...(appeared > 0 && fired.length === 0
			? { error: behindError(env, appeared, work.from) }
			: read.complete || fired.length > 0
				? {}
				: { error: incompleteError(env, work.from) }),
	};
}

/** The state an activation starts from (§trigger 10): `from` in epoch ms, the parsings to follow. */
async function activate(env: PollEnv, list: EventList, since: number | undefined) {
	let from = Math.min(since ?? Infinity, Date.now() - MARGIN_MS);
	if (since === undefined) {
		const fits = async (bound: number) =>
			((await list.page({ created_at_after: isoTime(bound) }, 1, 1)).count ?? 0) <= MAX_SEEN;
		// Too many: bisection (about 20 counts) between `from` and now, which fits, to 1 ms.
		if (!(await fits(from))) {
			let fit = Date.now();
			while (fit - from > 1) {
				const mid = Math.floor((fit + from) / 2);
				if (await fits(mid)) fit = mid;
				else from = mid;
			}
			from = fit;
		}
	}
	const follow: string[] = [];
	for (const status of env.spec.pendingStatuses ?? []) {
		const read = await readList(list, env, { status, created_at_before: isoTime(from) });
		for (const l of read.items)
			if (!isFinal(env.spec, l.item.status) && (l.ms === undefined || l.ms < from))
				follow.push(l.id);
	}
	return { from, seen: byHash(), follow: [...new Set(follow)] };
}

/**
 * Every item of a query, each id once (pages from 1 until `next` is null or a page is empty).
 *
 * @returns the items, and whether the read was whole (not: `MAX_WINDOW_PAGES`, the poll's time
 *   share, or a page with no new id while `next` said there was more)
 */
async function readList(
	list: EventList,
	env: PollEnv,
	qs: IDataObject,
): Promise<{ items: Listed[]; complete: boolean }> {
	const byId = new Map<string, Listed>();
	for (let n = 1; n <= MAX_WINDOW_PAGES && (n === 1 || !outOfTime(env)); n++) {
		const page = await list.pageOrEmpty(qs, n);
		let added = 0;
		for (const item of page.results) {
			const id = idOf(item);
			if (id === undefined || byId.has(id)) continue;
			byId.set(id, { id, item, ms: timestampMs(item.created_at) });
			added++;
		}
		if (!page.next || page.results.length === 0)
			return { items: [...byId.values()], complete: true };
		if (added === 0) break;
	}
	return { items: [...byId.values()], complete: false };
}

/**
 * How many items the list holds created before `from` (epoch ms), by the `count` of a one-item
 * page (§trigger 11); undefined when that page shows the filter is not applied, or no honest count.
 */
async function countBehind(list: EventList, from: number): Promise<number | undefined> {
	const page = await list.page({ created_at_before: isoTime(from - 1).replace('Z', '999Z') }, 1, 1);
	const item = page.results[0];
	if (!item) return page.count === 0 ? 0 : undefined; // a count above 0 on an empty page lies
	const ms = timestampMs(item.created_at);
	return ms === undefined || ms >= from ? undefined : page.count;
}

/** The error of a poll that found items dated behind the window which the last poll did not (§trigger 11). */
function behindError(env: PollEnv, appeared: number, from: number): NodeOperationError {
	const { resourceName } = env.spec;
	const what = appeared === 1 ? resourceName : `${appeared} ${resourceName.toLowerCase()}s`;
	return new NodeOperationError(
		env.node,
		`${what} appeared dated before the trigger's window (${isoTime(from)})`,
		{
			description: `The service listed ${appeared === 1 ? 'it' : 'them'} more than 10 minutes after ${appeared === 1 ? 'its' : 'their'} created_at (a service clock that went back?): ${appeared === 1 ? 'it does' : 'they do'} not fire. Find ${appeared === 1 ? 'it' : 'them'} with Get Many, Created Before ${isoTime(from)}. Reported once; later ones fire as usual.`,
		},
	);
}

/** The error of a poll that could not read its window whole and had nothing to fire (§trigger 12). */
function incompleteError(env: PollEnv, from: number): NodeOperationError {
	const what = `${env.spec.resourceName.toLowerCase()}s`;
	return new NodeOperationError(
		env.node,
		`The trigger could not read every ${env.spec.resourceName.toLowerCase()} created since ${isoTime(from)} in one poll`,
		{
			description: `The list held more than ${MAX_WINDOW_PAGES} pages from there (or repeated a page): the ${what} it read fired, the others wait. This happens when the service ignores the created_at_after filter on a long list, or lists far more ${what} than a poll can read; each poll tries again.`,
		},
	);
}
