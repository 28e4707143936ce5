import type { ICredentialDataDecryptedObject, IHttpRequestOptions, INodeProperties } from 'n8n-workflow';

/**
 * The Base URL field both credential types share. A trailing slash is tolerated everywhere: the
 * node's transport and the credential test strip it before joining paths.
 */
export const baseUrlProperty: INodeProperties = {
	displayName: 'Base URL',
	name: 'baseUrl',
	type: 'string',
	default: '',
	required: true,
	placeholder: 'https://api.example.com',
	description:
		'Address of the Extraction Service, without any path (for example https://api.example.com). A trailing slash is fine.',
};

/**
 * Origin (`scheme://host:port`) of a URL, or undefined when the URL cannot be parsed.
 *
 * @param url absolute URL
 */
export function originOf(url: string | undefined): string | undefined {
	if (!url) return undefined;
	try {
		return new URL(url).origin;
	} catch {
		return undefined;
	}
}

/**
 * Adds one secret header to a request, but only when the request goes to the origin of the
 * credential's Base URL. A pre-signed download URL on another host (`v0-api.md §4.4`: the 302 of
 * document download) therefore never receives the key or token, whichever code path sends it.
 *
 * @param credentials decrypted credential data with `baseUrl`
 * @param requestOptions the request n8n is about to send (absolute `url`, or `baseURL` + `url`)
 * @param header header name (`X-API-Key` or `Authorization`)
 * @param value the secret
 * @returns the request options, with the header when the origin matches
 */
export function authenticateForOwnOrigin(
	credentials: ICredentialDataDecryptedObject,
	requestOptions: IHttpRequestOptions,
	header: string,
	value: string,
): IHttpRequestOptions {
	const base = originOf(String(credentials.baseUrl ?? '').trim());
	const target = originOf(
		requestOptions.baseURL
			? `${requestOptions.baseURL.replace(/\/+$/, '')}/${(requestOptions.url ?? '').replace(/^\/+/, '')}`
			: requestOptions.url,
	);
	if (base === undefined || base !== target) return requestOptions;
	return { ...requestOptions, headers: { ...(requestOptions.headers ?? {}), [header]: value } };
}
