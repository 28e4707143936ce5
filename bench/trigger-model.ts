/**
 * Measure 8 of `npm run bench` (issue 31): the trigger's model-based test (test/helpers/trigger-model.ts)
 * run on many generated histories per event, with a random seed printed so that a failure can be
 * replayed. Each history runs a fresh emulator in this process on a simulated clock, and the trigger
 * through n8n-core's poll path (`createTriggerHarness`).
 *
 * Run alone: `npx tsx bench/trigger-model.ts [--profile ordinary|hostile|hostile:<behaviour>]
 * [--runs 200] [--seed S] [--path P --replay-path R] [--events extractionFinished,parsingFailed,…] [--keep-going]
 * [--time-limit seconds per event]`. `hostile:<behaviour>` is the ordinary profile with one hostile
 * behaviour added (batch, orders, alternate, smallPages, countCap, countOff, largePages,
 * ignoreDates, noDates, late, faults, stuck, filterEdit, big).
 * `--seed`, `--path` and `--replay-path` replay one failure as printed (with one event in `--events`).
 * It prints one line per event, the shrunk counterexample of each failure, a closing line with the
 * seed and the count, and a `RESULT {json}` line (for bench/run.ts).
 */
import fc from 'fast-check';

import { shutdownEngine } from '../scripts/engine';
import { numberFlag, readArgs, usageError } from '../scripts/lib/args';
import { runMain } from '../scripts/lib/processes';
import {
	EVENT_NAMES,
	PROFILES,
	historyProperty,
	installSimulatedTime,
	type EventName,
} from '../test/helpers/trigger-model';

const realNow = Date.now.bind(Date);

interface EventOutcome {
	event: EventName;
	runs: number;
	failed: boolean;
	seed: number;
	path?: string;
	/** The commands' own replay hint (fc.commands' `replayPath`). */
	replayPath?: string;
	counterexample?: string;
	error?: string;
	seconds: number;
}

async function main(): Promise<number> {
	const text = { type: 'string' } as const;
	const { values } = readArgs(__filename, {
		profile: text,
		runs: text,
		seed: text,
		path: text,
		'replay-path': text,
		events: text,
		'time-limit': text,
		'keep-going': { type: 'boolean' },
	});
	const profile = PROFILES[values.profile ?? 'ordinary'];
	if (!profile) usageError(`--profile: one of ${Object.keys(PROFILES).join(', ')}`);
	const runs = numberFlag('--runs', values.runs, 200, 1, true);
	const timeLimit = numberFlag('--time-limit', values['time-limit'], 0, 0);
	const seed = numberFlag('--seed', values.seed, Math.floor(Math.random() * 2 ** 31), 0, true);
	const events = (values.events ?? EVENT_NAMES.join(','))
		.split(',')
		.map((e) => e.trim()) as EventName[];
	for (const event of events)
		if (!EVENT_NAMES.includes(event)) usageError(`--events: ${event} is not one of ${EVENT_NAMES}`);
	const restore = installSimulatedTime();
	const started = realNow();
	console.log(
		`== Measure 8: the trigger's model-based test, profile ${profile.name}, ${runs} histories per event, seed ${seed}`,
	);
	const outcomes: EventOutcome[] = [];
	try {
		for (const event of events) {
			const t0 = realNow();
			const details = await fc.check(historyProperty(profile, event, values['replay-path']), {
				seed,
				numRuns: runs,
				...(values.path ? { path: values.path } : {}),
				// Per event, shrinking included (a failure found is kept, shrunk as far as time allowed).
				...(timeLimit > 0 ? { interruptAfterTimeLimit: timeLimit * 1000 } : {}),
			});
			const outcome: EventOutcome = {
				event,
				runs: details.numRuns,
				failed: details.failed,
				seed,
				seconds: Math.round((realNow() - t0) / 100) / 10,
			};
			if (details.failed) {
				outcome.path = details.counterexamplePath ?? undefined;
				outcome.counterexample = fc.stringify(details.counterexample);
				outcome.replayPath = /replayPath="([^"]*)"/.exec(outcome.counterexample)?.[1];
				outcome.error = String((details.errorInstance as Error | undefined)?.message ?? '');
			}
			outcomes.push(outcome);
			console.log(
				`  ${event}: ${outcome.failed ? `FAILED after ${outcome.runs} histories` : `${outcome.runs} histories, 0 failures`} (${outcome.seconds} s)`,
			);
			if (outcome.failed) {
				console.log(
					`    replay: --profile ${profile.name} --events ${event} --seed ${seed} --path "${outcome.path}" --replay-path "${outcome.replayPath}"`,
				);
				console.log(`    history: ${outcome.counterexample}`);
				console.log(`    ${(outcome.error ?? '').split('\n').join('\n    ')}`);
				if (!values['keep-going']) break;
			}
		}
	} finally {
		restore();
		await shutdownEngine();
	}
	const total = outcomes.reduce((n, o) => n + o.runs, 0);
	const failures = outcomes.filter((o) => o.failed).length;
	const seconds = Math.round((realNow() - started) / 100) / 10;
	console.log(
		`Measure 8: ${total} histories (${profile.name}), ${failures} failing events, seed ${seed}, ${seconds} s`,
	);
	console.log(`RESULT ${JSON.stringify({ profile: profile.name, seed, runs, outcomes, seconds })}`);
	return failures > 0 ? 1 : 0;
}

if (require.main === module) runMain(main, { label: 'bench trigger-model' });
