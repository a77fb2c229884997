import { observed, reading, spec } from '../../core/sources.ts';
import { findingOf, quote, type CheckDefinition, type Finding, type Found } from './check.ts';

/**
 * What the consent flow of §5.4 is held to: the consent is granted once the holder consents, redeemed once, its
 * token's scope no wider than asked, its lifetime what §2.7 says, and refreshable while the consent lasts.
 */
export const CONSENT_CHECKS = {
  'consent-granted': {
    title: 'A consent the holder approves gives its consent token, through the OAuth 2.0 token operation with the CIBA grant.',
    source: spec('§5.4, §4.3 #11: the token operation with grant_type and auth_req_id returns a Bearer access token'),
    values: {
      timing: observed(
        'real-api-notes, other operations: the holder of the sandbox consents after `interval`; the spec gives no time (§4.3 #11, §5.4)',
      ),
    },
  },
  'consent-token-lifetime': {
    title: 'A consent access token is valid 3600 seconds by default, and its expires_in says so.',
    source: reading(
      "§2.7 and §8 give the consent access token 3600 s by default, but word expires_in as the seconds until the auth_req_id expires: that expires_in is the token's life is our reading",
    ),
  },
  'consent-refresh': {
    title: 'A refresh token gives a new consent token while the consent lasts, with grant_type=refresh_token.',
    source: reading(
      '§2.7 gives a refresh token and how long the consent can be refreshed, not how: RFC 6749 §6 (grant_type=refresh_token) is our reading',
    ),
  },
  'consent-scope-not-wider': {
    title: "A consent token's scope holds only scopes that were asked for.",
    source: spec('§2.7: scope is the scopes that belong to the authentication request ID'),
    general: true,
  },
  'consent-scope-whole': {
    title: "A consent token's scope holds every scope that was asked for.",
    source: reading(
      '§2.7: scope is the scopes that belong to the authentication request ID; that every scope asked for belongs to it is our reading (RFC 6749 §3.3 lets a server grant fewer, and say so in scope)',
    ),
  },
  'consent-refresh-again': {
    title:
      'A refreshed consent token is refreshed again at once while the consent lasts, with the refresh token the refresh gave (or, if it gave none, the one held).',
    source: spec(
      '§2.7: refresh_token_expired_in is the seconds until the consent can no longer be refreshed; §8: consent refresh validity is refresh_token_expired_in seconds. Once the target has refreshed the consent one way (RFC 6749 §6, our reading of the form), a refresh while it lasts is refreshed again; RFC 6749 §6: a client given a new refresh token discards the old one and uses the new',
    ),
  },
  'consent-poll-not-slowed': {
    title:
      'A client that waited the announced interval since its last poll of the token operation for an auth_req_id is not told to slow_down.',
    source: reading(
      '§2.8: interval is how long the client waits between retries to the consent token endpoint (§5.4); CIBA Core §11: slow_down is for a client polling faster than allowed. The spec does not define slow_down: that waiting interval is enough is our reading',
    ),
  },
  'consent-pending': {
    title: 'A consent the holder has not answered yet gives no token: the CIBA grant is authorization_pending.',
    source: reading('§4.3 #11 lists only 200; CIBA Core §11 answers 400 authorization_pending while the holder has not answered'),
  },
  'consent-single-use': {
    title: 'A consent gives its token once: redeemed again, it is invalid_grant.',
    source: reading('§2.7 and §5.4 do not say; CIBA Core §11 and RFC 6749 §5.2 answer a used auth_req_id with 400 invalid_grant'),
  },
  'consent-ends-when-it-did': {
    title: 'Refreshing a consent token does not lengthen the consent: refresh_token_expired_in counts down to the same end.',
    source: spec(
      '§2.7: refresh_token_expired_in is the seconds until the consent can no longer be refreshed, based on the default consent validity or the consent_valid_in of the bc-authorize request',
    ),
  },
  'consent-refresh-own-customer': {
    title: 'A refreshed consent token does not read the user information of another customer whose consent the partner holds.',
    source: spec('§2.7 and §8: a refresh token refreshes its own consent ("consent refresh validity"); §2.11: sub identifies the end user'),
  },
  'consent-refresh-same-sub': {
    title: 'A refreshed consent token reads the same sub as the consent token before it.',
    source: reading(
      '§2.11 gives sub as the identifier of the end user; that it stays the same for one customer is OpenID Connect Core §2 ("never reassigned"), which the spec does not name',
    ),
  },
  'userinfo-sub-per-customer': {
    title: 'Two customers whose user information the target gives apart (their phone numbers differ) have subs that differ.',
    source: spec('§2.11: sub is the identifier of the end user at the issuer'),
  },
} as const satisfies Record<string, CheckDefinition>;

type ConsentCheck = keyof typeof CONSENT_CHECKS;
const found = (name: ConsentCheck, f: Found): Finding => findingOf(name, CONSENT_CHECKS[name], f);

/** The consent token's expires_in against the lifetime it should have. */
export function lifetimeFindings(expiresIn: unknown, seconds: number): Finding[] {
  return expiresIn === seconds
    ? []
    : [found('consent-token-lifetime', { field: '/expires_in', expected: String(seconds), received: quote(expiresIn) })];
}

/** The scopes of a consent token beyond those asked for, and those asked for that it lacks (§2.7: the request's scopes). */
export function scopeFindings(asked: string, scope: unknown): Finding[] {
  if (typeof scope !== 'string') return [];
  // Space-delimited as OAuth writes scopes (RFC 6749 §3.3); §2.7 types scope only as a string, so commas part them too.
  const wanted = new Set(asked.split(/[\s,]+/).filter(Boolean));
  const given = new Set(scope.split(/[\s,]+/).filter(Boolean));
  const wider = [...given].filter((s) => !wanted.has(s));
  const lacking = [...wanted].filter((s) => !given.has(s));
  return [
    ...(wider.length > 0
      ? [
          found('consent-scope-not-wider', {
            field: '/scope',
            expected: `only ${JSON.stringify(asked)}`,
            received: `${quote(scope)}, adding ${wider.join(', ')}`,
          }),
        ]
      : []),
    ...(lacking.length > 0
      ? [
          found('consent-scope-whole', {
            field: '/scope',
            expected: `every scope of ${JSON.stringify(asked)}`,
            received: `${quote(scope)}, without ${lacking.join(', ')}`,
          }),
        ]
      : []),
  ];
}

/**
 * Two customers' user information with one sub although the target gives them apart by their phone numbers: the sub
 * identifies no end user (definite in the spec profile; the live sandbox gives every customer sub "0", observed).
 */
export function subPerCustomerFindings(
  first: { sub: string | undefined; phone: string | undefined },
  other: { sub: string | undefined; phone: string | undefined },
): Finding[] {
  if (first.sub === undefined || first.sub !== other.sub) return [];
  if (first.phone === undefined || other.phone === undefined || first.phone === other.phone) return [];
  return [
    found('userinfo-sub-per-customer', {
      field: '/sub',
      expected: `a sub of the customer whose phone_number is ${quote(other.phone)}, other than ${quote(first.phone)}'s`,
      received: `${quote(first.sub)} for both`,
    }),
  ];
}

/**
 * When the consent can no longer be refreshed, as a refresh puts it (ms since the epoch), against when the token before
 * put it: no later, allowing for the whole seconds of the field and the time the answers took (`slackMs`).
 */
export function consentEndFindings(before: number, after: number, slackMs: number): Finding[] {
  if (after <= before + slackMs) return [];
  return [
    found('consent-ends-when-it-did', {
      field: '/refresh_token_expired_in',
      expected: `the consent to end when it did, ${new Date(before).toISOString()}`,
      received: `${Math.round((after - before) / 1000)} s later: ${new Date(after).toISOString()}`,
    }),
  ];
}

/** Who user information is about: its sub (§2.11, "Identifier of the end user"); undefined when it gives none. */
export function customerIn(userInfo: unknown): string | undefined {
  if (typeof userInfo !== 'object' || userInfo === null || Array.isArray(userInfo)) return undefined;
  const { sub } = userInfo as { sub?: unknown };
  return typeof sub === 'string' || typeof sub === 'number' ? JSON.stringify(sub) : undefined;
}

/**
 * The customer a refreshed consent token reads (customerIn), against the one who consented and the other whose consent
 * the partner was given since: the other's is another customer's information (definite); any other sub, a sub that
 * changed (our reading).
 */
export function ownCustomerFindings(consented: string, other: string, read: string | undefined): Finding[] {
  if (read === consented) return [];
  if (read === other)
    return [found('consent-refresh-own-customer', { field: '/sub', expected: consented, received: `${read}, the other customer's` })];
  return [found('consent-refresh-same-sub', { field: '/sub', expected: consented, received: read ?? 'no sub' })];
}

/**
 * A poll of the token operation answered slow_down although the client had waited `owedMs` (the announced interval,
 * plus CIBA's 5 s for each slow_down before) and the margin for clocks since the answer to its last poll: `gapMs` as
 * the client measured it, from that answer's arrival to this request's sending (no more than the server saw).
 */
export function slowDownFindings(error: unknown, gapMs: number, owedMs: number, marginMs: number): Finding[] {
  if (error !== 'slow_down' || gapMs < owedMs + marginMs) return [];
  return [
    found('consent-poll-not-slowed', {
      field: '/error',
      expected: `no slow_down to a poll ${Math.round(gapMs)} ms after the last (the interval owed: ${owedMs} ms)`,
      received: quote(error),
    }),
  ];
}
