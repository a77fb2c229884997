import { WINDOW_MARKS, WINDOW_METRIC } from '../lib/window.ts';
import { judge, k6Lines, percentile, Values, type Line } from './merge.ts';

/**
 * What a capacity step measured, read from k6's raw samples (k6 run --out json=<file>, one file per process of
 * the step) over the step's measured window, which the script marks (load/lib/window.ts). Throughput is counted,
 * not inferred: the requests answered inside the window, divided by the window. Latency and errors are those of
 * the requests started inside it (an answer's time less its duration), so the ramp before and the drain after
 * count for neither. Memory: 16 bytes per request of the window (its latency kept twice, for the step and for its
 * second of the timeline), and as much again while the step's percentiles are worked out.
 */

export interface LatencyFigures {
  p50: number;
  p90: number;
  p95: number;
  p99: number;
  p999: number;
  max: number;
}

export interface OperationFigures {
  /** Requests of the operation answered inside the window, and per second of it. */
  answered: number;
  throughput: number;
  /** Requests started inside the window, those answered otherwise than documented, and their latency in ms. */
  started: number;
  failed: number;
  latencyMs: LatencyFigures;
}

/** One slice of the window: the mix's operations, requests started in it (latency) and answered in it (throughput). */
export interface TimelinePoint {
  /** Seconds from the window's opening to the slice's start. */
  at: number;
  throughput: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export interface WindowFigures {
  /** The window's length, from its marks, in seconds. */
  seconds: number;
  /** Every operation called in the window (the mix's, status reads, token fetches), by its op tag. */
  operations: Record<string, OperationFigures>;
  /** Every request answered inside the window, per second. */
  requestsPerSecond: number;
  /** Iterations k6 could not start on schedule inside the window. */
  dropped: number;
  /** At most TIMELINE_POINTS slices of the window, equal in length. */
  timeline: TimelinePoint[];
  /** p95 of the time from 202 to a final status, of the creations accepted inside the window; null when none was followed. */
  timeToFinalP95Ms: number | null;
  /**
   * Every threshold the script declared, judged over the window (the counters that must stay at zero, over the whole
   * load). The latency of an operation of the mix that started no request in the window is unmeasured, and not held.
   */
  thresholds: { metric: string; expression: string; passed: boolean; observed: number; unmeasured?: true }[];
}

export const TIMELINE_POINTS = 60;

/**
 * Counters that count faults anywhere in the load, ramp and drain included: a lost transaction or a body off its
 * schema is one whenever it happens. Everything else is judged over the window.
 */
const WHOLE_LOAD = new Set([
  'momo_schema_violations',
  'momo_lost_transactions',
  'momo_unexpected_401',
  'momo_unexpected_answers',
  'momo_token_requests',
  'checks',
]);

/** The lines a step's figures need; the others (k6 writes a dozen samples per request) are skipped unparsed. */
const NEEDED = /"metric":"(http_req_duration|dropped_iterations|momo_[a-z_0-9]+|checks)"/;

interface Window {
  opens: number;
  closes: number;
}

/** The window one process marked: the times of its two marks (each process of a split step marks its own). */
async function windowOf(file: string): Promise<Window> {
  const marks: Partial<Record<string, number>> = {};
  for await (const { line } of k6Lines(file, (text) => text.includes(WINDOW_METRIC))) {
    const scenario = line.data.tags?.scenario;
    if (line.type === 'Point' && line.data.time && scenario) marks[scenario] = Date.parse(line.data.time);
  }
  const opens = marks[WINDOW_MARKS.opens];
  const closes = marks[WINDOW_MARKS.closes];
  if (opens === undefined || closes === undefined || !(closes > opens))
    throw new Error(
      `${file} holds no measured window (the marks of ${WINDOW_METRIC} are missing): the step ended before its window closed`,
    );
  return { opens, closes };
}

class OperationSink {
  answered = 0;
  failed = 0;
  latency = new Values();
}

const latencyOf = (sorted: Float64Array): LatencyFigures => ({
  p50: percentile(sorted, 0.5),
  p90: percentile(sorted, 0.9),
  p95: percentile(sorted, 0.95),
  p99: percentile(sorted, 0.99),
  p999: percentile(sorted, 0.999),
  max: sorted.length ? sorted[sorted.length - 1]! : 0,
});

function trendValues(values: Values): Record<string, number> {
  const sorted = values.sorted();
  let sum = 0;
  for (const v of sorted) sum += v;
  const figures = latencyOf(sorted);
  return {
    count: sorted.length,
    avg: sorted.length ? sum / sorted.length : 0,
    min: sorted.length ? sorted[0]! : 0,
    med: figures.p50,
    max: figures.max,
    'p(90)': figures.p90,
    'p(95)': figures.p95,
    'p(99)': figures.p99,
    'p(99.9)': figures.p999,
  };
}

/**
 * A step's figures from its processes' raw samples. `mixOperations` are the operations the arrival rate is of
 * (the timeline follows them); `thresholds` the ones the script declared (from its summary export).
 */
export async function readWindow(
  files: readonly string[],
  mixOperations: readonly string[],
  thresholds: readonly { metric: string; expression: string }[],
): Promise<WindowFigures> {
  const windows = await Promise.all(files.map(windowOf));
  const seconds = windows.reduce((sum, w) => sum + (w.closes - w.opens), 0) / windows.length / 1000;
  const figures = new WindowSamples(seconds, new Set(mixOperations));
  for (const [i, file] of files.entries()) {
    for await (const { line } of k6Lines(file, (text) => NEEDED.test(text))) figures.add(line, windows[i]!);
  }
  return figures.result(thresholds);
}

/** The samples of a step's window, gathered as they are read: by operation, over time, and by metric. */
class WindowSamples {
  private readonly slice: number;
  private readonly slices: number;
  private readonly timeline: { answered: number; latency: Values }[];
  private readonly operations = new Map<string, OperationSink>();
  private readonly trends = new Map<string, Values>();
  private readonly rates = new Map<string, { passes: number; count: number }>();
  private readonly counters = new Map<string, number>();
  private answered = 0;
  private dropped = 0;

  constructor(
    private readonly seconds: number,
    private readonly mix: ReadonlySet<string>,
  ) {
    this.slice = Math.max(1, Math.ceil(seconds / TIMELINE_POINTS));
    this.slices = Math.ceil(seconds / this.slice - 1e-9);
    this.timeline = Array.from({ length: this.slices }, () => ({ answered: 0, latency: new Values() }));
  }

  private trend(name: string): Values {
    return entryOf(this.trends, name, () => new Values());
  }

  /** A k6 Rate: the share of its samples that are not zero (a check that passed, a request that failed). */
  private rate(name: string, nonZero: boolean): void {
    const sink = entryOf(this.rates, name, () => ({ passes: 0, count: 0 }));
    sink.count += 1;
    if (nonZero) sink.passes += 1;
  }

  add(line: Line, { opens, closes }: { opens: number; closes: number }): void {
    if (line.type !== 'Point' || typeof line.data.value !== 'number' || !line.data.time) return;
    const tags = line.data.tags ?? {};
    // setup() and teardown() carry no scenario; the marks are no load.
    if (!tags.scenario || line.metric === WINDOW_METRIC) return;
    const at = Date.parse(line.data.time);
    const value = line.data.value;
    if (WHOLE_LOAD.has(line.metric)) {
      if (line.metric === 'checks') this.rate('checks', value !== 0);
      else this.counters.set(line.metric, (this.counters.get(line.metric) ?? 0) + value);
    } else if (line.metric === 'dropped_iterations') {
      if (at >= opens && at < closes) this.dropped += value;
    } else if (line.metric === 'momo_time_to_final') {
      if (at - value >= opens && at - value < closes) this.trend('momo_time_to_final').push(value);
    } else if (line.metric === 'http_req_duration')
      this.request(tags.op ?? 'untagged', tags.expected_response === 'false', at, value, { opens, closes });
  }

  /** A request counts as answered in the window when it ended there, and for latency when it started there. */
  private request(
    op: string,
    failed: boolean,
    answeredAt: number,
    duration: number,
    { opens, closes }: { opens: number; closes: number },
  ): void {
    const sink = entryOf(this.operations, op, () => new OperationSink());
    const inMix = this.mix.has(op);
    const sliceOf = (at: number) => this.timeline[Math.min(this.slices - 1, Math.floor((at - opens) / 1000 / this.slice))]!;
    if (answeredAt >= opens && answeredAt < closes) {
      this.answered += 1;
      sink.answered += 1;
      if (inMix) sliceOf(answeredAt).answered += 1;
    }
    const startedAt = answeredAt - duration;
    if (startedAt < opens || startedAt >= closes) return;
    sink.latency.push(duration);
    if (failed) sink.failed += 1;
    if (inMix) sliceOf(startedAt).latency.push(duration);
  }

  /** The window's metrics as k6 would name them, over the window's requests only. */
  private metrics(): Record<string, Record<string, number>> {
    const { seconds } = this;
    const metrics: Record<string, Record<string, number>> = {};
    const every = new Values();
    let failures = 0;
    for (const [op, sink] of this.operations) {
      metrics[`http_req_duration{op:${op}}`] = trendValues(sink.latency);
      metrics[`http_req_failed{op:${op}}`] = {
        passes: sink.failed,
        fails: sink.latency.length - sink.failed,
        value: sink.latency.length ? sink.failed / sink.latency.length : 0,
      };
      for (const v of sink.latency.sorted()) every.push(v);
      failures += sink.failed;
    }
    metrics.http_req_duration = trendValues(every);
    metrics.http_req_failed = { passes: failures, fails: every.length - failures, value: every.length ? failures / every.length : 0 };
    for (const [name, values] of this.trends) metrics[name] = trendValues(values);
    for (const [name, { passes, count }] of this.rates)
      metrics[name] = { passes, fails: count - passes, value: count ? passes / count : 0 };
    for (const [name, count] of this.counters) metrics[name] = { count, rate: count / seconds };
    metrics.dropped_iterations = { count: this.dropped, rate: this.dropped / seconds };
    return metrics;
  }

  /** Each threshold the script declared, judged over the window. */
  private judged(thresholds: readonly { metric: string; expression: string }[]) {
    const metrics = this.metrics();
    return thresholds.map(({ metric, expression }) => {
      // A window too short for the rate holds no request of an operation: its latency was not measured, not met.
      const operation = /^http_req_duration\{op:([^}]+)\}$/.exec(metric)?.[1];
      if (operation !== undefined && this.mix.has(operation) && (this.operations.get(operation)?.latency.length ?? 0) === 0) {
        return { metric, expression, passed: false, observed: 0, unmeasured: true as const };
      }
      // A metric with no sample in the window: a trend of nothing, a rate of nothing, a count of zero.
      const values =
        metrics[metric] ??
        (/^\s*rate/.test(expression) ? { value: 0 } : /^\s*count/.test(expression) ? { count: 0 } : trendValues(new Values()));
      return { metric, expression, ...judge(expression, values) };
    });
  }

  result(thresholds: readonly { metric: string; expression: string }[]): WindowFigures {
    const { seconds, slice, trends } = this;
    return {
      seconds,
      operations: Object.fromEntries(
        [...this.operations]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([op, sink]) => [
            op,
            {
              answered: sink.answered,
              throughput: sink.answered / seconds,
              started: sink.latency.length,
              failed: sink.failed,
              latencyMs: latencyOf(sink.latency.sorted()),
            },
          ]),
      ),
      requestsPerSecond: this.answered / seconds,
      dropped: this.dropped,
      timeline: this.timeline.map((s, i) => {
        const figures = latencyOf(s.latency.sorted());
        return {
          at: i * slice,
          throughput: s.answered / Math.min(slice, seconds - i * slice),
          p50: figures.p50,
          p95: figures.p95,
          p99: figures.p99,
          max: figures.max,
        };
      }),
      timeToFinalP95Ms: trends.has('momo_time_to_final') ? trendValues(trends.get('momo_time_to_final')!)['p(95)']! : null,
      thresholds: this.judged(thresholds),
    };
  }
}

/** The map's value for the key, made and stored first when there is none. */
function entryOf<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}
