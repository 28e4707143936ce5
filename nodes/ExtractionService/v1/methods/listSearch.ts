import type { IDataObject, ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { ExtractionServiceClient, servicePath, type ApiFamily } from '../transport';

/** Items per page of a "From List" search. */
const PAGE_SIZE = 100;

/**
 * One page of a list for a resource locator's "From List" mode: `paginationToken` is the next page
 * number while the service announces a next page.
 *
 * @param search sent as the list's `search` filter when the list has one (server side); otherwise
 *   the page is filtered by name here
 * @param toResult the name and description a user sees for one list item
 */
async function searchList(
	ctx: ILoadOptionsFunctions,
	list: { family: ApiFamily; segment: string; resourceName: string; serverSearch: boolean },
	filter: string | undefined,
	paginationToken: string | undefined,
	toResult: (item: IDataObject) => { name: string; description?: string },
): Promise<INodeListSearchResult> {
	const client = new ExtractionServiceClient(ctx);
	const page = Number(paginationToken ?? 1) || 1;
	const needle = (filter ?? '').trim();
	const qs = list.serverSearch && needle ? { search: needle } : undefined;
	const answer = await client.page(
		{
			family: list.family,
			method: 'GET',
			path: servicePath(list.family, list.segment),
			qs,
			itemIndex: 0,
			resourceName: list.resourceName,
		},
		page,
		PAGE_SIZE,
	);
	const results = answer.results
		.map((item) => ({ ...toResult(item), value: String(item.id) }))
		.filter(
			(result) =>
				list.serverSearch || !needle || result.name.toLowerCase().includes(needle.toLowerCase()),
		);
	return { results, paginationToken: answer.next ? String(page + 1) : undefined };
}

/** Schemas (`GET /schema/`, `§unversioned-4.5`; the list has no search, so names are filtered here). */
export async function searchSchemas(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	return await searchList(
		this,
		{ family: 'unversioned', segment: 'schema', resourceName: 'Schemas', serverSearch: false },
		filter,
		paginationToken,
		(schema) => ({
			name: String(schema.name ?? schema.id),
			description: String(schema.description ?? ''),
		}),
	);
}

/** Documents (`GET /v0/documents?search=`, `§v0-4.2`: file names and metadata values), newest first. */
export async function searchDocuments(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	return await searchList(
		this,
		{ family: 'v0', segment: 'documents', resourceName: 'Documents', serverSearch: true },
		filter,
		paginationToken,
		(document) => ({
			name: String(document.filename ?? document.id),
			description: `${String(document.page_count ?? '?')} page(s), uploaded ${String(document.created_at ?? '')}`,
		}),
	);
}

/**
 * Parsings (`GET /v0/parsing?search=`, `§v0-4.6`). The list items' fields beyond `id` and `status`
 * are not shown: the document's file name is used when the service sends it.
 */
export async function searchParsings(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	return await searchList(
		this,
		{ family: 'v0', segment: 'parsing', resourceName: 'Parsings', serverSearch: true },
		filter,
		paginationToken,
		(parsing) => {
			const document = (parsing.document ?? {}) as IDataObject;
			return {
				name: `${String(document.filename ?? parsing.id)} (${String(parsing.status ?? '?')})`,
				description: String(parsing.created_at ?? ''),
			};
		},
	);
}

/** Extractions (`GET /extract/?search=`, `§unversioned-4.1`: document and schema names). */
export async function searchExtractions(
	this: ILoadOptionsFunctions,
	filter?: string,
	paginationToken?: string,
): Promise<INodeListSearchResult> {
	return await searchList(
		this,
		{ family: 'unversioned', segment: 'extract', resourceName: 'Extractions', serverSearch: true },
		filter,
		paginationToken,
		(extraction) => ({
			name: `${String(extraction.document_name ?? extraction.id)} (${String(extraction.status ?? '?')})`,
			description: String(extraction.id),
		}),
	);
}
