import type { ApiResponse } from '../client/momo-client.ts';
import { sourceOfDifference, type ProfileName } from '../../core/profiles.ts';
import { observed, reading, spec, type Source } from '../../core/sources.ts';
import { findingOf, quote, type CheckDefinition, type Finding, type Found } from './check.ts';

/**
 * What the partner's credentials are held to: the access token's record and how it is kept, that it is honoured
 * for as long as it says, and how the gateway refuses a call without the product's subscription key.
 */
export const CREDENTIAL_CHECKS = {
  'token-type': {
    title: 'token_type names the kind of token the profile gives it, compared without regard to case.',
    source: spec('§2.6: token_type is the type of the access token; §5.3: the access token is used as a Bearer credential'),
    general: true,
  },
  'token-not-cached': {
    title: 'An answer that carries a token tells caches not to keep it (Cache-Control: no-store).',
    source: observed(
      'real-api-notes, provisioning and tokens: the token answer carries cache-control: no-store; RFC 6749 §5.1 asks it of every answer with a token, and the spec does not say',
    ),
    general: true,
  },
  'token-honoured-until-expiry': {
    title: 'An access token is honoured until its expires_in has passed, so a client that renews it in time is never refused.',
    source: spec('§2.6, §8: expires_in is the validity of the token in seconds'),
    values: {
      superseded: reading(
        'a newer token was issued to the API user since: §2.6 gives a token its validity and does not say whether a service revokes a token it replaced',
      ),
    },
  },
  'gateway-refusal-shape': {
    title: 'The gateway refuses a call without a valid subscription key with {statusCode: 401, message}.',
    source: observed("real-api-notes, provisioning and tokens: the gateway's 401 {statusCode, message}"),
  },
} as const satisfies Record<string, CheckDefinition>;

type CredentialCheck = keyof typeof CREDENTIAL_CHECKS;
const found = (name: CredentialCheck, f: Found): Finding => findingOf(name, CREDENTIAL_CHECKS[name], f);

/** token_type against the profile's value, in any case (RFC 6749 §5.1): "Bearer" by our reading, "access_token" live. */
export function tokenTypeFindings(tokenType: unknown, expected: string, profile: ProfileName): Finding[] {
  if (typeof tokenType === 'string' && tokenType.toLowerCase() === expected.toLowerCase()) return [];
  return [
    found('token-type', {
      field: '/token_type',
      expected: `${JSON.stringify(expected)}, in any case`,
      received: quote(tokenType),
      source: sourceOfDifference('tokenType', profile),
    }),
  ];
}

/**
 * RFC 6749 §5.1 asks it of every answer with a token, and §4.3 #11 names the consent's token operation "OAuth 2.0
 * token"; the live service was seen to send no-store on /token/ only, so that the consent's token answers do is ours.
 */
export const CONSENT_TOKEN_NOT_CACHED = reading(
  'RFC 6749 §5.1: an answer with a token carries Cache-Control: no-store; §4.3 #11 is the OAuth 2.0 token operation, and real-api-notes saw no-store on /token/ only: that the consent token and its refresh carry it is our reading',
);

/** The token answer's Cache-Control says no-store (weighing as `source` where the rule is not the check's own). */
export function notCachedFindings(response: ApiResponse, source?: Source): Finding[] {
  const cacheControl = response.headers['cache-control'];
  const directives = (cacheControl ?? '').split(',').map((d) => d.trim().toLowerCase());
  return directives.includes('no-store')
    ? []
    : [
        found('token-not-cached', {
          field: 'header Cache-Control',
          expected: 'no-store',
          received: cacheControl === undefined ? 'none' : quote(cacheControl),
          ...(source ? { source } : {}),
        }),
      ];
}

/** One call of a client through a token's lifetime: when it was made, and what the target answered. */
export interface TimedCall {
  atMs: number;
  status: number;
}

/**
 * A client that renews its token before expires_in passes is never refused: a 4xx is the call refused. A 5xx (a 500
 * or 503 of a target's bad weather, which the live service has often) says nothing of the token.
 */
export function honouredFindings(calls: readonly TimedCall[]): Finding[] {
  const refused = calls.filter((c) => c.status >= 400 && c.status < 500);
  return refused.length === 0
    ? []
    : [
        found('token-honoured-until-expiry', {
          field: 'status',
          expected: `no refusal of any of ${calls.length} calls`,
          received: `${refused.length} refused: ${refused.map((c) => `at ${c.atMs} ms HTTP ${c.status}`).join(', ')}`,
        }),
      ];
}

/**
 * A token the target refused (401) before its expires_in had passed: a departure from §2.6, unless a newer token was
 * issued to the API user since (superseded), which the spec leaves open.
 */
export function refusedEarlyFindings(token: { issuedAt: number; expiresAt: number }, at: number, superseded: boolean): Finding[] {
  const lived = Math.round((at - token.issuedAt) / 1000);
  const life = Math.round((token.expiresAt - token.issuedAt) / 1000);
  return [
    found('token-honoured-until-expiry', {
      field: 'status',
      expected: `the token honoured for its expires_in of ${life} s`,
      received: `401 after ${lived} s${superseded ? ', a newer token having been issued to the API user since' : ', with no newer token issued to the API user'}`,
      ...(superseded ? { source: CREDENTIAL_CHECKS['token-honoured-until-expiry'].values.superseded } : {}),
    }),
  ];
}

/** The gateway's refusal is {statusCode: 401, message} on the live service. */
export function gatewayShapeFindings(response: ApiResponse): Finding[] {
  const body = response.json as { statusCode?: unknown } | undefined;
  return body?.statusCode === 401
    ? []
    : [
        found('gateway-refusal-shape', {
          field: '/statusCode',
          expected: '401, with a message',
          received: body?.statusCode === undefined ? 'none' : quote(body.statusCode),
        }),
      ];
}
