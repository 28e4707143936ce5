import type { ICredentialType, IHttpRequestOptions } from 'n8n-workflow';

import { ExtractionServiceApi } from '../credentials/ExtractionServiceApi.credentials';
import { ExtractionServiceTokenApi } from '../credentials/ExtractionServiceTokenApi.credentials';
import { useEmulator } from './helpers/setup';

const emulator = useEmulator();

async function authenticate(type: ICredentialType, credentials: Record<string, string>, request: IHttpRequestOptions) {
	if (typeof type.authenticate !== 'function') throw new Error('function authentication expected');
	return await type.authenticate(credentials, request);
}

/** Sends a credential type's `test` request the way n8n does: baseURL from the credential, then authenticate. */
async function sendTestRequest(type: ICredentialType, credentials: Record<string, string>): Promise<number> {
	const { request } = type.test!;
	const baseURL = String(request.baseURL).replace('={{$credentials.baseUrl}}', credentials.baseUrl);
	const url = new URL(`${baseURL.replace(/\/+$/, '')}/${String(request.url).replace(/^\/+/, '')}`);
	for (const [k, v] of Object.entries(request.qs ?? {})) url.searchParams.set(k, String(v));
	const authenticated = await authenticate(type, credentials, { url: url.toString(), method: 'GET' });
	const response = await fetch(authenticated.url, { headers: authenticated.headers as Record<string, string> });
	return response.status;
}

describe('Extraction Service API credential (v0 §5)', () => {
	const type = new ExtractionServiceApi();

	it('sends the key as X-API-Key to the Base URL origin, trailing slash or not', async () => {
		for (const baseUrl of ['https://api.example.com', 'https://api.example.com/']) {
			const out = await authenticate(type, { baseUrl, apiKey: 'k-1' }, { url: 'https://api.example.com/v0/extract' });
			expect(out.headers).toEqual({ 'X-API-Key': 'k-1' });
		}
	});

	it('sends nothing to another origin (pre-signed download URLs)', async () => {
		const out = await authenticate(type, { baseUrl: 'https://api.example.com', apiKey: 'k-1' }, { url: 'https://files.example.net/doc.pdf' });
		expect(out.headers).toBeUndefined();
	});

	it('keeps the key secret in the UI (password field)', () => {
		expect(type.properties.find((p) => p.name === 'apiKey')?.typeOptions?.password).toBe(true);
	});

	it('tests with GET /v0/documents?page=1&size=1: 200 with the key, 401 without', async () => {
		expect(await sendTestRequest(type, { baseUrl: `${emulator().url}/`, apiKey: emulator().apiKey })).toBe(200);
		expect(await sendTestRequest(type, { baseUrl: emulator().url, apiKey: 'nope' })).toBe(401);
		const logged = emulator().requests.find((r) => r.path === '/v0/documents');
		expect(logged?.query).toEqual({ page: '1', size: '1' });
	});
});

describe('Extraction Service Token API credential (unversioned §5)', () => {
	const type = new ExtractionServiceTokenApi();

	it('sends the raw token as Authorization, without "Bearer"', async () => {
		const out = await authenticate(type, { baseUrl: 'https://api.example.com/', token: 't-1' }, { url: 'https://api.example.com/schema/' });
		expect(out.headers).toEqual({ Authorization: 't-1' });
	});

	it('sends nothing to another origin', async () => {
		const out = await authenticate(type, { baseUrl: 'https://api.example.com', token: 't-1' }, { url: 'http://api.example.com/schema/' });
		expect(out.headers).toBeUndefined();
	});

	it('keeps the token secret in the UI (password field)', () => {
		expect(type.properties.find((p) => p.name === 'token')?.typeOptions?.password).toBe(true);
	});

	it('tests with GET /schema/?page=1&size=1: 200 with the token, 401 without', async () => {
		expect(await sendTestRequest(type, { baseUrl: emulator().url, token: emulator().token })).toBe(200);
		expect(await sendTestRequest(type, { baseUrl: `${emulator().url}/`, token: 'nope' })).toBe(401);
		const logged = emulator().requests.find((r) => r.path === '/schema/');
		expect(logged?.query).toEqual({ page: '1', size: '1' });
	});
});
