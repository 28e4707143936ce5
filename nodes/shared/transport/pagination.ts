/** Lists: one checked page, or every item of a list, through the client's requests. */
import type { IDataObject } from 'n8n-workflow';

import { UnusableAnswerError, capText, unusableAnswerError } from './answers';
import { idKey } from './ids';
import type { Requester, ServiceRequest } from './types';

/** One page of a list: its items, and what the envelope says of the rest. */
export interface ListPage {
	results: IDataObject[];
	/** URL of the next page, or null/undefined on the last. */
	next?: unknown;
	/** Total number of items, when the service says it. */
	count?: number;
}

/** The most pages `getAll` reads before it stops with an error (at 100 items a page: 100,000 items). */
export const MAX_PAGES = 1000;

/**
 * Reads one page of a list (`§v0-2.5`, `§unversioned-2.4`) and checks it is one:
 * a JSON object with a `results` list of objects.
 *
 * @param page page number, from 1
 * @param size items per page (the service may cap it)
 * @throws NodeApiError (unusable) when the answer is not a page of results
 */
export async function readPage(
	client: Requester,
	req: ServiceRequest,
	page: number,
	size: number,
): Promise<ListPage> {
	const envelope = await client.request<IDataObject>({
		...req,
		qs: { ...(req.qs ?? {}), page, size },
	});
	const results = envelope.results;
	if (
		!Array.isArray(results) ||
		!results.every((r) => !!r && typeof r === 'object' && !Array.isArray(r))
	) {
		throw unusableAnswerError(
			client.node,
			{ status: 200, method: 'GET', itemIndex: req.itemIndex },
			'an object without a "results" list of objects',
			'a page of results',
			capText(JSON.stringify(envelope), 200),
		);
	}
	return {
		results: results as IDataObject[],
		next: envelope.next,
		count: typeof envelope.count === 'number' ? envelope.count : undefined,
	};
}

/** Pages in a row that bring no item not seen before, while `count` says more, before `readAll` gives up. */
const MAX_REPEATED_PAGES = 3;

/**
 * Reads every item of a paginated list (`§v0-2.5`, `§unversioned-2.4`): pages are requested with
 * `page` (from 1) and `size` while the envelope's `next` is set, and paging ends when `count`
 * items were read, or at an empty page. A page that brings no item not seen before (items seen
 * twice are output once; ids match in any letter case, `idKey`) ends the read when the list gives
 * no `count` (a service that ignores `page`); while `count` says more it is passed (a list that grew
 * during the read shifts its items down a page), and `MAX_REPEATED_PAGES` of them in a row fail the
 * read rather than end it short.
 *
 * @param limit maximum number of items when `returnAll` is false
 * @returns the `results` items, in the service's order
 * @throws NodeApiError (unusable) when the list does not end within `MAX_PAGES` pages, repeats its
 *   pages while its count says more, or a page is not one
 */
export async function readAll(
	client: Requester,
	req: ServiceRequest,
	returnAll: boolean,
	limit: number,
): Promise<IDataObject[]> {
	const results: IDataObject[] = [];
	const seen = new Set<string>();
	const size = returnAll ? 100 : Math.min(Math.max(limit, 1), 100);
	let repeated = 0;
	for (let page = 1; page <= MAX_PAGES; page++) {
		const answer = await readPage(client, req, page, size);
		// Ids match in any letter case (`idKey`): a page repeated in upper case is a repeated page.
		const fresh = answer.results.filter((item) => !idKey(item.id) || !seen.has(idKey(item.id)));
		for (const item of fresh) if (idKey(item.id)) seen.add(idKey(item.id));
		results.push(...fresh);
		if (!returnAll && results.length >= limit) return results.slice(0, limit);
		const { count } = answer;
		if (
			!answer.next ||
			answer.results.length === 0 ||
			(count !== undefined && results.length >= count)
		)
			return results;
		repeated = fresh.length === 0 ? repeated + 1 : 0;
		if (repeated > 0 && count === undefined) return results;
		if (repeated >= MAX_REPEATED_PAGES)
			throw new UnusableAnswerError(
				client.node,
				{ pages: page },
				{
					message: `The list repeated its pages while its count says ${count} items: ${results.length} were read`,
					description: `${MAX_REPEATED_PAGES} pages in a row brought only items already read, so the rest could not be reached. The list may be changing fast; run again, or narrow it with Filters.`,
					itemIndex: req.itemIndex,
				},
			);
	}
	throw new UnusableAnswerError(
		client.node,
		{ pages: MAX_PAGES },
		{
			message: `Stopped reading the list after ${MAX_PAGES} pages: the service kept announcing a next page`,
			description: `${results.length} items were read. Turn Return All off and set a Limit, or narrow the list with Filters.`,
			itemIndex: req.itemIndex,
		},
	);
}
