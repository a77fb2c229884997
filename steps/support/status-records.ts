import { acceptedAs, type ApiResponse, type CallOptions } from '../../harness/client/momo-client.ts';
import {
  amountFindings,
  echoFindings,
  leftBehindFindings,
  outcomeFindings,
  reasonFindings,
  refundToPayerFindings,
  TRANSACTION_CHECKS,
  transactionIdFindings,
  type StatusRecord,
} from '../../harness/checks/transactions.ts';
import { REFUSALS } from '../../harness/checks/refusals.ts';
import { validatorFor } from '../../core/validation/schemas.ts';
import { normaliseAmount } from '../../core/money.ts';
import type { Source } from '../../core/sources.ts';
import type { Account } from './harness.ts';
import type { MomoWorld, Payment } from './world.ts';
import type { OperationId } from '../../core/catalogue/operations.ts';
import { operation, statusQueryOf } from '../../core/catalogue/routes.ts';

export type { StatusRecord };

/**
 * How a partner learns the outcome of a transaction (§4.6): its status record, read through the status query the
 * catalogue names for its creation, waited for until final, and held to what was asked (harness/checks/transactions.ts).
 */

/** Statuses a transaction passes through before it is final: PENDING (§3), and CREATED, seen once on the live service. */
const NOT_FINAL = new Set(['PENDING', 'CREATED']);

/** Reads the status record of a transaction through its status query, by its own API user or, to test ownership, by another. */
export async function readStatus(
  world: MomoWorld,
  payment: Payment = world.lastPayment,
  account: Account = payment.account,
  extra: CallOptions = {},
): Promise<ApiResponse> {
  return world.client.invoke(statusQueryOf(payment.create), payment.product, {
    authorization: await world.bearer(account),
    params: { referenceId: payment.referenceId },
    ...extra,
  });
}

/** Another partner's attempt to read this scenario's transaction. */
export async function readStatusAsOther(world: MomoWorld): Promise<void> {
  world.rule = REFUSALS['transaction-ownership'];
  world.remember(await readStatus(world, world.lastPayment, otherPartnerOf(world)));
}

/**
 * The partner reads its transaction's status once, as a client does while it waits (pending, for a party who answers
 * after a while): looking must change nothing of what comes after, its callback included.
 */
export async function lookMeanwhile(world: MomoWorld): Promise<void> {
  await readStatus(world, world.lastPayment);
}

export function otherPartnerOf(world: MomoWorld): Account {
  if (!world.otherPartner) throw new Error('No other partner in this scenario: introduce one with a Given step.');
  return world.otherPartner;
}

/**
 * The transaction reads back as unknown: its creation left nothing behind. A follow-up of a refusal: when the creation
 * was not refused (the step before weighed that by the rule it rests on, and it was not definite), there is nothing
 * here to check, and the scenario says so.
 */
export async function expectNotCreated(world: MomoWorld): Promise<void> {
  const what = 'a refused creation leaves no transaction behind';
  const creation = world.response;
  if (creation && (creation.status < 300 || creation.createdEarlier)) {
    world.log(`Not checked that nothing was created: the creation was accepted (${acceptedAs(creation)}), not refused.`);
    return;
  }
  const response = await readStatus(world);
  world.check('refusal-changes-nothing', response, what, leftBehindFindings(response.status));
  // How an unknown reference id reads is the live sandbox's (§4.6 does not show it): 404 RESOURCE_NOT_FOUND, and 400
  // for one that is not a UUID v4 (a creation refused for its reference id), or 404 for a UUID of another version.
  if (validatorFor('uuid-v4')(world.lastPayment.referenceId)) world.expect({ status: 404, code: 'RESOURCE_NOT_FOUND', what }, response);
  else world.expect({ status: [400, 404], source: REFUSALS['malformed-reference-read'], what }, response);
}

/** The status record, judged against its schema: one read. */
export async function currentRecord(
  world: MomoWorld,
  payment: Payment = world.lastPayment,
): Promise<{ response: ApiResponse; record: StatusRecord }> {
  const response = world.expect({ status: 200, what: `the ${payment.kind} reads back` }, await readStatus(world, payment));
  return { response, record: response.json as StatusRecord };
}

/**
 * The transaction is still PENDING. For a party that never answers that is §3's own rule; for one that answers
 * after a while, it holds only while that while lasts, which the spec does not give: the live sandbox's 25–30 s
 * (real-api-notes) make it an observation, so a target that is quicker is not failed for it in the spec profile.
 */
export async function expectStillPending(world: MomoWorld): Promise<void> {
  const { response, record } = await currentRecord(world);
  world.check(
    'transaction-outcome',
    response,
    'a transaction is PENDING until the customer answers',
    outcomeFindings(record, 'PENDING', { slow: Boolean(world.lastPayment.party?.slow) }),
  );
}

/**
 * Waits until the transaction is final, then checks its status and, when FAILED, its reason. The reason's
 * shape follows the profile: a bare code (mtn-sandbox) or {code, message} (spec). Test parties whose outcome
 * is delayed, or never comes, get the slow deadline.
 */
export async function expectOutcome(
  world: MomoWorld,
  status: string,
  reason?: string,
  reasonSource?: Source,
  payment: Payment = world.lastPayment,
): Promise<StatusRecord> {
  const slow = Boolean(payment.party?.slow || payment.party?.outcome === 'PENDING');
  const { response, record } = await finalRecord(world, payment, slow);
  world.check(
    reason !== undefined ? ['transaction-outcome', 'failure-reason'] : 'transaction-outcome',
    response,
    `the ${payment.kind} ends ${status}${reason ? ` because ${reason}` : ''}`,
    [
      ...outcomeFindings(record, status),
      ...(reason !== undefined && record.status === status ? reasonFindings(record, reason, reasonSource) : []),
    ],
  );
  return record;
}

/**
 * A transaction the scenario sets up ends as its customer answers, the premise of what the scenario does next (a
 * refund of it, a delivery notification). When it ends otherwise and that departs only from the live service's test
 * numbers or names (a warning in the spec profile), the scenario goes on resting on that premise: a later departure
 * that may be due to it is not judged (not tested).
 */
export async function settledAsAsked(world: MomoWorld, payment: Payment = world.lastPayment): Promise<void> {
  const expected = payment.party?.outcome ?? 'SUCCESSFUL';
  const record = await expectOutcome(world, expected, undefined, undefined, payment);
  // Assumed from here on when it did not hold; one payment that did changes nothing of another that did not.
  if (record.status !== expected) world.assume('payment-settled-as-asked');
  // What money it moves follows how it ended, as read, not how its test number has it end (§3 allows a time-out).
  if (!NOT_FINAL.has(record.status)) payment.endedAs = endedFailed(record) ? 'FAILED' : 'SUCCESSFUL';
}

/** §3 does not name the final states: a record that gives a reason failed, whatever it calls its state. */
export function endedFailed(record: { status?: unknown; reason?: unknown }): boolean {
  return record.status === 'FAILED' || (record.status !== 'SUCCESSFUL' && record.reason !== undefined);
}

export async function expectSuccessWithTransactionId(world: MomoWorld): Promise<void> {
  const payment = world.lastPayment;
  const { response, record } = await finalRecord(world, payment, Boolean(payment.party?.slow));
  world.check(
    ['transaction-outcome', 'financial-transaction-id'],
    response,
    `a successful ${payment.kind} carries the financial transaction id`,
    [...outcomeFindings(record, 'SUCCESSFUL'), ...transactionIdFindings(record)],
  );
}

/**
 * The record shows what was asked (record-echoes-request): each field it names as sent (harness/checks/transactions.ts
 * echoFindings), the amount as the same number.
 */
export async function expectRecordAsAsked(world: MomoWorld, amount: string): Promise<void> {
  const payment = world.lastPayment;
  if (normaliseAmount(payment.body.amount) !== amount)
    throw new Error(
      `The scenario sent ${payment.body.amount}, which normalises to ${normaliseAmount(payment.body.amount)}, not ${amount}: fix the feature.`,
    );
  await judgeRecordAsAsked(world, payment, `the ${payment.kind} record shows what was asked`);
}

/**
 * A refund is a transaction of its own (§2.4, §4.3 #9, with its own amount): the payment it returns still reads as it
 * was asked, its amount whole. Its status may move on (§3 names no state past a final one), so only what was asked is read.
 */
export async function expectRefundedPaymentUnchanged(world: MomoWorld): Promise<void> {
  await judgeRecordAsAsked(world, requestToPayOf(world), "after its refund, the payment's record still shows what was asked");
}

/** The partner's transaction before its last of the same kind reads as it was asked: the last one took nothing of it. */
export async function expectEarlierReadsAsAsked(world: MomoWorld): Promise<void> {
  const last = world.lastPayment;
  const earlier = world.payments.filter((p) => p !== last && p.kind === last.kind).at(-1);
  if (!earlier) throw new Error(`No ${last.kind} was made in this scenario before the last one.`);
  await judgeRecordAsAsked(world, earlier, `after the partner's next ${last.kind}, the earlier one still shows what was asked`);
}

/** The transaction's record, read now, shows what its creation sent (record-echoes-request). */
export async function judgeRecordAsAsked(
  world: MomoWorld,
  payment: Payment,
  what: string,
): Promise<{ response: ApiResponse; record: StatusRecord }> {
  const { response, record } = await currentRecord(world, payment);
  const sent = payment.body;
  const partyField = paysFrom(payment.create) ? 'payer' : 'payee';
  world.check('record-echoes-request', response, what, [
    ...amountFindings(record, sent.amount),
    ...echoFindings(
      record,
      {
        currency: sent.currency,
        [partyField]: sent[partyField],
        externalId: sent.externalId,
        payerMessage: sent.payerMessage,
        payeeNote: sent.payeeNote,
      },
      world.config.profile,
    ),
  ]);
  return { response, record };
}

/** The refund goes to the payer of the request to pay it returns (refund-to-payer): where the record names a payee. */
export async function expectRefundToPayer(world: MomoWorld): Promise<void> {
  const original = requestToPayOf(world);
  const { response, record } = await currentRecord(world);
  const payer = original.body.payer as { partyIdType: string; partyId: string };
  world.check(
    'refund-to-payer',
    response,
    'a refund is paid to the payer of the request to pay it returns',
    refundToPayerFindings(record, payer, world.config.profile),
  );
}

/** The schema of a transaction's status record (its status query's 200), which its callback carries too (callbacks.ts). */
export function statusSchemaOf(payment: Payment): string {
  const body = operation(statusQueryOf(payment.create)).responses[200]?.body;
  if (typeof body !== 'string') throw new Error(`The status query of ${payment.create} names no single record schema in the catalogue.`);
  return body;
}

/** Whether a creation's party pays (its body is a request to pay's, with a payer) rather than being paid. */
function paysFrom(create: OperationId): boolean {
  const { request } = operation(create);
  return request !== 'none' && request.schema === 'request-to-pay';
}

/** The status record of a transaction once it is final (its party's delay allowed for). */
export function finalStatusRecord(world: MomoWorld, payment: Payment): Promise<{ response: ApiResponse; record: StatusRecord }> {
  return finalRecord(world, payment, Boolean(payment.party?.slow));
}

/** How long the live sandbox takes to settle a payment: at once, or about 25–30 s for the delayed test number. */
const SETTLING = TRANSACTION_CHECKS['transaction-outcome'].values.settling;

/**
 * Polls the status until it is final, then reads it once more: a final state stays final (final-state-is-final,
 * which the harness checks on every status record it reads). A 404 may be a record not yet readable; any other
 * departure fails at once. Not final within the deadline: the spec gives no time, so that weighs as the live
 * sandbox's pace (an observation). Which states are final is not shown (§3): any other than PENDING, and the
 * transient CREATED seen live, is taken as final.
 */
async function finalRecord(world: MomoWorld, payment: Payment, slow: boolean): Promise<{ response: ApiResponse; record: StatusRecord }> {
  const where = `${operation(statusQueryOf(payment.create)).label} — §3: the ${payment.kind} ${payment.referenceId} reaches a final status`;
  const outcome = await world.awaitState(
    'transaction-outcome',
    `the ${payment.kind} reaching a final status`,
    async () => {
      const response = await readStatus(world, payment);
      if (response.status === 404)
        throw new Error(`${response.operation.label} answered 404: ${world.harness.redactor.text(response.text)}`);
      try {
        world.expect({ status: 200, what: `the ${payment.kind} reads back` }, response);
      } catch (failure) {
        return { failure };
      }
      const record = response.json as StatusRecord;
      if (NOT_FINAL.has(record.status)) throw new Error(`status ${record.status}`);
      return { response, record };
    },
    { slow, readsTarget: true, timing: SETTLING, where, operation: statusQueryOf(payment.create), product: payment.product },
  );
  if ('failure' in outcome) throw outcome.failure;
  await readStatus(world, payment);
  return outcome;
}

/**
 * A transaction is made asynchronously (§1): its record, not yet readable right after the 202, is read again until it
 * is. Still not found at the deadline, the run could not observe it in the spec profile, which gives no time for it
 * (the live service's pace is an observation: a failure in the mtn-sandbox profile).
 */
export async function awaitReadable(world: MomoWorld, payment: Payment): Promise<void> {
  const where = `${operation(statusQueryOf(payment.create)).label} — §1, §3: the ${payment.kind} ${payment.referenceId}, accepted, reads back`;
  await world.awaitState(
    'record-echoes-request',
    `the ${payment.kind} to be readable`,
    async () => ((await readStatus(world, payment)).status === 404 ? undefined : true),
    { readsTarget: true, timing: SETTLING, where, operation: statusQueryOf(payment.create), product: payment.product },
  );
}

export function requestToPayOf(world: MomoWorld): Payment {
  // "That payment": the scenario's latest request to pay (a scenario may make one first to see balances move).
  const original = [...world.payments].reverse().find((p) => p.create === 'requestToPay');
  if (!original) throw new Error('No request to pay in this scenario to refund: make one in a Given step first.');
  return original;
}
