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
 * Token credential for the unversioned family (extractions, schemas, workflow uploads). The token
 * is the raw value of the `Authorization` header, without a "Bearer" prefix (`§unversioned-5`),
 * and is only sent to the Base URL's origin.
 */
export class ExtractionServiceTokenApi implements ICredentialType {
	name = 'extractionServiceTokenApi';

	displayName = 'Extraction Service Token API';

	icon: Icon = {
		light: 'file:../nodes/ExtractionService/extractionService.svg',
		dark: 'file:../nodes/ExtractionService/extractionService.dark.svg',
	};

	documentationUrl =
		'https://github.com/extraction-service/n8n-nodes-extraction-service#credentials';

	properties: INodeProperties[] = [
		baseUrlProperty,
		{
			displayName: 'Token',
			name: 'token',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description:
				'API token created in the Extraction Service dashboard (lifetime 1, 3 or 6 months, or unlimited); sent as the raw Authorization header',
		},
	];

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		return authenticateForOwnOrigin(
			credentials,
			requestOptions,
			'Authorization',
			String(credentials.token ?? ''),
		);
	}

	/**
	 * The Test button's request: `GET /schema/?page=1&size=1`, list one schema
	 * (`§unversioned-4.5`), on the trimmed Base URL. Redirects are not followed (the token
	 * would travel with them); a redirect answer fails the test with `REDIRECT_MESSAGE` (shared.ts).
	 */
	test: ICredentialTestRequest = {
		request: {
			baseURL: TEST_BASE_URL,
			url: '/schema/',
			qs: { page: 1, size: 1 },
			disableFollowRedirect: true,
		},
		rules: redirectRules,
	};
}
