import type { TransactionStore } from '../../core/catalogue/operations.ts';
import type { Product } from '../../core/products.ts';
import type { Clock, Timer } from './clock.ts';
import { BoundedStore, ByteBudget, RECORD_OVERHEAD_BYTES } from './store.ts';
import type { SandboxSettings } from './settings.ts';

/** UUIDs compare without regard to case (RFC 9562), so every id is stored and looked up in lower case. */
export function idKey(id: string): string {
  return id.toLowerCase();
}

export interface ApiUser {
  id: string;
  product: Product;
  providerCallbackHost: string;
  targetEnvironment: string;
  apiKey?: string;
}

/** The kinds of transaction, by the store each keeps its records in (core/catalogue/operations.ts). */
export type TransactionKind = TransactionStore;

/** The kinds whose party is the payer, and whose money comes in to the partner's account; the others pay out. */
export const PAYER_KINDS: ReadonlySet<TransactionKind> = new Set(['requesttopay', 'requesttowithdraw']);
export type TransactionStatus = 'PENDING' | 'SUCCESSFUL' | 'FAILED';

export interface Party {
  partyIdType: 'MSISDN' | 'EMAIL' | 'PARTY_CODE';
  partyId: string;
}

export interface Transaction {
  kind: TransactionKind;
  referenceId: string;
  apiUserId: string;
  product: Product;
  targetEnvironment: string;
  /** 0 for an amount that is not a positive decimal (accepted without the strict reading amountValue; the transaction fails). */
  amountMinor: bigint;
  /** As the status record gives it: normalised when it is a positive decimal, else as sent (or absent). */
  amount?: string;
  currency: string;
  externalId?: string;
  /** The payer of a request to pay or withdraw, the payee of a deposit or transfer; a refund's payee is the payer of the request to pay it returns, when that is known. */
  party?: Party;
  payerMessage?: string;
  payeeNote?: string;
  referenceIdToRefund?: string;
  status: TransactionStatus;
  reason?: string;
  financialTransactionId?: string;
  completedAt?: number;
  callbackUrl?: string;
  /** The method its callback is sent with (the operation's documented one, unless a setting forces one). */
  callbackMethod: 'PUT' | 'POST';
  /** Request to pay only: how much of it successful refunds have returned. */
  refundedMinor: bigint;
  lastNotificationAt?: number;
  timer?: Timer;
  /**
   * Why it fails at once whatever its test number says: a creation the strict readings would have refused
   * (STRICT_READINGS amountValue, requiredFields), accepted as the live service is taken to accept it.
   */
  unpayable?: string;
}

export interface ConsentRequest {
  authReqId: string;
  apiUserId: string;
  product: Product;
  msisdn: string;
  scope: string;
  accessType: 'online' | 'offline';
  consentValidSeconds: number;
  createdAt: number;
  grantedAt: number;
  expiresAt: number;
  callbackUrl?: string;
}

export interface ConsentGrant {
  refreshToken: string;
  authReqId: string;
  apiUserId: string;
  product: Product;
  msisdn: string;
  scope: string;
  refreshableUntil: number;
}

/** The party a transaction keeps: its own record of the two fields a party has, whatever object the body gave. */
export function partyOf(party: Party | undefined): Party | undefined {
  return party && { partyIdType: party.partyIdType, partyId: party.partyId };
}

// Whatever a lenient schema let through counts as estimateBytes counts it: a string by its length, else nothing.
const text = (value: unknown) => (typeof value === 'string' ? value.length : 0);

/**
 * What estimateBytes makes of a transaction, adding its strings by name rather than walking the record: every
 * request to pay pays for this walk (test/sandbox/settings-and-retention.test.ts holds the two equal for a record
 * with every field). The party has the two fields partyOf gives it.
 */
export function transactionBytes(key: string, tx: Transaction): number {
  const characters =
    text(tx.kind) +
    text(tx.referenceId) +
    text(tx.apiUserId) +
    text(tx.product) +
    text(tx.targetEnvironment) +
    text(tx.amount) +
    text(tx.currency) +
    text(tx.externalId) +
    text(tx.payerMessage) +
    text(tx.payeeNote) +
    text(tx.referenceIdToRefund) +
    text(tx.status) +
    text(tx.reason) +
    text(tx.financialTransactionId) +
    text(tx.callbackUrl) +
    text(tx.callbackMethod) +
    text(tx.unpayable) +
    (tx.party ? text(tx.party.partyIdType) + text(tx.party.partyId) : 0);
  return RECORD_OVERHEAD_BYTES + 2 * key.length + 2 * characters;
}

/**
 * Where each change of state is written when the sandbox keeps its state across restarts (--data,
 * sandbox/domain/persistence.ts): called once the change is made, with the record as it now stands. In memory
 * there is none, and a change costs nothing more than the check that there is none.
 */
export interface StateJournal {
  apiUser(user: ApiUser): void;
  /** A transaction created, settled or notified; with a successful one, what it did to its account goes too. */
  transaction(tx: Transaction): void;
  consentRequest(request: ConsentRequest): void;
  /** A consent request redeemed: the request is gone and its grant is kept. */
  consentGranted(grant: ConsentGrant): void;
}

/** Everything the sandbox remembers, each kind in its own bounded store. */
export class SandboxState {
  /** Set only with --data, once the state is recovered from it. */
  journal: StateJournal | undefined = undefined;
  readonly apiUsers: BoundedStore<ApiUser>;
  readonly transactions: Record<TransactionKind, BoundedStore<Transaction>>;
  readonly consentRequests: BoundedStore<ConsentRequest>;
  readonly consentGrants: BoundedStore<ConsentGrant>;
  /** The estimated bytes every store draws from (--retention-max-bytes): what keeps the records inside the heap. */
  readonly budget: ByteBudget;

  constructor(settings: SandboxSettings, clock: Clock) {
    const budget = (this.budget = new ByteBudget(settings.retentionMaxBytes));
    const retention = { maxEntries: settings.retentionMaxEntries, maxAgeMs: settings.retentionMaxAgeMs, budget };
    const transactions = { onForget: (t: Transaction) => t.timer?.cancel(), sizeOf: transactionBytes };
    this.apiUsers = new BoundedStore('API user', { maxEntries: settings.maxApiUsers, maxAgeMs: Number.MAX_SAFE_INTEGER, budget }, clock);
    this.transactions = {
      requesttopay: new BoundedStore('request-to-pay', retention, clock, transactions),
      requesttowithdraw: new BoundedStore('request-to-withdraw', retention, clock, transactions),
      deposit: new BoundedStore('deposit', retention, clock, transactions),
      refund: new BoundedStore('refund', retention, clock, transactions),
      transfer: new BoundedStore('transfer', retention, clock, transactions),
    };
    // Consents live exactly as long as they can be used: an auth_req_id until it expires, a grant while it
    // can be refreshed (consent_valid_in); either may be longer or shorter than the transactions' age limit.
    this.consentRequests = new BoundedStore(
      'consent request',
      { maxEntries: retention.maxEntries, maxAgeMs: Number.MAX_SAFE_INTEGER, budget },
      clock,
      {
        // Remembered for as long again after it expires, so a late client hears expired_token, not invalid_grant.
        expiresAt: (request) => request.expiresAt + (request.expiresAt - request.createdAt),
      },
    );
    this.consentGrants = new BoundedStore(
      'consent grant',
      { maxEntries: retention.maxEntries, maxAgeMs: Number.MAX_SAFE_INTEGER, budget },
      clock,
      {
        expiresAt: (grant) => grant.refreshableUntil,
      },
    );
  }

  /** Forgets what is past retention, so memory falls back even when no request arrives. */
  forgetExpired(): void {
    for (const store of Object.values(this.transactions)) store.forgetExpired();
    this.consentRequests.forgetExpired();
    this.consentGrants.forgetExpired();
  }
}
