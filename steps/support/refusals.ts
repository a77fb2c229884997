import { quote } from '../../harness/judging/judge.ts';
import { finding } from '../../harness/judging/checks.ts';
import { observed, reading, spec, type Source } from '../../core/sources.ts';
import { toMinor } from '../../core/money.ts';
import { defineParameterType } from '@cucumber/cucumber';
import { randomUUID } from 'node:crypto';
import type { CallOptions } from '../../harness/client/momo-client.ts';
import { PRODUCTS } from '../../core/products.ts';
import { readAccount, readBalance } from './accounts.ts';
import { ORDINARY_CUSTOMER, type Party } from './parties.ts';
import { deposit, refundPayment, requestPayment, type CreateOptions } from './transactions.ts';
import { notifyDelivery } from './delivery-notifications.ts';
import { readStatus } from './status-records.ts';
import type { MomoWorld } from './world.ts';

/**
 * The ways a partner's call can be wrong, and what the service must answer to each (§7). Each phrase of
 * the features maps to one concrete mistake here.
 */

/** A mistake in a creation, and the rule it breaks: what "it is refused as invalid" then cites (world.rule). */
interface Mistake extends CreateOptions {
  rule: Source;
}

/** The live service refuses texts over 160 characters; §8 leaves string bounds "not shown". */
const TEXT_BOUND = observed(
  'real-api-notes, errors and inputs: payerMessage, payeeNote and notificationMessage over 160 characters give 400; §8: string-length bounds not shown',
);
const AMOUNT_VALUE = reading('the strict reading amountValue (core/profiles.ts): §2.2 declares amount a string, and §8 sets no bounds');
const REQUIRED_FIELDS = reading('the strict reading requiredFields (core/profiles.ts): §2.2 does not say which fields are required');

const INVALID_PAYMENTS: Record<string, Mistake> = {
  'an amount of zero': { body: { amount: '0' }, rule: AMOUNT_VALUE },
  'a negative amount': { body: { amount: '-5' }, rule: AMOUNT_VALUE },
  'an amount that is not a number': { body: { amount: 'ten' }, rule: AMOUNT_VALUE },
  'an amount given as a number, not a string': { body: { amount: 10 }, rule: spec('§2.2: amount is a string; §4.2 #2: 400 invalid data') },
  'a reference id that is not a UUID': {
    referenceId: 'order-42',
    rule: spec('§2.5, §4.1: X-Reference-Id is a UUID v4; §4.2 #2: 400 invalid data'),
  },
  'a payer number that is not a phone number': {
    body: { payer: { partyIdType: 'MSISDN', partyId: 'call me' } },
    rule: spec('§2.1: an MSISDN partyId is an E.164 number, validated by partyIdType'),
  },
  'a payer e-mail address that is not an e-mail address': {
    body: { payer: { partyIdType: 'EMAIL', partyId: 'not-an-address' } },
    rule: spec('§2.1: an EMAIL partyId is a valid e-mail address, validated by partyIdType'),
  },
  'a kind of payer id the service does not know': {
    body: { payer: { partyIdType: 'IBAN', partyId: 'SE4550000000058398257466' } },
    rule: spec('§2.1: partyIdType is MSISDN, EMAIL or PARTY_CODE'),
  },
  'a payer message longer than 160 characters': { body: { payerMessage: 'x'.repeat(161) }, rule: TEXT_BOUND },
  'no payer': { body: { payer: undefined }, rule: REQUIRED_FIELDS },
};

defineParameterType({
  name: 'invalid payment',
  regexp: new RegExp(
    Object.keys(INVALID_PAYMENTS)
      .sort((a, b) => b.length - a.length)
      .join('|'),
  ),
  transformer: (phrase: string) => phrase,
});

export async function requestInvalidPayment(world: MomoWorld, problem: string): Promise<void> {
  world.rule = INVALID_PAYMENTS[problem]!.rule;
  await requestPayment(world, ORDINARY_CUSTOMER, '5', INVALID_PAYMENTS[problem]);
}

const INVALID_DEPOSITS: Record<string, Mistake> = {
  'an amount of zero': { body: { amount: '0' }, rule: AMOUNT_VALUE },
  'a payee number that is not a phone number': {
    body: { payee: { partyIdType: 'MSISDN', partyId: 'call me' } },
    rule: spec('§2.1, §2.3: an MSISDN partyId is an E.164 number, validated by partyIdType'),
  },
};

defineParameterType({
  name: 'invalid deposit',
  regexp: new RegExp(
    Object.keys(INVALID_DEPOSITS)
      .sort((a, b) => b.length - a.length)
      .join('|'),
  ),
  transformer: (phrase: string) => phrase,
});

export async function depositInvalid(world: MomoWorld, problem: string): Promise<void> {
  world.rule = INVALID_DEPOSITS[problem]!.rule;
  await deposit(world, ORDINARY_CUSTOMER, '5', INVALID_DEPOSITS[problem]);
}

const INVALID_REFUNDS: Record<string, Mistake> = {
  'an amount of zero': { body: { amount: '0' }, rule: AMOUNT_VALUE },
  'a reference to refund that is not a UUID': {
    body: { referenceIdToRefund: 'order-42' },
    rule: spec('§2.4: referenceIdToRefund is a UUID'),
  },
};

defineParameterType({
  name: 'invalid refund',
  regexp: new RegExp(
    Object.keys(INVALID_REFUNDS)
      .sort((a, b) => b.length - a.length)
      .join('|'),
  ),
  transformer: (phrase: string) => phrase,
});

/** A refund of the scenario's request to pay, with one thing wrong. */
export async function refundInvalid(world: MomoWorld, problem: string): Promise<void> {
  world.rule = INVALID_REFUNDS[problem]!.rule;
  await refundPayment(world, undefined, INVALID_REFUNDS[problem]);
}

/** A currency the target refuses (MOMO_REFUSED_CURRENCY; by default one that is not MOMO_CURRENCY). */
const foreignCurrency = (world: MomoWorld) => world.config.refusedCurrency;

export async function requestInForeignCurrency(world: MomoWorld, amount: string): Promise<void> {
  await requestPayment(world, ORDINARY_CUSTOMER, amount, { body: { currency: foreignCurrency(world) } });
}

export async function depositInForeignCurrency(world: MomoWorld, amount: string, party: Party): Promise<void> {
  await deposit(world, party, amount, { body: { currency: foreignCurrency(world) } });
}

/** A refund of the scenario's request to pay, in full, in a currency the target does not take. */
export async function refundInForeignCurrency(world: MomoWorld): Promise<void> {
  await refundPayment(world, undefined, { body: { currency: foreignCurrency(world) } });
}

/** A deposit that carries no Authorization at all (the client sends none for an empty credential). */
export async function depositWithoutToken(world: MomoWorld, amount: string, party: Party): Promise<void> {
  await deposit(world, party, amount, { call: { authorization: '' } });
}

/** A refund, in full, of the scenario's request to pay that carries no Authorization at all. */
export async function refundWithoutToken(world: MomoWorld): Promise<void> {
  await refundPayment(world, undefined, { call: { authorization: '' } });
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
  const record = response.json as { amount?: unknown; externalId?: unknown };
  const changed = [
    ...(record.amount !== undefined && !sameNumber(record.amount, first.body.amount)
      ? [{ field: '/amount', expected: quote(first.body.amount), received: quote(record.amount) }]
      : []),
    ...(record.externalId !== undefined && record.externalId !== first.body.externalId
      ? [{ field: '/externalId', expected: quote(first.body.externalId), received: quote(record.externalId) }]
      : []),
  ];
  world.check(
    'refusal-changes-nothing',
    response,
    what,
    changed.map((c) => finding('refusal-changes-nothing', c)),
  );
}

function sameNumber(recorded: unknown, sent: string): boolean {
  try {
    return typeof recorded === 'string' && toMinor(recorded) === toMinor(sent);
  } catch {
    return false;
  }
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
  const response = world.expect({
    status: 401,
    source: spec('§5 rule 1: every operation requires the subscription key; §7: 401 Unauthorized'),
    what,
  });
  const body = response.json as { statusCode?: unknown } | undefined;
  world.check(
    'gateway-refusal-shape',
    response,
    what,
    body?.statusCode === 401
      ? []
      : [
          finding('gateway-refusal-shape', {
            field: '/statusCode',
            expected: '401, with a message',
            received: body?.statusCode === undefined ? 'none' : quote(body.statusCode),
          }),
        ],
  );
}

const FORBIDDEN_ENVIRONMENT = (world: MomoWorld) => (world.config.targetEnvironment === 'mtnuganda' ? 'mtnghana' : 'mtnuganda');

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
  const bearer = await world.bearer();
  const forged = `${bearer.slice(0, -4)}${bearer.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
  world.remember(await world.client.basicUserInfo(forged, ORDINARY_CUSTOMER.msisdn));
}

/** §7: 401 is "Unauthorized; body {error}" (rule 4 for the token and basic-info operations), the error any code. */
export function expectOAuthRefusal(world: MomoWorld): void {
  const what = 'a caller without a valid access token is refused with an error code';
  const source = spec('§7: 401 Unauthorized, body {error}; §2.14: error is an error code');
  const response = world.expect({ status: 401, source, what });
  const body = response.json as { error?: unknown } | undefined;
  world.check(
    'error-code',
    response,
    what,
    typeof body?.error === 'string'
      ? []
      : [
          finding('error-code', {
            field: '/error',
            expected: 'an error code',
            received: body?.error === undefined ? 'none' : quote(body.error),
            source,
          }),
        ],
  );
}

export async function readStatusOfReference(world: MomoWorld, which: 'malformed' | 'unknown'): Promise<void> {
  // §4.6 does not show how the status query answers either: the live sandbox's 400 and 404 are observations.
  world.rule =
    which === 'malformed'
      ? observed('real-api-notes, status records: a status GET for a non-UUID reference gives 400')
      : observed('real-api-notes, status records: a status GET for an unknown UUID gives 404 RESOURCE_NOT_FOUND');
  const referenceId = which === 'malformed' ? 'order-42' : randomUUID();
  world.remember(await world.client.getRequestToPayStatus(await world.bearer(), referenceId));
}

export { readBalance };
