import type { ICredentialType, IHttpRequestOptions } from 'n8n-workflow';

import { ExtractionServiceApi } from '../credentials/ExtractionServiceApi.credentials';
import { ExtractionServiceTokenApi } from '../credentials/ExtractionServiceTokenApi.credentials';
import { REDIRECT_MESSAGE } from '../credentials/shared';
import { runCredentialTest } from '../scripts/engine';
import { useNode } from './helpers/setup';

const { emulator } = useNode();

async function authenticate(
	type: ICredentialType,
	credentials: Record<string, string>,
	request: IHttpRequestOptions,
) {
	if (typeof type.authenticate !== 'function') throw new Error('function authentication expected');
	return await type.authenticate(credentials, request);
}

/** The emulator's requests to the given origin that carry a secret header. */
function requestsWithSecret(origin: 'api' | 'files') {
	return emulator().requests.filter(
		(r) => r.origin === origin && ('x-api-key' in r.headers || 'authorization' in r.headers),
	);
}

describe('Extraction Service API credential (§v0-5)', () => {
	it('sends the key as X-API-Key to the Base URL origin, trailing slash or not', async () => {
		for (const baseUrl of ['https://api.example.com', 'https://api.example.com/']) {
			const out = await authenticate(
				new ExtractionServiceApi(),
				{ baseUrl, apiKey: 'k-1' },
				{ url: 'https://api.example.com/v0/extract' },
			);
			expect(out.headers).toEqual({ 'X-API-Key': 'k-1' });
		}
	});
});

describe('Extraction Service Token API credential (§unversioned-5)', () => {
	it('sends the raw token as Authorization, without "Bearer"', async () => {
		const out = await authenticate(
			new ExtractionServiceTokenApi(),
			{ baseUrl: 'https://api.example.com/', token: 't-1' },
			{ url: 'https://api.example.com/schema/' },
		);
		expect(out.headers).toEqual({ Authorization: 't-1' });
	});
});

describe.each([
	{
		type: new ExtractionServiceApi(),
		path: '/v0/documents',
		header: 'x-api-key',
		secretName: 'apiKey',
		secret: () => emulator().apiKey,
		// A pre-signed download URL.
		elsewhere: 'https://files.example.net/doc.pdf',
	},
	{
		type: new ExtractionServiceTokenApi(),
		path: '/schema/',
		header: 'authorization',
		secretName: 'token',
		secret: () => emulator().token,
		// The same host over another scheme.
		elsewhere: 'http://api.example.com/schema/',
	},
])('$type.displayName', ({ type, path, header, secretName, secret, elsewhere }) => {
	it('sends nothing to another origin', async () => {
		const out = await authenticate(
			type,
			{ baseUrl: 'https://api.example.com', [secretName]: 'secret-1' },
			{ url: elsewhere },
		);
		expect(out.headers).toBeUndefined();
	});

	it('keeps the secret in the UI (password field)', () => {
		expect(type.properties.find((p) => p.name === secretName)?.typeOptions?.password).toBe(true);
	});

	it('tests with GET ?page=1&size=1 on its list endpoint: OK with the secret, Error with a wrong one', async () => {
		expect(
			await runCredentialTest(type.name, { baseUrl: `${emulator().url}/`, [secretName]: secret() }),
		).toEqual({ status: 'OK', message: 'Connection successful!' });
		expect(emulator().requests.map((r) => [r.origin, r.method, r.path, r.status])).toEqual([
			['api', 'GET', path, 200],
		]);
		expect(emulator().requests[0].query).toEqual({ page: '1', size: '1' });
		expect(emulator().requests[0].headers[header]).toBe(secret());

		emulator().clearLog();
		expect(
			await runCredentialTest(type.name, { baseUrl: emulator().url, [secretName]: 'nope' }),
		).toEqual({ status: 'Error', message: 'Unauthorized' });
		// n8n-core's httpRequestWithAuthentication retries a 401 once after preAuthentication: 1 or 2 requests.
		expect(emulator().requests.length).toBeGreaterThanOrEqual(1);
		for (const r of emulator().requests)
			expect([r.origin, r.path, r.status, r.headers[header]]).toEqual(['api', path, 401, 'nope']);
	});

	describe('the Test button through n8n-core (CredentialsTester path)', () => {
		afterEach(() => emulator().clearFaults());

		it('stops at a Base URL answering 302 to another origin, says so, and sends the secret nowhere but the Base URL', async () => {
			emulator().injectFaults({ method: 'GET', path }, [
				{ status: 302, location: `${emulator().filesUrl}/somewhere` },
			]);

			const result = await runCredentialTest(type.name, {
				baseUrl: emulator().url,
				[secretName]: secret(),
			});

			expect(requestsWithSecret('files')).toEqual([]);
			expect(emulator().requests.filter((r) => r.origin === 'files')).toEqual([]);
			expect(result).toEqual({ status: 'Error', message: REDIRECT_MESSAGE });
			expect(emulator().requests.map((r) => [r.origin, r.path, r.status])).toEqual([
				['api', path, 302],
			]);
		});

		it.each([301, 303, 307, 308])('names a %i redirect the same way', async (status) => {
			emulator().injectFaults({ method: 'GET', path }, [
				{ status, location: `${emulator().filesUrl}/somewhere` },
			]);
			const result = await runCredentialTest(type.name, {
				baseUrl: emulator().url,
				[secretName]: secret(),
			});
			expect(result).toEqual({ status: 'Error', message: REDIRECT_MESSAGE });
			expect(emulator().requests.filter((r) => r.origin === 'files')).toEqual([]);
		});

		it('trims whitespace around the Base URL and tolerates a trailing slash', async () => {
			const result = await runCredentialTest(type.name, {
				baseUrl: `  ${emulator().url}/  `,
				[secretName]: secret(),
			});

			expect(result).toEqual({ status: 'OK', message: 'Connection successful!' });
			expect(emulator().requests.map((r) => [r.origin, r.path, r.status])).toEqual([
				['api', path, 200],
			]);
			expect(emulator().requests[0].headers[header]).toBe(secret());
		});

		it('is OK with good credentials and an Error with a wrong secret', async () => {
			expect(
				await runCredentialTest(type.name, { baseUrl: emulator().url, [secretName]: secret() }),
			).toEqual({
				status: 'OK',
				message: 'Connection successful!',
			});
			expect(
				await runCredentialTest(type.name, {
					baseUrl: emulator().url,
					[secretName]: 'wrong-secret',
				}),
			).toEqual({
				status: 'Error',
				message: 'Unauthorized',
			});
			expect(emulator().requests.every((r) => r.origin === 'api' && r.path === path)).toBe(true);
			expect(emulator().requests.map((r) => [r.status, r.headers[header]])).toEqual([
				[200, secret()],
				// n8n-core retries a 401 once (see above): every further request is the 401 with the wrong secret.
				...emulator()
					.requests.slice(1)
					.map(() => [401, 'wrong-secret']),
			]);
			expect(emulator().requests.length).toBeGreaterThanOrEqual(2);
		});
	});
});
