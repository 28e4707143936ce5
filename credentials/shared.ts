import type {
	IAuthenticateRuleResponseCode,
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	IHttpRequestOptions,
	Icon,
	INodeProperties,
} from 'n8n-workflow';

/** The icon of both credential types (the node's). */
export const CREDENTIAL_ICON: Icon = {
	light: 'file:../nodes/ExtractionService/extractionService.svg',
	dark: 'file:../nodes/ExtractionService/extractionService.dark.svg',
};

/**
 * The Base URL field both credential types share. Surrounding whitespace and a trailing slash are
 * tolerated everywhere: the node's transport trims the value, and the credential test request uses
 * {@link TEST_BASE_URL} (trimmed; axios drops the trailing slash when it joins the path).
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
 * credential's Base URL. A pre-signed download URL on another host (`§v0-4.4`: the 302 of
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

/**
 * The `authenticate` of a credential type: adds `header` with the credential's `field` to
 * requests for the Base URL's origin only (`authenticateForOwnOrigin`).
 */
export function secretHeader(header: string, field: string) {
	return async (
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> =>
		authenticateForOwnOrigin(credentials, requestOptions, header, String(credentials[field] ?? ''));
}

/** The secret field of a credential type: a required password-type string. */
export function secretProperty(
	displayName: string,
	name: string,
	description: string,
): INodeProperties {
	return {
		displayName,
		name,
		type: 'string',
		typeOptions: { password: true },
		default: '',
		required: true,
		description,
	};
}

/**
 * `baseURL` of both credential tests: the Base URL field, trimmed of surrounding whitespace as the
 * node's transport trims it (a pasted "  https://api.example.com/ " would otherwise become the path
 * `/%20%20/…`). n8n evaluates it with `$credentials` = the credential's data. The trimmed value
 * still has the origin {@link authenticateForOwnOrigin} compares with, so the secret is added.
 */
export const TEST_BASE_URL = '={{$credentials.baseUrl.trim()}}';

/** What the Test button says when the Base URL answers with a redirect (see {@link redirectRules}). */
export const REDIRECT_MESSAGE =
	'The Base URL redirects to another address: use the address the service answers on (check http vs https and the host)';

/**
 * `rules` of both credential tests: one `responseCode` rule per redirect status (301, 302, 303,
 * 307, 308), each with {@link REDIRECT_MESSAGE}. The test requests set `disableFollowRedirect`, so
 * a redirect is not followed (following it would carry the secret header to wherever `Location`
 * points: n8n even re-adds `Authorization` on cross-origin hops) and reaches n8n as a failed
 * request with that status, which n8n's credential tester matches against these rules. Without
 * them the Test button would only show the status text, e.g. "Found".
 */
export const redirectRules: IAuthenticateRuleResponseCode[] = [301, 302, 303, 307, 308].map(
	(value) => ({
		type: 'responseCode',
		properties: { value, message: REDIRECT_MESSAGE },
	}),
);

/**
 * The Test button's request of a credential: one cheap authenticated read of `url` (page 1 of size
 * 1) on the trimmed Base URL (`TEST_BASE_URL`). Redirects are not followed (the secret would travel
 * with them); a redirect answer fails the test with `REDIRECT_MESSAGE` (`redirectRules`).
 */
export function credentialTest(url: string): ICredentialTestRequest {
	return {
		request: { baseURL: TEST_BASE_URL, url, qs: { page: 1, size: 1 }, disableFollowRedirect: true },
		rules: redirectRules,
	};
}
