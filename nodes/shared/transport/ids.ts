/**
 * Ids in the service's answers (`docs/service-api.md` §node, Checked answers): how they are matched,
 * and how a job's id is found at the top of an answer the node cannot otherwise use.
 */

/**
 * The key an id is matched by: its text, trimmed, in lower case. Ids are UUIDs (`§v0-1 rule 2`,
 * `§unversioned-1 rule 4`), whose hex digits have no letter case (RFC 9562 §4): a service may answer
 * the id it was asked for in upper case. Used wherever the node matches ids (an answer against the
 * id asked for, a list's items against those already read); outputs keep the id as the service sent
 * it (`§node`, Checked answers).
 *
 * @param id an id as the service or the user gave it (string or number)
 * @returns the key, '' for undefined or null
 */
export function idKey(id: unknown): string {
	return id === undefined || id === null ? '' : String(id).trim().toLowerCase();
}

/**
 * The ids at the top of a JSON answer's text, read without parsing the rest (an answer nested too
 * deep to parse still names the jobs it created): the `id` (a string or a number) of the object the
 * answer is, or of each object of the list it is.
 *
 * @returns the ids as text, in order; none when the text is neither
 */
export function topLevelIds(text: string): string[] {
	const start = text.search(/\S/);
	const root = text[start];
	if (root !== '{' && root !== '[') return [];
	// The depth of the objects whose `id` counts: the answer itself, or the elements of its list.
	const top = root === '{' ? 1 : 2;
	const ids: string[] = [];
	let depth = 0;
	let key: string | undefined;
	for (let i = start; i < text.length; i++) {
		const c = text[i];
		if (c === '"') {
			let end = i + 1;
			while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
			if (depth === top) {
				let next = end + 1;
				while (/\s/.test(text[next] ?? '')) next++;
				const literal = text.slice(i, end + 1);
				if (text[next] === ':') key = literal;
				else if (key === '"id"') {
					const id = tryParse(literal);
					if (id) ids.push(id);
					key = undefined;
				}
			}
			i = end;
		} else if (c === '{' || c === '[') {
			if (++depth === top) key = undefined;
		} else if (c === '}' || c === ']') {
			if (--depth === 0) break;
		} else if (depth === top && c === ',') key = undefined;
		else if (depth === top && key === '"id"' && /[-\d]/.test(c)) {
			const number = /^-?\d+(\.\d+)?/.exec(text.slice(i, i + 40))?.[0];
			if (number) ids.push(number);
			key = undefined;
		}
	}
	return ids;
}

/** A JSON string literal's value, or undefined. */
function tryParse(literal: string): string | undefined {
	try {
		const value: unknown = JSON.parse(literal);
		return typeof value === 'string' && value.trim() ? value.trim() : undefined;
	} catch {
		return undefined;
	}
}
