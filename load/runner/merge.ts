import { createReadStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CommandLineError, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import { helpText } from '../../core/command-help.ts';
import { createInterface } from 'node:readline';
import { createGunzip } from 'node:zlib';
import type { K6Summary } from './summary.ts';

/**
 * Merges the raw samples of a split run (k6 --out json=<file>, one file per segment, gzipped when the name ends
 * in .gz) into one summary with global counters and percentiles, the shape of k6's own summary export. Each file
 * is streamed line by line, never read whole; a trend keeps its values as 8-byte floats, so memory grows by
 * 8 bytes per sample of a trend, whatever the size of the JSON lines.
 *
 * Only samples of the load count: those tagged with a scenario. Each process runs its own setup() (provisioning
 * its own API users), so setup and teardown requests are left out, or the merged counts would grow with the
 * number of segments.
 */

/** A growable array of float64. */
export class Values {
  private data = new Float64Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new Float64Array(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }
  sorted(): Float64Array {
    return this.data.subarray(0, this.length).sort();
  }
}

export type Kind = 'counter' | 'gauge' | 'rate' | 'trend';

interface Sink {
  kind: Kind;
  sum: number;
  count: number;
  nonZero: number;
  min: number;
  max: number;
  last: number;
  values?: Values;
}

/**
 * A percentile as k6 computes it (its TrendSink.P): linear interpolation between the two samples around
 * rank p × (n − 1) of the sorted values.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  const n = sorted.length;
  if (n === 0) return 0;
  if (n === 1) return sorted[0]!;
  const i = p * (n - 1);
  const lower = sorted[Math.floor(i)]!;
  const upper = sorted[Math.ceil(i)]!;
  return lower + (upper - lower) * (i - Math.floor(i));
}

export const TREND_STATS = ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'] as const;

export interface MergedSummary {
  /** The files merged, and the span of their samples. */
  files: string[];
  firstSample: string | null;
  lastSample: string | null;
  /** Per metric, and per metric and operation (name{op:<id>}), as in k6's summary export. */
  metrics: Record<string, Record<string, number>>;
  /** Every threshold k6 declared in any file, judged over the merged samples. */
  thresholds: { metric: string; expression: string; passed: boolean; observed: number }[];
}

/** One line of k6's JSON output: a metric's declaration or one of its samples. */
export interface Line {
  type: string;
  metric: string;
  data: { type?: Kind; thresholds?: string[]; value?: number; time?: string; tags?: Record<string, string> | null };
}

export interface MergeOptions {
  /** Count setup() and teardown() samples too (they are per process, so grow with the segments). */
  withSetup?: boolean;
  /**
   * Thresholds to judge besides those the raw output declares. k6's JSON output lists the thresholds of whole
   * metrics only, not those of a submetric (http_req_duration{op:requestToPay}) nor of a metric never sampled;
   * a segment's summary export has them all (thresholdsOfSummaries).
   */
  thresholds?: readonly { metric: string; expression: string }[];
}

/** The thresholds k6 declared, read from segments' summary exports (k6 --summary-export, npm run load's summary.json). */
export function thresholdsOfSummaries(files: readonly string[]): { metric: string; expression: string }[] {
  return files.flatMap((file) => {
    const summary = JSON.parse(readFileSync(file, 'utf8')) as K6Summary;
    if (typeof summary.metrics !== 'object' || summary.metrics === null)
      throw new Error(`${file} is not a k6 summary export (no "metrics")`);
    return Object.entries(summary.metrics).flatMap(([metric, values]) =>
      Object.keys(values.thresholds ?? {}).map((expression) => ({ metric, expression })),
    );
  });
}

export async function mergeSamples(files: readonly string[], options: MergeOptions = {}): Promise<MergedSummary> {
  const merged = new MergedSamples(options.withSetup ?? false);
  for (const file of files) for await (const { line, number } of k6Lines(file)) merged.add(line, `${file}:${number}`);
  const { first, last } = merged;
  const seconds = first && last ? Math.max(1e-3, (Date.parse(last) - Date.parse(first)) / 1000) : 1;
  const metrics: MergedSummary['metrics'] = {};
  for (const [name, sink] of [...merged.sinks].sort(([a], [b]) => a.localeCompare(b))) metrics[name] = valuesOf(sink, seconds);
  return {
    files: [...files],
    firstSample: first,
    lastSample: last,
    metrics,
    thresholds: merged.judged(metrics, seconds, options.thresholds ?? []),
  };
}

/** Every process's samples as one: each metric's sink (and one per operation), the thresholds declared, the time span. */
class MergedSamples {
  readonly kinds = new Map<string, Kind>();
  readonly declared = new Map<string, Set<string>>();
  readonly sinks = new Map<string, Sink>();
  first: string | null = null;
  last: string | null = null;

  constructor(private readonly withSetup: boolean) {}

  add(line: Line, where: string): void {
    if (line.type === 'Metric') {
      if (line.data.type) this.kinds.set(line.metric, line.data.type);
      this.declare(line.metric, line.data.thresholds ?? []);
      return;
    }
    if (line.type !== 'Point' || typeof line.data.value !== 'number') return;
    const tags = line.data.tags ?? {};
    if (!this.withSetup && !tags.scenario) return;
    const kind = this.kindOf(line.metric);
    if (!kind) throw new Error(`${where}: a sample of ${line.metric} before k6 declared the metric`);
    addValue(this.sinkOf(line.metric, kind), line.data.value);
    if (tags.op) addValue(this.sinkOf(`${line.metric}{op:${tags.op}}`, kind), line.data.value);
    const time = line.data.time;
    if (time) {
      if (this.first === null || time < this.first) this.first = time;
      if (this.last === null || time > this.last) this.last = time;
    }
  }

  private declare(metric: string, expressions: readonly string[]): void {
    const names = this.declared.get(metric) ?? new Set<string>();
    for (const expression of expressions) names.add(expression);
    this.declared.set(metric, names);
  }

  private kindOf(metric: string): Kind | undefined {
    return this.kinds.get(metric) ?? this.kinds.get(metric.replace(/\{.*$/, ''));
  }

  private sinkOf(name: string, kind: Kind): Sink {
    let sink = this.sinks.get(name);
    if (!sink) {
      sink = {
        kind,
        sum: 0,
        count: 0,
        nonZero: 0,
        min: Infinity,
        max: -Infinity,
        last: 0,
        values: kind === 'trend' ? new Values() : undefined,
      };
      this.sinks.set(name, sink);
    }
    return sink;
  }

  /** Every threshold declared (by k6, or given), judged over the merged metrics; one with no sample over nothing. */
  judged(
    metrics: MergedSummary['metrics'],
    seconds: number,
    given: readonly { metric: string; expression: string }[],
  ): MergedSummary['thresholds'] {
    for (const { metric, expression } of given) this.declare(metric, [expression]);
    const thresholds: MergedSummary['thresholds'] = [];
    for (const [metric, expressions] of this.declared) {
      for (const expression of expressions) {
        const empty: Sink = {
          kind: this.kindOf(metric) ?? kindOfExpression(expression),
          sum: 0,
          count: 0,
          nonZero: 0,
          min: 0,
          max: 0,
          last: 0,
          values: new Values(),
        };
        thresholds.push({ metric, expression, ...judge(expression, metrics[metric] ?? valuesOf(empty, seconds)) });
      }
    }
    return thresholds;
  }
}

function addValue(sink: Sink, value: number): void {
  sink.sum += value;
  sink.count += 1;
  if (value !== 0) sink.nonZero += 1;
  if (value < sink.min) sink.min = value;
  if (value > sink.max) sink.max = value;
  sink.last = value;
  sink.values?.push(value);
}

/**
 * The lines of a file of k6's JSON output (gzipped when its name ends in .gz), parsed, streamed one at a time;
 * a line whose text `wanted` refuses is skipped without being parsed.
 */
export async function* k6Lines(
  file: string,
  wanted: (text: string) => boolean = () => true,
): AsyncGenerator<{ line: Line; number: number }> {
  const input = createReadStream(file);
  const lines = createInterface({ input: file.endsWith('.gz') ? input.pipe(createGunzip()) : input, crlfDelay: Infinity });
  let number = 0;
  for await (const text of lines) {
    number += 1;
    if (text.trim() === '' || !wanted(text)) continue;
    try {
      yield { line: JSON.parse(text) as Line, number };
    } catch {
      throw new Error(`${file}:${number} is not a line of k6's JSON output (k6 run --out json=<file>)`);
    }
  }
}

/** The kind of a metric no file declared (it was never sampled), as far as its threshold tells. */
function kindOfExpression(expression: string): Kind {
  return /^\s*rate/.test(expression) ? 'rate' : /^\s*count/.test(expression) ? 'counter' : 'trend';
}

function valuesOf(sink: Sink, seconds: number): Record<string, number> {
  switch (sink.kind) {
    case 'counter':
      return { count: sink.sum, rate: sink.sum / seconds };
    case 'rate':
      return { passes: sink.nonZero, fails: sink.count - sink.nonZero, value: sink.count ? sink.nonZero / sink.count : 0 };
    case 'gauge':
      // Each process reports its own gauge (its VUs): the merged figure is the highest one process showed.
      return { value: sink.last, min: sink.count ? sink.min : 0, max: sink.count ? sink.max : 0 };
    case 'trend': {
      const sorted = sink.values!.sorted();
      return {
        count: sink.count,
        avg: sink.count ? sink.sum / sink.count : 0,
        min: sink.count ? sink.min : 0,
        med: percentile(sorted, 0.5),
        max: sink.count ? sink.max : 0,
        'p(90)': percentile(sorted, 0.9),
        'p(95)': percentile(sorted, 0.95),
        'p(99)': percentile(sorted, 0.99),
      };
    }
  }
}

/** A k6 threshold expression (p(95)<250, rate<=0.01, count<=0) judged against merged values. */
export function judge(expression: string, values: Record<string, number>): { passed: boolean; observed: number } {
  const match = /^\s*(avg|min|med|max|count|rate|value|p\(\d+(?:\.\d+)?\))\s*(<=|>=|==|===|!=|<|>)\s*(-?\d+(?:\.\d+)?)\s*$/.exec(
    expression,
  );
  if (!match) throw new Error(`a threshold k6 declared cannot be judged after a merge: "${expression}"`);
  const [, stat, op, limitText] = match;
  let observed: number;
  if (stat!.startsWith('p(')) {
    observed = values[stat!] ?? Number.NaN;
    if (Number.isNaN(observed)) throw new Error(`the merge keeps p(90), p(95) and p(99); the threshold "${expression}" asks for another`);
  } else observed = stat === 'rate' && 'value' in values && !('count' in values) ? values.value! : (values[stat!] ?? 0);
  const limit = Number(limitText);
  const passed =
    op === '<'
      ? observed < limit
      : op === '<='
        ? observed <= limit
        : op === '>'
          ? observed > limit
          : op === '>='
            ? observed >= limit
            : op === '!='
              ? observed !== limit
              : observed === limit;
  return { passed, observed };
}

/** The options of `momo-harness load-merge`, each declared once (core/command-line.ts). */
export const MERGE_OPTIONS = {
  summary: {
    type: 'string',
    multiple: true,
    value: '<file>',
    describe:
      "a segment's `summary.json` (`momo-harness load` writes one per process): its thresholds, the SLOs per operation among them, which k6's raw output does not list, are judged too (repeatable)",
  },
  reports: { type: 'string', value: '<dir>', default: 'reports/load/merged', describe: 'where the merged summary goes' },
  'with-setup': {
    type: 'boolean',
    describe: 'count `setup()` and `teardown()` samples too (each process runs its own, so they grow with the segments)',
  },
  help: { type: 'boolean', describe: 'the usage text' },
} as const satisfies OptionSpecs;

export const MERGE_USAGE = helpText({
  usage: 'momo-harness load-merge <samples file>... [options]      (in a clone: npm run load:merge -- ...)',
  about: `Merges the raw samples of the segments of one split run (each process run with npm run load -- <scenario>
--segment … --samples <file>, or k6 run --out json=<file>; .gz files too) into one summary with global
counters and percentiles, and judges every threshold the scripts declared over all the samples.
Writes <dir>/summary.json.`,
  options: MERGE_OPTIONS,
  after: 'Exit codes: 0 every threshold held over the merged samples, 1 one was crossed, 2 nothing could be merged.',
});

export async function runMerge(argv: string[], log: (line: string) => void, workingDir: string): Promise<number> {
  let parsed;
  try {
    parsed = parseCommandLine(argv, MERGE_OPTIONS, { positionals: true });
  } catch (error) {
    if (!(error instanceof CommandLineError)) throw error;
    log(`${error.message}\n\n${MERGE_USAGE}`);
    return 2;
  }
  if (parsed.values.help) {
    log(MERGE_USAGE);
    return 0;
  }
  const files = parsed.positionals;
  const missing = [...files, ...(parsed.values.summary ?? [])].filter((f) => !existsSync(f));
  if (files.length === 0 || missing.length > 0) {
    log(`${files.length === 0 ? 'Name the samples files to merge.' : `No such file: ${missing.join(', ')}.`}\n\n${MERGE_USAGE}`);
    return 2;
  }
  let merged: MergedSummary;
  try {
    merged = await mergeSamples(files, {
      withSetup: parsed.values['with-setup'],
      thresholds: thresholdsOfSummaries(parsed.values.summary ?? []),
    });
  } catch (error) {
    log(`Could not merge: ${(error as Error).message}`);
    return 2;
  }
  const dir = resolve(parsed.values.reports ?? join(workingDir, 'reports/load/merged'));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'summary.json'), `${JSON.stringify(merged, null, 2)}\n`);
  const m = merged.metrics;
  log(
    `Merged ${files.length} files: ${m.iterations?.count ?? 0} iterations, ${m.http_reqs?.count ?? 0} requests, ${m.dropped_iterations?.count ?? 0} dropped, ${((m.http_req_failed?.value ?? 0) * 100).toFixed(2)}% failed`,
  );
  for (const [name, v] of Object.entries(m).filter(([name]) => name.startsWith('http_req_duration'))) {
    log(`${name}: p50 ${v.med!.toFixed(2)} ms, p95 ${v['p(95)']!.toFixed(2)} ms, p99 ${v['p(99)']!.toFixed(2)} ms over ${v.count} samples`);
  }
  const crossed = merged.thresholds.filter((t) => !t.passed);
  for (const t of crossed) log(`SLO missed over the merged samples: ${t.metric} ${t.expression} (${t.observed})`);
  log(`Merged summary: ${join(dir, 'summary.json')}`);
  return crossed.length > 0 ? 1 : 0;
}
