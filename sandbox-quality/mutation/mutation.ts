/**
 * `npm run mutation`: the conformance suite against the embedded sandbox once per deliberate deviation
 * (sandbox-quality/faults/faults.ts), once per conforming variation in each profile it is legal in
 * (sandbox-quality/variations/variations.ts), and several times against the faithful sandbox. A harness that passes
 * a broken server proves nothing, and one that fails a conforming server cannot be trusted: both are measured here.
 *
 * Writes reports/mutation/results.json and the generated section of docs/mutation.md.
 */
import { cpus } from 'node:os';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { CommandLineError, InvalidOptionValue, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import { helpText } from '../../core/command-help.ts';
import { namesAmong, wholeNumber } from '../../core/option-values.ts';
import { FAULTS, FAULT_NAMES, runCatching, type FaultName } from '../faults/faults.ts';
import { VARIATIONS, VARIATION_NAMES, type VariationName } from '../variations/variations.ts';
import type { ProfileName } from '../../core/profiles.ts';
import { runConformanceProcess } from '../../conformance/runner/child-run.ts';
import type { ExploreReport } from '../../conformance/explore/reports.ts';
import {
  INDEPENDENT_SERVERS,
  independentTargetEnv,
  startIndependentServer,
  switchesOf,
  type IndependentServerName,
} from '../independent/servers.ts';
import { runUnderWeather, weatherRuns, weatherTable, writeWeatherTable, type WeatherRun } from '../weather/weather-table.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const DOC = join(ROOT, 'docs/mutation.md');
const BEGIN = '<!-- mutation:begin (written by npm run mutation; do not edit by hand) -->';
const END = '<!-- mutation:end -->';

/** `--weather 5`: the weather runs' seeds, 1 to the number; none: no weather run. */
function parseWeatherSeeds(raw: string): number {
  if (raw === 'none') return 0;
  if (!/^\d+$/.test(raw) || Number(raw) > 50) throw new InvalidOptionValue('a whole number from 0 to 50, or none', '5');
  return Number(raw);
}

/** `--blind go:refund-not-debited,java:balance-cached`: deviations written blind, by server; main checks each is listed. */
function serverDeviations(raw: string): { server: IndependentServerName; name: string }[] {
  if (raw === 'none') return [];
  const pairs = raw.split(',').map((item) => item.trim().split(':'));
  const known = (server: string | undefined): server is IndependentServerName =>
    INDEPENDENT_SERVERS.includes(server as IndependentServerName);
  if (pairs.some(([server, name, ...rest]) => !known(server) || !name || rest.length > 0))
    throw new InvalidOptionValue(
      `server:deviation pairs, comma-separated, the server one of ${INDEPENDENT_SERVERS.join(', ')}`,
      'go:refund-not-debited',
    );
  return pairs.map(([server, name]) => ({ server: server as IndependentServerName, name: name! }));
}

/** The options of `npm run mutation`, each declared once (core/command-line.ts). */
export const MUTATION_OPTIONS = {
  only: {
    type: 'string',
    value: '<names>',
    describe: 'only these deviations, comma-separated (`npm run sandbox -- --list-deviations` lists them); `none`: no deviation',
    parse: namesAmong(FAULT_NAMES, 'deviations', 'npm run sandbox -- --list-deviations lists them'),
  },
  variations: {
    type: 'string',
    value: '<names>',
    describe: 'only these conforming variations, comma-separated (`npm run sandbox -- --list-variations` lists them); `none`: no variation',
    parse: namesAmong(VARIATION_NAMES, 'conforming variations', 'npm run sandbox -- --list-variations lists them'),
  },
  independent: {
    type: 'string',
    value: '<names>',
    describe: `only these MoMo servers the project did not write (${INDEPENDENT_SERVERS.join(', ')}), each plain and with each spec-legal control its author wrote, in every profile it is legal in, and with each deviation written blind into it, which must be detected; \`none\`: no such server`,
    parse: namesAmong(INDEPENDENT_SERVERS, 'independent servers', `they are ${INDEPENDENT_SERVERS.join(', ')}`),
  },
  blind: {
    type: 'string',
    value: '<server:deviation,...>',
    describe:
      "only these deviations written blind into the independent servers, each as `server:name` (a server's --list-deviations lists its own); `none`: no such deviation. --independent still says whose plain and control runs are made",
    parse: serverDeviations,
  },
  jobs: {
    type: 'string',
    value: '<n>',
    default: 'two per CPU; each run mostly waits on the sandbox',
    describe: 'suite runs at a time',
    parse: wholeNumber(0, 32, 4),
  },
  'faithful-runs': {
    type: 'string',
    value: '<n>',
    default: '10',
    describe: 'runs against the faithful sandbox; 0 skips them',
    parse: wholeNumber(0, 100, 10),
  },
  weather: {
    type: 'string',
    value: '<seeds>',
    default: '5 when no other option narrows the runs, else none',
    describe: 'the weather runs (docs/mutation.md, "Weather") with seeds 1 to `<seeds>`; `none`: no weather run',
    parse: parseWeatherSeeds,
  },
  scoped: { type: 'boolean', describe: "run each deviation against its own feature's scenarios only (faster, for tests)" },
  reports: { type: 'string', value: '<dir>', default: 'reports/mutation', describe: "where each run's reports go" },
  'no-docs': { type: 'boolean', describe: 'do not rewrite `docs/mutation.md`' },
  help: { type: 'boolean', describe: 'the usage text' },
} as const satisfies OptionSpecs;

const USAGE = helpText({
  usage: 'npm run mutation -- [options]',
  about: `Runs the conformance suite against the embedded sandbox once per deliberate deviation and checks that each
is detected (in the run that can catch it: the spec profile, the mtn-sandbox profile for a live observation,
--strict for a reading); once per conforming variation in each profile it is legal in, and checks that each
passes; against each MoMo server the project did not write, plain and with each of its authors' spec-legal
controls, and checks each passes, and with each deviation written blind into it, and checks each is detected (a
default run in each profile its author lists, then --strict, then @beyond-spec: a catch only by a reading, or
only beyond the spec, is counted apart); then
against the faithful sandbox --faithful-runs times and checks every run passes. Then under weather: each spec-legal
chaos condition alone and all together, and the python server behind the independent weather proxy, each seed in
both profiles, must exit 0 or 2 with no scenario failed; a deviation a feature under --chaos all must still exit 1.`,
  options: MUTATION_OPTIONS,
  after: 'Exit codes: 0 every deviation detected and every faithful run passed, 1 not so, 2 the runs could not be made.',
});

interface SuiteSummary {
  totals: Record<'passed' | 'failed' | 'not tested' | 'skipped', number>;
  scenarios: {
    scenario: string;
    feature: string;
    uri: string;
    verdict: string;
    warnings?: { check: string; field?: string; expected: string; received: string }[];
  }[];
}

export interface RunResult {
  label: string;
  deviation: FaultName | undefined;
  variation?: VariationName;
  /** A server the project did not write, with the control or the deviation its author wrote, if any. */
  independent?: { server: IndependentServerName; control?: string; deviation?: string; clause?: string; effect?: string };
  /** The run's profile and strictness. */
  profile: ProfileName;
  strict: boolean;
  /** Only the scenarios of operations the live service has beyond the spec were run (`--tags @beyond-spec`). */
  beyondSpec?: boolean;
  /** The seeded exploration was run (`momo-harness explore`), not the suite. */
  explore?: boolean;
  /** Distinct warnings the run reported (findings it weighed as warnings). */
  warnings: number;
  exitCode: number | null;
  durationMs: number;
  failed: { scenario: string; uri: string }[];
  notTested: number;
  passed: number;
  /** The run's last lines when it could not be read, to say why. */
  problem?: string;
  /** For a deviation written blind: the runs made, in order, until one detected it ("spec", "spec --strict"). */
  tried?: string[];
  /** Under --strict or beyond the spec, how many scenarios it failed that its server fails plain too (not counted), by way. */
  failedAlsoPlain?: { way: string; scenarios: number }[];
}

export interface MutationReport {
  when: string;
  scoped: boolean;
  deviations: (RunResult & { feature: string; summary: string; detected: boolean; caughtByItsFeature: boolean })[];
  variations: (RunResult & { summary: string; allowedBy: string; conforms: boolean })[];
  independent: (RunResult & { conforms: boolean })[];
  /** Deviations written blind into the independent servers: each must be caught as the project's own are. */
  blindDeviations: (RunResult & { detected: boolean; byReading: boolean; onlyBeyondSpec: boolean })[];
  faithful: RunResult[];
  detected: number;
  variationsPassed: number;
  independentPassed: number;
  blindDetected: number;
  /** Of those detected, the ones only a reading caught (--strict). */
  blindDetectedByReading: number;
  /** Of those detected, the ones only a scenario beyond the spec caught (`--tags @beyond-spec`). */
  blindDetectedBeyondSpec: number;
  faithfulPassed: number;
  durationMs: number;
}

/** What one suite run is of: a deviation, a variation, or the faithful sandbox; in which profile, strict or not. */
export interface RunSpec {
  label: string;
  deviation?: FaultName;
  variation?: VariationName;
  independent?: RunResult['independent'];
  profile: ProfileName;
  strict: boolean;
  beyondSpec?: boolean;
  /** The seeded exploration (`momo-harness explore`) from its default seed, rather than the suite. */
  explore?: boolean;
  /** A deviation written blind is tried these ways, in order, until one detects it (waysToCatch). */
  ways?: Way[];
}

/**
 * How a run is made: its profile, whether readings weigh as failures, whether it is of the beyond-spec scenarios only,
 * and whether it is the seeded exploration rather than the suite.
 */
type Way = Pick<RunSpec, 'profile' | 'strict' | 'beyondSpec' | 'explore'>;

/** A deviation is detected when its run exits 1 with a scenario failed (not merely untestable). */
const isDetected = (r: RunResult) => r.exitCode === 1 && r.failed.length > 0;

/**
 * The runs that may catch a deviation written blind, in order: a default run in each profile its author lists (the
 * spec first), the seeded exploration in each (random sequences of operations, held to the same definite and observed
 * checks: a catch as strong as a default run's), then --strict in the first, then the scenarios of operations the live service has beyond the spec
 * (`--tags @beyond-spec`, which a default run against a remote target leaves out) in the first. A blind author's
 * clause is not always definite, and a deviation may show only through an operation the spec does not list (the
 * disbursement balance), so a catch by a reading, or beyond the spec, is counted apart rather than passed over or taken
 * for a default catch.
 */
export function waysToCatch(profiles: readonly ProfileName[]): Way[] {
  const ordered = profiles.includes('spec') ? ['spec' as const, ...profiles.filter((p) => p !== 'spec')] : [...profiles];
  const first = ordered[0] ?? 'spec';
  return [
    ...ordered.map((profile) => ({ profile, strict: false })),
    ...ordered.map((profile) => ({ profile, strict: false, explore: true })),
    { profile: first, strict: true },
    { profile: first, strict: false, beyondSpec: true },
    // A reading about an operation beyond the spec (payouts covered together, on the disbursement balance).
    { profile: first, strict: true, beyondSpec: true },
  ];
}

/** The tag expression of a way's run: the beyond-spec scenarios only, or the default selection. */
const tagsOf = (way: Way) => (way.beyondSpec ? '@beyond-spec' : undefined);

/** A scenario as the runs name it, to tell the scenarios a deviation fails from those its server fails plain. */
const scenarioKey = (f: RunResult['failed'][number]) => `${f.uri} › ${f.scenario}`;

/** The scenarios a deviation's server fails plain, run this way: under --strict a server may fail readings of its own. */
export type PlainFailures = (spec: RunSpec, way: Way) => Promise<ReadonlySet<string>>;

/**
 * A deviation written blind, run each way in turn until one detects it; the result is that run's, with the ways tried.
 * Under --strict, and beyond the spec, only the scenarios the plain server passes that way count: a server whose own
 * choices fail a reading, or that lacks an operation beyond the spec, fails it with any deviation switched on, which
 * detects nothing.
 */
export async function runUntilDetected(
  spec: RunSpec,
  reportsDir: string,
  plainFailures: PlainFailures,
  run = runSuite,
): Promise<RunResult> {
  const tried: string[] = [];
  const failedAlsoPlain: { way: string; scenarios: number }[] = [];
  let last: RunResult | undefined;
  for (const way of spec.ways ?? [spec]) {
    last = await run({ ...spec, ...way }, join(reportsDir, runOf(way).replace(/\W+/g, '-')), tagsOf(way));
    tried.push(runOf(last));
    if (!isDetected(last)) continue;
    if (!way.strict && !way.beyondSpec) break;
    const plain = await plainFailures(spec, way);
    const beyond = last.failed.filter((f) => !plain.has(scenarioKey(f)));
    if (beyond.length < last.failed.length) failedAlsoPlain.push({ way: runOf(way), scenarios: last.failed.length - beyond.length });
    last = { ...last, failed: beyond };
    if (beyond.length > 0) break;
  }
  return { ...last!, tried, ...(failedAlsoPlain.length > 0 ? { failedAlsoPlain } : {}) };
}

async function runSuite(spec: RunSpec, reportsDir: string, tags: string | undefined): Promise<RunResult> {
  const against = spec.explore ? exploreAgainst : runSuiteAgainst;
  if (!spec.independent) return against(spec, reportsDir, tags, {});
  const server = await startIndependentServer(spec.profile, {
    server: spec.independent.server,
    ...(spec.independent.control ? { controls: [spec.independent.control] } : {}),
    ...(spec.independent.deviation ? { deviations: [spec.independent.deviation] } : {}),
  });
  try {
    return await against(spec, reportsDir, tags, independentTargetEnv(server, spec.profile));
  } finally {
    await server.stop();
  }
}

/** Sequences the exploration tries in a mutation run, from its default seed; bounded in time by EXPLORE_SECONDS too. */
const EXPLORE_RUNS = '300';
const EXPLORE_SECONDS = '120';

/** What a run is given, whichever it is: its profile and strictness, the sandbox's deviation or variation, the target. */
function runEnv(spec: RunSpec, target: Record<string, string>): Record<string, string> {
  return {
    MOMO_RETRIES: '0',
    MOMO_PROFILE: spec.profile,
    ...(spec.strict ? { MOMO_STRICT: 'true' } : {}),
    ...(spec.deviation ? { MOMO_SANDBOX_DEVIATIONS: spec.deviation } : {}),
    ...(spec.variation ? { MOMO_SANDBOX_VARIATIONS: spec.variation } : {}),
    ...target,
  };
}

/** A run's result before its verdicts are read: who it was of, how it was made, how it ended. */
function resultOf(spec: RunSpec, exitCode: number | null, started: number): RunResult {
  return {
    label: spec.label,
    deviation: spec.deviation,
    ...(spec.variation ? { variation: spec.variation } : {}),
    ...(spec.independent ? { independent: spec.independent } : {}),
    profile: spec.profile,
    strict: spec.strict,
    ...(spec.beyondSpec ? { beyondSpec: true } : {}),
    ...(spec.explore ? { explore: true } : {}),
    exitCode,
    durationMs: Date.now() - started,
    failed: [],
    notTested: 0,
    passed: 0,
    warnings: 0,
  };
}

/**
 * The seeded exploration against the target, from its default seed: a departure it finds (exit 1) is one failure,
 * named by the checks its shrunk sequence departs from; its warnings are counted as a suite run's are.
 */
export function exploreAgainst(
  spec: RunSpec,
  reportsDir: string,
  _tags: string | undefined,
  target: Record<string, string>,
): Promise<RunResult> {
  const argv = ['--reports', reportsDir, '--runs', EXPLORE_RUNS, '--time-limit', EXPLORE_SECONDS];
  return childRun(spec, reportsDir, target, { command: 'explore', argv, report: 'explore.json' }, (report: ExploreReport, result) => {
    const departure = report.departure;
    const checks = [...new Set(departure?.findings.map((f) => f.check))].join(', ');
    if (departure) result.failed = [{ scenario: `explore: ${departure.commands.join(' → ')} (${checks})`, uri: 'explore' }];
    result.warnings = report.warnings.length;
  });
}

function runSuiteAgainst(spec: RunSpec, reportsDir: string, tags: string | undefined, target: Record<string, string>): Promise<RunResult> {
  const argv = ['--reports', reportsDir, '--parallel', '2', ...(tags ? ['--tags', tags] : [])];
  return childRun(spec, reportsDir, target, { command: 'run', argv, report: 'summary.json' }, (summary: SuiteSummary, result) => {
    result.failed = summary.scenarios.filter((s) => s.verdict === 'failed').map((s) => ({ scenario: s.scenario, uri: s.uri }));
    result.notTested = summary.totals['not tested'];
    result.passed = summary.totals.passed;
    result.warnings = new Set(
      summary.scenarios.flatMap((s) => (s.warnings ?? []).map((w) => JSON.stringify([w.check, w.field, w.expected, w.received]))),
    ).size;
  });
}

/**
 * One run of the harness's command in a child process, as a user runs it, read from the report it wrote; its last
 * lines when it wrote none, ended otherwise than 0 or 1, or did not pass where it had to.
 */
async function childRun<Report>(
  spec: RunSpec,
  reportsDir: string,
  target: Record<string, string>,
  how: { command: 'run' | 'explore'; argv: string[]; report: string },
  read: (report: Report, result: RunResult) => void,
): Promise<RunResult> {
  rmSync(reportsDir, { recursive: true, force: true });
  const started = Date.now();
  // A run is bounded by the suite's own deadlines; the timeout only guards against a hung process.
  // Each deviation runs where the rule it breaks weighs as a failure (runCatching): a definite rule in the spec
  // profile, a live observation in the mtn-sandbox profile, a reading with --strict (the sandbox's readings on too).
  // No reruns (MOMO_RETRIES=0): a deviation must be caught at the first attempt, and a faithful or varied run must
  // pass without one; a rerun would only double the time of a deterministic failure, or hide a flaky scenario.
  const { code: exitCode, output, timedOut } = await runConformanceProcess(how.argv, runEnv(spec, target), 10 * 60_000, how.command);
  const result = resultOf(spec, exitCode, started);
  const lastLines = `${timedOut ? 'killed after 10 minutes\n' : ''}${output.trim().split('\n').slice(-5).join('\n')}`;
  const reportFile = join(reportsDir, how.report);
  if (!existsSync(reportFile)) return { ...result, problem: lastLines };
  read(JSON.parse(readFileSync(reportFile, 'utf8')) as Report, result);
  if (exitCode !== 0 && exitCode !== 1) result.problem = lastLines;
  else if ((spec.variation || (spec.independent && !spec.independent.deviation)) && exitCode !== 0) result.problem = lastLines;
  return result;
}

/** Runs tasks with at most `jobs` at a time, in order of submission. */
async function pooled<T>(tasks: (() => Promise<T>)[], jobs: number, onDone: (result: T, done: number) => void): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
      onDone(results[index]!, ++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, tasks.length) }, worker));
  return results;
}

interface MutationOptions {
  only: FaultName[];
  variations?: VariationName[];
  independent?: IndependentServerName[];
  /** Only these deviations written blind, by server (none: no such deviation); --independent still names whose plain and control runs are made. */
  blind?: { server: IndependentServerName; name: string }[];
  jobs: number;
  faithfulRuns: number;
  scoped: boolean;
  reportsDir: string;
  log: (line: string) => void;
}

export async function runMutation(options: MutationOptions): Promise<MutationReport> {
  const started = Date.now();
  const tasks = mutationTasks(options);
  const results = await pooled(tasks, options.jobs, (r, done) => tellRun(r, done, tasks.length, options.log));
  return mutationReportOf(results, options.scoped, Date.now() - started);
}

/** A suite run for each deviation, each variation in each of its profiles, each independent server's run, and the faithful runs. */
function mutationTasks(options: MutationOptions): (() => Promise<RunResult>)[] {
  const variationRuns = (options.variations ?? []).flatMap((name) => VARIATIONS[name].profiles.map((profile) => ({ name, profile })));
  const { independent = [], blind } = options;
  const independentRuns = [...new Set([...independent, ...(blind ?? []).map((d) => d.server)])].flatMap((server) =>
    independentRunsOf(server, {
      plainAndControls: independent.includes(server),
      deviations: blind?.filter((d) => d.server === server).map((d) => d.name),
    }),
  );
  options.log(
    `${options.only.length} deviations, ${variationRuns.length} runs of ${options.variations?.length ?? 0} conforming variations, ${independentRuns.length} runs of ${options.independent?.length ?? 0} independent servers and ${options.faithfulRuns} faithful runs, ${options.jobs} at a time${options.scoped ? ', each deviation against its own feature only' : ''}.`,
  );
  const dir = options.reportsDir;
  const plainRuns = new Map<string, Promise<ReadonlySet<string>>>();
  const plainFailures: PlainFailures = (spec, way) => {
    const { server } = spec.independent!;
    const key = `${server}-plain-${runOf(way).replace(/\W+/g, '-')}`;
    if (!plainRuns.has(key))
      plainRuns.set(
        key,
        runSuite(
          { label: `${server} plain (${runOf(way)})`, independent: { server }, ...way },
          join(dir, 'independent', key),
          tagsOf(way),
        ).then((r) => new Set(r.failed.map(scenarioKey))),
      );
    return plainRuns.get(key)!;
  };
  return [
    ...options.only.map(
      (name) => () =>
        runSuite(
          { label: name, deviation: name, ...runCatching(FAULTS[name]) },
          join(dir, name),
          options.scoped ? `@${FAULTS[name].feature}` : undefined,
        ),
    ),
    ...variationRuns.map(
      ({ name, profile }) =>
        () =>
          runSuite(
            { label: `${name} (${profile})`, variation: name, profile, strict: false },
            join(dir, 'variations', `${name}-${profile}`),
            undefined,
          ),
    ),
    ...independentRuns.map((spec) => {
      const { server, control, deviation } = spec.independent!;
      return spec.ways
        ? () => runUntilDetected(spec, join(dir, 'independent', `${server}-${deviation}`), plainFailures)
        : () =>
            runSuite(
              spec,
              join(dir, 'independent', `${server}-${control ?? 'plain'}-${spec.profile}${spec.explore ? '-explore' : ''}`),
              undefined,
            );
    }),
    ...Array.from(
      { length: options.faithfulRuns },
      (_, i) => () => runSuite({ label: `faithful #${i + 1}`, profile: 'spec', strict: false }, join(dir, `faithful-${i + 1}`), undefined),
    ),
  ];
}

/** A line per run as it ends: a deviation detected or not, a conforming run passed or failed, and what failed. */
function tellRun(r: RunResult, done: number, total: number, log: (line: string) => void): void {
  const verdict =
    r.deviation || r.independent?.deviation
      ? isDetected(r)
        ? `detected (${r.failed.length} failed${r.tried ? `, ${runOf(r)}` : ''})`
        : `NOT DETECTED (exit ${r.exitCode}${r.tried ? `; tried ${r.tried.join(', ')}` : ''}${alsoPlain(r)})`
      : r.exitCode === 0
        ? `passed (${r.passed}${r.warnings > 0 ? `, ${r.warnings} warnings` : ''})`
        : `FAILED (exit ${r.exitCode}, ${r.failed.length} failed, ${r.notTested} not tested)`;
  log(`[${done}/${total}] ${r.label}: ${verdict} in ${(r.durationMs / 1000).toFixed(1)} s`);
  for (const f of r.deviation || r.independent?.deviation ? [] : r.failed) log(`    failed: ${f.uri} › ${f.scenario}`);
  if (r.problem)
    log(
      r.problem
        .split('\n')
        .map((l) => `    ${l}`)
        .join('\n'),
    );
}

export function mutationReportOf(results: RunResult[], scoped: boolean, durationMs: number): MutationReport {
  const deviations = results
    .filter((r) => r.deviation)
    .map((r) => {
      const { feature, summary } = FAULTS[r.deviation!];
      const detected = isDetected(r);
      return { ...r, feature, summary, detected, caughtByItsFeature: r.failed.some((f) => f.uri === `features/${feature}.feature`) };
    });
  const variations = results
    .filter((r) => r.variation)
    .map((r) => {
      const { summary, allowedBy } = VARIATIONS[r.variation!];
      return { ...r, summary, allowedBy, conforms: r.exitCode === 0 && r.failed.length === 0 };
    });
  const independent = results
    .filter((r) => r.independent && !r.independent.deviation)
    .map((r) => ({ ...r, conforms: r.exitCode === 0 && r.failed.length === 0 }));
  const blindDeviations = results
    .filter((r) => r.independent?.deviation)
    .map((r) => ({ ...r, detected: isDetected(r), byReading: isDetected(r) && r.strict, onlyBeyondSpec: isDetected(r) && !!r.beyondSpec }));
  const faithful = results.filter((r) => !r.deviation && !r.variation && !r.independent);
  return {
    when: new Date().toISOString(),
    scoped,
    deviations,
    variations,
    independent,
    blindDeviations,
    faithful,
    detected: deviations.filter((d) => d.detected).length,
    blindDetected: blindDeviations.filter((d) => d.detected).length,
    blindDetectedByReading: blindDeviations.filter((d) => d.byReading).length,
    blindDetectedBeyondSpec: blindDeviations.filter((d) => d.onlyBeyondSpec).length,
    variationsPassed: variations.filter((v) => v.conforms).length,
    independentPassed: independent.filter((r) => r.conforms).length,
    faithfulPassed: faithful.filter((r) => r.exitCode === 0).length,
    durationMs,
  };
}

/**
 * An independent server's runs: plain in both profiles, with each control in each profile it is legal in, and with
 * each deviation its author wrote, tried each way that may catch it (waysToCatch). `asked` narrows them: no plain or
 * control run unless the server is among --independent, and only the deviations --blind names when it names any.
 */
function independentRunsOf(
  server: IndependentServerName,
  asked: { plainAndControls: boolean; deviations: readonly string[] | undefined },
): RunSpec[] {
  const plain = (['spec', 'mtn-sandbox'] as const).map((profile) => ({
    label: `${server} (${profile})`,
    independent: { server },
    profile,
    strict: false,
  }));
  const controls = switchesOf(server, 'control');
  const deviations = switchesOf(server, 'deviation')
    .filter((d) => asked.deviations === undefined || asked.deviations.includes(d.name))
    .map((d) => ({
      label: `${server} --deviation ${d.name}`,
      independent: { server, deviation: d.name, clause: d.clause, effect: d.effect },
      ...waysToCatch(d.profiles)[0]!,
      ways: waysToCatch(d.profiles),
    }));
  if (!asked.plainAndControls) return deviations;
  const controlled = controls.flatMap((c) =>
    c.profiles.map((profile) => ({
      label: `${server} --control ${c.name} (${profile})`,
      independent: { server, control: c.name, clause: c.clause, effect: c.effect },
      profile,
      strict: false,
    })),
  );
  // The exploration must find nothing where the suite passes: plain, and with each control.
  const explored = [...plain, ...controlled].map((r) => ({ ...r, label: `${r.label} explore`, explore: true }));
  return [...plain, ...deviations, ...controlled, ...explored];
}

/** How a run was made, for a table: "spec", "mtn-sandbox", "spec --strict", "spec @beyond-spec". */
const runOf = (r: Way) => `${r.explore ? 'explore ' : ''}${r.profile}${r.strict ? ' --strict' : ''}${r.beyondSpec ? ' @beyond-spec' : ''}`;

export function mutationTable(report: MutationReport): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  const lines = [
    `Measured ${report.when.slice(0, 10)} by \`npm run mutation\`${report.scoped ? ' -- --scoped' : ''} in ${(report.durationMs / 60_000).toFixed(1)} min: ` +
      `**${report.detected} of ${report.deviations.length} deviations detected**, ` +
      `**${report.variationsPassed} of ${report.variations.length} runs of conforming variations passed**, ` +
      `**${report.independentPassed} of ${report.independent.length} runs of independent servers passed**, ` +
      `**${report.blindDetected} of ${report.blindDeviations.length} deviations written blind into them detected**${blindByWay(report)}, ` +
      `**${report.faithfulPassed} of ${report.faithful.length} faithful runs passed**.`,
    '',
    '| deviation | feature | run | detected | scenarios that failed |',
    '|---|---|---|---|---|',
    ...report.deviations.map(
      (d) =>
        `| \`${d.deviation}\`: ${cell(d.summary)} | ${d.feature} | ${runOf(d)} | ${d.detected ? (d.caughtByItsFeature ? 'yes' : 'yes (by another feature)') : `**no** (exit ${d.exitCode})`} | ${cell(scenarioList(d.failed))} |`,
    ),
  ];
  if (report.variations.length > 0) {
    lines.push(
      '',
      '| conforming variation | allowed by | profile | passed | warnings | scenarios that failed |',
      '|---|---|---|---|---|---|',
    );
    for (const v of report.variations)
      lines.push(
        `| \`${v.variation}\`: ${cell(v.summary)} | ${cell(v.allowedBy)} | ${v.profile} | ${v.conforms ? 'yes' : `**no** (exit ${v.exitCode})`} | ${v.warnings} | ${cell(scenarioList(v.failed))} |`,
      );
  }
  if (report.independent.length > 0) {
    lines.push(
      '',
      '| independent server | control | allowed by | profile | passed | warnings | scenarios that failed |',
      '|---|---|---|---|---|---|---|',
    );
    for (const r of report.independent)
      lines.push(
        `| ${r.independent!.server} | ${r.independent!.control ? `\`${r.independent!.control}\`: ${cell(r.independent!.effect ?? '')}` : 'none: its own choices'} | ${cell(r.independent!.clause ?? 'its README')} | ${r.profile} | ${r.conforms ? 'yes' : `**no** (exit ${r.exitCode})`} | ${r.warnings} | ${cell(scenarioList(r.failed))} |`,
      );
  }
  if (report.blindDeviations.length > 0) {
    lines.push('', '| deviation written blind | breaks | run | detected | scenarios that failed |', '|---|---|---|---|---|');
    for (const r of report.blindDeviations)
      lines.push(
        `| ${r.independent!.server} \`${r.independent!.deviation}\`: ${cell(r.independent!.effect ?? '')} | ${cell(r.independent!.clause ?? '')} | ${runOf(r)} | ${r.detected ? (r.byReading ? 'yes, by a reading' : r.onlyBeyondSpec ? 'yes, beyond the spec' : 'yes') : `**no** (exit ${r.exitCode}; tried ${(r.tried ?? [runOf(r)]).join(', ')}${alsoPlain(r)})`} | ${cell(scenarioList(r.failed))} |`,
      );
  }
  if (report.faithful.length > 0) {
    lines.push('', '| faithful run | exit | passed | failed | not tested | seconds |', '|---|---|---|---|---|---|');
    for (const r of report.faithful)
      lines.push(
        `| ${r.label} | ${r.exitCode} | ${r.passed} | ${r.failed.length} | ${r.notTested} | ${(r.durationMs / 1000).toFixed(1)} |`,
      );
  }
  return lines.join('\n');
}

/** "; in spec --strict it fails only the 2 scenarios its server fails plain": why a failing strict or beyond-spec run detected nothing. */
const alsoPlain = (r: RunResult) =>
  (r.failedAlsoPlain ?? [])
    .map(({ way, scenarios }) => `; in ${way} it fails only the ${scenarios} scenarios its server fails plain`)
    .join('');

/**
 * " (20 in a default run, 3 only by a reading under --strict, 1 only beyond the spec)": how the blind deviations were
 * caught, when any were.
 */
function blindByWay(report: MutationReport): string {
  if (report.blindDetected === 0) return '';
  const byExplore = report.blindDeviations.filter((d) => d.detected && d.explore).length;
  const byDefault = report.blindDetected - report.blindDetectedByReading - report.blindDetectedBeyondSpec - byExplore;
  const explored = byExplore ? `, ${byExplore} only by the seeded exploration` : '';
  const beyond = report.blindDetectedBeyondSpec ? `, ${report.blindDetectedBeyondSpec} only beyond the spec` : '';
  return ` (${byDefault} in a default run${explored}, ${report.blindDetectedByReading} only by a reading under --strict${beyond})`;
}

/** The first few failed scenarios, by feature; the JSON results hold them all. */
function scenarioList(failed: RunResult['failed'], shown = 3): string {
  if (failed.length === 0) return '—';
  const names = failed.map((f) => `${f.uri.replace(/^features\//, '').replace(/\.feature$/, '')}: ${f.scenario}`);
  return names.length > shown ? `${names.slice(0, shown).join('; ')}; and ${names.length - shown} more` : names.join('; ');
}

function writeDoc(report: MutationReport): void {
  const section = `${BEGIN}\n${mutationTable(report)}\n${END}`;
  const current = existsSync(DOC) ? readFileSync(DOC, 'utf8') : '';
  const start = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  const next =
    start >= 0 && end > start ? `${current.slice(0, start)}${section}${current.slice(end + END.length)}` : `${current}\n${section}\n`;
  writeFileSync(DOC, next);
}

type MutationArguments = ReturnType<typeof parseCommandLine<typeof MUTATION_OPTIONS>>['values'];

async function main(argv: string[]): Promise<number> {
  let values: MutationArguments;
  try {
    values = parseCommandLine(argv, MUTATION_OPTIONS).values;
  } catch (error) {
    if (!(error instanceof CommandLineError)) throw error;
    console.error(`${error.message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const chosen = chosenRuns(values);
  const unlisted = unlistedBlindDeviations(chosen.blind);
  if (unlisted.length > 0) {
    console.error(`no such deviation written blind: ${unlisted.join(', ')}; \`<server> --list-deviations\` lists each server's own`);
    return 2;
  }
  // As given, from where the command runs (an absolute path stays one); by default under the project.
  const reportsDir = values.reports === undefined ? join(ROOT, 'reports/mutation') : resolve(values.reports);
  mkdirSync(reportsDir, { recursive: true });
  const report = await runMutation({ ...chosen, scoped: Boolean(values.scoped), reportsDir, log: (line) => console.log(line) });
  writeFileSync(join(reportsDir, 'results.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\n${mutationTable(report)}\n`);
  console.log(`Results: ${relative(process.cwd(), join(reportsDir, 'results.json'))}`);
  // The table in the docs is of a whole run only.
  if (!values['no-docs'] && !chosen.narrowed) {
    writeDoc(report);
    console.log(`Table written to ${relative(process.cwd(), DOC)}`);
  }
  const weather = await runWeather(chosen.weatherSeeds, chosen.jobs, reportsDir, !values['no-docs']);
  return exitCodeOf(report, weather);
}

/** The deviations, variations and independent servers named (all by default, none with `none`), and the counts. */
function chosenRuns(values: MutationArguments) {
  const narrowed =
    values.only !== undefined ||
    values.variations !== undefined ||
    values.independent !== undefined ||
    values.blind !== undefined ||
    Boolean(values.scoped);
  return {
    only: (values.only ?? FAULT_NAMES) as FaultName[],
    variations: (values.variations ?? VARIATION_NAMES) as VariationName[],
    independent: (values.independent ?? INDEPENDENT_SERVERS) as IndependentServerName[],
    blind: values.blind,
    jobs: Math.max(1, values.jobs ?? 2 * cpus().length),
    faithfulRuns: values['faithful-runs'] ?? 10,
    weatherSeeds: values.weather ?? (narrowed ? 0 : 5),
    narrowed,
  };
}

/** The `--blind` deviations their server does not list, as `server:name`. */
function unlistedBlindDeviations(blind: { server: IndependentServerName; name: string }[] | undefined): string[] {
  const listed = new Map<IndependentServerName, string[]>();
  const listOf = (server: IndependentServerName) => {
    if (!listed.has(server))
      listed.set(
        server,
        switchesOf(server, 'deviation').map((d) => d.name),
      );
    return listed.get(server)!;
  };
  return (blind ?? []).filter((d) => !listOf(d.server).includes(d.name)).map((d) => `${d.server}:${d.name}`);
}

/** 0 when every deviation was caught and every conforming run passed, 2 when no run could run, else 1. */
function exitCodeOf(report: MutationReport, weather: WeatherRun[]): number {
  const runs = [...report.deviations, ...report.variations, ...report.independent, ...report.blindDeviations, ...report.faithful];
  const couldNotRun = runs.filter((r) => r.exitCode === 2 || r.exitCode === null);
  if (couldNotRun.length > 0 && couldNotRun.length === runs.length) return 2;
  const all =
    report.detected === report.deviations.length &&
    report.variationsPassed === report.variations.length &&
    report.independentPassed === report.independent.length &&
    report.blindDetected === report.blindDeviations.length &&
    report.faithfulPassed === report.faithful.length &&
    weather.every((r) => r.ok);
  return all ? 0 : 1;
}

/** The weather runs (sandbox-quality/weather): each logged as it ends, then their table, into the doc when asked. */
async function runWeather(seeds: number, jobs: number, reportsDir: string, toDocs: boolean): Promise<WeatherRun[]> {
  if (seeds === 0) return [];
  const planned = weatherRuns(seeds);
  console.log(`\n${planned.length} runs under weather, ${jobs} at a time.`);
  const when = new Date().toISOString();
  const results = await pooled(
    planned.map(
      ({ weather, expect }, i) =>
        () =>
          runUnderWeather(weather, expect, join(reportsDir, 'weather', String(i + 1))),
    ),
    jobs,
    (r, done) =>
      console.log(
        `[${done}/${planned.length}] ${r.weather} (${r.profile}): exit ${r.exitCode}, ${r.passed} passed, ${r.failed.length} failed, ${r.notTested} not tested${r.ok ? '' : ' — NOT AS IT MUST BE'} in ${(r.durationMs / 1000).toFixed(1)} s${r.failed.map((f) => `\n    failed: ${f}`).join('')}`,
      ),
  );
  writeFileSync(join(reportsDir, 'weather.json'), `${JSON.stringify(results, null, 2)}\n`);
  const table = weatherTable(results, when, seeds);
  console.log(`\n${table}\n`);
  if (toDocs) {
    writeWeatherTable(DOC, table);
    console.log(`Weather table written to ${relative(process.cwd(), DOC)}`);
  }
  return results;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(`npm run mutation stopped on an unexpected error: ${(error as Error).message}`);
      process.exit(2);
    },
  );
}
