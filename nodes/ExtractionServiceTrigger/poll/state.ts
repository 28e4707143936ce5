import type { IDataObject } from 'n8n-workflow';
import { z } from 'zod';

import { unpackMarks } from './marks';

/**
 * What the trigger keeps between polls in the node's static data (`docs/service-api.md` §trigger
 * points 1, 5, 13): a few KB of marks (`marks.ts`). The shapes are zod schemas, read by `loadState`.
 */

/** Most jobs to report a state names (`unread`): it stays small whatever fails. */
export const MAX_UNREAD_KEPT = 20;

/** Version of the state: bumped when its shape changes; a state of another version starts afresh. */
export const STATE_VERSION = 3;

const count = z.number().int().nonnegative();
/** A job given up (`MAX_READ_FAILURES`): its id and last failure (the client's message, redacted, ≤ 300 characters). */
const unreadable = z.object({ id: z.string(), error: z.string() });
/** Marks packed by `packMarks` (`marks.ts`). */
const marks = z.string().refine((text) => unpackMarks(text) !== undefined);

/** What every state holds; a damaged optional field reads as absent. */
const common = {
	v: z.literal(STATE_VERSION),
	fingerprint: z.string(),
	/** Ids of unfinished jobs behind the window or the head: read by id at every poll. */
	follow: z.array(z.string()),
	/** Polls in a row a job's read by id failed, by id (`MAX_READ_FAILURES`). */
	fails: z.record(count).optional().catch(undefined),
	/** Jobs given up (`MAX_READ_FAILURES`), with their last failure: reported once by a quiet poll (§trigger 1–2). */
	unread: z.array(unreadable).max(MAX_UNREAD_KEPT).optional().catch(undefined),
	/** How many more were dropped beyond `unread` (named by count only). */
	unreadMore: count.optional().catch(undefined),
};

/** State of a `window` event (`window.ts`): the `/v0` lists, read by creation time (§trigger). */
const windowState = z.object({
	...common,
	strategy: z.literal('window'),
	/** The window's start, in the service's own time (ISO 8601): each poll reads the items created at or after it. */
	from: z.string().refine((text) => !Number.isNaN(Date.parse(text))),
	/** Marks (key: `created_at` in epoch ms) of the items handled in the window. */
	seen: marks,
	/** How many items the list held created before `from`, as the last poll left it (absent: not known). */
	older: count.optional().catch(undefined),
});

/** State of a `scan` event (`scan.ts`): marks keyed by when the trigger first met the extraction (epoch ms). */
const scanState = z.object({
	...common,
	strategy: z.literal('scan'),
	/** The newest `created_at` the trigger read (epoch ms, §trigger 15). */
	edge: z.number(),
	/** Marks of the extractions handled lately (the last 10 minutes, at most `MAX_HEAD` an end). */
	head: marks,
	/** Marks of the extractions of the head still unfinished. */
	pending: marks,
	/** Marks of the extractions just behind the head at each end of the list: where a poll stops reading. */
	old: marks,
});

const triggerState = z.discriminatedUnion('strategy', [windowState, scanState]);

export type WindowState = z.infer<typeof windowState>;
export type ScanState = z.infer<typeof scanState>;
export type TriggerState = z.infer<typeof triggerState>;
export type Unreadable = z.infer<typeof unreadable>;
/** The jobs to report a state holds. */
export type UnreadReport = Pick<TriggerState, 'unread' | 'unreadMore'>;

/**
 * Reads the state from the node's static data when this version wrote it for the same
 * configuration (§trigger 13); anything else reads as undefined: the poll then starts afresh.
 *
 * @returns a copy (zod's), safe to change before `saveState`
 */
export function loadState(data: IDataObject, fingerprint: string): TriggerState | undefined {
	if (!sameButFilters(data.fingerprint, fingerprint)) return undefined;
	const parsed = triggerState.safeParse(data);
	if (!parsed.success) return undefined;
	// `older` was counted with the filters of the state: a filter edit counts afresh.
	const state = { ...parsed.data, fingerprint };
	if (state.strategy === 'window' && data.fingerprint !== fingerprint) delete state.older;
	return state;
}

/**
 * Writes the state into the node's static data, key by key and only where it changed (n8n saves
 * the workflow when its static data changed), and removes every other key (of another strategy
 * or an earlier version).
 */
export function saveState(data: IDataObject, state: TriggerState): void {
	const values = state as unknown as IDataObject;
	for (const key of Object.keys(data)) if (values[key] === undefined) delete data[key];
	for (const [key, next] of Object.entries(values))
		if (next !== undefined && JSON.stringify(data[key]) !== JSON.stringify(next))
			data[key] = next as IDataObject[keyof IDataObject];
}

/** Whether a saved fingerprint is for the same event, Include Existing Since and Base URL, whatever its filters (§trigger 13, 19). */
function sameButFilters(saved: unknown, fingerprint: string): boolean {
	if (typeof saved !== 'string') return false;
	try {
		const strip = (text: string) => JSON.stringify({ ...JSON.parse(text), filters: null });
		return strip(saved) === strip(fingerprint);
	} catch {
		return false;
	}
}
