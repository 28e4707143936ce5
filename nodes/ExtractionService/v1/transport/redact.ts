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

/**
 * Removes secrets from a text: each secret, and its URL-encoded form, becomes `[redacted]`.
 *
 * @param secrets the credential's secret values (`secretsOf`)
 */
export function redactText(text: string, secrets: readonly string[]): string {
	let out = text;
	for (const secret of secrets) {
		out = out.split(secret).join(REDACTED);
		const encoded = encodeURIComponent(secret);
		if (encoded !== secret) out = out.split(encoded).join(REDACTED);
	}
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
 * Whether any string of a parsed JSON value (keys included) holds one of `secrets`, as it is or
 * URL-encoded (what `redactText` removes). Walked without recursion and without copying.
 */
export function holdsSecret(value: unknown, secrets: readonly string[]): boolean {
	if (secrets.length === 0) return false;
	const forms = secrets.flatMap((secret) => [secret, encodeURIComponent(secret)]);
	const holds = (text: string): boolean => forms.some((form) => text.includes(form));
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
