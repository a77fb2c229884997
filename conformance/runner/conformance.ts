import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { Writable } from 'node:stream';
import { loadConfiguration, runCucumber } from '@cucumber/cucumber/api';
import { ConfigError, isLoopback, loadConfig, type HarnessConfig } from '../../harness/config.ts';
import { EvidenceCollector } from '../certification/evidence.ts';
import { CatalogueError } from '../certification/requirements.ts';
import { loadCatalogueAndWaivers, writeCertification } from '../certification/finished-run.ts';
import { WaiverError } from '../certification/waivers.ts';
import { KeyFileError, readPrivateKey } from '../certification/signing.ts';
import type { KeyObject } from 'node:crypto';
import { BaselineError, FAIL_ON, loadBaseline, type Baseline, type FailOn } from '../certification/baseline.ts';
import { ScenarioLedger, type RunSummary } from '../results/verdict-stream.ts';
import { scanForSecrets, type Leak } from '../../harness/secrets/leak-scan.ts';
import { scanBundleForSecrets } from '../certification/bundle.ts';
import { environmentFor, probeTarget } from '../../harness/target.ts';
import { preflight, refusalLines } from '../../harness/preflight.ts';
import { startEmbeddedTarget, type Target } from './target.ts';
import { BEYOND_SPEC_TAG, STRICT_TAG, TWO_CUSTOMERS_TAG } from '../certification/requirements.ts';
import { DIFFERENCES } from '../../core/profiles.ts';
import type { SandboxPlugin } from '../../sandbox/domain/plugins.ts';
import type { CommandContext } from './command-context.ts';
import { CODE_EXTENSION, PACKAGE_ROOT, codeDir } from '../../core/package.ts';
import { CommandLineError, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import { helpText } from '../../core/command-help.ts';
import { oneOf, wholeNumber } from '../../core/option-values.ts';
import { RerunError, scenariosToRerun } from './rerun.ts';
import { TagSelectionError, checkTagExpression } from './tag-selection.ts';
import { readScenarios } from '../certification/coverage.ts';
import { parse as parseTagExpression } from '@cucumber/tag-expressions';
import { appendHistory, checkHistoryFile, corruptLineWarnings, historyRecordOf, HistoryError, readHistory } from '../trend/history.ts';
import { renderTrend } from '../trend/page.ts';

export const EXIT = { conforms: 0, doesNotConform: 1, couldNotTest: 2 } as const;

/**
 * Worker processes by default. A run mostly waits on the target (answers, outcomes, callbacks, the careful client's
 * retries), so four workers on two cores finish sooner than two, against the embedded sandbox too, and keep a
 * target's slow periods from adding up; a provider's sandbox sees at most four calls at a time.
 */
export const DEFAULT_WORKERS = 4;
/**
 * Worker processes by default against the embedded sandbox, the run's own: it waits on the sandbox's timers (expiries,
 * delayed outcomes, callback quiet times) far more than it computes, so six finish sooner on two cores still (`npm
 * start`, one session, quiet machine: 33.5 s with six against 42.6 s with four; docs/performance.md).
 */
export const EMBEDDED_WORKERS = 6;

/** The options of `momo-harness run` (npm start), each declared once (core/command-line.ts). */
export const RUN_OPTIONS = {
  tags: {
    type: 'string',
    value: '<expression>',
    describe:
      'run only the scenarios the tag expression selects, e.g. `"@smoke"` or `"@collection and not @slow"`; a remote target runs the `@beyond-spec` scenarios (operations the live service has and the spec does not list) only when the expression names `@beyond-spec`',
  },
  strict: {
    type: 'boolean',
    env: 'MOMO_STRICT',
    describe:
      'hold the target to the strict readings too (`momo-harness sandbox --list-differences` lists them) and run the `@strict` scenarios, which are left out otherwise',
  },
  parallel: {
    type: 'string',
    value: '<workers>',
    default: String(DEFAULT_WORKERS),
    describe: 'worker processes; 0 runs in this process',
    parse: wholeNumber(0, 16, DEFAULT_WORKERS),
  },
  reports: {
    type: 'string',
    value: '<dir>',
    default: 'reports/conformance',
    describe: 'where the reports go; the certification report in `reports/certification`, or `<dir>/certification`',
  },
  retries: {
    type: 'string',
    value: '<n>',
    env: 'MOMO_RETRIES',
    default: '1',
    describe:
      'run a failed scenario again up to n times; one that passes on a rerun is FLAKY: reported apart, never PASS, and it does not fail the run',
    // The bounds of MOMO_RETRIES, which the option sets (harness/config.ts).
    parse: wholeNumber(0, 5, 1),
  },
  baseline: {
    type: 'string',
    value: '<file>',
    describe:
      'compare with an earlier run: its `certification.json` or its evidence bundle (`.tar.gz`); every requirement and scenario is then new failure, fixed, still failing, still passing, flaky, not tested or new (docs/nightly.md#baseline)',
  },
  'fail-on': {
    type: 'string',
    value: 'new|any',
    default: 'any',
    describe: 'with --baseline: `new` exits 1 only for new failures, `any` for any failure',
    parse: oneOf(FAIL_ON),
  },
  history: {
    type: 'string',
    value: '<file>',
    describe:
      'append one record of this run (NDJSON) to the file, and draw the trend of every run in it (`reports/trend/index.html`, or `<dir>/trend`)',
  },
  'rerun-failed': {
    type: 'string',
    value: '<summary.json>',
    describe: 'run only the failed and flaky scenarios of an earlier run, read from its `summary.json`',
  },
  'sign-key': {
    type: 'string',
    value: '<file>',
    describe:
      "sign the evidence bundle with this Ed25519 private key (PEM; `momo-harness keygen` makes one): an in-toto statement of the run's result over every file, in a DSSE envelope",
  },
  help: { type: 'boolean', describe: 'the usage text' },
} as const satisfies OptionSpecs;

const USAGE = helpText({
  usage: 'momo-harness run [options]     (in a clone: npm start -- [options])',
  about: `Runs the conformance suite (features/) against the embedded reference sandbox, or against the server
MOMO_BASE_URL names (see .env.example), and writes HTML, JSON, NDJSON and JUnit reports, and the
certification report: a verdict per requirement, coverage, and a bundle of the evidence (momo-harness verify).`,
  options: RUN_OPTIONS,
  after: 'Exit codes: 0 the target conforms, 1 it does not, 2 the run could not test (target down, configuration wrong).',
});

/** What `momo-harness run` is given (command-context.ts). */
export type RunOptions = CommandContext;

/** The run stops before it can test, for a reason that is the user's to fix: exit 2, could not test. */
class CouldNotTest extends Error {}

/** Errors of the user's input that stop a run before it starts, each saying what to fix. */
const INPUT_ERRORS = [TagSelectionError, BaselineError, RerunError, HistoryError, ConfigError, CatalogueError, WaiverError, KeyFileError];

type RunArguments = ReturnType<typeof parseCommandLine<typeof RUN_OPTIONS>>['values'];

/** What the user asked for, checked before the target is touched. */
interface RunPlan {
  args: RunArguments;
  cwd: string;
  parallel: number;
  failOn: FailOn;
  baseline?: Baseline;
  rerun?: string[];
  historyFile?: string;
  config: HarnessConfig;
  certificationBasis: ReturnType<typeof loadCatalogueAndWaivers>;
  signingKey?: KeyObject;
  /** The deliberate deviations and conforming variations the embedded sandbox takes. */
  plugins: SandboxPlugin[];
  varied: SandboxPlugin[];
  /** The run's tag expression, and what it leaves out of the user's selection. */
  tags: string;
  notes: string[];
}

/** A target ready for the scenarios: reachable or not, the settings it refuses, the workers and the reports folder. */
interface PreparedRun {
  target: Target;
  unreachable?: string;
  refusals: Awaited<ReturnType<typeof preflight>>;
  parallel: number;
  reportsDir: string;
}

/** One conformance run, from arguments to exit code. */
export async function runConformance(options: RunOptions): Promise<number> {
  const { log } = options;
  try {
    const args = argumentsOf(options);
    if (args.help) {
      log(USAGE);
      return EXIT.conforms;
    }
    const plan = await planOf(args, options);
    const target = await startTarget(plan);
    const run = await prepare(plan, target, log);
    const { summary, evidence } = await runScenarios(plan, run, log);
    return await reportOn(plan, run, summary, evidence, log);
  } catch (error) {
    if (error instanceof CouldNotTest || INPUT_ERRORS.some((kind) => error instanceof kind)) {
      log((error as Error).message);
      return EXIT.couldNotTest;
    }
    throw error;
  }
}

function argumentsOf({ argv, env }: RunOptions): RunArguments {
  try {
    return parseCommandLine(argv, RUN_OPTIONS, { env }).values;
  } catch (error) {
    if (error instanceof CommandLineError) throw new CouldNotTest(`${error.message}\n\n${USAGE}`);
    throw error;
  }
}

/** Every option and setting checked, and every file read, before the target starts. */
async function planOf(args: RunArguments, options: RunOptions): Promise<RunPlan> {
  const { cwd, log } = options;
  const settings = settingsOf(args, options);
  const { parallel, failOn } = checkedOptions(args, settings.config.baseUrl === undefined);
  // The user's own selection is checked against the feature files before anything starts (tag-selection.ts).
  const selected = args.tags === undefined ? undefined : checkTagExpression(args.tags, readScenarios());
  // A baseline that cannot be compared with stops the run before it starts: it is the user's to fix.
  const baseline = args.baseline === undefined ? undefined : { ...(await loadBaseline(resolve(cwd, args.baseline))), file: args.baseline };
  // The scenarios of an earlier run to run again: only they are selected (features/x.feature:line).
  const rerun = args['rerun-failed'] === undefined ? undefined : scenariosToRerun(resolve(cwd, args['rerun-failed']));
  const historyFile = args.history === undefined ? undefined : resolve(cwd, args.history);
  if (historyFile) checkHistoryFile(historyFile);
  if (rerun)
    log(
      `Running again the ${rerun.length} failed or flaky scenario${rerun.length === 1 ? '' : 's'} of ${args['rerun-failed']}: ${rerun.join(' ')}`,
    );
  // What this target and run leave out of the user's selection is known before the target starts.
  // They are said after what the target says of itself (unreachable, a refused setting), which comes first.
  const { expression: tags, notes } = selectScenarios(args.tags, {
    embedded: settings.config.baseUrl === undefined,
    config: settings.config,
  });
  if (selected && !rerun && !selected.some((scenario) => parseTagExpression(tags).evaluate(scenario.tags))) {
    for (const note of notes) log(note);
    throw new CouldNotTest(
      `--tags "${args.tags}" selects ${selected.length} scenario${selected.length === 1 ? '' : 's'}, and this run leaves out each of them (see above): nothing is left to test.`,
    );
  }
  return {
    args,
    cwd,
    parallel,
    failOn,
    ...settings,
    tags,
    notes,
    ...(baseline ? { baseline } : {}),
    ...(rerun ? { rerun } : {}),
    ...(historyFile ? { historyFile } : {}),
  };
}

/** The options with their defaults; --fail-on only with --baseline. Their values are parsed with the command line. */
function checkedOptions(args: RunArguments, embedded: boolean): { parallel: number; failOn: FailOn } {
  const parallel = args.parallel ?? (embedded ? EMBEDDED_WORKERS : DEFAULT_WORKERS);
  const failOn = args['fail-on'] ?? 'any';
  if (args['fail-on'] !== undefined && args.baseline === undefined)
    throw new CouldNotTest(
      '--fail-on says which changes since a baseline fail the run: give the baseline with --baseline <certification.json or bundle>.',
    );
  return { parallel, failOn };
}

/** The harness's settings (the environment over ./.env), the certification's basis, the signing key and the plugins. */
function settingsOf(
  args: RunArguments,
  { env, cwd, faults, variations }: RunOptions,
): Pick<RunPlan, 'config' | 'certificationBasis' | 'signingKey' | 'plugins' | 'varied'> {
  const config = loadConfig({
    ...dotEnv(cwd),
    ...env,
    ...(args.strict ? { MOMO_STRICT: 'true' } : {}),
    ...(args.retries !== undefined ? { MOMO_RETRIES: String(args.retries) } : {}),
  });
  const certificationBasis = loadCatalogueAndWaivers(cwd, config.waiversFile);
  // A key that cannot sign is found before the target is touched, not after a long run.
  const signingKey = args['sign-key'] === undefined ? undefined : readPrivateKey(resolve(cwd, args['sign-key']));
  try {
    return {
      config,
      certificationBasis,
      ...(signingKey ? { signingKey } : {}),
      plugins: pluginsOf('MOMO_SANDBOX_DEVIATIONS', config.embeddedDeviations, faults, 'the deliberate deviations'),
      varied: pluginsOf('MOMO_SANDBOX_VARIATIONS', config.embeddedVariations, variations, 'the conforming variations'),
    };
  } catch (error) {
    throw new CouldNotTest(`${(error as Error).message}.`);
  }
}

/** The remote target, or the embedded sandbox with the deviations and variations the settings name. */
async function startTarget({ config, plugins, varied }: RunPlan): Promise<Target> {
  if (config.baseUrl) return remoteTarget(config);
  try {
    return await startEmbeddedTarget(config, plugins, varied);
  } catch (error) {
    throw new CouldNotTest(`Could not start the target: ${(error as Error).message}`);
  }
}

/** Whether the target answers, the settings it refuses, the workers, and the reports folder; said before any scenario. */
async function prepare(plan: RunPlan, target: Target, log: RunOptions['log']): Promise<PreparedRun> {
  const { config, args, tags } = plan;
  // A target that cannot be reached still gets its reports: the run goes on, and each selected scenario ends
  // at once as not tested with the cause (steps/support/hooks.ts), so every report lists every scenario.
  const unreachable = await probeTarget(target.config).then(
    () => undefined,
    (error: Error) => error.message,
  );
  if (unreachable) log(`${unreachable}\nEvery selected scenario is reported as not tested, with this cause.`);
  // A setting the target refuses (a rotated key, another environment) is named before any scenario, and stops only
  // the scenarios that need it: they are not tested, and the run could not test rather than "does not conform".
  // The embedded sandbox takes the settings the run gave it.
  const refusals = unreachable || target.embedded ? {} : await preflight(target.config);
  for (const line of refusalLines(refusals)) log(line);
  for (const note of plan.notes) log(note);
  const workers = selectWorkers(plan.parallel, config);
  if (workers.note) log(workers.note);
  // Against an unreachable target each scenario ends at once: worker processes would only cost their start.
  const parallel = unreachable ? 0 : workers.parallel;
  const reportsDir = resolve(plan.cwd, args.reports ?? 'reports/conformance');
  mkdirSync(reportsDir, { recursive: true });
  log(`Testing ${target.description}`);
  log(
    `Profile ${config.profile}${config.strict ? ', strict readings on' : ''}${tags ? `, scenarios ${tags}` : ''}, ${parallel || 'no'} parallel workers; reports in ${reportsDir}`,
  );
  return { target, refusals, parallel, reportsDir, ...(unreachable ? { unreachable } : {}) };
}

/**
 * The feature files whose scenarios wait out lifetimes (tokens expiring, consents aging) come first, the rest after in
 * name order. Cucumber hands scenarios to idle workers in file order, so a long wait started last would keep one worker
 * busy while the others stand idle: the run then takes its longest scenario longer than its share of the work.
 */
export const LONGEST_WAITS_FIRST = ['consent.feature', 'tokens.feature', 'every-operation.feature'] as const;

export function featuresLongestFirst(): string[] {
  const others = join(PACKAGE_ROOT, 'features/**/*.feature');
  return [...LONGEST_WAITS_FIRST.map((file) => join(PACKAGE_ROOT, 'features', file)), others];
}

/** The scenarios through cucumber, their verdicts kept by the ledger and their exchanges as evidence; the target stopped after. */
async function runScenarios({ config, tags, rerun }: RunPlan, run: PreparedRun, log: RunOptions['log']) {
  const { target, unreachable, reportsDir, parallel, refusals } = run;
  // A target the probe found down keeps every scenario from testing for the one cause said above: a line per
  // scenario as it ends would repeat it some 200 times. The closing lines name them, the cause said once.
  const ledger = new ScenarioLedger(unreachable ? () => {} : log);
  const evidence = new EvidenceCollector();
  const started = Date.now();
  try {
    // The scenarios read the target's settings from the environment, in the one place that reads it.
    Object.assign(process.env, environmentFor(target.config));
    // The embedded sandbox took its deviations and variations; to the scenarios, which test it by URL, it is just the target.
    delete process.env.MOMO_SANDBOX_DEVIATIONS;
    delete process.env.MOMO_SANDBOX_VARIATIONS;
    const { runConfiguration } = await loadConfiguration(
      {
        provided: {
          // The package's own features and steps (compiled or not), wherever the run is started from.
          paths: rerun ? rerun.map((path) => join(PACKAGE_ROOT, path)) : featuresLongestFirst(),
          import: [join(codeDir('steps'), `**/*${CODE_EXTENSION}`)],
          format: [
            ['html', join(reportsDir, 'cucumber.html')],
            ['json', join(reportsDir, 'cucumber.json')],
            ['message', join(reportsDir, 'messages.ndjson')],
            ['junit', join(reportsDir, 'junit.xml')],
          ],
          formatOptions: { junit: { suiteName: 'MoMo conformance' } },
          tags,
          parallel,
          strict: true,
          // A failed scenario runs again (MOMO_RETRIES); passing then makes it flaky (results/ledger.ts). Against a
          // target that did not answer the probe, every scenario ends at once as not tested: nothing to retry.
          retry: unreachable ? 0 : config.retries,
          // workers: how many processes share the evidence budget (MOMO_EVIDENCE_BUDGET_BYTES) of the run.
          worldParameters: { workers: Math.max(1, parallel), refusals, ...(unreachable ? { targetUnreachable: unreachable } : {}) },
        },
        // cucumber's cwd is the package: scenarios are named features/<file>, and no config file of the user's folder is read.
      },
      { cwd: PACKAGE_ROOT, env: process.env, stdout: process.stdout, stderr: process.stderr },
    );
    // The ledger prints the progress and the summary; cucumber's own console formatter is not wanted.
    const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });
    await runCucumber(runConfiguration, { cwd: PACKAGE_ROOT, env: process.env, stdout: quiet, stderr: process.stderr }, (envelope) => {
      ledger.record(envelope);
      evidence.record(envelope);
    });
  } catch (error) {
    throw new CouldNotTest(`The suite could not run: ${(error as Error).message}`);
  } finally {
    await target.stop();
  }
  const summary = ledger.summary({ target: target.description, profile: config.profile, tags, durationMs: Date.now() - started });
  writeFileSync(join(reportsDir, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  for (const line of ledger.closingLines(summary)) log(line);
  log(`Reports: ${join(reportsDir, 'cucumber.html')} (also cucumber.json, messages.ndjson, junit.xml, summary.json)`);
  return { summary, evidence };
}

/** The certification, the history and its trend, and the scan for secrets; the run's exit code. */
async function reportOn(
  plan: RunPlan,
  { target, reportsDir }: PreparedRun,
  summary: RunSummary,
  evidence: EvidenceCollector,
  log: RunOptions['log'],
): Promise<number> {
  const { args, config, cwd } = plan;
  // Beside the conformance reports: reports/certification, or <--reports>/certification.
  const certificationDir = args.reports ? join(reportsDir, 'certification') : resolve(cwd, 'reports/certification');
  const certification = await writeCertification({
    dir: certificationDir,
    conformanceDir: reportsDir,
    config,
    target: {
      bases: { gateway: target.config.baseUrl!, provisioning: target.config.sandboxUrl! },
      callbackHost: target.config.callbackHost,
    },
    summary,
    evidence,
    ...plan.certificationBasis,
    requested: args.tags,
    expression: plan.tags,
    ...(plan.rerun ? { rerunOf: args['rerun-failed'] } : {}),
    ...(plan.baseline ? { baseline: { baseline: plan.baseline, failOn: plan.failOn } } : {}),
    ...(plan.signingKey ? { signingKey: plan.signingKey } : {}),
  });
  for (const line of certification.lines) log(line);
  const trendDir = args.reports ? join(reportsDir, 'trend') : resolve(cwd, 'reports/trend');
  if (plan.historyFile) recordHistory(plan.historyFile, args.history!, trendDir, certification.report, summary, log);
  // The reports get shared: a secret in them fails the run, whatever the verdict.
  // The bundle holds most of the reports as they are: a file of the same bytes is searched once, inside it.
  const searched = new Map<string, Leak[]>();
  const inBundle = await scanBundleForSecrets(certification.bundle, secretsOf(target), searched);
  const leaks = [
    ...scanForSecrets(reportsDir, secretsOf(target), searched),
    ...(args.reports ? [] : scanForSecrets(certificationDir, secretsOf(target), searched)),
    ...(plan.historyFile && !args.reports ? scanForSecrets(trendDir, secretsOf(target), searched) : []),
    ...inBundle,
  ];
  if (leaks.length > 0) {
    for (const leak of leaks) log(`SECRET IN REPORT: ${leak.file} holds ${leak.kind}; do not share these reports.`);
    return EXIT.couldNotTest;
  }
  return certification.report.exitCode;
}

/** The history: this run appended as one line, every line before it kept; then the trend of them all. */
function recordHistory(
  file: string,
  named: string,
  trendDir: string,
  report: Parameters<typeof historyRecordOf>[0],
  summary: RunSummary,
  log: RunOptions['log'],
): void {
  appendHistory(file, historyRecordOf(report, summary.durationMs));
  const history = readHistory(file);
  for (const warning of corruptLineWarnings(named, history)) log(warning);
  mkdirSync(trendDir, { recursive: true });
  writeFileSync(join(trendDir, 'index.html'), renderTrend(history, named));
  log(
    `History: ${history.records.length} run${history.records.length === 1 ? '' : 's'} in ${named}; trend: ${join(trendDir, 'index.html')}`,
  );
}

/** The secrets of the run's settings, as they could appear in a report: keys, API keys, Basic credentials. */
function secretsOf(target: Target): string[] {
  return [
    ...Object.values(target.config.subscriptionKeys),
    ...Object.values(target.config.apiUsers).flatMap((user) =>
      user ? [user.apiKey, Buffer.from(`${user.userId}:${user.apiKey}`).toString('base64')] : [],
    ),
  ].filter((s): s is string => typeof s === 'string');
}

/**
 * The tag expression of the run: the user's selection, less what this target cannot or need not take part in.
 * @strict scenarios hold a target to a strict reading, beyond what the spec and the live service make definite:
 * only with --strict (MOMO_STRICT). @beyond-spec scenarios cover operations the live service has and the spec
 * does not list: a remote target runs them only when the selection names @beyond-spec, so one that lacks them is
 * NOT APPLICABLE, never FAIL; the embedded sandbox serves them, and runs them.
 * @stateful scenarios need the reference sandbox's bookkeeping (the live sandbox's balance is always "0");
 * @callback scenarios need a callback host the target can reach (MOMO_CALLBACK_URL's, else MOMO_CALLBACK_HOST),
 * which loopback is not for a remote server.
 */
export function selectScenarios(
  requested: string | undefined,
  target: Pick<Target, 'config' | 'embedded'>,
): { expression: string; notes: string[] } {
  const parts = requested ? [`(${requested})`] : [];
  const notes: string[] = [];
  if (!target.config.strict) {
    parts.push(`not ${STRICT_TAG}`);
    notes.push(
      `Leaving out ${STRICT_TAG} scenarios: they hold the target to strict readings beyond what the spec and the live service make definite; --strict runs them.`,
    );
  }
  if (!DIFFERENCES.userInfoPerCustomer[target.config.profile]) {
    parts.push(`not ${TWO_CUSTOMERS_TAG}`);
    notes.push(
      `Leaving out ${TWO_CUSTOMERS_TAG} scenarios: in the ${target.config.profile} profile every customer's user information is the same record, so two customers cannot be told apart (core/profiles.ts userInfoPerCustomer).`,
    );
  }
  if (!target.embedded) {
    if (!namesTag(requested, BEYOND_SPEC_TAG)) {
      parts.push(`not ${BEYOND_SPEC_TAG}`);
      notes.push(
        `Leaving out ${BEYOND_SPEC_TAG} scenarios: they cover operations the live service has and the spec does not list; --tags ${BEYOND_SPEC_TAG} runs them.`,
      );
    }
    parts.push('not @stateful', 'not @uncertain');
    notes.push("Leaving out @stateful scenarios: they check the reference sandbox's bookkeeping, which a remote target need not keep.");
    notes.push('Leaving out @uncertain scenarios: they rest on test numbers the SDKs document but nobody observed on the live sandbox.');
    // The callbacks go to MOMO_CALLBACK_URL's host when it is set, else to MOMO_CALLBACK_HOST.
    const { callbackUrl, callbackHost } = target.config;
    const callbackTo = callbackUrl ? new URL(callbackUrl).hostname : callbackHost;
    if (isLoopback(callbackTo) && !isLoopback(new URL(target.config.baseUrl!).hostname)) {
      parts.push('not @callback');
      notes.push(
        `Leaving out @callback scenarios: a remote target cannot reach the callback receiver at ${callbackUrl ?? callbackHost}; set MOMO_CALLBACK_URL (e.g. a tunnel) or MOMO_CALLBACK_HOST to an address it can reach.`,
      );
    }
  }
  return { expression: parts.join(' and '), notes };
}

/** Whether a tag expression names a tag (as itself, not as a prefix of another). */
function namesTag(expression: string | undefined, tag: string): boolean {
  return expression !== undefined && new RegExp(`${tag}(?![\\w:-])`).test(expression);
}

/**
 * How many worker processes the run can have. Each worker starts its own callback receiver, so with a fixed
 * MOMO_CALLBACK_PORT a second worker could not listen: the run then uses one process.
 */
export function selectWorkers(requested: number, config: HarnessConfig): { parallel: number; note?: string } {
  if (requested === 0 || config.callbackPort === 0) return { parallel: requested };
  return {
    parallel: 0,
    note: `Running in one process rather than ${requested} parallel workers: the callback receiver listens on the fixed port ${config.callbackPort} (MOMO_CALLBACK_PORT), which only one process can take.`,
  };
}

/** The plugins a setting names (a comma-separated list), made by `make`; throws saying what is wrong. */
export function pluginsOf(
  setting: string,
  list: string | undefined,
  make: ((names: string[]) => SandboxPlugin[]) | undefined,
  what: string,
): SandboxPlugin[] {
  if (list === undefined) return [];
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  try {
    if (!make) throw new Error(`this program was built without ${what}`);
    return make(names);
  } catch (error) {
    throw new Error(`${setting}: ${(error as Error).message}`);
  }
}

/** Settings from ./.env, if there is one; the environment wins over it. */
export function dotEnv(cwd: string): Record<string, string> {
  const file = join(cwd, '.env');
  return existsSync(file) ? (parseEnv(readFileSync(file, 'utf8')) as Record<string, string>) : {};
}

/** The server MOMO_BASE_URL names, as the run's target. */
export function remoteTarget(config: HarnessConfig): Target {
  return {
    description: `${config.baseUrl}${config.sandboxUrl !== config.baseUrl ? ` (provisioning at ${config.sandboxUrl})` : ''}`,
    config,
    embedded: false,
    stop: async () => {},
  };
}
