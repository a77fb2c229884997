/**
 * `npm run mutation`: the conformance suite against the embedded sandbox once per deliberate deviation
 * (sandbox-quality/faults/faults.ts), and several times against the faithful sandbox. A harness that passes a broken
 * server proves nothing, and one that fails a faithful server cannot be trusted: both are measured here.
 *
 * Writes reports/mutation/results.json and the generated section of docs/mutation.md.
 */
import { cpus } from 'node:os';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { FAULTS, FAULT_NAMES, isFaultName, type FaultName } from '../faults/faults.ts';
import { runConformanceProcess } from '../../conformance/runner/child-run.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const DOC = join(ROOT, 'docs/mutation.md');
const BEGIN = '<!-- mutation:begin (written by npm run mutation; do not edit by hand) -->';
const END = '<!-- mutation:end -->';

const USAGE = `Usage: npm run mutation -- [--only <name,...>] [--jobs <n>] [--faithful-runs <n>] [--scoped] [--no-docs]

Runs the conformance suite against the embedded sandbox once per deliberate deviation and checks that each
is detected, then runs it against the faithful sandbox --faithful-runs times and checks every run passes.

  --only <names>        only these deviations (npm run sandbox -- --list-deviations lists them)
  --jobs <n>            suite runs at a time (default: two per CPU; each run mostly waits on the sandbox)
  --faithful-runs <n>   runs against the faithful sandbox (default 10; 0 skips them)
  --scoped              run each deviation against its own feature's scenarios only (faster, for tests)
  --reports <dir>       where each run's reports go (default reports/mutation)
  --no-docs             do not rewrite docs/mutation.md

Exit codes: 0 every deviation detected and every faithful run passed, 1 not so, 2 the runs could not be made.`;

interface SuiteSummary {
  totals: Record<'passed' | 'failed' | 'not tested' | 'skipped', number>;
  scenarios: { scenario: string; feature: string; uri: string; verdict: string }[];
}

export interface RunResult {
  label: string;
  deviation: FaultName | undefined;
  exitCode: number | null;
  durationMs: number;
  failed: { scenario: string; uri: string }[];
  notTested: number;
  passed: number;
  /** The run's last lines when it could not be read, to say why. */
  problem?: string;
}

export interface MutationReport {
  when: string;
  scoped: boolean;
  deviations: (RunResult & { feature: string; summary: string; detected: boolean; caughtByItsFeature: boolean })[];
  faithful: RunResult[];
  detected: number;
  faithfulPassed: number;
  durationMs: number;
}

async function runSuite(label: string, deviation: FaultName | undefined, reportsDir: string, tags: string | undefined): Promise<RunResult> {
  rmSync(reportsDir, { recursive: true, force: true });
  const started = Date.now();
  const argv = ['--reports', reportsDir, '--parallel', '2', ...(tags ? ['--tags', tags] : [])];
  // A run is bounded by the suite's own deadlines; the timeout only guards against a hung process.
  // A deviation from a strict reading shows only in a strict run (the sandbox's readings on, the @strict scenarios run).
  // No reruns (MOMO_RETRIES=0): a deviation must be caught at the first attempt, and a faithful run must pass
  // without one; a rerun would only double the time of a deterministic failure, or hide a flaky scenario as passed.
  const env = { MOMO_RETRIES: '0', ...(deviation ? { MOMO_SANDBOX_DEVIATIONS: deviation, ...(FAULTS[deviation].reading ? { MOMO_STRICT: 'true' } : {}) } : {}) };
  const { code: exitCode, output, timedOut } = await runConformanceProcess(argv, env, 10 * 60_000);
  const result: RunResult = { label, deviation, exitCode, durationMs: Date.now() - started, failed: [], notTested: 0, passed: 0 };
  const lastLines = `${timedOut ? 'killed after 10 minutes\n' : ''}${output.trim().split('\n').slice(-5).join('\n')}`;
  const summaryFile = join(reportsDir, 'summary.json');
  if (!existsSync(summaryFile)) return { ...result, problem: lastLines };
  const summary = JSON.parse(readFileSync(summaryFile, 'utf8')) as SuiteSummary;
  result.failed = summary.scenarios.filter((s) => s.verdict === 'failed').map((s) => ({ scenario: s.scenario, uri: s.uri }));
  result.notTested = summary.totals['not tested'];
  result.passed = summary.totals.passed;
  if (exitCode === 2 || timedOut) result.problem = lastLines;
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

export async function runMutation(options: { only: FaultName[]; jobs: number; faithfulRuns: number; scoped: boolean; reportsDir: string; log: (line: string) => void }): Promise<MutationReport> {
  const { log } = options;
  const started = Date.now();
  const total = options.only.length + options.faithfulRuns;
  log(`${options.only.length} deviations and ${options.faithfulRuns} faithful runs, ${options.jobs} at a time${options.scoped ? ', each deviation against its own feature only' : ''}.`);
  const tasks = [
    ...options.only.map((name) => () => runSuite(name, name, join(options.reportsDir, name), options.scoped ? `@${FAULTS[name].feature}` : undefined)),
    ...Array.from({ length: options.faithfulRuns }, (_, i) => () => runSuite(`faithful #${i + 1}`, undefined, join(options.reportsDir, `faithful-${i + 1}`), undefined)),
  ];
  const results = await pooled(tasks, options.jobs, (r, done) => {
    const verdict = r.deviation
      ? (r.exitCode === 1 && r.failed.length > 0 ? `detected (${r.failed.length} failed)` : `NOT DETECTED (exit ${r.exitCode})`)
      : (r.exitCode === 0 ? `passed (${r.passed})` : `FAILED (exit ${r.exitCode}, ${r.failed.length} failed, ${r.notTested} not tested)`);
    log(`[${done}/${total}] ${r.label}: ${verdict} in ${(r.durationMs / 1000).toFixed(1)} s`);
    for (const f of r.deviation ? [] : r.failed) log(`    failed: ${f.uri} › ${f.scenario}`);
    if (r.problem) log(r.problem.split('\n').map((l) => `    ${l}`).join('\n'));
  });
  const deviations = results.filter((r) => r.deviation).map((r) => {
    const { feature, summary } = FAULTS[r.deviation!];
    const detected = r.exitCode === 1 && r.failed.length > 0;
    return { ...r, feature, summary, detected, caughtByItsFeature: r.failed.some((f) => f.uri === `features/${feature}.feature`) };
  });
  const faithful = results.filter((r) => !r.deviation);
  return {
    when: new Date().toISOString(),
    scoped: options.scoped,
    deviations,
    faithful,
    detected: deviations.filter((d) => d.detected).length,
    faithfulPassed: faithful.filter((r) => r.exitCode === 0).length,
    durationMs: Date.now() - started,
  };
}

export function mutationTable(report: MutationReport): string {
  const cell = (text: string) => text.replaceAll('|', '\\|');
  const lines = [
    `Measured ${report.when.slice(0, 10)} by \`npm run mutation\`${report.scoped ? ' -- --scoped' : ''} in ${(report.durationMs / 60_000).toFixed(1)} min: `
      + `**${report.detected} of ${report.deviations.length} deviations detected**, `
      + `**${report.faithfulPassed} of ${report.faithful.length} faithful runs passed**.`,
    '',
    '| deviation | feature | detected | scenarios that failed |',
    '|---|---|---|---|',
    ...report.deviations.map((d) => `| \`${d.deviation}\`: ${cell(d.summary)} | ${d.feature} | ${d.detected ? (d.caughtByItsFeature ? 'yes' : 'yes (by another feature)') : `**no** (exit ${d.exitCode})`} | ${cell(scenarioList(d.failed))} |`),
  ];
  if (report.faithful.length > 0) {
    lines.push('', '| faithful run | exit | passed | failed | not tested | seconds |', '|---|---|---|---|---|---|');
    for (const r of report.faithful) lines.push(`| ${r.label} | ${r.exitCode} | ${r.passed} | ${r.failed.length} | ${r.notTested} | ${(r.durationMs / 1000).toFixed(1)} |`);
  }
  return lines.join('\n');
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
  const next = start >= 0 && end > start ? `${current.slice(0, start)}${section}${current.slice(end + END.length)}` : `${current}\n${section}\n`;
  writeFileSync(DOC, next);
}

async function main(argv: string[]): Promise<number> {
  let values;
  try {
    values = parseArgs({
      args: argv,
      options: {
        only: { type: 'string' }, jobs: { type: 'string' }, 'faithful-runs': { type: 'string' }, scoped: { type: 'boolean' },
        reports: { type: 'string' }, 'no-docs': { type: 'boolean' }, help: { type: 'boolean' },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const only = values.only === undefined ? FAULT_NAMES : values.only.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = only.filter((name) => !isFaultName(name));
  const count = (name: string, raw: string | undefined, fallback: number, max: number) => {
    const n = raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(n) || n < 0 || n > max) throw new Error(`--${name} must be a whole number from 0 to ${max}, got "${raw}"`);
    return n;
  };
  let jobs: number;
  let faithfulRuns: number;
  try {
    if (unknown.length > 0) throw new Error(`--only names ${unknown.map((n) => `"${n}"`).join(', ')}, which are not deviations; npm run sandbox -- --list-deviations lists them`);
    jobs = Math.max(1, count('jobs', values.jobs, 2 * cpus().length, 32));
    faithfulRuns = count('faithful-runs', values['faithful-runs'], 10, 100);
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  const reportsDir = join(ROOT, values.reports ?? 'reports/mutation');
  mkdirSync(reportsDir, { recursive: true });
  const report = await runMutation({ only: only as FaultName[], jobs, faithfulRuns, scoped: Boolean(values.scoped), reportsDir, log: (line) => console.log(line) });
  writeFileSync(join(reportsDir, 'results.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(`\n${mutationTable(report)}\n`);
  console.log(`Results: ${relative(process.cwd(), join(reportsDir, 'results.json'))}`);
  if (!values['no-docs'] && values.only === undefined && !values.scoped) {
    writeDoc(report);
    console.log(`Table written to ${relative(process.cwd(), DOC)}`);
  }
  const couldNotRun = [...report.deviations, ...report.faithful].filter((r) => r.exitCode === 2 || r.exitCode === null);
  if (couldNotRun.length > 0 && couldNotRun.length === report.deviations.length + report.faithful.length) return 2;
  return report.detected === report.deviations.length && report.faithfulPassed === report.faithful.length ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (error: unknown) => {
    console.error(`npm run mutation stopped on an unexpected error: ${(error as Error).message}`);
    process.exit(2);
  });
}
