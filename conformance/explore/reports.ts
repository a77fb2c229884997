import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderJunit, type JunitCase } from '../../core/junit.ts';
import { describeSource, type Source } from '../../core/sources.ts';
import type { Exchange } from '../../harness/client/momo-client.ts';
import type { Finding } from '../../harness/checks/index.ts';
import type { ExplorationSession } from './session.ts';
import type { CampaignResult } from './campaign.ts';
import { findingLine, replayPlanOf, unjudgedByReplay } from './replay-plan.ts';
import { replayScriptOf } from './replay-script.ts';

/** The files an exploration writes in its reports folder. */
export const REPORT_FILES = { report: 'explore.json', junit: 'junit.xml', replay: 'replay.mjs' } as const;

export type ExploreOutcome = 'nothing found' | 'departure found' | 'could not test';

/** What the exploration was asked for and where it ran: the head of its report. */
export interface ExploreRun {
  target: string;
  seed: number;
  runs: number;
  maxCommands: number;
  maxCalls: number;
  timeLimitSeconds: number;
}

interface ReportedFinding {
  check: string;
  source: Source;
  /** "definite: §4.3 #10": how the reports name the source. */
  cites: string;
  field?: string;
  expected: string;
  received: string;
}

/** The JSON report: the seed and path, the shrunk command list, the finding with its source, and the sequence's exchanges. */
export interface ExploreReport extends ExploreRun {
  outcome: ExploreOutcome;
  reason?: string;
  profile: string;
  strict: boolean;
  runsDone: number;
  calls: number;
  durationMs: number;
  stopped?: string;
  departure?: {
    commands: string[];
    calls: number;
    firstFound: { afterRuns: number; commands: number; calls: number };
    shrinkTries: number;
    /** fast-check's seed of the pass that found it and its path to the shrunk sequence (fc.assert's seed and path). */
    fastCheck?: { seed: number; path: string };
    findings: ReportedFinding[];
    message: string;
    replay: string;
    exchanges: Exchange[];
  };
  warnings: ReportedFinding[];
  checks: Record<string, number>;
  premisesNotHeld: Record<string, number>;
  created: { transactions: number; apiUsers: string[] };
}

const reported = (f: Finding): ReportedFinding => ({
  check: f.check,
  source: f.source,
  cites: describeSource(f.source),
  ...(f.field !== undefined ? { field: f.field } : {}),
  expected: f.expected,
  received: f.received,
});

/** At most this many warnings in the report: each is one departure from an observation or a reading, once. */
const MOST_WARNINGS = 50;

/** The report of an exploration that ran (a result), or could not (a reason). */
export function reportOf(run: ExploreRun, session: ExplorationSession, result: CampaignResult | undefined, reason?: string): ExploreReport {
  const found = result?.found;
  const outcome: ExploreOutcome = found
    ? 'departure found'
    : reason !== undefined || session.unavailable
      ? 'could not test'
      : 'nothing found';
  return {
    ...run,
    outcome,
    ...((reason ?? session.unavailable) !== undefined ? { reason: reason ?? session.unavailable } : {}),
    profile: session.run.profile,
    strict: session.run.strict,
    runsDone: result?.runs ?? 0,
    calls: session.calls,
    durationMs: result?.durationMs ?? 0,
    ...(session.stopped ? { stopped: session.stopped } : {}),
    ...(found
      ? {
          departure: {
            commands: found.commands,
            calls: found.calls.length,
            firstFound: found.firstFound,
            shrinkTries: result!.shrinkTries,
            ...(found.fastCheck ? { fastCheck: found.fastCheck } : {}),
            findings: found.failure.findings.map(reported),
            message: found.failure.message,
            replay: REPORT_FILES.replay,
            exchanges: found.exchanges,
          },
        }
      : {}),
    warnings: [...session.warnings.values()].slice(0, MOST_WARNINGS).map(reported),
    checks: Object.fromEntries(session.checksMade),
    premisesNotHeld: Object.fromEntries(session.unheldPremises),
    created: session.created,
  };
}

/** Writes the report, its JUnit file and, with a departure, its replay; an earlier run's replay does not stay behind. */
export function writeReports(dir: string, report: ExploreReport, session: ExplorationSession, result: CampaignResult | undefined): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, REPORT_FILES.report), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(dir, REPORT_FILES.junit), junitOf(report));
  const replay = join(dir, REPORT_FILES.replay);
  rmSync(replay, { force: true });
  const found = result?.found;
  if (!found) return;
  const plan = replayPlanOf(found, {
    title: `Replay of a seeded exploration (momo-harness explore --seed ${report.seed}${found.fastCheck ? `; fast-check seed ${found.fastCheck.seed}, path ${found.fastCheck.path}` : ''})`,
    profile: session.run.profile,
    targetEnvironment: session.config.targetEnvironment,
    callbackHost: session.config.callbackHost,
    findings: found.failure.findings.map(findingLine),
    unjudged: unjudgedByReplay(found.failure.findings),
  });
  writeFileSync(replay, replayScriptOf(plan));
  chmodSync(replay, 0o755);
}

/** A test case per check the exploration made: failed for the departure's, skipped for all when it could not test. */
function junitOf(report: ExploreReport): string {
  const failed = new Map((report.departure?.findings ?? []).map((f) => [f.check, f]));
  const names = [...new Set([...Object.keys(report.checks), ...failed.keys()])].sort();
  const cases: JunitCase[] =
    report.outcome === 'could not test'
      ? [{ classname: 'explore', name: 'the exploration', skipped: report.reason ?? 'could not test' }]
      : names.map((name) => {
          const finding = failed.get(name);
          return {
            classname: 'explore',
            name,
            ...(finding
              ? {
                  failure: {
                    message: `${finding.cites}: ${finding.field !== undefined ? `${finding.field}: ` : ''}expected ${finding.expected}, got ${finding.received}`,
                    text: report.departure!.message,
                  },
                }
              : { output: `made ${report.checks[name] ?? 0} times` }),
          };
        });
  const properties = { seed: String(report.seed), runs: String(report.runsDone), calls: String(report.calls), target: report.target };
  return renderJunit('momo-harness explore', [{ name: 'seeded exploration', cases, timeSeconds: report.durationMs / 1000, properties }]);
}
