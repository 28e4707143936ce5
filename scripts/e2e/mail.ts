/**
 * The mails of the end-to-end run (scripts/e2e/run.ts): a deterministic plan of invoice mails with
 * 0–3 document attachments each (real PDFs from emulator/sample-pdf.ts and real PNG scans) mixed
 * with attachments the workflow must skip (a notes .txt, a tiny signature.png), and the MIME text
 * of each mail (nodemailer's MailComposer). Dovecot receives them over imapflow (services.ts).
 */
import { crc32, deflateSync } from 'node:zlib';

import MailComposer from 'nodemailer/lib/mail-composer';

import { makePdf } from '../../emulator/sample-pdf';
import { seededRandom } from '../lib/random';

/** The fields of the Invoice schemas the run checks (and the review schema requires). */
export const CHECKED_FIELDS = ['invoice_number', 'total_amount', 'currency'] as const;
export type Invoice = { invoice_number: string; total_amount: number; currency: string };
/** Their labels: each PDF's line `<label>: …`, and the review form's fields (the example's Review Invoice node). */
export const LABELS: Record<keyof Invoice, string> = {
	invoice_number: 'Invoice number',
	total_amount: 'Total',
	currency: 'Currency',
};

/** One attachment of a planned mail. */
export interface PlannedAttachment {
	fileName: string;
	mimeType: string;
	/** `document`: the workflow must extract it (one ERP row); `skip`: the workflow must drop it. */
	kind: 'document' | 'skip';
	/** A document's invoice as printed on it (what a person reads). */
	invoice?: Invoice;
	/** Fields of `invoice` the service cannot read: lines left out of the PDF; all of them on a scan. */
	unreadable: Array<keyof Invoice>;
	bytes: Buffer;
}

/** A document (an attachment the workflow must extract) and its mail. */
export type PlannedDocument = { mail: PlannedMail; attachment: PlannedAttachment };

/** One planned mail. */
export interface PlannedMail {
	/** The Message-ID header's value, with its angle brackets (n8n's IMAP trigger gives it as is). */
	messageId: string;
	subject: string;
	from: string;
	attachments: PlannedAttachment[];
}

/** What the service extracts from a document: its invoice, null where unreadable. */
export function extracted(a: PlannedAttachment): Record<keyof Invoice, string | number | null> {
	const out = { invoice_number: null, total_amount: null, currency: null };
	for (const f of CHECKED_FIELDS)
		if (a.invoice && !a.unreadable.includes(f)) Object.assign(out, { [f]: a.invoice[f] });
	return out;
}

const CURRENCIES = ['EUR', 'USD', 'GBP', 'CHF'];
const VENDORS = [
	'Acme Supplies Ltd',
	'Nordic Paper AB',
	'Bureau Moderne SARL',
	'Rheinland Logistik GmbH',
	'Atlas Office Inc.',
];

/** A grey-noise PNG of `width` × `height` (8-bit greyscale), like a small scan: it does not compress. */
function makePng(width: number, height: number, seed: number): Buffer {
	const rand = seededRandom(seed);
	const raw = Buffer.alloc((width + 1) * height);
	for (let y = 0; y < height; y++)
		for (let x = 0; x < width; x++) raw[y * (width + 1) + 1 + x] = 180 + Math.floor(rand() * 76);
	const chunk = (type: string, data: Buffer): Buffer => {
		const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
		const frame = Buffer.alloc(8);
		frame.writeUInt32BE(data.length, 0);
		frame.writeUInt32BE(crc32(typeAndData), 4);
		return Buffer.concat([frame.subarray(0, 4), typeAndData, frame.subarray(4)]);
	};
	const ihdr = Buffer.alloc(13);
	ihdr.writeUInt32BE(width, 0);
	ihdr.writeUInt32BE(height, 4);
	ihdr[8] = 8; // bit depth; colour type 0 (greyscale), every row's filter byte 0 (none)
	return Buffer.concat([
		Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
		chunk('IHDR', ihdr),
		chunk('IDAT', deflateSync(raw)),
		chunk('IEND', Buffer.alloc(0)),
	]);
}

/** An attachment the workflow must drop. */
function skip(fileName: string, mimeType: string, bytes: Buffer): PlannedAttachment {
	return { fileName, mimeType, kind: 'skip', unreadable: [], bytes };
}

/**
 * Plans `count` mails for one load phase. Documents per mail: 0 (10 %), 1 (30 %), 2 (35 %) or
 * 3 (25 %), about 1.75 on average; 70 % of them PDFs (an invoice whose fields the emulator reads),
 * the others PNG scans of 24–40 KB. 30 % of the mails also carry notes.txt and 30 % a 30-byte-ish
 * signature.png, both of which the workflow must skip. With `incomplete` > 0, that share of the
 * PDFs lacks one checked field's line. Deterministic for (`seed`, `count`, `incomplete`); `tag`
 * makes the Message-IDs and invoice numbers unique per run and phase. Returns the mails and their documents.
 */
export async function planMails(
	count: number,
	seed: number,
	tag: string,
	incomplete = 0,
): Promise<{ mails: PlannedMail[]; docs: PlannedDocument[] }> {
	const rand = seededRandom(seed);
	const signature = makePng(24, 8, seed ^ 0x5151);
	const mails: PlannedMail[] = [];
	for (let i = 1; i <= count; i++) {
		const r = rand();
		const docs = r < 0.1 ? 0 : r < 0.4 ? 1 : r < 0.75 ? 2 : 3;
		const vendor = VENDORS[Math.floor(rand() * VENDORS.length)];
		const day = String(1 + (i % 28)).padStart(2, '0');
		const n = String(i).padStart(4, '0');
		const attachments: PlannedAttachment[] = [];
		for (let k = 1; k <= docs; k++) {
			const invoice_number = `${tag}-${n}-${k}`;
			if (rand() < 0.7) {
				const total_amount = (1000 + Math.floor(rand() * 500_000)) / 100;
				const currency = CURRENCIES[Math.floor(rand() * CURRENCIES.length)];
				const unreadable =
					incomplete > 0 && rand() < incomplete
						? [CHECKED_FIELDS[Math.floor(rand() * CHECKED_FIELDS.length)]]
						: [];
				const lines = [
					`Invoice number: ${invoice_number}`,
					`Invoice date: 2026-11-${day}`,
					`Vendor: ${vendor}`,
					'Customer: Example Buyer GmbH',
					`Total: ${total_amount.toFixed(2)} ${currency}`,
					`Currency: ${currency}`,
					`Due date: 2026-12-${day}`,
				].filter((l) => !unreadable.some((f) => l.startsWith(`${LABELS[f]}:`)));
				attachments.push({
					fileName: `invoice-${n}-${k}.pdf`,
					mimeType: 'application/pdf',
					kind: 'document',
					invoice: { invoice_number, total_amount, currency },
					unreadable,
					bytes: await makePdf([[{ text: 'INVOICE', bold: true, size: 20 }, '', ...lines]]),
				});
			} else {
				// a scan's invoice, from its position (the plan's random sequence stays as it was)
				const invoice = {
					invoice_number,
					total_amount: (1000 + ((i * 7919 + k * 104_729) % 500_000)) / 100,
					currency: CURRENCIES[(i + k) % CURRENCIES.length],
				};
				attachments.push({
					fileName: `scan-${n}-${k}.png`,
					mimeType: 'image/png',
					kind: 'document',
					invoice,
					unreadable: [...CHECKED_FIELDS],
					bytes: makePng(160 + Math.floor(rand() * 80), 150, seed + i * 10 + k),
				});
			}
		}
		const notes = Buffer.from(`Order reference ${tag}-${i}\r\nThank you.\r\n`);
		if (rand() < 0.3) attachments.push(skip('notes.txt', 'text/plain', notes));
		if (rand() < 0.3) attachments.push(skip('signature.png', 'image/png', signature));
		// attachments in a shuffled order, so that documents are not always attachment_0
		for (let a = attachments.length - 1; a > 0; a--) {
			const b = Math.floor(rand() * (a + 1));
			[attachments[a], attachments[b]] = [attachments[b], attachments[a]];
		}
		mails.push({
			messageId: `<${tag}.${i}@e2e.invalid>`,
			subject: `Invoices ${tag} #${i} from ${vendor}`,
			from: `${vendor} <billing@vendor${1 + VENDORS.indexOf(vendor)}.invalid>`,
			attachments,
		});
	}
	const docs = mails.flatMap((mail) =>
		mail.attachments.flatMap((attachment) =>
			attachment.kind === 'document' ? [{ mail, attachment }] : [],
		),
	);
	return { mails, docs };
}

/** The RFC 5322 text of a planned mail: a text part and each attachment (MailComposer's encodings). */
export function mimeMessage(mail: PlannedMail, to: string): Promise<Buffer> {
	return new MailComposer({
		from: mail.from,
		to,
		subject: mail.subject,
		date: new Date(),
		messageId: mail.messageId,
		text: `Hello,\n\nplease find our documents attached (${mail.attachments.length} file(s)).\n\nRegards\n`,
		attachments: mail.attachments.map((a) => ({
			filename: a.fileName,
			contentType: a.mimeType,
			content: a.bytes,
		})),
	})
		.compile()
		.build();
}
