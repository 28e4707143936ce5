/**
 * The named checks of an end-to-end runner: each printed as it is made (`PASS name: detail`), then
 * counted in one summary line.
 */
export interface CheckResult {
	name: string;
	ok: boolean;
	detail: string;
}

export class Checks {
	readonly results: CheckResult[] = [];

	/** Records and prints one check; returns whether it passed. */
	check(name: string, ok: boolean, detail: string): boolean {
		this.results.push({ name, ok, detail });
		console.log(`${ok ? 'PASS' : 'FAIL'} ${name}: ${detail}`);
		return ok;
	}

	/** The checks that failed. */
	get failed(): CheckResult[] {
		return this.results.filter((r) => !r.ok);
	}

	/** `checks: N passed, M failed` (`(names)` of the failed ones with `names`), then `suffix`. */
	summary(suffix = '', names = false): string {
		const failed = this.failed;
		const which = names && failed.length ? ` (${failed.map((f) => f.name).join('; ')})` : '';
		return `checks: ${this.results.length - failed.length} passed, ${failed.length} failed${which}${suffix}`;
	}
}
