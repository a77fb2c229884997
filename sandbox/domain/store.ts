import type { Clock } from './clock.ts';

export class StoreFullError extends Error {
  constructor(readonly storeName: string, readonly maxEntries: number) {
    super(`The ${storeName} store holds its maximum of ${maxEntries} records, all still in use`);
    this.name = 'StoreFullError';
  }
}

interface Entry<T> {
  value: T;
  storedAt: number;
}

/**
 * An in-memory map with bounded retention: records older than maxAgeMs are forgotten, and at most
 * maxEntries are held. A Map iterates in insertion order, so the oldest records are always at its head
 * and forgetting them costs nothing per request. When the store is full of records that are all still
 * inside the retention window, `add` refuses rather than dropping one that a client may still read.
 */
export class BoundedStore<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(
    readonly name: string,
    private readonly limits: { maxEntries: number; maxAgeMs: number },
    private readonly clock: Clock,
    private readonly options: {
      onForget?: (value: T) => void;
      /** A record's own end of life (ms), when it has one shorter than the store's age limit. */
      expiresAt?: (value: T) => number;
    } = {},
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    return this.isExpired(entry, this.clock.now()) ? undefined : entry.value;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** Adds a record under a new key; throws StoreFullError when full. The caller checks for duplicates first. */
  add(key: string, value: T): void {
    this.forgetExpired();
    // Records with lives of their own may have ended behind a longer-lived head; look at all before refusing.
    if (this.entries.size >= this.limits.maxEntries && this.options.expiresAt) this.forgetExpired(true);
    if (this.entries.size >= this.limits.maxEntries) throw new StoreFullError(this.name, this.limits.maxEntries);
    this.entries.set(key, { value, storedAt: this.clock.now() });
  }

  delete(key: string): void {
    this.entries.delete(key);
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
      this.entries.delete(key);
      this.options.onForget?.(entry.value);
      forgotten += 1;
    }
    return forgotten;
  }

  private isExpired(entry: Entry<T>, now: number): boolean {
    if (now - entry.storedAt > this.limits.maxAgeMs) return true;
    return this.options.expiresAt !== undefined && now >= this.options.expiresAt(entry.value);
  }

  values(): IterableIterator<T> {
    return Array.from(this.entries.values(), (e) => e.value)[Symbol.iterator]();
  }
}
