import { join, resolve } from 'node:path';
import { CommandLineError, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import { helpText } from '../../core/command-help.ts';
import { wholeNumber } from '../../core/option-values.ts';
import { ConfigError, loadConfig, type HarnessConfig } from '../../harness/config.ts';
import { probeTarget } from '../../harness/target.ts';
import { scanForSecrets } from '../../harness/secrets/leak-scan.ts';
import { describeSource } from '../../core/sources.ts';
import type { SandboxPlugin } from '../../sandbox/domain/plugins.ts';
import type { CommandContext } from '../runner/command-context.ts';
import { dotEnv, pluginsOf, remoteTarget } from '../runner/conformance.ts';
import { startEmbeddedTarget, type Target } from '../runner/target.ts';
import { runCampaign, type CampaignResult } from './campaign.ts';
import { ExplorationSession } from './session.ts';
import { REPORT_FILES, reportOf, writeReports, type ExploreRun } from './reports.ts';

/** The seed when none is given: fixed, so that two explorations of one target try the same sequences. */
export const DEFAULT_SEED = 20260310;

/** The flags of `momo-harness explore`, each declared once: the parser, the usage text and the docs read them here. */
export const EXPLORE_OPTIONS = {
  seed: {
    type: 'string',
    value: '<n>',
    default: String(DEFAULT_SEED),
    describe: "fast-check's seed: the same seed tries the same sequences",
    parse: wholeNumber(-(2 ** 31), 2 ** 31 - 1, 7),
  },
  runs: { type: 'string', value: '<n>', default: '100', describe: 'sequences of commands to try', parse: wholeNumber(1, 1_000_000, 300) },
  'max-commands': {
    type: 'string',
    value: '<n>',
    default: '20',
    describe: 'the most commands in one sequence',
    parse: wholeNumber(1, 1000, 30),
  },
  'time-limit': {
    type: 'string',
    value: '<seconds>',
    default: '600',
    describe: 'stop calling the target after this long, shrinking included',
    parse: wholeNumber(1, 7 * 24 * 3600, 120),
  },
  'max-calls': {
    type: 'string',
    value: '<n>',
    default: '5000',
    describe:
      'the most calls to the target, setup and shrinking included: a hard cap (a call the careful client makes again may pass it by its own retries)',
    parse: wholeNumber(1, 10_000_000, 2000),
  },
  reports: {
    type: 'string',
    value: '<dir>',
    default: 'reports/explore',
    describe: 'where `explore.json`, `junit.xml` and, with a departure, `replay.mjs` go',
  },
  help: { type: 'boolean', short: 'h', describe: 'the usage text' },
} as const satisfies OptionSpecs;

const USAGE = helpText({
  usage: `momo-harness explore [options]
       (in a clone: npm run explore -- [options])`,
  about: `Seeded exploration: random sequences of operations, valid and invalid, drawn from a seed by fast-check's
model-based testing, against the embedded reference sandbox or the server MOMO_BASE_URL names. Each answer is held
to the harness's named checks; a definite departure is shrunk to the fewest calls that show it, and written as a
replay (a node script that reads only MOMO_* variables), a JSON report and a JUnit file.`,
  options: EXPLORE_OPTIONS,
  after: 'Exit codes: 0 nothing found, 1 a definite departure found (replay written), 2 could not test.',
});

/** What `momo-harness explore` is given (command-context.ts). */
export type ExploreOptions = CommandContext;

/** The exploration cannot start, for a reason that is the user's to fix or the target's: exit 2 with one line. */
class CouldNotTest extends Error {}

interface ExplorePlan extends ExploreRun {
  reportsDir: string;
  config: HarnessConfig;
  plugins: SandboxPlugin[];
  varied: SandboxPlugin[];
}

/** One exploration, from arguments to exit code. */
export async function runExplore(options: ExploreOptions): Promise<number> {
  const { log } = options;
  let plan: ExplorePlan;
  try {
    const values = parsed(options.argv, options.env);
    if (values.help) {
      log(USAGE);
      return 0;
    }
    plan = planOf(values, options);
  } catch (error) {
    if (!(error instanceof CouldNotTest || error instanceof ConfigError)) throw error;
    log(error.message);
    return 2;
  }
  const target = await startTarget(plan).catch((error: Error) => error);
  if (target instanceof Error) {
    log(`Could not start the target: ${target.message}`);
    return 2;
  }
  try {
    return await explore(plan, target, log);
  } finally {
    await target.stop();
  }
}

function parsed(argv: string[], env: ExploreOptions['env']) {
  try {
    return parseCommandLine(argv, EXPLORE_OPTIONS, { env }).values;
  } catch (error) {
    if (error instanceof CommandLineError) throw new CouldNotTest(`${error.message} (momo-harness explore --help lists the options)`);
    throw error;
  }
}

function planOf(values: ReturnType<typeof parsed>, { env, cwd, faults, variations }: ExploreOptions): ExplorePlan {
  const config = loadConfig({ ...dotEnv(cwd), ...env });
  try {
    return {
      seed: values.seed ?? DEFAULT_SEED,
      runs: values.runs ?? 100,
      maxCommands: values['max-commands'] ?? 20,
      timeLimitSeconds: values['time-limit'] ?? 600,
      maxCalls: values['max-calls'] ?? 5000,
      reportsDir: resolve(cwd, values.reports ?? 'reports/explore'),
      target: '',
      config,
      plugins: pluginsOf('MOMO_SANDBOX_DEVIATIONS', config.embeddedDeviations, faults, 'the deliberate deviations'),
      varied: pluginsOf('MOMO_SANDBOX_VARIATIONS', config.embeddedVariations, variations, 'the conforming variations'),
    };
  } catch (error) {
    if (error instanceof CouldNotTest) throw error;
    throw new CouldNotTest(`${(error as Error).message}.`);
  }
}

function startTarget({ config, plugins, varied }: ExplorePlan): Promise<Target> {
  return config.baseUrl ? Promise.resolve(remoteTarget(config)) : startEmbeddedTarget(config, plugins, varied);
}

/** The exploration of a started target: probed, set up, the campaign, its reports, the scan for secrets; the exit code. */
async function explore(plan: ExplorePlan, target: Target, log: ExploreOptions['log']): Promise<number> {
  // The settings only: the configuration holds the subscription keys, which no report may carry.
  const { seed, runs, maxCommands, maxCalls, timeLimitSeconds } = plan;
  const run: ExploreRun = { target: target.description, seed, runs, maxCommands, maxCalls, timeLimitSeconds };
  const deadline = Date.now() + plan.timeLimitSeconds * 1000;
  const session = new ExplorationSession(target.config, { maxCalls: plan.maxCalls, deadline });
  let result: CampaignResult | undefined;
  let reason: string | undefined;
  try {
    await probeTarget(target.config);
    await session.prepare().catch((error: Error) => {
      throw new Error(`The exploration could not set up its API users: ${error.message}`);
    });
    log(`Exploring ${target.description}`);
    log(
      `Seed ${plan.seed}: ${plan.runs} runs of up to ${plan.maxCommands} commands, profile ${session.run.profile}, at most ${plan.maxCalls} calls and ${plan.timeLimitSeconds} s`,
    );
    result = await runCampaign(session, { seed: plan.seed, runs: plan.runs, maxCommands: plan.maxCommands }, (p) =>
      log(
        `  ${p.shrinkTries > 0 ? `shrinking: ${p.shrinkTries} sequences tried` : `${p.runs} of ${plan.runs} runs`} · ${p.calls} calls · ${(p.elapsedMs / 1000).toFixed(1)} s`,
      ),
    );
  } catch (error) {
    reason = (error as Error).message;
  } finally {
    await session.close();
  }
  if (session.crashed) throw session.crashed;
  const report = reportOf(run, session, result, reason);
  writeReports(plan.reportsDir, report, session, result);
  for (const line of closingLines(report, plan.reportsDir)) log(line);
  const leaks = scanForSecrets(plan.reportsDir, session.secrets());
  for (const leak of leaks) log(`SECRET IN REPORT: ${leak.file} holds ${leak.kind}; do not share these reports.`);
  if (leaks.length > 0) return 2;
  return { 'departure found': 1, 'could not test': 2, 'nothing found': 0 }[report.outcome];
}

/** What the terminal says at the end: the outcome, the shrunk sequence and its finding, and where the files are. */
function closingLines(report: ReturnType<typeof reportOf>, dir: string): string[] {
  const files = `Report: ${join(dir, REPORT_FILES.report)} (also ${REPORT_FILES.junit})`;
  // What kept the exploration from testing comes first, on its own line.
  if (report.outcome === 'could not test') return [report.reason ?? 'The exploration could not test.', files];
  const lines = [
    `${report.runsDone} runs, ${report.calls} calls, ${(report.durationMs / 1000).toFixed(1)} s${report.stopped ? `; stopped early: ${report.stopped}` : ''}`,
  ];
  const departure = report.departure;
  if (departure) {
    const first = departure.firstFound;
    lines.push(
      `Departure found in run ${first.afterRuns} (a sequence of ${plural(first.commands, 'command')}, ${plural(first.calls, 'call')}); shrunk in ${departure.shrinkTries} tries to ${plural(departure.commands.length, 'command')}, ${plural(departure.calls, 'call')}:`,
      ...departure.commands.map((c, i) => `  ${i + 1}. ${c}`),
      ...departure.findings.map(
        (f) =>
          `  ✘ ${f.check} (${describeSource(f.source)}): ${f.field !== undefined ? `${f.field}: ` : ''}expected ${f.expected}, got ${f.received}`,
      ),
      `Replay: ${join(dir, REPORT_FILES.replay)} (node, with the MOMO_* variables of the target set)`,
    );
  } else lines.push(`Nothing found: no definite departure (${plural(report.warnings.length, 'warning')} in the report).`);
  return [...lines, files];
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
