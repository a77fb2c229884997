import { spawn, spawnSync } from 'node:child_process';
import { cpuSecondsOf } from '../../core/process-cpu.ts';
import { PACKAGE_ROOT } from '../../core/package.ts';
import { CommandLineError, InvalidOptionValue, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import { helpText } from '../../core/command-help.ts';
import { decimalNumber, wholeNumber } from '../../core/option-values.ts';
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

/** The SLO names of --slo: p95, p99, error-rate, … */
const SLO_FLAGS = Object.values(SLO_SETTINGS).map((s) => s.flag);

/** `--slo p95=50,p99=200`: the SLOs named, each with its non-negative number. */
function parseSlos(raw: string): Partial<Record<SloName, number>> {
  const slos: Partial<Record<SloName, number>> = {};
  for (const item of raw.split(',')) {
    const [flag, value, extra] = item.trim().split('=');
    const entry = Object.entries(SLO_SETTINGS).find(([, s]) => s.flag === flag);
    const n = Number(value);
    if (!entry || extra !== undefined || value === undefined || value === '' || !Number.isFinite(n) || n < 0)
      throw new InvalidOptionValue(`name=value, with a non-negative number and the name one of ${SLO_FLAGS.join(', ')}`, 'p95=50,p99=200');
    slos[entry[0] as SloName] = n;
  }
  return slos;
}

/** The options of `momo-harness capacity`, each declared once (core/command-line.ts). */
export const CAPACITY_OPTIONS = {
  slo: {
    type: 'string',
    multiple: true,
    value: '<name=value>',
    default: 'the `LOAD_SLO_*` setting',
    describe: `an SLO for this run, repeatable or comma-separated, e.g. \`--slo p95=50,p99=200\`; the names: ${SLO_FLAGS.map((flag) => `\`${flag}\``).join(', ')}`,
    parse: parseSlos,
  },
  start: {
    type: 'string',
    value: '<per second>',
    default: String(DEFAULTS.start),
    describe: 'the first rate',
    parse: wholeNumber(1, Number.POSITIVE_INFINITY, DEFAULTS.start),
  },
  factor: {
    type: 'string',
    value: '<n>',
    default: String(DEFAULTS.factor),
    describe: 'each step up multiplies the rate by this',
    parse: decimalNumber({ above: 1 }, DEFAULTS.factor),
  },
  'max-rate': {
    type: 'string',
    value: '<per second>',
    default: String(DEFAULTS.maxRate),
    describe: 'never above this rate',
    parse: wholeNumber(1, Number.POSITIVE_INFINITY, DEFAULTS.maxRate),
  },
  precision: {
    type: 'string',
    value: '<share>',
    default: String(DEFAULTS.precision),
    describe: 'stop narrowing when the gap is within this share of the rate held',
    parse: decimalNumber({ max: 1 }, DEFAULTS.precision),
  },
  'step-duration': {
    type: 'string',
    value: '<s>',
    default: String(DEFAULTS.stepSeconds),
    describe: 'how long each rate is held',
    parse: wholeNumber(1, 3600, DEFAULTS.stepSeconds),
  },
  'max-duration': {
    type: 'string',
    value: '<s>',
    default: String(DEFAULTS.maxDurationSeconds),
    describe: 'the whole search ends by then',
    parse: decimalNumber({ max: 86_400 }, DEFAULTS.maxDurationSeconds),
  },
  warmup: {
    type: 'string',
    value: '<s>',
    default: String(DEFAULTS.warmupSeconds),
    describe:
      'against MOMO_BASE_URL, ramp up to the first rate over this long, unjudged, before the search; 0: none (the embedded sandbox is fresh at every step)',
    parse: wholeNumber(0, 3600, DEFAULTS.warmupSeconds),
  },
  'confirm-misses': {
    type: 'string',
    value: '<n>',
    default: String(DEFAULTS.confirmMisses),
    describe:
      'measure a missed rate, or the rate where latency first rose past the knee, this many times more before taking it (0 takes each at once): one step is often a passing event',
    parse: wholeNumber(0, 10, DEFAULTS.confirmMisses),
  },
  vus: {
    type: 'string',
    value: '<n>',
    default: String(DEFAULTS.vus),
    describe: 'VUs k6 starts before each step',
    parse: wholeNumber(1, Number.POSITIVE_INFINITY, DEFAULTS.vus),
  },
  'knee-factor': {
    type: 'string',
    value: '<n>',
    default: String(DEFAULTS.kneeFactor),
    describe: "the knee: the lowest rate from which every rate's p95 exceeds this many times the lowest p95 measured",
    parse: decimalNumber({}, DEFAULTS.kneeFactor),
  },
  'follow-share': {
    type: 'string',
    value: '<share>',
    default: String(DEFAULTS.followShare),
    describe: 'share of creations followed to their final status',
    parse: decimalNumber({ max: 1 }, DEFAULTS.followShare),
  },
  segments: {
    type: 'string',
    value: '<n>',
    default: '1',
    describe:
      "split each step over n local k6 processes (execution segments), judged over their merged raw samples (`momo-harness load-merge`); k6's JSON output costs it CPU",
    parse: wholeNumber(1, 16, 2),
  },
  reports: { type: 'string', value: '<dir>', default: 'reports/capacity', describe: 'where the reports go' },
  help: { type: 'boolean', describe: 'the usage text' },
} as const satisfies OptionSpecs;

const USAGE = helpText({
  usage: 'momo-harness capacity <mix> [options]      (in a clone: npm run capacity -- <mix> ...)',
  about: `Mixes: ${Object.entries(MIXES)
    .map(([name, m]) => `${name} (${m.describe})`)
    .join('; ')};
or operations with their shares of the rate, e.g. requestToPay:3,deposit:1.

Finds the highest arrival rate at which the target meets every SLO of load/lib/slo.ts: steps of one arrival
rate (load/scenarios/capacity.ts; reached in ${RAMP_SECONDS} s, then held for --step-duration, the window the step is
judged and measured over), going up by --factor from --start, then halving the gap between the last rate that held
and the first that did not. Tokens are fetched in setup(), before any window. Against the embedded sandbox (a fresh one per step) or
MOMO_BASE_URL (the settings of npm run load). Writes reports/capacity/: index.html, capacity.svg, capacity.json,
junit.xml. What the figures mean and where they stop being true: docs/capacity.md.`,
  options: CAPACITY_OPTIONS,
  after: 'Exit codes: 0 a rate met the SLOs (the capacity is found), 1 no rate did, 2 the search could not test.',
});

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

type CapacityArguments = ReturnType<typeof parseCommandLine<typeof CAPACITY_OPTIONS>>['values'];

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
  return {
    mixName,
    mix,
    slos: Object.assign({}, ...(values.slo ?? [])) as Partial<Record<SloName, number>>,
    search: searchOf(values),
    vus: values.vus ?? DEFAULTS.vus,
    followShare: values['follow-share'] ?? DEFAULTS.followShare,
    segments: values.segments ?? 1,
    warmupSeconds: values.warmup ?? DEFAULTS.warmupSeconds,
    reports: resolve(values.reports ?? 'reports/capacity'),
  };
}

/** The settings of the search, with their defaults; the search must have time for one step. */
function searchOf(values: CapacityArguments): SearchSettings {
  const stepSeconds = values['step-duration'] ?? DEFAULTS.stepSeconds;
  const maxDurationSeconds = values['max-duration'] ?? DEFAULTS.maxDurationSeconds;
  if (maxDurationSeconds < stepSeconds)
    throw new UsageError(`--max-duration (${maxDurationSeconds} s) leaves no time for one step of --step-duration (${stepSeconds} s).`);
  return {
    startRate: values.start ?? DEFAULTS.start,
    factor: values.factor ?? DEFAULTS.factor,
    maxRate: values['max-rate'] ?? DEFAULTS.maxRate,
    precision: values.precision ?? DEFAULTS.precision,
    maxDurationMs: maxDurationSeconds * 1000,
    stepSeconds,
    generatorCoresLimit: 0.9 * cpus().length,
    confirmMisses: values['confirm-misses'] ?? DEFAULTS.confirmMisses,
    kneeFactor: values['knee-factor'] ?? DEFAULTS.kneeFactor,
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
