import { randomFillSync } from 'node:crypto';

/**
 * Random draws from a pool of the system's random bytes, refilled when used up: the pool is shared by every
 * sandbox of the process. crypto.randomInt pools too, but its checks and a ten-digit double's conversion to
 * text cost about as much as the rest of settling a payment.
 */
const pool = new Uint32Array(512);
let next = pool.length;
const TWO_TO_32 = 2 ** 32;

/** A uniformly drawn integer from 0 to n - 1 (n at most 2^32): a draw above the last whole multiple of n is drawn again. */
export function randomBelow(n: number): number {
  const limit = TWO_TO_32 - (TWO_TO_32 % n);
  for (;;) {
    if (next === pool.length) {
      randomFillSync(pool);
      next = 0;
    }
    const draw = pool[next++]!;
    if (draw < limit) return draw % n;
  }
}

/** A financial transaction id as the live sandbox gives one: ten digits, the first not 0, drawn at random. */
export function financialTransactionId(): string {
  const rest = randomBelow(1_000_000_000);
  return `${1 + randomBelow(9)}${rest < 100_000_000 ? String(rest).padStart(9, '0') : rest}`;
}
