import type { OperationId } from '../../core/catalogue/operations.ts';
import type { Redactor, SecretKind } from '../../core/secrets/redact.ts';

// The one operation that gives out each kind of secret. A subscription key comes from the provider's portal,
// never from the API; a Basic credential is the API key with its user's id, so it comes with the API key.
const ISSUED_BY: Readonly<Record<SecretKind, OperationId | undefined>> = {
  'subscription key': undefined,
  'API key': 'createApiKey',
  'Basic credential': 'createApiKey',
  'access token': 'createAccessToken',
  'consent token': 'createOAuthToken',
  'refresh token': 'createOAuthToken',
  secret: undefined,
};

const NAMED: Readonly<Record<SecretKind, string>> = {
  'subscription key': 'a subscription key',
  'API key': 'an API key',
  'Basic credential': 'a Basic credential',
  'access token': 'an access token',
  'consent token': 'a consent token',
  'refresh token': 'a refresh token',
  secret: 'a secret of the run',
};

/**
 * The secrets a response gives out that its operation does not issue: each known secret found in it, in any
 * encoding, named by its kind and how it was written, e.g. "a subscription key (base64-encoded)", never by
 * its value. An empty list when the response discloses nothing.
 */
export function secretsDisclosed(operationId: OperationId, responseText: string, redactor: Redactor): string[] {
  const disclosed = redactor
    .seen(responseText)
    .filter(({ kind }) => ISSUED_BY[kind] !== operationId)
    .map(({ kind, encoding }) => `${NAMED[kind]} (${encoding})`);
  return [...new Set(disclosed)];
}
