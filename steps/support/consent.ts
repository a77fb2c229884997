import { randomUUID } from 'node:crypto';
import { quote } from '../../harness/judging/judge.ts';
import { CHECKS, finding } from '../../harness/judging/checks.ts';
import type { ApiResponse } from '../../harness/client/momo-client.ts';
import { sourceOfDifference } from '../../core/profiles.ts';
import { observed, reading } from '../../core/sources.ts';
import { ORDINARY_CUSTOMER } from './parties.ts';
import type { Consent, ConsentFlow, MomoWorld } from './world.ts';

/**
 * The consent flow of §5.4, on the spec's own paths: bc-authorize under collection with the partner's access token
 * (§4.2 #7), the OAuth 2.0 token operation with the CIBA grant under disbursement (§4.3 #11), with the Basic
 * credential of the API user that asked (the CIBA client), then userinfo under collection with the consent token
 * (§4.2 #6). Beyond the spec, the live service serves all three under each product, so one API user completes the
 * flow within its own product. Basic user information needs no consent.
 */

/** Where each step of the consent flow is called: the spec's paths, or one product's own (beyond the spec). */
export function consentFlowOf(world: MomoWorld): ConsentFlow {
  const product = world.actor.product;
  if (world.consentWithinProduct || product !== 'collection') return { ask: product, redeem: product, read: product };
  return { ask: 'collection', redeem: 'disbursement', read: 'collection' };
}

/** The spec gives no time for the holder's answer: the live service's is an observation. */
const CONSENT_TIMING = observed(
  'real-api-notes, other operations: the holder of the sandbox consents after `interval`; the spec gives no time (§4.3 #11, §5.4)',
);

const CIBA_GRANT = 'urn:openid:params:grant-type:ciba';
/** A scope the spec names nowhere and no service offers (§5 rule 7: allowed scopes "not shown"). */
const UNOFFERED_SCOPE = 'not_a_scope';
/** CIBA §11: on slow_down the client adds 5 s to its interval. */
const SLOW_DOWN_STEP_MS = 5000;

/** How a consent is asked for (§4.2 #7): the scope, access_type, and whether the partner wants a callback (§6). */
export interface ConsentAsk {
  scope?: string;
  accessType?: 'online' | 'offline';
  /** Give an X-Callback-Url on the receiver. */
  callback?: boolean;
}

/** bc-authorize for the customer's consent; a consent request answered 200 becomes the scenario's consent. */
export async function askForConsent(world: MomoWorld, ask: ConsentAsk = {}, msisdn = ORDINARY_CUSTOMER.msisdn): Promise<void> {
  const account = world.actor;
  const flow = consentFlowOf(world);
  const scope = ask.scope ?? 'profile';
  const form = { login_hint: `ID:${msisdn}/MSISDN`, scope, access_type: ask.accessType ?? 'offline' };
  // The receiver ties a callback to its request by the URL's last segment; auth_req_id is not known before the answer.
  const callbackKey = ask.callback ? randomUUID() : undefined;
  const extra = callbackKey ? { callbackUrl: world.harness.receiver.urlFor(callbackKey) } : {};
  const askedAt = Date.now();
  const response = world.remember(await world.client.bcAuthorize(flow.ask, await world.bearer(account), form, extra));
  const body = response.json as { auth_req_id?: unknown; interval?: unknown } | undefined;
  if (response.status === 200 && typeof body?.auth_req_id === 'string' && typeof body.interval === 'number') {
    world.consent = {
      account,
      flow,
      msisdn,
      scope,
      authReqId: body.auth_req_id,
      interval: body.interval,
      lastAskedAt: askedAt,
      ...(callbackKey ? { callbackKey } : {}),
    };
  }
}

export function askForUnofferedScope(world: MomoWorld): Promise<void> {
  return askForConsent(world, { scope: UNOFFERED_SCOPE });
}

/**
 * A scope no service offers is refused. §5 rule 7 leaves the allowed scopes "not shown", and the spec names no
 * answer for an unknown one: that it is refused, and with UNSUPPORTED_SCOPE of set A, is our reading (the live
 * sandbox refuses it, its answer not recorded).
 */
export function expectUnofferedScopeRefused(world: MomoWorld): void {
  world.expect({
    status: [400, 500],
    code: 'UNSUPPORTED_SCOPE',
    source: reading(
      '§5 rule 7: allowed scopes "not shown"; real-api-notes saw an unknown scope refused, its status and code not recorded; UNSUPPORTED_SCOPE is set A\'s code for it',
    ),
    what: 'a scope the service does not offer is refused',
  });
}

/** Asks for the consent: the answer must be a consent request (§2.8). */
export async function haveAskedForConsent(world: MomoWorld, ask: ConsentAsk = {}): Promise<void> {
  await askForConsent(world, ask);
  world.expect({ status: 200, what: `the partner asks the customer for consent${ask.accessType ? ` for ${ask.accessType} access` : ''}` });
}

/** A callback arrives at the X-Callback-Url the consent request gave (§6); its payload is not shown, so only its arrival is judged. */
export async function expectConsentCallback(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  if (!consent.callbackKey) throw new Error('The consent request of this scenario gave no callback address.');
  const receiver = world.harness.receiver;
  const slow = 3 * (consent.interval ?? 0) * 1000 > world.config.pollTimeoutMs;
  const where = `bc-authorize (${consent.flow.ask}) — §6, §4.2 #7: a callback arrives at the X-Callback-Url of the consent request once the customer has answered`;
  await world.awaitState(
    'callback-arrives',
    `a callback for the consent request ${consent.authReqId}`,
    async () => (receiver.callbacksFor(consent.callbackKey!).length > 0 ? true : undefined),
    { slow, timing: CONSENT_TIMING, where, operation: 'bcAuthorize', product: consent.flow.ask },
  );
}

/** expires_in of the consent token the partner holds: its lifetime (READINGS in core/profiles.ts), 3600 s by default (§2.7, §8). */
export function expectConsentTokenLifetime(world: MomoWorld, seconds: number): void {
  const consent = currentConsent(world);
  world.check(
    'consent-token-lifetime',
    world.response!,
    `a consent access token is valid ${seconds} seconds by default`,
    consent.tokenExpiresIn === seconds
      ? []
      : [finding('consent-token-lifetime', { field: '/expires_in', expected: String(seconds), received: quote(consent.tokenExpiresIn) })],
  );
}

/** One call of the token operation with the CIBA grant for the scenario's auth_req_id, by the API user that asked. */
export async function redeemConsent(world: MomoWorld): Promise<ApiResponse> {
  const consent = currentConsent(world);
  consent.lastAskedAt = Date.now();
  const form = { grant_type: CIBA_GRANT, auth_req_id: consent.authReqId! };
  return world.remember(await world.client.createOAuthToken(consent.flow.redeem, world.harness.basic(consent.account), form));
}

/** Whether an answer of the token operation says the holder has not answered yet (CIBA Core §11), in whatever status. */
function isPending(response: ApiResponse): 'authorization_pending' | 'slow_down' | undefined {
  const error = (response.json as { error?: unknown } | undefined)?.error;
  return response.status >= 400 && response.status < 500 && (error === 'authorization_pending' || error === 'slow_down')
    ? error
    : undefined;
}

/**
 * Before the customer answers there is no consent token. The spec lists only 200 for the token operation (§4.3
 * #11), and gives no time for the holder's answer: a target whose holder consents at once conforms, and then there
 * was nothing pending to see. What a pending consent answers is CIBA's (§11: 400 authorization_pending), our reading.
 */
export function expectPending(world: MomoWorld): void {
  const response = world.response;
  if (!response) throw new Error('No consent was redeemed in this scenario.');
  if (response.status === 200) {
    world.log('The customer consented at once: there was no pending consent to observe.');
    keepConsentToken(world, 'a consent the customer answered at once gives its token');
    return;
  }
  world.expect({
    status: 400,
    code: 'authorization_pending',
    source: CHECK_READINGS.pending,
    what: 'a consent the customer has not answered yet gives no token',
  });
}

const CHECK_READINGS = {
  pending: reading('§4.3 #11 lists only 200; CIBA Core §11 answers 400 authorization_pending while the holder has not answered'),
  singleUse: reading(
    '§2.7 and §5.4 do not say a consent is redeemed once; CIBA Core §11 and RFC 6749 §5.2 answer a used auth_req_id with 400 invalid_grant',
  ),
};

/**
 * Redeems the consent as a CIBA client polls: no sooner than `interval` after the last ask, while the
 * answer is authorization_pending (or slow_down, which adds 5 s to the interval). Any other answer ends
 * the wait at once and is judged as the consent token it should have been.
 */
export async function redeemOnceConsented(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  let intervalMs = (consent.interval ?? 0) * 1000;
  // A long interval (a real service may ask for 5 s or more) needs the slow deadline to allow a few polls.
  const slow = 3 * intervalMs > world.config.pollTimeoutMs;
  const where = `create OAuth 2.0 token (${consent.flow.redeem}) — §4.3 #11, §5.4: the consent token is issued once the customer has consented`;
  await world.awaitState(
    'consent-granted',
    `the customer consents and the consent token is issued (polling every ${intervalMs / 1000} s)`,
    async () => {
      if (Date.now() - (consent.lastAskedAt ?? 0) < intervalMs) return undefined;
      const response = await redeemConsent(world);
      const pending = isPending(response);
      if (pending) {
        if (pending === 'slow_down') intervalMs += SLOW_DOWN_STEP_MS;
        throw new Error(`the token operation answers ${pending}`);
      }
      try {
        keepConsentToken(world, 'the consent token is issued once the customer has consented');
      } catch (failure) {
        throw Object.assign(failure as Error, { fatal: true });
      }
      return response;
    },
    { slow, timing: CONSENT_TIMING, where, operation: 'createOAuthToken', product: consent.flow.redeem },
  );
}

/** The scenario's consent, answered and redeemed: a consent token in hand. */
export async function holdConsentToken(world: MomoWorld): Promise<void> {
  await haveAskedForConsent(world);
  await redeemOnceConsented(world);
}

/**
 * The refresh_token grant for the consent's refresh token (§2.7): a new consent token. How a consent is refreshed
 * is RFC 6749 §6, our reading: a target that refreshes otherwise is warned of, and the scenario skips the rest.
 */
export async function refreshConsentToken(world: MomoWorld): Promise<string | undefined> {
  const consent = currentConsent(world);
  if (!consent.refreshToken) throw new Error('No consent token was issued in this scenario, so there is nothing to refresh.');
  const form = { grant_type: 'refresh_token', refresh_token: consent.refreshToken };
  const what = 'a consent token is refreshed while the consent lasts';
  const response = world.remember(await world.client.createOAuthToken(consent.flow.redeem, world.harness.basic(consent.account), form));
  if (!world.premise({ status: 200, source: CHECKS['consent-refresh'].source, what }, response)) return 'skipped';
  keepConsentToken(world, what);
  return undefined;
}

export function expectAlreadyRedeemed(world: MomoWorld): void {
  world.expect({
    status: 400,
    code: 'invalid_grant',
    source: CHECK_READINGS.singleUse,
    what: 'an auth_req_id already redeemed gives no second token',
  });
}

/** userinfo with the consent token: the user-information record of §2.11, gender written as the profile writes it. */
export async function readUserInfo(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  if (!consent.accessToken) throw new Error('No consent token was issued in this scenario.');
  const what = "the consent token reads the customer's user information";
  const response = world.remember(await world.client.userInfo(consent.flow.read, `Bearer ${consent.accessToken}`));
  world.expect({ status: 200, what });
  const gender = (response.json as { gender?: unknown }).gender;
  const expectedCase = world.harness.behaviour.genderCase;
  const inCase = typeof gender !== 'string' || gender === (expectedCase === 'upper' ? gender.toUpperCase() : gender.toLowerCase());
  world.check(
    'gender-case',
    response,
    what,
    inCase
      ? []
      : [
          finding('gender-case', {
            field: '/gender',
            expected: `${expectedCase} case`,
            received: quote(gender),
            source: sourceOfDifference('genderCase', world.config.profile),
          }),
        ],
  );
}

/** userinfo with the partner's ordinary access token instead of a consent token. */
export async function readUserInfoWithAccessToken(world: MomoWorld): Promise<void> {
  world.remember(await world.client.userInfo(world.actor.product, await world.bearer()));
}

export async function lookUpBasicInfo(world: MomoWorld, msisdn = ORDINARY_CUSTOMER.msisdn): Promise<void> {
  world.remember(await world.client.basicUserInfo(await world.bearer(), msisdn, {}, world.actor.product));
}

/** The basic user information record: §2.10 in the spec profile, the observed record on the live sandbox (harness/contract.ts). */
export function expectBasicInfo(world: MomoWorld): void {
  world.expect({ status: 200, what: 'basic user information is given without consent (§5 rule 5)' });
}

/**
 * Judges the last answer as a consent token (§2.7: token_type "Bearer", its scope only what was asked for) and
 * keeps its tokens.
 */
function keepConsentToken(world: MomoWorld, what: string): void {
  const consent = currentConsent(world);
  const response = world.expect({ status: 200, what });
  const body = response.json as { access_token: string; refresh_token: string; expires_in: number; scope?: unknown };
  const asked = new Set(consent.scope.split(' ').filter(Boolean));
  const wider = typeof body.scope === 'string' ? body.scope.split(' ').filter((s) => s !== '' && !asked.has(s)) : [];
  world.check(
    'consent-scope-not-wider',
    response,
    what,
    wider.length === 0
      ? []
      : [
          finding('consent-scope-not-wider', {
            field: '/scope',
            expected: `only ${JSON.stringify(consent.scope)}`,
            received: `${quote(body.scope)}, adding ${wider.join(', ')}`,
          }),
        ],
  );
  consent.accessToken = body.access_token;
  consent.refreshToken = body.refresh_token;
  consent.tokenExpiresIn = body.expires_in;
  // Both are credentials, masked from here on wherever they appear (the refresh token is not a JWT), and only
  // the token operation may give them out again (harness/secrets/disclosure.ts).
  world.harness.redactor.add(body.access_token, 'consent token');
  world.harness.redactor.add(body.refresh_token, 'refresh token');
}

function currentConsent(world: MomoWorld): Consent {
  if (!world.consent?.authReqId)
    throw new Error('No consent was asked for in this scenario: start with "the partner has asked a customer for consent".');
  return world.consent;
}
