import { ConformanceFailure } from '../../harness/judging/judge.ts';
import { defineParameterType } from '@cucumber/cucumber';
import { randomUUID } from 'node:crypto';
import type { CallOptions } from '../../harness/client/momo-client.ts';
import { PRODUCTS } from '../../core/products.ts';
import { readAccount, readBalance } from './accounts.ts';
import { ORDINARY_CUSTOMER, type Party } from './parties.ts';
import { deposit, notifyDelivery, readStatus, refundPayment, requestPayment, type CreateOptions } from './payments.ts';
import type { MomoWorld } from './world.ts';

/**
 * The ways a partner's call can be wrong, and what the service must answer to each (§7). Each phrase of
 * the features maps to one concrete mistake here.
 */

const INVALID_PAYMENTS: Record<string, CreateOptions> = {
  'an amount of zero': { body: { amount: '0' } },
  'a negative amount': { body: { amount: '-5' } },
  'an amount that is not a number': { body: { amount: 'ten' } },
  'an amount given as a number, not a string': { body: { amount: 10 } },
  'a reference id that is not a UUID': { referenceId: 'order-42' },
  'a payer number that is not a phone number': { body: { payer: { partyIdType: 'MSISDN', partyId: 'call me' } } },
  'a payer e-mail address that is not an e-mail address': { body: { payer: { partyIdType: 'EMAIL', partyId: 'not-an-address' } } },
  'a kind of payer id the service does not know': { body: { payer: { partyIdType: 'IBAN', partyId: 'SE4550000000058398257466' } } },
  'a payer message longer than 160 characters': { body: { payerMessage: 'x'.repeat(161) } },
  'no payer': { body: { payer: undefined } },
};

defineParameterType({
  name: 'invalid payment',
  regexp: new RegExp(Object.keys(INVALID_PAYMENTS).sort((a, b) => b.length - a.length).join('|')),
  transformer: (phrase: string) => phrase,
});

export async function requestInvalidPayment(world: MomoWorld, problem: string): Promise<void> {
  await requestPayment(world, ORDINARY_CUSTOMER, '5', INVALID_PAYMENTS[problem]);
}

const INVALID_DEPOSITS: Record<string, CreateOptions> = {
  'an amount of zero': { body: { amount: '0' } },
  'a payee number that is not a phone number': { body: { payee: { partyIdType: 'MSISDN', partyId: 'call me' } } },
};

defineParameterType({
  name: 'invalid deposit',
  regexp: new RegExp(Object.keys(INVALID_DEPOSITS).sort((a, b) => b.length - a.length).join('|')),
  transformer: (phrase: string) => phrase,
});

export async function depositInvalid(world: MomoWorld, problem: string): Promise<void> {
  await deposit(world, ORDINARY_CUSTOMER, '5', INVALID_DEPOSITS[problem]);
}

const INVALID_REFUNDS: Record<string, CreateOptions> = {
  'an amount of zero': { body: { amount: '0' } },
  'a reference to refund that is not a UUID': { body: { referenceIdToRefund: 'order-42' } },
};

defineParameterType({
  name: 'invalid refund',
  regexp: new RegExp(Object.keys(INVALID_REFUNDS).sort((a, b) => b.length - a.length).join('|')),
  transformer: (phrase: string) => phrase,
});

/** A refund of the scenario's request to pay, with one thing wrong. */
export async function refundInvalid(world: MomoWorld, problem: string): Promise<void> {
  await refundPayment(world, undefined, INVALID_REFUNDS[problem]);
}

/** A currency other than the one the target takes (MOMO_CURRENCY). */
const foreignCurrency = (world: MomoWorld) => (world.config.currency === 'USD' ? 'XOF' : 'USD');

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

/** The first payment of the scenario still reads back as it was asked: the reused reference changed nothing. */
export async function expectFirstPaymentUnchanged(world: MomoWorld): Promise<void> {
  const first = world.payments[0]!;
  const record = world.expect({ status: 200, what: 'the first payment still reads back' }, await readStatus(world, first)).json as { amount: string; externalId?: string };
  if (record.amount !== first.body.amount || record.externalId !== first.body.externalId) {
    throw new ConformanceFailure(`get request-to-pay status — §2.5, §7 rule 1: after a refused reuse of its reference id the payment must be unchanged (amount ${first.body.amount}, externalId ${first.body.externalId}); it reads amount ${record.amount}, externalId ${record.externalId}`);
  }
}

const KEY_MISTAKES = {
  'without a subscription key': (): CallOptions['subscriptionKey'] => 'none',
  'with a subscription key the gateway does not know': (): CallOptions['subscriptionKey'] => ({ key: `unknown-${randomUUID()}` }),
  'with the subscription key of another product': (world: MomoWorld): CallOptions['subscriptionKey'] => ({ product: PRODUCTS.find((p) => p !== world.actor.product)! }),
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

/** The API gateway's own refusal: 401 {statusCode, message} (real-api-notes), before any operation runs. */
export function expectGatewayRefusal(world: MomoWorld): void {
  const body = world.expect({ status: 401, what: 'the gateway refuses a call without the product\'s subscription key (§5.1)' }).json as { statusCode?: unknown };
  if (body?.statusCode !== 401) {
    throw new ConformanceFailure(`${world.response!.operation.label} — §5.1: the gateway's refusal must be {statusCode: 401, message}; got ${JSON.stringify(world.harness.redactor.json(body))}`, world.response);
  }
}

const FORBIDDEN_ENVIRONMENT = (world: MomoWorld) => (world.config.targetEnvironment === 'mtnuganda' ? 'mtnghana' : 'mtnuganda');

/** The status of the scenario's last transaction (request to pay, deposit or refund), asked in a forbidden environment. */
export async function readStatusInForbiddenEnvironment(world: MomoWorld): Promise<void> {
  const payment = world.lastPayment;
  world.remember(await readStatus(world, payment, payment.account, { targetEnvironment: FORBIDDEN_ENVIRONMENT(world) }));
}

export async function checkHolderInForbiddenEnvironment(world: MomoWorld): Promise<void> {
  const product = world.actor.product === 'disbursement' ? 'disbursement' : 'collection';
  world.remember(await world.client.accountHolderActive(product, await world.bearer(), 'msisdn', ORDINARY_CUSTOMER.msisdn, { targetEnvironment: FORBIDDEN_ENVIRONMENT(world) }));
}

export async function lookUpBasicInfoWithForgedToken(world: MomoWorld): Promise<void> {
  const bearer = await world.bearer();
  const forged = `${bearer.slice(0, -4)}${bearer.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
  world.remember(await world.client.basicUserInfo(forged, ORDINARY_CUSTOMER.msisdn));
}

/** §7: 401 is "Unauthorized; body {error}" (rule 4 for the token and basic-info operations). */
export function expectOAuthRefusal(world: MomoWorld): void {
  const body = world.expect({ status: 401, what: 'a caller without a valid access token is refused (§7, 401 with {error})' }).json as { error?: unknown };
  if (typeof body?.error !== 'string') {
    throw new ConformanceFailure(`${world.response!.operation.label} — §7: a caller without a valid access token must be answered 401 with {error}; got ${JSON.stringify(world.harness.redactor.json(body))}`, world.response);
  }
}

export async function readStatusOfReference(world: MomoWorld, which: 'malformed' | 'unknown'): Promise<void> {
  const referenceId = which === 'malformed' ? 'order-42' : randomUUID();
  world.remember(await world.client.getRequestToPayStatus(await world.bearer(), referenceId));
}

export { readBalance };
