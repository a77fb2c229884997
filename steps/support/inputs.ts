import { randomUUID } from 'node:crypto';
import { wasCreated } from '../../harness/client/momo-client.ts';
import { defineParameterType } from '@cucumber/cucumber';
import { OPERATIONS } from '../../core/catalogue/operations.ts';
import {
  INPUT_CASES,
  OTHER_USER_REUSE,
  REFUSED_AS_INVALID,
  REFUSED_REFERENCE_LEFT_FREE,
  UPPER_CASE_REUSE,
  creationLabelled,
  inputCase,
  inputRuleIn,
  specCreations,
} from '../../harness/checks/inputs.ts';
import type { OperationId } from '../../core/catalogue/operations.ts';
import { amountFindings, echoFindings, unchangedFindings } from '../../harness/checks/transactions.ts';
import { moneyMovedFindings } from '../../harness/checks/accounts.ts';
import { quote } from '../../harness/checks/check.ts';
import { ORDINARY_CUSTOMER, type Party } from './parties.ts';
import {
  awaitReadable,
  currentRecord,
  endedFailed,
  expectOutcome,
  finalStatusRecord,
  judgeRecordAsAsked,
  readStatus,
  requestToPayOf,
  settledAsAsked,
} from './status-records.ts';
import { ownCallbackUrl } from './callbacks.ts';
import {
  createTransaction,
  deposit,
  refundPayment,
  requestPayment,
  reusedEarlier,
  settledPayment,
  settledPaymentThroughCollection,
  findOutWhoMayRefund,
  type CreateOptions,
} from './transactions.ts';
import { expectMoneyMoved, readBalance, rememberBalance } from './accounts.ts';
import { sameDecimal } from '../../core/money.ts';
import { PremiseNotHeld } from '../../harness/judging/judge.ts';
import { PREMISES, premiseSource, type PremiseName } from '../../harness/checks/premises.ts';
import type { MomoWorld, Payment } from './world.ts';

/**
 * The input classes of features/inputs.feature (generated from harness/checks/inputs.ts): each creation of the spec
 * sent one input wrong, without one required header, or in one of the forms the spec allows.
 */

const longestFirst = (words: Iterable<string>) => [...new Set(words)].sort((a, b) => b.length - a.length);

defineParameterType({
  name: 'creation',
  regexp: new RegExp(longestFirst(specCreations().map((c) => c.label)).join('|')),
  transformer: (label: string) => label,
});

defineParameterType({
  name: 'input',
  regexp: new RegExp(longestFirst(INPUT_CASES.map((c) => c.phrase)).join('|')),
  transformer: (phrase: string) => phrase,
});

/** Makes the creation with the input the case names: a changed body, another reference id, or a header left out. */
export async function askWithInput(world: MomoWorld, creationLabel: string, phrase: string, told = false): Promise<void> {
  const input = inputCase(creationLabel, phrase);
  world.rule = inputRuleIn(input, world.config.profile);
  const options: CreateOptions = {
    ...(told ? { callback: ownCallbackUrl } : {}),
    ...(input.body ? { body: input.body(world.config.currency) } : {}),
    ...(input.referenceId ? { referenceId: typeof input.referenceId === 'function' ? input.referenceId() : input.referenceId } : {}),
    ...(input.omit === 'x-reference-id' ? { call: { referenceId: undefined } } : {}),
    ...(input.omit === 'x-target-environment' ? { call: { targetEnvironment: null } } : {}),
    ...(input.callbackScheme
      ? { callback: (w: MomoWorld, id: string) => ownCallbackUrl(w, id).replace(/^http:/, `${input.callbackScheme}:`) }
      : {}),
  };
  // A refund returns the payment in full: that a part may be refunded is a reading of its own (partial-refund-taken).
  if (input.creation === 'refund') await refundPayment(world, undefined, options);
  else await create(world, input.creation, ORDINARY_CUSTOMER, '5', options);
}

/** A creation of the spec with a party (its payer or payee; a refund's is the payment's it refunds) and an amount. */
async function create(
  world: MomoWorld,
  creation: OperationId,
  party: Party,
  amount: string | undefined,
  options: CreateOptions = {},
): Promise<void> {
  // A refund without an amount is of the whole payment: a part refunded is a reading (partial-refund-taken).
  if (creation === 'requestToPay') await requestPayment(world, party, amount ?? '2.2', options);
  else if (creation === 'deposit') await deposit(world, party, amount ?? '2.2', options);
  else if (creation === 'refund') await refundPayment(world, amount, options);
  else throw new Error(`No way to make a ${creation} in steps/support/inputs.ts`);
}

/** A creation the partner made, accepted and ended as its party's test number says (a refund: of the scenario's payment, in full). */
export async function createdAndEnded(
  world: MomoWorld,
  creationLabel: string,
  party: Party,
  options: { callback?: boolean; amount?: string } = {},
): Promise<void> {
  const creation = creationLabelled(creationLabel).id;
  // A fraction no binary floating point holds, after a first of FIRST_AMOUNT: money rounded, or summed in doubles
  // (1.1 + 2.2 is 3.3000000000000003), is told from money moved right.
  const amount = options.amount ?? '2.2';
  const asked: CreateOptions = options.callback ? { callback: ownCallbackUrl } : {};
  if (creation === 'requestToPay') return settledPayment(world, party, amount, asked);
  if (creation === 'refund') await refundPayment(world, options.amount, asked);
  else await create(world, creation, party, amount, asked);
  world.expect({ status: 202, what: `a ${creationLabel} is accepted` });
  await settledAsAsked(world);
}

/**
 * A creation the partner made, accepted and left to end in its own time (its party answers after a while), of an
 * amount other than the next one's, so that a balance that lost either is told from one that moved right.
 */
export async function createdUnderWay(world: MomoWorld, creationLabel: string, party: Party): Promise<void> {
  await create(world, creationLabelled(creationLabel).id, party, '3.3');
  world.expect({ status: 202, what: `a ${creationLabel} is accepted` });
  world.underWay = world.lastPayment;
}

/**
 * Another creation, made and ended while the one under way waits for its party: the log says when the first had ended
 * already (a target that decides at once), so that no overlap was seen, though the money each moves is judged all the same.
 */
export async function createdAndEndedMeanwhile(world: MomoWorld, creationLabel: string, party: Party): Promise<void> {
  const first = underWay(world);
  await createdAndEnded(world, creationLabel, party);
  const status = (await readStatus(world, first)).json as { status?: unknown } | undefined;
  if (status?.status !== 'PENDING')
    world.log(`The ${first.kind} under way read ${quote(status?.status)} once the second had ended: the two did not overlap here.`);
}

/** The creation under way has ended, as its party answers (the slow deadline: it answers after a while). */
export async function underWayEnded(world: MomoWorld): Promise<void> {
  await settledAsAsked(world, underWay(world));
}

function underWay(world: MomoWorld): Payment {
  if (!world.underWay) throw new Error('No creation is under way in this scenario: start one with "… is under way".');
  return world.underWay;
}

/**
 * A refund of part of the scenario's payment, ended: taken as our reading that a part may be refunded (a premise, so
 * a target that refunds only in full is not tested here), and held once the refund ends SUCCESSFUL: from then on, the
 * money it moves is judged on the part refunded, not the payment's amount.
 */
export async function partialRefundEnded(world: MomoWorld, amount: string): Promise<void> {
  // A part after another rests on its own premise: a target may take one part and refuse the next.
  const paymentId = requestToPayOf(world).referenceId;
  const premise: PremiseName = world.payments.some(
    (p) => p.body.referenceIdToRefund === paymentId && p.answer?.status === 202 && p.endedAs !== 'FAILED',
  )
    ? 'another-part-refund-taken'
    : 'partial-refund-taken';
  await refundPayment(world, amount);
  world.restsOn = [...new Set([...world.restsOn, premise])];
  world.assume(premise);
  // Refused outright (a client error), it says the target takes no such part: nothing rests on it to judge.
  const answer = world.response;
  if (answer && PREMISES[premise].refusal?.(answer))
    throw new PremiseNotHeld(
      premise,
      `The refund of ${amount} of a payment was refused (HTTP ${answer.status}): ${PREMISES[premise].unheld}`,
    );
  world.expect({ status: 202, what: 'a refund of part of a payment is accepted' });
  const record = await expectOutcome(world, 'SUCCESSFUL');
  // Ended FAILED (where a state's name is a warning, the spec profile, the step goes on): the target refunds only in
  // full, or only one part, and what money a part moves is not tested.
  if (endedFailed(record))
    throw new PremiseNotHeld(
      premise,
      `The refund of ${amount} of a payment ended ${quote(record.status)}${record.reason === undefined ? '' : ` (${quote(record.reason)})`}: ${PREMISES[premise].unheld}`,
    );
  world.held(premise);
}

/** Refunds of parts of the scenario's payment, one after the other, each taken or refused as the target decides. */
export async function refundInParts(world: MomoWorld, amounts: readonly string[]): Promise<void> {
  world.partsRefunded = [];
  for (const amount of amounts) {
    const response = await refundPayment(world, amount);
    world.partsRefunded.push({ refund: world.lastPayment, response });
  }
}

/**
 * Each refund of a part is refused (that a part may be refunded is our reading: §2.4 and §4.3 #9 give a refund its own
 * amount and say no more), or, taken, reads back as it was asked, after the last too: its own amount, not its
 * payment's, and not overwritten by the next refund of the same payment.
 */
export async function expectPartsRefusedOrAsAsked(world: MomoWorld): Promise<void> {
  const parts = world.partsRefunded;
  if (!parts) throw new Error('No parts of a payment were refunded in this scenario.');
  for (const { refund, response } of parts) {
    if (response.status !== 202) {
      world.expect(
        {
          status: [400, 500],
          source: premiseSource(PREMISES['partial-refund-taken'], world.config.profile),
          what: `a refund of ${refund.body.amount} of a payment is taken, or refused`,
        },
        response,
      );
      continue;
    }
    await awaitReadable(world, refund);
    await judgeRecordAsAsked(
      world,
      refund,
      `the refund of ${refund.body.amount} of a payment reads back its own amount, after the refunds that followed it`,
    );
  }
}

/**
 * More whole units than 32 bits hold (2^31 is 2147483648), with a fraction: a ledger of 32-bit integers wraps it, and
 * one of single floats loses the quarter, so a balance that moves by another amount is told from one that moves right.
 */
const LARGE_AMOUNT = '3000000000.25';

/**
 * A creation of LARGE_AMOUNT with the party, ended as the target decides: taken as our reading that so large an amount
 * is taken (a premise), and ending SUCCESSFUL or, for a limit or too little money to deposit, FAILED.
 */
export async function largeCreationEnded(world: MomoWorld, creationLabel: string, party: Party): Promise<void> {
  world.assume('large-amount-taken');
  await create(world, creationLabelled(creationLabel).id, party, LARGE_AMOUNT);
  world.expect({ status: 202, premises: ['large-amount-taken'], what: `a ${creationLabel} of ${LARGE_AMOUNT} is accepted` });
  world.held('large-amount-taken');
  // The target may end it FAILED (a limit, or too little money to deposit): then it moves nothing.
  const payment = world.lastPayment;
  const { record } = await finalStatusRecord(world, payment);
  payment.endedAs = endedFailed(record) ? 'FAILED' : 'SUCCESSFUL';
}

/** Another creation of the kind, of another amount, to the party named: accepted, as any valid creation is. */
export async function createAnother(world: MomoWorld, creationLabel: string, party: Party): Promise<void> {
  await create(world, creationLabelled(creationLabel).id, party, '3.3');
  world.expect({ status: 202, what: `another ${creationLabel} is accepted` });
}

/**
 * Another refund, of another payment the partner is paid in full (7, not the earlier payment's 10): a refund names no
 * party of its own, so the next one differs by its payment, its amount and its texts.
 */
export async function refundAnotherPayment(world: MomoWorld): Promise<void> {
  await settledPaymentThroughCollection(world, ORDINARY_CUSTOMER, '7');
  world.expect({ status: 202, what: 'another refund is accepted' }, await refundPayment(world));
}

/**
 * Another creation of the kind under the external id of the scenario's last (§2.2, §2.4: it need not be unique), with
 * a customer or payee who approves; a refund's refunds another payment, in full, as a refund of the first could not.
 */
export async function createUnderEarlierExternalId(world: MomoWorld, creationLabel: string): Promise<void> {
  const creation = creationLabelled(creationLabel).id;
  const body = { externalId: world.lastPayment.body.externalId };
  if (creation === 'refund') {
    await settledPaymentThroughCollection(world, ORDINARY_CUSTOMER, '10');
    await refundPayment(world, undefined, { body });
  } else await create(world, creation, ORDINARY_CUSTOMER, '3.3', { body });
}

/** The same kind of creation again, under the reference id of the scenario's last one (in upper case if asked), with other data. */
export async function createAgainUnderItsReference(world: MomoWorld, creationLabel: string, upperCase: boolean): Promise<void> {
  const earlier = world.lastPayment;
  const referenceId = upperCase ? earlier.referenceId.toUpperCase() : earlier.referenceId;
  await create(world, creationLabelled(creationLabel).id, ORDINARY_CUSTOMER, '3', { referenceId });
}

/** The scenario's last creation sent again byte for byte: its body, its reference id, its callback address. */
export async function sendExactlyAgain(world: MomoWorld, creationLabel: string): Promise<void> {
  const earlier = world.lastPayment;
  const creation = creationLabelled(creationLabel).id;
  if (earlier.create !== creation)
    throw new Error(`The scenario's last creation is ${earlier.create}, not the ${creationLabel} to send again.`);
  const { callbackUrl } = earlier;
  await createTransaction(world, earlier.create, earlier.product, earlier.body, earlier.party, {
    account: earlier.account,
    referenceId: earlier.referenceId,
    ...(callbackUrl ? { callback: () => callbackUrl } : {}),
  });
}

/**
 * The same creation sent twice at once under one new reference id. §2.5 refuses a request that reuses an existing
 * reference id: whichever the target saw second reused the first's, however close they came. A store that looks for
 * the id and then writes it, unlocked in between, takes both (and moves the money twice).
 */
export async function createTwiceAtOnce(world: MomoWorld, creationLabel: string, party: Party): Promise<void> {
  const creation = creationLabelled(creationLabel).id;
  // What each call needs first (a token, who may refund) is fetched before, so that the two leave together.
  await world.bearer(world.actor);
  if (creation === 'refund') await findOutWhoMayRefund(world);
  const referenceId = randomUUID();
  const before = world.payments.length;
  // A new id for both: a 409 to an attempt the careful client made again is then told as created earlier (its own
  // first attempt may have made it), not taken for the case's answer. A refund is of the whole payment.
  const asked: CreateOptions = { referenceId, call: { reusesReference: false } };
  await Promise.all([0, 1].map(() => create(world, creation, party, creation === 'refund' ? undefined : '2.2', asked)));
  const [first, second] = world.payments.slice(before);
  world.sentTwice = [first!, second!];
}

/**
 * Of the two sent at once, one is accepted and the other refused as a duplicate (definite, the creation's 409). The
 * one refused made nothing: the scenario goes on with the one accepted alone, and its money is judged as one.
 */
export function expectOneOfTwoTaken(world: MomoWorld): void {
  if (!world.sentTwice) throw new Error('Nothing was sent twice at once in this scenario.');
  const [first, second] = world.sentTwice;
  const accepted = [first, second].filter((p) => p.answer?.status === 202);
  const refused = accepted.length === 1 ? (accepted[0] === first ? second : first) : second;
  const kept = accepted.length === 1 ? accepted[0]! : first;
  // An attempt made again (weather the spec allows) may have been refused as the duplicate of its own first attempt:
  // which of the two the target took first cannot then be told, only that it took no more than one.
  if (accepted.length < 2 && [first, second].some((p) => p.answer?.retried !== undefined)) {
    if (![first.answer, second.answer].some((answer) => answer !== undefined && wasCreated(answer)))
      throw new PremiseNotHeld(
        'duplicate-sent-at-once',
        `Neither of two ${kept.kind}s sent at once was seen accepted, the careful client having made one again: ${PREMISES['duplicate-sent-at-once'].unheld}`,
      );
    world.log(
      `One of the two ${kept.kind}s was made again by the careful client: the target took no more than one, which is all that can be told.`,
    );
  } else {
    world.expect({ status: 202, what: `one of two ${kept.kind}s sent at once under one reference id is accepted` }, kept.answer);
    world.expect(
      {
        status: 409,
        code: 'RESOURCE_ALREADY_EXIST',
        what: `the other of two ${kept.kind}s sent at once under one reference id is refused as a duplicate`,
      },
      refused.answer,
    );
  }
  world.payments.splice(world.payments.indexOf(refused), 1);
  world.payment = kept;
}

/** The one creation kept has ended as its party answers, and the balance has moved by what it calls for, once. */
export async function expectEndedAndMovedOnce(world: MomoWorld): Promise<void> {
  await settledAsAsked(world);
  await expectMoneyMoved(world, 'last');
}

/**
 * A creation under the reference id of the other partner's earlier one (of the same product), made by the other
 * partner: a reuse of an existing reference id by another API user.
 */
export async function createUnderOthersReference(world: MomoWorld, creationLabel: string): Promise<void> {
  const earlier = world.lastPayment;
  const account = world.otherPartner;
  if (!account) throw new Error('No other partner in this scenario: introduce one with a Given step.');
  await create(world, creationLabelled(creationLabel).id, ORDINARY_CUSTOMER, '3', { referenceId: earlier.referenceId, account });
}

/** A reference id another API user used is refused as a duplicate (our reading, OTHER_USER_REUSE). */
export function expectRefusedAsOthersDuplicate(world: MomoWorld): void {
  world.expect({ status: 409, source: OTHER_USER_REUSE, what: 'a reference id another API user used is refused as a duplicate' });
}

/**
 * After a creation refused as invalid, the same reference id with a valid request is accepted: the refusal took
 * nothing (definite). When the creation was not refused, its id was taken, and there is nothing to check here.
 */
export async function expectReferenceLeftFree(world: MomoWorld, creationLabel: string): Promise<void> {
  const refused = world.lastPayment;
  if ((world.response?.status ?? 0) < 400) {
    world.log('The creation was not refused, so its reference id names a transaction: not checked whether a refusal leaves it free.');
    return;
  }
  await create(world, creationLabelled(creationLabel).id, ORDINARY_CUSTOMER, '5', { referenceId: refused.referenceId });
  world.expect({
    status: 202,
    source: REFUSED_REFERENCE_LEFT_FREE,
    what: 'a reference id a refused creation sent is free for a valid one',
  });
}

/** A reference id reused in upper case made nothing new: refused as a duplicate, or as invalid (our reading). */
export function expectRefusedAsDuplicateOfUpperCase(world: MomoWorld): void {
  world.expect({ status: [409, 400], source: UPPER_CASE_REUSE, what: 'a reference id reused in upper case makes nothing new' });
}

/** The creation whose reference id the scenario reused still reads back as it was asked: the duplicate changed nothing. */
export async function expectEarlierUnchanged(world: MomoWorld): Promise<void> {
  const earlier = reusedEarlier(world);
  const what = `after a refused reuse of its reference id, the earlier ${earlier.kind} is unchanged`;
  const response = world.expect({ status: 200, what: `the earlier ${earlier.kind} still reads back` }, await readStatus(world, earlier));
  world.check('refusal-changes-nothing', response, what, unchangedFindings(response.json as object, earlier.body));
}

/**
 * An invalid request the spec gives no answer for (a creation without a header §4 requires, a currency in lower case)
 * is not served: one of the refusals the operation documents (definite); that the refusal is 400 invalid data, rather
 * than another of them, is our reading (§7 does not say).
 */
export function expectRefusedPreferablyAsInvalid(world: MomoWorld): void {
  const response = world.response;
  if (!response) throw new Error('No request was made in this scenario.');
  const refusals = Object.keys(OPERATIONS[response.operation.id].responses)
    .map(Number)
    .filter((status) => status >= 400 && status !== 503);
  world.expect({
    status: refusals,
    ...(world.rule ? { source: world.rule } : {}),
    what: 'an invalid request is not served',
  });
  world.expect({ status: 400, source: REFUSED_AS_INVALID, what: 'an invalid request is refused as invalid data' });
}

/**
 * A form a target may refuse as invalid data (an amount with three decimals, a reference id in capitals): or accepted
 * and then read back as it was asked, under the reference id it was given, the same number (record-echoes-request,
 * definite): never taken and kept as another, nor taken and lost.
 */
export async function expectRefusedOrKeptAsAsked(world: MomoWorld): Promise<void> {
  const response = world.expect({
    status: [202, 400],
    ...(world.rule ? { source: world.rule } : {}),
    what: 'a form a target may refuse is accepted, or refused as invalid',
  });
  if (response.status !== 202) return;
  const payment = world.lastPayment;
  const { response: read, record } = await currentRecord(world, payment);
  // The amount asked, and the party as sent (a number with its "+" is the same party in the spec profile, and comes
  // back exactly as sent from the live sandbox, observed: partyIdForm).
  const { payer, payee } = payment.body as { payer?: unknown; payee?: unknown };
  world.check('record-echoes-request', read, `the ${payment.kind} record reads back the amount and the party asked`, [
    ...amountFindings(record, String(payment.body.amount)),
    ...echoFindings(record, { payer, payee }, world.config.profile),
  ]);
}

/**
 * A form of an input the spec allows is taken: the creation is accepted (202), and its record, read under the reference id
 * it was given, shows what was asked (record-echoes-request): a form taken and then lost or changed was not taken.
 */
export async function expectAcceptedAsValid(world: MomoWorld): Promise<void> {
  const response = world.expect({
    status: 202,
    ...(world.rule ? { source: world.rule } : {}),
    what: 'a form of the input the spec allows is accepted',
  });
  // Refused where the rule is a reading or an observation: that was judged (a warning), and there is no record to read.
  if (response.status !== 202) return;
  const payment = world.lastPayment;
  await awaitReadable(world, payment);
  await judgeRecordAsAsked(world, payment, `the ${payment.kind} record reads back what was asked`);
}

/**
 * The partner's balance is its own (a premise): a creation of the same kind by another API user of the product (the
 * run's own), ended, leaves it as it was. A target whose API users share one account (a subscription's) moves it, and
 * the scenario is not tested: what its own transactions move could not be told from what the run's others move.
 */
async function expectBalanceOfItsOwn(world: MomoWorld, creation: OperationId): Promise<void> {
  const before = world.balanceBefore!;
  const partner = world.actor;
  const other = await world.harness.account(partner.product);
  const otherBefore = availableOf(await readBalance(world, { account: other }));
  if (creation === 'requestToPay') await settledPayment(world, ORDINARY_CUSTOMER, FIRST_AMOUNT, { account: other });
  else {
    await deposit(world, ORDINARY_CUSTOMER, FIRST_AMOUNT, { account: other });
    world.expect({ status: 202, what: "another API user's deposit is accepted" });
    await settledAsAsked(world);
  }
  await readBalance(world);
  const after = (world.response?.json as { availableBalance?: unknown } | undefined)?.availableBalance;
  if (typeof after === 'string' && !sameDecimal(after, before)) {
    // One account for several API users reads the same for each: the other's moved too. Where the other's own stayed
    // put, its money went to this partner's account, which is money moved wrongly (money-moves-once), not a shared one.
    const read = await readBalance(world, { account: other });
    const otherAfter = availableOf(read);
    if (otherBefore !== undefined && otherAfter !== undefined && sameDecimal(otherAfter, otherBefore))
      world.check(
        'money-moves-once',
        read,
        `another API user's transaction of ${FIRST_AMOUNT} moves its own balance of ${otherBefore}, not this partner's`,
        moneyMovedFindings(otherAfter, otherBefore, creation === 'requestToPay' ? FIRST_AMOUNT : `-${FIRST_AMOUNT}`, true),
      );
    throw new PremiseNotHeld(
      'balance-of-its-own',
      `The partner's balance went from ${JSON.stringify(before)} to ${JSON.stringify(after)} while another API user of ${partner.product} made a ${FIRST_AMOUNT} transaction of its own (${PREMISES['balance-of-its-own'].unheld})`,
    );
  }
}

/** The available balance a balance answer gives, when it gives one as a string. */
function availableOf(response: { json?: unknown }): string | undefined {
  const value = (response.json as { availableBalance?: unknown } | undefined)?.availableBalance;
  return typeof value === 'string' ? value : undefined;
}

/** The amount of the first creation whose balance movement a scenario sees: a fraction, as the scenario's own is. */
const FIRST_AMOUNT = '1.1';

/**
 * A first creation of the kind, of 1.1, with a customer who approves (a refund: of a payment of 1.1 it makes first), and
 * the balance read before and after it: a balance that moves by exactly that shows the target keeps balances, so that one
 * that does not move for the scenario's own transaction is money not moved (definite), not a target without balances.
 */
export async function seeBalanceMoveWithFirst(world: MomoWorld, creationLabel: string): Promise<void> {
  const creation = creationLabelled(creationLabel);
  // Who may refund is found out once a run, with a refund of its own: before a disbursement balance is read, not after.
  if (creation.product === 'disbursement') await findOutWhoMayRefund(world);
  if (creation.id === 'refund') await settledPaymentThroughCollection(world, ORDINARY_CUSTOMER, FIRST_AMOUNT);
  await rememberBalance(world);
  await expectBalanceOfItsOwn(world, creation.id);
  await createdAndEnded(world, creationLabel, ORDINARY_CUSTOMER, { amount: FIRST_AMOUNT });
  await expectMoneyMoved(world, 'last');
}
