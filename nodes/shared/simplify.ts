import type { IDataObject } from 'n8n-workflow';

/** Prefix of an extracted field whose name a job field takes (node version 4 on: `extracted_status`). */
export const EXTRACTED_PREFIX = 'extracted_';

/**
 * One simplified object: the job's fields (`meta`) and the extracted fields. With `reserved` (node
 * version 4 on) the job's fields keep their names: an extracted field named like one of `reserved`
 * comes out as `extracted_<name>` (one more `extracted_` while that name is taken too), so no field
 * is lost. Without (versions 1–3, saved workflows) extracted fields replace job fields of the same
 * name, as they always did.
 */
function merge(
	meta: IDataObject,
	fields: IDataObject,
	reserved?: ReadonlySet<string>,
): IDataObject {
	if (!reserved) return { ...meta, ...fields };
	const taken = Object.entries(fields).filter(([name]) => reserved.has(name));
	const kept = Object.entries(fields).filter(([name]) => !reserved.has(name));
	const names = new Set([...Object.keys(meta), ...kept.map(([name]) => name), ...reserved]);
	const renamed = taken.map(([name, value]): [string, unknown] => {
		let to = `${EXTRACTED_PREFIX}${name}`;
		while (names.has(to)) to = `${EXTRACTED_PREFIX}${to}`;
		names.add(to);
		return [to, value];
	});
	// fromEntries defines each key as an own field, so even `__proto__` stays an ordinary field.
	return Object.fromEntries([...Object.entries(meta), ...kept, ...renamed]) as IDataObject;
}

/**
 * The simplified shape of a finished job for spreadsheets and ERPs: the extracted fields at the top
 * level, plus identifying fields (see `merge` for a name both have).
 *
 * @param result the extracted object (`result` of `§v0-2.4`, `extracted_data` of
 *   `§unversioned-2.1`), or null while unfinished
 * @param meta identifying fields (id, status, schema name, file name)
 * @param splitArrays when `result` is an array: one output object per element (true; an empty list
 *   still gives one object, with `result: []`, so the job is never lost) or one object with
 *   `result` holding the array (false)
 * @param reserved node version 4 on: the names the job's fields take (`meta`'s and the node's own:
 *   `error`, `timedOut`, `validation`, `index`); undefined: versions 1–3
 */
export function simplifyResult(
	result: unknown,
	meta: IDataObject,
	splitArrays: boolean,
	reserved?: ReadonlySet<string>,
): IDataObject[] {
	if (Array.isArray(result)) {
		if (!splitArrays || result.length === 0) return [{ ...meta, result: result as IDataObject[] }];
		return result.map((entry, index) =>
			entry && typeof entry === 'object' && !Array.isArray(entry)
				? merge({ ...meta, index }, entry as IDataObject, reserved)
				: { ...meta, index, value: entry as IDataObject },
		);
	}
	if (result && typeof result === 'object') return [merge(meta, result as IDataObject, reserved)];
	return [{ ...meta, result: (result ?? null) as IDataObject }];
}
