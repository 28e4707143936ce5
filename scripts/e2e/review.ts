/**
 * The person in the loop of the end-to-end run's `review` phase (scripts/e2e/run.ts, the workflow
 * examples/workflows/e2e-email-review-to-postgres.json): reads the reviewer's mailbox over IMAP as
 * a mail client would, opens each review mail's link (n8n's Send and Wait form, GET), completes
 * the fields the service could not read from what the document says, and sends the form (POST,
 * multipart, as the form page's script does). What it saw and answered is kept for the checks.
 */
import { buffer } from 'node:stream/consumers';

import type { ImapFlow, MessageStructureObject } from 'imapflow';

import type { EmulatorProcess } from '../../emulator/launch';
import type { Checks } from '../lib/checks';
import { sleep } from '../lib/processes';
import { emulatorCall, SEEDED_INVOICE_SCHEMA } from '../n8n/examples';
import { CHECKED_FIELDS, extracted, LABELS, type PlannedDocument as Document } from './mail';

/** One form field as the page shows it. */
interface FormField {
	name: string;
	label: string;
	value: string;
	required: boolean;
}

/** One review mail and what the person did with it. */
interface Review {
	subject: string;
	/** The document the mail names (by file name and the invoice mail's subject). */
	doc?: Document;
	fields: FormField[];
	/** `GET status, POST status`. */
	statuses: string;
}

/** `&amp;` and the other escapes of Handlebars (n8n renders the form with it) back to text. */
const unescapeHtml = (s: string): string =>
	s.replace(/&(amp|lt|gt|quot|#x27|#x60|#x3D);/g, (_, e: string) =>
		String.fromCharCode(
			{ amp: 38, lt: 60, gt: 62, quot: 34, '#x27': 39, '#x60': 96, '#x3D': 61 }[e] ?? 63,
		),
	);

/** The fields of n8n's form page (templates/form-trigger.handlebars: a label, then its input). */
function formFields(html: string): FormField[] {
	return [
		...html.matchAll(/<label class='form-label ([^']*)' for='(field-\d+)'>([^<]*)<\/label>/g),
	].map(([, cls, name, label]) => ({
		name,
		label: unescapeHtml(label.trim()),
		value: unescapeHtml(new RegExp(`name='${name}'\\s+value="([^"]*)"`).exec(html)?.[1] ?? ''),
		required: cls.split(' ').includes('form-required'),
	}));
}

/** The MIME part number of a message's text/html body. */
function htmlPart(node: MessageStructureObject): string | undefined {
	if (node.type === 'text/html') return node.part ?? '1';
	for (const child of node.childNodes ?? []) {
		const part = htmlPart(child);
		if (part) return part;
	}
	return undefined;
}

/**
 * The review flow's schema: the emulator's seeded Invoice schema with the checked fields
 * `required` (POST /schema/, §unversioned-4.6), so that Check Against Schema calls a document
 * without one of them incomplete.
 */
export async function createReviewSchema(emulator: EmulatorProcess): Promise<string> {
	const seeded = await emulatorCall(emulator, 'GET', `/schema/${SEEDED_INVOICE_SCHEMA}/`, 200);
	const created = await emulatorCall(emulator, 'POST', '/schema/', 201, {
		name: 'Invoice (review)',
		description: 'Main fields of an invoice; number, total and currency required',
		schema: { ...(seeded.schema as object), required: CHECKED_FIELDS },
	});
	if (typeof created.id !== 'string' || !created.id)
		throw new Error(`POST /schema/ → 201 without an id: ${JSON.stringify(created).slice(0, 300)}`);
	return created.id;
}

/** Deletes the review flow's schema (DELETE /schema/:id/, §unversioned-4.9): the emulator's schemas as seeded again. */
export async function deleteReviewSchema(emulator: EmulatorProcess, id: string): Promise<void> {
	await emulatorCall(emulator, 'DELETE', `/schema/${id}/`, 204);
}

/**
 * Starts answering the review mails that arrive in `box`'s INBOX (polled every 500 ms) for the
 * documents of `docs`: each field the service could not read gets what the document says, the
 * rest is sent as prefilled.
 *
 * @returns `stop()`: waits for the answer in progress, logs out; resolves with every review
 */
export function startReviewer(
	box: ImapFlow,
	docs: Document[],
): { reviews: Review[]; stop(): Promise<Review[]> } {
	const reviews: Review[] = [];
	let stopped = false;
	const answer = async (uid: number): Promise<void> => {
		const byUid = { uid: true };
		const msg = await box.fetchOne(String(uid), { envelope: true, bodyStructure: true }, byUid);
		if (!msg) return;
		const subject = msg.envelope?.subject ?? '';
		const part = msg.bodyStructure ? htmlPart(msg.bodyStructure) : undefined;
		const { content } = await box.download(String(uid), part, byUid);
		const html = content ? (await buffer(content)).toString('utf8') : '';
		const link = unescapeHtml(/href="([^"]*\/webhook-waiting\/[^"]*)"/.exec(html)?.[1] ?? '');
		const doc = docs.find(
			(x) => subject.includes(x.attachment.fileName) && subject.includes(x.mail.subject),
		);
		const review: Review = { subject, doc, fields: [], statuses: '' };
		reviews.push(review);
		await box.messageFlagsAdd(String(uid), ['\\Seen'], byUid);
		if (!link) return;
		const headers = { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) e2e-reviewer' };
		const signal = (): AbortSignal => AbortSignal.timeout(30_000);
		try {
			const page = await fetch(link, { headers, signal: signal() });
			review.fields = formFields(await page.text());
			const form = new FormData();
			for (const f of review.fields) {
				const field = CHECKED_FIELDS.find((k) => LABELS[k] === f.label);
				const invoice = doc?.attachment.invoice;
				form.append(f.name, f.value || !field || !invoice ? f.value : String(invoice[field]));
			}
			const sent = await fetch(link, { method: 'POST', body: form, headers, signal: signal() });
			await sent.text();
			review.statuses = `GET ${page.status}, POST ${sent.status}`;
		} catch (err) {
			review.statuses = `failed: ${(err as Error).message}`;
		}
	};
	const loop = (async () => {
		await box.mailboxOpen('INBOX');
		while (!stopped) {
			for (const uid of (await box.search({ seen: false }, { uid: true })) || []) await answer(uid);
			await sleep(500);
		}
	})();
	return {
		reviews,
		async stop() {
			stopped = true;
			await loop;
			await box.logout();
			return reviews;
		},
	};
}

/**
 * The review phase's own checks: a review mail for exactly the documents with a field the service
 * could not read, one each; its form lists the checked fields, required, prefilled with what was
 * extracted; every answer accepted.
 */
export function checkReviews(check: Checks['check'], docs: Document[], reviews: Review[]): void {
	const needed = docs.filter((x) => x.attachment.unreadable.length > 0);
	const unknown = reviews.filter((r) => !r.doc);
	const twice = reviews.filter((r, i) => r.doc && reviews.findIndex((o) => o.doc === r.doc) !== i);
	const notAsked = needed.filter((x) => !reviews.some((r) => r.doc === x));
	const notNeeded = reviews.filter((r) => r.doc && r.doc.attachment.unreadable.length === 0);
	check(
		'review: one review mail for each incomplete document, none for a complete one',
		unknown.length + twice.length + notAsked.length + notNeeded.length === 0,
		`${reviews.length} review mails for ${needed.length} incomplete documents; ${notAsked.length} not asked, ${twice.length} twice, ${notNeeded.length} for a complete document, ${unknown.length} naming no planned document${unknown.length ? ` (e.g. "${unknown[0].subject}")` : ''}`,
	);
	const wrongForms = reviews.filter((r) => {
		const seen = r.doc ? extracted(r.doc.attachment) : undefined;
		return CHECKED_FIELDS.some((f) => {
			const field = r.fields.find((x) => x.label === LABELS[f]);
			return !field?.required || field.value !== String(seen?.[f] ?? '');
		});
	});
	check(
		'review: each form lists the checked fields, required, prefilled with what was extracted (the unreadable ones empty)',
		reviews.length > 0 && wrongForms.length === 0,
		wrongForms.length
			? `${wrongForms.length} forms differ, e.g. ${wrongForms[0].subject}: ${JSON.stringify(wrongForms[0].fields)}`
			: `${reviews.length} forms, ${reviews[0]?.fields.length ?? 0} fields each (${reviews[0]?.fields.map((f) => `${f.label}${f.required ? '*' : ''}`).join(', ')})`,
	);
	const refused = reviews.filter((r) => r.statuses !== 'GET 200, POST 200');
	const why = (r: Review): string => `${r.subject} ${r.statuses || 'no form link in the mail'}`;
	check(
		'review: every form opened from its mail and was accepted',
		refused.length === 0,
		refused.length
			? `${refused.length} not: ${refused.slice(0, 3).map(why).join('; ')}`
			: `${reviews.length} × GET 200, POST 200 on main's /webhook-waiting/<execution>/<node> (signed link)`,
	);
}
