/**
 * Reads the first sheet of an .xlsx file (as n8n's Convert to File node writes it) into rows of
 * cell values, enough for checks: strings (inline, shared or `t="str"`), numbers, booleans.
 */
import JSZip from 'jszip';

export interface Sheet {
	name: string;
	/** Rows in order; each an array of cell values by column (A = 0). */
	rows: Array<Array<string | number | boolean | null>>;
	/** Rows 2… as objects keyed by the header row. */
	records: Array<Record<string, string | number | boolean | null>>;
}

const ENTITIES: Record<string, string> = { lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' };
const unescape = (s: string): string =>
	s.replace(/&(#\d+|lt|gt|quot|apos|amp);/g, (_, e: string) =>
		e.startsWith('#') ? String.fromCodePoint(Number(e.slice(1))) : ENTITIES[e],
	);

/** The text of the `<t>` runs in `xml` (a shared or inline string), unescaped. */
const textRuns = (xml: string): string =>
	unescape([...xml.matchAll(/<t[^>]*>([\s\S]*?)<\/t>/g)].map((t) => t[1]).join(''));

function columnIndex(ref: string): number {
	const letters = /^[A-Z]+/.exec(ref)?.[0] ?? 'A';
	return [...letters].reduce((n, c) => n * 26 + (c.charCodeAt(0) - 64), 0) - 1;
}

export async function readFirstSheet(bytes: Buffer): Promise<Sheet> {
	if (bytes.subarray(0, 2).toString('latin1') !== 'PK')
		throw new Error(
			`not an .xlsx (zip) file: starts with ${JSON.stringify(bytes.subarray(0, 8).toString('latin1'))}`,
		);
	const zip = await JSZip.loadAsync(bytes);
	const workbook = (await zip.file('xl/workbook.xml')?.async('string')) ?? '';
	const name = unescape(/<sheet [^>]*name="([^"]*)"/.exec(workbook)?.[1] ?? '');
	const sheetXml = await zip.file('xl/worksheets/sheet1.xml')?.async('string');
	if (!sheetXml) throw new Error('the .xlsx has no xl/worksheets/sheet1.xml');
	const sharedXml = (await zip.file('xl/sharedStrings.xml')?.async('string')) ?? '';
	const shared = [...sharedXml.matchAll(/<si>([\s\S]*?)<\/si>/g)].map((m) => textRuns(m[1]));

	const rows: Sheet['rows'] = [];
	for (const row of sheetXml.matchAll(/<row[^>]*>([\s\S]*?)<\/row>/g)) {
		const cells: Array<string | number | boolean | null> = [];
		for (const c of row[1].matchAll(/<c ([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)) {
			const attrs = c[1];
			const body = c[2] ?? '';
			const ref = /r="([A-Z]+\d+)"/.exec(attrs)?.[1] ?? 'A1';
			const type = /t="([^"]*)"/.exec(attrs)?.[1];
			const v = /<v>([\s\S]*?)<\/v>/.exec(body)?.[1];
			let value: string | number | boolean | null = null;
			if (type === 's') value = shared[Number(v)] ?? null;
			else if (type === 'inlineStr') value = textRuns(body);
			else if (type === 'str' || type === 'e') value = v === undefined ? null : unescape(v);
			else if (type === 'b') value = v === '1';
			else value = v === undefined ? null : Number(v);
			cells[columnIndex(ref)] = value;
		}
		rows.push(Array.from(cells, (x) => x ?? null));
	}
	const header = (rows[0] ?? []).map((h) => String(h ?? ''));
	const records = rows
		.slice(1)
		.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i] ?? null])));
	return { name, rows, records };
}
