import type { Clock } from './clock.ts';

export class StoreFullError extends Error {
  constructor(
    readonly storeName: string,
    readonly maxEntries: number,
    readonly limit: 'entries' | 'bytes' = 'entries',
    budgetBytes = 0,
  ) {
    super(
      limit === 'entries'
        ? `The ${storeName} store holds its maximum of ${maxEntries} records, all still in use`
        : `The sandbox's records fill their budget of ${budgetBytes} bytes, all still in use; no ${storeName} can be added`,
    );
    this.name = 'StoreFullError';
  }
}

/**
 * Estimated bytes that several stores share, so that together they fit in the heap whatever their records
 * carry: a count alone lets 2 KiB callback URLs multiply a store's footprint by ten.
 */
export class ByteBudget {
  used = 0;
  constructor(readonly maxBytes: number) {}
}

/**
 * What a record costs the heap, over-estimated: a fixed part for the Map entry, the object, its numbers and any
 * timer it holds, measured with maximal records (docs/sandbox.md, "Reliability"), plus two bytes a character for every
 * string in it, one level of nesting deep (a party): a string with any character beyond Latin-1 takes two a character.
 */
export const RECORD_OVERHEAD_BYTES = 1024;

export function estimateBytes(key: string, value: unknown): number {
  return RECORD_OVERHEAD_BYTES + 2 * key.length + stringBytes(value, 1);
}

const hasOwn = Object.prototype.hasOwnProperty;

export function stringBytes(value: unknown, depth: number): number {
  if (typeof value === 'string') return 2 * value.length;
  if (typeof value !== 'object' || value === null || depth < 0) return 0;
  let bytes = 0;
  // The own enumerable fields, as Object.values gives them, without building an array for every record stored.
  for (const name in value) if (hasOwn.call(value, name)) bytes += stringBytes((value as Record<string, unknown>)[name], depth - 1);
  return bytes;
}

interface Entry<T> {
  value: T;
  /** When it was stored, by the store's clock (ms). */
  storedAt: number;
  bytes: number;
}

/**
 * An in-memory map with bounded retention: records older than maxAgeMs are forgotten, and at most
 * maxEntries are held. A Map iterates in insertion order, so the oldest records are always at its head
 * and forgetting them costs nothing per request. When the store is full of records that are all still
 * inside the retention window, `add` refuses rather than dropping one that a client may still read.
 */
export class BoundedStore<T> {
  private readonly entries = new Map<string, Entry<T>>();
  /**
   * When the oldest record outlives the store's age limit (its storedAt + maxAgeMs), so that `add` looks for
   * expired records only once there can be one: the cheap sweep stops at a live head, so before this time it
   * forgets nothing. -Infinity when unknown (after a deletion), which makes the next add sweep. Used only for
   * stores whose records have no end of life of their own (expiresAt), whose head may end sooner.
   */
  private headOutlivedAt = Number.NEGATIVE_INFINITY;
  /** Whether no record can ever expire (no age limit short of 285,000 years, no end of life of its own): get then reads no clock. */
  private readonly ageless: boolean;

  constructor(
    readonly name: string,
    private readonly limits: { maxEntries: number; maxAgeMs: number; budget?: ByteBudget },
    private readonly clock: Clock,
    private readonly options: {
      onForget?: (value: T) => void;
      /** A record's own end of life (ms), when it has one shorter than the store's age limit. */
      expiresAt?: (value: T) => number;
      /** The record's estimate as estimateBytes makes it, by a quicker route for a record of known shape. */
      sizeOf?: (key: string, value: T) => number;
    } = {},
  ) {
    this.ageless = limits.maxAgeMs >= Number.MAX_SAFE_INTEGER && options.expiresAt === undefined;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.ageless) return entry.value;
    return this.isExpired(entry, this.clock.now()) ? undefined : entry.value;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** Adds a record under a new key; throws StoreFullError when full, by count or by bytes. The caller checks for duplicates first. */
  add(key: string, value: T, now = this.clock.now()): void {
    const { budget } = this.limits;
    const bytes = budget ? (this.options.sizeOf ?? estimateBytes)(key, value) : 0;
    // The same sweep as before every add, skipped while the head (and so every record) is still young enough.
    if (this.options.expiresAt || this.entries.size === 0 || now - this.headOutlivedAt > 0) this.forgetExpired();
    // Records with lives of their own may have ended behind a longer-lived head; look at all before refusing.
    if ((this.entries.size >= this.limits.maxEntries || this.overBudget(bytes)) && this.options.expiresAt) this.forgetExpired(true);
    if (this.entries.size >= this.limits.maxEntries) throw new StoreFullError(this.name, this.limits.maxEntries);
    if (this.overBudget(bytes)) throw new StoreFullError(this.name, this.limits.maxEntries, 'bytes', budget!.maxBytes);
    if (this.entries.size === 0) this.headOutlivedAt = now + this.limits.maxAgeMs;
    this.entries.set(key, { value, storedAt: now, bytes });
    if (budget) budget.used += bytes;
  }

  private overBudget(bytes: number): boolean {
    const { budget } = this.limits;
    return budget !== undefined && budget.used + bytes > budget.maxBytes;
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.headOutlivedAt = Number.NEGATIVE_INFINITY;
    if (this.limits.budget) this.limits.budget.used -= entry.bytes;
  }

  /**
   * Forgets the records whose life has ended. Cheap by default: it stops at the first live record, as the
   * oldest are at the head; `everything` looks at every record.
   */
  forgetExpired(everything = false): number {
    const now = this.clock.now();
    let forgotten = 0;
    for (const [key, entry] of this.entries) {
      if (!this.isExpired(entry, now)) {
        if (everything) continue;
        break;
      }
      this.delete(key);
      this.options.onForget?.(entry.value);
      forgotten += 1;
    }
    const head = this.entries.values().next().value;
    this.headOutlivedAt = head ? head.storedAt + this.limits.maxAgeMs : Number.NEGATIVE_INFINITY;
    return forgotten;
  }

  private isExpired(entry: Entry<T>, now: number): boolean {
    if (now - entry.storedAt > this.limits.maxAgeMs) return true;
    return this.options.expiresAt !== undefined && now >= this.options.expiresAt(entry.value);
  }

  /** When a record was stored (its retention counts from then), by the store's clock; undefined when there is none. */
  storedAt(key: string): number | undefined {
    return this.entries.get(key)?.storedAt;
  }

  /** The records whose life has not ended at `now`, oldest first, each with its key and when it was stored. */
  *liveEntries(now: number): Generator<{ key: string; value: T; storedAt: number }> {
    for (const [key, entry] of this.entries) if (!this.isExpired(entry, now)) yield { key, value: entry.value, storedAt: entry.storedAt };
  }

  /** The records whose life has not ended at `now`, oldest first: what `get` would still give. */
  liveValues(now: number): T[] {
    const live: T[] = [];
    for (const entry of this.entries.values()) if (!this.isExpired(entry, now)) live.push(entry.value);
    return live;
  }

  values(): IterableIterator<T> {
    return Array.from(this.entries.values(), (e) => e.value)[Symbol.iterator]();
  }
}
