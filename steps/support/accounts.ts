import type { ApiResponse } from '../../harness/client/momo-client.ts';
import type { Product } from '../../core/products.ts';
import { fromMinor, sameDecimal, toMinor } from '../../core/money.ts';
import { bindingOf, isServedUnder, productsOf } from '../../core/catalogue/routes.ts';
import { OPERATION_IDS, OPERATIONS, type OperationId } from '../../core/catalogue/operations.ts';
import type { CallOptions } from '../../harness/client/momo-client.ts';
import { ORDINARY_CUSTOMER } from './parties.ts';
import type { Party } from './parties.ts';
import {
  balanceGrownFindings,
  currencyFindings,
  HOLDER_ANSWERED,
  holderFindings,
  holderReadableFindings,
  moneyMovedFindings,
  sameAccountFindings,
} from '../../harness/checks/accounts.ts';
import { quote, type Finding } from '../../harness/checks/check.ts';
import { specCreations } from '../../harness/checks/inputs.ts';
import { DeadlineExceededError } from '../../harness/eventually.ts';
import { PremiseNotHeld } from '../../harness/judging/judge.ts';
import { PREMISES } from '../../harness/checks/premises.ts';
import { reusedEarlier } from './transactions.ts';
import type { Payment } from './world.ts';
import { sourceOfDifference } from '../../core/profiles.ts';
import type { MomoWorld } from './world.ts';
import type { Account } from './harness.ts';

/**
 * The partner's accounts and its customers' (§2.9, §4.2 #4 and #8, §4.3 #12, §4.4 #13): balances, and
 * whether an account holder is registered and active. Basic user information is in another module.
 */

/**
 * The simplest business call the spec lists under a product, which reads and changes nothing: the first GET
 * of the catalogue under that product that takes a Bearer token, needs no transaction and is not beyond the
 * spec (collection's balance in a currency, disbursement's account-holder status, remittance's balance). Scenarios
 * about tokens and the gateway use it, so that a target is never failed for lacking an operation beyond the spec.
 */
export function simplestCallOf(product: Product): OperationId {
  const found = OPERATION_IDS.find((id) => {
    const op = OPERATIONS[id];
    return (
      op.method === 'GET' &&
      op.credential === 'bearer' &&
      !Object.keys(op.params ?? {}).includes('referenceId') &&
      productsOf(id).includes(product) &&
      bindingOf(id, product).beyondSpec === undefined
    );
  });
  if (!found) throw new Error(`The catalogue lists no business read of the spec under ${product}.`);
  return found;
}

/** Calls a product's simplest business call (simplestCallOf) with the given credential, its parameters filled in. */
export async function readAccount(
  world: MomoWorld,
  product: Product,
  authorization: string,
  extra: CallOptions = {},
): Promise<ApiResponse> {
  const id = simplestCallOf(product);
  const values: Record<string, string> = {
    currency: world.config.currency,
    accountHolderIdType: 'msisdn',
    accountHolderId: ORDINARY_CUSTOMER.msisdn,
    accountHolderMSISDN: ORDINARY_CUSTOMER.msisdn,
  };
  const params = Object.fromEntries(
    Object.keys(OPERATIONS[id].params ?? {}).map((name) => {
      if (values[name] === undefined) throw new Error(`No value for the parameter ${name} of ${id}.`);
      return [name, values[name]!];
    }),
  );
  return world.client.invoke(id, product, { authorization, params, ...extra });
}

/** A partner with an API user of its own, for scenarios whose balances or payments no one else may touch. */
export async function actAsNewPartner(world: MomoWorld, product: Product): Promise<void> {
  await world.actAs(product, { fresh: true });
}

/** A second partner of the same product, with an API user of its own. */
export async function introduceOtherPartner(world: MomoWorld, product: Product): Promise<void> {
  world.otherPartner = await world.harness.provision(product);
}

/**
 * The acting partner's balance. On collection it is read in the configured currency (§4.2 #4, the operation
 * the spec lists); disbursement and remittance have the operation without a currency (§4.4 #13), unless
 * `inCurrency` asks for the one in a currency they have beyond the spec.
 */
export async function readBalance(
  world: MomoWorld,
  options: { targetEnvironment?: string; inCurrency?: boolean; account?: Account } = {},
): Promise<ApiResponse> {
  const { account = world.actor, ...rest } = options;
  const { product } = account;
  const { inCurrency = product === 'collection', ...extra } = rest;
  const currency = inCurrency ? world.config.currency : undefined;
  return world.remember(await world.client.getBalance(product, await world.bearer(account), currency, extra));
}

/** The balance in the partner's currency, under a product that has that operation beyond the spec. */
export async function readBalanceInCurrency(world: MomoWorld): Promise<void> {
  await readBalance(world, { inCurrency: true });
}

/** A target environment other than the configured one, which the partner's API user may not use. */
export async function readBalanceInForbiddenEnvironment(world: MomoWorld): Promise<void> {
  const forbidden = world.config.targetEnvironment === 'mtnuganda' ? 'mtnghana' : 'mtnuganda';
  await readBalance(world, { targetEnvironment: forbidden });
}

/** Reads the balance and keeps it, to compare with later in the scenario. */
export async function rememberBalance(world: MomoWorld): Promise<void> {
  await readBalance(world);
  world.balanceBefore = balanceOf(world, 'the balance is read before the payment').availableBalance;
  world.paymentsBeforeBalance = world.payments.length;
}

export function expectBalanceInCurrency(world: MomoWorld): void {
  const balance = balanceOf(world, 'the balance is readable');
  world.check(
    'balance-in-currency',
    world.response!,
    'the balance is in the currency the partner trades in',
    currencyFindings(balance.currency, world.config.currency),
  );
}

/** The balance now is the one read earlier plus `amount`, to the last decimal (core/money.ts). */
export async function expectBalanceGrownBy(world: MomoWorld, amount: string): Promise<void> {
  if (world.balanceBefore === undefined) throw new Error('No balance was read earlier in this scenario.');
  await readBalance(world);
  const balance = balanceOf(world, 'the balance is read after the payment');
  world.check(
    'balance-follows-payments',
    world.response!,
    `a successful payment of ${amount} credits the balance of ${world.balanceBefore}`,
    balanceGrownFindings(balance.availableBalance, world.balanceBefore, amount),
  );
  if (balanceGrownFindings(balance.availableBalance, world.balanceBefore, amount).length === 0)
    await expectSameBalanceWithNewToken(world, balance.availableBalance);
}

/**
 * The balance just read with the partner's token, read with a new access token of the same API user: the same, for it
 * is the account's (§2.9). A target that kept balances per token would show the new one the balance before the money
 * moved. The spec gives no time for a balance to move, so a difference is judged only when the old token, read once
 * more, still gives what it gave: the money did not move between the reads.
 */
async function expectSameBalanceWithNewToken(world: MomoWorld, justRead: string): Promise<void> {
  const what = 'the balance read with a new access token of the same API user is the one just read';
  const oldToken = await world.bearer();
  world.harness.renewToken(world.actor);
  const withNew = world.expect({ status: 200, what, premises: ['balance-of-its-own'] }, await readBalance(world));
  const newAmount = (withNew.json as { availableBalance?: unknown } | undefined)?.availableBalance;
  if (typeof newAmount === 'string' && sameDecimal(newAmount, justRead)) return;
  const again = await world.client.getBalance(
    world.actor.product,
    oldToken,
    world.actor.product === 'collection' ? world.config.currency : undefined,
  );
  const oldAgain = (again.json as { availableBalance?: unknown } | undefined)?.availableBalance;
  if (again.status !== 200 || typeof oldAgain !== 'string' || !sameDecimal(oldAgain, justRead)) {
    world.log(
      `The balance was ${justRead}, then ${quote(newAmount)} with a new token, and the old token read ${again.status === 200 ? quote(oldAgain) : `HTTP ${again.status}`}: it moved meanwhile, or the old token was done, so the two tokens are not compared.`,
    );
    return;
  }
  world.check('balance-of-the-account', withNew, what, sameAccountFindings(newAmount, justRead), ['balance-of-its-own']);
}

/** How a transaction ended: as read, where the target decided, else as its test number has it end. */
const endOf = (t: Payment): string => t.endedAs ?? t.party?.outcome ?? 'SUCCESSFUL';

/**
 * What a transaction calls for of its owner's balance (signed: a credit positive): its amount once it succeeded,
 * credited for a request to pay (its party pays) and debited for a deposit or refund; nothing when it failed, or
 * when another API user than the acting partner made it (a refund the target let only the payee's user make).
 */
function movementOf(world: MomoWorld, t: Payment): string {
  const creation = specCreations().find((c) => c.id === t.create);
  if (!creation) throw new Error(`${t.kind} is not a creation of the spec: no balance movement is known for it.`);
  if (t.account.userId !== world.actor.userId || endOf(t) !== 'SUCCESSFUL') return '0';
  return creation.party === 'payer' ? t.body.amount : `-${t.body.amount}`;
}

/**
 * The partner's balance has moved by what its transaction calls for (the scenario's last, or the earlier one whose
 * reference id the last reused), read again until it has, within the poll deadline: the spec gives no time for a
 * balance to move. A balance that never moved is a target that keeps none (a reading); any other movement is money
 * moved wrongly (definite).
 */
export async function expectMoneyMoved(world: MomoWorld, which: 'last' | 'earlier'): Promise<void> {
  await expectMovedBy(world, [which === 'last' ? world.lastPayment : reusedEarlier(world)]);
}

/**
 * Nothing the partner did since it read its balance moves money (a credential made, say): the balance reads as it did
 * (money-moves-once where the target was seen to keep balances; else balance-follows-payments, a reading).
 */
export async function expectBalanceUnmoved(world: MomoWorld): Promise<void> {
  const before = world.balanceBefore;
  if (before === undefined) throw new Error('No balance was read earlier in this scenario.');
  await readBalance(world);
  const now = balanceOf(world, 'the balance is read again').availableBalance;
  world.check(
    ['money-moves-once', 'balance-follows-payments'],
    world.response!,
    `no transaction since, the balance of ${before} has not moved`,
    moneyMovedFindings(now, before, '0', world.balancesKept),
  );
}

/**
 * Each transaction the partner made since it read its balance, as it ended (one decided after a while included), has
 * moved the balance by what it calls for, together: a ledger that wrote back a balance read when one was accepted
 * would lose what another moved meanwhile.
 */
export async function expectMoneyMovedByEach(world: MomoWorld): Promise<void> {
  const since = world.payments.slice(world.paymentsBeforeBalance);
  if (since.length === 0) throw new Error('The partner made no transaction since it read its balance.');
  await expectMovedBy(world, since);
}

async function expectMovedBy(world: MomoWorld, transactions: readonly Payment[]): Promise<void> {
  const before = world.balanceBefore;
  if (before === undefined) throw new Error('No balance was read earlier in this scenario.');
  // A refund made by the API user that was paid (where only it may refund) moves that user's money, not the balance
  // this partner reads: expecting no movement here would pass without testing anything.
  if (transactions.some((t) => t.create === 'refund' && t.account.userId !== world.actor.userId))
    throw new PremiseNotHeld(
      'refund-by-another-api-user',
      `The refund was made by the API user that was paid, not by this partner, whose balance the scenario reads: ${PREMISES['refund-by-another-api-user'].unheld}`,
    );
  const movement = fromMinor(transactions.reduce((sum, t) => sum + toMinor(movementOf(world, t)), 0n));
  let findings: Finding[] = [];
  try {
    await world.eventually(
      `the balance of ${before} moved by ${movement}`,
      async () => {
        await readBalance(world);
        findings = moneyMovedFindings(
          balanceOf(world, 'the balance is read after the transaction').availableBalance,
          before,
          movement,
          world.balancesKept,
        );
        return findings.length === 0 ? true : undefined;
      },
      { readsTarget: true },
    );
  } catch (error) {
    if (!(error instanceof DeadlineExceededError)) throw error;
  }
  const what = `${transactions.map((t) => `a ${t.kind} of ${t.body.amount} that ended ${endOf(t)}`).join(' and ')} ${transactions.length > 1 ? 'move' : 'moves'} ${movement} of the balance of ${before}`;
  // Where the partner learnt the outcome from a callback alone, the movement rests on the callback having told it.
  world.check(['money-moves-once', 'balance-follows-payments'], world.response!, what, findings, ['callback-told-outcome']);
  // Only a balance seen to move by what was called for shows the target keeps balances: one that did not move (a
  // warning above) shows the opposite, and must not turn the next scenario step's "not moved" into a failure.
  if (movement !== '0' && findings.length === 0) {
    world.balancesKept = true;
    await expectSameBalanceWithNewToken(world, balanceOf(world, 'the balance is read after the transaction').availableBalance);
  }
}

/** Whether a party is an active account holder, naming the id type in the lower case the spec requires, or not. */
export async function checkAccountHolder(world: MomoWorld, party: Party, idType: 'msisdn' | 'MSISDN' = 'msisdn'): Promise<void> {
  await checkHolderId(world, idType, party.msisdn);
}

export function expectActiveHolder(world: MomoWorld): void {
  expectHolderResult(world, true, 'a registered, active account holder is reported active');
}

/** An inactive account holder: {"result": false} (§4.2 #8: "false if it is not active or not found"). */
export function expectInactiveHolder(world: MomoWorld): void {
  expectHolderResult(world, false, 'an account holder who is not active is reported so');
}

/**
 * A holder who is not registered: {"result": false} by §4.2 #8; on the live sandbox, as the SDKs document,
 * refused as not found (accountHolderErrors in core/profiles.ts).
 */
export function expectUnregisteredHolder(world: MomoWorld): void {
  if (world.harness.behaviour.accountHolderErrors === 'documented') {
    world.expect({
      status: 404,
      code: 'RESOURCE_NOT_FOUND',
      source: sourceOfDifference('accountHolderErrors', 'mtn-sandbox'),
      what: "a holder who is not registered is refused as not found (the SDKs' test number, profile mtn-sandbox)",
    });
    return;
  }
  expectHolderResult(world, false, 'an account holder who is not registered is reported so');
}

/**
 * Whoever the holder, a valid id is answered true or false (§4.2 #8 documents 200, 400 and 500: "false if it is
 * not active or not found"), so no premise about which holders a target knows is needed: a holder it does not know
 * is not an error of another status. On the live sandbox, as the SDKs document, an unknown holder is refused as not found (mtn-sandbox).
 */
export function expectHolderAnswered(world: MomoWorld): void {
  const documented = world.harness.behaviour.accountHolderErrors === 'documented';
  const what = 'whether a holder is active is answered true or false, whoever they are';
  // 500 is an answer §4.2 #8 documents (a code of set A, which the error-body check judges): refusing to tell is
  // not telling wrongly. 404 is not one of its answers, but for the live sandbox's unknown holders.
  const response = world.expect({ status: documented ? [200, 404, 500] : [200, 500], source: HOLDER_ANSWERED, what });
  if (response.status === 200) world.check('holder-status', response, what, holderReadableFindings(response.json));
}

/** Whether the holder of an id of a kind (msisdn, email, party_code) is active, in the partner's own product. */
export async function checkHolderId(world: MomoWorld, idType: string, id: string): Promise<void> {
  const { product } = world.actor;
  if (!isServedUnder('accountHolderActive', product))
    throw new Error(`Account-holder status is not an operation of ${product} in the catalogue.`);
  world.remember(await world.client.accountHolderActive(product, await world.bearer(), idType, id));
}

/** The holder's status: true or false (§4.2 #8), in a body the suite can read (harness/checks/accounts.ts). */
function expectHolderResult(world: MomoWorld, result: boolean, what: string): void {
  const response = world.expect({ status: 200, what });
  world.check('holder-status', response, what, holderFindings(response.json, result));
}

function balanceOf(world: MomoWorld, what: string): { availableBalance: string; currency: string } {
  return world.expect({ status: 200, what }).json as { availableBalance: string; currency: string };
}
