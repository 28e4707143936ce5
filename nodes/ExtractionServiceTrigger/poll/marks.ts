import { createHash } from 'crypto';

/**
 * Compact marks of ids for the trigger's state (`state.ts`), so that the static data n8n saves with
 * the workflow stays small whatever the number of jobs a poll follows.
 *
 * A mark is a short hash of an id (base64url of SHA-256) together with a key: the `created_at` of a
 * `/v0` item in epoch ms, or the position of an extraction in its list. A mark recognises an item
 * only when both the hash and the key agree (the key within a tolerance for positions), so two ids
 * are mistaken for one another only if a 36-bit hash and the key collide at once.
 */

/** Characters of the hash kept in a mark (6 base64url characters: 36 bits). */
const HASH_CHARS = 6;

/** A mark: an id's short hash and its key (epoch ms, or a position in a list). */
export interface Mark {
	hash: string;
	key: number;
	/** Polls in a row in which a followed extraction was not met where it was looked for (`scan.ts`). */
	misses?: number;
	/** Polls in a row in which a job's read by id failed (`lists.ts`, `MAX_READ_FAILURES`). */
	fails?: number;
}

/** The short hash of an id (`HASH_CHARS` base64url characters). */
export function hashId(id: string): string {
	return createHash('sha256').update(id).digest('base64url').slice(0, HASH_CHARS);
}

/** A mark of an id (`misses`, `fails`: kept only when above 0). */
export function markOf(id: string, key: number, misses = 0, fails = 0): Mark {
	return {
		hash: hashId(id),
		key,
		...(misses > 0 ? { misses } : {}),
		...(fails > 0 ? { fails } : {}),
	};
}

/**
 * Marks as one string: sorted by key, each `<hash><key delta in base 36>`, `~<misses>` when
 * missed and `!<fails>` when its read failed, separated by commas. A burst of 3,000 jobs created together takes about 27 KB... fewer
 * when their keys are close (the deltas are then one or two characters).
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
			return `${mark.hash}${delta.toString(36)}${mark.misses ? `~${mark.misses}` : ''}${mark.fails ? `!${mark.fails}` : ''}`;
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
		const match = /^([A-Za-z0-9_-]{6})([0-9a-z]+)(?:~(\d+))?(?:!(\d+))?$/.exec(part);
		if (!match) return undefined;
		key += parseInt(match[2], 36);
		marks.push({
			hash: match[1],
			key,
			...(match[3] ? { misses: Number(match[3]) } : {}),
			...(match[4] ? { fails: Number(match[4]) } : {}),
		});
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

	/**
	 * The mark of `id` whose key is accepted by `fits` (e.g. the same `created_at`), if any.
	 */
	find(id: string, fits: (key: number) => boolean): Mark | undefined {
		return this.byHash.get(hashId(id))?.find((mark) => fits(mark.key));
	}

	/** Removes a mark (the same object `find` returned). */
	delete(mark: Mark): void {
		const list = this.byHash.get(mark.hash);
		if (!list) return;
		const rest = list.filter((m) => m !== mark);
		if (rest.length > 0) this.byHash.set(mark.hash, rest);
		else this.byHash.delete(mark.hash);
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
