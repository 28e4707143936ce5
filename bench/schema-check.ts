/**
 * Measure 7 of `npm run bench` (bench/run.ts): Check Against Schema against Ajv on generated cases
 * (test/helpers/schema-cases.ts, the generators and oracle of test/completeness-property.test.ts),
 * in-process, no emulator. A new seed each run unless given; it is printed, so a failing run can be
 * replayed with `--only 7 --schema-seed <seed>`.
 */
import fc from 'fast-check';

import { createOracle, judge, schemaCases, type SchemaCase } from '../test/helpers/schema-cases';

/** What measure 7 found. */
export interface SchemaCheckResult {
	seed: number;
	cases: number;
	/** Cases Ajv says valid. */
	valid: number;
	/** Cases the checker says complete. */
	complete: number;
	/** Cases with a warning (keywords the checker does not evaluate were reached). */
	warned: number;
	/** Cases where the checker and Ajv disagree, the first ones with what differs. */
	disagreements: number;
	examples: Array<{ case: SchemaCase; problems: string[] }>;
	wallMs: number;
}

/** Generates `count` cases from `seed` and judges each against Ajv. */
export function checkAgainstAjv(count: number, seed: number): SchemaCheckResult {
	const started = Date.now();
	const oracle = createOracle();
	const result: SchemaCheckResult = {
		seed,
		cases: 0,
		valid: 0,
		complete: 0,
		warned: 0,
		disagreements: 0,
		examples: [],
		wallMs: 0,
	};
	for (const c of fc.sample(schemaCases(), { seed, numRuns: count })) {
		const { validation, verdict, disagreements } = judge(oracle, c);
		result.cases++;
		if (verdict.valid) result.valid++;
		if (validation.complete) result.complete++;
		if (validation.warning) result.warned++;
		if (disagreements.length) {
			result.disagreements++;
			if (result.examples.length < 3) result.examples.push({ case: c, problems: disagreements });
		}
	}
	result.wallMs = Date.now() - started;
	return result;
}
