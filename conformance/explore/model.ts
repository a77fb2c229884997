import type { PaymentBody } from '../../harness/client/momo-client.ts';
import type { ApiUser } from './session.ts';

/**
 * What the exploration knows of the target, and nothing more: the transactions it created in this sequence and the
 * API users it registered, each with what was sent. The spec makes the rest definite: a created transaction reads
 * back as sent (§2.2–§2.5), its reference id is not taken again (§2.5, §7 rule 1), a final status stays final (§3), an
 * API user's id is not registered twice (§4.5 #14) and its key gets it a token (§4.2 #1, §5 rule 2).
 */

/** The spec's creations the exploration makes. */
export type Creation = 'requestToPay' | 'deposit' | 'refund';

export interface TrackedTransaction {
  kind: Creation;
  referenceId: string;
  /** As sent: what its record must echo, and what a refused duplicate must leave as it was. */
  body: PaymentBody;
  /** The status it was last read in, once read: a refund needs a request to pay seen SUCCESSFUL. */
  status?: string;
  /** A request to pay this sequence refunded: refunded once, so that no rule about refunding more is assumed. */
  refunded?: true;
  /** A refund: the payer of the request to pay it refunds, whom its record must name as payee. */
  payerRefunded?: { partyIdType: string; partyId: string };
  /** It gave X-Callback-Url on the exploration's receiver: every callback that comes must be its status record. */
  callback?: true;
  /** A request to pay whose delivery notification was enqueued (200), and when: §8 refuses another soon after (429). */
  notifiedAt?: number;
}

export interface TrackedUser extends ApiUser {
  /** The host it was registered with, which its record must give back. */
  callbackHost: string;
}

export interface ExplorationModel {
  transactions: TrackedTransaction[];
  users: TrackedUser[];
}

export function emptyModel(): ExplorationModel {
  return { transactions: [], users: [] };
}

/** Requests to pay that read SUCCESSFUL and were not refunded yet: what a refund may name. */
export function refundablePayments(model: Readonly<ExplorationModel>): TrackedTransaction[] {
  return model.transactions.filter((t) => t.kind === 'requestToPay' && t.status === 'SUCCESSFUL' && !t.refunded);
}

/** One of `items` by a generated index, whatever their number (the commands are generated before the model exists). */
export function picked<T>(items: readonly T[], index: number): T {
  const item = items[index % items.length];
  if (item === undefined) throw new Error('picked() of no item: a command ran without its precondition');
  return item;
}
