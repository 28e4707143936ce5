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
 * Token credential for the unversioned family (extractions, schemas, workflow uploads). The token
 * is the raw value of the `Authorization` header, without a "Bearer" prefix (`unversioned-api.md §5`),
 * and is only sent to the Base URL's origin.
 */
export class ExtractionServiceTokenApi implements ICredentialType {
	name = 'extractionServiceTokenApi';

	displayName = 'Extraction Service Token API';

	icon: Icon = {
		light: 'file:../nodes/ExtractionService/extractionService.svg',
		dark: 'file:../nodes/ExtractionService/extractionService.dark.svg',
	};

	documentationUrl = 'https://www.npmjs.com/package/n8n-nodes-extraction-service';

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
		return authenticateForOwnOrigin(credentials, requestOptions, 'Authorization', String(credentials.token ?? ''));
	}

	// unversioned-api.md §4.5: list one schema.
	test: ICredentialTestRequest = {
		request: {
			baseURL: '={{$credentials.baseUrl}}',
			url: '/schema/',
			qs: { page: 1, size: 1 },
		},
	};
}
