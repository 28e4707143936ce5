/**
 * Issue 20, inputs and answers: numbers users type (fractional seconds, values beyond Node's timers),
 * ids in another letter case (UUIDs are case-insensitive), and a Base URL carrying a user and
 * password. Each case was written to fail before its fix.
 */
import { extractCreate, extractGet, extractWithOptions, listAll } from './helpers/params';
import { useNode } from './helpers/setup';

const { emulator, runNode, credentialsFor, apiRequests, fileItem } = useNode({ processingMs: 0 });

afterEach(() => emulator().clearFaults());

/** An extract created without waiting, and its JSON as the service itself answers a Get (§v0-4.9). */
async function createdExtract(): Promise<{ id: string; answer: Record<string, unknown> }> {
	const created = await runNode(extractCreate({ waitForCompletion: false }), [await fileItem()]);
	const id = String(created.items[0].json.id);
	const answer = await (
		await fetch(`${emulator().url}/v0/extract/${id}`, {
			headers: { 'X-API-Key': emulator().apiKey },
		})
	).json();
	return { id, answer };
}

describe('Numbers users type: seconds are whole milliseconds, within what a timer can wait', () => {
	it.each([16.1, 32.7, 2.01])(
		'Request Timeout %s s works (it failed with `The value of "delay" is out of range` and sent nothing)',
		async (requestTimeout) => {
			const { items, error } = await runNode(
				extractWithOptions({ requestTimeout, timeout: 30.5 }),
				[await fileItem()],
			);
			expect({ error: error?.message, status: items[0]?.json.status }).toEqual({
				error: undefined,
				status: 'FINISHED',
			});
		},
	);

	it.each([
		['Request Timeout', { requestTimeout: 30 * 86_400 }],
		['Wait Timeout', { timeout: 1e12 }],
	])(
		'%s beyond about 24.8 days is refused before any request, naming the parameter and the range',
		async (parameter, options) => {
			emulator().clearLog();
			const { error } = await runNode(extractWithOptions(options), [await fileItem()]);
			expect(error?.message).toBe(
				`Parameter "${parameter}" must be a number of seconds from 0.001 to 2147483, got ${JSON.stringify(Object.values(options)[0])}`,
			);
			expect(apiRequests()).toEqual([]);
		},
	);
});

describe('Identity: UUIDs are compared without regard to letter case', () => {
	it('a Get answered with the id in upper case is that job (it was refused as "another Extract")', async () => {
		const { id, answer } = await createdExtract();
		emulator().injectFaults({ method: 'GET', path: `/v0/extract/${id}` }, [
			{ json: { ...answer, id: id.toUpperCase() }, contentType: 'application/json' },
		]);
		const { items, error } = await runNode(extractGet(id));
		expect({ error: error?.message, id: items[0]?.json.id }).toEqual({
			error: undefined,
			id: id.toUpperCase(),
		});
	});

	it('a create answered in upper case, polled and answered in lower case, finishes (it timed out)', async () => {
		const { id, answer } = await createdExtract();
		// The next create is answered with that job's id in upper case; its polls get the lower-case one.
		emulator().injectFaults({ method: 'POST', path: '/v0/extract' }, [
			{
				status: 201,
				json: { ...answer, id: id.toUpperCase(), status: 'IN_QUEUE' },
				contentType: 'application/json',
			},
		]);
		const { items, error } = await runNode(extractWithOptions({ timeout: 20 }), [await fileItem()]);
		expect({ error: error?.message, status: items[0]?.json.status }).toEqual({
			error: undefined,
			status: 'FINISHED',
		});
	});
});

describe('A Base URL with a user and password (a proxy) is refused, so the password cannot reach items or errors', () => {
	it('every operation fails before any request, naming the Base URL and not the password', async () => {
		emulator().clearLog();
		const url = new URL(emulator().url);
		const baseUrl = `${url.protocol}//proxyuser:s3cr3t-Pa55@${url.host}/`;
		const { items, error } = await runNode(listAll('document'), [{ json: {} }], {
			credentials: credentialsFor({ baseUrl }),
		});
		expect(error?.message).toBe('The Base URL must not contain a user name or password');
		expect(
			JSON.stringify({
				items,
				message: error?.message,
				description: (error as { description?: string } | undefined)?.description,
			}),
		).not.toContain('s3cr3t-Pa55');
		expect(apiRequests()).toEqual([]);
	});
});
