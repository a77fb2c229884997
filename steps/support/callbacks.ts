import { wasCreated } from '../../harness/client/momo-client.ts';
import { randomUUID } from 'node:crypto';
import { defineParameterType } from '@cucumber/cucumber';
import { DeadlineExceededError, consistently, eventually } from '../../harness/eventually.ts';
import { quote } from '../../harness/judging/judge.ts';
import {
  CALLBACK_CHECKS,
  calledBackWhenFinalFindings,
  callbackRecordFindings,
  onceFindings,
  sameAsStatusFindings,
  labelledJsonFindings,
  solicitedFindings,
} from '../../harness/checks/callbacks.ts';
import { REFUSALS } from '../../harness/checks/refusals.ts';
import { PREMISES } from '../../harness/checks/premises.ts';
import { statusFindings } from '../../harness/checks/answers.ts';
import { endedFailed, finalStatusRecord, readStatus, statusSchemaOf } from './status-records.ts';
import type { MomoWorld, Payment } from './world.ts';
import type { ReceivedCallback } from '../../harness/callbacks/receiver.ts';
import type { Party } from './parties.ts';
import { deposit, requestPayment, reusedEarlier } from './transactions.ts';
import { refusedAddressCalledFindings, refusedCreationCalledBackFindings } from '../../harness/checks/transactions.ts';
import type { OperationId } from '../../core/catalogue/operations.ts';
import type { Product } from '../../core/products.ts';

/**
 * Callbacks (§6): the URL a transaction gives in X-Callback-Url, and what the harness's receiver heard.
 * Each transaction gets its own URL on the receiver, so a callback is tied to its transaction by exactly where
 * it arrived. The spec says a callback is sent there and nothing of its payload, timing or retries; the live
 * service is documented to send the status record once the transaction is final (real-api-notes).
 */
const SECTION = '§6';

/** When the live service sends a callback: once the transaction is final; the spec gives no time. */
const CALLBACK_TIMING = CALLBACK_CHECKS['callback-arrives'].values.timing;

/** A URL on the receiver, at the host the API user was registered with (config.callbackHost). */
export function ownCallbackUrl(world: MomoWorld, referenceId: string): string {
  return world.harness.receiver.urlFor(referenceId);
}

/** A URL on a host other than the API user's providerCallbackHost: the service must refuse it. */
export function foreignCallbackUrl(world: MomoWorld, referenceId: string): string {
  const host = world.config.callbackHost === 'callbacks.example.org' ? 'callbacks.example.net' : 'callbacks.example.org';
  return `http://${host}/callbacks/${referenceId}`;
}

/** Where a step asks to be told: at the receiver ("its callback address"), or at a host it did not register. */
export type CallbackAddress = typeof ownCallbackUrl;
const CALLBACK_ADDRESSES: Record<string, CallbackAddress> = {
  'its callback address': ownCallbackUrl,
  // A partner's listener down for a moment: the receiver answers the first callback there 500.
  'a callback address that refuses the first delivery': (world, referenceId) => world.harness.receiver.refusingFirstUrlFor(referenceId),
  // A listener that answers 204 No Content: a success all the same (RFC 9110 §15.3).
  'a callback address that answers with no content': (world, referenceId) => world.harness.receiver.noContentUrlFor(referenceId),
  'another host than it registered': foreignCallbackUrl,
  // The registered host written before "@" is the URL's userinfo, not its host (RFC 3986 §3.2): another host all the same.
  'another host, behind its registered one as userinfo': (world, referenceId) =>
    foreignCallbackUrl(world, referenceId).replace('http://', `http://${world.config.callbackHost}@`),
};
defineParameterType({
  name: 'callback address',
  regexp: new RegExp(Object.keys(CALLBACK_ADDRESSES).join('|')),
  transformer: (phrase: string) => CALLBACK_ADDRESSES[phrase]!,
});

/**
 * §6 names the code of a callback host the service rejects, INVALID_CALLBACK_URL_HOST, and no status, and leaves to the
 * service which hosts it rejects: that it rejects a host other than the API user's providerCallbackHost, and with
 * 500, is the live service's (observed). So a creation accepted here departs only from the live service (a warning in
 * the spec profile), a refusal must carry the code (definite), and its status 500 is the live service's.
 */
export function expectCallbackHostRefused(world: MomoWorld): void {
  const what = "a callback URL whose host is not the API user's providerCallbackHost is refused";
  const response = world.expect({
    status: [400, 500],
    source: REFUSALS['callback-host-refused'],
    code: 'INVALID_CALLBACK_URL_HOST',
    codeSource: REFUSALS['callback-host-code'],
    what,
  });
  if (response.status >= 400 && !response.createdEarlier)
    world.check('status-code', response, what, statusFindings(response, [500], REFUSALS['callback-host-refused']));
}

/**
 * A callback URL whose host hides behind the registered one as userinfo is refused: as invalid data (a URL with
 * userinfo, 400) or for its host (500 INVALID_CALLBACK_URL_HOST, as for any other host); that it is refused at all is
 * the live service's rule of hosts (observed), and the code goes with a refusal for the host (§6).
 */
export function expectUserinfoHostRefused(world: MomoWorld): void {
  const what = "a callback URL whose host hides behind the API user's providerCallbackHost as userinfo is refused";
  const response = world.expect({ status: [400, 500], source: REFUSALS['callback-host-refused'], what });
  if (response.status === 500)
    world.expect({ status: 500, code: 'INVALID_CALLBACK_URL_HOST', codeSource: REFUSALS['callback-host-code'], what });
}

/**
 * A callback arrives at exactly the URL the transaction gave, once; it is the transaction's status record and
 * equals what the status query gives once the transaction is final.
 */
export async function expectOneCallbackWithStatusRecord(world: MomoWorld): Promise<void> {
  const payment = world.lastPayment;
  const receiver = world.harness.receiver;
  const where = `callback of a ${payment.kind} — ${SECTION}: a callback arrives at ${payment.callbackUrl}`;
  const callbacks = await firstCallbacks(world, where);
  // The callback tells of the outcome: read now, the transaction must no longer be PENDING (the live service calls back
  // once it is final). Read once, at once, before any wait could let a late outcome catch up.
  const atArrival = await readStatus(world, payment);
  if (atArrival.status === 200)
    world.check(
      'callback-after-final',
      atArrival,
      'the transaction reads final once its callback has come',
      calledBackWhenFinalFindings((atArrival.json as { status?: unknown } | undefined)?.status),
    );
  // A duplicate would come later: the target's retries should stop once the receiver answered 200.
  await consistently(
    () => {
      const count = receiver.callbacksFor(payment.referenceId).length;
      world.harness.conclude({
        header: where,
        operation: payment.create,
        product: payment.product,
        checks: ['callback-once'],
        findings: onceFindings(
          count,
          world.config.callbackQuietMs,
          callbacks.map((c) => c.method),
        ),
      });
    },
    { durationMs: world.config.callbackQuietMs, intervalMs: world.config.pollIntervalMs },
  );
  // Every callback that came, in order, not only the first: a retry, or a second one the target sent on its own,
  // must carry the same final record (one that says FAILED after SUCCESSFUL tells the partner two outcomes).
  const all = receiver.callbacksFor(payment.referenceId);
  await judgeEachCallback(world, payment, all.length > 0 ? all : callbacks, where);
}

/**
 * The callbacks of the scenario's transaction once the first has come (within the callback deadline, the slow one for a
 * party who answers after a while); one sent to another address, or to a URL no transaction gave, ends the wait as a
 * departure.
 */
async function firstCallbacks(
  world: MomoWorld,
  where: string,
  enough: (received: readonly ReceivedCallback[]) => boolean = (received) => received.length > 0,
  waitingFor = 'a callback',
): Promise<ReceivedCallback[]> {
  const payment = world.lastPayment;
  const receiver = world.harness.receiver;
  return world.awaitState(
    'callback-arrives',
    `${waitingFor} for ${payment.kind} ${payment.referenceId}`,
    async () => {
      const received = receiver.callbacksFor(payment.referenceId);
      if (enough(received)) return received;
      try {
        expectNoneElsewhere(world, payment.referenceId, where, payment.create, payment.product);
        // A callback to a URL no transaction gave (its path or query dropped, say) is a departure whichever it was.
        expectNoUnsolicitedCallbacks(world);
      } catch (failure) {
        // Sent elsewhere is a departure seen now: it ends the wait, which would otherwise take it for "not yet".
        throw Object.assign(failure as Error, { fatal: true });
      }
      return undefined;
    },
    { slow: Boolean(payment.party?.slow), timing: CALLBACK_TIMING, where, operation: payment.create, product: payment.product },
  );
}

/**
 * The partner learns the outcome from the callback alone, as a partner that does not poll does: it reads no status.
 * §3 does not name the final states, so the first callback that gives no reason and is no longer pending told a
 * success, whatever it calls it (endedFailed, as a read). §6 shows neither the callback's payload nor when it comes, so
 * that it told the outcome once the transaction was final is a premise the scenario assumes and never sees hold
 * (callback-told-outcome, observed): what the partner then does on it fails only in the mtn-sandbox profile.
 */
export async function toldOfSuccessByCallback(world: MomoWorld): Promise<void> {
  const payment = world.lastPayment;
  world.expect({ status: 202, what: `the ${payment.kind} to be told of by its callback is accepted` });
  const where = `callback of a ${payment.kind} — ${SECTION}: a callback arrives at ${payment.callbackUrl}`;
  const callbacks = await firstCallbacks(world, where, (received) => received.some(toldFinal), 'a callback that tells a final state');
  const record = callbacks.find(toldFinal)!.body as { status?: unknown; reason?: unknown };
  world.assume('callback-told-outcome');
  world.assume('payment-settled-as-asked');
  // What money it moves follows how it ended, as the callback told it.
  payment.endedAs = endedFailed(record) ? 'FAILED' : 'SUCCESSFUL';
}

/** Whether a callback tells a final state: a status that is no longer pending (§3 names none). */
function toldFinal(callback: ReceivedCallback): boolean {
  const status = (callback.body as { status?: unknown } | undefined)?.status;
  return typeof status === 'string' && status !== 'PENDING' && status !== 'CREATED';
}

/**
 * A callback the receiver answered 204 No Content was delivered (RFC 9110 §15.3: a success): none comes again while the
 * partner watches, up to five quiet times (within the slow deadline), longer than a retry after a failure takes to come.
 */
export async function expectNotToldAgain(world: MomoWorld): Promise<void> {
  const payment = world.lastPayment;
  const receiver = world.harness.receiver;
  const watchMs = Math.min(5 * world.config.callbackQuietMs, world.config.slowOutcomeTimeoutMs);
  await consistently(
    () => {
      const callbacks = receiver.callbacksFor(payment.referenceId);
      world.harness.conclude({
        header: `callback of a ${payment.kind} answered 204 — ${SECTION}: a callback arrives at ${payment.callbackUrl}`,
        operation: payment.create,
        product: payment.product,
        checks: ['callback-once'],
        findings: onceFindings(
          callbacks.length,
          watchMs,
          callbacks.map((c) => c.method),
        ),
      });
    },
    { durationMs: watchMs, intervalMs: world.config.pollIntervalMs },
  );
}

/**
 * The transaction's callback address refused the first delivery (500): a callback that comes again must carry the same
 * record as the status query, as a first one must (callback-record: observed, the live service's documented body). The
 * spec promises no retry (§6: "not shown"), so when none comes within the quiet time after the refused one, what a retry
 * carries is not tested (the premise callback-retried, a reading: logged, never failed, and the run is not made "could
 * not test" for it); the refused delivery is judged as any callback.
 */
export async function expectRetryCarriesRecord(world: MomoWorld): Promise<void> {
  const payment = world.lastPayment;
  const receiver = world.harness.receiver;
  const where = `callback of a ${payment.kind} told again — ${SECTION}: a callback arrives at ${payment.callbackUrl}, refused once`;
  const about = { operation: payment.create, product: payment.product };
  await world.awaitState(
    'callback-arrives',
    `a callback for ${payment.kind} ${payment.referenceId}`,
    async () => (receiver.callbacksFor(payment.referenceId).length > 0 ? true : undefined),
    { slow: Boolean(payment.party?.slow), timing: CALLBACK_TIMING, where, ...about },
  );
  // The retry, if the target makes one, comes after its own delay (not shown): waited for up to five quiet times,
  // within the slow deadline, so that one that comes just after the quiet time is not taken for none.
  const quiet = Math.min(5 * world.config.callbackQuietMs, world.config.slowOutcomeTimeoutMs);
  await eventually(async () => (receiver.callbacksFor(payment.referenceId).some((c) => c.answered === 200) ? true : undefined), {
    timeoutMs: quiet,
    intervalMs: world.config.pollIntervalMs,
    description: `a callback of ${payment.kind} ${payment.referenceId} told again`,
  }).catch((error: unknown) => {
    if (!(error instanceof DeadlineExceededError)) throw error;
  });
  const arrived = receiver.callbacksFor(payment.referenceId);
  await judgeEachCallback(world, payment, arrived, where);
  // No retry: that part is not tested (the premise callback-retried, a reading), and the run is not made "could not
  // test" for a target that conforms; the refused delivery was judged above, as any callback is.
  if (!arrived.some((c) => c.answered === 200)) {
    world.log(
      `Not tested, what a callback told again carries: ${arrived.length} callback(s) came, each refused, and none after within ${quiet} ms. ${PREMISES['callback-retried'].unheld}`,
    );
    return;
  }
  world.held('callback-retried');
}

/**
 * After the partner acted on a transaction that had ended (a delivery notification, a refund of it), every callback
 * that reached its address during the scenario, and for the quiet time after the last action, is its status record, as
 * its first callback must be (callback-record: observed): a notice of something else posted there tells the partner of
 * an outcome the transaction does not have.
 */
export async function expectEveryCallbackAtItsAddressIsItsRecord(world: MomoWorld): Promise<void> {
  const payment = world.payments.find((p) => p.callbackUrl !== undefined && p.create === 'requestToPay');
  if (!payment) throw new Error('No payment of this scenario gave a callback address.');
  const receiver = world.harness.receiver;
  await consistently(() => undefined, { durationMs: world.config.callbackQuietMs, intervalMs: world.config.pollIntervalMs });
  const arrived = receiver.callbacksFor(payment.referenceId);
  if (arrived.length === 0) {
    world.log(`No callback reached the ${payment.kind}'s address within the scenario: its arrival is judged by the callback scenarios.`);
    return;
  }
  const where = `callbacks at a ${payment.kind}'s address after the partner acted on it — ${SECTION}: each carries its status record`;
  await judgeEachCallback(world, payment, arrived, where);
}

/**
 * Each callback of a transaction, in order: its body is a status record, labelled as JSON, and the same, on what the
 * record names, as the final record the status query gives.
 */
async function judgeEachCallback(world: MomoWorld, payment: Payment, arrived: readonly ReceivedCallback[], where: string): Promise<void> {
  const schema = statusSchemaOf(payment);
  const { response, record } = await finalStatusRecord(world, payment);
  arrived.forEach((callback, index) => {
    const which = arrived.length > 1 ? `callback ${index + 1} of ${arrived.length}` : 'the callback';
    const body = callback.body ?? callback.rawBody;
    const about = { operation: payment.create, product: payment.product };
    world.harness.conclude({
      header: `${where}, ${which} carrying its status record`,
      ...about,
      checks: ['callback-record'],
      findings: callbackRecordFindings(schema, body, world.harness.run),
      received: quote(body),
    });
    world.harness.conclude({
      header: `${where}, ${which} labelled as JSON`,
      ...about,
      checks: ['callback-labelled-json'],
      findings: labelledJsonFindings(callback.contentType),
    });
    // Compared with the final record the status query gives (the callback comes once the transaction is final; the
    // query may lag a moment): a field one of them adds (records are open) is no difference.
    world.check(
      'callback-record',
      response,
      `${which} carries the same record as the status query`,
      sameAsStatusFindings(schema, callback.body, record),
    );
  });
}

/**
 * Payments of the partner, each to be told at one and the same callback address, as a partner with a single callback
 * endpoint is: the amounts in turn, from the party named.
 */
export async function requestPaymentsToOneAddress(world: MomoWorld, party: Party, amounts: readonly string[]): Promise<void> {
  const shared = randomUUID();
  const atShared: CallbackAddress = (w) => ownCallbackUrl(w, shared);
  for (const amount of amounts) {
    await requestPayment(world, party, amount, { callback: atShared });
    world.expect({ status: 202, what: 'a payment to be told at a callback address another payment gave too is accepted' });
  }
  world.sharedCallback = shared;
}

/**
 * §6: the service sends a callback to the address each request gave, so at least as many callbacks as payments arrive
 * at an address several gave (retries may add more: the spec does not say). Where callbacks name an externalId, as the
 * live service's status record does, each payment is named by one, and each callback carries its payment's record.
 */
export async function expectCallbackForEachPayment(world: MomoWorld): Promise<void> {
  const shared = world.sharedCallback;
  if (!shared) throw new Error('No payments in this scenario were told at one callback address.');
  const receiver = world.harness.receiver;
  const payments = world.payments.filter((p) => p.callbackUrl === receiver.urlFor(shared));
  const where = `callbacks of ${payments.length} payments — ${SECTION}: a callback arrives at the one address each gave`;
  const externalIdOf = (body: unknown) => (body as { externalId?: unknown } | undefined)?.externalId;
  // A callback may come more than once (retries are not shown): where callbacks name an externalId, the wait is for one
  // naming each payment, not for a number of them, which a payment's repeated callback could make up.
  const callbacks = await world.awaitState(
    'callback-arrives',
    `a callback for each of ${payments.length} payments at one address`,
    async () => {
      const received = receiver.callbacksFor(shared);
      const named = received.every((c) => typeof externalIdOf(c.body) === 'string');
      const unnamed = payments.filter((p) => !received.some((c) => externalIdOf(c.body) === p.body.externalId));
      if (received.length < payments.length || (named && unnamed.length > 0))
        throw new Error(`${received.length} callbacks${named ? `, none naming ${unnamed.map((p) => p.body.externalId).join(', ')}` : ''}`);
      return received;
    },
    { timing: CALLBACK_TIMING, where, operation: 'requestToPay', product: 'collection' },
  );
  if (!callbacks.every((c) => typeof externalIdOf(c.body) === 'string')) {
    world.log('Not every callback names an externalId (the spec shows no payload): only their number was judged.');
    return;
  }
  for (const payment of payments) {
    const own = callbacks.filter((c) => externalIdOf(c.body) === payment.body.externalId);
    const schema = statusSchemaOf(payment);
    const { response, record } = await finalStatusRecord(world, payment);
    const what = `the callbacks at the shared address for the ${payment.kind} of ${payment.body.amount} carry its record`;
    world.check(
      'callback-record',
      response,
      what,
      own.flatMap((c) => sameAsStatusFindings(schema, c.body, record)),
    );
  }
}

/** The creations a scenario asks for again under the same reference id, with another amount. */
const ASK_AGAIN: Partial<Record<OperationId, typeof requestPayment>> = { requestToPay: requestPayment, deposit };

/**
 * Asks for the scenario's last transaction again, under its reference id and with another amount, to be told at an
 * address of its own: one no other request gave, so that whatever arrives there is this request's.
 */
export async function askAgainToBeToldElsewhere(world: MomoWorld, amount: string): Promise<void> {
  const earlier = world.lastPayment;
  const create = ASK_AGAIN[earlier.create];
  if (!create || !earlier.party) throw new Error(`A ${earlier.kind} cannot be asked for again here: only a request to pay or a deposit.`);
  const address = randomUUID();
  const response = await create(world, earlier.party, amount, {
    referenceId: earlier.referenceId,
    callback: (w) => ownCallbackUrl(w, address),
  });
  world.askedAgain = { address, refused: response.status >= 400 && response.status < 500 };
}

/**
 * A request refused as a duplicate (§2.5, §7 rule 1) gave its callback address to nothing: once the first transaction
 * has been called back at its own address, and for the quiet time after, nothing arrives at the refused one's.
 */
export async function expectOnlyTheFirstAddressCalledBack(world: MomoWorld): Promise<void> {
  const asked = world.askedAgain;
  if (!asked) throw new Error('No transaction of this scenario was asked for again at an address of its own.');
  const first = reusedEarlier(world);
  const receiver = world.harness.receiver;
  const where = `callbacks of a ${first.kind} asked for again under its reference — ${SECTION}: only the address the ${first.kind} gave is called back`;
  await world.awaitState(
    'callback-arrives',
    `a callback for ${first.kind} ${first.referenceId}`,
    async () => (receiver.callbacksFor(first.referenceId).length > 0 ? true : undefined),
    { slow: Boolean(first.party?.slow), timing: CALLBACK_TIMING, where, operation: first.create, product: first.product },
  );
  // Accepted instead, the second request gave its address to a transaction: "refused as a duplicate" judged that.
  if (!asked.refused) return;
  await consistently(
    () =>
      world.harness.conclude({
        header: where,
        operation: first.create,
        product: first.product,
        checks: ['refusal-changes-nothing'],
        findings: refusedAddressCalledFindings(
          receiver.callbacksFor(asked.address).map((c) => c.body),
          first.body,
        ),
      }),
    { durationMs: world.config.callbackQuietMs, intervalMs: world.config.pollIntervalMs },
  );
}

/**
 * A creation refused (for its data, or its currency) gave its callback address to nothing: for the quiet time after the
 * refusal, nothing arrives there. Taken instead (202), it made a transaction, which may well be called back.
 */
export async function expectRefusedCreationSilent(world: MomoWorld): Promise<void> {
  const refused = world.lastPayment;
  const answer = refused.answer;
  if (!answer || wasCreated(answer) || !refused.callbackUrl) {
    world.log(
      `Not checked that nothing was called back: the ${refused.kind} was not refused (${answer?.status ?? 'no answer'}), or gave no address.`,
    );
    return;
  }
  const receiver = world.harness.receiver;
  await consistently(
    () =>
      world.harness.conclude({
        header: `callbacks of a refused ${refused.kind} — ${SECTION}: a refused request gave its address to nothing`,
        operation: refused.create,
        product: refused.product,
        checks: ['refusal-changes-nothing'],
        findings: refusedCreationCalledBackFindings(receiver.callbacksFor(refused.referenceId).map((c) => c.body)),
      }),
    { durationMs: world.config.callbackQuietMs, intervalMs: world.config.pollIntervalMs },
  );
}

/**
 * A consent request refused (its scope not offered, say) made no consent to tell of: nothing arrives at the address it
 * gave, within the quiet time (refusal-changes-nothing; the ping's body is no status record, so our reading).
 */
export async function expectRefusedConsentSilent(world: MomoWorld): Promise<void> {
  const key = world.refusedConsentCallbackKey;
  if (!key) {
    world.log('Not checked that nothing was called back: the consent request was not refused, or gave no address.');
    return;
  }
  const receiver = world.harness.receiver;
  await consistently(
    () =>
      world.harness.conclude({
        header: `callbacks of a refused consent request — ${SECTION}: a refused request gave its address to nothing`,
        operation: 'bcAuthorize',
        product: world.actor.product,
        checks: ['refusal-changes-nothing'],
        findings: refusedCreationCalledBackFindings(receiver.callbacksFor(key).map((c) => c.body)),
      }),
    { durationMs: world.config.callbackQuietMs, intervalMs: world.config.pollIntervalMs },
  );
}

/** A callback that did arrive, but not at the exact URL given (another path under it, a query): §6's own rule. */
function expectNoneElsewhere(world: MomoWorld, referenceId: string, where: string, operation: OperationId, product: Product): void {
  const id = referenceId.toLowerCase();
  const elsewhere = world.harness.receiver.unsolicited().filter((c) => c.path.toLowerCase().includes(id));
  world.harness.conclude({
    header: where,
    operation,
    product,
    checks: ['callback-solicited'],
    findings: solicitedFindings(
      elsewhere.map((c) => `${c.method} ${world.harness.redactor.text(c.path)}`),
      'the X-Callback-Url given, exactly',
    ),
  });
}

/** Nothing arrived that no transaction asked for: to an unknown id, or to a path that is not exactly a callback URL. */
export function expectNoUnsolicitedCallbacks(world: MomoWorld): void {
  const unsolicited = world.harness.receiver.unsolicited();
  world.harness.conclude({
    header: `callbacks — ${SECTION}: a callback goes only to the X-Callback-Url a transaction gave`,
    operation: world.payment?.create ?? 'requestToPay',
    product: world.payment?.product ?? 'collection',
    checks: ['callback-solicited'],
    findings: solicitedFindings(
      unsolicited.map((c) => world.harness.redactor.text(`${c.method} ${c.path} ${c.rawBody}`)),
      'none that no transaction asked for',
    ),
  });
}
