import type { Clock } from './clock.ts';

export class StoreFullError extends Error {
  constructor(readonly storeName: string, readonly maxEntries: number) {
    super(`The ${storeName} store holds its maximum of ${maxEntries} records, none older than the retention age`);
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
    private readonly onForget?: (value: T) => void,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.clock.now() - entry.storedAt > this.limits.maxAgeMs) return undefined;
    return entry.value;
  }

  has(key: string): boolean {
    return this.get(key) !== undefined;
  }

  /** Adds a record under a new key; throws StoreFullError when full. The caller checks for duplicates first. */
  add(key: string, value: T): void {
    this.forgetExpired();
    if (this.entries.size >= this.limits.maxEntries) throw new StoreFullError(this.name, this.limits.maxEntries);
    this.entries.set(key, { value, storedAt: this.clock.now() });
  }

  /** Forgets the records past the retention age. Cheap: it stops at the first record still inside it. */
  forgetExpired(): number {
    const oldestKept = this.clock.now() - this.limits.maxAgeMs;
    let forgotten = 0;
    for (const [key, entry] of this.entries) {
      if (entry.storedAt >= oldestKept) break;
      this.entries.delete(key);
      this.onForget?.(entry.value);
      forgotten += 1;
    }
    return forgotten;
  }

  values(): IterableIterator<T> {
    return Array.from(this.entries.values(), (e) => e.value)[Symbol.iterator]();
  }
}
