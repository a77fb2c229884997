/** Polling with a deadline, for states that arrive asynchronously. Never a bare sleep. */
import { reportSafe } from '../core/report-text.ts';

/** How waiting reads and spends time; tests give a virtual one, so deadlines are exact and cost no wall time. */
export interface Timekeeper {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realTime: Timekeeper = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export interface EventuallyOptions {
  timeoutMs: number;
  intervalMs: number;
  /** Says what was awaited, for the message when the deadline passes. */
  description: string;
  time?: Timekeeper;
}

export class DeadlineExceededError extends Error {
  constructor(
    readonly description: string,
    readonly timeoutMs: number,
    readonly lastProblem: unknown,
  ) {
    // The last problem may quote the target: the message is made safe for every report (reportSafe).
    super(
      reportSafe(
        `${description}: not reached within ${timeoutMs} ms${lastProblem ? `; last seen: ${lastProblem instanceof Error ? lastProblem.message : String(lastProblem)}` : ''}`,
      ),
    );
    this.name = 'DeadlineExceededError';
  }
}

/**
 * Checks that a condition holds for a whole period, looking every `intervalMs`: the counterpart of
 * eventually() for what must NOT happen (a second callback, say). Fails as soon as the check throws.
 */
export async function consistently(
  check: () => void | Promise<void>,
  options: { durationMs: number; intervalMs: number; time?: Timekeeper },
): Promise<void> {
  const time = options.time ?? realTime;
  const end = time.now() + options.durationMs;
  for (;;) {
    await check();
    const remaining = end - time.now();
    if (remaining <= 0) return;
    await time.sleep(Math.min(options.intervalMs, remaining));
  }
}

/**
 * Calls `probe` until it returns a value other than undefined, waiting `intervalMs` between calls, and
 * gives up at the deadline. A probe may throw to say "not yet, and here is why"; errors marked `fatal`
 * (such as a target that cannot be reached) end the wait at once.
 */
export async function eventually<T>(probe: () => Promise<T | undefined>, options: EventuallyOptions): Promise<T> {
  const time = options.time ?? realTime;
  const deadline = time.now() + options.timeoutMs;
  let lastProblem: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
      lastProblem = undefined;
    } catch (error) {
      if ((error as { fatal?: boolean }).fatal) throw error;
      lastProblem = error;
    }
    const remaining = deadline - time.now();
    if (remaining <= 0) throw new DeadlineExceededError(options.description, options.timeoutMs, lastProblem);
    await time.sleep(Math.min(options.intervalMs, remaining));
  }
}
