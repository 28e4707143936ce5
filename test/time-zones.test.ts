/**
 * Issue 30, item 5, through n8n's engine against the emulator; written to fail before the fix.
 * Date-times without a zone (Created After / Created Before, the trigger's Include Existing Since)
 * are read in the workflow's time zone, not the n8n server's; those with a zone, and the Luxon
 * DateTime or JS Date an expression gives, as given. The tests assert the query the emulator
 * receives, so they pass whatever zone the machine has (TZ=UTC, TZ=Asia/Tokyo …).
 */
import fc from 'fast-check';
import { DateTime } from 'luxon';
import type { INode } from 'n8n-workflow';

import { isoDateTime } from '../nodes/shared/validation';
import { createTriggerHarness } from '../scripts/engine';
import { useNode } from './helpers/setup';

const { emulator, runNode, apiRequests, credentialsFor } = useNode({ processingMs: 0 });

const BERLIN = 'Europe/Berlin';

/** The query parameter `name` of the first API request. */
const sentQuery = (name: string) => apiRequests()[0]?.query[name];

describe('Date-times without a zone are read in the workflow time zone (issue 30, item 5)', () => {
	// Europe/Berlin is UTC+1 in November and UTC+2 in July.
	const cases: Array<[string, string, string]> = [
		['the date picker (no zone)', '2026-11-28T10:00:00', '2026-11-28T09:00:00.000Z'],
		['summer time there', '2026-07-01T10:00:00', '2026-07-01T08:00:00.000Z'],
		['a space instead of T', '2026-11-28 10:00', '2026-11-28T09:00:00.000Z'],
		['a date alone: midnight there', '2026-11-28', '2026-11-27T23:00:00.000Z'],
		['a month name', 'Nov 28 2026 10:00', '2026-11-28T09:00:00.000Z'],
		['month/day/year', '11/28/2026 10:00', '2026-11-28T09:00:00.000Z'],
		['Z: as given', '2026-11-28T10:00:00Z', '2026-11-28T10:00:00.000Z'],
		['an offset: as given', '2026-11-28T10:00:00-05:00', '2026-11-28T15:00:00.000Z'],
		['a GMT offset: as given', 'Sat Nov 28 2026 10:00:00 GMT-0500', '2026-11-28T15:00:00.000Z'],
		[
			'an expression giving a Luxon DateTime: its own zone',
			"={{ DateTime.fromISO('2026-11-28T10:00:00', { zone: 'America/New_York' }) }}",
			'2026-11-28T15:00:00.000Z',
		],
		[
			'an expression giving a JS Date: its instant',
			'={{ new Date(Date.UTC(2026, 10, 28, 10)) }}',
			'2026-11-28T10:00:00.000Z',
		],
	];

	/** The trigger's activation with Include Existing Since `since`, in a workflow of time zone `zone`. */
	async function activatedSince(since: string, zone: string) {
		const harness = createTriggerHarness({
			parameters: { event: 'documentUploaded', options: { includeExistingSince: since } },
			credentials: credentialsFor(),
		});
		// The workflow's time zone (its settings' `timezone`), as n8n gives `getTimezone()`.
		(harness.workflow as { timezone: string }).timezone = zone;
		// A clock after every date of the cases: the window then starts at Include Existing Since
		// (it starts 10 minutes before now when that is earlier).
		const clock = jest.spyOn(Date, 'now').mockReturnValue(Date.parse('2026-12-01T00:00:00Z'));
		const activation = await harness.activate().finally(() => clock.mockRestore());
		const lists = apiRequests().filter((r) => r.path === '/v0/documents');
		return {
			error: activation.error?.message,
			// The activation reads what was created since then (and counts what lies just before it).
			after: lists.find((r) => r.query.created_at_after)?.query.created_at_after,
			before: [...new Set(lists.map((r) => r.query.created_at_before).filter(Boolean))],
		};
	}

	it.each(cases)('the trigger, Include Existing Since: %s', async (_label, value, expected) => {
		const activation = await activatedSince(value, BERLIN);
		expect(activation.error).toBeUndefined();
		expect(activation.after).toBe(expected);
		const justBefore = new Date(Date.parse(expected) - 1).toISOString().replace('Z', '999Z');
		expect(activation.before).toEqual([justBefore]);
	});

	it('the trigger in another zone (America/Los_Angeles, UTC−8 in November)', async () => {
		const activation = await activatedSince('2026-11-28T10:00:00', 'America/Los_Angeles');
		expect(activation.after).toBe('2026-11-28T18:00:00.000Z');
	});

	it('a date that cannot be read names the parameter, before any request', async () => {
		const activation = await activatedSince('28.11.2026 10:00', BERLIN);
		expect(activation.error).toBe(
			'Parameter "Include Existing Since" is not a date-time, got "28.11.2026 10:00"',
		);
		expect(apiRequests()).toEqual([]);
	});

	it('a workflow time zone that is none: said, for a date without a zone only', async () => {
		expect((await activatedSince('2026-11-28T10:00:00', 'Mars/Olympus')).error).toBe(
			'Parameter "Include Existing Since" has no time zone, and the workflow\'s time zone "Mars/Olympus" is not one',
		);
		emulator().clearLog();
		expect(await activatedSince('2026-11-28T10:00:00Z', 'Mars/Olympus')).toMatchObject({
			error: undefined,
			after: '2026-11-28T10:00:00.000Z',
		});
	});

	// Two workflow zones, so that a reading in the server's zone fails whatever zone the machine has.
	it('Get Many: Created After / Created Before without a zone, in the workflow time zone', async () => {
		const sent: unknown[] = [];
		for (const [resource, filter, query, timezone] of [
			['document', 'createdAfter', 'created_at_after', BERLIN],
			['parsing', 'createdBefore', 'created_at_before', 'America/Los_Angeles'],
		]) {
			emulator().clearLog();
			const { error } = await runNode(
				{
					resource,
					operation: 'getAll',
					returnAll: true,
					filters: { [filter]: '2026-11-28 10:00' },
				},
				undefined,
				{ timezone },
			);
			sent.push(error?.message ?? sentQuery(query));
		}
		expect(sent).toEqual(['2026-11-28T09:00:00.000Z', '2026-11-28T18:00:00.000Z']);
	});

	it('Get Many: Created After with a zone, and an unreadable Created Before named', async () => {
		const zoned = await runNode(
			{
				resource: 'document',
				operation: 'getAll',
				returnAll: true,
				filters: { createdAfter: '2026-11-28T10:00:00-05:00' },
			},
			undefined,
			{ timezone: BERLIN },
		);
		expect(zoned.error).toBeUndefined();
		expect(sentQuery('created_at_after')).toBe('2026-11-28T15:00:00.000Z');
		emulator().clearLog();
		const { error } = await runNode(
			{
				resource: 'parsing',
				operation: 'getAll',
				returnAll: true,
				filters: { createdBefore: '28.11.2026 10:00' },
			},
			undefined,
			{ timezone: BERLIN },
		);
		expect(error?.message).toBe(
			'Parameter "Created Before" is not a date-time, got "28.11.2026 10:00"',
		);
		expect(apiRequests()).toEqual([]);
	});

	it('the trigger keeps its state when the reading changes (an upgrade, a new workflow zone): nothing fires twice', async () => {
		const since = '2000-01-01T00:00:00';
		await runNode({ resource: 'document', operation: 'upload', binaryPropertyName: 'data' }, [
			{
				json: {},
				binary: {
					data: {
						data: Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64'),
						mimeType: 'application/pdf',
						fileName: 'tz.pdf',
					},
				},
			},
		]);
		const first = createTriggerHarness({
			parameters: { event: 'documentUploaded', options: { includeExistingSince: since } },
			credentials: credentialsFor(),
		});
		(first.workflow as { timezone: string }).timezone = BERLIN;
		const activation = await first.activate();
		expect(activation.error).toBeUndefined();
		expect(activation.items.length).toBeGreaterThan(0);
		// The state's fingerprint holds the option as earlier versions read it, so a saved state
		// stays valid: otherwise the trigger would start afresh and output the existing jobs again.
		const again = createTriggerHarness({
			parameters: { event: 'documentUploaded', options: { includeExistingSince: since } },
			credentials: credentialsFor(),
			staticData: { 'node:Extraction Service Trigger': first.staticData() },
		});
		(again.workflow as { timezone: string }).timezone = 'Asia/Tokyo';
		const reactivated = await again.activate();
		expect(reactivated.error).toBeUndefined();
		expect(reactivated.items).toEqual([]);
	});

	it('property: any zone-less date-time in any of these zones is the instant Luxon reads there', () => {
		const zones = [
			'UTC',
			'Europe/Berlin',
			'America/New_York',
			'America/Los_Angeles',
			'Asia/Tokyo',
			'Asia/Kolkata',
			'Australia/Lord_Howe',
			'Pacific/Chatham',
			'America/St_Johns',
		];
		const node = { name: 'Extraction Service' } as INode;
		const pad = (n: number, width = 2) => String(n).padStart(width, '0');
		fc.assert(
			fc.property(
				fc.record({
					year: fc.integer({ min: 1971, max: 2099 }),
					month: fc.integer({ min: 1, max: 12 }),
					day: fc.integer({ min: 1, max: 28 }),
					hour: fc.integer({ min: 0, max: 23 }),
					minute: fc.integer({ min: 0, max: 59 }),
					second: fc.integer({ min: 0, max: 59 }),
				}),
				fc.constantFrom(...zones),
				fc.constantFrom('T', ' '),
				(t, zone, separator) => {
					const date = `${t.year}-${pad(t.month)}-${pad(t.day)}`;
					const text = `${date}${separator}${pad(t.hour)}:${pad(t.minute)}:${pad(t.second)}`;
					const expected = DateTime.fromISO(text.replace(' ', 'T'), { zone }).toUTC().toISO();
					expect(isoDateTime(node, 0, 'Created After', text, zone)).toBe(expected);
				},
			),
		);
	});
});
