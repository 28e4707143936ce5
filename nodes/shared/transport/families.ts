/**
 * The service's two API families and how they differ on the wire.
 * - `v0`: `/v0/...` paths without a trailing slash, `X-API-Key` (`§v0-1, §v0-5`).
 * - `unversioned`: paths ending with `/`, raw token in `Authorization` (`§unversioned-1, §unversioned-5`).
 */
export type ApiFamily = 'v0' | 'unversioned';

/** Credential type name per family. */
export const CREDENTIAL_TYPE: Record<ApiFamily, string> = {
	v0: 'extractionServiceApi',
	unversioned: 'extractionServiceTokenApi',
};

/**
 * Builds a path of a family from segments, with the family's slash rule: `§v0-1 rule 1`
 * (no trailing slash, `/v0` prefix) and `§unversioned-1 rule 1` (trailing slash).
 * Segments are URI-encoded.
 *
 * @example servicePath('v0', 'extract', id) → '/v0/extract/<id>'
 * @example servicePath('unversioned', 'schema', id) → '/schema/<id>/'
 */
export function servicePath(family: ApiFamily, ...segments: string[]): string {
	const joined = segments.map((s) => encodeURIComponent(s)).join('/');
	return family === 'v0' ? `/v0/${joined}` : `/${joined}/`;
}
