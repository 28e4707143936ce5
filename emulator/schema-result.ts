/**
 * `result` of an extract (§v0-2.4) and `extracted_data` of an extraction (§unversioned-2.1) from the
 * page texts and an OpenAPI-style schema definition (its structure is "not shown"): each property is
 * read from a `Label: value` line (README: *Schema results*).
 */
type JsonSchema = Record<string, unknown>;

function asSchema(value: unknown): JsonSchema | undefined {
	return typeof value === 'object' && value !== null && !Array.isArray(value)
		? (value as JsonSchema)
		: undefined;
}

/** Computes the result for `definition` from the text of each processed page. */
export function computeResult(
	definition: Record<string, unknown> | null,
	pageTexts: string[],
): unknown {
	if (definition?.type === 'array') {
		const items = asSchema(definition.items);
		if (!items) return [];
		return pageTexts
			.map((text) => fillObject(items, text.split('\n')))
			.filter((obj) => Object.values(obj).some((v) => v !== null));
	}
	return fillObject(definition ?? {}, pageTexts.join('\n').split('\n'));
}

function fillObject(schema: JsonSchema, lines: string[]): Record<string, unknown> {
	const out: Record<string, unknown> = {};
	for (const [name, raw] of Object.entries(asSchema(schema.properties) ?? {})) {
		const prop = asSchema(raw) ?? {};
		if (prop.type === 'object' && asSchema(prop.properties)) {
			const nested = fillObject(prop, lines);
			out[name] = Object.values(nested).some((v) => v !== null) ? nested : null;
			continue;
		}
		const text = findLabelledValue(lines, labelsOf(name, prop));
		out[name] = text === undefined ? null : convert(text, prop.type);
	}
	return out;
}

function labelsOf(name: string, prop: JsonSchema): string[] {
	const labels = [name.replace(/_/g, ' '), prop.title, prop.description];
	return labels
		.filter((l): l is string => typeof l === 'string' && l.trim() !== '')
		.map((l) => normalise(l));
}

function normalise(text: string): string {
	return text.replace(/\s+/g, ' ').trim().toLowerCase();
}

function findLabelledValue(lines: string[], labels: string[]): string | undefined {
	for (const line of lines) {
		const colon = line.indexOf(':');
		if (colon < 0) continue;
		if (labels.includes(normalise(line.slice(0, colon)))) {
			const value = line.slice(colon + 1).trim();
			return value === '' ? undefined : value;
		}
	}
	return undefined;
}

function convert(text: string, type: unknown): unknown {
	if (type === 'number' || type === 'integer') {
		const n = parseAmount(text);
		if (n === null) return null;
		return type === 'integer' ? Math.round(n) : n;
	}
	if (type === 'boolean') {
		const v = text.toLowerCase();
		if (v === 'yes' || v === 'true') return true;
		if (v === 'no' || v === 'false') return false;
		return null;
	}
	return text;
}

/**
 * Reads an amount such as "1,234.56 EUR", "€ 1 234,56" or "-12.5": the first number in the text;
 * with both `.` and `,` the last one is the decimal mark; a lone `,` followed by 1–2 digits is a
 * decimal mark, otherwise a thousands separator.
 */
function parseAmount(text: string): number | null {
	const match = /-?\d[\d.,'\u00a0\u202f ]*/.exec(text);
	if (!match) return null;
	let s = match[0].replace(/['\u00a0\u202f ]/g, '').replace(/[.,]+$/, '');
	const lastDot = s.lastIndexOf('.');
	const lastComma = s.lastIndexOf(',');
	if (lastDot >= 0 && lastComma >= 0) {
		const decimal = lastDot > lastComma ? '.' : ',';
		const thousands = decimal === '.' ? ',' : '.';
		s = s.split(thousands).join('').replace(decimal, '.');
	} else if (lastComma >= 0) {
		const decimals = s.length - lastComma - 1;
		s = s.split(',').length === 2 && decimals <= 2 ? s.replace(',', '.') : s.split(',').join('');
	} else if (s.split('.').length > 2) {
		s = s.split('.').join('');
	}
	const n = Number(s);
	return Number.isFinite(n) ? n : null;
}
