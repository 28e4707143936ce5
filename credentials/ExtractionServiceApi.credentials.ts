import type { ICredentialType, INodeProperties } from 'n8n-workflow';

import {
	baseUrlProperty,
	CREDENTIAL_ICON,
	credentialTest,
	secretHeader,
	secretProperty,
} from './shared';

/**
 * API key credential for the `/v0` family (documents, parsings, extracts). The key travels in the
 * `X-API-Key` header (`§v0-5`), and only to the Base URL's origin.
 */
export class ExtractionServiceApi implements ICredentialType {
	name = 'extractionServiceApi';

	displayName = 'Extraction Service API';

	icon = CREDENTIAL_ICON;

	documentationUrl =
		'https://github.com/extraction-service/n8n-nodes-extraction-service#credentials';

	properties: INodeProperties[] = [
		baseUrlProperty,
		secretProperty(
			'API Key',
			'apiKey',
			'API key created in the Extraction Service dashboard; sent as the X-API-Key header',
		),
	];

	authenticate = secretHeader('X-API-Key', 'apiKey');

	/** The Test button: page 1 of `/v0/documents`, size 1 (`§v0-4.2`); see `credentialTest`. */
	test = credentialTest('/v0/documents');
}
