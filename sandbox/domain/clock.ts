/** A timer set on a clock, which can be cancelled before it fires. */
export interface Timer {
  cancel(): void;
}

/**
 * Time as the sandbox sees it: what time it is, and running something later. Every delay of the sandbox
 * (a payment's outcome, its pending timeout, a callback's retries, the consent ping) is set on its clock, so
 * tests move time forward and see what happens, without waiting.
 */
export interface Clock {
  now(): number;
  /** Runs `fire` after `delayMs`; the timer keeps no process alive. */
  setTimer(delayMs: number, fire: () => void): Timer;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (delayMs, fire) => {
    const timeout = setTimeout(fire, delayMs);
    timeout.unref();
    return { cancel: () => clearTimeout(timeout) };
  },
};

/** A clock that moves only when told to; advance() fires the timers that fall due, in order. */
export class ManualClock implements Clock {
  private readonly timers: { at: number; order: number; fire: () => void; cancelled: boolean }[] = [];
  private order = 0;

  constructor(private current = Date.now()) {}

  now(): number {
    return this.current;
  }

  setTimer(delayMs: number, fire: () => void): Timer {
    const timer = { at: this.current + Math.max(0, delayMs), order: this.order++, fire, cancelled: false };
    this.timers.push(timer);
    return { cancel: () => void (timer.cancelled = true) };
  }

  /** Moves time on by `ms`, firing every timer due by then (those they set too), each at its own moment. */
  advance(ms: number): void {
    const end = this.current + ms;
    for (;;) {
      const due = this.timers.filter((t) => !t.cancelled && t.at <= end).sort((a, b) => a.at - b.at || a.order - b.order)[0];
      if (!due) break;
      this.timers.splice(this.timers.indexOf(due), 1);
      this.current = Math.max(this.current, due.at);
      due.fire();
    }
    this.current = end;
    for (let i = this.timers.length - 1; i >= 0; i -= 1) if (this.timers[i]!.cancelled) this.timers.splice(i, 1);
  }

  /** How many timers are still to fire. */
  get pending(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }
}
