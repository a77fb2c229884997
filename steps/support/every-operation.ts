import { randomUUID } from 'node:crypto';
import { defineParameterType } from '@cucumber/cucumber';
import type { ApiResponse, CallOptions } from '../../harness/client/momo-client.ts';
import type { PathParams } from '../../core/catalogue/routes.ts';
import {
  BASIC_CREDENTIAL_ONLY,
  bearerNamedRule,
  bodyNotJsonRule,
  contentTypeOptionalRule,
  mediaTypeAnyCaseRule,
  KEY_REFUSED_AS_UNAUTHORIZED,
  KEY_REQUIRED,
  notFoundRule,
  malformedReferenceRule,
  specCallPhrased,
  specCalls,
  type SpecCall,
} from '../../harness/checks/every-operation.ts';
import { OPERATIONS, type OperationId } from '../../core/catalogue/operations.ts';
import { ORDINARY_CUSTOMER } from './parties.ts';
import { FORBIDDEN_ENVIRONMENT, REFUSALS_OF_ANY_KIND } from './refusals.ts';
import { readStatus } from './status-records.ts';
import { holdConsentToken, refreshHeldConsent, userInfoWithHeldConsent } from './consent.ts';
import { forgedTokenOf, presentOnceExpired, refusedTokenStatuses } from './tokens.ts';
import {
  deposit,
  depositAccepted,
  refundPayment,
  refundedPayment,
  requestPayment,
  settledPaymentThroughCollection,
} from './transactions.ts';
import type { MomoWorld } from './world.ts';

/**
 * The calls of features/every-operation.feature (generated from harness/checks/every-operation.ts): each operation of
 * the spec, set up so that it is otherwise valid where that is cheap to have (the transaction it reads, the payment it
 * refunds, the API user it names), then made with one thing wrong.
 */

defineParameterType({
  name: 'spec call',
  regexp: new RegExp(
    specCalls()
      .map((c) => c.phrase)
      .sort((a, b) => b.length - a.length)
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('|'),
  ),
  transformer: (phrase: string) => phrase,
});

/** A call made ready by its set-up: `otherwiseValid` when nothing but what the scenario changes could be refused. */
export interface PreparedCall {
  /** The operation and product it calls. */
  call?: SpecCall;
  /** Makes the call with `extra` over what the set-up gives (every call below lets it change its path's id too). */
  make: (extra: CallOptions & { params?: PathParams }) => Promise<ApiResponse>;
  otherwiseValid: boolean;
}

type Preparation = (world: MomoWorld, call: SpecCall) => Promise<PreparedCall>;

const valid = (make: PreparedCall['make']): PreparedCall => ({ make, otherwiseValid: true });

/**
 * How each operation is set up. A consent token and the user information need a customer's consent first: it is asked
 * and redeemed the way the consent feature does, on its premises (who asks, who redeems), and a scenario whose consent
 * could not be had is not tested.
 */
const PREPARATIONS: Readonly<Partial<Record<OperationId, Preparation>>> = {
  createApiUser: async (w, c) => valid((extra) => w.client.createApiUser(c.product, randomUUID(), w.config.callbackHost, extra)),
  createApiKey: async (w, c) => {
    const account = await w.actAs(c.product, { fresh: true });
    return valid((extra) => w.client.createApiKey(c.product, account.userId, extra));
  },
  getApiUser: async (w, c) => valid((extra) => w.client.getApiUser(c.product, w.actor.userId, extra)),
  createAccessToken: async (w, c) => valid((extra) => w.client.createAccessToken(c.product, w.harness.basic(w.actor), extra)),
  // The refresh grant of a consent token the partner holds: how a consent refreshes is RFC 6749's, our reading, so which
  // refusal comes is not judged; only that it is not served.
  // The spec's consent is asked under collection and redeemed under disbursement (§4.2 #7, §4.3 #11): the partner asks
  // as its collection API user, whatever product the scenario began with, so no operation beyond the spec is needed.
  createOAuthToken: async (w) => {
    await w.actAs('collection');
    await holdConsentToken(w);
    return { make: (extra) => refreshHeldConsent(w, extra), otherwiseValid: false };
  },
  requestToPay: async (w) => valid((extra) => requestPayment(w, ORDINARY_CUSTOMER, '5', { call: extra })),
  getRequestToPayStatus: async (w) => {
    await settledPaymentThroughCollection(w, ORDINARY_CUSTOMER, '5');
    return valid((extra) => readStatus(w, w.lastPayment, undefined, extra));
  },
  deliveryNotification: async (w, c) => {
    await settledPaymentThroughCollection(w, ORDINARY_CUSTOMER, '5');
    const paid = w.lastPayment;
    return valid(async (extra) =>
      w.client.deliveryNotification(await w.bearer(paid.account), paid.referenceId, 'Your order is on its way', extra, c.product),
    );
  },
  refund: async (w) => {
    await settledPaymentThroughCollection(w, ORDINARY_CUSTOMER, '5');
    return valid((extra) => refundPayment(w, undefined, { call: extra }));
  },
  getRefundStatus: async (w) => {
    await refundedPayment(w, ORDINARY_CUSTOMER, '5');
    return valid((extra) => readStatus(w, w.lastPayment, undefined, extra));
  },
  deposit: async (w) => valid((extra) => deposit(w, ORDINARY_CUSTOMER, '5', { call: extra })),
  getDepositStatus: async (w) => {
    await depositAccepted(w, ORDINARY_CUSTOMER, '5');
    return valid((extra) => readStatus(w, w.lastPayment, undefined, extra));
  },
  getBalance: async (w, c) => valid(async (extra) => w.client.getBalance(c.product, await w.bearer(), undefined, extra)),
  getBalanceInCurrency: async (w, c) => valid(async (extra) => w.client.getBalance(c.product, await w.bearer(), w.config.currency, extra)),
  accountHolderActive: async (w, c) =>
    valid(async (extra) => w.client.accountHolderActive(c.product, await w.bearer(), 'msisdn', ORDINARY_CUSTOMER.msisdn, extra)),
  basicUserInfo: async (w, c) =>
    valid(async (extra) => w.client.basicUserInfo(await w.bearer(), ORDINARY_CUSTOMER.msisdn, extra, c.product)),
  bcAuthorize: async (w, c) =>
    valid(async (extra) =>
      w.client.bcAuthorize(
        c.product,
        await w.bearer(),
        { login_hint: `ID:${ORDINARY_CUSTOMER.msisdn}/MSISDN`, scope: 'profile', access_type: 'offline' },
        extra,
      ),
    ),
  userInfo: async (w) => {
    await holdConsentToken(w);
    return valid((extra) => userInfoWithHeldConsent(w, extra));
  },
};

/** Sets up what the call the phrase names needs, and keeps it ready for the scenario's When. */
export async function prepareCall(world: MomoWorld, phrase: string): Promise<void> {
  const call = specCallPhrased(phrase);
  const prepare = PREPARATIONS[call.id];
  if (!prepare) throw new Error(`steps/support/every-operation.ts cannot set up ${call.id}: add it to PREPARATIONS`);
  world.preparedCall = { ...(await prepare(world, call)), call };
}

function preparedCallOf(world: MomoWorld): PreparedCall {
  if (!world.preparedCall) throw new Error('No call was set up in this scenario: begin with "the partner has what … needs".');
  return world.preparedCall;
}

export async function makeCallWithoutKey(world: MomoWorld): Promise<void> {
  world.remember(await preparedCallOf(world).make({ subscriptionKey: 'none' }));
}

/** The call with the partner's access token, one character of its signature changed. */
export async function makeCallWithForgedToken(world: MomoWorld): Promise<void> {
  world.remember(await preparedCallOf(world).make({ authorization: forgedTokenOf(await world.bearer()) }));
}

/** The call naming, in its path, an id of the kind it takes that nothing was ever made under. */
export async function makeCallNamingUnknown(world: MomoWorld, phrase: string): Promise<void> {
  world.rule = notFoundRule(specCallPhrased(phrase));
  world.remember(await preparedCallOf(world).make({ params: { referenceId: randomUUID() } }));
}

/** The call naming, in its path, a reference that is not a UUID (the live status queries answer 400). */
export async function makeCallNamingMalformed(world: MomoWorld, phrase: string): Promise<void> {
  world.rule = malformedReferenceRule(specCallPhrased(phrase));
  world.remember(await preparedCallOf(world).make({ params: { referenceId: 'order-42' } }));
}

/** The call with the partner's own access token where its API user's Basic credential goes (not renewed when refused). */
export async function makeCallWithTokenForCredential(world: MomoWorld): Promise<void> {
  world.remember(await preparedCallOf(world).make({ authorization: await world.bearer(), renew: false }));
}

/**
 * The call with an access token that has expired (§2.6: valid for expires_in seconds), presented until refused within
 * the leeway a server may allow for clock skew; skipped when the target's tokens outlive the run's slow deadline.
 */
export async function makeCallWithExpiredToken(world: MomoWorld): Promise<string | undefined> {
  const prepared = preparedCallOf(world);
  const token = await world.harness.tokenToExpire(prepared.call!.product);
  if (!token) throw new Error('The access token to let expire came without access_token and expires_in: see the token answer.');
  return presentOnceExpired(world, token, () => prepared.make({ authorization: `Bearer ${token.accessToken}`, renew: false }));
}

/** The call with its API user's Basic credential where the listing names a Bearer token. */
export async function makeCallWithCredentialForToken(world: MomoWorld): Promise<void> {
  const prepared = preparedCallOf(world);
  world.rule = bearerNamedRule(prepared.call!.id);
  const account = await world.harness.account(prepared.call!.product);
  world.remember(await prepared.make({ authorization: world.harness.basic(account), renew: false }));
}

/** The call with its body cut short, so that it is not JSON, sent as JSON. */
export async function makeCallWithBodyNotJson(world: MomoWorld): Promise<void> {
  const prepared = preparedCallOf(world);
  world.rule = bodyNotJsonRule(prepared.call!);
  world.remember(await prepared.make({ rawBody: { text: '{"amount": "5", "currency": ', contentType: 'application/json' } }));
}

/** The call with its body as the set-up gives it, and no Content-Type. */
export async function makeCallWithoutContentType(world: MomoWorld): Promise<void> {
  world.remember(await preparedCallOf(world).make({ omitContentType: true }));
}

/** The call with its body's media type named in capitals. */
export async function makeCallWithMediaTypeInCapitals(world: MomoWorld): Promise<void> {
  world.remember(await preparedCallOf(world).make({ mediaTypeInCapitals: true }));
}

/** Served: one of the operation's documented success statuses, as when the body names its media type, as is usual. */
export function expectServedAsUsual(world: MomoWorld, how: 'without Content-Type' | 'with its media type in capitals'): void {
  const call = preparedCallOf(world).call!;
  const served = Object.keys(OPERATIONS[call.id].responses)
    .map(Number)
    .filter((status) => status >= 200 && status < 300);
  const source = how === 'without Content-Type' ? contentTypeOptionalRule(call) : mediaTypeAnyCaseRule(call);
  world.expect({ status: served, source, what: `a body ${how} is served` });
}

export async function makeCallInForeignEnvironment(world: MomoWorld): Promise<void> {
  world.remember(await preparedCallOf(world).make({ targetEnvironment: FORBIDDEN_ENVIRONMENT(world) }));
}

/**
 * Not served (definite, §5 rule 2); refused as a failed login when nothing else about the call could be refused: 401, or
 * on mtn-sandbox the live service's 500 for a failed login too.
 */
export function expectRefusedAsUnauthorizedWhereValid(world: MomoWorld): void {
  world.expect({ status: REFUSALS_OF_ANY_KIND, source: BASIC_CREDENTIAL_ONLY, what: 'a token is not created from a token' });
  if (preparedCallOf(world).otherwiseValid)
    world.expect({
      status: refusedTokenStatuses(world),
      source: BASIC_CREDENTIAL_ONLY,
      what: "a token is created only from the API user's credentials",
    });
}

/**
 * Not served without the subscription key (definite, §5 rule 1): any refusal. That it is 401 is judged only of a call
 * that is otherwise valid, and as a reading: which of its checks a server makes first is not said.
 */
export function expectNotServedWithoutKey(world: MomoWorld): void {
  world.expect({ status: REFUSALS_OF_ANY_KIND, source: KEY_REQUIRED, what: 'a call without its subscription key is not served' });
  if (preparedCallOf(world).otherwiseValid)
    world.expect({ status: 401, source: KEY_REFUSED_AS_UNAUTHORIZED, what: 'a call without its subscription key is unauthorized' });
}
