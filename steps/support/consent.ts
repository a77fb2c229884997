import { randomUUID } from 'node:crypto';
import { ConformanceFailure } from '../../harness/judging/judge.ts';
import type { ApiResponse } from '../../harness/client/momo-client.ts';
import { ORDINARY_CUSTOMER } from './parties.ts';
import type { Consent, MomoWorld } from './world.ts';

/**
 * The consent flow of §5.4 within the partner's own product: bc-authorize with its access token, the
 * OAuth 2.0 token operation with the CIBA grant (§4.3 #11; served under each product, so one API user
 * completes the flow), then userinfo with the consent token. Basic user information needs no consent.
 */

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
  const form = { login_hint: `ID:${msisdn}/MSISDN`, scope: ask.scope ?? 'profile', access_type: ask.accessType ?? 'offline' };
  // The receiver ties a callback to its request by the URL's last segment; auth_req_id is not known before the answer.
  const callbackKey = ask.callback ? randomUUID() : undefined;
  const extra = callbackKey ? { callbackUrl: world.harness.receiver.urlFor(callbackKey) } : {};
  const askedAt = Date.now();
  const response = world.remember(await world.client.bcAuthorize(account.product, await world.bearer(account), form, extra));
  const body = response.json as { auth_req_id?: unknown; interval?: unknown } | undefined;
  if (response.status === 200 && typeof body?.auth_req_id === 'string' && typeof body.interval === 'number') {
    world.consent = { account, msisdn, authReqId: body.auth_req_id, interval: body.interval, lastAskedAt: askedAt, ...(callbackKey ? { callbackKey } : {}) };
  }
}

export function askForUnofferedScope(world: MomoWorld): Promise<void> {
  return askForConsent(world, { scope: UNOFFERED_SCOPE });
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
  await world.eventually(`a callback for the consent request ${consent.authReqId}`, async () => (receiver.callbacksFor(consent.callbackKey!).length > 0 ? true : undefined), { slow });
}

/** expires_in of the consent token the partner holds: its lifetime (READINGS in core/profiles.ts), 3600 s by default (§2.7, §8). */
export function expectConsentTokenLifetime(world: MomoWorld, seconds: number): void {
  const consent = currentConsent(world);
  if (consent.tokenExpiresIn !== seconds) {
    const response = world.response!;
    throw new ConformanceFailure(`${response.operation.label} — ${response.operation.section}, §2.7, §8: a consent access token is valid ${seconds} seconds by default\n  expected: expires_in ${seconds}\n  received: expires_in ${JSON.stringify(consent.tokenExpiresIn)}`, response);
  }
}

/** One call of the token operation with the CIBA grant for the scenario's auth_req_id. */
export async function redeemConsent(world: MomoWorld): Promise<ApiResponse> {
  const consent = currentConsent(world);
  consent.lastAskedAt = Date.now();
  const form = { grant_type: CIBA_GRANT, auth_req_id: consent.authReqId! };
  return world.remember(await world.client.createOAuthToken(consent.account.product, world.harness.basic(consent.account), form));
}

/** Before the customer answers, the CIBA grant is authorization_pending (CIBA §11, RFC 6749 §5.2). */
export function expectPending(world: MomoWorld): void {
  world.expect({ status: 400, code: 'authorization_pending', what: 'a consent the customer has not answered yet gives no token' });
}

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
  await world.eventually(`the customer consents and the consent token is issued (polling every ${intervalMs / 1000} s)`, async () => {
    if (Date.now() - (consent.lastAskedAt ?? 0) < intervalMs) return undefined;
    const response = await redeemConsent(world);
    const error = (response.json as { error?: unknown } | undefined)?.error;
    if (response.status === 400 && (error === 'authorization_pending' || error === 'slow_down')) {
      if (error === 'slow_down') intervalMs += SLOW_DOWN_STEP_MS;
      throw new Error(`the token operation answers ${error}`);
    }
    try {
      keepConsentToken(world, 'the consent token is issued once the customer has consented');
    } catch (failure) {
      throw Object.assign(failure as Error, { fatal: true });
    }
    return response;
  }, { slow });
}

/** The scenario's consent, answered and redeemed: a consent token in hand. */
export async function holdConsentToken(world: MomoWorld): Promise<void> {
  await haveAskedForConsent(world);
  await redeemOnceConsented(world);
}

/** The refresh_token grant for the consent's refresh token (§2.7): a new consent token. */
export async function refreshConsentToken(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  if (!consent.refreshToken) throw new Error('No consent token was issued in this scenario, so there is nothing to refresh.');
  const form = { grant_type: 'refresh_token', refresh_token: consent.refreshToken };
  world.remember(await world.client.createOAuthToken(consent.account.product, world.harness.basic(consent.account), form));
  keepConsentToken(world, 'a consent token is refreshed while the consent lasts');
}

export function expectAlreadyRedeemed(world: MomoWorld): void {
  world.expect({ status: 400, code: 'invalid_grant', what: 'an auth_req_id already redeemed gives no second token (RFC 6749 §5.2 invalid_grant)' });
}

/** userinfo with the consent token: the user-information record of §2.11, gender written as the profile writes it. */
export async function readUserInfo(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  if (!consent.accessToken) throw new Error('No consent token was issued in this scenario.');
  const response = world.remember(await world.client.userInfo(consent.account.product, `Bearer ${consent.accessToken}`));
  world.expect({ status: 200, what: 'the consent token reads the customer\'s user information' });
  const gender = (response.json as { gender?: string }).gender;
  const expectedCase = world.harness.behaviour.genderCase;
  if (gender && gender !== (expectedCase === 'upper' ? gender.toUpperCase() : gender.toLowerCase())) {
    throw new ConformanceFailure(`${response.operation.label} — ${response.operation.section}, §2.11: gender is "${gender}", not written in ${expectedCase} case (profile ${world.config.profile})`, response);
  }
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

/** Judges the last answer as a consent token (§2.7: token_type "Bearer") and keeps its tokens. */
function keepConsentToken(world: MomoWorld, what: string): void {
  const consent = currentConsent(world);
  const body = world.expect({ status: 200, what }).json as { access_token: string; refresh_token: string; expires_in: number };
  consent.accessToken = body.access_token;
  consent.refreshToken = body.refresh_token;
  consent.tokenExpiresIn = body.expires_in;
  // Both are credentials, masked from here on wherever they appear (the refresh token is not a JWT), and only
  // the token operation may give them out again (harness/secrets/disclosure.ts).
  world.harness.redactor.add(body.access_token, 'consent token');
  world.harness.redactor.add(body.refresh_token, 'refresh token');
}

function currentConsent(world: MomoWorld): Consent {
  if (!world.consent?.authReqId) throw new Error('No consent was asked for in this scenario: start with "the partner has asked a customer for consent".');
  return world.consent;
}
