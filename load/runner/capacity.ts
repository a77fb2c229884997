import { spawn, spawnSync } from 'node:child_process';
import { cpuSecondsOf } from '../../core/process-cpu.ts';
import { PACKAGE_ROOT } from '../../core/package.ts';
import { CommandLineError, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildLoadScripts } from '../build.ts';
import { MIXES, mixText, parseMix, type Mix } from '../lib/mixes.ts';
import { SLO_SETTINGS, type SloName } from '../lib/slo-settings.ts';
import { startEmbeddedSandbox } from '../../sandbox/start.ts';
import { ConfigError, loadConfig, type HarnessConfig } from '../../harness/config.ts';
import { environmentFor, probeTarget, TargetUnreachableError } from '../../harness/target.ts';
import { scanForSecrets } from '../../harness/secrets/leak-scan.ts';
import { withoutSetupData, type K6Summary } from './summary.ts';
import { thresholdsOfSummaries } from './merge.ts';
import { kneeOf, saturationOf, searchCapacity, sloOfThreshold, verdictOf, type SearchSettings, type Step } from './capacity-search.ts';
import { capacityHtml, capacityJunit, capacitySvg, type CapacityReport } from './capacity-report.ts';
import { readWindow, type WindowFigures } from './step-window.ts';

const ROOT = PACKAGE_ROOT;
/** Each step ramps up to its rate in this long (load/scenarios/capacity.ts) before its measured window. */
const RAMP_SECONDS = 2;
/** The warm-up of a target of its own ends with a window this long at the first rate, to say what it reached. */
const WARMUP_WINDOW_SECONDS = 2;
/** A step's raw samples are gzipped past this many requests (k6 writes about 2 kB of JSON a request, a dozen samples, with the tags a step keeps). */
const GZIP_SAMPLES_FROM = 200_000;

const DEFAULTS = {
  start: 100,
  factor: 2,
  maxRate: 20_000,
  precision: 0.05,
  stepSeconds: 10,
  maxDurationSeconds: 300,
  vus: 200,
  kneeFactor: 3,
  followShare: 0.05,
  confirmMisses: 1,
  warmupSeconds: 10,
};

const USAGE = `Usage: npm run capacity -- <mix> [options]

Mixes: ${Object.entries(MIXES)
  .map(([name, m]) => `${name} (${m.describe})`)
  .join('; ')};
or operations with their shares of the rate, e.g. requestToPay:3,deposit:1.

Finds the highest arrival rate at which the target meets every SLO of load/lib/slo.ts: steps of one arrival
rate (load/scenarios/capacity.ts; reached in ${RAMP_SECONDS} s, then held for --step-duration, the window the step is
judged and measured over), going up by --factor from --start, then halving the gap between the last rate that held
and the first that did not. Tokens are fetched in setup(), before any window. Against the embedded sandbox (a fresh one per step) or
MOMO_BASE_URL (the settings of npm run load). Writes reports/capacity/: index.html, capacity.svg, capacity.json,
junit.xml. What the figures mean and where they stop being true: docs/capacity.md.

  --slo <name=value>        an SLO for this run, repeatable or comma-separated: ${Object.values(SLO_SETTINGS)
    .map((s) => s.flag)
    .join(', ')}
                            (e.g. --slo p95=50,p99=200; the default is the LOAD_SLO_* setting, see docs/reference.md)
  --start <per second>      the first rate (default ${DEFAULTS.start})
  --factor <n>              each step up multiplies the rate by this (default ${DEFAULTS.factor})
  --max-rate <per second>   never above this rate (default ${DEFAULTS.maxRate})
  --precision <share>       stop narrowing when the gap is within this share of the rate held (default ${DEFAULTS.precision})
  --step-duration <s>       how long each rate is held (default ${DEFAULTS.stepSeconds})
  --max-duration <s>        the whole search ends by then (default ${DEFAULTS.maxDurationSeconds})
  --warmup <s>              against MOMO_BASE_URL, ramp up to the first rate over this long, unjudged, before the search
                            (default ${DEFAULTS.warmupSeconds}; 0: none; the embedded sandbox is fresh at every step)
  --confirm-misses <n>      measure a missed rate, or the rate where latency first rose past the knee, this many
                            times more before taking it (default ${DEFAULTS.confirmMisses}; 0 takes each at once): one step is often
                            a passing event
  --vus <n>                 VUs k6 starts before each step (default ${DEFAULTS.vus})
  --knee-factor <n>         the knee: the lowest rate from which every rate's p95 exceeds this many times the
                            lowest p95 measured (default ${DEFAULTS.kneeFactor})
  --follow-share <share>    share of creations followed to their final status (default ${DEFAULTS.followShare})
  --segments <n>            split each step over n local k6 processes (execution segments), judged over
                            their merged raw samples (npm run load:merge); k6's JSON output costs it CPU
  --reports <dir>           where the reports go (default reports/capacity)

Exit codes: 0 a rate met the SLOs (the capacity is found), 1 no rate did, 2 the search could not test.`;

export interface CapacityOptions {
  argv: string[];
  env: Record<string, string | undefined>;
  log: (line: string) => void;
}

class UsageError extends Error {}

interface Parsed {
  mixName: string;
  mix: Mix;
  slos: Partial<Record<SloName, number>>;
  search: SearchSettings;
  vus: number;
  followShare: number;
  segments: number;
  warmupSeconds: number;
  reports: string;
}

function positive(flag: string, value: string | undefined, fallback: number, { integer = false, max = Infinity } = {}): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value) || !(n > 0) || n > max || (integer && !Number.isInteger(n))) {
    throw new UsageError(
      `--${flag} must be a positive ${integer ? 'whole ' : ''}number${max < Infinity ? ` up to ${max}` : ''}, got "${value}".`,
    );
  }
  return n;
}

function whole(flag: string, value: string | undefined, fallback: number, max = 10): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) > max)
    throw new UsageError(`--${flag} must be a whole number from 0 to ${max}, got "${value}".`);
  return Number(value);
}

/** The options of `momo-harness capacity`, as USAGE describes them. */
export const CAPACITY_OPTIONS = {
  slo: { type: 'string', multiple: true },
  start: { type: 'string' },
  factor: { type: 'string' },
  'max-rate': { type: 'string' },
  precision: { type: 'string' },
  'step-duration': { type: 'string' },
  'max-duration': { type: 'string' },
  vus: { type: 'string' },
  'knee-factor': { type: 'string' },
  'follow-share': { type: 'string' },
  segments: { type: 'string' },
  'confirm-misses': { type: 'string' },
  warmup: { type: 'string' },
  reports: { type: 'string' },
  help: { type: 'boolean' },
} as const satisfies OptionSpecs;

function parse(argv: string[], env: Record<string, string | undefined>): Parsed | 'help' {
  let parsed;
  try {
    parsed = parseCommandLine(argv, CAPACITY_OPTIONS, { positionals: true, env });
  } catch (error) {
    if (!(error instanceof CommandLineError)) throw error;
    throw new UsageError(error.message);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  if (positionals.length !== 1)
    throw new UsageError(positionals.length === 0 ? 'Name a mix.' : `One mix at a time, got "${positionals.join(' ')}".`);
  const mixName = positionals[0]!;
  let mix: Mix;
  try {
    mix = parseMix(mixName);
  } catch (error) {
    throw new UsageError(`No mix ${JSON.stringify(mixName)}: ${(error as Error).message}.`);
  }
  const slos: Partial<Record<SloName, number>> = {};
  for (const item of (values.slo ?? []).flatMap((s) => s.split(','))) {
    const [flag, value, extra] = item.trim().split('=');
    const entry = Object.entries(SLO_SETTINGS).find(([, s]) => s.flag === flag);
    const n = Number(value);
    if (!entry || extra !== undefined || value === undefined || value === '' || !Number.isFinite(n) || n < 0) {
      throw new UsageError(
        `--slo ${JSON.stringify(item)}: write name=value with a non-negative number, the name one of ${Object.values(SLO_SETTINGS)
          .map((s) => s.flag)
          .join(', ')}.`,
      );
    }
    slos[entry[0] as SloName] = n;
  }
  const factor = positive('factor', values.factor, DEFAULTS.factor);
  if (factor <= 1) throw new UsageError(`--factor must be above 1, got "${values.factor}".`);
  const stepSeconds = positive('step-duration', values['step-duration'], DEFAULTS.stepSeconds, { integer: true, max: 3600 });
  const maxDurationSeconds = positive('max-duration', values['max-duration'], DEFAULTS.maxDurationSeconds, { max: 86_400 });
  if (maxDurationSeconds < stepSeconds)
    throw new UsageError(`--max-duration (${maxDurationSeconds} s) leaves no time for one step of --step-duration (${stepSeconds} s).`);
  return {
    mixName,
    mix,
    slos,
    search: {
      startRate: positive('start', values.start, DEFAULTS.start, { integer: true }),
      factor,
      maxRate: positive('max-rate', values['max-rate'], DEFAULTS.maxRate, { integer: true }),
      precision: positive('precision', values.precision, DEFAULTS.precision, { max: 1 }),
      maxDurationMs: maxDurationSeconds * 1000,
      stepSeconds,
      generatorCoresLimit: 0.9 * cpus().length,
      confirmMisses: whole('confirm-misses', values['confirm-misses'], DEFAULTS.confirmMisses),
      kneeFactor: positive('knee-factor', values['knee-factor'], DEFAULTS.kneeFactor),
    },
    vus: positive('vus', values.vus, DEFAULTS.vus, { integer: true }),
    followShare: positive('follow-share', values['follow-share'], DEFAULTS.followShare, { max: 1 }),
    segments: positive('segments', values.segments, 1, { integer: true, max: 16 }),
    warmupSeconds: whole('warmup', values.warmup, DEFAULTS.warmupSeconds, 3600),
    reports: resolve(values.reports ?? 'reports/capacity'),
  };
}

export async function runCapacity({ argv, env, log }: CapacityOptions): Promise<{ code: number; report?: CapacityReport }> {
  let options: Parsed | 'help';
  try {
    options = parse(argv, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    log(`${error.message}\n\n${USAGE}`);
    return { code: 2 };
  }
  if (options === 'help') {
    log(USAGE);
    return { code: 0 };
  }
  const prepared = await prepare(options, env, log);
  if (prepared === undefined) return { code: 2 };
  const { config, k6 } = prepared;
  const embedded = !config.baseUrl;
  log(
    `Capacity of ${options.mixName} (${mixText(options.mix)}) against ${embedded ? 'the embedded reference sandbox, a fresh one per step' : config.baseUrl}: steps of ${options.search.stepSeconds} s from ${options.search.startRate}/s, at most ${options.search.maxDurationMs / 1000} s in all`,
  );
  const loadAverage = loadavg()[0]!;
  const started = new Date();
  const steps = new StepMeasurer({ k6, config, options, env });
  let outcome;
  try {
    if (options.warmupSeconds > 0 && !embedded) await warmUp(steps, options, log);
    let stepIndex = 0;
    outcome = await searchCapacity(
      options.search,
      (rate) => steps.measureAt(rate, options.search.stepSeconds, `step-${(stepIndex += 1)}-${rate}`),
      log,
    );
  } catch (error) {
    if (!(error instanceof StepError)) throw error;
    log(`The capacity search could not test: ${error.message}`);
    return { code: 2 };
  }
  if (outcome.steps.length === 0) {
    log('The capacity search could not test: --max-duration left no time for one step.');
    return { code: 2 };
  }
  const report = reportOf(outcome, { options, config, env, started, loadAverage });
  if (!writeReports(report, options.reports, steps.keys, log)) return { code: 2 };
  tellVerdict(report, options.reports, log);
  return { code: report.verdict.capacity === null ? 1 : 0, report };
}

/** k6, the settings and a reachable target, and an empty reports folder; undefined (said) when one is missing. */
async function prepare(options: Parsed, env: Record<string, string | undefined>, log: (line: string) => void) {
  const k6 = spawnSync('bash', [join(ROOT, 'scripts/ensure-k6.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (k6.status !== 0) return undefined;
  let config: HarnessConfig;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    log(error.message);
    return undefined;
  }
  await buildLoadScripts();
  rmSync(options.reports, { recursive: true, force: true });
  mkdirSync(join(options.reports, 'steps'), { recursive: true });
  try {
    if (config.baseUrl) await probeTarget(config);
  } catch (error) {
    log(error instanceof TargetUnreachableError ? error.message : `The capacity search could not test: ${(error as Error).message}`);
    return undefined;
  }
  return { config, k6: k6.stdout.trim() };
}

/**
 * A target's first seconds (its JIT, its caches, its pools) are not its capacity, and a search whose first step
 * missed on them goes down and never up again. Reached slowly, over the whole warm-up: a cold target met at once
 * with the full rate builds a backlog that the first step then pays for.
 */
async function warmUp(steps: StepMeasurer, options: Parsed, log: (line: string) => void): Promise<void> {
  const { startRate } = options.search;
  log(
    `Warm-up: up to ${startRate}/s over ${options.warmupSeconds} s, then ${WARMUP_WINDOW_SECONDS} s at it, not judged (--warmup; the search's time starts after it)`,
  );
  const warm = await steps.measureAt(startRate, WARMUP_WINDOW_SECONDS, 'warmup', options.warmupSeconds);
  log(
    `Warm-up done: over its last ${warm.durationSeconds.toFixed(0)} s, ${warm.throughput.toFixed(0)}/s answered of ${startRate}/s asked, p95 ${warm.latencyLowerBound ? 'at least ' : ''}${warm.latencyMs.p95.toFixed(1)} ms, errors ${(warm.errorRate * 100).toFixed(2)}%`,
  );
}

/** The report of a search: its verdict, knee and saturation, with the settings and the machine it ran on. */
function reportOf(
  outcome: Awaited<ReturnType<typeof searchCapacity>>,
  {
    options,
    config,
    env,
    started,
    loadAverage,
  }: { options: Parsed; config: HarnessConfig; env: Record<string, string | undefined>; started: Date; loadAverage: number },
): CapacityReport {
  const embedded = !config.baseUrl;
  return {
    generatedAt: started.toISOString(),
    durationSeconds: Math.round((Date.now() - started.getTime()) / 100) / 10,
    target: embedded ? 'the embedded reference sandbox (a fresh one per step)' : config.baseUrl!,
    mix: { name: options.mixName, operations: options.mix },
    slos: Object.fromEntries(
      Object.entries(SLO_SETTINGS).map(([name, s]) => [
        name,
        { value: options.slos[name as SloName] ?? numberFrom(env[s.env], s.fallback), setting: s.env, describe: s.describe },
      ]),
    ),
    search: {
      ...options.search,
      rampSeconds: RAMP_SECONDS,
      vus: options.vus,
      followShare: options.followShare,
      segments: options.segments,
      warmupSeconds: embedded ? 0 : options.warmupSeconds,
      ended: outcome.ended,
    },
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model ?? 'unknown',
      loadAverageAtStart: Math.round(loadAverage * 100) / 100,
      node: process.version,
    },
    verdict: verdictOf(outcome, options.search),
    knee: kneeOf(outcome.steps, options.search.kneeFactor, options.search.confirmMisses),
    saturation: saturationOf(outcome.steps),
    steps: outcome.steps,
  };
}

/** capacity.json, index.html, capacity.svg and junit.xml; false (said) when a secret is found in them. */
function writeReports(report: CapacityReport, reports: string, keys: ReadonlySet<string>, log: (line: string) => void): boolean {
  writeFileSync(join(reports, 'capacity.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(reports, 'index.html'), capacityHtml(report));
  writeFileSync(join(reports, 'capacity.svg'), capacitySvg(report));
  writeFileSync(join(reports, 'junit.xml'), capacityJunit(report));
  const leaks = scanForSecrets(reports, [...keys]);
  for (const leak of leaks) log(`SECRET IN REPORT: ${leak.file} holds ${leak.kind}; do not share these reports.`);
  return leaks.length === 0;
}

function tellVerdict({ verdict, knee, saturation }: CapacityReport, reports: string, log: (line: string) => void): void {
  log(`Capacity: ${verdict.sentence}`);
  log(
    `Knee: ${knee.above === null ? `not reached up to ${knee.below}/s` : `between ${knee.below ?? 'below the lowest rate'} and ${knee.above}/s${knee.confirmed ? '' : ', seen in one measurement'}`} (${knee.definition}).`,
  );
  log(
    `Throughput: at most ${saturation.peakThroughput.toFixed(0)}/s answered${saturation.peakAtRate === null ? '' : ` (at ${saturation.peakAtRate}/s asked)`}; ${saturation.fellBehindAt === null ? `it kept up with every rate measured, up to ${saturation.keptUpTo}/s` : `it stops rising between ${saturation.keptUpTo ?? 'below the lowest rate'}/s and ${saturation.fellBehindAt}/s asked`}.`,
  );
  log(`Reports: ${reports}/ (index.html, capacity.svg, capacity.json, junit.xml, steps/)`);
}

/**
 * Measures one step of the search: one rate, reached in `rampSeconds` and then held for `seconds`, the measured
 * window, by k6 in one or more local processes, against the target (or a fresh embedded sandbox for each step).
 * k6's summary of each process is kept in steps/<name>.json; its raw samples, read for the window's figures, are not.
 */
export class StepMeasurer {
  /** Every subscription key the steps used: none may be in a report. */
  readonly keys = new Set<string>();

  constructor(private readonly run: { k6: string; config: HarnessConfig; options: Parsed; env: Record<string, string | undefined> }) {
    for (const key of Object.values(run.config.subscriptionKeys)) if (typeof key === 'string') this.keys.add(key);
  }

  async measureAt(rate: number, seconds: number, name: string, rampSeconds = RAMP_SECONDS): Promise<Step> {
    const { config } = this.run;
    const running = config.baseUrl
      ? undefined
      : await startEmbeddedSandbox({
          profile: config.profile,
          currencies: [config.currency],
          targetEnvironments: [config.targetEnvironment],
        });
    const samplesDir = mkdtempSync(join(tmpdir(), 'momo-capacity-samples-'));
    try {
      const target: HarnessConfig = running
        ? { ...config, baseUrl: running.baseUrl, sandboxUrl: running.baseUrl, subscriptionKeys: running.subscriptionKeys }
        : config;
      for (const key of Object.values(target.subscriptionKeys)) if (typeof key === 'string') this.keys.add(key);
      const cpuBefore = process.cpuUsage();
      const { runs, summaries, samples } = await this.runK6(target, { rate, seconds, name, rampSeconds, samplesDir });
      const cpu = process.cpuUsage(cpuBefore);
      let window: WindowFigures;
      try {
        window = await readWindow(samples, Object.keys(this.run.options.mix), thresholdsOfSummaries(summaries.files));
      } catch (error) {
        throw new StepError(`the samples of the step at ${rate}/s could not be read: ${(error as Error).message}`);
      }
      return stepOf(rate, summaries.read, window, {
        generatorCores: runs.reduce((sum, r) => sum + r.generatorCores, 0),
        insufficientVus: runs.some((r) => /Insufficient VUs/i.test(r.output)),
        targetCpuUs: running ? cpu.user + cpu.system : null,
        operations: Object.keys(this.run.options.mix),
      });
    } finally {
      rmSync(samplesDir, { recursive: true, force: true });
      await running?.close();
    }
  }

  /** The environment of k6 for a step: the target's settings, the SLOs, the mix and the rate. */
  private k6Env(target: HarnessConfig, rate: number, seconds: number, rampSeconds: number, segments: number): Record<string, string> {
    const { env, options } = this.run;
    return {
      ...Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
      ...environmentFor(target),
      ...Object.fromEntries(Object.entries(options.slos).map(([name, value]) => [SLO_SETTINGS[name as SloName].env, String(value)])),
      LOAD_MIX: mixText(options.mix),
      LOAD_RATE: String(rate),
      LOAD_DURATION_SECONDS: String(seconds),
      LOAD_VUS: String(options.vus),
      LOAD_FOLLOW_SHARE: String(options.followShare),
      LOAD_WARMUP_SECONDS: String(rampSeconds),
      LOAD_SEGMENTS: String(segments),
      K6_NO_USAGE_REPORT: 'true',
    };
  }

  /** k6 in each segment's process; their summaries, judged over the window rather than k6's whole run, and samples. */
  private async runK6(
    target: HarnessConfig,
    {
      rate,
      seconds,
      name,
      rampSeconds,
      samplesDir,
    }: { rate: number; seconds: number; name: string; rampSeconds: number; samplesDir: string },
  ) {
    const segments = segmentsOf(this.run.options.segments);
    const k6Env = this.k6Env(target, rate, seconds, rampSeconds, segments.length);
    const summaryFileOf = (i: number) =>
      join(this.run.options.reports, 'steps', segments.length === 1 ? `${name}.json` : `${name}.segment-${i + 1}.json`);
    const gzip = rate * (rampSeconds + seconds) > GZIP_SAMPLES_FROM;
    const samples = segments.map((_, i) => join(samplesDir, `samples-${i + 1}.json${gzip ? '.gz' : ''}`));
    const runs = await Promise.all(
      segments.map((segment, i) =>
        runWatched(
          this.run.k6,
          [
            'run',
            '--no-usage-report',
            '--quiet',
            '--summary-trend-stats',
            'avg,min,med,max,p(90),p(95),p(99),p(99.9)',
            // The raw samples carry only the tags the window's figures read: smaller lines, less of k6's CPU.
            '--system-tags',
            'scenario,status,expected_response,error_code',
            '--out',
            `json=${samples[i]}`,
            '--summary-export',
            summaryFileOf(i),
            ...(segment ? ['--execution-segment', segment.segment, '--execution-segment-sequence', segment.sequence] : []),
            join(ROOT, 'dist/load/capacity.js'),
          ],
          k6Env,
          rampSeconds + seconds,
        ),
      ),
    );
    const failed = runs.find((run) => run.code !== 0 && run.code !== 99);
    if (failed)
      throw new StepError(`k6 stopped with exit ${failed.code} at ${rate}/s: ${failed.output.trim().split('\n').slice(-5).join(' | ')}`);
    // k6 judged its thresholds over the whole run, ramp included: the step is judged over its window instead.
    const files = segments.map((_, i) => summaryFileOf(i));
    const read = files.map((file) => {
      const summary = withoutSetupData(JSON.parse(readFileSync(file, 'utf8')) as K6Summary);
      writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);
      return summary;
    });
    return { runs, summaries: { files, read }, samples };
  }
}

class StepError extends Error {}

/** The segments of a step split over n local k6 processes (undefined for one process). */
function segmentsOf(n: number): ({ segment: string; sequence: string } | undefined)[] {
  if (n === 1) return [undefined];
  const cut = (i: number) => (i === 0 ? '0' : i === n ? '1' : `${i}/${n}`);
  const sequence = Array.from({ length: n + 1 }, (_, i) => cut(i)).join(',');
  return Array.from({ length: n }, (_, i) => ({ segment: `${cut(i)}:${cut(i + 1)}`, sequence }));
}

const numberFrom = (raw: string | undefined, fallback: number) => (raw === undefined || raw === '' ? fallback : Number(raw));

/** A step's figures: those of its window (readWindow), with what the summaries of its processes and the process watch saw. */
export function stepOf(
  rate: number,
  summaries: readonly K6Summary[],
  window: WindowFigures,
  watch: { generatorCores: number; insufficientVus: boolean; targetCpuUs: number | null; operations: string[] },
): Step {
  const m = (summary: K6Summary, name: string) => (summary.metrics[name] ?? {}) as Record<string, number>;
  // Each process has its share of the VUs: the step's are their sum.
  const vusMax = summaries.reduce((sum, s) => sum + (m(s, 'vus_max').max ?? m(s, 'vus_max').value ?? 0), 0);
  const vusPeak = summaries.reduce((sum, s) => sum + (m(s, 'vus').max ?? 0), 0);
  const iterationMeanMs = summaries.reduce((sum, s) => sum + (m(s, 'iteration_duration').avg ?? 0), 0) / Math.max(1, summaries.length);
  const mix = watch.operations.map((op) => window.operations[op]).filter((o) => o !== undefined);
  // Latency is what the SLOs judge: each operation of the mix apart (status reads and token fetches left out), the worst of them.
  const worst = (stat: keyof Step['latencyMs']) => Math.max(0, ...mix.map((o) => o.latencyMs[stat]));
  const started = Object.values(window.operations).reduce((sum, o) => sum + o.started, 0);
  const failed = Object.values(window.operations).reduce((sum, o) => sum + o.failed, 0);
  const requests = Object.values(window.operations).reduce((sum, o) => sum + o.answered, 0);
  return {
    rate,
    durationSeconds: Math.round(window.seconds * 1000) / 1000,
    throughput: mix.reduce((sum, o) => sum + o.throughput, 0),
    requests,
    requestsPerSecond: window.requestsPerSecond,
    operations: window.operations,
    latencyMs: { p50: worst('p50'), p90: worst('p90'), p95: worst('p95'), p99: worst('p99'), p999: worst('p999'), max: worst('max') },
    latencyLowerBound: window.dropped > 0,
    timeline: window.timeline,
    errorRate: started ? failed / started : 0,
    timeToFinalP95Ms: window.timeToFinalP95Ms,
    dropped: window.dropped,
    iterationMeanMs,
    vusMax,
    vusPeak,
    vusExhausted: watch.insufficientVus || (vusMax > 0 && vusPeak >= vusMax),
    generatorCores: Math.round(watch.generatorCores * 100) / 100,
    targetCpuPerRequestUs: watch.targetCpuUs === null || requests === 0 ? null : Math.round(watch.targetCpuUs / requests),
    thresholds: window.thresholds.map((t) => ({
      slo: sloOfThreshold(t.metric, t.expression),
      metric: t.metric,
      expression: t.expression,
      observed: t.unmeasured
        ? 'no request started in the window (lengthen --step-duration)'
        : `${t.expression.replace(/\s*(<=|>=|==|<|>|!=).*$/, '')}=${Number(t.observed.toFixed(3))}`,
      passed: t.passed,
    })),
  };
}

/**
 * Runs k6, sampling its CPU every half second; the generator's cores are its CPU over the load phase (the last
 * step's length before it ended, so starting VUs and setup() do not count). Stopped if it overruns the step by a minute.
 */
function runWatched(
  k6: string,
  args: string[],
  env: Record<string, string>,
  stepSeconds: number,
): Promise<{ code: number; output: string; generatorCores: number }> {
  return new Promise((resolvePromise) => {
    const child = spawn(k6, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
    child.stderr.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
    const samples: { at: number; cpu: number }[] = [];
    const sample = () => {
      const cpu = child.pid === undefined ? undefined : cpuSecondsOf(child.pid);
      if (cpu !== undefined) samples.push({ at: Date.now(), cpu });
    };
    const timer = setInterval(sample, 500);
    const killer = setTimeout(() => child.kill('SIGKILL'), (stepSeconds + 90) * 1000);
    child.on('close', (code) => {
      clearInterval(timer);
      clearTimeout(killer);
      const last = samples.at(-1);
      const from = last && (samples.find((s) => s.at >= last.at - stepSeconds * 1000) ?? samples[0]);
      const generatorCores = last && from && last.at > from.at ? (last.cpu - from.cpu) / ((last.at - from.at) / 1000) : 0;
      resolvePromise({ code: code ?? 2, output, generatorCores });
    });
  });
}
