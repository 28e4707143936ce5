import type { IDataObject } from 'n8n-workflow';

/** Keys whose values are URLs relative to the Base URL (`v0-api.md §2.1, §2.2`; `unversioned-api.md §2.1`). */
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

/**
 * The simplified shape of a finished job for spreadsheets and ERPs: the extracted fields at the top
 * level, plus identifying fields. Extracted fields win over identifying ones with the same name.
 *
 * @param result the extracted object (`result` of `v0-api.md §2.4`, `extracted_data` of
 *   `unversioned-api.md §2.1`), or null while unfinished
 * @param meta identifying fields (id, status, schema name, file name)
 * @param splitArrays when `result` is an array: one output object per element (true) or one object
 *   with `result` holding the array (false)
 */
export function simplifyResult(result: unknown, meta: IDataObject, splitArrays: boolean): IDataObject[] {
	if (Array.isArray(result)) {
		if (!splitArrays) return [{ ...meta, result: result as IDataObject[] }];
		return result.map((entry, index) => ({
			...meta,
			index,
			...(entry && typeof entry === 'object' && !Array.isArray(entry) ? (entry as IDataObject) : { value: entry as IDataObject }),
		}));
	}
	if (result && typeof result === 'object') return [{ ...meta, ...(result as IDataObject) }];
	return [{ ...meta, result: (result ?? null) as IDataObject }];
}
