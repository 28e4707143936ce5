import type { IDataObject, ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { ExtractionServiceClient, servicePath, type ApiFamily } from '../../../shared/transport';

/** Items per page of a "From List" search. */
const PAGE_SIZE = 100;

/** A list a "From List" mode searches, and how one of its items reads in the list. */
interface SearchedList {
	family: ApiFamily;
	segment: string;
	resourceName: string;
	/** Whether the list takes a `search` filter (server side); otherwise names are filtered here. */
	serverSearch: boolean;
	/** The name and description a user sees for one list item. */
	toResult: (item: IDataObject) => { name: string; description?: string };
}

/**
 * The `listSearch` method of a resource locator's "From List" mode: one page of the list per call,
 * `paginationToken` being the next page number while the service announces a next page.
 */
function listSearch(list: SearchedList) {
	return async function (
		this: ILoadOptionsFunctions,
		filter?: string,
		paginationToken?: string,
	): Promise<INodeListSearchResult> {
		const client = new ExtractionServiceClient(this);
		const page = Number(paginationToken ?? 1) || 1;
		const needle = (filter ?? '').trim();
		const answer = await client.page(
			{
				family: list.family,
				method: 'GET',
				path: servicePath(list.family, list.segment),
				qs: list.serverSearch && needle ? { search: needle } : undefined,
				itemIndex: 0,
				resourceName: list.resourceName,
			},
			page,
			PAGE_SIZE,
		);
		const results = answer.results
			.map((item) => ({ ...list.toResult(item), value: String(item.id) }))
			.filter(
				(result) =>
					list.serverSearch || !needle || result.name.toLowerCase().includes(needle.toLowerCase()),
			);
		return { results, paginationToken: answer.next ? String(page + 1) : undefined };
	};
}

/** Schemas (`GET /schema/`, `§unversioned-4.5`; the list has no search, so names are filtered here). */
export const searchSchemas = listSearch({
	family: 'unversioned',
	segment: 'schema',
	resourceName: 'Schemas',
	serverSearch: false,
	toResult: (schema) => ({
		name: String(schema.name ?? schema.id),
		description: String(schema.description ?? ''),
	}),
});

/** Documents (`GET /v0/documents?search=`, `§v0-4.2`: file names and metadata values), newest first. */
export const searchDocuments = listSearch({
	family: 'v0',
	segment: 'documents',
	resourceName: 'Documents',
	serverSearch: true,
	toResult: (document) => ({
		name: String(document.filename ?? document.id),
		description: `${String(document.page_count ?? '?')} page(s), uploaded ${String(document.created_at ?? '')}`,
	}),
});

/**
 * Parsings (`GET /v0/parsing?search=`, `§v0-4.6`). The list items' fields beyond `id` and `status`
 * are not shown: the document's file name is used when the service sends it.
 */
export const searchParsings = listSearch({
	family: 'v0',
	segment: 'parsing',
	resourceName: 'Parsings',
	serverSearch: true,
	toResult: (parsing) => ({
		name: `${String((parsing.document as IDataObject | undefined)?.filename ?? parsing.id)} (${String(parsing.status ?? '?')})`,
		description: String(parsing.created_at ?? ''),
	}),
});

/** Extractions (`GET /extract/?search=`, `§unversioned-4.1`: document and schema names). */
export const searchExtractions = listSearch({
	family: 'unversioned',
	segment: 'extract',
	resourceName: 'Extractions',
	serverSearch: true,
	toResult: (extraction) => ({
		name: `${String(extraction.document_name ?? extraction.id)} (${String(extraction.status ?? '?')})`,
		description: String(extraction.id),
	}),
});
