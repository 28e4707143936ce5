import type { IDataObject, INode } from 'n8n-workflow';
import { NodeApiError } from 'n8n-workflow';

import { fetchJob } from '../../shared/resource';
import {
	asNodeError,
	isNotFound,
	servicePath,
	type ExtractionServiceClient,
	type ListPage,
} from '../../shared/transport';
import { isFinal, type EventSpec } from './events';
import type { Unreadable } from './state';

/** Items asked for per list page (the service may send fewer or more, `§v0-8`, `§unversioned-8`). */
export const PAGE_SIZE = 100;

/** Most jobs a poll reads by id to fire (§trigger 4): the rest wait, oldest first, for the next poll. */
export const MAX_FIRING_PER_POLL = 1000;

/** Share of n8n's poll budget after which a poll starts no further page or batch of reads (§trigger 12). */
export const SOFT_BUDGET_SHARE = 0.5;

/** What one poll works with: its node, client, event, filters and deadline. */
export interface PollEnv {
	node: INode;
	client: ExtractionServiceClient;
	spec: EventSpec;
	/** The user's list filters, as query parameters (`§v0-4.2`, `§v0-4.6`, `§unversioned-4.1`). */
	filters: IDataObject;
	/** Epoch ms by which every request of the poll has ended (no retry starts after it; an attempt is cut). */
	deadline: number;
	/** Epoch ms after which the poll starts no further page or batch (`SOFT_BUDGET_SHARE`). */
	softDeadline: number;
}

/** Whether the poll has used its time share (`PollEnv.softDeadline`). */
export function outOfTime(env: PollEnv): boolean {
	return Date.now() >= env.softDeadline;
}

/** An item's id as a string, or undefined when it has none (such an item cannot fire). */
export function idOf(item: IDataObject): string | undefined {
	const id = item.id;
	if (typeof id === 'string' && id.trim()) return id.trim();
	if (typeof id === 'number' && Number.isFinite(id)) return String(id);
	return undefined;
}

/**
 * A service timestamp (`§v0-1 rule 2`, `§unversioned-1 rule 3`: ISO 8601, six fractional digits) in
 * epoch ms, rounded down; without a zone, UTC. Undefined for anything that is not such a timestamp.
 */
export function timestampMs(value: unknown): number | undefined {
	if (typeof value !== 'string') return undefined;
	const match =
		/^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?\s*(Z|[+-]\d{2}:?\d{2})?$/i.exec(
			value.trim(),
		);
	if (!match) return undefined;
	const [, date, time, fraction = '', zone = 'Z'] = match;
	const ms = Date.parse(
		`${date}T${time}${fraction ? `.${fraction.slice(0, 3).padEnd(3, '0')}` : ''}${zone.toUpperCase()}`,
	);
	return Number.isNaN(ms) ? undefined : ms;
}

/** Epoch ms as the ISO 8601 UTC text the `created_at_*` filters take (`§v0-4.2`). */
export function isoTime(ms: number): string {
	return new Date(ms).toISOString();
}

/** Resources oldest first by `created_at`, then by id (the order a poll outputs them in). */
export function byCreation(resources: IDataObject[]): IDataObject[] {
	const key = (r: IDataObject) => timestampMs(r.created_at) ?? Infinity;
	return [...resources].sort((a, b) => key(a) - key(b) || String(a.id).localeCompare(String(b.id)));
}

/**
 * The list of an event: pages and reads by id, each with the event's filters and the poll's
 * deadline, through the node's client (retries, checked answers, redaction; `§node`).
 */
export class EventList {
	/** Polls in a row each job's read by id failed (the state's `fails`; `countFailure`). */
	readonly fails: Record<string, number>;

	/** Jobs given up in this poll (`countFailure`): reported once. */
	readonly dropped: Unreadable[] = [];

	constructor(
		readonly env: PollEnv,
		fails: Record<string, number> = {},
	) {
		this.fails = { ...fails };
	}

	/** Counts this poll's failed read of `id`: true when the job is given up (`MAX_READ_FAILURES`, `dropped`). */
	countFailure(id: string): boolean {
		const n = (this.fails[id] ?? 0) + 1;
		if (n < MAX_READ_FAILURES) this.fails[id] = n;
		else {
			delete this.fails[id];
			this.dropped.push({ id, error: this.failed.get(id) ?? 'the read failed' });
		}
		return n >= MAX_READ_FAILURES;
	}

	/**
	 * One page of the list (`§v0-2.5`, `§unversioned-2.4`).
	 *
	 * @param qs query parameters besides the filters, `page` and `size`
	 * @param page page number, from 1
	 * @throws NodeApiError for service errors and answers that are not a page
	 */
	async page(qs: IDataObject, page: number, size = PAGE_SIZE): Promise<ListPage> {
		const { client, spec, filters, deadline } = this.env;
		return await client.page(
			{
				family: spec.family,
				method: 'GET',
				path: servicePath(spec.family, spec.segment),
				qs: { ...filters, ...qs },
				itemIndex: 0,
				resourceName: `${spec.resourceName}s`,
				deadline,
			},
			page,
			size,
		);
	}

	/** Like `page`, but a 404 for a page after the first (past the end) reads as an empty last page. */
	async pageOrEmpty(qs: IDataObject, page: number, size = PAGE_SIZE): Promise<ListPage> {
		try {
			return await this.page(qs, page, size);
		} catch (error) {
			if (page > 1 && isNotFound(error)) return { results: [], next: null };
			throw asNodeError(this.env.node, error);
		}
	}

	/**
	 * Reads a job (`§v0-4.7`, `§unversioned-4.3`, checked to be that job with a status) or a document
	 * (`§v0-4.3`, checked to be that document) by id.
	 *
	 * @returns undefined when the service answers 404 (deleted since it was listed)
	 * @throws NodeApiError for any other failure
	 */
	async job(id: string): Promise<IDataObject | undefined> {
		const { client, node, spec, deadline } = this.env;
		try {
			return await fetchJob(client, node, spec, id, 0, deadline, spec.kind !== undefined);
		} catch (error) {
			if (isNotFound(error)) return undefined;
			throw asNodeError(node, error);
		}
	}

	/**
	 * Reads followed jobs by id (§trigger 9, 17): a 404 is a deleted job; a failed read is counted
	 * (`countFailure`) and the job stays followed until it is given up.
	 *
	 * @returns the ids still followed, and the jobs now final by id
	 * @throws as `jobs`
	 */
	async followed(ids: string[]): Promise<{ follow: string[]; final: Map<string, IDataObject> }> {
		const read = await this.jobs(ids);
		const follow: string[] = [];
		const final = new Map<string, IDataObject>();
		for (const id of ids) {
			const job = read.get(id);
			if (this.failed.has(id) ? !this.countFailure(id) : job && !isFinal(this.env.spec, job.status))
				follow.push(id);
			else if (job) final.set(id, job);
		}
		return { follow, final };
	}

	/** This poll's reads by id that failed with an error of the job's own (`isPollWide`): the message by id. */
	readonly failed = new Map<string, string>();

	/**
	 * Reads jobs by id, all at once (the client bounds the requests in flight), each settled on its
	 * own (§trigger 1); one that failed in this poll is not read again, one read clears its `fails`.
	 *
	 * @returns the jobs by id, undefined for a 404; a read that failed on its own is absent (`failed`)
	 * @throws NodeApiError / NodeOperationError when a read failed with a poll-wide error (`isPollWide`)
	 */
	async jobs(ids: string[]): Promise<Map<string, IDataObject | undefined>> {
		ids = ids.filter((id) => !this.failed.has(id));
		const settled = await Promise.allSettled(ids.map(async (id) => await this.job(id)));
		const read = new Map<string, IDataObject | undefined>();
		settled.forEach((outcome, index) => {
			if (outcome.status !== 'fulfilled') return;
			read.set(ids[index], outcome.value);
			delete this.fails[ids[index]];
		});
		for (const [index, outcome] of settled.entries()) {
			if (outcome.status === 'fulfilled') continue;
			if (isPollWide(this.env, outcome.reason)) throw asNodeError(this.env.node, outcome.reason);
			this.failed.set(ids[index], failureText(outcome.reason));
		}
		return read;
	}
}

/** Polls in a row a job's read by id may fail before it is given up and reported (§trigger 1). */
export const MAX_READ_FAILURES = 3;

/** Whether a failed read by id is about the poll, not the job (401, 403, 429, the deadline): it fails the poll. */
function isPollWide(env: PollEnv, error: unknown): boolean {
	if (Date.now() >= env.deadline) return true;
	return error instanceof NodeApiError && ['401', '403', '429'].includes(String(error.httpCode));
}

/** An error's message (with its HTTP code when the message lacks it), at most 300 characters. */
function failureText(error: unknown): string {
	const message = error instanceof Error ? error.message : String(error);
	const code = error instanceof NodeApiError ? error.httpCode : undefined;
	const text = code && !message.includes(code) ? `HTTP ${code}: ${message}` : message;
	return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}
