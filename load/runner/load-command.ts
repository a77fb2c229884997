import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildLoadScripts, scenarioNames } from '../build.ts';
import { PACKAGE_ROOT } from '../../core/package.ts';
import { CommandLineError, parseCommandLine, type OptionSpecs } from '../../core/command-line.ts';
import { helpText } from '../../core/command-help.ts';
import { numberAsWritten } from '../../core/option-values.ts';
import type { SandboxSettings } from '../../sandbox/domain/settings.ts';
import { startEmbeddedSandbox } from '../../sandbox/start.ts';
import { CallbackReceiver } from '../../harness/callbacks/receiver.ts';
import { ConfigError, isLoopback, loadConfig, type HarnessConfig } from '../../harness/config.ts';
import { environmentFor, probeTarget, TargetUnreachableError } from '../../harness/target.ts';
import { scanForSecrets } from '../../harness/secrets/leak-scan.ts';
import { callsByOperation, htmlReport, junitReport, thresholdResults, withoutSetupData, type K6Summary } from './summary.ts';

const ROOT = PACKAGE_ROOT;

/** The options of `momo-harness load`, each declared once (core/command-line.ts). */
export const LOAD_OPTIONS = {
  rate: { type: 'string', value: '<per second>', env: 'LOAD_RATE', describe: 'arrival rate', parse: numberAsWritten(50) },
  duration: {
    type: 'string',
    value: '<seconds>',
    env: 'LOAD_DURATION_SECONDS',
    describe: 'how long the load lasts',
    parse: numberAsWritten(30),
  },
  iterations: {
    type: 'string',
    value: '<n>',
    env: 'LOAD_ITERATIONS',
    describe: 'iterations of the smoke scenario',
    parse: numberAsWritten(10),
  },
  segment: {
    type: 'string',
    value: '<from:to>',
    describe: 'run only this execution segment, e.g. `0:1/2` (k6 `--execution-segment`)',
  },
  'segment-sequence': { type: 'string', value: '<list>', describe: 'all segments of the split run, e.g. `0,1/2,1`' },
  samples: {
    type: 'string',
    value: '<file>',
    describe:
      'also write every raw sample to this file (k6 `--out json=`; `.gz` to gzip it), for `momo-harness load-merge` to combine the segments of a split run',
  },
  reports: { type: 'string', value: '<dir>', default: 'reports/load/<scenario>', describe: 'where the reports go' },
  help: { type: 'boolean', describe: 'the usage text' },
} as const satisfies OptionSpecs;

const USAGE = helpText({
  usage: 'momo-harness load <scenario> [options]      (in a clone: npm run load -- <scenario> ...)',
  about: `Scenarios: ${scenarioNames().join(', ')}

Runs a k6 scenario of load/scenarios against the embedded reference sandbox (started and stopped for you)
or against MOMO_BASE_URL, and writes reports/load/<scenario>/: summary.json (k6's summary), junit.xml,
report.html (k6's web dashboard) and, where callbacks were measured, callbacks.json.`,
  options: LOAD_OPTIONS,
  after: `Every LOAD_* variable (see load/lib/config.ts and load/lib/slo.ts, e.g. LOAD_SLO_P95_MS) is passed to k6.
Exit codes: 0 every threshold held, 1 a threshold (an SLO) was crossed, 2 the run could not test.`,
});

/** What the embedded sandbox needs to be for a scenario to mean something. */
function sandboxFor(scenario: string, env: Record<string, string | undefined>): Partial<SandboxSettings> {
  const number = (name: string, fallback: number) => (env[name] ? Number(env[name]) : fallback);
  switch (scenario) {
    case 'token-expiry-soak':
      return { tokenLifetimeSeconds: number('LOAD_TOKEN_LIFETIME', 5) };
    case 'async-completion':
      return { delayedSuccessMs: number('LOAD_DELAYED_SUCCESS_MS', 1000) };
    default:
      return {};
  }
}

const SCENARIO_DEFAULTS: Record<string, Record<string, string>> = {
  // The smoke run is small enough to record every answer as a k6 check, passed or failed.
  smoke: { LOAD_CHECK_EVERY_ANSWER: '1' },
};

export interface LoadRunOptions {
  argv: string[];
  env: Record<string, string | undefined>;
  log: (line: string) => void;
  /** Where k6's own output goes (the terminal by default). */
  k6Output?: 'inherit' | 'pipe';
}

/** The run stops without a verdict: exit 2, with what to fix (and k6's output, if it ran). */
class CouldNotTest extends Error {
  constructor(
    message: string,
    readonly output = '',
  ) {
    super(message);
  }
}

type LoadArguments = ReturnType<typeof parseCommandLine<typeof LOAD_OPTIONS>>['values'];

export async function runLoad({ argv, env, log, k6Output = 'inherit' }: LoadRunOptions): Promise<{ code: number; output: string }> {
  const stops: (() => Promise<void>)[] = [];
  try {
    const asked = argumentsOf(argv, env);
    if (asked === 'help') {
      log(USAGE);
      return { code: 0, output: '' };
    }
    const { values, scenario } = asked;
    const k6 = spawnSync('bash', [join(ROOT, 'scripts/ensure-k6.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    if (k6.status !== 0) return { code: 2, output: '' };
    const settings = loadConfig(env);
    await buildLoadScripts();
    const config = await targetOf(settings, scenario, env, log, stops);
    const callbacks = await listenForCallbacks(config, stops);
    const reportsDir = resolve(values.reports ?? join('reports/load', scenario));
    rmSync(reportsDir, { recursive: true, force: true });
    mkdirSync(reportsDir, { recursive: true });
    const summaryFile = join(reportsDir, 'summary.json');
    const started = Date.now();
    const { code: k6Code, output } = await runK6(
      k6.stdout.trim(),
      k6Arguments(values, scenario, summaryFile),
      k6EnvOf({ env, scenario, config, values, reportsDir, callbackUrl: callbacks?.baseUrl }),
      k6Output,
    );
    const summary = reportsOf(scenario, { summaryFile, reportsDir, k6Code, output, durationSeconds: (Date.now() - started) / 1000 });
    if (callbacks) writeFileSync(join(reportsDir, 'callbacks.json'), `${JSON.stringify(callbackLatency(callbacks), null, 2)}\n`);
    const leaks = scanForSecrets(
      reportsDir,
      Object.values(config.subscriptionKeys).filter((k): k is string => typeof k === 'string'),
    );
    if (leaks.length > 0) {
      for (const leak of leaks) log(`SECRET IN REPORT: ${leak.file} holds ${leak.kind}; do not share these reports.`);
      return { code: 2, output };
    }
    tellRun(summary, reportsDir, callbacks !== undefined, log);
    // k6 exits 99 when a threshold is crossed: the target missed an SLO. Anything else but 0: k6 could not run.
    return { code: k6Code === 0 ? 0 : k6Code === 99 ? 1 : 2, output };
  } catch (error) {
    if (error instanceof CouldNotTest || error instanceof ConfigError) {
      log(error.message);
      return { code: 2, output: error instanceof CouldNotTest ? error.output : '' };
    }
    log(error instanceof TargetUnreachableError ? error.message : `The load run could not test: ${(error as Error).message}`);
    return { code: 2, output: '' };
  } finally {
    for (const stop of stops.reverse()) await stop();
  }
}

/** The options and the scenario, checked; 'help' when help was asked for. */
function argumentsOf(argv: string[], env: Record<string, string | undefined>): 'help' | { values: LoadArguments; scenario: string } {
  let parsed;
  try {
    parsed = parseCommandLine(argv, LOAD_OPTIONS, { positionals: true, env });
  } catch (error) {
    if (error instanceof CommandLineError) throw new CouldNotTest(`${error.message}\n\n${USAGE}`);
    throw error;
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  const scenario = positionals[0];
  if (!scenario || positionals.length > 1 || !scenarioNames().includes(scenario))
    throw new CouldNotTest(
      `${scenario ? `No load scenario "${positionals.join(' ')}".` : 'Name a load scenario.'} Scenarios: ${scenarioNames().join(', ')}.\n\n${USAGE}`,
    );
  if ((values.segment === undefined) !== (values['segment-sequence'] === undefined))
    throw new CouldNotTest(
      "--segment and --segment-sequence go together: name this run's segment and the whole sequence, e.g. --segment 0:1/2 --segment-sequence 0,1/2,1.",
    );
  return { values, scenario };
}

/** The remote target, probed; or the embedded sandbox, started for the scenario (stopped with `stops`). */
async function targetOf(
  config: HarnessConfig,
  scenario: string,
  env: Record<string, string | undefined>,
  log: (line: string) => void,
  stops: (() => Promise<void>)[],
): Promise<HarnessConfig> {
  if (config.baseUrl) {
    await probeTarget(config);
    log(`Load scenario ${scenario} against ${config.baseUrl}`);
    return config;
  }
  const running = await startEmbeddedSandbox({
    profile: config.profile,
    currencies: [config.currency],
    targetEnvironments: [config.targetEnvironment],
    ...sandboxFor(scenario, env),
  });
  stops.push(() => running.close());
  log(`Load scenario ${scenario} against the embedded reference sandbox at ${running.baseUrl}`);
  return { ...config, baseUrl: running.baseUrl, sandboxUrl: running.baseUrl, subscriptionKeys: running.subscriptionKeys };
}

/** A callback receiver, when the target can reach it (a loopback host only from a loopback target); else undefined. */
async function listenForCallbacks(config: HarnessConfig, stops: (() => Promise<void>)[]): Promise<CallbackReceiver | undefined> {
  if (isLoopback(config.callbackHost) && !isLoopback(new URL(config.baseUrl!).hostname)) return undefined;
  const receiver = new CallbackReceiver(config.callbackHost, { bind: config.callbackBind, publicBaseUrl: config.callbackUrl });
  await receiver.start(config.callbackPort);
  stops.push(() => receiver.stop());
  return receiver;
}

function k6Arguments(values: LoadArguments, scenario: string, summaryFile: string): string[] {
  const args = ['run', '--no-usage-report', '--summary-export', summaryFile];
  if (values.segment) args.push('--execution-segment', values.segment, '--execution-segment-sequence', values['segment-sequence']!);
  if (values.samples) args.push('--out', `json=${resolve(values.samples)}`);
  return [...args, join(ROOT, 'dist/load', `${scenario}.js`)];
}

function k6EnvOf({
  env,
  scenario,
  config,
  values,
  reportsDir,
  callbackUrl,
}: {
  env: Record<string, string | undefined>;
  scenario: string;
  config: HarnessConfig;
  values: LoadArguments;
  reportsDir: string;
  callbackUrl: string | undefined;
}): Record<string, string> {
  return {
    ...Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
    ...SCENARIO_DEFAULTS[scenario],
    ...environmentFor(config),
    ...(values.rate ? { LOAD_RATE: values.rate } : {}),
    ...(values.duration ? { LOAD_DURATION_SECONDS: values.duration } : {}),
    ...(values.iterations ? { LOAD_ITERATIONS: values.iterations } : {}),
    ...(callbackUrl ? { LOAD_CALLBACK_URL: callbackUrl } : {}),
    // k6's own web dashboard, exported as one offline HTML file; no server is opened.
    K6_WEB_DASHBOARD: 'true',
    K6_WEB_DASHBOARD_PORT: '-1',
    K6_WEB_DASHBOARD_PERIOD: env.K6_WEB_DASHBOARD_PERIOD ?? '1s',
    K6_WEB_DASHBOARD_EXPORT: join(reportsDir, 'report.html'),
    K6_NO_USAGE_REPORT: 'true',
  };
}

/** k6's summary without its setup data, and the JUnit and HTML reports of it; no summary, no verdict. */
function reportsOf(
  scenario: string,
  {
    summaryFile,
    reportsDir,
    k6Code,
    output,
    durationSeconds,
  }: { summaryFile: string; reportsDir: string; k6Code: number; output: string; durationSeconds: number },
): K6Summary {
  try {
    const summary = withoutSetupData(JSON.parse(readFileSync(summaryFile, 'utf8')) as K6Summary);
    writeFileSync(summaryFile, `${JSON.stringify(summary, null, 2)}\n`);
    writeFileSync(join(reportsDir, 'junit.xml'), junitReport(scenario, summary, durationSeconds));
    if (!existsSync(join(reportsDir, 'report.html'))) writeFileSync(join(reportsDir, 'report.html'), htmlReport(scenario, summary));
    return summary;
  } catch {
    throw new CouldNotTest(`k6 wrote no summary (exit ${k6Code}): the run could not test.`, output);
  }
}

function tellRun(summary: K6Summary, reportsDir: string, withCallbacks: boolean, log: (line: string) => void): void {
  const tokenRequests = Number(summary.metrics.momo_token_requests?.count ?? 0);
  for (const { operation, accepted, refused } of callsByOperation(summary))
    log(`${operation}: ${accepted} answered as documented, ${refused} not; ${tokenRequests} token requests in the run`);
  for (const t of thresholdResults(summary).filter((t) => !t.passed)) log(`SLO missed: ${t.metric} ${t.expression} (${t.observed})`);
  log(`Reports: ${reportsDir}/ (summary.json, junit.xml, report.html${withCallbacks ? ', callbacks.json' : ''})`);
}

function runK6(
  k6: string,
  args: string[],
  env: Record<string, string>,
  output: 'inherit' | 'pipe',
): Promise<{ code: number; output: string }> {
  return new Promise((resolvePromise) => {
    const child = spawn(k6, args, { env, stdio: ['ignore', output, output] });
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.on('close', (code) => resolvePromise({ code: code ?? 2, output: text }));
  });
}

/** Callback latency: from the creation time the script put in each callback URL to the callback's arrival. */
function callbackLatency(receiver: CallbackReceiver) {
  const latencies: number[] = [];
  for (const callback of receiver.all()) {
    const createdAt = Number(new URL(callback.path, 'http://x').searchParams.get('createdAt'));
    if (Number.isFinite(createdAt) && createdAt > 0) latencies.push(callback.receivedAt - createdAt);
  }
  latencies.sort((a, b) => a - b);
  const at = (q: number) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] : null);
  return { callbacks: latencies.length, p50Ms: at(0.5), p95Ms: at(0.95), p99Ms: at(0.99), maxMs: latencies.at(-1) ?? null };
}
