import { randomUUID } from 'node:crypto';
import { wasCreated, type ApiResponse, type CallOptions, type PaymentBody } from '../../harness/client/momo-client.ts';
import { PremiseNotHeld } from '../../harness/judging/judge.ts';
import { DeadlineExceededError } from '../../harness/eventually.ts';
import { REFUSALS } from '../../harness/checks/refusals.ts';
import type { PremiseName } from '../../harness/checks/premises.ts';
import { fromMinor, toMinor } from '../../core/money.ts';
import type { Account } from './harness.ts';
import { ORDINARY_CUSTOMER, type Party } from './parties.ts';
import type { MomoWorld, Payment } from './world.ts';
import type { OperationId } from '../../core/catalogue/operations.ts';
import type { Product } from '../../core/products.ts';
import type { ProfileName } from '../../core/profiles.ts';
import { operation, statusQueryOf } from '../../core/catalogue/routes.ts';
import { expectOutcome, requestToPayOf, settledAsAsked } from './status-records.ts';

/**
 * What a partner does with money (§4.2 #2, §4.3 #9–10): requests to pay, deposits and refunds; beyond the spec,
 * transfers, requests to withdraw and the v2 deposit and refund. Every transaction a scenario makes is kept in
 * world.payments, the latest in world.payment; status-records.ts reads and judges how each ends.
 */

/** Gives the callback URL of a new transaction, from its reference id (see callbacks.ts). */
export type CallbackAddress = (world: MomoWorld, referenceId: string) => string;

export interface CreateOptions {
  /** The API user that makes the transaction; the acting partner's by default. */
  account?: Account;
  /** The X-Reference-Id to send; a new UUID v4 by default. */
  referenceId?: string;
  callback?: CallbackAddress;
  /** Changes to the body, e.g. an invalid amount, for scenarios about refusals. */
  body?: Partial<Record<keyof PaymentBody, unknown>>;
  /** Changes to the call, e.g. no access token, for scenarios about refusals. */
  call?: CallOptions;
}

export async function requestPayment(world: MomoWorld, party: Party, amount: string, options: CreateOptions = {}): Promise<ApiResponse> {
  return payFrom(world, 'requestToPay', 'collection', party, amount, options);
}

export async function deposit(world: MomoWorld, party: Party, amount: string, options: CreateOptions = {}): Promise<ApiResponse> {
  return payTo(world, 'deposit', 'disbursement', party, amount, options);
}

/** A creation whose party pays (request to pay, request to withdraw): the party is the payer. */
export async function payFrom(
  world: MomoWorld,
  create: OperationId,
  product: Product,
  party: Party,
  amount: string,
  options: CreateOptions = {},
): Promise<ApiResponse> {
  const body: PaymentBody = { ...texts(world, 'order'), amount, currency: world.config.currency, payer: msisdnOf(party) };
  return createTransaction(world, create, product, body, party, options);
}

/** A creation that pays the party (deposit, transfer): the party is the payee. */
export async function payTo(
  world: MomoWorld,
  create: OperationId,
  product: Product,
  party: Party,
  amount: string,
  options: CreateOptions = {},
): Promise<ApiResponse> {
  const body: PaymentBody = { ...texts(world, 'payout'), amount, currency: world.config.currency, payee: msisdnOf(party) };
  return createTransaction(world, create, product, body, party, options);
}

/** A deposit of one unit more than the balance the scenario read (world.balanceBefore). */
export async function depositMoreThanBalance(world: MomoWorld, party: Party): Promise<ApiResponse> {
  if (world.balanceBefore === undefined) throw new Error('No balance was read in this scenario: read it in a Given step first.');
  return deposit(world, party, fromMinor(toMinor(world.balanceBefore) + toMinor('1')));
}

/** Another deposit with the reference id of the scenario's last transaction. */
export async function depositAgain(world: MomoWorld, party: Party, amount: string): Promise<ApiResponse> {
  return deposit(world, party, amount, { referenceId: world.lastPayment.referenceId });
}

/** A transfer (beyond the spec) to the party, under the acting partner's product: disbursement or remittance. */
export async function transfer(world: MomoWorld, party: Party, amount: string, options: CreateOptions = {}): Promise<ApiResponse> {
  return payTo(world, 'transfer', world.actor.product, party, amount, options);
}

/** Another transfer with the reference id of the scenario's last transaction. */
export async function transferAgain(world: MomoWorld, party: Party, amount: string): Promise<ApiResponse> {
  return transfer(world, party, amount, { referenceId: world.lastPayment.referenceId });
}

/** A deposit through the v2 operation (beyond the spec), whose status the v1 deposit status query reads. */
export async function depositTheSecondWay(world: MomoWorld, party: Party, amount: string): Promise<ApiResponse> {
  return payTo(world, 'depositV2', 'disbursement', party, amount);
}

/** A refund of the scenario's request to pay in full through the v2 operation (beyond the spec). */
export async function refundTheSecondWay(world: MomoWorld): Promise<ApiResponse> {
  return refundPayment(world, undefined, {}, 'refundV2');
}

/** A request to withdraw (beyond the spec) from the party, v1 or v2, by the acting collection partner. */
export async function askToWithdraw(world: MomoWorld, party: Party, amount: string, version: 1 | 2): Promise<ApiResponse> {
  return payFrom(world, version === 1 ? 'requestToWithdraw' : 'requestToWithdrawV2', 'collection', party, amount);
}

/**
 * A refund of the scenario's request to pay, all of it or `amount`, v1 unless told, under disbursement: by the API user
 * this target lets refund it (refunderOf), which the spec does not say.
 */
export async function refundPayment(
  world: MomoWorld,
  amount?: string,
  options: CreateOptions = {},
  create: OperationId = 'refund',
): Promise<ApiResponse> {
  const original = requestToPayOf(world);
  const body: PaymentBody = {
    ...texts(world, 'refund'),
    amount: amount ?? original.body.amount,
    currency: original.body.currency,
    referenceIdToRefund: original.referenceId,
  };
  const account = options.account ?? (await refunderOf(world, original));
  world.harness.refundedFrom(original.referenceId);
  const response = await createTransaction(world, create, 'disbursement', body, original.party, { ...options, account });
  // A refund rests on the payment it refunds having ended as the scenario took it to (SUCCESSFUL, say).
  world.restsOn = ['payment-settled-as-asked'];
  return response;
}

/** Who may refund a request to pay: the disbursement partner, another API user than the one paid; or the one paid itself. */
const REFUND_WAYS: readonly {
  premise: PremiseName;
  refunder: (world: MomoWorld, paid: Account) => Account;
  /** The profiles the way is open in: the live service binds an API user to its product, so only another may refund there. */
  profiles: readonly ProfileName[];
}[] = [
  { premise: 'refund-by-another-api-user', refunder: (world) => world.actor, profiles: ['spec', 'mtn-sandbox'] },
  { premise: 'refund-by-payer-api-user', refunder: (_world, paid) => paid, profiles: ['spec'] },
];

const REFUNDER_FOUND = 'refunder';

/**
 * The API user that refunds a request to pay on this target. §2.4 and §4.3 #9 do not say who may refund, and a request
 * to pay is made under collection, a refund under disbursement: the first refund of a worker finds out, with a payment
 * of its own, whether the disbursement partner may refund it, or else the API user that was paid (each a premise,
 * harness/checks/premises.ts), and every refund after uses the way that held. When neither does, the refund's scenario
 * could not be set up on this target: not tested, naming both premises.
 */
/**
 * Finds out now, if the run has not yet, which API user may refund (with a payment and a refund of its own, which move
 * the disbursement balance a scenario is about to read), whatever it finds: the way that held, or why none did.
 */
export async function findOutWhoMayRefund(world: MomoWorld): Promise<PremiseName | PremiseNotHeld> {
  let found = world.harness.discovered.get(REFUNDER_FOUND) as PremiseName | PremiseNotHeld | undefined;
  if (found === undefined) {
    found = await world.harness
      .apart(() => findRefunder(world))
      .catch((error: unknown) => {
        if (error instanceof PremiseNotHeld) return error;
        throw error;
      });
    // What was found holds for the run: a way that held, or the refusals of every way (each a refusal of its kind,
    // quoted in the message), which a later refund would only meet again.
    world.harness.discovered.set(REFUNDER_FOUND, found);
  }
  return found;
}

async function refunderOf(world: MomoWorld, original: Payment): Promise<Account> {
  const found = await findOutWhoMayRefund(world);
  if (found instanceof PremiseNotHeld) throw new PremiseNotHeld(found.premise, found.message);
  const way = REFUND_WAYS.find((w) => w.premise === found)!;
  world.held(way.premise);
  return way.refunder(world, original.account);
}

/**
 * A payment of the run's collection API user, settled, and refunded each way in turn until a refund is accepted. A
 * way is given up only when the refund is turned away as its premise's refusal (harness/checks/premises.ts); any
 * other departure is the target's. A payment that did not end SUCCESSFUL rests the refunds on that too.
 */
async function findRefunder(world: MomoWorld): Promise<PremiseName> {
  const paid = await world.harness.account('collection');
  const referenceId = randomUUID();
  const body: PaymentBody = { ...texts(world, 'probe'), amount: '1', currency: world.config.currency, payer: msisdnOf(ORDINARY_CUSTOMER) };
  const what = 'a payment to find out who may refund it';
  world.expect(
    { status: 202, what },
    await world.client.invoke('requestToPay', 'collection', { authorization: await world.bearer(paid), referenceId, body }),
  );
  const status = await finalStatusOf(world, 'requestToPay', paid, referenceId);
  if (status !== 'SUCCESSFUL') world.assume('payment-settled-as-asked');
  return world.eitherWay(
    REFUND_WAYS.filter((way) => way.profiles.includes(world.config.profile)).map((way) => ({
      premise: way.premise,
      attempt: async () => {
        const refunder = way.refunder(world, paid);
        const refund: PaymentBody = {
          ...texts(world, 'probe-refund'),
          amount: '1',
          currency: world.config.currency,
          referenceIdToRefund: referenceId,
        };
        const refundId = randomUUID();
        world.expect(
          { status: 202, what: 'a refund of a successful payment is accepted', premises: [way.premise, 'payment-settled-as-asked'] },
          await world.client.invoke('refund', 'disbursement', {
            authorization: await world.bearer(refunder),
            referenceId: refundId,
            body: refund,
          }),
        );
        // Ended before the scenario goes on: a probe that settled later would move the balance the scenario reads
        // next (the refunder is often the scenario's own partner), which would look like its own money moving twice.
        // One that never ends moves nothing either: the scenario's own refund is judged on how it ends.
        await finalStatusOf(world, 'refund', refunder, refundId).catch((error: unknown) => {
          if (!(error instanceof DeadlineExceededError)) throw error;
        });
        return way.premise;
      },
    })),
  );
}

/**
 * Whether the refund's product refuses the currency the run was told the target refuses, asked of its other creation,
 * a deposit in it, once a worker, apart from the scenario's premises: refused there, as invalid currency, at once or as
 * its outcome, or not. That one refusal tells of the other is our reading (§2.2–§2.4 give the currency as an ISO 4217
 * code and say nothing of which a service takes where), so a refund judged on it is judged as a reading. A deposit is
 * not asked of by a refund, whose currency is not its payment's, which a server may refuse for that alone; a request to
 * pay has no other creation in its product.
 */
export async function siblingRefusesCurrency(world: MomoWorld, creation: OperationId): Promise<boolean> {
  const probe = CURRENCY_PROBES[creation];
  if (!probe) return false;
  const key = `currency-refused-by:${creation}`;
  let refused = world.harness.discovered.get(key) as boolean | undefined;
  if (refused === undefined) {
    refused = await world.harness.apart(() => probe(world, world.config.refusedCurrency));
    world.harness.discovered.set(key, refused);
  }
  return refused;
}

/** The creation in a currency that tells whether the product of a creation refuses it: the product's other one. */
const CURRENCY_PROBES: Partial<Record<OperationId, (world: MomoWorld, currency: string) => Promise<boolean>>> = {
  refund: depositRefusesCurrency,
};

async function depositRefusesCurrency(world: MomoWorld, currency: string): Promise<boolean> {
  const referenceId = randomUUID();
  const body: PaymentBody = { ...texts(world, 'currency-probe'), amount: '1', currency, payee: msisdnOf(ORDINARY_CUSTOMER) };
  const created = await world.client.invoke('deposit', 'disbursement', { authorization: await world.bearer(), referenceId, body });
  return refusedAsInvalidCurrency(world, created, 'deposit', world.actor, referenceId);
}

/** Whether a creation was refused for its currency: INVALID_CURRENCY at once, or as the reason it FAILED. */
async function refusedAsInvalidCurrency(
  world: MomoWorld,
  created: ApiResponse,
  creation: 'deposit',
  account: Account,
  referenceId: string,
): Promise<boolean> {
  if (!wasCreated(created)) return created.status >= 400 && (created.json as { code?: unknown } | undefined)?.code === 'INVALID_CURRENCY';
  const record = await finalRecordOf(world, creation, account, referenceId).catch(() => undefined);
  return record?.status === 'FAILED' && JSON.stringify(record.reason ?? '').includes('INVALID_CURRENCY');
}

/** The status a transaction of the run's own ends with, read until it is no longer PENDING (or CREATED). */
async function finalStatusOf(
  world: MomoWorld,
  creation: 'requestToPay' | 'refund',
  account: Account,
  referenceId: string,
): Promise<string> {
  return String((await finalRecordOf(world, creation, account, referenceId)).status);
}

/** The status record of a transaction of the run's own, read until it is no longer PENDING (or CREATED). */
function finalRecordOf(
  world: MomoWorld,
  creation: 'requestToPay' | 'deposit' | 'refund',
  account: Account,
  referenceId: string,
): Promise<{ status?: unknown; reason?: unknown }> {
  const product = creation === 'requestToPay' ? 'collection' : 'disbursement';
  return world.eventually(
    `the ${operation(creation).label} ${referenceId} reaching a final status`,
    async () => {
      const read = await world.client.invoke(statusQueryOf(creation), product, {
        authorization: await world.bearer(account),
        params: { referenceId },
      });
      const record = read.json as { status?: unknown; reason?: unknown } | undefined;
      return read.status === 200 && record?.status !== undefined && record.status !== 'PENDING' && record.status !== 'CREATED'
        ? record
        : undefined;
    },
    { readsTarget: true },
  );
}

/** A request to pay of `amount` by the party, settled, then refunded in full and accepted. */
export async function refundedPayment(world: MomoWorld, party: Party, amount: string): Promise<void> {
  await settledPaymentThroughCollection(world, party, amount);
  world.expect({ status: 202, what: 'a refund of a successful payment is accepted' }, await refundPayment(world));
}

/** Refunds the scenario's request to pay again, with the reference id of the scenario's last refund. */
export async function refundAgain(world: MomoWorld): Promise<ApiResponse> {
  return refundPayment(world, undefined, { referenceId: world.lastPayment.referenceId });
}

/** A refund naming the partner's last deposit where a request to pay goes (§2.4: referenceIdToRefund names a request to pay). */
export async function refundDeposit(world: MomoWorld, amount: string): Promise<ApiResponse> {
  const paidOut = world.lastPayment;
  if (paidOut.create !== 'deposit') throw new Error('No deposit in this scenario to name in a refund: make one in a Given step first.');
  const body: PaymentBody = {
    ...texts(world, 'refund'),
    amount,
    currency: world.config.currency,
    referenceIdToRefund: paidOut.referenceId,
  };
  return createTransaction(world, 'refund', 'disbursement', body, undefined, {});
}

/** A refund naming a request to pay that was never made. */
export async function refundUnknownPayment(world: MomoWorld, amount: string): Promise<ApiResponse> {
  const body: PaymentBody = { ...texts(world, 'refund'), amount, currency: world.config.currency, referenceIdToRefund: randomUUID() };
  return createTransaction(world, 'refund', 'disbursement', body, undefined, {});
}

/**
 * A request to pay that the customer answers; waits until it is final with the party's status. The reason
 * of a failure is left to the scenarios about reasons, so a Given fails only when its premise is not met.
 */
export async function settledPayment(world: MomoWorld, party: Party, amount: string, options: CreateOptions = {}): Promise<void> {
  world.expect({ status: 202, what: 'a request to pay is accepted' }, await requestPayment(world, party, amount, options));
  await settledAsAsked(world);
}

/** A request to pay made by the run's collection API user, whoever is acting. */
export async function settledPaymentThroughCollection(world: MomoWorld, party: Party, amount: string): Promise<void> {
  await settledPayment(world, party, amount, { account: await world.harness.account('collection') });
}

export async function depositAccepted(world: MomoWorld, party: Party, amount: string): Promise<void> {
  world.expect({ status: 202, what: 'a deposit is accepted' }, await deposit(world, party, amount));
}

/**
 * A refund of a request to pay that does not exist. The reference sandbox accepts it (202) and lets it end
 * FAILED with RESOURCE_NOT_FOUND (READINGS in core/profiles.ts: refund documents only 202/400/409/500 at
 * creation, and the live service decides payments asynchronously). A real server may instead refuse it at
 * creation: a 4xx or 500 whose body is a {code, message} of code set B is accepted as well.
 */
export async function expectRefundOfUnknownPaymentFails(world: MomoWorld): Promise<void> {
  const creation = world.response;
  if (!creation) throw new Error('No refund was asked for in this scenario.');
  // Nothing can be refunded of a payment that was never made, however the target says so: it moves no money.
  world.lastPayment.endedAs = 'FAILED';
  if (wasCreated(creation)) {
    await expectOutcome(world, 'FAILED', 'RESOURCE_NOT_FOUND', UNKNOWN_REFUND_READING);
    return;
  }
  // Refused at creation instead: as invalid data (400), or naming the missing request to pay.
  world.expect({
    status: [400, 404, 500],
    source: REFUSALS['unknown-refund-refused'],
    what: 'a refund of an unknown request to pay is accepted and ends FAILED, or is refused at creation',
  });
  if (creation.status !== 400)
    world.expect({
      status: creation.status,
      code: 'RESOURCE_NOT_FOUND',
      source: REFUSALS['unknown-refund-code'],
      what: 'a refund refused at creation names the missing request to pay',
    });
}

const UNKNOWN_REFUND_READING = REFUSALS['unknown-refund-code'];

export async function createTransaction(
  world: MomoWorld,
  create: OperationId,
  product: Product,
  asked: PaymentBody,
  party: Party | undefined,
  o: CreateOptions,
): Promise<ApiResponse> {
  const body = { ...asked, ...o.body } as PaymentBody;
  const account = o.account ?? world.actor;
  const referenceId = o.referenceId ?? randomUUID();
  const callbackUrl = o.callback?.(world, referenceId);
  const payment: Payment = {
    create,
    product,
    kind: operation(create).label,
    referenceId,
    body,
    account,
    ...(callbackUrl ? { callbackUrl } : {}),
    ...(party ? { party } : {}),
  };
  world.payment = payment;
  world.payments.push(payment);
  // A reference id the scenario gives on purpose reuses one: a 409 is then the case's answer, never an earlier attempt's creation.
  const extra: CallOptions = { ...(callbackUrl ? { callbackUrl } : {}), ...(o.referenceId ? { reusesReference: true } : {}), ...o.call };
  const response = world.remember(
    await world.client.invoke(create, product, { authorization: await world.bearer(account), referenceId, body, ...extra }),
  );
  payment.answer = response;
  return response;
}

function msisdnOf(party: Party): { partyIdType: string; partyId: string } {
  return { partyIdType: 'MSISDN', partyId: party.msisdn };
}

/** The earlier transaction of the scenario whose reference id its last one reused (in any case). */
export function reusedEarlier(world: MomoWorld): Payment {
  const again = world.lastPayment;
  const earlier = world.payments.find((p) => p !== again && p.referenceId.toLowerCase() === again.referenceId.toLowerCase());
  if (!earlier) throw new Error('No earlier creation in this scenario has the reference id the last one reused.');
  return earlier;
}

/** Reference and messages unique to the transaction, without characters the live sandbox rejects. */
function texts(world: MomoWorld, what: string): Pick<PaymentBody, 'externalId' | 'payerMessage' | 'payeeNote'> {
  const n = world.payments.length + 1;
  const tag = randomUUID().slice(0, 8);
  return { externalId: `${what}-${tag}-${n}`, payerMessage: `Payment for ${what} ${tag}`, payeeNote: `Note on ${what} ${tag}` };
}
