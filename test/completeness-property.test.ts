/**
 * Check Against Schema against Ajv on generated cases (test/helpers/schema-cases.ts): with a fixed
 * seed, `complete` agrees with Ajv's verdict, and every path the checker lists is where Ajv finds an
 * error. The bench's measure 7 runs the same comparison on ≥ 10,000 cases with a new seed each run.
 */
import fc from 'fast-check';

import { createOracle, judge, schemaCases } from './helpers/schema-cases';

describe('Check Against Schema agrees with Ajv on generated definitions and data', () => {
	it('400 cases, seed 30: complete ⇔ Ajv valid; every finding at an Ajv error', () => {
		const oracle = createOracle();
		fc.assert(
			fc.property(schemaCases(), (c) => {
				const { disagreements, validation } = judge(oracle, c);
				if (disagreements.length) {
					throw new Error(`${disagreements.join('\n')}\nvalidation: ${JSON.stringify(validation)}`);
				}
			}),
			{ seed: 30, numRuns: 400 },
		);
	});
});
