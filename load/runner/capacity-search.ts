import type { LatencyFigures, OperationFigures, TimelinePoint } from './step-window.ts';
import { SLO_SETTINGS, type SloName } from '../lib/slo-settings.ts';

/**
 * The capacity search, apart from k6 and the target: a step is measured by a function it is given, so the
 * search, the knee and the verdict are tested without a load run (test/load/capacity-search.test.ts).
 */

/** What one step (one arrival rate reached by a ramp, then held over the measured window) showed. */
export interface Step {
  /** The total arrival rate asked for, iterations per second. */
  rate: number;
  /** The measured window, in seconds: the hold after the ramp, from the marks the script put in its output. */
  durationSeconds: number;
  /** The mix's operations answered inside the window, per second: what the target achieved of the rate asked. */
  throughput: number;
  /** Every request answered inside the window (status reads and token fetches too), and per second. */
  requests: number;
  requestsPerSecond: number;
  /** Each operation called in the window, by its op tag. */
  operations: Record<string, OperationFigures>;
  /** Of the requests started inside the window, per operation of the mix, the worst operation's figure of each. */
  latencyMs: LatencyFigures;
  /**
   * True when iterations were dropped inside the window: the arrivals k6 could not make (every VU busy, or k6
   * late) would have waited longest, so the latency measured is a lower bound of the target's, not its latency.
   */
  latencyLowerBound: boolean;
  /** The window in slices: the mix's throughput and latency over time, to tell a growing queue from a steady delay. */
  timeline: TimelinePoint[];
  /** Share of the requests started inside the window that were answered otherwise than documented. */
  errorRate: number;
  /** p95 of the time from 202 to a final status, of the creations followed; null when the mix has none. */
  timeToFinalP95Ms: number | null;
  /** Iterations dropped inside the window. */
  dropped: number;
  /** Mean time of one iteration, in ms: with the rate it tells how many VUs the target's latency kept busy. */
  iterationMeanMs: number;
  /** VUs allocated, and the most seen busy at once; exhausted when every VU was busy (k6 said so, or the gauge showed it). */
  vusMax: number;
  vusPeak: number;
  vusExhausted: boolean;
  /** CPU the k6 process used, in cores (1 = one core busy the whole step), from /proc/<pid>/stat. */
  generatorCores: number;
  /** CPU the embedded sandbox used per request, in µs; null against another target. */
  targetCpuPerRequestUs: number | null;
  /** Every SLO threshold of the step, judged over the window, held or crossed. */
  thresholds: SloThreshold[];
}

export interface SloThreshold {
  /** The SLO setting behind it (load/lib/slo-settings.ts), or 'bodies' for answers whose body broke its schema. */
  slo: SloName | 'bodies';
  metric: string;
  expression: string;
  observed: string;
  passed: boolean;
}

type Crossed = SloThreshold;
export const crossedOf = (step: Step): SloThreshold[] => step.thresholds.filter((t) => !t.passed);
export const passed = (step: Step) => crossedOf(step).length === 0;

export interface SearchSettings {
  startRate: number;
  /** Each step up multiplies the rate by this. */
  factor: number;
  maxRate: number;
  /** The search stops narrowing once the first failing rate is within this share of the last passing one. */
  precision: number;
  /** The whole search must end by then (ms since it started), a step being measured at the time included. */
  maxDurationMs: number;
  stepSeconds: number;
  /** k6 CPU at or above this many cores counts as a saturated generator. */
  generatorCoresLimit: number;
  /**
   * How many more times a missed rate is measured before the search takes the miss. One step that misses is
   * often a passing event (a collection, a cold cache, a neighbour's burst), not the capacity: unconfirmed, it
   * sends the whole search below the rates the target holds.
   */
  confirmMisses: number;
  /** A rate's p95 this many times the lowest p95 measured is a latency rise (the knee, kneeOf). */
  kneeFactor: number;
}

export type Progress = (line: string) => void;

export interface SearchOutcome {
  steps: Step[];
  /** Why the search ended. */
  ended: 'narrowed' | 'max-rate' | 'time' | 'nothing-passed';
}

/**
 * Steps up geometrically from startRate while steps pass, then bisects between the last passing and the first
 * failing rate until they are within `precision`. A failing first step is followed by steps down. A step is
 * begun only when it can end within maxDurationMs (its length estimated from the steps before).
 */
export async function searchCapacity(
  settings: SearchSettings,
  measure: (rate: number) => Promise<Step>,
  progress: Progress,
  now = () => Date.now(),
): Promise<SearchOutcome> {
  const started = now();
  const steps: Step[] = [];
  let lastPass: number | undefined;
  let firstFail: number | undefined;
  let rate = Math.round(settings.startRate);
  let overheadMs = 5_000;
  const missesAt = new Map<number, number>();
  for (;;) {
    if (now() - started + settings.stepSeconds * 1000 + overheadMs > settings.maxDurationMs) return { steps, ended: 'time' };
    const stepStarted = now();
    const step = await measure(rate);
    overheadMs = Math.max(overheadMs, now() - stepStarted - settings.stepSeconds * 1000);
    steps.push(step);
    const misses = passed(step) ? 0 : (missesAt.get(rate) ?? 0) + 1;
    missesAt.set(rate, misses);
    const again = misses > 0 && misses <= settings.confirmMisses;
    // A rise of latency that one measurement shows may be a passing event as well: confirmed before it sets the knee.
    const knee = kneeOf(steps, settings.kneeFactor, settings.confirmMisses);
    const riseAgain = !again && passed(step) && knee.above === rate && !knee.confirmed;
    progress(
      `${progressLine(step, steps.length, now() - started, settings)}${again ? '; measuring this rate again before taking the miss' : riseAgain ? '; latency rose past the knee: measuring this rate again before it sets the knee' : ''}`,
    );
    if (again || riseAgain) continue;
    if (passed(step)) lastPass = Math.max(lastPass ?? 0, rate);
    else firstFail = Math.min(firstFail ?? Infinity, rate);

    if (firstFail === undefined) {
      if (rate >= settings.maxRate) return { steps, ended: 'max-rate' };
      rate = Math.min(settings.maxRate, Math.round(rate * settings.factor));
    } else if (lastPass === undefined) {
      if (rate <= 1) return { steps, ended: 'nothing-passed' };
      rate = Math.max(1, Math.floor(rate / settings.factor));
    } else {
      if (firstFail - lastPass <= Math.max(1, settings.precision * lastPass)) return { steps, ended: 'narrowed' };
      rate = Math.round((lastPass + firstFail) / 2);
    }
  }
}

function progressLine(step: Step, index: number, elapsedMs: number, settings: SearchSettings): string {
  const verdict = passed(step) ? 'held' : `MISSED ${[...new Set(crossedOf(step).map((c) => sloLabel(c.slo)))].join(', ')}`;
  const bound = step.latencyLowerBound ? '≥ ' : '';
  return `[capacity ${Math.round(elapsedMs / 1000)}s/${Math.round(settings.maxDurationMs / 1000)}s] step ${index}: ${step.rate}/s → ${step.throughput.toFixed(0)}/s answered (every request ${step.requestsPerSecond.toFixed(0)}/s), p95 ${bound}${step.latencyMs.p95.toFixed(1)} ms, p99.9 ${bound}${step.latencyMs.p999.toFixed(1)} ms, max ${bound}${step.latencyMs.max.toFixed(1)} ms${step.latencyLowerBound ? ' (lower bounds: iterations dropped)' : ''}, errors ${(step.errorRate * 100).toFixed(2)}%, dropped ${step.dropped}, k6 CPU ${step.generatorCores.toFixed(2)} cores: ${verdict}`;
}

export function sloLabel(slo: Crossed['slo']): string {
  return slo === 'bodies' ? 'body validity' : SLO_SETTINGS[slo].name;
}

/** Which SLO setting a k6 threshold of load/lib/slo.ts stands for. */
export function sloOfThreshold(metric: string, expression: string): Crossed['slo'] {
  const name = metric.replace(/\{.*$/, '');
  if (name === 'http_req_duration') return expression.startsWith('p(99)') ? 'p99Ms' : 'p95Ms';
  if (name === 'http_req_failed') return 'maxErrorRate';
  if (name === 'dropped_iterations') return 'maxDroppedIterations';
  if (name === 'momo_lost_transactions') return 'maxLostTransactions';
  if (name === 'momo_unexpected_401') return 'maxUnexpected401';
  if (name === 'momo_time_to_final') return 'timeToFinalP95Ms';
  if (name === 'momo_schema_violations') return 'bodies';
  throw new Error(`No SLO of load/lib/slo-settings.ts behind the threshold ${metric} ${expression}`);
}

export interface Knee {
  /** How the knee is defined, in words, for the reports. */
  definition: string;
  /** The lowest p95 measured at any rate, the baseline. */
  baselineP95Ms: number;
  /** The highest rate measured below the knee, and the knee: the lowest rate from which every rate measured rose. */
  below: number | null;
  above: number | null;
  /** Whether the rise at the knee was measured as often as a miss is (--confirm-misses), or seen once only. */
  confirmed: boolean;
}

/** A rate's figure over its measurements: the least p95 (noise only ever adds latency), and how often it was measured. */
function byRateOf(steps: readonly Step[]): { rate: number; p95: number; measured: number }[] {
  const rates = new Map<number, { rate: number; p95: number; measured: number }>();
  for (const s of steps) {
    const seen = rates.get(s.rate);
    if (seen) {
      seen.p95 = Math.min(seen.p95, s.latencyMs.p95);
      seen.measured += 1;
    } else rates.set(s.rate, { rate: s.rate, p95: s.latencyMs.p95, measured: 1 });
  }
  return [...rates.values()].sort((a, b) => a.rate - b.rate);
}

/**
 * The knee: where latency starts rising for good. A rate rose when its p95 (the least over its measurements) is
 * more than `factor` times the lowest p95 measured and at least `minRiseMs` above it (a rise from 1 to 3 ms is
 * noise, not a knee). The knee is the lowest rate from which every rate measured rose, so that one slow step
 * below a rate that did not rise sets nothing; it is confirmed once measured 1 + `confirmations` times.
 */
export function kneeOf(steps: readonly Step[], factor: number, confirmations = 0, minRiseMs = 5): Knee {
  const rates = byRateOf(steps);
  const baseline = rates.length ? Math.min(...rates.map((r) => r.p95)) : 0;
  const definition = `the lowest rate from which every rate measured had a p95 latency above ${factor}× the lowest p95 measured (${baseline.toFixed(1)} ms) and at least ${minRiseMs} ms above it, each rate's p95 the least of its measurements${confirmations > 0 ? `, confirmed by ${1 + confirmations} measurements` : ''}`;
  const rose = (r: { p95: number }) => r.p95 > factor * baseline && r.p95 - baseline >= minRiseMs;
  let index = rates.length;
  while (index > 0 && rose(rates[index - 1]!)) index -= 1;
  if (index === rates.length)
    return { definition, baselineP95Ms: baseline, below: rates.at(-1)?.rate ?? null, above: null, confirmed: false };
  const knee = rates[index]!;
  return {
    definition,
    baselineP95Ms: baseline,
    below: rates[index - 1]?.rate ?? null,
    above: knee.rate,
    confirmed: knee.measured >= 1 + confirmations,
  };
}

export interface Saturation {
  definition: string;
  /** The most the target answered of the mix in any window, per second, and the rate asked for then. */
  peakThroughput: number;
  peakAtRate: number | null;
  /** The highest rate measured below the saturation, and the lowest from which every rate measured fell behind. */
  keptUpTo: number | null;
  fellBehindAt: number | null;
}

/**
 * The share of the rate asked for below which a step's achieved throughput counts as fallen behind: 2% leaves room
 * for the window's edges (one request in a 10 s window at 10/s is 1%), and a queue that grows by 2% of the rate
 * is one the target does not keep up with.
 */
export const KEPT_UP = 0.98;

/**
 * Where achieved throughput stops rising with the rate asked: the lowest rate from which every rate measured
 * answered less than KEPT_UP of it inside its window (each rate's best measurement).
 */
export function saturationOf(steps: readonly Step[]): Saturation {
  const rates = new Map<number, number>();
  for (const s of steps) rates.set(s.rate, Math.max(rates.get(s.rate) ?? 0, s.throughput));
  const sorted = [...rates].sort(([a], [b]) => a - b);
  const peak = sorted.reduce<[number, number] | undefined>((best, entry) => (!best || entry[1] > best[1] ? entry : best), undefined);
  let index = sorted.length;
  while (index > 0 && sorted[index - 1]![1] < KEPT_UP * sorted[index - 1]![0]) index -= 1;
  return {
    definition: `the lowest rate from which every rate measured had less than ${KEPT_UP * 100}% of it answered inside its window`,
    peakThroughput: peak?.[1] ?? 0,
    peakAtRate: peak?.[0] ?? null,
    keptUpTo: sorted[index - 1]?.[0] ?? null,
    fellBehindAt: sorted[index]?.[0] ?? null,
  };
}

export interface Verdict {
  /** The highest rate that met every SLO, null when none did. */
  capacity: number | null;
  /** What stopped the rate going higher: the SLOs the first failing rate above the capacity missed. */
  limitedBy: Crossed[];
  /** Whether the generator (k6), not the target, was the limit. */
  generatorLimited: boolean;
  /** One sentence, the first line of every report. */
  sentence: string;
}

/**
 * The generator was the limit at a failing step when k6 used at least the CPU it may, or when all that broke
 * was starting iterations on time (dropped iterations) although the target's answers did not keep the VUs busy:
 * by Little's law the rate times the mean iteration time is the VUs in use, and under 80% of those allocated
 * k6 had VUs free and still could not keep the schedule. When the target's latency kept every VU busy, the
 * dropped iterations are the target's.
 */
export function generatorLimited(step: Step, coresLimit: number): boolean {
  if (step.generatorCores >= coresLimit) return true;
  const crossed = crossedOf(step);
  if (crossed.length === 0 || !crossed.every((c) => c.slo === 'maxDroppedIterations')) return false;
  return (step.rate * step.iterationMeanMs) / 1000 < 0.8 * step.vusMax;
}

export function verdictOf(outcome: SearchOutcome, settings: SearchSettings): Verdict {
  const passing = outcome.steps.filter(passed).map((s) => s.rate);
  const capacity = passing.length > 0 ? Math.max(...passing) : null;
  const failing = outcome.steps.filter((s) => !passed(s) && (capacity === null || s.rate > capacity)).sort((a, b) => a.rate - b.rate)[0];
  const limitedBy = failing ? crossedOf(failing) : [];
  const generator = failing !== undefined && generatorLimited(failing, settings.generatorCoresLimit);
  const what = [...new Set(limitedBy.map((c) => sloLabel(c.slo)))].join('; ');
  let sentence: string;
  if (capacity === null)
    sentence = `No rate met the SLOs, down to ${Math.min(...outcome.steps.map((s) => s.rate))}/s${what ? `: ${what}` : ''}.`;
  else if (!failing)
    sentence = `At least ${capacity}/s: every rate measured met the SLOs (the search ended at ${outcome.ended === 'time' ? 'its time limit' : 'the highest rate allowed'}).`;
  else if (generator)
    sentence = `At least ${capacity}/s: the generator, not the target, ran out (at ${failing.rate}/s k6 used ${failing.generatorCores.toFixed(2)} cores${failing.dropped > 0 ? ` and dropped ${failing.dropped} iterations` : ''}).`;
  else
    sentence = `${capacity}/s: at ${failing.rate}/s the target broke the SLO on ${what}${failing.vusExhausted ? ` (its answers, p95 ${failing.latencyLowerBound ? 'at least ' : ''}${failing.latencyMs.p95.toFixed(1)} ms, kept all ${failing.vusMax} VUs busy)` : ''}.`;
  // A rate that held when measured again after a miss is counted as held, and said so: the reader may want margin.
  const heldAgain = [
    ...new Set(
      outcome.steps
        .filter((s, i) => !passed(s) && outcome.steps.slice(i + 1).some((later) => later.rate === s.rate && passed(later)))
        .map((s) => s.rate),
    ),
  ].sort((a, b) => a - b);
  if (heldAgain.length > 0) sentence += ` ${heldAgain.map((r) => `${r}/s`).join(', ')} missed once and held when measured again.`;
  return { capacity, limitedBy, generatorLimited: generator, sentence };
}
