import type { ILoadOptionsFunctions, INodeListSearchResult } from 'n8n-workflow';

import { ExtractionServiceClient, servicePath } from '../transport';

/**
 * Schemas for the "From List" mode of the Schema resource locator: one page of `GET /schema/`
 * (`unversioned-api.md §4.5`) per call, filtered by name on the client (the list has no search
 * parameter); `paginationToken` is the next page number while `next` is set.
 */
export async function searchSchemas(this: ILoadOptionsFunctions, filter?: string, paginationToken?: string): Promise<INodeListSearchResult> {
	const client = new ExtractionServiceClient(this);
	const page = Number(paginationToken ?? 1) || 1;
	const answer = await client.page({ family: 'unversioned', method: 'GET', path: servicePath('unversioned', 'schema'), itemIndex: 0, resourceName: 'Schemas' }, page, 100);
	const needle = (filter ?? '').trim().toLowerCase();
	const schemas = answer.results;
	return {
		results: schemas
			.filter((s) => !needle || String(s.name ?? '').toLowerCase().includes(needle))
			.map((s) => ({ name: String(s.name ?? s.id), value: String(s.id), description: String(s.description ?? '') })),
		paginationToken: answer.next ? String(page + 1) : undefined,
	};
}
