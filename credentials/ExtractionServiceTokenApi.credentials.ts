import type { ICredentialType, INodeProperties } from 'n8n-workflow';

import {
	baseUrlProperty,
	CREDENTIAL_ICON,
	credentialTest,
	secretHeader,
	secretProperty,
} from './shared';

/**
 * Token credential for the unversioned family (extractions, schemas, workflow uploads). The token
 * is the raw value of the `Authorization` header, without a "Bearer" prefix (`§unversioned-5`),
 * and is only sent to the Base URL's origin.
 */
export class ExtractionServiceTokenApi implements ICredentialType {
	name = 'extractionServiceTokenApi';

	displayName = 'Extraction Service Token API';

	icon = CREDENTIAL_ICON;

	documentationUrl =
		'https://github.com/extraction-service/n8n-nodes-extraction-service#credentials';

	properties: INodeProperties[] = [
		baseUrlProperty,
		secretProperty(
			'Token',
			'token',
			'API token created in the Extraction Service dashboard (lifetime 1, 3 or 6 months, or unlimited); sent as the raw Authorization header',
		),
	];

	authenticate = secretHeader('Authorization', 'token');

	/** The Test button: page 1 of `/schema/`, size 1 (`§unversioned-4.5`); see `credentialTest`. */
	test = credentialTest('/schema/');
}
