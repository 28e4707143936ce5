/**
 * A family's credential as the client uses it for a whole execution: read once, its Base URL
 * checked, its secrets collected (`docs/service-api.md` §node, Addresses and credentials).
 */
import type { ICredentialsDecrypted } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { CREDENTIAL_TYPE, type ApiFamily } from './families';
import { secretsOf } from './redact';
import type { Context } from './types';

/** What the client knows of a family's credential: where to send, what never to show, what to sign with. */
export interface FamilyCredential {
	/** The Base URL without trailing slashes. */
	baseUrl: string;
	/** Secret values (every field but the Base URL), removed from all service text (`redact.ts`). */
	secrets: string[];
	/**
	 * The credential as read once for the execution, handed to every request
	 * (`credentialsDecrypted`): without it n8n reads the credential again for each request — in n8n
	 * a database read and a decryption, thousands of times in a large execution.
	 */
	decrypted: ICredentialsDecrypted;
}

/**
 * Reads a family's credential and checks its Base URL: an absolute http(s) URL without a user or
 * password (those would travel into every `*_absolute` URL the node outputs and into messages).
 *
 * @throws NodeOperationError (with `itemIndex`) when the Base URL is not an http(s) URL or holds a
 *   user or password; n8n's error when the credential cannot be read
 */
export async function loadCredential(
	ctx: Context,
	family: ApiFamily,
	itemIndex: number,
): Promise<FamilyCredential> {
	const type = CREDENTIAL_TYPE[family];
	const data = await ctx.getCredentials(type, itemIndex);
	const raw = String(data.baseUrl ?? '')
		.trim()
		.replace(/\/+$/, '');
	let parsed: URL | undefined;
	try {
		parsed = new URL(raw);
	} catch {
		parsed = undefined;
	}
	if (!parsed || !/^https?:$/.test(parsed.protocol) || !/^https?:\/\//i.test(raw)) {
		// Anything between "//" and "@" may be a password: never shown.
		throw new NodeOperationError(
			ctx.getNode(),
			`The credential's Base URL "${raw.replace(/\/\/[^/]*@/, '//…@')}" is not a valid http(s) URL`,
			{ description: 'Write it with its scheme, for example https://api.example.com', itemIndex },
		);
	}
	if (parsed.username || parsed.password) {
		throw new NodeOperationError(
			ctx.getNode(),
			'The Base URL must not contain a user name or password',
			{
				description:
					'Remove "user:password@" from the credential\'s Base URL. The node authenticates with the API key or token only; a proxy that needs a login cannot be given one here.',
				itemIndex,
			},
		);
	}
	const saved = ctx.getNode().credentials?.[type];
	return {
		baseUrl: raw,
		secrets: secretsOf(data),
		decrypted: { id: saved?.id ?? '', name: saved?.name ?? '', type, data },
	};
}
