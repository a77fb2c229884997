import type { TransactionStore } from '../../core/catalogue/operations.ts';
import type { TransactionStatus } from '../domain/state.ts';

/**
 * What the rules (rules.ts) remember of one client between its requests, each part bounded, so that a client
 * that never stops (or a hostile one) costs the report a fixed amount of memory: the oldest entry goes first.
 */

/** A Map that keeps at most `limit` entries, forgetting the one set longest ago. */
export class BoundedMap<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly limit: number) {}

  get(key: K): V | undefined {
    return this.entries.get(key);
  }

  /** The entry of a key, made with `create` (and remembered) when there is none. */
  of(key: K, create: () => V): V {
    let value = this.entries.get(key);
    if (value === undefined) {
      value = create();
      this.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value as K);
  }

  delete(key: K): void {
    this.entries.delete(key);
  }
}

/** Appends to a list that keeps its last `limit` items. */
export function keepLast<T>(list: T[], item: T, limit: number): void {
  list.push(item);
  if (list.length > limit) list.splice(0, list.length - limit);
}

/** The status reads of one transaction. */
export interface ReadHistory {
  /** When the last few reads came (the polling rate). */
  times: number[];
  /** The final status a read gave the client, once one did. */
  finalSeen?: TransactionStatus;
  /** Reads after that. */
  afterFinal: number;
}

/** A creation whose outcome the client was not told for certain: no answer, a 5xx, or a 409 for the same payment. */
export interface Unsettled {
  store: TransactionStore;
  referenceId: string;
  fingerprint: string;
  at: number;
  /** What the client got, in a few words. */
  why: string;
}

/** A consent request of the CIBA flow (bc-authorize), and the client's polls of the token endpoint for it. */
export interface ConsentPolls {
  intervalMs: number;
  lastPollAt?: number;
}

const TRANSACTIONS_WATCHED = 128;
const TOKENS_KEPT = 16;
const UNSETTLED_KEPT = 64;
const CONSENTS_WATCHED = 64;

/** One client's memory, as the rules keep it. */
export class ClientMemory {
  /** When each access token the client was given expires, newest last. */
  readonly tokenExpiries: number[] = [];
  /** How many tokens it asked for while it held a valid one. */
  tokensWhileValid = 0;
  readonly reads = new BoundedMap<string, ReadHistory>(TRANSACTIONS_WATCHED);
  readonly unsettled: Unsettled[] = [];
  readonly consents = new BoundedMap<string, ConsentPolls>(CONSENTS_WATCHED);

  tokenIssued(expiresAt: number): void {
    keepLast(this.tokenExpiries, expiresAt, TOKENS_KEPT);
  }

  unsettle(creation: Unsettled): void {
    this.settle(creation.store, creation.referenceId);
    keepLast(this.unsettled, creation, UNSETTLED_KEPT);
  }

  /** The client has learnt the outcome of a creation: it read its status, or made it again and was answered. */
  settle(store: TransactionStore, referenceId: string): void {
    const at = this.unsettled.findIndex((u) => u.store === store && u.referenceId === referenceId);
    if (at >= 0) this.unsettled.splice(at, 1);
  }
}
