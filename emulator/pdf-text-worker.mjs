// PDF text extraction in a worker thread, plain JavaScript on purpose: pdfjs-dist is ESM only and the
// jest VM cannot import it (pdf.ts, PdfTextExtractor). In: { id, data: ArrayBuffer }; out: { id, pages:
// [{ text, width, height }] } or { id, error }. A page's text: its items joined with spaces, a line
// break after each `hasEOL` item; lines trimmed, spaces collapsed, blank lines dropped.
import { parentPort } from 'node:worker_threads';
import { getDocument, VerbosityLevel } from 'pdfjs-dist/legacy/build/pdf.mjs';

/** @param {Array<{str?: string, hasEOL?: boolean}>} items */
function itemsToText(items) {
	let raw = '';
	for (const item of items) {
		if (typeof item.str !== 'string') continue; // marked-content items carry no text
		raw += item.str;
		raw += item.hasEOL ? '\n' : ' ';
	}
	return raw
		.split('\n')
		.map((line) => line.replace(/[ \t\u00a0]+/g, ' ').trim())
		.filter((line) => line.length > 0)
		.join('\n');
}

/** @param {ArrayBuffer} data */
async function extract(data) {
	const loadingTask = getDocument({
		data: new Uint8Array(data),
		isEvalSupported: false,
		disableFontFace: true,
		useSystemFonts: false,
		verbosity: VerbosityLevel.ERRORS,
	});
	const doc = await loadingTask.promise;
	try {
		const pages = [];
		for (let n = 1; n <= doc.numPages; n++) {
			const page = await doc.getPage(n);
			const viewport = page.getViewport({ scale: 1 });
			const content = await page.getTextContent();
			pages.push({
				text: itemsToText(content.items),
				width: viewport.width,
				height: viewport.height,
			});
			page.cleanup();
		}
		return pages;
	} finally {
		await loadingTask.destroy();
	}
}

parentPort.on('message', (msg) => {
	const { id, data } = msg;
	extract(data).then(
		(pages) => parentPort.postMessage({ id, pages }),
		(err) =>
			parentPort.postMessage({ id, error: err instanceof Error ? err.message : String(err) }),
	);
});
