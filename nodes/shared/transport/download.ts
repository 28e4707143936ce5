/**
 * Downloads (`docs/service-api.md` §v0-4.4, §node, Downloads): a GET of a binary resource whose
 * redirects (302 to the file's URL) the node follows itself.
 */
import { NodeApiError } from 'n8n-workflow';

import { originOf } from '../../../credentials/shared';
import { MAX_DOWNLOAD_BYTES } from './body';
import type { DownloadBody, Requester, ServiceRequest, ServiceResponse } from './types';

/** Most redirects a download follows. */
const MAX_REDIRECTS = 5;

/**
 * GET of a binary resource; follows up to `MAX_REDIRECTS` redirects. Each hop goes through the
 * client (`httpRequestWithAuthentication`), whose credential adds the secret only for the Base
 * URL's origin: a pre-signed URL on another host never sees the key.
 *
 * @returns the final answer, its body the file's stream (`DownloadBody`, not read yet), and `url`
 *   the address that served it
 * @throws NodeApiError for 4xx/5xx (a storage's 401/403: the link was refused or expired), a
 *   redirect without Location or to a non-http(s) address, more than `MAX_REDIRECTS` redirects, or a
 *   `Content-Length` beyond `MAX_DOWNLOAD_BYTES`
 */
export async function download(
	client: Requester,
	req: ServiceRequest,
): Promise<ServiceResponse<DownloadBody>> {
	let current: ServiceRequest = { ...req, method: 'GET', expect: 'binary' };
	const baseOrigin = originOf(await client.baseUrl(req.family, req.itemIndex));
	const fail = (status: number | undefined, message: string, description?: string) =>
		new NodeApiError(client.node, status === undefined ? {} : { status }, {
			message,
			description,
			itemIndex: req.itemIndex,
		});
	for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
		const storage = hop > 0 ? originOf(current.path) : undefined;
		const response = await client.send<DownloadBody>(current).catch((error: unknown) => {
			// The storage a download was redirected to refused it: an expired or refused link, not
			// the service's credits or key (its answer never names the link's path or signature).
			const code = error instanceof NodeApiError ? error.httpCode : undefined;
			if (storage === undefined || storage === baseOrigin || (code !== '401' && code !== '403'))
				throw error;
			throw new NodeApiError(
				client.node,
				{ status: Number(code) },
				{
					message: `The download link was refused or has expired (HTTP ${code} from ${storage})`,
					description:
						'The service sent the download on to its file storage, which refused the link (pre-signed links expire after a while). Read the resource again with Get for a fresh link, then download it again.',
					httpCode: code,
					itemIndex: req.itemIndex,
				},
			);
		});
		if (response.statusCode < 300) {
			const length = Number(response.headers['content-length']);
			if (length > MAX_DOWNLOAD_BYTES) {
				(response.body as { destroy?: () => void }).destroy?.();
				throw fail(
					response.statusCode,
					`The file to download is ${length} bytes, more than the node stores (${MAX_DOWNLOAD_BYTES / 1024 ** 3} GiB)`,
					'Nothing was read. Download it outside n8n, or ask the service for a smaller format.',
				);
			}
			return response;
		}
		if (response.statusCode >= 400) return response;
		const location = response.headers.location;
		if (!location)
			throw fail(
				response.statusCode,
				`The service answered HTTP ${response.statusCode} without a Location to download from`,
			);
		const next = new URL(location, response.url);
		if (next.protocol !== 'http:' && next.protocol !== 'https:')
			throw fail(
				response.statusCode,
				`The service redirected the download to a ${next.protocol.replace(':', '')} address, which the node does not follow`,
				'Only http(s) redirects are followed.',
			);
		current = { ...current, path: next.toString(), qs: undefined };
	}
	throw fail(undefined, 'Too many redirects while downloading');
}
