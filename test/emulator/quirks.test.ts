/**
 * The emulator's test controls for what the references leave "not shown" (docs/service-api.md
 * §v0-2.5, §v0-4.2, §v0-8, §unversioned-2.4, §unversioned-4.1, §unversioned-8): list quirks (a capped
 * count, pages larger or smaller than asked, date filters ignored), a service clock moved by an
 * offset, a simulated base clock (`clock` option), and jobs and documents made in bulk (`seedJobs`,
 * `releaseJobs`, `seedDocuments`), end to end over HTTP.
 */
import { PDFDocument } from 'pdf-lib';

import { startEmulator } from '../../emulator';
import { TINY_PNG } from '../../emulator/files';
import {
	INVOICE_SCHEMA,
	UNKNOWN_ID,
	form,
	useEmulatorClient,
	type Answer,
	type EmulatorClient,
} from './client';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** The emulator's clock: real time, or a time a test sets (`frozenAt`, epoch ms) to decide a job's progress. */
let frozenAt: number | undefined;
const api = useEmulatorClient({ processingMs: 0, clock: () => frozenAt ?? Date.now() });

afterEach(() => {
	frozenAt = undefined;
	api.emu.setListQuirks({});
	api.emu.setClockOffset(0);
	api.emu.setListOrder('newest-first');
	api.emu.setMaxPageSize(100);
});

/** A unique tag per call, for metadata and name filters that isolate a test's records. */
let tagCount = 0;
const tag = (label: string): string => `${label}-${++tagCount}-${Date.now()}`;

const ids = (a: Answer): string[] => a.body.results.map((r: { id: string }) => r.id);
const ms = (iso: string): number => Date.parse(iso);

/** GET on the list endpoints of both families, with a query string. */
function lists(client: EmulatorClient) {
	return {
		extractions: (query: string) =>
			client.call('GET', `/extract/?${query}`, { headers: client.tok() }),
		documents: (query: string) =>
			client.call('GET', `/v0/documents?${query}`, { headers: client.v0() }),
		parsings: (query: string) =>
			client.call('GET', `/v0/parsing?${query}`, { headers: client.v0() }),
		schemas: (query: string) => client.call('GET', `/schema/?${query}`, { headers: client.tok() }),
	};
}
const list = lists(api);

describe('list quirks (setListQuirks)', () => {
	it('countCap: count stops at the cap on every list endpoint while pages, next and previous follow the real list', async () => {
		const t = tag('cap');
		const jobs = api.emu.seedJobs('extraction', 30, { metadata: { batch: t } });
		api.emu.seedJobs('parsing', 30, { metadata: { batch: t } });
		api.emu.seedDocuments(30, { namePrefix: t });
		api.emu.setListQuirks({ countCap: 5 });

		const first = await list.extractions(`meta_key=batch&meta_value=${t}&size=10`);
		expect(first.body).toMatchObject({
			count: 5,
			previous: null,
			next: `${api.emu.url}/extract/?meta_key=batch&meta_value=${t}&size=10&page=2`,
		});
		expect(ids(first)).toEqual(jobs.slice(20).reverse());
		const third = await list.extractions(`meta_key=batch&meta_value=${t}&size=10&page=3`);
		expect(third.body).toMatchObject({ count: 5, next: null });
		expect(ids(third)).toEqual(jobs.slice(0, 10).reverse());
		expect((await list.extractions(`meta_key=batch&meta_value=${t}&size=10&page=4`)).status).toBe(
			404,
		);

		const parsings = await list.parsings(`search=${t}&size=10&page=2`);
		expect(parsings.body.count).toBe(5);
		expect(parsings.body.results).toHaveLength(10);
		expect(parsings.body.next).not.toBeNull();
		const documents = await list.documents(`search=${t}&size=10`);
		expect(documents.body.count).toBe(5);
		expect(documents.body.next).not.toBeNull();
		api.emu.setListQuirks({ countCap: 1 });
		expect((await list.schemas('')).body.count).toBe(1);
		expect((await list.schemas('')).body.results.length).toBeGreaterThanOrEqual(2);

		api.emu.setListQuirks({});
		expect((await list.extractions(`meta_key=batch&meta_value=${t}`)).body.count).toBe(30);
	});

	it('pageSize: pages hold that many items whatever size asks (smaller, larger, above the max page size); paging follows it', async () => {
		const t = tag('pages');
		const docs = api.emu.seedDocuments(20, { namePrefix: t });
		const newest = [...docs].reverse();
		api.emu.setListQuirks({ pageSize: 7 });
		for (const size of ['2', '100', '500']) {
			const page = await list.documents(`search=${t}&size=${size}`);
			expect({ size, count: page.body.count, ids: ids(page) }).toEqual({
				size,
				count: 20,
				ids: newest.slice(0, 7),
			});
		}
		const second = await list.documents(`search=${t}&size=2&page=2`);
		expect(ids(second)).toEqual(newest.slice(7, 14));
		expect(second.body.previous).toBe(`${api.emu.url}/v0/documents?search=${t}&size=2`);
		const last = await list.documents(`search=${t}&page=3`);
		expect(ids(last)).toEqual(newest.slice(14));
		expect(last.body.next).toBeNull();
		expect((await list.documents(`search=${t}&page=4`)).body).toEqual({ detail: 'Invalid page.' });
		expect((await list.documents(`search=${t}&size=abc`)).status).toBe(400);
		expect(() => api.emu.setListQuirks({ pageSize: 0 })).toThrow(/pageSize/);
		expect(() => api.emu.setListQuirks({ countCap: 1.5 })).toThrow(/countCap/);

		const many = api.emu.seedJobs('extraction', 150, { metadata: { batch: t } });
		api.emu.setListQuirks({ pageSize: 150 });
		const big = await list.extractions(`meta_key=batch&meta_value=${t}&size=10`);
		expect(big.body).toMatchObject({ count: 150, next: null });
		expect(ids(big)).toEqual([...many].reverse());
		api.emu.setListOrder('oldest-first');
		expect(ids(await list.extractions(`meta_key=batch&meta_value=${t}&size=10`))).toEqual(many);
	});

	it('ignoreDateFilter: created_at_after / created_at_before are validated (400) but ignored', async () => {
		const t = tag('dates');
		const [docs, jobs] = [`${t}-doc`, `${t}-job`];
		api.emu.setClockOffset(-DAY);
		const old = api.emu.seedDocuments(2, { namePrefix: docs });
		const oldParsings = api.emu.seedJobs('parsing', 2, { namePrefix: jobs });
		api.emu.setClockOffset(0);
		const fresh = api.emu.seedDocuments(1, { namePrefix: docs });
		const freshParsings = api.emu.seedJobs('parsing', 1, { namePrefix: jobs });
		const hourAgo = new Date(Date.now() - HOUR).toISOString();

		expect(ids(await list.documents(`search=${docs}&created_at_after=${hourAgo}`))).toEqual(fresh);
		expect(ids(await list.parsings(`search=${jobs}&created_at_after=${hourAgo}`))).toEqual(
			freshParsings,
		);
		expect(ids(await list.parsings(`search=${jobs}&created_at_before=${hourAgo}`))).toEqual(
			[...oldParsings].reverse(),
		);

		api.emu.setListQuirks({ ignoreDateFilter: true });
		expect(ids(await list.documents(`search=${docs}&created_at_after=${hourAgo}`))).toEqual([
			...fresh,
			...[...old].reverse(),
		]);
		expect(ids(await list.parsings(`search=${jobs}&created_at_after=${hourAgo}`))).toEqual([
			...freshParsings,
			...[...oldParsings].reverse(),
		]);
		expect(ids(await list.parsings(`search=${jobs}&created_at_before=${hourAgo}`))).toHaveLength(3);
		const bad = await list.documents('created_at_after=yesterday');
		expect(bad.status).toBe(400);
		expect(bad.body).toEqual({ created_at_after: ['Enter a valid date/time.'] });
	});
});

describe('clock offset (setClockOffset)', () => {
	it('moves created_at / updated_at of new records (uploads, seeds, schemas); older records keep theirs; lists keep creation order', async () => {
		const t = tag('offset');
		const [before] = api.emu.seedDocuments(1, { namePrefix: t });
		const beforeAt = ms((await api.send('GET', `/v0/documents/${before}`)).body.created_at);
		expect(Math.abs(beforeAt - Date.now())).toBeLessThan(5000);

		api.emu.setClockOffset(-15 * 60_000);
		const upload = await api.send('POST', '/v0/documents', {
			form: form({ file: { name: `${t}-scan.png`, bytes: TINY_PNG } }),
		});
		expect(upload.status).toBe(201);
		expect(ms(upload.body.created_at)).toBeLessThan(Date.now() - 14 * 60_000);
		expect(ms(upload.body.created_at)).toBeGreaterThan(Date.now() - 16 * 60_000);
		const [parsing] = api.emu.seedJobs('parsing', 1, { namePrefix: t });
		const read = (await api.send('GET', `/v0/parsing/${parsing}`)).body;
		expect(ms(read.created_at)).toBeLessThan(Date.now() - 14 * 60_000);
		expect(read.updated_at).toBe(read.created_at); // final at once: on the same (service) clock
		const schema = await api.send('POST', '/schema/', {
			json: { name: t, description: 'd', schema: null },
		});
		expect(ms(schema.body.created_at)).toBeLessThan(Date.now() - 14 * 60_000);

		// The older record keeps its created_at; the list is by creation: the newer, dated earlier, comes first.
		expect(ms((await api.send('GET', `/v0/documents/${before}`)).body.created_at)).toBe(beforeAt);
		const listed = await list.documents(`search=${t}`);
		expect(ids(listed)).toEqual([read.document.id, upload.body.id, before]);
		expect(ms(listed.body.results[0].created_at)).toBeLessThan(
			ms(listed.body.results[2].created_at),
		);

		// The date filters compare with the service's dates.
		expect(
			ids(
				await list.documents(
					`search=${t}&created_at_before=${new Date(Date.now() - 10 * 60_000).toISOString()}`,
				),
			),
		).toEqual([read.document.id, upload.body.id]);
	});

	it('never moves job progress: a jump back neither finishes jobs early nor reopens final ones; a jump ahead does not stall them', async () => {
		const t = tag('progress');
		const [done] = api.emu.seedJobs('extraction', 1, { metadata: { batch: t } });
		const first = await api.send('GET', `/extract/${done}/`);
		expect(first.body.status).toBe('FINISHED');

		const t0 = Date.now();
		frozenAt = t0;
		api.emu.setClockOffset(-DAY);
		const [late] = api.emu.seedJobs('parsing', 1, { processingMs: 400, namePrefix: t });
		const again = await api.send('GET', `/extract/${done}/`);
		expect(again.status).toBe(200);
		expect(again.body).toMatchObject({
			status: 'FINISHED',
			created_at: first.body.created_at,
			extraction_time: first.body.extraction_time,
		});
		const running = await api.send('GET', `/v0/parsing/${late}`);
		expect(running.body.status).not.toMatch(/FINISHED/); // created "a day ago" on the service's clock, yet not final at once
		frozenAt = t0 + 400;
		const finished = await api.send('GET', `/v0/parsing/${late}`);
		expect(finished.body.status).toBe('FINISHED');
		expect(ms(finished.body.updated_at) - ms(finished.body.created_at)).toBe(400);
		expect(ms(finished.body.updated_at)).toBeLessThan(Date.now() - DAY + 60_000);

		api.emu.setClockOffset(DAY);
		const [ahead] = api.emu.seedJobs('extraction', 1, {
			processingMs: 300,
			metadata: { batch: t },
		});
		expect((await api.send('GET', `/extract/${ahead}/`)).status).toBe(202);
		frozenAt = t0 + 700;
		const aheadDone = await api.send('GET', `/extract/${ahead}/`);
		expect([aheadDone.status, aheadDone.body.status]).toEqual([200, 'FINISHED']);
		expect(ms(aheadDone.body.created_at)).toBeGreaterThan(Date.now() + DAY - 60_000);
	});
});

describe('bulk jobs (seedJobs, releaseJobs) and documents (seedDocuments)', () => {
	it('extractions: real records, listed newest first after everything before, readable, filterable, deletable; no credits taken', async () => {
		const t = tag('ext');
		const credits = api.emu.getCredits();
		const [earlier] = api.emu.seedJobs('extraction', 1, { metadata: { batch: t } });
		const seeded = api.emu.seedJobs('extraction', 5, {
			metadata: { batch: t, kind: 'bulk' },
			namePrefix: t,
		});
		expect(seeded).toHaveLength(5);
		expect(new Set(seeded).size).toBe(5);
		expect(api.emu.getCredits()).toBe(credits);

		const page = await list.extractions(`meta_key=batch&meta_value=${t}`);
		expect(ids(page)).toEqual([...seeded].reverse().concat(earlier));
		expect(page.body.results[0]).toMatchObject({
			document_name: `${t}-4.pdf`,
			status: 'FINISHED',
			error: null,
			schema: null,
		});
		expect(ids(await list.extractions(`search=${t}-2`))).toEqual([seeded[2]]);
		expect(ids(await list.extractions(`meta_value=bulk`))).toEqual(expect.arrayContaining(seeded));

		const one = await api.send('GET', `/extract/${seeded[0]}/`);
		expect(one.status).toBe(200);
		expect(one.body).toMatchObject({
			id: seeded[0],
			document_name: `${t}-0.pdf`,
			status: 'FINISHED',
			content: '',
			credit_used: 1,
			metadata: { batch: t, kind: 'bulk' },
		});
		const file = await api.send('GET', `/extract/${seeded[0]}/document/`);
		expect((await PDFDocument.load(file.bytes)).getPageCount()).toBe(1);

		expect((await api.send('DELETE', `/extract/${seeded[1]}/`)).status).toBe(204);
		expect((await api.send('GET', `/extract/${seeded[1]}/`)).status).toBe(404);
		expect((await api.send('GET', `/extract/${seeded[2]}/document/`)).status).toBe(200); // the others keep their file

		const failed = api.emu.seedJobs('extraction', 2, { outcome: 'ERROR', metadata: { batch: t } });
		expect((await api.send('GET', `/extract/${failed[0]}/`)).body).toMatchObject({
			status: 'ERROR',
			error: 'Seeded failure',
			content: null,
		});
	});

	it('parsings: a document each, status filter, held until released (all, some, with another outcome), extracts from them', async () => {
		const t = tag('parse');
		const held = api.emu.seedJobs('parsing', 4, {
			hold: true,
			namePrefix: t,
			metadata: { batch: t },
		});
		const done = api.emu.seedJobs('parsing', 2, { namePrefix: t, outcome: 'PARTIAL_FINISHED' });
		const read = async (id: string) => (await api.send('GET', `/v0/parsing/${id}`)).body;

		const first = await read(held[0]);
		expect(first).toMatchObject({
			status: 'IN_PROGRESS',
			metadata: { batch: t },
			document: { filename: `${t}-0.pdf`, page_count: 1 },
		});
		expect((await api.send('GET', `/v0/documents/${first.document.id}`)).body.filename).toBe(
			`${t}-0.pdf`,
		);
		expect((await read(done[1])).status).toBe('PARTIAL_FINISHED');
		expect(ids(await list.parsings(`search=${t}&status=IN_PROGRESS`))).toEqual([...held].reverse());
		expect(ids(await list.parsings(`search=${t}&status=PARTIAL_FINISHED`))).toEqual(
			[...done].reverse(),
		);
		expect(ids(await list.documents(`search=${t}`))).toHaveLength(6);

		api.emu.releaseJobs([held[0]]);
		const released = await read(held[0]);
		expect(released.status).toBe('FINISHED');
		expect(released.pages_total).toBe(1);
		expect(ms(released.updated_at)).toBeGreaterThanOrEqual(ms(released.created_at));
		expect((await read(held[1])).status).toBe('IN_PROGRESS');
		api.emu.releaseJobs([held[1]], 'ERROR');
		expect(await read(held[1])).toMatchObject({ status: 'ERROR', error: 'Seeded failure' });
		api.emu.releaseJobs();
		expect((await read(held[2])).status).toBe('FINISHED');
		expect((await read(held[3])).status).toBe('FINISHED');
		api.emu.releaseJobs([held[0]], 'ERROR'); // no longer held: unchanged
		expect((await read(held[0])).status).toBe('FINISHED');
		expect(() => api.emu.releaseJobs([UNKNOWN_ID])).toThrow(/no parsing/);

		const extract = await api.send('POST', '/v0/extract', {
			json: { parsing: held[2], schema: INVOICE_SCHEMA },
		});
		expect(extract.status).toBe(201);
		const result = await api.poll(`/v0/extract/${extract.body.id}`);
		expect(result.body.status).toBe('FINISHED');
	});

	it("held extractions: IN_PROGRESS (202) until released, then final with the seed's outcome", async () => {
		const t = tag('hold');
		const jobs = api.emu.seedJobs('extraction', 3, {
			hold: true,
			outcome: 'ERROR',
			metadata: { batch: t },
		});
		const pending = await api.send('GET', `/extract/${jobs[0]}/`);
		expect(pending.status).toBe(202);
		expect(pending.body).toMatchObject({
			status: 'IN_PROGRESS',
			extraction_time: null,
			credit_used: null,
		});
		expect(
			(await list.extractions(`meta_key=batch&meta_value=${t}`)).body.results.map(
				(r: { status: string }) => r.status,
			),
		).toEqual(['IN_PROGRESS', 'IN_PROGRESS', 'IN_PROGRESS']);
		api.emu.releaseJobs(jobs.slice(0, 2));
		expect((await api.send('GET', `/extract/${jobs[0]}/`)).body).toMatchObject({
			status: 'ERROR',
			error: 'Seeded failure',
		});
		expect((await api.send('GET', `/extract/${jobs[2]}/`)).status).toBe(202);
		api.emu.releaseJobs(undefined, 'FINISHED');
		const last = await api.send('GET', `/extract/${jobs[2]}/`);
		expect(last.status).toBe(200);
		expect(last.body).toMatchObject({ status: 'FINISHED', error: null });
	});

	it('documents: named from the prefix, with the metadata, listed, readable and downloadable', async () => {
		const t = tag('docs');
		const docs = api.emu.seedDocuments(3, { namePrefix: t, metadata: { source: t } });
		const page = await list.documents(`search=${t}`);
		expect(ids(page)).toEqual([...docs].reverse());
		expect(page.body.results[2]).toMatchObject({
			filename: `${t}-0.pdf`,
			metadata: { source: t },
			page_count: 1,
		});
		const redirect = await api.send('GET', `/v0/documents/${docs[1]}/download`);
		expect(redirect.status).toBe(302);
		const file = await api.call('GET', redirect.headers.get('location') as string);
		expect(file.bytes.subarray(0, 5).toString()).toBe('%PDF-');
		expect(api.emu.seedDocuments(0)).toEqual([]);
		expect(api.emu.seedDocuments(1)).toHaveLength(1);
		expect(
			(await api.send('GET', `/v0/documents?search=seed-0.pdf`)).body.count,
		).toBeGreaterThanOrEqual(1);
	});
});

describe('a simulated base clock (clock option)', () => {
	it('dates records and moves jobs only as the simulated clock says; progress never goes back', async () => {
		let simulated = Date.parse('2026-11-01T08:00:00.000Z');
		const emu = await startEmulator({ quiet: true, processingMs: 0, clock: () => simulated });
		const get = async (path: string, family: 'v0' | 'token') => {
			const res = await fetch(emu.url + path, {
				headers: family === 'v0' ? { 'x-api-key': emu.apiKey } : { authorization: emu.token },
			});
			return { status: res.status, body: await res.json() };
		};
		try {
			const [job] = emu.seedJobs('extraction', 1, { processingMs: 60_000 });
			const [parsing] = emu.seedJobs('parsing', 1, { processingMs: 60_000 });
			const read = () => get(`/extract/${job}/`, 'token');
			expect((await read()).body).toMatchObject({
				status: 'CREATED',
				created_at: '2026-11-01T08:00:00.000000Z',
			});
			simulated += 30_000;
			expect((await read()).body.status).toBe('IN_PROGRESS');
			simulated += 29_999;
			expect((await read()).status).toBe(202);
			expect((await get('/v0/parsing?status=FINISHED', 'v0')).body.count).toBe(0);
			simulated += 1;
			expect((await read()).body).toMatchObject({ status: 'FINISHED', extraction_time: 60 });
			expect(
				(await get('/v0/parsing?status=FINISHED', 'v0')).body.results.map(
					(p: { id: string }) => p.id,
				),
			).toEqual([parsing]);
			expect(emu.requests[emu.requests.length - 1].at).toBe(simulated);

			simulated -= 120_000; // the clock goes back: final stays final
			expect((await read()).body.status).toBe('FINISHED');
			const [later] = emu.seedDocuments(1);
			expect((await get(`/v0/documents/${later}`, 'v0')).body.created_at).toBe(
				'2026-11-01T07:59:00.000000Z',
			);
		} finally {
			await emu.close();
		}
	});
});

describe('a clock that ticks on every reading', () => {
	it('dates each seeded record apart (one reading per record), with updated_at on the same clock', async () => {
		let t = 0;
		const emu = await startEmulator({
			quiet: true,
			processingMs: 0,
			clock: () => (t = Math.max(Date.now(), t + 1)),
		});
		try {
			const parsings = emu.seedJobs('parsing', 3);
			const read = async (id: string) =>
				(await (
					await fetch(`${emu.url}/v0/parsing/${id}`, { headers: { 'x-api-key': emu.apiKey } })
				).json()) as Record<string, string>;
			const bodies = await Promise.all(parsings.map(read));
			const created = bodies.map((b) => ms(b.created_at));
			expect(created[0]).toBeLessThan(created[1]);
			expect(created[1]).toBeLessThan(created[2]);
			for (const b of bodies)
				expect(b).toMatchObject({ status: 'FINISHED', updated_at: b.created_at });
		} finally {
			await emu.close();
		}
	});
});

describe('50,000 records', () => {
	const big = useEmulatorClient({ processingMs: 0 });
	const bigList = lists(big);

	it('seeds 50,000 extractions and 50,000 parsings and serves a page of each list', async () => {
		const extractions = big.emu.seedJobs('extraction', 50_000);
		const parsings = big.emu.seedJobs('parsing', 50_000);
		expect(extractions).toHaveLength(50_000);
		const page = await bigList.extractions('page=1&size=100');
		expect(page.body.count).toBe(50_000);
		expect(ids(page)).toEqual(extractions.slice(-100).reverse());
		const last = await bigList.extractions('page=500&size=100');
		expect(ids(last)).toEqual(extractions.slice(0, 100).reverse());
		const dated = await bigList.parsings(
			`created_at_after=${new Date(Date.now() - HOUR).toISOString()}&size=100`,
		);
		expect(dated.body.count).toBe(50_000);
		expect(ids(dated)).toEqual(parsings.slice(-100).reverse());
		expect((await bigList.documents('size=1')).body.count).toBe(50_000);
	});
});
