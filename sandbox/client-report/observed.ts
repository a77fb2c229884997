import type { OperationId, TransactionStore } from '../../core/catalogue/operations.ts';
import { fromMinor, toMinor } from '../../core/money.ts';
import type { Product } from '../../core/products.ts';
import type { SecretKind } from '../../core/secrets/redact.ts';
import { validatorFor } from '../../core/validation/schemas.ts';
import type { ChaosApplied } from '../domain/chaos-applied.ts';
import type { CallbackAttempt } from '../domain/callbacks.ts';
import type { Transaction, TransactionStatus } from '../domain/state.ts';

/**
 * What the client report is told: each exchange a client had with the sandbox, each callback attempt to a
 * client's listener, and each chaos condition applied to a client. The plugin (plugin.ts) makes these from
 * Fastify's hooks and the sandbox's state; the rules (rules.ts) judge them; nothing here is written into a
 * report as it is, because an exchange still carries what the client sent, secrets included (redaction.ts
 * makes the one exchange a finding keeps safe).
 */

/**
 * Who a report is about: an API user, or, before it has one (provisioning) or when it sends no credential the
 * sandbox knows, the subscription key it sent, named by its product and a short hash, never by the key.
 */
export interface Principal {
  id: string;
  kind: 'api-user' | 'subscription-key' | 'no-key';
  /** How the report names it, e.g. "API user 5f7b…" or "collection key #1a2b3c4d". */
  label: string;
  product?: Product;
}

/** A secret an exchange may carry: the sandbox's subscription keys, and what the client sent as its credentials. */
export interface KnownSecret {
  value: string;
  kind: SecretKind;
}

/** A transaction (or API user) that an exchange names by its reference id, as the sandbox holds it after the answer. */
export interface StoredRecord {
  /** What makes two creations the same payment: kind, amount, currency, party (or the refunded payment) and externalId. */
  fingerprint: string;
  status?: TransactionStatus;
}

/** One request of a client and what it got, as the sandbox saw it. */
export interface ObservedExchange {
  /** Fastify's request id, which a ChaosApplied event names. */
  requestId: string;
  /** When it arrived, by the sandbox's clock. */
  at: number;
  principal: Principal;
  method: string;
  /** The path and query as sent: secrets may be in it. */
  url: string;
  /** The catalogue operation it reached; undefined for a path the sandbox serves no operation at. */
  operation?: OperationId;
  product?: Product;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The secrets this exchange may carry, in any encoding: what the report masks, and what must not be in a URL. */
  secrets: readonly KnownSecret[];
  params: Readonly<Record<string, string>>;
  /** The body as the parsers read it, before validation; undefined when none came or it could not be read. */
  body?: unknown;
  /** The status the sandbox answered; undefined when the connection closed before the answer was sent. */
  status?: number;
  /** The answer's body, kept for errors and the answers the rules read (bc-authorize); at most 64 KiB. */
  responseBody?: string;
  /** The WWW-Authenticate challenge of a 401. */
  challenge?: string;
  /** The X-Reference-Id of a creation, or the referenceId of the path that names a transaction or an API user. */
  referenceId?: string;
  /** For a creation: the fingerprint of what it asks for (see StoredRecord). */
  fingerprint?: string;
  /** What the sandbox holds under referenceId in the operation's store, after the answer. */
  stored?: StoredRecord;
  /** For an access token the sandbox gave: when it expires. */
  tokenExpiresAt?: number;
  /** The chaos conditions applied to this request, if any. */
  chaos?: readonly ChaosApplied[];
}

/** A callback attempt to a client's listener, with the client it belongs to. */
export interface ObservedCallback {
  at: number;
  principal: Principal;
  secrets: readonly KnownSecret[];
  attempt: CallbackAttempt;
  /** The sandbox's --callback-timeout-ms, against which "slow" is measured. */
  timeoutMs: number;
}

/** A chaos condition applied to a client, with what the sandbox knows of the request and the record it concerns. */
export interface ObservedChaos {
  principal: Principal;
  applied: ChaosApplied;
  /** Whether its request is still being answered: then the exchange, when it ends, says what the client got. */
  inFlight: boolean;
  store?: TransactionStore;
  stored?: StoredRecord;
}

const payableAmount = validatorFor('amount');

/** An amount as the sandbox keeps it: a payable one normalised (12.50 and 12.5 are one amount), any other as sent. */
function amountKey(amount: unknown): string {
  if (typeof amount !== 'string') return String(amount);
  return payableAmount(amount) ? fromMinor(toMinor(amount)) : amount;
}

const text = (value: unknown) => (typeof value === 'string' ? value : '');

/** The fingerprint of a creation's body: the fields that say which payment it is. */
export function fingerprintOfBody(store: TransactionStore | 'apiuser', body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as Record<string, unknown>;
  if (store === 'apiuser') return `apiuser|${text(b.providerCallbackHost)}`;
  const party = (b.payer ?? b.payee) as Record<string, unknown> | undefined;
  return fingerprint(
    store,
    amountKey(b.amount),
    text(b.currency),
    store === 'refund' ? `refund of ${text(b.referenceIdToRefund).toLowerCase()}` : `${text(party?.partyIdType)}:${text(party?.partyId)}`,
    text(b.externalId),
  );
}

/** The fingerprint of a transaction the sandbox holds, comparable with fingerprintOfBody's. */
export function fingerprintOfTransaction(tx: Transaction): string {
  return fingerprint(
    tx.kind,
    tx.amount ?? '',
    tx.currency,
    tx.kind === 'refund' ? `refund of ${tx.referenceIdToRefund ?? ''}` : `${tx.party?.partyIdType ?? ''}:${tx.party?.partyId ?? ''}`,
    tx.externalId ?? '',
  );
}

const fingerprint = (store: string, amount: string, currency: string, party: string, externalId: string) =>
  JSON.stringify([store, amount, currency, party, externalId]);
