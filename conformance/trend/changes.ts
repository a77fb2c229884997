import { requirementStanding, scenarioStanding, type Standing } from '../certification/baseline.ts';
import type { HistoryRecord, OperationTimes } from './history.ts';

/**
 * What became of a requirement or scenario from one run to the next, named by where it went: a verdict that
 * stayed is no change. "newly failing" is what --baseline calls a new failure (baseline.ts); "newly passing"
 * is wider than its "fixed", since a nightly reader wants to hear of a scenario tested again after a night
 * the target was down as much as of one repaired.
 */
export const MOVES = [
  'newly failing',
  'newly flaky',
  'newly not tested',
  'newly passing',
  'appeared',
  'disappeared',
  'newly not checked',
] as const;
export type Move = (typeof MOVES)[number];

const MOVE_TO: Record<Standing, Move> = {
  failing: 'newly failing',
  passing: 'newly passing',
  flaky: 'newly flaky',
  untested: 'newly not tested',
  unchecked: 'newly not checked',
};

/** A requirement (by id) or scenario (by scenarioKey) that moved, with its standing in each run it is in. */
export interface Moved {
  name: string;
  before?: Standing;
  now?: Standing;
}

export type Moves = Record<Move, Moved[]>;

/** A p95 response time that moved this much (both ways) is worth a glance; less is a night's noise. */
const NOTABLE_RATIO = 1.5;
/** Below this many ms, a change is noise whatever its ratio (5 ms → 9 ms on a sandbox on the same host). */
const NOTABLE_MS = 10;

export interface RunChanges {
  before: HistoryRecord;
  now: HistoryRecord;
  requirements: Moves;
  /** Undefined when a run of the two was written by a harness that kept no scenario verdicts. */
  scenarios: Moves | undefined;
  /** Operations whose p95 moved by NOTABLE_RATIO and NOTABLE_MS or more, the largest move first. */
  operations: { operation: string; before: OperationTimes; now: OperationTimes }[];
}

/** What changed from the run `then` to the run `now` (the next one in the history). */
export function changesBetween(then: HistoryRecord, now: HistoryRecord): RunChanges {
  return {
    before: then,
    now,
    requirements: movesBetween(then.requirements, now.requirements, requirementStanding),
    scenarios: then.scenarios && now.scenarios ? movesBetween(then.scenarios, now.scenarios, scenarioStanding) : undefined,
    operations: Object.entries(now.operations)
      .flatMap(([operation, times]) =>
        Object.hasOwn(then.operations, operation) ? [{ operation, before: then.operations[operation]!, now: times }] : [],
      )
      .filter((o) => Math.abs(o.now.p95 - o.before.p95) >= NOTABLE_MS && ratio(o) >= NOTABLE_RATIO)
      .sort((a, b) => ratio(b) - ratio(a) || a.operation.localeCompare(b.operation)),
  };
}

/** How many times faster or slower (1 when the same); a p95 of 0 counts as 1 ms, so that the ratio stays finite. */
function ratio({ before, now }: { before: OperationTimes; now: OperationTimes }): number {
  const [a, b] = [Math.max(1, before.p95), Math.max(1, now.p95)];
  return Math.max(a, b) / Math.min(a, b);
}

function movesBetween(then: Record<string, string>, now: Record<string, string>, standing: (verdict: string) => Standing): Moves {
  const moves = Object.fromEntries(MOVES.map((m) => [m, [] as Moved[]])) as Moves;
  for (const name of [...new Set([...Object.keys(then), ...Object.keys(now)])].sort()) {
    const before = Object.hasOwn(then, name) ? standing(then[name]!) : undefined;
    const after = Object.hasOwn(now, name) ? standing(now[name]!) : undefined;
    const move = before === undefined ? 'appeared' : after === undefined ? 'disappeared' : before === after ? undefined : MOVE_TO[after];
    if (move) moves[move].push({ name, ...(before ? { before } : {}), ...(after ? { now: after } : {}) });
  }
  return moves;
}

/** Whether anything moved at all. */
export function anyMoved(moves: Moves): boolean {
  return MOVES.some((m) => moves[m].length > 0);
}
