/**
 * The editor test's steps: what a user does with the Extraction Service node in a real n8n 2.x
 * editor, each a test that fails when the editor shows something else. runEditorOnServer
 * (on-server.ts) starts the browser and calls {@link runEditorSteps}. Selectors are n8n's own
 * `data-test-id`s (n8n-editor-ui 2.41, as n8n's Playwright page objects use them).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import type { LoggedRequest } from '../../emulator';
import { ROOT, waitUntil } from '../lib/processes';
import { requestLine, SEEDED_INVOICE_SCHEMA } from '../n8n/examples';
import { expectTrue as assert } from '../n8n/n8n-run';
import type { Locator, Page } from './playwright';

export interface StepResult {
	name: string;
	ok: boolean;
	ms: number;
	message?: string;
	/** A screenshot taken when the step failed. */
	failureScreenshot?: string;
}

/** What the steps need to know about the running servers and where pictures go. */
export interface EditorStepsContext {
	page: Page;
	owner: { email: string; password: string };
	workflowId: string;
	/** The node doing Extraction → Create (token credential) and the one doing Extract → Create (API key). */
	nodes: { extractionCreate: string; extractCreate: string };
	/** The token credential's name, as imported. */
	tokenCredentialName: string;
	/** The emulator's request log (grows while the steps run). */
	emulatorRequests: LoggedRequest[];
	/** Where the documentation screenshots go (docs/images/); undefined: none taken. */
	screenshotsDir?: string;
	failuresDir: string;
	log(line: string): void;
}

/** The schema names the emulator seeds (emulator/seed.json): the list must show exactly these. */
function seededSchemaNames(): string[] {
	const seed = JSON.parse(readFileSync(path.join(ROOT, 'emulator', 'seed.json'), 'utf8')) as {
		schemas: Array<{ name: string }>;
	};
	return seed.schemas.map((s) => s.name).sort();
}

/** Polls `probe` every 250 ms until it holds; after `timeoutMs` throws with `what()`. */
const until = (
	probe: () => Promise<boolean>,
	timeoutMs: number,
	what: () => Promise<string> | string,
) => waitUntil('the page', timeoutMs, probe, 250, what);

/**
 * Waits until `read()` gives `want` (with `includes`: a text that contains it); else fails with
 * `what shows "…", expected "…"`.
 */
async function untilShows(
	what: string,
	read: () => Promise<string>,
	want: string,
	includes = false,
): Promise<void> {
	const ok = (text: string): boolean => (includes ? text.includes(want) : text === want);
	const detail = async () => `${what} shows "${await read()}", expected "${want}"`;
	await until(async () => ok(await read()), 10_000, detail);
}

/** The innerText of a locator, '' when it is not there. */
async function textOf(locator: Locator): Promise<string> {
	return (await locator.innerText({ timeout: 2000 }).catch(() => '')).replace(/\s+/g, ' ').trim();
}

/** What a field shows: its text, else (or, with `both`, and) the value of its first input. */
async function shown(field: Locator, both = false): Promise<string> {
	const text = await textOf(field);
	if (text && !both) return text;
	const input = field.locator('input').first();
	const value = await input.inputValue({ timeout: 2000 }).catch(() => '');
	return `${text} ${value}`.trim();
}

/** The emulator's `GET /schema/` requests from index `from` on (of page `size`), and them in one line. */
function schemaRequests(
	ctx: EditorStepsContext,
	from: number,
	size?: string,
): [LoggedRequest[], string] {
	const list = ctx.emulatorRequests
		.slice(from)
		.filter((r) => r.method === 'GET' && r.path === '/schema/' && (!size || r.query.size === size));
	return [list, list.map(requestLine).join(', ') || 'none'];
}

/** A documentation screenshot of the viewport, the mouse on `hover` or else parked on the canvas edge. */
async function docScreenshot(
	ctx: EditorStepsContext,
	file: string,
	hover?: Locator,
): Promise<void> {
	if (!ctx.screenshotsDir) return;
	await (hover ? hover.hover() : ctx.page.mouse.move(2, 2));
	await ctx.page.waitForTimeout(300); // a tooltip fades
	mkdirSync(ctx.screenshotsDir, { recursive: true });
	const target = path.join(ctx.screenshotsDir, file);
	await ctx.page.screenshot({ path: target, animations: 'disabled' });
	ctx.log(`  screenshot ${path.relative(ROOT, target)}`);
}

/**
 * Asserts the panel's Operation selector shows `operation`, and its Resource selector `resource`
 * when there is one (2.41's panel leaves Resource out for this node: the steps check the fields
 * only that resource has).
 */
async function expectResourceOperation(panel: Locator, resource: string, operation: string) {
	const field = (name: string): Locator => panel.getByTestId(`parameter-input-${name}`);
	await untilShows('Operation', () => shown(field('operation'), true), operation, true);
	if ((await field('resource').count()) > 0)
		await untilShows('Resource', () => shown(field('resource'), true), resource, true);
}

/** Clicks `button`; the body of the `POST <route>` that causes, which must answer 200. */
async function postBy(page: Page, route: string, button: Locator): Promise<string> {
	const answer = page.waitForResponse(
		(r) => r.url().endsWith(route) && r.request().method() === 'POST',
		{ timeout: 30_000 },
	);
	await button.click();
	const res = await answer;
	const body = await res.text();
	assert(res.status() === 200, `POST ${route} → ${res.status()}: ${body.slice(0, 300)}`);
	return body;
}

const listItems = (page: Page): Locator => page.getByTestId('rlc-item').filter({ visible: true });

/** The names of the visible list items (first line of each). */
async function listItemNames(page: Page): Promise<string[]> {
	const texts = await listItems(page).allInnerTexts();
	return texts.map((t) => t.split('\n')[0].trim()).filter(Boolean);
}

interface Step {
	id: string;
	name: string;
	/** Steps that must have passed for this one to run (else it fails as "not run"). */
	needs: string[];
	/** The panel the step works in ({@link ensurePanel}), checked to show this resource and operation. */
	panel?: { node: keyof EditorStepsContext['nodes']; resource: string; operation: string };
	run(ctx: EditorStepsContext, panel: Locator): Promise<void>;
}

/**
 * The panel of `nodeName`: an open credential dialog or resource-locator list closed (Escape), the
 * panel (and the workflow) opened (a double-click on the canvas node) when another or none is open.
 */
async function ensurePanel(ctx: EditorStepsContext, nodeName: string): Promise<Locator> {
	const { page } = ctx;
	const modal = page.getByTestId('credential-edit-dialog');
	if ((await modal.isVisible()) || (await listItems(page).count()) > 0)
		await page.keyboard.press('Escape');
	await modal.waitFor({ state: 'hidden', timeout: 10_000 });
	const panel = page.getByTestId('ndv');
	if (await panel.isVisible()) {
		if ((await textOf(panel.getByTestId('node-title-container').first())).includes(nodeName))
			return panel;
		await page.getByTestId('ndv-close-button').first().click();
		await panel.waitFor({ state: 'hidden', timeout: 10_000 });
	}
	const node = page.locator(`[data-test-id="canvas-node"][data-node-name="${nodeName}"]`);
	if (!(await node.isVisible()))
		await page.goto(`/workflow/${ctx.workflowId}`, { waitUntil: 'domcontentloaded' });
	await node.waitFor({ state: 'visible', timeout: 60_000 });
	await node.dblclick();
	await panel.waitFor({ state: 'visible', timeout: 20_000 });
	await panel.getByTestId('node-parameters').first().waitFor({ state: 'visible', timeout: 20_000 });
	const title = panel.getByTestId('node-title-container').first();
	await untilShows("the panel's title", () => textOf(title), nodeName, true);
	return panel;
}

const EXTRACTION_CREATE = {
	node: 'extractionCreate',
	resource: 'Extraction',
	operation: 'Create',
} as const;

const steps: Step[] = [
	{
		id: 'signin',
		name: 'signs in to n8n as the owner',
		needs: [],
		async run(ctx) {
			const { page } = ctx;
			await page.goto('/signin', { waitUntil: 'domcontentloaded' });
			await page.getByTestId('emailOrLdapLoginId').locator('input').fill(ctx.owner.email);
			await page.getByTestId('password').locator('input').fill(ctx.owner.password);
			await postBy(page, '/rest/login', page.getByTestId('form-submit-button'));
			await page.waitForURL((u) => !u.pathname.startsWith('/signin'), { timeout: 30_000 });
		},
	},
	{
		id: 'panel',
		name: 'opens the Extraction → Create panel of a version 2 node',
		needs: ['signin'],
		panel: EXTRACTION_CREATE,
		async run(_ctx, panel) {
			await panel
				.getByTestId('resource-locator-schema')
				.waitFor({ state: 'visible', timeout: 10_000 });
			// node version 2 has an "Execution Settings" collection (version 1 kept them in Options)
			const settings = panel.getByText('Execution Settings', { exact: true });
			assert(
				(await settings.count()) > 0,
				'no "Execution Settings" in the panel: is the node version 2?',
			);
		},
	},
	{
		id: 'list',
		name: "the Schema list shows the emulator's schemas; picking one fills the Schema field",
		needs: ['panel'],
		panel: EXTRACTION_CREATE,
		async run(ctx, panel) {
			const { page } = ctx;
			const expected = seededSchemaNames();
			const before = ctx.emulatorRequests.length;
			const field = panel.getByTestId('resource-locator-schema').getByTestId('rlc-input-container');
			await field.click();
			await until(
				async () => (await listItemNames(page)).length >= expected.length,
				30_000,
				async () =>
					`the list shows ${JSON.stringify(await listItemNames(page))} (expected ${JSON.stringify(expected)})` +
					`${(await page.getByTestId('rlc-error-container').count()) ? `, error "${await textOf(page.getByTestId('rlc-error-container').first())}"` : ''}` +
					`; list requests to the emulator: ${schemaRequests(ctx, before)[1]}`,
			);
			const names = (await listItemNames(page)).sort();
			assert(
				JSON.stringify(names) === JSON.stringify(expected),
				`the list shows ${JSON.stringify(names)}, expected exactly ${JSON.stringify(expected)}`,
			);
			const [listCalls, described] = schemaRequests(ctx, before);
			assert(
				listCalls.some((r) => r.status === 200),
				`no successful GET /schema/ reached the emulator while the list loaded (${described})`,
			);
			const item = page.getByTestId('rlc-item').filter({ hasText: expected[1] }).first();
			await docScreenshot(ctx, 'schema-list.png', item);
			// picking one fills the field and closes the list
			const name = 'Invoice';
			await listItems(page).getByText(name, { exact: true }).first().click();
			const input = field.locator('input').first();
			await untilShows('the Schema field', () => input.inputValue(), name);
			await until(
				async () => (await listItems(page).count()) === 0,
				10_000,
				() => 'the list stayed open after the pick',
			);
			await docScreenshot(ctx, 'node-extraction-create.png');
		},
	},
	{
		id: 'credential',
		name: 'the credential Test reports "Connection tested successfully"',
		needs: ['panel'],
		panel: EXTRACTION_CREATE,
		async run(ctx, panel) {
			const { page } = ctx;
			await panel.getByTestId('credential-edit-button').first().click();
			const modal = page.getByTestId('credential-edit-dialog');
			await modal.waitFor({ state: 'visible', timeout: 15_000 });
			// the name sits in the dialog's header, outside the body that carries credential-edit-dialog
			const dialog = page.locator('.el-dialog:has([data-test-id="credential-edit-dialog"])');
			const nameField = dialog.getByTestId('credential-name');
			await untilShows('the credential modal', () => shown(nameField), ctx.tokenCredentialName);
			const success = modal.getByTestId('credentials-config-container-test-success');
			const failed = modal.getByText(/Couldn.t connect with these settings/).first();
			// n8n tests an existing credential as soon as its modal opens: wait for that result first
			await until(
				async () => (await success.isVisible()) || (await failed.isVisible()),
				30_000,
				async () =>
					`no test result in the credential modal: ${(await textOf(modal)).slice(0, 400)}`,
			);
			const before = ctx.emulatorRequests.length;
			// 2.41's Test button: "Retry" ("Retry credential test") in the banner with the last result
			const button = modal
				.getByRole('button', { name: /^Retry$/ })
				.filter({ visible: true })
				.first();
			const body = await postBy(page, '/rest/credentials/test', button);
			const result = (JSON.parse(body) as { data?: { status?: string; message?: string } }).data;
			const [tests, testsSeen] = schemaRequests(ctx, before, '1');
			assert(
				result?.status === 'OK',
				`n8n's credential test answered ${JSON.stringify(result)}; the emulator got ${testsSeen}`,
			);
			await success.waitFor({ state: 'visible', timeout: 15_000 });
			const bannerText = await textOf(success);
			assert(
				/Connection tested successfully/.test(bannerText),
				`the banner says "${bannerText}", expected "Connection tested successfully"`,
			);
			assert(
				tests.some((r) => r.status === 200),
				`the test's GET /schema/?page=1&size=1 did not reach the emulator with 200 (${testsSeen})`,
			);
			// the button shows "Retrying" while n8n tests; the picture wants it back at rest
			await untilShows('the Test button', () => textOf(button), 'Retry');
			await docScreenshot(ctx, 'credential-test.png');
			await page.keyboard.press('Escape');
			await modal.waitFor({ state: 'hidden', timeout: 10_000 });
		},
	},
	{
		id: 'extract',
		name: 'opens the Extract → Create panel (API key credential, Schema ID)',
		needs: ['signin'],
		panel: { node: 'extractCreate', resource: 'Extract', operation: 'Create' },
		async run(ctx, panel) {
			const schemaId = panel.getByTestId('parameter-input-schemaId').locator('input').first();
			await untilShows('Schema ID', () => schemaId.inputValue(), SEEDED_INVOICE_SCHEMA);
			const credential = await shown(panel.getByTestId('node-credentials-select').first(), true);
			assert(
				credential.includes('Extraction Service API'),
				`the panel's credential shows "${credential}", expected "Extraction Service API"`,
			);
			await docScreenshot(ctx, 'node-extract-create.png');
		},
	},
];

/** The steps' names, in order (a run that cannot start reports each as not run). */
export function editorStepNames(): string[] {
	return steps.map((s) => s.name);
}

/**
 * Runs the steps in order. A step that fails gets a screenshot in `failuresDir`; a step whose
 * prerequisite failed fails as "not run" (the credential test only needs the panel, not the list).
 *
 * @returns one result per step
 */
export async function runEditorSteps(ctx: EditorStepsContext): Promise<StepResult[]> {
	const results: StepResult[] = [];
	const passed = new Set<string>();
	for (const [i, step] of steps.entries()) {
		const missing = steps.filter((s) => step.needs.includes(s.id) && !passed.has(s.id));
		if (missing.length > 0) {
			const message = `not run: ${missing.map((s) => `"${s.name}"`).join(', ')} failed`;
			results.push({ name: step.name, ok: false, ms: 0, message });
			continue;
		}
		const t0 = Date.now();
		try {
			const p = step.panel;
			const panel = p ? await ensurePanel(ctx, ctx.nodes[p.node]) : ctx.page.getByTestId('ndv');
			if (p) await expectResourceOperation(panel, p.resource, p.operation);
			await step.run(ctx, panel);
			passed.add(step.id);
			results.push({ name: step.name, ok: true, ms: Date.now() - t0 });
		} catch (err) {
			const message = (err as Error).message.split('\n').slice(0, 12).join('\n');
			const slug = step.name
				.toLowerCase()
				.replace(/[^a-z0-9]+/g, '-')
				.slice(0, 60);
			let failureScreenshot: string | undefined;
			try {
				mkdirSync(ctx.failuresDir, { recursive: true });
				failureScreenshot = path.join(ctx.failuresDir, `failed-${i + 1}-${slug}.png`);
				await ctx.page.screenshot({ path: failureScreenshot, timeout: 10_000 });
			} catch {
				failureScreenshot = undefined;
			}
			results.push({ name: step.name, ok: false, ms: Date.now() - t0, message, failureScreenshot });
		}
	}
	return results;
}
