/** Authentication of the two families. */
import type { IncomingHttpHeaders } from 'node:http';
import type { AppContext, AuthScheme } from './context';
import { HttpError } from './http';

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
	const v = headers[name];
	return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * v0 family: header `X-API-Key` (§v0-5); a missing or wrong key → 401 `{"detail": "..."}`
 * (§v0-7).
 */
export function checkApiKey(app: AppContext, headers: IncomingHttpHeaders): HttpError | undefined {
	const key = header(headers, 'x-api-key');
	if (key === undefined || key === '') return new HttpError(401, { detail: 'API key missing.' });
	if (key !== app.apiKey) return new HttpError(401, { detail: 'Invalid API key.' });
	return undefined;
}

/**
 * Unversioned family: the raw token in `Authorization` (§unversioned-5 — "the header value is
 * the token", so "Bearer <token>" is invalid). 401 bodies per §unversioned-7 (the
 * simplejwt shape: detail, code, messages); the configured expired token gets "Token is expired".
 */
export function checkToken(app: AppContext, headers: IncomingHttpHeaders): HttpError | undefined {
	const value = header(headers, 'authorization');
	if (value === undefined || value === '') {
		return new HttpError(401, {
			detail: 'Authentication credentials were not provided.',
			code: 'not_authenticated',
			messages: [],
		});
	}
	if (value === app.token) return undefined;
	const message = value === app.expiredToken ? 'Token is expired' : 'Token is invalid';
	return new HttpError(401, {
		detail: 'Given token not valid for any token type',
		code: 'token_not_valid',
		messages: [{ token_class: 'AccessToken', token_type: 'access', message }],
	});
}

/** The 401 for a route's scheme, or undefined when the request may proceed. */
export function authenticate(
	app: AppContext,
	scheme: AuthScheme,
	headers: IncomingHttpHeaders,
): HttpError | undefined {
	if (scheme === 'api-key') return checkApiKey(app, headers);
	if (scheme === 'token') return checkToken(app, headers);
	return undefined;
}
