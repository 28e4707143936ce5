import { createHash } from 'crypto';

/**
 * Compact marks of ids for the trigger's state (`state.ts`): a 36-bit hash of an id (base64url of
 * SHA-256; a false match about 1 in 70 million per item against 1,000 marks) and a key that orders
 * and ages them: the `created_at` of a `/v0` item in epoch ms, or when the trigger first met an
 * extraction.
 */

/** Characters of the hash kept in a mark (6 base64url characters: 36 bits). */
const HASH_CHARS = 6;

/** A mark: an id's short hash and its key (epoch ms). */
export interface Mark {
	hash: string;
	key: number;
	/** Complete reads in a row that did not list a pending extraction (`scan.ts`). */
	misses?: number;
}

/** The short hash of an id (`HASH_CHARS` base64url characters). */
export function hashId(id: string): string {
	return createHash('sha256').update(id).digest('base64url').slice(0, HASH_CHARS);
}

/** A mark of an id. */
export function markOf(id: string, key: number): Mark {
	return { hash: hashId(id), key };
}

/** Marks as one string ('' for none): by key, `<hash><key delta in base 36>[~<misses>]`, comma-separated. */
export function packMarks(marks: Mark[]): string {
	const sorted = [...marks].sort((a, b) => a.key - b.key);
	let previous = 0;
	return sorted
		.map((mark) => {
			const delta = Math.max(0, Math.round(mark.key) - previous);
			previous += delta;
			return `${mark.hash}${delta.toString(36)}${mark.misses ? `~${mark.misses}` : ''}`;
		})
		.join(',');
}

/** Reads a string written by `packMarks`; undefined when the text is not one (the caller starts afresh). */
export function unpackMarks(text: unknown): Mark[] | undefined {
	if (typeof text !== 'string') return undefined;
	if (text === '') return [];
	const marks: Mark[] = [];
	let key = 0;
	for (const part of text.split(',')) {
		const match = /^([A-Za-z0-9_-]{6})([0-9a-z]+)(?:~(\d+))?$/.exec(part);
		if (!match) return undefined;
		key += parseInt(match[2], 36);
		marks.push({ hash: match[1], key, ...(match[3] ? { misses: Number(match[3]) } : {}) });
	}
	return marks;
}

/** Marks by hash (`hashId`), for lookups (of marks sharing a hash, a false match, one is kept). */
export function byHash(marks: Mark[] = []): Map<string, Mark> {
	return new Map(marks.map((mark) => [mark.hash, mark]));
}
