import { ownCallbackUrl } from './callbacks.ts';
import { currencyFindings } from '../../harness/checks/accounts.ts';
import { REFUSALS } from '../../harness/checks/refusals.ts';
import { UNAVAILABLE_STATUSES } from '../../harness/client/careful.ts';
import { errorCodePresentFindings, statusFindings } from '../../harness/checks/answers.ts';
import { gatewayShapeFindings } from '../../harness/checks/credentials.ts';
import { unchangedFindings } from '../../harness/checks/transactions.ts';
import { defineParameterType } from '@cucumber/cucumber';
import { randomUUID } from 'node:crypto';
import { wasCreated, type CallOptions } from '../../harness/client/momo-client.ts';
import { PRODUCTS } from '../../core/products.ts';
import { readAccount, readBalance } from './accounts.ts';
import { ORDINARY_CUSTOMER, type Party } from './parties.ts';
import { deposit, refundPayment, requestPayment, siblingRefusesCurrency } from './transactions.ts';
import { notifyDelivery } from './delivery-notifications.ts';
import { expectOutcome, readStatus } from './status-records.ts';
import type { MomoWorld } from './world.ts';

/**
 * The ways a partner's call can be wrong, and what the service must answer to each (§7). Each phrase of
 * the features maps to one concrete mistake here.
 */

const TEXT_BOUND = REFUSALS['text-bound'];

/** A currency the target refuses (MOMO_REFUSED_CURRENCY; by default one that is not MOMO_CURRENCY). */
const foreignCurrency = (world: MomoWorld) => world.config.refusedCurrency;

/**
 * That the target refuses the currency is a premise: the live sandbox takes only EUR (observed), and a service may take
 * several, which the spec allows; it is the run's own word when MOMO_REFUSED_CURRENCY is set.
 */
const currencyPremise = (world: MomoWorld) =>
  world.config.refusedCurrencySet ? ('foreign-currency-refused-as-set' as const) : ('foreign-currency-refused' as const);

function restOnCurrencyRefused(world: MomoWorld): void {
  world.assume(currencyPremise(world));
  world.restsOn = [...world.restsOn, currencyPremise(world)];
}

export async function requestInForeignCurrency(world: MomoWorld, amount: string, told = false): Promise<void> {
  await requestPayment(world, ORDINARY_CUSTOMER, amount, {
    body: { currency: foreignCurrency(world) },
    ...(told ? { callback: ownCallbackUrl } : {}),
  });
  restOnCurrencyRefused(world);
}

export async function depositInForeignCurrency(world: MomoWorld, amount: string, party: Party, told = false): Promise<void> {
  await deposit(world, party, amount, { body: { currency: foreignCurrency(world) }, ...(told ? { callback: ownCallbackUrl } : {}) });
  restOnCurrencyRefused(world);
}

/** A refund of the scenario's request to pay, in full, in a currency the target does not take. */
export async function refundInForeignCurrency(world: MomoWorld, told = false): Promise<void> {
  await refundPayment(world, undefined, { body: { currency: foreignCurrency(world) }, ...(told ? { callback: ownCallbackUrl } : {}) });
  restOnCurrencyRefused(world);
}

/**
 * A currency the service does not take is refused with INVALID_CURRENCY (§7 sets A and B). When is the service's:
 * transactions are asynchronous (§1) and §7 rule 5 leaves open which code goes with which status, so a creation
 * accepted (202) that then ends FAILED because INVALID_CURRENCY conforms; the live sandbox refuses at once (observed),
 * which the mtn-sandbox profile holds. A creation accepted that does not fail took the currency: the premise that the
 * target refuses it did not hold (not tested, unless the run was told so, MOMO_REFUSED_CURRENCY); a refund whose
 * product's deposits refuse the currency (siblingRefusesCurrency) is held to it by our reading, a warning unless --strict.
 */
export async function expectCurrencyRefused(world: MomoWorld): Promise<void> {
  const what = `a transaction in ${foreignCurrency(world)}, a currency the service does not take, is refused`;
  const response = world.response;
  if (!response) throw new Error('No transaction was asked for in this scenario.');
  if (!wasCreated(response)) {
    // A refusal shows the target refuses the currency: its code is judged on that alone.
    if (response.status >= 400) world.held(currencyPremise(world));
    world.expect({ status: [400, 500], code: 'INVALID_CURRENCY', source: REFUSALS['currency-refused'], what });
    return;
  }
  // Taken at creation: whether the product refuses the currency is asked of its other creation before the outcome is
  // judged; what rests on that answer is judged as the reading it is.
  const bySibling = await siblingRefusesCurrency(world, world.lastPayment.create);
  if (bySibling) world.held(currencyPremise(world));
  const refused = bySibling ? REFUSALS['currency-refused-by-product'] : REFUSALS['currency-refused'];
  const atCreation = bySibling ? refused : REFUSALS['currency-refused-at-creation'];
  world.check('status-code', response, what, statusFindings(response, [400, 500], atCreation));
  const record = await expectOutcome(world, 'FAILED', 'INVALID_CURRENCY', refused);
  if (record.status === 'FAILED') {
    world.held(currencyPremise(world));
    return;
  }
  world.check(
    'status-code',
    response,
    what,
    statusFindings(response, [400, 500], refused).map((f) => ({
      ...f,
      expected: `a refusal, at once or as the transaction's outcome`,
      received: `202, and the transaction ended ${JSON.stringify(record.status)}`,
    })),
  );
}

/** The collection balance read in a currency the target does not take (§4.2 #4: in a specific currency). */
export async function readBalanceInForeignCurrency(world: MomoWorld): Promise<void> {
  world.remember(await world.client.getBalance('collection', await world.bearer(), foreignCurrency(world)));
}

/**
 * A balance asked for in a currency is given in that currency (§4.2 #4, §2.9: definite), or refused for it (how is our
 * reading): never a balance in another currency, which a partner would take for the one it asked for.
 */
export function expectForeignBalanceRefusedOrInIt(world: MomoWorld): void {
  const currency = foreignCurrency(world);
  const response = world.response;
  if (!response) throw new Error('No balance was read in this scenario.');
  const what = `a balance read in ${currency}, a currency the service does not take, is refused, or given in ${currency}`;
  if (response.status === 200) {
    world.check(
      'balance-in-currency',
      response,
      what,
      currencyFindings((response.json as { currency?: unknown } | undefined)?.currency, currency),
    );
    return;
  }
  world.expect({ status: [400, 500], code: 'INVALID_CURRENCY', source: REFUSALS['balance-currency-refused'], what });
}

/** A deposit that carries no Authorization at all (the client sends none for an empty credential). */
export async function depositWithoutToken(world: MomoWorld, amount: string, party: Party): Promise<void> {
  await deposit(world, party, amount, { call: { authorization: '' } });
}

/** A refund, in full, of the scenario's request to pay that carries no Authorization at all. */
export async function refundWithoutToken(world: MomoWorld): Promise<void> {
  await refundPayment(world, undefined, { call: { authorization: '' } });
}

/** The message of a delivery notification, in the features' words, within the live bound of 160 characters. */
const NOTIFICATION_MESSAGES: Record<string, string> = {
  'of exactly 160 characters': 'x'.repeat(160),
  // The bound counts characters, not the bytes UTF-8 writes them in (200 here).
  'of 100 accented letters': 'é'.repeat(100),
};
export const NOTIFICATION_MESSAGE_PHRASES = Object.keys(NOTIFICATION_MESSAGES);

/** A delivery notification whose message is within the live bound (observed: over 160 characters give 400). */
export async function notifyDeliveryWithMessage(world: MomoWorld, phrase: string): Promise<void> {
  const message = NOTIFICATION_MESSAGES[phrase];
  if (message === undefined) throw new Error(`No message "${phrase}": one of ${NOTIFICATION_MESSAGE_PHRASES.join(', ')}.`);
  world.rule = TEXT_BOUND;
  await notifyDelivery(world, world.lastPayment.referenceId, message);
}

/** The live service refuses a notificationMessage over 160 characters (real-api-notes, observed). */
export async function notifyDeliveryWithLongMessage(world: MomoWorld): Promise<void> {
  world.rule = TEXT_BOUND;
  await notifyDelivery(world, world.lastPayment.referenceId, 'Your order has been delivered. '.padEnd(161, 'x'));
}

/** The collection balance in a currency written as the caller pleases, e.g. "euro" (§4.2 #4: an ISO 4217 code). */
export async function readBalanceInCurrency(world: MomoWorld, currency: string): Promise<void> {
  world.remember(await world.client.getBalance('collection', await world.bearer(), currency));
}

/** Asks again with the reference id of the scenario's first payment, and different data. */
export async function requestReusingReference(world: MomoWorld, amount: string): Promise<void> {
  const first = world.payments[0];
  if (!first) throw new Error('No earlier payment in this scenario to reuse the reference of.');
  await requestPayment(world, ORDINARY_CUSTOMER, amount, { referenceId: first.referenceId });
}

/**
 * The first payment of the scenario still reads back as it was asked: the reused reference changed nothing. The
 * record is not shown in the spec, so only the fields it names are compared, the amount as a number.
 */
export async function expectFirstPaymentUnchanged(world: MomoWorld): Promise<void> {
  const first = world.payments[0]!;
  const what = 'after a refused reuse of its reference id, the first payment is unchanged';
  const response = world.expect({ status: 200, what: 'the first payment still reads back' }, await readStatus(world, first));
  world.check('refusal-changes-nothing', response, what, unchangedFindings(response.json as object, first.body));
}

const KEY_MISTAKES = {
  'without a subscription key': (): CallOptions['subscriptionKey'] => 'none',
  'with a subscription key the gateway does not know': (): CallOptions['subscriptionKey'] => ({ key: `unknown-${randomUUID()}` }),
  'with the subscription key of another product': (world: MomoWorld): CallOptions['subscriptionKey'] => ({
    product: PRODUCTS.find((p) => p !== world.actor.product)!,
  }),
};

defineParameterType({
  name: 'key mistake',
  regexp: new RegExp(Object.keys(KEY_MISTAKES).join('|')),
  transformer: (phrase: string) => phrase,
});

export async function readBalanceWithKeyMistake(world: MomoWorld, mistake: string): Promise<void> {
  const subscriptionKey = KEY_MISTAKES[mistake as keyof typeof KEY_MISTAKES](world);
  world.remember(await readAccount(world, world.actor.product, await world.bearer(), { subscriptionKey }));
}

/**
 * A call without the product's subscription key is refused with 401 (§5 rule 1, §7), before any operation runs;
 * that the body is the gateway's {statusCode: 401, message} is the live service's (real-api-notes, observed).
 */
export function expectGatewayRefusal(world: MomoWorld): void {
  const what = "the gateway refuses a call without the product's subscription key";
  const response = world.expect({ status: 401, source: REFUSALS['gateway-refusal'], what });
  world.check('gateway-refusal-shape', response, what, gatewayShapeFindings(response));
}

/** Any refusal: every 4xx and 5xx but the gateway's 502–504, which say the target could not be tested. */
export const REFUSALS_OF_ANY_KIND = Array.from({ length: 200 }, (_, i) => 400 + i).filter((s) => !UNAVAILABLE_STATUSES.has(s));

/** A target environment the partner may not use: another than the run's own. */
export const FORBIDDEN_ENVIRONMENT = (world: MomoWorld) => (world.config.targetEnvironment === 'mtnuganda' ? 'mtnghana' : 'mtnuganda');

/** The status of the scenario's last transaction (request to pay, deposit or refund), asked in a forbidden environment. */
export async function readStatusInForbiddenEnvironment(world: MomoWorld): Promise<void> {
  const payment = world.lastPayment;
  world.remember(await readStatus(world, payment, payment.account, { targetEnvironment: FORBIDDEN_ENVIRONMENT(world) }));
}

export async function checkHolderInForbiddenEnvironment(world: MomoWorld): Promise<void> {
  const product = world.actor.product === 'disbursement' ? 'disbursement' : 'collection';
  world.remember(
    await world.client.accountHolderActive(product, await world.bearer(), 'msisdn', ORDINARY_CUSTOMER.msisdn, {
      targetEnvironment: FORBIDDEN_ENVIRONMENT(world),
    }),
  );
}

export async function lookUpBasicInfoWithForgedToken(world: MomoWorld): Promise<void> {
  world.remember(await world.client.basicUserInfo(await forgedBearer(world), ORDINARY_CUSTOMER.msisdn));
}

/** The partner's access token with its last characters changed: a token the target never signed. */
async function forgedBearer(world: MomoWorld): Promise<string> {
  const bearer = await world.bearer();
  return `${bearer.slice(0, -4)}${bearer.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
}

/** §7: 401 is "Unauthorized; body {error}" (rule 4 for the token and basic-info operations), the error any code. */
export function expectOAuthRefusal(world: MomoWorld): void {
  const what = 'a caller without a valid access token is refused with an error code';
  const source = REFUSALS['oauth-refusal'];
  const response = world.expect({ status: 401, source, what });
  world.check('error-code', response, what, errorCodePresentFindings(response, source));
}

/** A read of a payment that was never made, with a forged access token: which of the two is told first. */
export async function readUnknownWithForgedToken(world: MomoWorld): Promise<void> {
  world.rule = REFUSALS['unauthorized-before-lookup'];
  world.remember(await world.client.getRequestToPayStatus(await forgedBearer(world), randomUUID()));
}

/** Reads the scenario's last refund as a deposit, or its last deposit as a refund: under the status query of the other kind. */
export async function readAsTheOtherKind(world: MomoWorld, kind: 'refund' | 'deposit'): Promise<void> {
  world.rule = REFUSALS['read-of-its-own-kind'];
  const made = world.lastPayment;
  if (made.create !== kind) throw new Error(`The scenario's last transaction is a ${made.kind}, not a ${kind}.`);
  const bearer = await world.bearer(made.account);
  world.remember(
    await (kind === 'refund'
      ? world.client.getDepositStatus(bearer, made.referenceId)
      : world.client.getRefundStatus(bearer, made.referenceId)),
  );
}

export { readBalance };

defineParameterType({
  name: 'notification message',
  regexp: new RegExp(NOTIFICATION_MESSAGE_PHRASES.join('|')),
  transformer: (phrase: string) => phrase,
});
