import type { FastifyBaseLogger } from 'fastify';
import type { StatusRecords } from '../../core/catalogue/status-records.generated.ts';
import type { Clock } from './clock.ts';
import type { CallbackSink } from './callbacks.ts';
import type { Ledger } from './ledger.ts';
import { randomInt } from 'node:crypto';
import { SUCCESS_AT_ONCE, type Outcome, type OutcomeTable } from './outcomes.ts';
import type { SandboxSettings } from './settings.ts';
import { PAYER_KINDS, type SandboxState, type Transaction } from './state.ts';

/**
 * A transaction's status record, as its status query answers it and its callback carries it: one of the records of
 * schemas/ (core/catalogue/status-records.generated.ts). Its reason is the bare code, as the live sandbox sends it,
 * and any code: an outcome of --outcomes may name one the schema does not list (sandbox/domain/outcomes.ts).
 */
export type StatusRecord = { [Schema in keyof StatusRecords]: WithReasonAsSent<StatusRecords[Schema]> }[keyof StatusRecords];

type WithReasonAsSent<Fields> = Omit<Fields, 'reason'> & { reason?: string };

/** A record of any transaction as it is built, field by field: the payer's or the payee's. */
type StatusRecordDraft = Partial<WithReasonAsSent<StatusRecords['request-to-pay-status'] & StatusRecords['deposit-status']>>;

/** What the routes ask of payments once a creation is accepted. */
export interface Payments {
  /**
   * Starts a stored, PENDING transaction on its way, as of `now`: the moment it was created, which the caller
   * gives when it has read the clock already for this request, and a restart gives to resume one kept in its data
   * directory (its delays then count from then). Immediate outcomes are applied before the 202 is sent.
   */
  begin(tx: Transaction, now?: number): void;
  statusRecord(tx: Transaction): StatusRecord;
}

/**
 * The life of a payment after its creation was accepted: its outcome from the test-number table,
 * the pending timeout, the balance it moves, and the callback it sends when it reaches a final state.
 */
export class PaymentEngine implements Payments {
  constructor(
    private readonly state: SandboxState,
    private readonly ledger: Ledger,
    private readonly outcomes: OutcomeTable,
    private readonly settings: SandboxSettings,
    private readonly clock: Clock,
    private readonly callbacks: CallbackSink,
    private readonly log: FastifyBaseLogger,
  ) {}

  begin(tx: Transaction, now = this.clock.now()): void {
    // A transaction that cannot be carried out fails on its own terms, whatever the payer's test number says.
    // Only a refund has a refusal of its own; asked of every payment, the call cost more than the whole check.
    const refusal = tx.unpayable ?? (tx.kind === 'refund' ? this.refundRefusal(tx) : undefined);
    if (refusal) {
      this.settle(tx, { status: 'FAILED', reason: refusal }, now);
      return;
    }
    const outcome = this.outcomeFor(tx);
    if (outcome.status === 'PENDING') {
      this.later(tx, now + this.settings.pendingTimeoutMs, { status: 'FAILED', reason: 'EXPIRED' });
      return;
    }
    const delay = outcome.delayMs ?? 0;
    if (delay === 0) {
      this.settle(tx, outcome, now);
    } else if (delay >= this.settings.pendingTimeoutMs) {
      this.later(tx, now + this.settings.pendingTimeoutMs, { status: 'FAILED', reason: 'EXPIRED' });
    } else {
      this.later(tx, now + delay, outcome);
    }
  }

  /** The record's fields in the order the live sandbox sends them, and only those the transaction has. */
  statusRecord(tx: Transaction): StatusRecord {
    const record: StatusRecordDraft = {};
    if (tx.financialTransactionId !== undefined) record.financialTransactionId = tx.financialTransactionId;
    if (tx.externalId !== undefined) record.externalId = tx.externalId;
    if (tx.amount !== undefined) record.amount = tx.amount;
    record.currency = tx.currency;
    if (tx.party) record[PAYER_KINDS.has(tx.kind) ? 'payer' : 'payee'] = tx.party;
    if (tx.payerMessage !== undefined) record.payerMessage = tx.payerMessage;
    if (tx.payeeNote !== undefined) record.payeeNote = tx.payeeNote;
    record.status = tx.status;
    // The bare code, as the live sandbox sends it, in both profiles: typed clients decode reason as a string.
    if (tx.status === 'FAILED' && tx.reason !== undefined) record.reason = tx.reason;
    // Built field by field, to keep that order, so its type is checked field by field: currency and status, the
    // fields every record requires, are set above whatever the transaction.
    return record as StatusRecord;
  }

  private outcomeFor(tx: Transaction): Outcome {
    if (tx.party?.partyIdType !== 'MSISDN') return SUCCESS_AT_ONCE;
    const { partyId } = tx.party;
    // A test number may be written with its international "+".
    return this.outcomes.get(partyId.startsWith('+') ? partyId.slice(1) : partyId) ?? SUCCESS_AT_ONCE;
  }

  /** Settles the transaction at `dueAt`, at once when that has passed (a transaction resumed after a restart). */
  private later(tx: Transaction, dueAt: number, outcome: Outcome): void {
    tx.timer = this.clock.setTimer(dueAt - this.clock.now(), () => {
      tx.timer = undefined;
      // A record forgotten by retention is no longer anyone's to settle.
      if (this.state.transactions[tx.kind].get(tx.referenceId) !== tx) return;
      this.settle(tx, outcome);
      this.state.journal?.transaction(tx);
    });
  }

  private settle(tx: Transaction, outcome: Outcome, now = this.clock.now()): void {
    if (tx.status !== 'PENDING') return;
    const refusal = outcome.status === 'SUCCESSFUL' ? this.checkFunds(tx) : undefined;
    if (outcome.status === 'FAILED' || refusal) {
      tx.status = 'FAILED';
      tx.reason = refusal ?? outcome.reason ?? 'INTERNAL_PROCESSING_ERROR';
    } else {
      tx.status = 'SUCCESSFUL';
      tx.financialTransactionId = financialTransactionId();
      this.moveMoney(tx);
    }
    tx.completedAt = now;
    this.log.debug({ kind: tx.kind, referenceId: tx.referenceId, status: tx.status, reason: tx.reason }, 'transaction settled');
    if (tx.callbackUrl)
      this.callbacks.send(tx.callbackUrl, tx.callbackMethod, this.statusRecord(tx), { kind: tx.kind, referenceId: tx.referenceId });
  }

  /** Why a payment that would succeed must fail instead, or undefined when it may succeed. */
  private checkFunds(tx: Transaction): string | undefined {
    if (PAYER_KINDS.has(tx.kind)) return undefined;
    // Checked again at settlement: another refund may have used up the rest while this one was pending.
    const refusal = this.refundRefusal(tx);
    if (refusal) return refusal;
    return this.ledger.covers(tx.apiUserId, tx.product, tx.currency, tx.amountMinor) ? undefined : 'NOT_ENOUGH_FUNDS';
  }

  /** Why a refund cannot return money to the payer of the request to pay it names (see READINGS in core/profiles.ts). */
  private refundRefusal(tx: Transaction): string | undefined {
    if (tx.kind !== 'refund') return undefined;
    const original = this.state.transactions.requesttopay.get(tx.referenceIdToRefund ?? '');
    if (!original || original.targetEnvironment !== tx.targetEnvironment) return 'RESOURCE_NOT_FOUND';
    if (original.status !== 'SUCCESSFUL') return 'NOT_ALLOWED';
    if (original.currency !== tx.currency) return 'INVALID_CURRENCY';
    if (original.refundedMinor + tx.amountMinor > original.amountMinor) return 'NOT_ALLOWED';
    return undefined;
  }

  private moveMoney(tx: Transaction): void {
    if (PAYER_KINDS.has(tx.kind)) {
      this.ledger.credit(tx.apiUserId, tx.product, tx.currency, tx.amountMinor);
      return;
    }
    this.ledger.debit(tx.apiUserId, tx.product, tx.currency, tx.amountMinor);
    if (tx.kind === 'refund') {
      const original = this.state.transactions.requesttopay.get(tx.referenceIdToRefund ?? '');
      if (original) original.refundedMinor += tx.amountMinor;
    }
  }
}

/** A financial transaction id as the live sandbox gives one: ten digits, the first not 0, drawn at random. */
function financialTransactionId(): string {
  return String(randomInt(1_000_000_000, 10_000_000_000));
}
