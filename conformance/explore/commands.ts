import fc from 'fast-check';
import { wasCreated, type ApiResponse, type PaymentBody } from '../../harness/client/momo-client.ts';
import { OPERATIONS } from '../../core/catalogue/operations.ts';
import { operation, statusQueryOf } from '../../core/catalogue/routes.ts';
import { namedPart } from '../../core/validation/schemas.ts';
import { CALLBACK_CHECKS, sameAsStatusFindings } from '../../harness/checks/callbacks.ts';
import type { Product } from '../../core/products.ts';
import { TEST_NUMBERS } from '../../core/test-numbers.ts';
import { INPUT_CASES, REFUSED_AS_INVALID, inputRuleIn, specCreations, type InputCase } from '../../harness/checks/inputs.ts';
import { KEY_REFUSED_AS_UNAUTHORIZED, KEY_REQUIRED } from '../../harness/checks/every-operation.ts';
import { REFUSALS } from '../../harness/checks/refusals.ts';
import {
  TRANSACTION_CHECKS,
  type StatusRecord,
  amountFindings,
  echoFindings,
  leftBehindFindings,
  refundToPayerFindings,
  unchangedFindings,
} from '../../harness/checks/transactions.ts';
import { picked, refundablePayments, type Creation, type ExplorationModel, type TrackedTransaction } from './model.ts';
import type { ExplorationSession } from './session.ts';
import { echoChecks, unchangedChecks } from './field-checks.ts';

/**
 * The commands of the exploration's transactions (fc.AsyncCommand): each makes its calls through the session, holds
 * the answers to the project's named checks with their sources, and changes the model only by what the target was
 * seen to do. `check` is the precondition: what the command needs the model to hold.
 */
export abstract class ExplorationCommand implements fc.AsyncCommand<ExplorationModel, ExplorationSession> {
  abstract check(model: Readonly<ExplorationModel>): boolean;
  protected abstract act(model: ExplorationModel, session: ExplorationSession): Promise<void>;
  abstract toString(): string;

  async run(model: ExplorationModel, session: ExplorationSession): Promise<void> {
    if (!session.beginCommand(this.toString())) return;
    try {
      await this.act(model, session);
    } catch (error) {
      // A departure goes on to fast-check, which shrinks the sequence; anything else is the session's to take in.
      if (!session.absorb(error)) throw error;
    }
  }
}

const CREATIONS = Object.fromEntries(specCreations().map((c) => [c.id, c])) as Record<Creation, ReturnType<typeof specCreations>[number]>;
const productOf = (kind: Creation): Product => CREATIONS[kind].product;
const labelOf = (kind: Creation): string => OPERATIONS[kind].label;

/** Customers whose wallets end a payment known ways (real-api-notes, observed): one approves, two fail. */
const CUSTOMERS = [TEST_NUMBERS.ordinary.msisdn, TEST_NUMBERS.failsAtOnce.msisdn, TEST_NUMBERS.rejects.msisdn] as const;
/** Amounts as strings (§2.2), one with a fraction so that rounding shows. */
const AMOUNTS = ['5', '12.5', '100'] as const;

/** A body of a request to pay or a deposit: its party by its MSISDN, an amount, and texts that show if changed. */
function bodyOf(kind: Creation, session: ExplorationSession, msisdn: string, amount: string): PaymentBody {
  const party = { partyIdType: 'MSISDN', partyId: msisdn };
  const texts = { externalId: `explore-${amount}`, payerMessage: `paid ${amount}`, payeeNote: `note ${amount}` };
  return { amount, currency: session.config.currency, ...texts, ...(kind === 'requestToPay' ? { payer: party } : { payee: party }) };
}

/** A refund of a request to pay: its texts and the payment it names. */
function refundBodyOf(payment: TrackedTransaction, amount: string): PaymentBody {
  const texts = { externalId: `refund-${amount}`, payerMessage: `refund ${amount}`, payeeNote: `refunded ${amount}` };
  return { amount, currency: payment.body.currency, ...texts, referenceIdToRefund: payment.referenceId };
}

/** A creation of the spec's under a product's access token. */
function create(
  session: ExplorationSession,
  kind: Creation,
  referenceId: string | undefined,
  body: PaymentBody,
  reused = false,
  callback = false,
) {
  const product = productOf(kind);
  return session.call({
    operation: kind,
    product,
    auth: { bearer: product },
    ...(referenceId !== undefined ? { referenceId } : {}),
    body,
    ...(reused ? { reusesReference: true as const } : {}),
    ...(callback ? { callback: true as const } : {}),
  });
}

/** A transaction's status record, read by the API user that created it. */
function readStatus(session: ExplorationSession, kind: Creation, referenceId: string): Promise<ApiResponse> {
  const product = productOf(kind);
  return session.call({ operation: statusQueryOf(kind), product, auth: { bearer: product }, params: { referenceId } });
}

/**
 * A request to pay or a deposit with a valid body, asking for a callback or not: accepted (202, §4.2 #2, §4.3 #10), and
 * tracked once it is.
 */
export class CreateTransaction extends ExplorationCommand {
  constructor(
    private readonly kind: 'requestToPay' | 'deposit',
    private readonly msisdn: string,
    private readonly amount: string,
    private readonly form: InputCase | undefined,
    private readonly callback = false,
  ) {
    super();
  }
  check = () => true;
  toString = () =>
    `${labelOf(this.kind)} of ${this.amount} ${this.form ? `with ${this.form.phrase}` : `for ${this.msisdn}`}${this.callback ? ', to be called back' : ''}`;

  protected async act(model: ExplorationModel, session: ExplorationSession): Promise<void> {
    const referenceId = session.newId('r');
    const body = {
      ...bodyOf(this.kind, session, this.msisdn, this.amount),
      ...(this.form?.body?.(session.config.currency) ?? {}),
    } as PaymentBody;
    const response = await create(session, this.kind, referenceId, body, false, this.callback);
    session.expect(response, {
      status: 202,
      ...(this.form ? { source: inputRuleIn(this.form, session.run.profile) } : {}),
      what: `a ${labelOf(this.kind)} is accepted`,
    });
    if (!wasCreated(response)) return;
    model.transactions.push({ kind: this.kind, referenceId, body, ...(this.callback ? { callback: true as const } : {}) });
    session.created.transactions += 1;
  }
}

/** An invalid input the exploration sends: an input case of the catalogue's creations, or no subscription key at all. */
export type InvalidInput = InputCase | { creation: Creation; phrase: 'no subscription key'; kind: 'missing-key' };

/** Every status a refusal can have, but a gateway's 502–504 (the target unavailable, not refusing). */
const ANY_REFUSAL = Array.from({ length: 200 }, (_, i) => 400 + i).filter((s) => s < 502 || s > 504);

/**
 * A creation with one input wrong: refused (400 for invalid data, any refusal the operation documents for a header
 * left out, any refusal for no subscription key), and, once refused, nothing left behind under its reference id.
 */
export class CreateWithInvalidInput extends ExplorationCommand {
  constructor(
    private readonly input: InvalidInput,
    private readonly pick: number,
  ) {
    super();
  }
  check = (model: Readonly<ExplorationModel>) => this.input.creation !== 'refund' || refundablePayments(model).length > 0;
  toString = () => `${labelOf(this.input.creation as Creation)} with ${this.input.phrase}`;

  protected async act(model: ExplorationModel, session: ExplorationSession): Promise<void> {
    const kind = this.input.creation as Creation;
    const input = this.input;
    const base =
      kind === 'refund' ? refundBodyOf(picked(refundablePayments(model), this.pick), '1') : bodyOf(kind, session, CUSTOMERS[0], '5');
    const body = { ...base, ...('body' in input && input.body ? input.body(session.config.currency) : {}) } as PaymentBody;
    const referenceId = this.referenceIdOf(session);
    const product = productOf(kind);
    const response = await session.call({
      operation: kind,
      product,
      auth: { bearer: product },
      ...(referenceId !== undefined ? { referenceId } : {}),
      ...(input.kind === 'missing-key' ? { key: 'none' as const } : {}),
      ...('omit' in input && input.omit === 'x-target-environment' ? { withoutTargetEnvironment: true as const } : {}),
      body,
    });
    this.expectRefused(session, response);
    // Only a refusal is followed up: an answer that took the input (a warning where the rule is the live service's) made something.
    if (response.status >= 400 && referenceId !== undefined && /^[0-9a-f]{8}-/i.test(referenceId))
      await expectNothingLeftBehind(session, kind, referenceId);
  }

  /** The reference id the case sends: its own (not a UUID, another version), none, or a new UUID v4. */
  private referenceIdOf(session: ExplorationSession): string | undefined {
    const input = this.input;
    if ('omit' in input && input.omit === 'x-reference-id') return undefined;
    if (!('referenceId' in input) || input.referenceId === undefined) return session.newId('r');
    return typeof input.referenceId === 'function' ? session.generated(input.referenceId(), 'v') : input.referenceId;
  }

  private expectRefused(session: ExplorationSession, response: ApiResponse): void {
    const input = this.input;
    const what = `a ${labelOf(input.creation as Creation)} with ${input.phrase}`;
    if (input.kind === 'missing-key') {
      session.expect(response, { status: ANY_REFUSAL, source: KEY_REQUIRED, what: `${what} is not served` });
      session.expect(response, { status: 401, source: KEY_REFUSED_AS_UNAUTHORIZED, what: `${what} is unauthorized` });
    } else if (input.kind === 'missing-header') {
      const documented = Object.keys(OPERATIONS[input.creation].responses)
        .map(Number)
        .filter((status) => status >= 400 && status !== 503);
      session.expect(response, { status: documented, source: inputRuleIn(input, session.run.profile), what: `${what} is not served` });
      session.expect(response, { status: 400, source: REFUSED_AS_INVALID, what: `${what} is refused as invalid data` });
    } else {
      session.expect(response, { status: 400, source: inputRuleIn(input, session.run.profile), what: `${what} is refused as invalid` });
    }
  }
}

/** A refused creation left nothing behind: its reference id reads as no transaction (§2.5, §7 rule 1). */
async function expectNothingLeftBehind(session: ExplorationSession, kind: Creation, referenceId: string): Promise<void> {
  const read = await readStatus(session, kind, referenceId);
  const what = 'a refused creation leaves nothing behind';
  const weight = session.weightOf(TRANSACTION_CHECKS['refusal-changes-nothing'].source);
  session.check('refusal-changes-nothing', read, what, leftBehindFindings(read.status), [
    { kind: 'not-status', statuses: [200], weight, why: what },
  ]);
}

/** The same kind of creation again under a tracked transaction's reference id: 409, and the first unchanged (§2.5, §7 rule 1). */
export class CreateUnderUsedReference extends ExplorationCommand {
  constructor(
    private readonly pick: number,
    private readonly amount: string,
  ) {
    super();
  }
  check = (model: Readonly<ExplorationModel>) => model.transactions.length > 0;
  toString = () => `the same kind of creation again, of ${this.amount}, under the reference id of transaction #${this.pick}`;

  protected async act(model: ExplorationModel, session: ExplorationSession): Promise<void> {
    const earlier = picked(model.transactions, this.pick);
    // Other data under the same id: a refund names the same payment, so that only its id is wrong.
    const body =
      earlier.kind === 'refund' ? { ...earlier.body, amount: this.amount } : bodyOf(earlier.kind, session, CUSTOMERS[0], this.amount);
    const response = await create(session, earlier.kind, earlier.referenceId, { ...body, externalId: `again-${this.amount}` }, true);
    session.expect(response, { status: 409, code: 'RESOURCE_ALREADY_EXIST', what: 'a reused reference id is refused' });
    const read = await readStatus(session, earlier.kind, earlier.referenceId);
    session.expect(read, { status: 200, what: `the earlier ${labelOf(earlier.kind)} still reads back` });
    if (read.status !== 200) return;
    const what = `after a refused reuse of its reference id, the earlier ${labelOf(earlier.kind)} is unchanged`;
    session.check(
      'refusal-changes-nothing',
      read,
      what,
      unchangedFindings(read.json as object, earlier.body),
      unchangedChecks(session, earlier.body, what),
    );
  }
}

/** A tracked transaction's status: 200, its record as sent (§2.2–§2.5), a refund's payee the payer it refunds (§2.4). */
export class ReadOwnStatus extends ExplorationCommand {
  constructor(private readonly pick: number) {
    super();
  }
  check = (model: Readonly<ExplorationModel>) => model.transactions.length > 0;
  toString = () => `read the status of transaction #${this.pick}`;

  protected async act(model: ExplorationModel, session: ExplorationSession): Promise<void> {
    await readBack(session, picked(model.transactions, this.pick));
  }
}

/** Reads a tracked transaction, holds its record to what was sent, and notes the status it is in. */
async function readBack(session: ExplorationSession, transaction: TrackedTransaction): Promise<void> {
  const response = await readStatus(session, transaction.kind, transaction.referenceId);
  session.expect(response, { status: 200, what: `a ${labelOf(transaction.kind)} the partner created reads back` });
  if (response.status !== 200) return;
  const record = response.json as StatusRecord;
  const { amount, payer, payee, externalId, payerMessage, payeeNote } = transaction.body;
  const sent = { payer, payee, externalId, payerMessage, payeeNote };
  const what = `the ${labelOf(transaction.kind)} reads back as it was sent`;
  const findings = [...amountFindings(record, amount), ...echoFindings(record, sent, session.run.profile)];
  session.check('record-echoes-request', response, what, findings, echoChecks(session, { amount, ...sent }, what));
  if (transaction.payerRefunded) {
    const refundWhat = 'a refund goes to the payer of the payment it refunds';
    const refundChecks = echoChecks(
      session,
      { payee: transaction.payerRefunded },
      refundWhat,
      TRANSACTION_CHECKS['refund-to-payer'].source,
    );
    session.check(
      'refund-to-payer',
      response,
      refundWhat,
      refundToPayerFindings(record, transaction.payerRefunded, session.run.profile),
      refundChecks,
    );
  }
  if (typeof record.status === 'string') transaction.status = record.status;
}

/** How long a callback of a transaction read final is waited for: one that comes later is not judged (§6 gives no time). */
const CALLBACK_WAIT_MS = 2000;

/**
 * The callbacks of a transaction that asked for them, once its status query reads it final: every one that came, in
 * order, carries the record the status query gives (the live service's, documented: callback-record, observed).
 */
export class HearCallbacks extends ExplorationCommand {
  constructor(private readonly pick: number) {
    super();
  }
  check = (model: Readonly<ExplorationModel>) => model.transactions.some((t) => t.callback);
  toString = () => `hear the callbacks of transaction #${this.pick} of those called back`;

  protected async act(model: ExplorationModel, session: ExplorationSession): Promise<void> {
    const transaction = picked(
      model.transactions.filter((t) => t.callback),
      this.pick,
    );
    const response = await readStatus(session, transaction.kind, transaction.referenceId);
    session.expect(response, { status: 200, what: `a ${labelOf(transaction.kind)} the partner created reads back` });
    const record = response.json as StatusRecord | undefined;
    if (response.status !== 200 || (record?.status !== 'SUCCESSFUL' && record?.status !== 'FAILED')) return;
    transaction.status = record.status;
    const callbacks = await session.callbacksOf(transaction.referenceId, CALLBACK_WAIT_MS);
    const schema = statusSchemaOf(transaction.kind);
    const what = `every callback of the ${labelOf(transaction.kind)} carries the record its status query gives`;
    const findings = callbacks.flatMap((callback, index) =>
      sameAsStatusFindings(schema, callback.body, record).map((f) => ({
        ...f,
        field: `callback ${index + 1} of ${callbacks.length} ${f.field}`,
      })),
    );
    const fields = [record, ...callbacks.map((c) => c.body)].flatMap((body) =>
      Object.keys((namedPart(schema, body) as object | undefined) ?? {}),
    );
    session.check('callback-record', response, what, findings, [
      {
        kind: 'callbacks',
        referenceId: transaction.referenceId,
        fields: [...new Set(fields)],
        when: [200],
        weight: session.weightOf(CALLBACK_CHECKS['callback-record'].source),
        why: what,
      },
    ]);
  }
}

/** The schema of a creation's status record, as the catalogue names it. */
function statusSchemaOf(kind: Creation): string {
  const body = operation(statusQueryOf(kind)).responses[200]?.body;
  if (typeof body !== 'string') throw new Error(`The status query of ${kind} names no single record schema in the catalogue.`);
  return body;
}

/** A status read under a reference id nothing was made under: 404 RESOURCE_NOT_FOUND, an observation of the live service. */
export class ReadUnknownStatus extends ExplorationCommand {
  constructor(private readonly kind: Creation) {
    super();
  }
  check = () => true;
  toString = () => `read the status of a ${labelOf(this.kind)} nothing was made under`;

  protected async act(_model: ExplorationModel, session: ExplorationSession): Promise<void> {
    const response = await readStatus(session, this.kind, session.newId('n'));
    session.expect(response, {
      status: 404,
      code: 'RESOURCE_NOT_FOUND',
      source: REFUSALS['unknown-reference-read'],
      what: 'an unknown reference id is not found',
    });
  }
}

/**
 * A refund of a request to pay seen SUCCESSFUL, by the run's disbursement API user: accepted (202), on the premise that
 * another API user may refund it (who may refund is not said: a reading in the spec profile), and tracked once it is.
 */
export class RefundSettledPayment extends ExplorationCommand {
  constructor(
    private readonly pick: number,
    private readonly whole: boolean,
  ) {
    super();
  }
  check = (model: Readonly<ExplorationModel>) => unrefundedPayments(model).length > 0;
  toString = () => `refund ${this.whole ? 'all' : '1'} of payment #${this.pick} once it reads SUCCESSFUL`;

  protected async act(model: ExplorationModel, session: ExplorationSession): Promise<void> {
    const payment = picked(unrefundedPayments(model), this.pick);
    // Only a payment seen settled is refunded: its status is read first when this sequence has not seen it so.
    if (payment.status !== 'SUCCESSFUL') await readBack(session, payment);
    if (payment.status !== 'SUCCESSFUL') return;
    const referenceId = session.newId('r');
    const body = refundBodyOf(payment, this.whole ? payment.body.amount : '1');
    const response = await create(session, 'refund', referenceId, body);
    session.expect(response, { status: 202, what: 'a refund of a settled payment is accepted', premises: ['refund-by-another-api-user'] });
    if (!wasCreated(response)) return;
    payment.refunded = true;
    model.transactions.push({ kind: 'refund', referenceId, body, ...(payment.body.payer ? { payerRefunded: payment.body.payer } : {}) });
    session.created.transactions += 1;
  }
}

/**
 * How soon after an enqueued notification another is sent "right after" it: §8 says repeated attempts give 429 after a
 * successful one, and leaves "recently" (§4.2 #3) unquantified; a second later is the shortest while we take it to hold.
 */
const REPEAT_AT_ONCE_MS = 1000;

/**
 * A delivery notification of a tracked request to pay, its status read first: enqueued (200) once it reads SUCCESSFUL
 * (§4.2 #3); refused as not completed (409 TRANSACTION_NOT_COMPLETED, §3, §7) when it reads FAILED; any of these while
 * it reads otherwise, as it may have succeeded meanwhile; and, right after one enqueued, refused as too many attempts
 * (429, §8). Each may be 410 instead: the window's length is not shown (§8), nor which refusal comes first.
 */
export class NotifyDelivery extends ExplorationCommand {
  constructor(private readonly pick: number) {
    super();
  }
  check = (model: Readonly<ExplorationModel>) => model.transactions.some((t) => t.kind === 'requestToPay');
  toString = () => `notify delivery of payment #${this.pick}`;

  protected async act(model: ExplorationModel, session: ExplorationSession): Promise<void> {
    const payment = picked(
      model.transactions.filter((t) => t.kind === 'requestToPay'),
      this.pick,
    );
    const repeatedAtOnce = payment.notifiedAt !== undefined && Date.now() - payment.notifiedAt < REPEAT_AT_ONCE_MS;
    if (!repeatedAtOnce) await readBack(session, payment);
    const response = await session.call({
      operation: 'deliveryNotification',
      product: 'collection',
      auth: { bearer: 'collection' },
      params: { referenceId: payment.referenceId },
      body: { notificationMessage: `delivered ${payment.body.amount}` },
    });
    if (repeatedAtOnce)
      session.expect(response, { status: [429, 410], what: 'a delivery notification right after an enqueued one is refused' });
    else if (payment.notifiedAt !== undefined)
      // A while after: whether "recently" (§4.2 #3) still holds, or the window is over, is the target's.
      session.expect(response, { status: [200, 410, 429], what: 'a delivery notification of a payment notified before' });
    else if (payment.status === 'SUCCESSFUL')
      session.expect(response, { status: [200, 410], what: 'a delivery notification of a successful payment is enqueued' });
    else if (payment.status !== 'FAILED')
      // PENDING, unread, or a status by another name than the live service's: it may have succeeded meanwhile.
      session.expect(response, { status: [200, 409, 410], what: 'a delivery notification of a payment not seen to end' });
    else if (response.status === 410)
      session.expect(response, { status: [409, 410], what: 'a delivery notification of a payment that did not succeed is refused' });
    else
      session.expect(response, {
        status: 409,
        code: 'TRANSACTION_NOT_COMPLETED',
        what: 'a delivery notification of a payment that did not succeed is refused as not completed',
      });
    if (response.status === 200) payment.notifiedAt = Date.now();
  }
}

/** Requests to pay this sequence has not refunded, that do not read FAILED: what a refund may be tried on. */
function unrefundedPayments(model: Readonly<ExplorationModel>): TrackedTransaction[] {
  return model.transactions.filter((t) => t.kind === 'requestToPay' && !t.refunded && t.status !== 'FAILED');
}

/** The input cases of the catalogue's creations that are to be refused, and no subscription key, for each creation. */
export function invalidInputs(strict: boolean): InvalidInput[] {
  const cases: InvalidInput[] = INPUT_CASES.filter((c) => (c.kind === 'invalid' || c.kind === 'missing-header') && (strict || !c.strict));
  return [
    ...cases,
    ...(Object.keys(CREATIONS) as Creation[]).map((creation) => ({
      creation,
      phrase: 'no subscription key' as const,
      kind: 'missing-key' as const,
    })),
  ];
}

/** The arbitraries of the transaction commands, for fc.commands. */
export function transactionCommands(strict: boolean): fc.Arbitrary<ExplorationCommand>[] {
  const pick = fc.nat({ max: 15 });
  const amount = fc.constantFrom(...AMOUNTS);
  // Valid forms of the body: a form of the reference id is the inputs feature's (exploration names its own ids).
  const validForms = INPUT_CASES.filter((c) => c.kind === 'valid' && c.creation !== 'refund' && !c.referenceId);
  const plain = fc.tuple(fc.constantFrom('requestToPay' as const, 'deposit' as const), fc.constantFrom(...CUSTOMERS), amount, fc.boolean());
  return [
    plain.map(([kind, msisdn, a, callback]) => new CreateTransaction(kind, msisdn, a, undefined, callback)),
    fc
      .tuple(fc.constantFrom(...validForms), amount)
      .map(([form, a]) => new CreateTransaction(form.creation as 'requestToPay' | 'deposit', CUSTOMERS[0], a, form)),
    fc.tuple(fc.constantFrom(...invalidInputs(strict)), pick).map(([input, p]) => new CreateWithInvalidInput(input, p)),
    fc.tuple(pick, fc.constantFrom('3', '7.25')).map(([p, a]) => new CreateUnderUsedReference(p, a)),
    pick.map((p) => new ReadOwnStatus(p)),
    fc.constantFrom(...(Object.keys(CREATIONS) as Creation[])).map((kind) => new ReadUnknownStatus(kind)),
    fc.tuple(pick, fc.boolean()).map(([p, whole]) => new RefundSettledPayment(p, whole)),
    pick.map((p) => new HearCallbacks(p)),
    pick.map((p) => new NotifyDelivery(p)),
  ];
}
