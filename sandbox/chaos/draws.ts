import { createHash } from 'node:crypto';
import type { MsRange } from '../domain/chaos-conditions.ts';

/**
 * The chaos's dice: seeded, so that the same seed and the same requests give the same conditions. Each stream (a
 * condition's "does it apply", a latency's length) is a sequence of its own: the n-th draw of a stream is read off
 * SHA-256 of the seed, the stream's name and n, so turning one condition on or off leaves the others' draws as they
 * were. Node's hash is the whole generator: nothing to maintain, and fast enough for the occasions chaos draws on.
 */
export class ChaosDraws {
  private readonly drawn = new Map<string, number>();

  constructor(private readonly seed: number) {}

  /** The next number of a stream, in [0, 1). */
  next(stream: string): number {
    const n = this.drawn.get(stream) ?? 0;
    this.drawn.set(stream, n + 1);
    return createHash('sha256').update(`${this.seed}:${stream}:${n}`).digest().readUIntBE(0, 6) / 2 ** 48;
  }

  /** Whether this occasion of a stream is among its share (0: never, and nothing drawn; 1: always). */
  chance(stream: string, share: number): boolean {
    return share > 0 && this.next(stream) < share;
  }

  /** A whole number of ms in the range, both ends included. */
  within(stream: string, range: MsRange): number {
    return range.min + Math.floor(this.next(stream) * (range.max - range.min + 1));
  }
}
