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
 * The `id` at the top level of a JSON object's text, read without parsing the rest (an answer nested
 * too deep to parse still names the job it created): a string or a number value of the key `id` at
 * depth 1.
 *
 * @returns the id as text, or undefined when the text is not an object with such a key
 */
export function topLevelId(text: string): string | undefined {
	const start = text.search(/\S/);
	if (start < 0 || text[start] !== '{') return undefined;
	let depth = 0;
	let key: string | undefined;
	for (let i = start; i < text.length; i++) {
		const c = text[i];
		if (c === '"') {
			let end = i + 1;
			while (end < text.length && text[end] !== '"') end += text[end] === '\\' ? 2 : 1;
			if (depth === 1) {
				let next = end + 1;
				while (/\s/.test(text[next] ?? '')) next++;
				const literal = text.slice(i, end + 1);
				if (text[next] === ':') key = literal;
				else if (key === '"id"') return tryParse(literal);
			}
			i = end;
		} else if (c === '{' || c === '[') depth++;
		else if (c === '}' || c === ']') {
			if (--depth === 0) return undefined;
		} else if (depth === 1 && c === ',') key = undefined;
		else if (depth === 1 && key === '"id"' && /[-\d]/.test(c))
			return /^-?\d+(\.\d+)?/.exec(text.slice(i, i + 40))?.[0];
	}
	return undefined;
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
