/**
 * The editor test's steps: what a user does with the Extraction Service node in a real n8n 2.x
 * editor, each step a test with assertions that fail when the editor shows something else.
 * scripts/editor/on-server.ts (runEditorOnServer: the standalone scripts/editor/run.ts and the
 * queue-mode e2e run) imports the fixture, starts the browser and calls {@link runEditorSteps}.
 *
 * Selectors are n8n's own `data-test-id`s (n8n-editor-ui 2.41, the same ones n8n's Playwright page
 * objects use: packages/testing/playwright/pages/**): `canvas-node[data-node-name]`, `ndv`,
 * `resource-locator-<param>`, `rlc-input-container`, `rlc-item`, `credential-edit-button`,
 * `credential-edit-dialog`, `credentials-config-container-test-success`, `ndv-close-button`.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import type { LoggedRequest } from '../../emulator';
import type { Locator, Page } from './playwright';

/** One step's outcome. */
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
	/** Where failure screenshots go. */
	failuresDir: string;
	log(line: string): void;
}

const ROOT = path.resolve(__dirname, '..', '..');

/** The schema names the emulator seeds (emulator/seed.json): the list must show exactly these. */
export function seededSchemaNames(): string[] {
	const seed = JSON.parse(readFileSync(path.join(ROOT, 'emulator', 'seed.json'), 'utf8')) as {
		schemas: Array<{ name: string }>;
	};
	return seed.schemas.map((s) => s.name).sort();
}

/** Throws `message` unless `condition` holds. */
function assert(condition: unknown, message: string): asserts condition {
	if (!condition) throw new Error(message);
}

/** Polls `probe` every 250 ms until it returns true; throws `what` after `timeoutMs`. */
async function waitUntil(
	probe: () => Promise<boolean>,
	timeoutMs: number,
	what: () => Promise<string> | string,
): Promise<void> {
	const end = Date.now() + timeoutMs;
	for (;;) {
		if (await probe().catch(() => false)) return;
		if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms: ${await what()}`);
		await new Promise((resolve) => setTimeout(resolve, 250));
	}
}

/** The innerText of a locator, '' when it is not there. */
async function textOf(locator: Locator): Promise<string> {
	return (await locator.innerText({ timeout: 2000 }).catch(() => '')).replace(/\s+/g, ' ').trim();
}

/** Emulator requests from index `from` on, matching method and path. */
function requestsSince(
	ctx: EditorStepsContext,
	from: number,
	method: string,
	pathname: string,
): LoggedRequest[] {
	return ctx.emulatorRequests.slice(from).filter((r) => r.method === method && r.path === pathname);
}

function describeRequests(requests: LoggedRequest[]): string {
	if (requests.length === 0) return 'none';
	return requests
		.map(
			(r) =>
				`${r.method} ${r.path}?${new URLSearchParams(r.query as Record<string, string>).toString()} → ${r.status}`,
		)
		.join(', ');
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

/** The open node panel (NDV). */
function ndv(ctx: EditorStepsContext): Locator {
	return ctx.page.getByTestId('ndv');
}

/** Double-clicks a node on the canvas and waits for its panel, showing `nodeName`. */
async function openNode(ctx: EditorStepsContext, nodeName: string): Promise<Locator> {
	const node = ctx.page.locator(`[data-test-id="canvas-node"][data-node-name="${nodeName}"]`);
	await node.waitFor({ state: 'visible', timeout: 60_000 });
	await node.dblclick();
	const panel = ndv(ctx);
	await panel.waitFor({ state: 'visible', timeout: 20_000 });
	await panel.getByTestId('node-parameters').first().waitFor({ state: 'visible', timeout: 20_000 });
	const title = panel.getByTestId('node-title-container').first();
	await waitUntil(
		async () => (await textOf(title)).includes(nodeName),
		10_000,
		async () => `the panel is titled "${await textOf(title)}", expected "${nodeName}"`,
	);
	return panel;
}

/**
 * Asserts the panel's Operation selector shows `operation`, and its Resource selector `resource`
 * when the panel shows one (n8n 2.41's panel leaves Resource out for this node: the resource is
 * then told by the fields only that resource has, which the steps check).
 */
async function expectResourceOperation(
	panel: Locator,
	resource: string,
	operation: string,
): Promise<void> {
	const selectorShows = async (name: string, want: string): Promise<boolean> => {
		const field = panel.getByTestId(`parameter-input-${name}`);
		return (
			(await textOf(field)).includes(want) ||
			(await field.locator('input').first().inputValue({ timeout: 2000 })).includes(want)
		);
	};
	const o = panel.getByTestId('parameter-input-operation');
	await waitUntil(
		() => selectorShows('operation', operation),
		10_000,
		async () => `Operation shows "${await textOf(o)}", expected "${operation}"`,
	);
	const r = panel.getByTestId('parameter-input-resource');
	if ((await r.count()) > 0) {
		await waitUntil(
			() => selectorShows('resource', resource),
			10_000,
			async () => `Resource shows "${await textOf(r)}", expected "${resource}"`,
		);
	}
}

/** The visible items of an open resource-locator list, their names (first line of each). */
async function listItemNames(ctx: EditorStepsContext): Promise<string[]> {
	const texts = await ctx.page.getByTestId('rlc-item').filter({ visible: true }).allInnerTexts();
	return texts.map((t) => t.split('\n')[0].trim()).filter(Boolean);
}

// ---------------------------------------------------------------------------------------------
// the steps

interface Step {
	id: string;
	name: string;
	/** Steps that must have passed for this one to run (else it fails as "not run"). */
	needs: string[];
	/** The node whose panel the step works in: {@link ensurePanel} runs first and hands it over. */
	node?: keyof EditorStepsContext['nodes'];
	run(ctx: EditorStepsContext, panel: Locator): Promise<void>;
}

/**
 * The panel of `nodeName`: an open credential dialog or resource-locator list closed (Escape), the
 * panel (and the workflow) opened when another or none is open.
 */
async function ensurePanel(ctx: EditorStepsContext, nodeName: string): Promise<Locator> {
	const { page } = ctx;
	const modal = page.getByTestId('credential-edit-dialog');
	const list = page.getByTestId('rlc-item').filter({ visible: true });
	if ((await modal.isVisible()) || (await list.count()) > 0) await page.keyboard.press('Escape');
	await modal.waitFor({ state: 'hidden', timeout: 10_000 });
	const panel = ndv(ctx);
	if (await panel.isVisible()) {
		if ((await textOf(panel.getByTestId('node-title-container').first())).includes(nodeName))
			return panel;
		await page.getByTestId('ndv-close-button').first().click();
		await panel.waitFor({ state: 'hidden', timeout: 10_000 });
	}
	const node = page.locator(`[data-test-id="canvas-node"][data-node-name="${nodeName}"]`);
	if (!(await node.isVisible()))
		await page.goto(`/workflow/${ctx.workflowId}`, { waitUntil: 'domcontentloaded' });
	return await openNode(ctx, nodeName);
}

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
			const login = page.waitForResponse(
				(r) => r.url().endsWith('/rest/login') && r.request().method() === 'POST',
				{ timeout: 30_000 },
			);
			await page.getByTestId('form-submit-button').click();
			const res = await login;
			assert(
				res.status() === 200,
				`POST /rest/login → ${res.status()}: ${(await res.text()).slice(0, 300)}`,
			);
			await page.waitForURL((u) => !u.pathname.startsWith('/signin'), { timeout: 30_000 });
		},
	},
	{
		id: 'panel',
		name: 'opens the Extraction → Create panel of a version 2 node',
		needs: ['signin'],
		node: 'extractionCreate',
		async run(_ctx, panel) {
			await expectResourceOperation(panel, 'Extraction', 'Create');
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
		node: 'extractionCreate',
		async run(ctx, panel) {
			const { page } = ctx;
			const expected = seededSchemaNames();
			const before = ctx.emulatorRequests.length;
			const field = panel.getByTestId('resource-locator-schema').getByTestId('rlc-input-container');
			await field.click();
			await waitUntil(
				async () => (await listItemNames(ctx)).length >= expected.length,
				30_000,
				async () =>
					`the list shows ${JSON.stringify(await listItemNames(ctx))} (expected ${JSON.stringify(expected)})` +
					`${(await page.getByTestId('rlc-error-container').count()) ? `, error "${await textOf(page.getByTestId('rlc-error-container').first())}"` : ''}` +
					`; list requests to the emulator: ${describeRequests(requestsSince(ctx, before, 'GET', '/schema/'))}`,
			);
			const names = (await listItemNames(ctx)).sort();
			assert(
				JSON.stringify(names) === JSON.stringify(expected),
				`the list shows ${JSON.stringify(names)}, expected exactly ${JSON.stringify(expected)}`,
			);
			const listCalls = requestsSince(ctx, before, 'GET', '/schema/');
			assert(
				listCalls.some((r) => r.status === 200),
				`no successful GET /schema/ reached the emulator while the list loaded (${describeRequests(listCalls)})`,
			);
			const item = page.getByTestId('rlc-item').filter({ hasText: expected[1] }).first();
			await docScreenshot(ctx, 'schema-list.png', item);
			// picking one fills the field and closes the list
			const name = 'Invoice';
			await page
				.getByTestId('rlc-item')
				.filter({ visible: true })
				.getByText(name, { exact: true })
				.first()
				.click();
			const input = field.locator('input').first();
			await waitUntil(
				async () => (await input.inputValue()) === name,
				10_000,
				async () => `the Schema field shows "${await input.inputValue()}", expected "${name}"`,
			);
			await waitUntil(
				async () => (await page.getByTestId('rlc-item').filter({ visible: true }).count()) === 0,
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
		node: 'extractionCreate',
		async run(ctx, panel) {
			const { page } = ctx;
			await panel.getByTestId('credential-edit-button').first().click();
			const modal = page.getByTestId('credential-edit-dialog');
			await modal.waitFor({ state: 'visible', timeout: 15_000 });
			// the name sits in the dialog's header, outside the body that carries credential-edit-dialog
			const dialog = page.locator('.el-dialog:has([data-test-id="credential-edit-dialog"])');
			const nameField = dialog.getByTestId('credential-name');
			const shownName = async (): Promise<string> =>
				(await textOf(nameField)) ||
				(await nameField
					.locator('input')
					.first()
					.inputValue({ timeout: 1000 })
					.catch(() => ''));
			await waitUntil(
				async () => (await shownName()) === ctx.tokenCredentialName,
				10_000,
				async () =>
					`the credential modal is for "${await shownName()}", expected "${ctx.tokenCredentialName}"`,
			);
			const success = modal.getByTestId('credentials-config-container-test-success');
			const failed = modal.getByText(/Couldn.t connect with these settings/).first();
			// n8n tests an existing credential as soon as its modal opens: wait for that result first
			await waitUntil(
				async () => (await success.isVisible()) || (await failed.isVisible()),
				30_000,
				async () =>
					`no test result in the credential modal: ${(await textOf(modal)).slice(0, 400)}`,
			);
			const before = ctx.emulatorRequests.length;
			const testCall = page.waitForResponse(
				(r) => r.url().endsWith('/rest/credentials/test') && r.request().method() === 'POST',
				{ timeout: 30_000 },
			);
			// 2.41's Test button: "Retry" ("Retry credential test") in the banner with the last result
			const button = modal
				.getByRole('button', { name: /^Retry$/ })
				.filter({ visible: true })
				.first();
			await button.click();
			const res = await testCall;
			const body = await res.text();
			assert(
				res.status() === 200,
				`POST /rest/credentials/test → ${res.status()}: ${body.slice(0, 300)}`,
			);
			const result = (JSON.parse(body) as { data?: { status?: string; message?: string } }).data;
			const tests = requestsSince(ctx, before, 'GET', '/schema/').filter(
				(r) => r.query.size === '1',
			);
			assert(
				result?.status === 'OK',
				`n8n's credential test answered ${JSON.stringify(result)}; the emulator got ${describeRequests(tests)}`,
			);
			await success.waitFor({ state: 'visible', timeout: 15_000 });
			const bannerText = await textOf(success);
			assert(
				/Connection tested successfully/.test(bannerText),
				`the banner says "${bannerText}", expected "Connection tested successfully"`,
			);
			assert(
				tests.some((r) => r.status === 200),
				`the test's GET /schema/?page=1&size=1 did not reach the emulator with 200 (${describeRequests(tests)})`,
			);
			// the button shows "Retrying" while n8n tests; the picture wants it back at rest
			await waitUntil(
				async () => (await textOf(button)) === 'Retry',
				10_000,
				async () => `the Test button shows "${await textOf(button)}"`,
			);
			await docScreenshot(ctx, 'credential-test.png');
			await page.keyboard.press('Escape');
			await modal.waitFor({ state: 'hidden', timeout: 10_000 });
		},
	},
	{
		id: 'extract',
		name: 'opens the Extract → Create panel (API key credential, Schema ID)',
		needs: ['signin'],
		node: 'extractCreate',
		async run(ctx, panel) {
			await expectResourceOperation(panel, 'Extract', 'Create');
			const schemaId = panel.getByTestId('parameter-input-schemaId').locator('input').first();
			await waitUntil(
				async () => (await schemaId.inputValue()) === '3f0c1a52-7d4e-4c1b-9a51-2b6f0e8d9c41',
				10_000,
				async () => `Schema ID shows "${await schemaId.inputValue()}"`,
			);
			const credential = await textOf(panel.getByTestId('node-credentials-select').first());
			const credentialInput = await panel
				.getByTestId('node-credentials-select')
				.locator('input')
				.first()
				.inputValue({ timeout: 2000 })
				.catch(() => '');
			assert(
				`${credential} ${credentialInput}`.includes('Extraction Service API'),
				`the panel's credential shows "${credential || credentialInput}", expected "Extraction Service API"`,
			);
			await docScreenshot(ctx, 'node-extract-create.png');
		},
	},
];

/** The steps' names, in order (a run that cannot start reports each as not run). */
export function editorStepNames(): string[] {
	return steps.map((s) => s.name);
}

function slug(text: string): string {
	return text
		.toLowerCase()
		.replace(/[^a-z0-9]+/g, '-')
		.replace(/^-|-$/g, '')
		.slice(0, 60);
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
		const missing = step.needs.filter((id) => !passed.has(id));
		if (missing.length > 0) {
			const names = missing.map((id) => `"${steps.find((s) => s.id === id)?.name ?? id}"`);
			results.push({
				name: step.name,
				ok: false,
				ms: 0,
				message: `not run: ${names.join(', ')} failed`,
			});
			continue;
		}
		const t0 = Date.now();
		try {
			await step.run(ctx, step.node ? await ensurePanel(ctx, ctx.nodes[step.node]) : ndv(ctx));
			passed.add(step.id);
			results.push({ name: step.name, ok: true, ms: Date.now() - t0 });
		} catch (err) {
			const result: StepResult = {
				name: step.name,
				ok: false,
				ms: Date.now() - t0,
				message: (err as Error).message.split('\n').slice(0, 12).join('\n'),
			};
			try {
				mkdirSync(ctx.failuresDir, { recursive: true });
				result.failureScreenshot = path.join(
					ctx.failuresDir,
					`failed-${i + 1}-${slug(step.name)}.png`,
				);
				await ctx.page.screenshot({ path: result.failureScreenshot, timeout: 10_000 });
			} catch {
				result.failureScreenshot = undefined;
			}
			results.push(result);
		}
	}
	return results;
}
