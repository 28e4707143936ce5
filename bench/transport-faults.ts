/**
 * Generated fault sequences at scale (issue 32): the property of test/transport-faults.test.ts
 * (test/helpers/fault-sequences.ts says what a scenario is and which five invariants are checked)
 * run on thousands of scenarios per kind of request — create, poll, list, download — with a random
 * seed, printed so that a run can be replayed. The node runs from its TypeScript sources through
 * n8n-core's WorkflowExecute, against an emulator in this process, on the simulated clock.
 *
 * It keeps going after a failure: a counterexample is shrunk, printed with its violations, and its
 * signature (the violated invariant and the kinds of fault in the shrunk sequence) remembered; a
 * later scenario whose violations are all explained by a remembered signature (same invariant, and
 * it holds the same kinds of fault) counts as a repeat, not as a new counterexample. So one run
 * lists the distinct counterexamples, each as a sequence to paste into the test file's
 * `counterexamples the property found`.
 *
 * Run alone: `npx tsx bench/transport-faults.ts [--runs 2000] [--seed S] [--kinds create,poll,list,download]
 * [--time-limit seconds per kind] [--stop-at-first]`; one scenario, as printed:
 * `npx tsx bench/transport-faults.ts --scenario '{"kind":"create","operation":"parsing from a file","faults":["drop"],"maxRetries":3,"continueOnFail":false}'`.
 * It prints one line per kind, each distinct counterexample (its scenario and violations), a closing
 * line with the seed and the count, and a `RESULT {json}` line (for bench/run.ts). Exit code 1 when
 * a counterexample was found.
 */
import fc from 'fast-check';

import { startEmulator, type Emulator } from '../emulator';
import { shutdownEngine } from '../scripts/engine';
import { numberFlag, readArgs, usageError } from '../scripts/lib/args';
import { runMain } from '../scripts/lib/processes';
import {
	FaultEnvironment,
	KINDS,
	installFaultClock,
	report,
	runScenario,
	explains,
	scenarios,
	signatureOf,
	violations,
	type Kind,
	type Scenario,
	type Signature,
} from '../test/helpers/fault-sequences';

/** `performance.now()`: the simulated clock replaces `Date.now`. */
const realNow = () => performance.now();

interface Counterexample {
	kind: Kind;
	scenario: Scenario;
	violations: string[];
	signatures: Signature[];
	/** It did not come back when run again right after (timing). */
	flaky: boolean;
	seed: number;
	path?: string;
}

interface KindOutcome {
	kind: Kind;
	runs: number;
	/** Scenarios whose violations were all repeats of a counterexample already found. */
	repeats: number;
	counterexamples: number;
	seconds: number;
}

async function main(): Promise<number> {
	const text = { type: 'string' } as const;
	const { values } = readArgs(__filename, {
		runs: text,
		seed: text,
		kinds: text,
		'time-limit': text,
		scenario: text,
		'stop-at-first': { type: 'boolean' },
	});
	const runs = numberFlag('runs', values.runs, 2000, 1, true);
	const seed = numberFlag('seed', values.seed, Math.floor(Math.random() * 2 ** 31), 0, true);
	const timeLimit = numberFlag('time-limit', values['time-limit'], 0, 0);
	const kinds = (values.kinds ?? KINDS.join(',')).split(',').map((k) => k.trim()) as Kind[];
	for (const kind of kinds)
		if (!KINDS.includes(kind)) usageError(`--kinds: ${kind} is not one of ${KINDS}`);

	const restore = installFaultClock();
	const env: FaultEnvironment = new FaultEnvironment(() => emulator);
	const emulator: Emulator = await startEmulator(env.emulatorOptions);
	await env.init();
	const started = realNow();
	try {
		if (values.scenario !== undefined) {
			const scenario = JSON.parse(values.scenario) as Scenario;
			const o = await runScenario(env, scenario);
			const found = violations(o);
			console.log(report(o, found));
			console.log(`RESULT ${JSON.stringify({ scenario, violations: found })}`);
			return found.length ? 1 : 0;
		}
		console.log(
			`== Generated fault sequences: ${runs} scenarios per kind (${kinds.join(', ')}), seed ${seed}`,
		);
		const found: Counterexample[] = [];
		const outcomes: KindOutcome[] = [];
		for (const kind of kinds) {
			const t0 = realNow();
			const outcome: KindOutcome = { kind, runs: 0, repeats: 0, counterexamples: 0, seconds: 0 };
			// One fast-check run per counterexample found, each on its own seed (seed + k).
			for (let k = 0; outcome.runs < runs; k++) {
				const left = timeLimit > 0 ? timeLimit * 1000 - (realNow() - t0) : Infinity;
				if (left <= 0) break;
				let executed = 0;
				// The last failing run's: fast-check's counterexample is the last failure it met (shrunk).
				let last: { report: string; violations: string[] } | undefined;
				const details = await fc.check(
					fc.asyncProperty(scenarios(kind), async (scenario) => {
						executed++;
						const o = await runScenario(env, scenario);
						const all = violations(o);
						const fresh = all.filter(
							(v) =>
								!found.some(
									(c) => c.kind === kind && c.signatures.some((s) => explains(s, v, scenario)),
								),
						);
						if (fresh.length) {
							last = { report: report(o, fresh), violations: all };
							throw new Error(last.report);
						}
						if (all.length) outcome.repeats++;
					}),
					{
						seed: seed + k,
						numRuns: runs - outcome.runs,
						...(left < Infinity ? { interruptAfterTimeLimit: left } : {}),
					},
				);
				outcome.runs += details.numRuns;
				if (!details.failed) break;
				const scenario = details.counterexample?.[0] as Scenario;
				const all = last?.violations ?? [];
				// Replayed once: a counterexample that does not come back depends on timing.
				const replayed = violations(await runScenario(env, scenario));
				const example: Counterexample = {
					kind,
					scenario,
					violations: all,
					signatures: all.map((v) => signatureOf(v, scenario)),
					flaky: replayed.length === 0,
					seed: seed + k,
					path: details.counterexamplePath ?? undefined,
				};
				found.push(example);
				outcome.counterexamples++;
				console.log(
					`  COUNTEREXAMPLE ${kind} (seed ${seed + k}, path "${example.path}", after ${executed} scenarios):`,
				);
				console.log(`    ${JSON.stringify(scenario)}`);
				if (!replayed.length) console.log('    (not reproduced on replay: it depends on timing)');
				console.log(`    ${(last?.report ?? '').split('\n').join('\n    ')}`);
				if (values['stop-at-first']) break;
			}
			outcome.seconds = Math.round((realNow() - t0) / 100) / 10;
			outcomes.push(outcome);
			console.log(
				`  ${kind}: ${outcome.runs} scenarios, ${outcome.counterexamples} distinct counterexamples (${outcome.seconds} s)`,
			);
			if (values['stop-at-first'] && outcome.counterexamples) break;
		}
		const total = outcomes.reduce((n, o) => n + o.runs, 0);
		const seconds = Math.round((realNow() - started) / 100) / 10;
		console.log(
			`Generated fault sequences: ${total} scenarios, ${found.length} distinct counterexamples, seed ${seed}, ${seconds} s`,
		);
		console.log(
			`RESULT ${JSON.stringify({ seed, runs, outcomes, counterexamples: found, seconds })}`,
		);
		return found.length ? 1 : 0;
	} finally {
		await emulator.close();
		await shutdownEngine();
		restore();
	}
}

if (require.main === module) runMain(main, { label: 'bench transport-faults' });
