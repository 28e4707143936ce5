import type {
	ICredentialDataDecryptedObject,
	ICredentialTestRequest,
	ICredentialType,
	IHttpRequestOptions,
	INodeProperties,
	Icon,
} from 'n8n-workflow';

import { authenticateForOwnOrigin, baseUrlProperty } from './shared';

/**
 * API key credential for the `/v0` family (documents, parsings, extracts). The key travels in the
 * `X-API-Key` header (`v0-api.md §5`), and only to the Base URL's origin.
 */
export class ExtractionServiceApi implements ICredentialType {
	name = 'extractionServiceApi';

	displayName = 'Extraction Service API';

	icon: Icon = {
		light: 'file:../nodes/ExtractionService/extractionService.svg',
		dark: 'file:../nodes/ExtractionService/extractionService.dark.svg',
	};

	documentationUrl = 'https://www.npmjs.com/package/n8n-nodes-extraction-service';

	properties: INodeProperties[] = [
		baseUrlProperty,
		{
			displayName: 'API Key',
			name: 'apiKey',
			type: 'string',
			typeOptions: { password: true },
			default: '',
			required: true,
			description: 'API key created in the Extraction Service dashboard; sent as the X-API-Key header',
		},
	];

	async authenticate(
		credentials: ICredentialDataDecryptedObject,
		requestOptions: IHttpRequestOptions,
	): Promise<IHttpRequestOptions> {
		return authenticateForOwnOrigin(credentials, requestOptions, 'X-API-Key', String(credentials.apiKey ?? ''));
	}

	// v0-api.md §4.2: the cheapest authenticated read. axios drops a trailing slash of baseURL.
	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl}}',
			url: '/v0/documents',
			qs: { page: 1, size: 1 },
		},
	};
}
