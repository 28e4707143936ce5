import type {
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestOptions,
	INodeProperties,
	Icon,
} from 'n8n-workflow';

import { authenticateForOwnOrigin, baseUrlProperty, redirectRules, TEST_BASE_URL } from './shared';

/**
 * API key credential for the `/v0` family (documents, parsings, extracts). The key travels in the
 * `X-API-Key` header (`§v0-5`), and only to the Base URL's origin.
 */
export class ExtractionServiceApi implements ICredentialType {
	name = 'extractionServiceApi';

	displayName = 'Extraction Service API';

	icon: Icon = {
		light: 'file:../nodes/ExtractionService/extractionService.svg',
		dark: 'file:../nodes/ExtractionService/extractionService.dark.svg',
	};

	documentationUrl =
		'https://github.com/extraction-service/n8n-nodes-extraction-service#credentials';

	properties: INodeProperties[] = [
		baseUrlProperty,
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				'API key created in the Extraction Service dashboard; sent as the X-API-Key header',
		},
	];

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		return authenticateForOwnOrigin(
			credentials,
			requestOptions,
			'X-API-Key',
			String(credentials.apiKey ?? ''),
		);
	}

	/**
	 * The Test button's request: `GET /v0/documents?page=1&size=1`, the cheapest authenticated read
	 * (`§v0-4.2`), on the trimmed Base URL. Redirects are not followed (the key would travel
	 * with them); a redirect answer fails the test with `REDIRECT_MESSAGE` (shared.ts).
	 */
	test: ICredentialTestRequest = {
		request: {
			baseURL: TEST_BASE_URL,
			url: '/v0/documents',
			qs: { page: 1, size: 1 },
			disableFollowRedirect: true,
		},
		rules: redirectRules,
	};
}
