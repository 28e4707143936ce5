/**
 * The credential's secrets, kept out of everything the service sends back (`docs/service-api.md`
 * §node, secrets): which values are secret, and their removal from texts and parsed JSON.
 */
import type { IDataObject } from 'n8n-workflow';

/** What is put where a secret stood. */
export const REDACTED = '[redacted]';

/** Secrets shorter than this are not searched for in service text (they would match ordinary words). */
const MIN_SECRET_LENGTH = 4;

/**
 * The secret values of a credential: every string field but the Base URL, as written and trimmed,
 * longest first (so a secret that contains another is removed whole).
 *
 * @param data the decrypted credential's fields
 */
export function secretsOf(data: IDataObject): string[] {
	return Object.entries(data)
		.filter(
			([key, value]) =>
				key !== 'baseUrl' && typeof value === 'string' && value.trim().length >= MIN_SECRET_LENGTH,
		)
		.flatMap(([, value]) => [...new Set([String(value), String(value).trim()])])
		.sort((a, b) => b.length - a.length);
}

/** Characters a JSON string writes with a short escape (`\"`, `\\`, `\/`, control characters). */
const JSON_SHORT: Record<string, string> = {
	'"': '\\"',
	'\\': '\\\\',
	'/': '\\/',
	'\b': '\\b',
	'\f': '\\f',
	'\n': '\\n',
	'\r': '\\r',
	'\t': '\\t',
};

/** A regular expression source matching `hex` in either letter case. */
const anyCase = (hex: string) =>
	[...hex].map((h) => (/[a-f]/i.test(h) ? `[${h.toLowerCase()}${h.toUpperCase()}]` : h)).join('');

/**
 * One character of a secret as it may be written: itself, URL-encoded (`%2F`, `%2f`), as a JSON
 * escape (`\u002f`, `\/`), in any mixture along the secret.
 */
function charForms(char: string): string {
	const forms = [char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')];
	const url = encodeURIComponent(char);
	if (url !== char) forms.push(anyCase(url));
	const code = char.charCodeAt(0);
	if (char.length === 1) forms.push(`\\\\u${anyCase(code.toString(16).padStart(4, '0'))}`);
	if (JSON_SHORT[char]) forms.push(JSON_SHORT[char].replace(/\\/g, '\\\\'));
	return forms.length === 1 ? forms[0] : `(?:${forms.join('|')})`;
}

/**
 * The base64 (and base64url) text that encodes the secret whatever bytes stand before it: at each
 * of the three byte offsets, the characters that depend on the secret's bytes only (a proxy that
 * echoes an `Authorization: Basic …` header, a token inside an encoded blob).
 */
function base64Cores(secret: string): string[] {
	const bytes = Buffer.from(secret, 'utf8');
	const cores: string[] = [];
	for (const offset of [0, 1, 2]) {
		const text = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
		const first = Math.ceil((8 * offset) / 6);
		const end = Math.floor((8 * (offset + bytes.length)) / 6);
		const core = text.slice(first, end);
		if (core.length >= 6) cores.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
	}
	return cores;
}

/** The pattern of each secret's forms, made once per secret. */
const PATTERNS = new Map<string, RegExp>();

/** Every written form of a secret (`charForms`, `base64Cores`), as one global regular expression. */
function patternOf(secret: string): RegExp {
	let pattern = PATTERNS.get(secret);
	if (!pattern) {
		const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
		const written = [...secret].map(charForms).join('');
		pattern = new RegExp([written, ...base64Cores(secret).map(escape)].join('|'), 'g');
		if (PATTERNS.size > 100) PATTERNS.clear();
		PATTERNS.set(secret, pattern);
	}
	pattern.lastIndex = 0;
	return pattern;
}

/**
 * Removes secrets from a text: each secret in any written form — as it is, URL-encoded (either
 * letter case), with JSON escapes (`\/`, `\u00xx`), any mixture of those along it, or in base64 —
 * becomes `[redacted]`.
 *
 * @param secrets the credential's secret values (`secretsOf`)
 */
export function redactText(text: string, secrets: readonly string[]): string {
	let out = text;
	for (const secret of secrets) out = out.replace(patternOf(secret), REDACTED);
	return out;
}

/**
 * Sets `key` on `out` as an own data property, whatever the key: a field named `__proto__` in a
 * service answer (parsed JSON has it as an own property) stays data instead of replacing the
 * object's prototype.
 */
export function setOwn(out: IDataObject, key: string, value: unknown): void {
	Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A parsed JSON value with every string (keys included) passed through `redactText` (`__proto__` keys kept as data). */
export function redactDeep<T>(value: T, secrets: readonly string[]): T {
	if (secrets.length === 0) return value;
	if (typeof value === 'string') return redactText(value, secrets) as T;
	if (Array.isArray(value)) return value.map((v) => redactDeep(v, secrets)) as T;
	if (value && typeof value === 'object') {
		const out: IDataObject = {};
		for (const [k, v] of Object.entries(value as IDataObject))
			setOwn(out, redactText(k, secrets), redactDeep(v, secrets));
		return out as T;
	}
	return value;
}

/**
 * Whether any string of a parsed JSON value (keys included) holds one of `secrets` in a form
 * `redactText` removes. Walked without recursion and without copying.
 */
export function holdsSecret(value: unknown, secrets: readonly string[]): boolean {
	if (secrets.length === 0) return false;
	const holds = (text: string): boolean => secrets.some((secret) => patternOf(secret).test(text));
	const stack: unknown[] = [value];
	while (stack.length > 0) {
		const current = stack.pop();
		if (typeof current === 'string') {
			if (holds(current)) return true;
		} else if (current && typeof current === 'object') {
			for (const key of Object.keys(current)) {
				if (holds(key)) return true;
				stack.push((current as IDataObject)[key]);
			}
		}
	}
	return false;
}

/**
 * A parsed JSON value with its secrets removed: the value itself when no string holds one (nothing
 * copied), else a redacted copy. JSON escapes (`\/`, `\u00xx`) are gone once parsed, so a secret
 * the service wrote escaped is found here where `redactText` on the raw text misses it.
 */
export function redactParsed<T>(value: T, secrets: readonly string[]): T {
	return holdsSecret(value, secrets) ? redactDeep(value, secrets) : value;
}
