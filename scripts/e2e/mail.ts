/**
 * The mails of the end-to-end run (scripts/e2e/run.ts): a deterministic plan of invoice mails with
 * 0–3 document attachments each (real PDFs from emulator/sample-pdf.ts and real PNG scans) mixed
 * with attachments the workflow must skip (a notes .txt, a tiny signature.png), and the MIME text
 * of each mail (nodemailer's MailComposer). Dovecot receives them over imapflow (services.ts).
 */
import { crc32, deflateSync } from 'node:zlib';

import MailComposer from 'nodemailer/lib/mail-composer';

import { makePdf } from '../../emulator/sample-pdf';

// ---------------------------------------------------------------------------------------------
// the plan

/** One attachment of a planned mail. */
export interface PlannedAttachment {
	fileName: string;
	mimeType: string;
	/** `document`: the workflow must extract it (one ERP row); `skip`: the workflow must drop it. */
	kind: 'document' | 'skip';
	/** For PDFs: what the seeded Invoice schema reads from it (PNG scans have no text: all null). */
	expected?: { invoice_number: string; total_amount: number; currency: string };
	bytes: Buffer;
}

/** One planned mail. */
export interface PlannedMail {
	/** The Message-ID header's value, with its angle brackets (n8n's IMAP trigger gives it as is). */
	messageId: string;
	subject: string;
	from: string;
	attachments: PlannedAttachment[];
}

/**
 * The rule the workflow's "Keep Documents" node applies (written in its sticky note too):
 * keep .pdf, .png, .jpg, .jpeg; skip every other type, and skip images named signature*, logo* or
 * image0* (mail clients' inline images) or smaller than {@link MIN_DOCUMENT_IMAGE_BYTES}.
 */
export const MIN_DOCUMENT_IMAGE_BYTES = 8192;

/** A small deterministic PRNG (mulberry32), so that the same seed plans the same mails. */
function prng(seed: number): () => number {
	let a = seed >>> 0;
	return () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
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
export function makePng(width: number, height: number, seed: number): Buffer {
	const rand = prng(seed);
	const raw = Buffer.alloc((width + 1) * height);
	for (let y = 0; y < height; y++) {
		raw[y * (width + 1)] = 0; // filter: none
		for (let x = 0; x < width; x++) raw[y * (width + 1) + 1 + x] = 180 + Math.floor(rand() * 76);
	}
	const chunk = (type: string, data: Buffer): Buffer => {
		const len = Buffer.alloc(4);
		len.writeUInt32BE(data.length);
		const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
		const crc = Buffer.alloc(4);
		crc.writeUInt32BE(crc32(typeAndData));
		return Buffer.concat([len, typeAndData, crc]);
	};
	const ihdr = Buffer.alloc(13);
	ihdr.writeUInt32BE(width, 0);
	ihdr.writeUInt32BE(height, 4);
	ihdr[8] = 8; // bit depth
	ihdr[9] = 0; // greyscale
	return Buffer.concat([
		Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
		chunk('IHDR', ihdr),
		chunk('IDAT', deflateSync(raw)),
		chunk('IEND', Buffer.alloc(0)),
	]);
}

/**
 * Plans `count` mails for one load phase. Documents per mail: 0 (10 %), 1 (30 %), 2 (35 %) or
 * 3 (25 %), about 1.75 on average; 70 % of them PDFs (an invoice whose fields the emulator reads),
 * the others PNG scans of 24–40 KB. 30 % of the mails also carry notes.txt and 30 % a 30-byte-ish
 * signature.png, both of which the workflow must skip. Deterministic for (`seed`, `count`); `tag`
 * makes the Message-IDs and invoice numbers unique per run and phase.
 */
export async function planMails(count: number, seed: number, tag: string): Promise<PlannedMail[]> {
	const rand = prng(seed);
	const signature = makePng(24, 8, seed ^ 0x5151);
	const mails: PlannedMail[] = [];
	for (let i = 1; i <= count; i++) {
		const r = rand();
		const docs = r < 0.1 ? 0 : r < 0.4 ? 1 : r < 0.75 ? 2 : 3;
		const vendor = VENDORS[Math.floor(rand() * VENDORS.length)];
		const attachments: PlannedAttachment[] = [];
		for (let k = 1; k <= docs; k++) {
			if (rand() < 0.7) {
				const invoiceNumber = `${tag}-${String(i).padStart(4, '0')}-${k}`;
				const cents = 1000 + Math.floor(rand() * 500_000);
				const total = cents / 100;
				const currency = CURRENCIES[Math.floor(rand() * CURRENCIES.length)];
				const bytes = await makePdf([
					[
						{ text: 'INVOICE', bold: true, size: 20 },
						'',
						`Invoice number: ${invoiceNumber}`,
						`Invoice date: 2026-11-${String(1 + (i % 28)).padStart(2, '0')}`,
						`Vendor: ${vendor}`,
						'Customer: Example Buyer GmbH',
						`Total: ${total.toFixed(2)} ${currency}`,
						`Currency: ${currency}`,
						`Due date: 2026-12-${String(1 + (i % 28)).padStart(2, '0')}`,
					],
				]);
				attachments.push({
					fileName: `invoice-${String(i).padStart(4, '0')}-${k}.pdf`,
					mimeType: 'application/pdf',
					kind: 'document',
					expected: { invoice_number: invoiceNumber, total_amount: total, currency },
					bytes,
				});
			} else {
				const png = makePng(160 + Math.floor(rand() * 80), 150, seed + i * 10 + k);
				attachments.push({
					fileName: `scan-${String(i).padStart(4, '0')}-${k}.png`,
					mimeType: 'image/png',
					kind: 'document',
					bytes: png,
				});
			}
		}
		if (rand() < 0.3) {
			attachments.push({
				fileName: 'notes.txt',
				mimeType: 'text/plain',
				kind: 'skip',
				bytes: Buffer.from(`Order reference ${tag}-${i}\r\nThank you.\r\n`),
			});
		}
		if (rand() < 0.3)
			attachments.push({
				fileName: 'signature.png',
				mimeType: 'image/png',
				kind: 'skip',
				bytes: signature,
			});
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
	return mails;
}

/** The documents (attachments the workflow must extract) of the planned mails. */
export function plannedDocuments(
	mails: PlannedMail[],
): Array<{ mail: PlannedMail; attachment: PlannedAttachment }> {
	return mails.flatMap((mail) =>
		mail.attachments
			.filter((a) => a.kind === 'document')
			.map((attachment) => ({ mail, attachment })),
	);
}

// ---------------------------------------------------------------------------------------------
// MIME

/** The RFC 5322 text of a planned mail: a text part and each attachment (MailComposer's encodings). */
export function mimeMessage(mail: PlannedMail, to: string, date: Date): Promise<Buffer> {
	return new MailComposer({
		from: mail.from,
		to,
		subject: mail.subject,
		date,
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
