import type { IDataObject } from 'n8n-workflow';

/** Keys whose values are URLs relative to the Base URL (`§v0-2.1, §v0-2.2`; `§unversioned-2.1`). */
const RELATIVE_URL_KEYS = new Set(['file_url', 'picture', 'document_url', 'url']);

/**
 * Copies a resource and, next to every relative URL field (`file_url`, `picture`, `document_url`,
 * `content_images[].url`), adds `<key>_absolute` resolved against the Base URL, so the next HTTP
 * Request node can use it directly. Nested objects and arrays are walked.
 *
 * @param baseUrl Base URL of the credential, without trailing slash
 */
export function withAbsoluteUrls<T>(value: T, baseUrl: string): T {
	if (Array.isArray(value)) return value.map((v) => withAbsoluteUrls(v, baseUrl)) as T;
	if (!value || typeof value !== 'object') return value;
	const out: IDataObject = {};
	for (const [key, v] of Object.entries(value as IDataObject)) {
		out[key] = withAbsoluteUrls(v, baseUrl);
		if (RELATIVE_URL_KEYS.has(key) && typeof v === 'string' && v.startsWith('/')) {
			out[`${key}_absolute`] = `${baseUrl}${v}`;
		}
	}
	return out as T;
}
