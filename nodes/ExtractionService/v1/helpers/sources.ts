import type { IDataObject, IExecuteFunctions, INode } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { inputFiles } from './input-files';
import { multipartBody } from './multipart';
import type { JobRequest } from './create';
import { jobKeys, withKey, type ReuseKey } from './reuse';
import type { FileSelection } from './settings';
import {
	parseJsonObject,
	parseUrlList,
	requireHttpUrl,
	requireUuid,
} from '../../../shared/validation';

/**
 * The parsing options of an item's Options collection, as the service names them
 * (`§v0-4.5`; for extracts `§v0-4.8` applies them to the parsing made from `document`).
 * Unset options are undefined (not sent); empty metadata is not sent.
 *
 * @param options the item's Options collection
 * @throws NodeOperationError when Metadata is not a JSON object
 */
export function parsingOptions(node: INode, itemIndex: number, options: IDataObject): IDataObject {
	const metadata = parseJsonObject(node, itemIndex, 'Metadata', options.metadata);
	return {
		model: options.model,
		picture_description_enabled: options.pictureDescriptionEnabled,
		table_verification_enabled: options.tableVerificationEnabled,
		metadata: withKey(metadata, undefined),
	};
}

/**
 * The create requests for the document an item's Source points at, in the `document` field
 * (`§v0-4.5` parsings, `§v0-4.8` extracts): one multipart request per file for "Binary File";
 * one JSON request with the document ID, the URL, or the list of URLs (parsings only) otherwise.
 *
 * @param fields the other body fields (options, `schema`)
 * @param files the item's file selection (for "Binary File")
 * @param reuse Reuse Existing Job's key (not with a list of URLs, which makes several jobs at once)
 * @throws NodeOperationError naming the parameter for an invalid ID, URL, list or file, before any request
 */
export async function documentSourceRequests(
	ctx: IExecuteFunctions,
	itemIndex: number,
	source: string,
	fields: IDataObject,
	files: FileSelection,
	reuse?: ReuseKey,
): Promise<JobRequest[]> {
	const node = ctx.getNode();
	/** The body fields of one job, its metadata carrying the job's key when Reuse Existing Job is on. */
	const keyed = (key: ReuseKey | undefined) => ({
		fields: { ...fields, metadata: withKey(fields.metadata as IDataObject | undefined, key) },
		reuse: key,
	});
	/** The one JSON request of a document given by ID or URL: the item's key as it is. */
	const byReference = (document: string): JobRequest[] => {
		const job = keyed(reuse);
		return [{ body: { ...job.fields, document }, reuse: job.reuse }];
	};
	switch (source) {
		case 'binary': {
			const list = await inputFiles(ctx, itemIndex, files);
			const keys = reuse
				? jobKeys(
						reuse,
						list.map((file) => file.fileName),
					)
				: [];
			return list.map((file, index) => {
				const job = keyed(keys[index]);
				return {
					body: multipartBody(job.fields, [{ field: 'document', file }]),
					file,
					reuse: job.reuse,
				};
			});
		}
		case 'documentId':
			return byReference(
				requireUuid(
					node,
					itemIndex,
					'Document ID',
					ctx.getNodeParameter('documentId', itemIndex, '', { extractValue: true }),
				),
			);
		case 'url':
			return byReference(
				requireHttpUrl(node, itemIndex, 'URL', ctx.getNodeParameter('url', itemIndex)),
			);
		case 'urlList':
			return [
				{
					body: {
						...fields,
						document: parseUrlList(
							node,
							itemIndex,
							'URLs',
							ctx.getNodeParameter('urls', itemIndex),
						),
					},
				},
			];
		default:
			throw new NodeOperationError(node, `Parameter "Source" has an unknown value "${source}"`, {
				itemIndex,
			});
	}
}
