import { createHash } from 'crypto';

/**
 * Compact marks of ids for the trigger's state (`state.ts`), so that the static data n8n saves with
 * the workflow stays small whatever the number of jobs a poll follows.
 *
 * A mark is a short hash of an id (base64url of SHA-256) together with a key: the `created_at` of a
 * `/v0` item in epoch ms, or when the trigger first met an extraction. A mark recognises an item by
 * the 36-bit hash alone (a false match has a chance of about 1 in 70 million per item against 1,000
 * marks); the key orders the marks and ages them out.
 */

/** Characters of the hash kept in a mark (6 base64url characters: 36 bits). */
const HASH_CHARS = 6;

/** A mark: an id's short hash and its key (epoch ms, or a position in a list). */
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

/**
 * Marks as one string: sorted by key, each `<hash><key delta in base 36>` and `~<misses>` when
 * missed, separated by commas: about 8 characters a mark when keys are close (deltas of one or
 * two characters).
 *
 * @returns '' for no marks
 */
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

/**
 * Reads a string written by `packMarks`.
 *
 * @returns undefined when the text is not such a string (the caller then starts afresh)
 */
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

/** Marks by hash, for lookups (several marks may share a hash: each is kept). */
export class MarkSet {
	private readonly byHash = new Map<string, Mark[]>();

	constructor(marks: Mark[] = []) {
		for (const mark of marks) this.add(mark);
	}

	/** Adds a mark. */
	add(mark: Mark): void {
		const list = this.byHash.get(mark.hash);
		if (list) list.push(mark);
		else this.byHash.set(mark.hash, [mark]);
	}

	/** The mark of `id`, if any. */
	find(id: string): Mark | undefined {
		return this.byHash.get(hashId(id))?.[0];
	}

	/** Every mark. */
	values(): Mark[] {
		return [...this.byHash.values()].flat();
	}

	get size(): number {
		let n = 0;
		for (const list of this.byHash.values()) n += list.length;
		return n;
	}
}
