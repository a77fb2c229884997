import { randomUUID } from 'node:crypto';
import type { ApiResponse, CallOptions } from '../../harness/client/momo-client.ts';
import {
  CONSENT_CHECKS,
  consentEndFindings,
  slowDownFindings,
  subPerCustomerFindings,
  customerIn,
  lifetimeFindings,
  ownCustomerFindings,
  scopeFindings,
} from '../../harness/checks/consent.ts';
import { ANOTHER_ORDINARY_MSISDN } from '../../core/test-numbers.ts';
import { CONSENT_TOKEN_NOT_CACHED, notCachedFindings } from '../../harness/checks/credentials.ts';
import { PREMISES } from '../../harness/checks/premises.ts';
import { PremiseNotHeld } from '../../harness/judging/judge.ts';
import { CALLBACK_CHECKS, consentCallbackFindings, pingBeforeAnswerFindings } from '../../harness/checks/callbacks.ts';
import type { Source } from '../../core/sources.ts';
import { genderCaseFindings } from '../../harness/checks/accounts.ts';
import { REFUSALS } from '../../harness/checks/refusals.ts';
import type { PremiseName } from '../../harness/checks/premises.ts';
import type { Product } from '../../core/products.ts';
import { bindingOf } from '../../core/catalogue/routes.ts';
import { sourceOfDifference } from '../../core/profiles.ts';
import type { Account } from './harness.ts';
import { ORDINARY_CUSTOMER } from './parties.ts';
import { REFUSALS_OF_ANY_KIND } from './refusals.ts';
import { DeadlineExceededError } from '../../harness/eventually.ts';
import { requestPayment } from './transactions.ts';
import { errorCodePresentFindings } from '../../harness/checks/answers.ts';
import type { Finding } from '../../harness/checks/check.ts';
import type { Consent, ConsentFlow, MomoWorld } from './world.ts';
import { foreignCallbackUrl, ownCallbackUrl } from './callbacks.ts';
import { expectNoToken, refusedTokenStatuses } from './tokens.ts';

/**
 * The consent flow of §5.4: bc-authorize under collection with the partner's access token (§4.2 #7), the OAuth 2.0
 * token operation with the CIBA grant under disbursement (§4.3 #11), then userinfo under collection with the consent
 * token (§4.2 #6). The flow crosses products, and the spec says neither which API user redeems the consent nor that
 * an API user works across products, while the live service binds an API user to its product (real-api-notes). So
 * who redeems is a premise (harness/checks/premises.ts), and the suite tries the ways the text allows in turn
 * (docs/conformance.md, "The consent flow"): in the spec profile the asking API user at the listed path, then a
 * disbursement API user there, then the flow within the asking API user's own product; in the mtn-sandbox profile,
 * which follows the observed binding, the flow within its own product first. Beyond the spec, the live service
 * serves all three under each product, which the within-product scenarios check. Basic user information needs no
 * consent.
 */

/** Where each step of the consent flow is called before a way to redeem is chosen: the spec's paths, or one product's own. */
export function consentFlowOf(world: MomoWorld): ConsentFlow {
  const product = world.actor.product;
  if (world.consentWithinProduct || product !== 'collection') return { ask: product, redeem: product, read: product };
  return { ask: 'collection', redeem: 'disbursement', read: 'collection' };
}

/** A way to redeem a consent: under which product, by which API user, on which premise. */
interface RedeemWay {
  premise: PremiseName;
  redeem: Product;
  redeemer: (world: MomoWorld, consent: Consent) => Promise<Account>;
}

const BY_ASKER: RedeemWay = { premise: 'consent-redeemed-by-asker', redeem: 'disbursement', redeemer: async (_w, c) => c.account };
const BY_PRODUCT_USER: RedeemWay = {
  premise: 'consent-redeemed-by-product-user',
  redeem: 'disbursement',
  redeemer: (w) => w.harness.account('disbursement'),
};
const WITHIN_PRODUCT: RedeemWay = {
  premise: 'consent-within-own-product',
  redeem: 'collection',
  redeemer: async (_w, c) => c.account,
};

/** The ways to redeem a consent asked under collection, in the order the profile's text makes them likeliest. */
const REDEEM_WAYS = {
  spec: [BY_ASKER, BY_PRODUCT_USER, WITHIN_PRODUCT],
  'mtn-sandbox': [WITHIN_PRODUCT, BY_ASKER, BY_PRODUCT_USER],
} as const;

/** The key under which a worker remembers the way that held on the target, to try it first next time. */
const WAY_HELD = 'consent redeem way';

/** The spec gives no time for the holder's answer: the live service's is an observation. */
const CONSENT_TIMING = CONSENT_CHECKS['consent-granted'].values.timing;

const CIBA_GRANT = 'urn:openid:params:grant-type:ciba';
/** A scope the spec names nowhere and no service offers (§5 rule 7: allowed scopes "not shown"). */
const UNOFFERED_SCOPE = 'not_a_scope';
/** CIBA §11: on slow_down the client adds 5 s to its interval. */
const SLOW_DOWN_STEP_MS = 5000;
/**
 * What the partner waits beyond the interval it owes between polls of the token operation, for the clocks of both
 * sides: it polls this much after the interval, and no later (within the poll step), so a server that wants more than
 * the interval it announced is seen asking for it (CONSENT_CHECKS consent-poll-not-slowed).
 */
const POLL_MARGIN_MS = 250;

/** How a consent is asked for (§4.2 #7): the scope, access_type, and whether the partner wants a callback (§6). */
export interface ConsentAsk {
  scope?: string;
  /** online or offline (§4.2 #7), or another, to see it refused. */
  accessType?: string;
  /** consent_valid_in, in seconds (our reading of a form §4.2 #7 does not show). */
  validForSeconds?: number;
  /** Give an X-Callback-Url on the receiver, or on another host than the API user registered. */
  callback?: boolean | 'another host';
}

/** bc-authorize for the customer's consent; a consent request answered 200 becomes the scenario's consent. */
export async function askForConsent(world: MomoWorld, ask: ConsentAsk = {}, msisdn = ORDINARY_CUSTOMER.msisdn): Promise<void> {
  const account = world.actor;
  const flow = consentFlowOf(world);
  const scope = ask.scope ?? 'profile';
  const form = {
    login_hint: `ID:${msisdn}/MSISDN`,
    scope,
    access_type: ask.accessType ?? 'offline',
    ...(ask.validForSeconds !== undefined ? { consent_valid_in: String(ask.validForSeconds) } : {}),
  };
  // The receiver ties a callback to its request by the URL's last segment; auth_req_id is not known before the answer.
  const callbackKey = ask.callback ? randomUUID() : undefined;
  const callbackUrl = callbackKey && (ask.callback === 'another host' ? foreignCallbackUrl : ownCallbackUrl)(world, callbackKey);
  const extra = callbackUrl ? { callbackUrl } : {};
  const askedAt = Date.now();
  const response = world.remember(await world.client.bcAuthorize(flow.ask, await world.bearer(account), form, extra));
  const body = response.json as { auth_req_id?: unknown; interval?: unknown; expires_in?: unknown } | undefined;
  if (response.status === 200 && typeof body?.auth_req_id === 'string' && typeof body.interval === 'number') {
    world.consent = {
      account,
      redeemer: account,
      flow,
      msisdn,
      scope,
      authReqId: body.auth_req_id,
      interval: body.interval,
      ...(typeof body.expires_in === 'number' ? { requestExpiresIn: body.expires_in } : {}),
      askedAt,
      lastAskedAt: askedAt,
      askAnswer: response,
      ...(callbackKey ? { callbackKey } : {}),
    };
  } else if (callbackKey) world.refusedConsentCallbackKey = callbackKey;
}

/**
 * Another consent request of the same customer, to a scope other than the scenario's consent's (openid, which the live
 * service offers besides profile): the scenario's consent stays the first. A target that does not offer it refuses
 * it; the first consent's token must carry its own scopes either way (§2.7).
 */
export async function askAgainForAnotherScope(world: MomoWorld): Promise<void> {
  const first = currentConsent(world);
  const scope = first.scope === 'openid' ? 'profile' : 'openid';
  const form = { login_hint: `ID:${first.msisdn}/MSISDN`, scope, access_type: 'offline' };
  const response = await world.client.bcAuthorize(first.flow.ask, await world.bearer(first.account), form);
  if (response.status !== 200)
    world.log(`The target did not take a consent request to ${scope} (${response.status}); the first consent is redeemed all the same.`);
}

export function askForUnofferedScope(world: MomoWorld, told = false): Promise<void> {
  return askForConsent(world, { scope: UNOFFERED_SCOPE, ...(told ? { callback: true } : {}) });
}

/** A consent request for the customer's profile with an access type §4.2 #7 does not name. */
export function askForUnnamedAccessType(world: MomoWorld): Promise<void> {
  return askForConsent(world, { accessType: 'forever' });
}

/** An access type other than online or offline is refused (our reading: the listing shows only 200). */
export function expectAccessTypeRefused(world: MomoWorld): void {
  world.expect({
    status: [400, 500],
    source: REFUSALS['access-type-named'],
    what: 'a consent request with an access type §4.2 #7 does not name is refused',
  });
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
    source: REFUSALS['unoffered-scope'],
    what: 'a scope the service does not offer is refused',
  });
}

/** Two scopes the live service offers (real-api-notes), asked for in one consent request. */
const TWO_SCOPES = 'profile openid';

/**
 * A consent to two scopes at once, resting on the premise that the target offers them together (the spec lists no
 * scopes and has a code for a combination it does not support): refused, the scenario is not tested.
 */
export async function haveAskedForConsentToTwoScopes(world: MomoWorld): Promise<void> {
  world.assume('two-scopes-offered');
  await askForConsent(world, { scope: TWO_SCOPES });
  world.expect({ status: 200, what: `the partner asks the customer for consent to ${TWO_SCOPES}`, premises: ['two-scopes-offered'] });
  world.held('two-scopes-offered');
}

/**
 * The consent redeemed with the redeemer's API user id and a key it was never given, every way the text allows, each
 * polled while the consent is pending (a target may look at the grant before the credential). A consent token given to
 * a wrong key departs from §5 rule 2 whichever way it is: any refusal conforms.
 */
export async function redeemWithWrongKey(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  // Only where the spec lists the token operation: a target need not serve it elsewhere (docs/beyond-spec.md §10).
  const ways = redeemWays(world).filter((way) => bindingOf('createOAuthToken', way.redeem).beyondSpec === undefined);
  consent.wrongKeyAnswers = [];
  for (const way of ways.length > 0 ? ways : [undefined]) {
    if (way) useWay(consent, way, await way.redeemer(world, consent));
    const wrong = `Basic ${Buffer.from(`${consent.redeemer.userId}:${'0'.repeat(32)}`).toString('base64')}`;
    const form = { grant_type: CIBA_GRANT, auth_req_id: consent.authReqId! };
    const answer = await world
      .eventually(
        'an answer to a consent redeemed with a wrong API key that is not "pending"',
        async () => {
          const { response } = await pollTokenOperation(consent, () =>
            world.client.createOAuthToken(consent.flow.redeem, wrong, form, { renew: false }),
          );
          return isPending(response) ? undefined : response;
        },
        { readsTarget: true },
      )
      .catch((error: unknown) => {
        if (error instanceof DeadlineExceededError) return undefined;
        throw error;
      });
    if (!answer) world.log(`The consent redeemed with a wrong API key under ${consent.flow.redeem} stayed pending: no token was given.`);
    else consent.wrongKeyAnswers.push({ way: way?.premise, answer: world.remember(answer) });
    if (answer?.status === 200) return;
  }
}

/** §5 rule 2: a token is created from the API user's id and its API key; a wrong key gets none, whichever the refusal. */
export function expectNoConsentToken(world: MomoWorld): void {
  for (const { answer } of currentConsent(world).wrongKeyAnswers ?? [])
    world.expect(
      {
        status: REFUSALS_OF_ANY_KIND,
        source: REFUSALS['wrong-key-no-consent-token'],
        what: 'a consent redeemed with a wrong API key gives no consent token',
      },
      answer,
    );
}

/**
 * The wrong key's refusal, where the consent is redeemed the way that holds on the target, is a failed token request's
 * (§7 rule 4: 401; the live service's 500 in mtn-sandbox), as the access token operation's is. Which way holds is
 * learnt by redeeming the consent with the right key: a way the target does not serve (another product's API user)
 * may be refused for that alone, so only the wrong key's answer of the way that held is judged. It rests on no premise
 * of the way: the right key was just seen to get a token there, so the wrong key alone was refused.
 */
export async function expectWrongKeyRefusedAsFailedTokenRequest(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  const answers = consent.wrongKeyAnswers ?? [];
  if (answers.length === 0 || answers.some(({ answer }) => answer.status === 200)) {
    world.log('No refusal of the wrong API key to weigh: it was given a token, or the consent stayed pending.');
    return;
  }
  await redeemOnceConsented(world);
  const held = answers.find(({ way }) => way === consent.way);
  if (!held) {
    world.log(`The consent was redeemed ${consent.way ?? 'its own way'}, where the wrong API key got no answer to weigh.`);
    return;
  }
  const { profile } = world.config;
  world.expect(
    {
      status: refusedTokenStatuses(world),
      source: sourceOfDifference('tokenFailureStatus', profile),
      what: 'a consent redeemed with a wrong API key is refused as a failed token request',
    },
    held.answer,
  );
}

/** Asks for the consent: the answer must be a consent request (§2.8). */
export async function haveAskedForConsent(world: MomoWorld, ask: ConsentAsk = {}, msisdn = ORDINARY_CUSTOMER.msisdn): Promise<void> {
  // A form of consent_valid_in the spec does not show: a premise, so a refusal of it leaves the scenario not tested.
  if (ask.validForSeconds !== undefined) world.assume('consent-valid-in-taken');
  await askForConsent(world, ask, msisdn);
  const valid = ask.validForSeconds === undefined ? '' : `, valid for ${ask.validForSeconds} s`;
  world.expect({
    status: 200,
    ...(valid ? { premises: ['consent-valid-in-taken'] as const } : {}),
    what: `the partner asks the customer for consent${ask.accessType ? ` for ${ask.accessType} access` : ''}${valid}`,
  });
  if (valid) world.held('consent-valid-in-taken');
}

/** A callback arrives at the X-Callback-Url the consent request gave (§6); its payload is not shown, so only its arrival is judged. */
export async function expectConsentCallback(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  if (!consent.callbackKey) throw new Error('The consent request of this scenario gave no callback address.');
  const receiver = world.harness.receiver;
  const where = `bc-authorize (${consent.flow.ask}) — §6, §4.2 #7: a callback arrives at the X-Callback-Url of the consent request once the customer has answered`;
  await world.awaitState(
    'callback-arrives',
    `a callback for the consent request ${consent.authReqId}`,
    async () => (receiver.callbacksFor(consent.callbackKey!).length > 0 ? true : undefined),
    // Called back once the customer has answered, which a person does in their own time (see pollForConsentToken).
    { slow: true, timing: CONSENT_TIMING, where, operation: 'bcAuthorize', product: consent.flow.ask },
  );
  const bodies = receiver.callbacksFor(consent.callbackKey).map((c) => c.body);
  if (consent.askAnswer)
    world.check(
      'consent-callback-own-request',
      consent.askAnswer,
      'a consent callback names its own request',
      consentCallbackFindings(bodies, consent.authReqId!),
    );
}

/**
 * The consent redeemed at once on its callback, as a CIBA client in ping mode does: no longer pending (our reading,
 * consent-callback-after-answer). It follows the scenario's definite check of the callback, so what it rests on weighs
 * no more than the reading: a redemption answered otherwise than 200 or 400 is weighed as the reading, and a way to
 * redeem that does not hold on this target is logged, leaving the callback's verdict as it was.
 */
export async function expectRedeemedOnCallback(world: MomoWorld): Promise<void> {
  try {
    await redeemAtOnce(world, CALLBACK_CHECKS['consent-callback-after-answer'].source);
  } catch (error) {
    if (!(error instanceof PremiseNotHeld)) throw error;
    world.log(`The consent was not redeemed on its callback by any way this target takes (${error.message}): the reading was not weighed.`);
    return;
  }
  const response = world.response!;
  const error = (response.json as { error?: unknown } | undefined)?.error;
  world.check(
    'consent-callback-after-answer',
    response,
    'a consent redeemed at once on its callback gives its token',
    pingBeforeAnswerFindings(response.status === 200 ? undefined : error),
  );
}

/** expires_in of the consent token the partner holds: its lifetime (READINGS in core/profiles.ts), 3600 s by default (§2.7, §8). */
export function expectConsentTokenLifetime(world: MomoWorld, seconds: number): void {
  const consent = currentConsent(world);
  world.check(
    'consent-token-lifetime',
    world.response!,
    `a consent access token is valid ${seconds} seconds by default`,
    lifetimeFindings(consent.tokenExpiresIn, seconds),
  );
}

/** One call of the token operation with the CIBA grant for the scenario's auth_req_id, by the API user that redeems it. */
export async function redeemConsent(world: MomoWorld): Promise<ApiResponse> {
  return (await redeemPolled(world)).response;
}

/** A poll of the token operation, and how long after the answer to the last poll of its auth_req_id it was sent. */
interface Poll {
  response: ApiResponse;
  sinceLastMs?: number;
}

async function redeemPolled(world: MomoWorld): Promise<Poll> {
  const consent = currentConsent(world);
  const form = { grant_type: CIBA_GRANT, auth_req_id: consent.authReqId! };
  const poll = await pollTokenOperation(consent, () =>
    world.client.createOAuthToken(consent.flow.redeem, world.harness.basic(consent.redeemer), form),
  );
  world.remember(poll.response);
  return poll;
}

/**
 * A call of the token operation for the consent's auth_req_id, whoever makes it. The interval of §2.8 runs from when
 * its answer arrived, the latest the server can have answered: the time from then to the next call's sending is no
 * more than the server sees between them, whichever way it counts.
 */
async function pollTokenOperation(consent: Consent, call: () => Promise<ApiResponse>): Promise<Poll> {
  const previous = consent.lastPolledAt;
  const sentAt = Date.now();
  const response = await call();
  consent.lastPolledAt = Date.now();
  consent.lastAskedAt = consent.lastPolledAt;
  return { response, ...(previous === undefined ? {} : { sinceLastMs: sentAt - previous }) };
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
    source: CONSENT_CHECKS['consent-pending'].source,
    what: 'a consent the customer has not answered yet gives no token',
  });
}

/**
 * The consent is redeemed at once, before the customer can have answered: by the way that holds on this target, each
 * tried in turn while its credential is turned away (the answer is then neither a pending consent nor a token).
 * `source`: what an answer other than a token or a pending consent departs from, when a reading asks for the redemption.
 */
export async function redeemAtOnce(world: MomoWorld, source?: Source): Promise<void> {
  const consent = currentConsent(world);
  const ways = redeemWays(world);
  if (ways.length === 0) {
    await redeemConsent(world);
    return;
  }
  await world.eitherWay(
    ways.map((way) => ({
      premise: way.premise,
      attempt: async () => {
        useWay(consent, way, await way.redeemer(world, consent));
        const response = await redeemConsent(world);
        if (response.status !== 200 && !isPending(response))
          world.expect(
            {
              status: [200, 400],
              what: 'a consent is redeemed, or said to be pending',
              premises: [way.premise],
              ...(source ? { source } : {}),
            },
            response,
          );
      },
    })),
    { holdsWhenDone: false },
  );
}

/** The scenario's consent is redeemed this way, by this API user, and rests on the way's premise until it reads the user information. */
function useWay(consent: Consent, way: RedeemWay, redeemer: Account): void {
  consent.flow = { ...consent.flow, redeem: way.redeem };
  consent.redeemer = redeemer;
  consent.way = way.premise;
}

/**
 * Redeems the consent as a CIBA client polls: no sooner than `interval` after the last ask, while the
 * answer is authorization_pending (or slow_down, which adds 5 s to the interval). Any other answer ends
 * the wait at once and is judged as the consent token it should have been. Who redeems it, and where, is a premise:
 * the ways the text allows are tried in turn, the way that held remembered for the next consent.
 */
export async function redeemOnceConsented(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  const ways = redeemWays(world);
  if (ways.length === 0) return pollForConsentToken(world);
  const chosen = await world.eitherWay(
    ways.map((way) => ({
      premise: way.premise,
      attempt: async () => {
        useWay(consent, way, await way.redeemer(world, consent));
        await pollForConsentToken(world);
        return way;
      },
    })),
    { holdsWhenDone: false },
  );
  world.harness.discovered.set(WAY_HELD, chosen.premise);
}

/** The ways to redeem the scenario's consent, the one that held before first; none when the flow stays within one product. */
function redeemWays(world: MomoWorld): readonly RedeemWay[] {
  const consent = currentConsent(world);
  if (consent.flow.ask !== 'collection' || world.consentWithinProduct) return [];
  const ways = REDEEM_WAYS[world.config.profile];
  const held = world.harness.discovered.get(WAY_HELD);
  return [...ways.filter((w) => w.premise === held), ...ways.filter((w) => w.premise !== held)];
}

/**
 * Polls the token operation as a careful CIBA client: `interval` (plus POLL_MARGIN_MS, no more) after the answer to
 * the last poll, 5 s more after each slow_down (CIBA Core §11), so the flow completes whatever the server asks. Each
 * poll that followed another is judged once the polling ends: told to slow_down although it waited the interval it
 * owed, it departs from our reading (consent-poll-not-slowed).
 */
async function pollForConsentToken(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  // CIBA Core §7.3: a client waits 5 s where no interval is given.
  let intervalMs = (consent.interval ?? 5) * 1000;
  const where = `create OAuth 2.0 token (${consent.flow.redeem}) — §4.3 #11, §5.4: the consent token is issued once the customer has consented`;
  const paced: { response: ApiResponse; findings: Finding[] }[] = [];
  const judgePaced = () => {
    for (const { response, findings } of paced)
      world.check('consent-poll-not-slowed', response, 'a poll that waited the announced interval is not told to slow down', findings);
  };
  try {
    await world.awaitState(
      'consent-granted',
      `the customer consents and the consent token is issued (polling every ${intervalMs / 1000} s)`,
      async () => {
        if (Date.now() - (consent.lastAskedAt ?? 0) < intervalMs + POLL_MARGIN_MS) return undefined;
        const { response, sinceLastMs } = await redeemPolled(world);
        const pending = isPending(response);
        // A poll the careful client made again after weather may answer an attempt the target counted: not judged.
        if (sinceLastMs !== undefined && response.retried === undefined)
          paced.push({ response, findings: slowDownFindings(pending, sinceLastMs, intervalMs, POLL_MARGIN_MS) });
        if (pending) {
          if (pending === 'slow_down') intervalMs += SLOW_DOWN_STEP_MS;
          throw new Error(`the token operation answers ${pending}`);
        }
        // Anything else is the consent token it should have been, or a refusal of the way's credential (its premise).
        try {
          keepConsentToken(world, 'the consent token is issued once the customer has consented');
        } catch (failure) {
          throw Object.assign(failure as Error, { fatal: true });
        }
        return response;
      },
      // The customer is a person, who answers within the request's life (expires_in), not within a server's pace: the
      // slow deadline, which also lets a long interval (5 s or more) poll a few times.
      { slow: true, timing: CONSENT_TIMING, where, operation: 'createOAuthToken', product: consent.flow.redeem },
    );
  } catch (error) {
    // A way that does not hold verified nothing (eitherWay); any other end still weighs the slow_downs it met.
    if (!(error instanceof PremiseNotHeld)) judgePaced();
    throw error;
  }
  judgePaced();
}

/**
 * After a poll that found the consent pending, the partner polls on at the announced interval until it is given the
 * consent token: a poll at the interval (and the margin for clocks, no later) follows another at least once, and any
 * slow_down to it is judged (pollForConsentToken). A customer who consented at once left nothing to pace.
 */
export async function pollAtIntervalUntilGranted(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  if (consent.accessToken) {
    world.log('The customer consented at once: no poll followed another at the interval.');
    return;
  }
  await pollForConsentToken(world);
}

/** The scenario's consent, answered and redeemed: a consent token in hand. */
export async function holdConsentToken(world: MomoWorld): Promise<void> {
  await haveAskedForConsent(world);
  await redeemOnceConsented(world);
}

/** Waits until `waitMs` have passed, as the scenario's clock says (within the slow deadline). */
async function letTimePass(world: MomoWorld, waitMs: number, of: string): Promise<void> {
  const from = Date.now();
  await world.eventually(`${waitMs} ms ${of} have passed`, async () => (Date.now() >= from + waitMs ? true : undefined), { slow: true });
}

/** How long after its first use the partner uses a consent token again: seconds into the 3600 its life is (§8). */
const USE_AGAIN_AFTER_MS = 4_000;
/** A second more than an ordinary access token lives: JWT expiry is in whole seconds (RFC 7519 NumericDate). */
const PAST_ACCESS_TOKEN_MS = 1_000;

/**
 * Some seconds of the consent token's life pass: never more than half of what its expires_in gives (a target may give
 * a shorter one than §8's default), nor of the run's slow deadline. Where the partner's ordinary access token lives
 * less than that allows, the wait outlasts it: a consent token given an access token's lifetime, whatever its
 * expires_in says, is then refused when used again (§8: 3600 s, or the expires_in it was given).
 */
export async function letConsentTokenAge(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  if (!consent.accessToken) throw new Error('No consent token was issued in this scenario.');
  const life = typeof consent.tokenExpiresIn === 'number' && consent.tokenExpiresIn > 0 ? consent.tokenExpiresIn * 1000 : 3_600_000;
  const longest = Math.min(world.config.slowOutcomeTimeoutMs / 2, life / 2);
  const accessToken = world.harness.tokens.heldAs((await world.bearer()).replace(/^Bearer /, ''));
  const pastAccessToken = accessToken ? accessToken.expiresAt - accessToken.issuedAt + PAST_ACCESS_TOKEN_MS : Number.POSITIVE_INFINITY;
  const waitMs = pastAccessToken <= longest ? Math.max(USE_AGAIN_AFTER_MS, pastAccessToken) : Math.min(USE_AGAIN_AFTER_MS, longest);
  await letTimePass(world, waitMs, "of the consent token's life");
}

/**
 * Much of the consent request's life passes before the partner redeems it: half of what its expires_in gives (§2.8, §8:
 * it expires after that, not before), as late as the run's deadlines allow (half the slow deadline), counted from when
 * it was asked for. A customer who answered meanwhile is waiting for the partner, which may come late.
 */
export async function letConsentRequestAge(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  const life =
    consent.requestExpiresIn !== undefined && consent.requestExpiresIn > 0 ? consent.requestExpiresIn * 1000 : Number.POSITIVE_INFINITY;
  const waitMs = Math.min(life / 2, world.config.slowOutcomeTimeoutMs / 2) - (Date.now() - (consent.askedAt ?? Date.now()));
  world.log(
    `The consent request lives ${consent.requestExpiresIn ?? 'an unknown number of'} s; it is redeemed ${Math.round(Math.max(0, waitMs) / 100) / 10} s from now.`,
  );
  await letTimePass(world, Math.max(0, waitMs), "of the consent request's life");
}

/** How long into the consent the partner refreshes its token: longer than the slack of comparing its ends. */
const REFRESH_AFTER_MS = 4_000;

/**
 * The refresh_token grant for the consent's refresh token (§2.7): a new consent token. How a consent is refreshed
 * is RFC 6749 §6, our reading: a target that refreshes otherwise is warned of, and the partner keeps the token it has.
 */
export async function refreshConsentToken(world: MomoWorld, { atOnce = false } = {}): Promise<void> {
  const consent = currentConsent(world);
  if (!consent.refreshToken) throw new Error('No consent token was issued in this scenario, so there is nothing to refresh.');
  // Some seconds into the consent, so that one the refresh lengthened is told from one that keeps its end; never more
  // than half of what is left of a short consent, which would end before the refresh. At once where its end is not
  // looked at.
  const issuedAt = Date.now();
  const waitMs = atOnce
    ? 0
    : Math.min(
        REFRESH_AFTER_MS,
        world.config.slowOutcomeTimeoutMs / 2,
        consent.endsAt === undefined ? 0 : Math.max(0, (consent.endsAt - issuedAt) / 2),
      );
  await letTimePass(world, waitMs, 'of the consent');
  const form = { grant_type: 'refresh_token', refresh_token: consent.refreshToken };
  const what = 'a consent token is refreshed while the consent lasts';
  const response = world.remember(await world.client.createOAuthToken(consent.flow.redeem, world.harness.basic(consent.redeemer), form));
  world.expect({ status: 200, source: CONSENT_CHECKS['consent-refresh'].source, what, premises: wayOf(consent) }, response);
  if (response.status !== 200) {
    world.log('The refresh was not answered with a token: the partner keeps the consent token it holds.');
    return;
  }
  keepConsentToken(world, what);
  consent.refreshed = true;
}

/**
 * The consent, refreshed once with the partner's credential, refreshed again with the refresh token it holds and no
 * credential at all: §4.3 #11 and §5.2 authenticate the OAuth 2.0 token operation with Basic, whatever the grant (RFC
 * 6749 §6: a client with credentials authenticates when it refreshes). That the target refreshes at all is the premise.
 */
export async function refreshWithoutCredential(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  // Not refreshed with the credential (how is our reading, which a target may not share): nothing to compare with, and
  // no check concluded, so this scenario verifies no requirement (as expectOwnCustomerRead does).
  if (!consent.refreshed || !consent.refreshToken) {
    world.log(`Not checked whether a refresh without a credential is refused: ${PREMISES['consent-refreshed'].unheld}`);
    return;
  }
  const form = { grant_type: 'refresh_token', refresh_token: consent.refreshToken };
  world.remember(await world.client.invoke('createOAuthToken', consent.flow.redeem, { form, renew: false }));
  consent.refreshedWithoutCredential = true;
}

/** The refresh without a credential got no token: a failed token request (expectNoToken), where it was sent at all. */
export function expectRefreshWithoutCredentialRefused(world: MomoWorld): void {
  if (!currentConsent(world).refreshedWithoutCredential) return;
  expectNoToken(world);
}

/**
 * The consent's last token answer (a consent token redeemed, or refreshed) tells caches not to keep it: our reading
 * (CONSENT_TOKEN_NOT_CACHED). An answer that gave no token was judged by the step that asked for it.
 */
export function expectConsentTokenNotCached(world: MomoWorld): void {
  const response = world.response;
  if (response?.status !== 200) {
    world.log('The last consent token operation gave no token: there is no token answer to look at.');
    return;
  }
  const what = 'a consent token is issued, and not to be kept by caches';
  world.check('token-not-cached', response, what, notCachedFindings(response, CONSENT_TOKEN_NOT_CACHED));
}

/**
 * The refreshed consent is refreshed again at once, with the refresh token the refresh gave (RFC 6749 §6: the old one
 * is discarded), or the one the partner holds if it gave none, and the new consent token reads the customer's user
 * information; the consent still ends when its first token said. That the target refreshes at all, and with
 * grant_type=refresh_token, is our reading (consent-refresh): a target that did not refresh the first time is not
 * asked again. Once it has, a refresh while the consent lasts is §2.7's and §8's (consent-refresh-again): definite.
 */
export async function expectRefreshedAgainAtOnce(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  if (!consent.refreshed || !consent.refreshToken) {
    world.log(`Not checked that a refreshed consent is refreshed again: ${PREMISES['consent-refreshed'].unheld}`);
    return;
  }
  const given = (consent.tokenAnswer?.json as { refresh_token?: unknown } | undefined)?.refresh_token;
  if (typeof given !== 'string') world.log('The refresh gave no refresh token: the partner refreshes again with the one it holds.');
  const what = 'a refreshed consent is refreshed again at once, with the refresh token the refresh gave';
  const form = { grant_type: 'refresh_token', refresh_token: consent.refreshToken };
  const response = world.remember(await world.client.createOAuthToken(consent.flow.redeem, world.harness.basic(consent.redeemer), form));
  world.expect({ status: 200, source: CONSENT_CHECKS['consent-refresh-again'].source, what, premises: wayOf(consent) }, response);
  keepConsentToken(world, what);
  await readUserInfo(world);
  expectConsentEndsWhenItDid(world);
}

/** The refresh did not lengthen the consent: it ends no later than the consent's first token said (§2.7). */
export function expectConsentEndsWhenItDid(world: MomoWorld): void {
  const consent = currentConsent(world);
  if (consent.endsAt === undefined || consent.endedAtBefore === undefined) {
    world.log('Not checked when the consent ends: a consent token without refresh_token_expired_in (the schema says so).');
    return;
  }
  // Whole seconds on each side, and the time the refresh's answer took to come.
  const slackMs = 2_000 + (consent.tokenAnswer?.exchange?.response?.durationMs ?? 0);
  world.check(
    'consent-ends-when-it-did',
    consent.tokenAnswer!,
    'a refresh does not lengthen the consent',
    consentEndFindings(consent.endedAtBefore, consent.endsAt, slackMs),
  );
}

export function expectAlreadyRedeemed(world: MomoWorld): void {
  world.expect({
    status: 400,
    code: 'invalid_grant',
    source: CONSENT_CHECKS['consent-single-use'].source,
    what: 'an auth_req_id already redeemed gives no second token',
  });
}

/** userinfo with the consent token: the user-information record of §2.11, gender written as the profile writes it. */
export async function readUserInfo(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  if (!consent.accessToken) throw new Error('No consent token was issued in this scenario.');
  const what = "the consent token reads the customer's user information";
  const response = world.remember(await world.client.userInfo(consent.flow.read, `Bearer ${consent.accessToken}`));
  world.expect({ status: 200, what, premises: wayOf(consent) });
  // The way the consent was redeemed held all through: its token read the user information.
  if (consent.way) world.held(consent.way);
  const gender = (response.json as { gender?: unknown }).gender;
  world.check('gender-case', response, what, genderCaseFindings(gender, world.harness.behaviour.genderCase, world.config.profile));
  consent.customerRead ??= customerIn(response.json);
  const phone = (response.json as { phone_number?: unknown } | undefined)?.phone_number;
  if (typeof phone === 'string') consent.phoneRead ??= phone;
}

/**
 * Another customer's consent to their profile, asked for and redeemed by the same partner, its user information read:
 * the scenario's consent stays the first. Two customers the target's user information does not tell apart leave the
 * scenario not tested (the premise customers-told-apart).
 */
export async function beGivenAnotherCustomersConsent(world: MomoWorld): Promise<void> {
  const first = currentConsent(world);
  if (first.customerRead === undefined) throw notToldApart(first, 'none asked yet');
  await haveAskedForConsent(world, {}, ANOTHER_ORDINARY_MSISDN);
  await redeemOnceConsented(world);
  await readUserInfo(world);
  const other = world.consent?.customerRead;
  const otherPhone = world.consent?.phoneRead;
  world.consent = first;
  // The live sandbox gives every customer sub "0" (observed): only the spec holds a sub to its customer.
  if (world.config.profile === 'spec')
    world.check(
      'userinfo-sub-per-customer',
      world.response!,
      "two customers' user information names each by a sub of their own",
      subPerCustomerFindings({ sub: first.customerRead, phone: first.phoneRead }, { sub: other, phone: otherPhone }),
    );
  if (other === undefined || other === first.customerRead) throw notToldApart(first, other ?? 'none');
  first.otherCustomerRead = other;
}

const notToldApart = (first: Consent, other: string) =>
  new PremiseNotHeld(
    'customers-told-apart',
    `The user information of ${first.msisdn} gave sub ${first.customerRead ?? 'none'}, and of ${ANOTHER_ORDINARY_MSISDN} ${other}: ${PREMISES['customers-told-apart'].unheld}`,
  );

/** The consent token, refreshed since, reads the customer who gave the consent (§2.7, §8), not another the partner holds one of. */
export async function expectOwnCustomerRead(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  if (!consent.customerRead || !consent.otherCustomerRead || !consent.accessToken)
    throw new Error("The two customers' user information was not read before in this scenario.");
  // Not refreshed (how is our reading, which a target may not share): nothing of a refreshed token to judge, and no
  // check concluded, so this scenario verifies no requirement (as expectConsentEndsWhenItDid does).
  if (!consent.refreshed) {
    world.log(`Not checked which customer a refreshed consent token reads: ${PREMISES['consent-refreshed'].unheld}`);
    return;
  }
  const what = 'the consent token, refreshed, reads the customer who consented';
  const response = world.remember(await world.client.userInfo(consent.flow.read, `Bearer ${consent.accessToken}`));
  world.expect({ status: 200, what, premises: wayOf(consent) });
  world.check(
    ['consent-refresh-own-customer', 'consent-refresh-same-sub'],
    response,
    what,
    ownCustomerFindings(consent.customerRead, consent.otherCustomerRead, customerIn(response.json)),
  );
}

/** userinfo with the consent token the scenario holds, `extra` changing the call (every-operation.ts). */
export function userInfoWithHeldConsent(world: MomoWorld, extra: CallOptions = {}): Promise<ApiResponse> {
  const consent = currentConsent(world);
  if (!consent.accessToken) throw new Error('No consent token was issued in this scenario.');
  return world.client.userInfo(consent.flow.read, `Bearer ${consent.accessToken}`, extra);
}

/** The refresh_token grant for the consent token the scenario holds, `extra` changing the call (every-operation.ts). */
export function refreshHeldConsent(world: MomoWorld, extra: CallOptions = {}): Promise<ApiResponse> {
  const consent = currentConsent(world);
  if (!consent.refreshToken) throw new Error('No consent token with a refresh token was issued in this scenario.');
  const form = { grant_type: 'refresh_token', refresh_token: consent.refreshToken };
  return world.client.createOAuthToken(consent.flow.redeem, world.harness.basic(consent.redeemer), form, extra);
}

/** userinfo with the partner's ordinary access token instead of a consent token. */
export async function readUserInfoWithAccessToken(world: MomoWorld): Promise<void> {
  world.remember(await world.client.userInfo(world.actor.product, await world.bearer(), { renew: false }));
}

/**
 * A request to pay with the consent token as its Bearer credential. §5 rule 3: the credential of the business
 * operations is the access token of the token operation; the consent token is for user information (§5 rule 4).
 */
export async function requestPaymentWithConsentToken(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  if (!consent.accessToken) throw new Error('No consent token was issued in this scenario.');
  world.rule = REFUSALS['consent-token-on-business'];
  await requestPayment(world, ORDINARY_CUSTOMER, '5', {
    account: consent.account,
    call: { authorization: `Bearer ${consent.accessToken}` },
  });
}

/**
 * The consent redeemed with a grant type other than the CIBA grant §4.3 #11 names (OAuth's client_credentials), asked
 * again while the answer says the customer has not answered yet: a server that takes any grant for the CIBA one
 * answers so until the customer consents, then issues the token; one that checks the grant refuses it at once.
 */
export async function redeemWithOtherGrant(world: MomoWorld): Promise<void> {
  const consent = currentConsent(world);
  const form = { grant_type: 'client_credentials', auth_req_id: consent.authReqId! };
  await world.eventually(
    'an answer to the other grant that is not "the customer has not answered yet"',
    async () => {
      const response = world.remember(
        await world.client.createOAuthToken(consent.flow.redeem, world.harness.basic(consent.redeemer), form),
      );
      return isPending(response) ? undefined : true;
    },
    { slow: true, readsTarget: true },
  );
}

/** §4.3 #11: grant_type is the constant CIBA grant; §7 rule 4: a failed token request gives 401 {error} (OAuth: 400). */
export function expectGrantRefused(world: MomoWorld): void {
  const source = REFUSALS['other-grant-type'];
  const response = world.expect({ status: [400, 401], source, what: 'a token operation with another grant type issues no consent token' });
  // §7 rule 4's {error} is of its 401; of a 400 (RFC 6749's unsupported_grant_type) it is the profile's (core/profiles.ts).
  if (response.status === 400 && world.harness.behaviour.oauthRefusal400Body === 'any') return;
  const why = response.status === 400 ? sourceOfDifference('oauthRefusal400Body', world.config.profile) : source;
  world.check('error-code', response, 'a refused token request says why, in {error}', errorCodePresentFindings(response, why));
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
  const response = world.expect({ status: 200, what, premises: wayOf(consent) });
  const body = response.json as {
    access_token: string;
    refresh_token: string;
    expires_in: number;
    scope?: unknown;
    refresh_token_expired_in?: unknown;
  };
  world.check(['consent-scope-not-wider', 'consent-scope-whole'], response, what, scopeFindings(consent.scope, body.scope));
  consent.tokenAnswer = response;
  if (typeof body.refresh_token_expired_in === 'number') {
    // Every refresh is held to when the consent's first token said it ends (§2.7), not to the refresh before it.
    if (consent.endsAt !== undefined) consent.endedAtBefore ??= consent.endsAt;
    consent.endsAt = Date.now() + body.refresh_token_expired_in * 1000;
  }
  consent.accessToken = body.access_token;
  // RFC 6749 §6: a new refresh token replaces the old, which the client discards; without one, the old stays in use.
  if (typeof body.refresh_token === 'string') consent.refreshToken = body.refresh_token;
  consent.tokenExpiresIn = body.expires_in;
  // Both are credentials, masked from here on wherever they appear (the refresh token is not a JWT), and only
  // the token operation may give them out again (harness/secrets/disclosure.ts).
  world.harness.redactor.add(body.access_token, 'consent token');
  if (typeof body.refresh_token === 'string') world.harness.redactor.add(body.refresh_token, 'refresh token');
}

/** The premise the way a consent is redeemed rests on, as an expectation names it. */
const wayOf = (consent: Consent) => (consent.way ? [consent.way] : []);

function currentConsent(world: MomoWorld): Consent {
  if (!world.consent?.authReqId)
    throw new Error('No consent was asked for in this scenario: start with "the partner has asked a customer for consent".');
  return world.consent;
}
