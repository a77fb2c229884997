import type { Envelope, TestStepResult } from '@cucumber/messages';
import { EVALUATIONS_MEDIA_TYPE, WARNINGS_MEDIA_TYPE, type Evaluation, type Warning } from '../../harness/checks/index.ts';
import { describeSource } from '../../core/sources.ts';
import {
  AVAILABILITY_MEDIA_TYPE,
  availabilityOf,
  type OperationAvailability,
  type ScenarioAvailability,
} from '../../harness/client/careful.ts';

/**
 * passed: the target did what the spec says. failed: it answered, and departed from the spec.
 * not tested: the target could not be reached or did not answer, or the harness itself could not run
 * the scenario; never counted as a pass, and never blamed on the target's conformance.
 * flaky: it failed (or could not test), and passed when run again (MOMO_RETRIES): counted apart, never a pass,
 * and it does not fail the run.
 */
export type Verdict = 'passed' | 'failed' | 'not tested' | 'skipped' | 'flaky';
export const VERDICTS: readonly Verdict[] = ['passed', 'failed', 'flaky', 'not tested', 'skipped'];

/** An attempt of a scenario that was run again after it: what it came to, and why. */
export interface EarlierAttempt {
  verdict: Verdict;
  reason?: string;
}

export interface ScenarioResult {
  /** The pickle's id in the run's messages: joins the verdict to the scenario's evidence. */
  id: string;
  feature: string;
  scenario: string;
  uri: string;
  line: number | undefined;
  tags: string[];
  verdict: Verdict;
  /** Why it failed or could not test: the first failing step's message; for a flaky one, why its first attempt failed. */
  reason?: string;
  durationMs: number;
  /** The attempts before the last one, in order, when the scenario was run again (MOMO_RETRIES). */
  earlierAttempts?: EarlierAttempt[];
  /**
   * What the checks found that this run weighs as a warning (a reading, or an observation in the spec profile):
   * reported apart, it changes no verdict. Of the last attempt.
   */
  warnings?: Warning[];
  /** The checks its last attempt made, and how each came out: what its requirements' verdicts are made of. */
  checks?: Evaluation[];
  /** What its last attempt saw of the target's availability: its calls, and those made again. */
  availability?: ScenarioAvailability;
}

export interface RunSummary {
  target: string;
  profile: string;
  tags: string;
  durationMs: number;
  totals: Record<Verdict, number>;
  exitCode: 0 | 1 | 2;
  scenarios: ScenarioResult[];
  /**
   * The target's availability over the run, an operation a row: its calls, how many the careful client made again, and
   * what those met (harness/client/careful.ts). An observation, never part of the verdict.
   */
  availability: OperationAvailability[];
}

// Errors that mean "the target did not answer, or said it could not" rather than "it answered wrongly".
const UNAVAILABLE = new Set([
  'TargetUnavailableError',
  'TargetUnavailableAnswer',
  'TargetUnreachableError',
  'NotObservable',
  'SettingRefusedError',
  'PremiseNotHeld',
  'TargetRedirected',
]);
// Errors that mean "the target departed from the API": the only ones that fail a scenario. A state a check waits
// for that does not come in time is that check's finding (a ConformanceFailure, or NotObservable where the spec
// gives no time); a bare deadline passed is the harness's own wait, never the target's departure.
const DEPARTURES = new Set(['ConformanceFailure']);

interface Attempt {
  pickleId: string;
  steps: TestStepResult[];
  /** What the scenario logged (world.log), e.g. why it skipped itself. */
  logs: string[];
  warnings: Warning[];
  checks: Evaluation[];
  availability?: ScenarioAvailability;
  started: number;
}

/** Follows the message stream of a run: prints a line per scenario as it ends, and keeps the verdicts. */
export class ScenarioLedger {
  private readonly features = new Map<string, string>();
  private readonly pickles = new Map<string, { name: string; uri: string; tags: string[]; astNodeId: string | undefined }>();
  private readonly lines = new Map<string, number>();
  private readonly testCases = new Map<string, string>();
  private readonly attempts = new Map<string, Attempt>();
  private readonly results: ScenarioResult[] = [];
  private readonly earlier = new Map<string, EarlierAttempt[]>();

  constructor(private readonly log: (line: string) => void) {}

  record(envelope: Envelope): void {
    if (envelope.gherkinDocument?.feature) {
      const { uri, feature } = envelope.gherkinDocument;
      this.features.set(uri ?? '', feature.name);
      for (const child of feature.children) {
        if (child.scenario) {
          this.lines.set(child.scenario.id, child.scenario.location.line);
          for (const example of child.scenario.examples) for (const row of example.tableBody) this.lines.set(row.id, row.location.line);
        }
      }
    } else if (envelope.pickle) {
      const { id, name, uri, tags, astNodeIds } = envelope.pickle;
      this.pickles.set(id, { name, uri, tags: tags.map((t) => t.name), astNodeId: astNodeIds[astNodeIds.length - 1] });
    } else if (envelope.testCase) {
      this.testCases.set(envelope.testCase.id, envelope.testCase.pickleId);
    } else if (envelope.testCaseStarted) {
      const { id, testCaseId } = envelope.testCaseStarted;
      this.attempts.set(id, {
        pickleId: this.testCases.get(testCaseId) ?? '',
        steps: [],
        logs: [],
        warnings: [],
        checks: [],
        started: Date.now(),
      });
    } else if (envelope.attachment?.testCaseStartedId && envelope.attachment.mediaType === 'text/x.cucumber.log+plain') {
      this.attempts.get(envelope.attachment.testCaseStartedId)?.logs.push(envelope.attachment.body);
    } else if (envelope.attachment?.testCaseStartedId && envelope.attachment.mediaType === WARNINGS_MEDIA_TYPE) {
      this.attempts.get(envelope.attachment.testCaseStartedId)?.warnings.push(...arrayIn<Warning>(envelope.attachment.body));
    } else if (envelope.attachment?.testCaseStartedId && envelope.attachment.mediaType === AVAILABILITY_MEDIA_TYPE) {
      const attempt = this.attempts.get(envelope.attachment.testCaseStartedId);
      const read = objectIn<ScenarioAvailability>(envelope.attachment.body);
      if (attempt && read && typeof read.calls === 'object' && Array.isArray(read.retried)) attempt.availability = read;
    } else if (envelope.attachment?.testCaseStartedId && envelope.attachment.mediaType === EVALUATIONS_MEDIA_TYPE) {
      this.attempts.get(envelope.attachment.testCaseStartedId)?.checks.push(...arrayIn<Evaluation>(envelope.attachment.body));
    } else if (envelope.testStepFinished) {
      this.attempts.get(envelope.testStepFinished.testCaseStartedId)?.steps.push(envelope.testStepFinished.testStepResult);
    } else if (envelope.testCaseFinished) {
      const { testCaseStartedId, willBeRetried } = envelope.testCaseFinished;
      const attempt = this.attempts.get(testCaseStartedId);
      this.attempts.delete(testCaseStartedId);
      if (!attempt) return;
      if (!willBeRetried) this.finish(attempt);
      else this.earlier.set(attempt.pickleId, [...(this.earlier.get(attempt.pickleId) ?? []), judgeSteps(attempt.steps)]);
    }
  }

  private finish(attempt: Attempt): void {
    const pickle = this.pickles.get(attempt.pickleId);
    if (!pickle) return;
    const judged = judgeSteps(attempt.steps);
    const earlierAttempts = this.earlier.get(attempt.pickleId);
    // Passing on a rerun is not passing: the first attempt's failure is the news.
    const verdict: Verdict = earlierAttempts && judged.verdict === 'passed' ? 'flaky' : judged.verdict;
    const reason =
      verdict === 'flaky' ? earlierAttempts?.[0]?.reason : (judged.reason ?? (verdict === 'skipped' ? attempt.logs.at(-1) : undefined));
    const result: ScenarioResult = {
      id: attempt.pickleId,
      feature: this.features.get(pickle.uri) ?? pickle.uri,
      scenario: pickle.name,
      uri: pickle.uri,
      line: pickle.astNodeId ? this.lines.get(pickle.astNodeId) : undefined,
      tags: pickle.tags,
      verdict,
      ...(reason ? { reason } : {}),
      durationMs: Date.now() - attempt.started,
      ...(earlierAttempts ? { earlierAttempts } : {}),
      ...(attempt.warnings.length > 0 ? { warnings: attempt.warnings } : {}),
      ...(attempt.checks.length > 0 ? { checks: attempt.checks } : {}),
      ...(attempt.availability ? { availability: attempt.availability } : {}),
    };
    this.results.push(result);
    const mark = { passed: '✔', failed: '✘', 'not tested': '?', skipped: '-', flaky: '~' }[verdict];
    this.log(`  ${mark} ${result.feature} › ${result.scenario}${verdict === 'passed' ? '' : ` (${verdict})`}`);
    if (verdict === 'skipped' && reason) this.log(`      ${reason}`);
  }

  summary(run: { target: string; profile: string; tags: string; durationMs: number }): RunSummary {
    const totals = Object.fromEntries(VERDICTS.map((v) => [v, 0])) as Record<Verdict, number>;
    for (const r of this.results) totals[r.verdict] += 1;
    // A run that could not test anything, or part of anything, must never read as a pass. A flaky scenario
    // did test the target, and is reported apart without failing the run.
    const exitCode = totals.failed > 0 ? 1 : totals['not tested'] > 0 || totals.passed + totals.flaky === 0 ? 2 : 0;
    const availability = availabilityOf(this.results.flatMap((r) => (r.availability ? [r.availability] : [])));
    return { ...run, totals, exitCode, scenarios: this.results, availability };
  }

  closingLines(summary: RunSummary): string[] {
    const lines = ['', ...causeLines(summary)];
    // Scenarios with the same verdict for the same reason (a target down: every one) share a block, the reason said once.
    const blocks = new Map<string, ScenarioResult[]>();
    for (const r of summary.scenarios.filter((s) => s.verdict === 'failed' || s.verdict === 'not tested' || s.verdict === 'flaky')) {
      const key = `${r.verdict}\n${r.reason ?? ''}`;
      blocks.set(key, [...(blocks.get(key) ?? []), r]);
    }
    for (const block of blocks.values()) lines.push(...blockLines(block), '');
    lines.push(...warningLines(summary));
    lines.push(...availabilityLines(summary));
    const { totals } = summary;
    lines.push(
      `${summary.scenarios.length} scenarios: ${totals.passed} passed, ${totals.failed} failed, ${totals.flaky > 0 ? `${totals.flaky} flaky (passed only when run again; not counted as passed, and not failing the run), ` : ''}${totals['not tested']} not tested, ${totals.skipped} skipped in ${(summary.durationMs / 1000).toFixed(1)} s`,
    );
    lines.push(
      {
        0: 'Verdict: the target conforms to the scenarios run.',
        1: 'Verdict: the target does NOT conform (see the failures above).',
        2:
          summary.scenarios.length === 0
            ? 'Verdict: nothing was tested (no scenario matched).'
            : 'Verdict: the run could NOT test the target fully (see "not tested" above); this is not a pass.',
      }[summary.exitCode],
    );
    return lines;
  }
}

/**
 * What a failure is caused by, as far as the reports can tell: its first failed check and what the target sent
 * (the status and the error code), without the case around it. Failures of several scenarios with one cause (a token
 * refused, a burst of 500s) are one finding, said once.
 */
export function causeOf(reason: string | undefined): string | undefined {
  if (!reason) return undefined;
  const failed = /✘ ([a-z-]+) \([^\n]*?\): (?:([^:\n]+): )?expected [^\n]*?, got ([^\n]+)/.exec(reason);
  if (!failed) return undefined;
  const received = /received: HTTP (\d{3})[^\n]*?"(?:code|error)":"([^"]{1,64})"/.exec(reason) ?? /received: HTTP (\d{3})/.exec(reason);
  const answer = received ? `HTTP ${received[1]}${received[2] ? ` ${received[2]}` : ''}` : `got ${failed[3]!.slice(0, 80)}`;
  return `${failed[1]}${failed[2] ? ` (${failed[2]})` : ''}: ${answer}`;
}

/**
 * The causes that more than one failed scenario shares, each once, with the scenarios and the requirements it touched:
 * the lines the closing summary and the certification page lead with.
 */
export function sharedCauses<S extends Pick<ScenarioResult, 'tags' | 'reason'> & { verdict: string }>(
  scenarios: readonly S[],
): { cause: string; scenarios: S[]; requirements: string[] }[] {
  const byCause = new Map<string, S[]>();
  for (const s of scenarios.filter((x) => x.verdict === 'failed')) {
    const cause = causeOf(s.reason);
    if (cause !== undefined) byCause.set(cause, [...(byCause.get(cause) ?? []), s]);
  }
  return [...byCause]
    .filter(([, list]) => list.length > 1)
    .map(([cause, list]) => ({
      cause,
      scenarios: list,
      requirements: [...new Set(list.flatMap((s) => s.tags.filter((t) => t.startsWith('@req:')).map((t) => t.slice(5))))].sort(),
    }))
    .sort((a, b) => b.scenarios.length - a.scenarios.length);
}

function causeLines(summary: Pick<RunSummary, 'scenarios'>): string[] {
  const shared = sharedCauses(summary.scenarios);
  if (shared.length === 0) return [];
  const lines = ['CAUSES shared by several failures (each once; the failures follow):'];
  for (const { cause, scenarios, requirements } of shared)
    lines.push(
      `  ✘ ${cause}: ${scenarios.length} scenarios failed on it, touching ${requirements.length} requirement${requirements.length === 1 ? '' : 's'}${requirements.length > 0 ? ` (${requirements.slice(0, 12).join(', ')}${requirements.length > 12 ? ', …' : ''})` : ''}`,
    );
  lines.push('');
  return lines;
}

/** How many scenarios of a block that shares one reason are named; summary.json names every one. */
export const NAMED_IN_BLOCK = 5;

/**
 * The closing lines of scenarios that share a verdict and a reason. One scenario: its name, then the reason. More
 * (a target down: every scenario): the reason once with their count, then the first few names and how many more,
 * so that one cause is a few lines however many scenarios it kept from testing.
 */
function blockLines(block: readonly ScenarioResult[]): string[] {
  const first = block[0]!;
  const label = { failed: 'FAILED', flaky: 'FLAKY', 'not tested': 'NOT TESTED' }[first.verdict as string];
  const where = (r: ScenarioResult) =>
    `${r.feature} › ${r.scenario} (${r.uri}${r.line ? `:${r.line}` : ''})${r.verdict === 'flaky' ? `, passed on attempt ${(r.earlierAttempts?.length ?? 0) + 1}` : ''}`;
  const reason = first.reason ? first.reason.split('\n').map((l) => `    ${l}`) : [];
  if (block.length === 1) return [`${label}: ${where(first)}${first.verdict === 'flaky' ? '; the first failed:' : ''}`, ...reason];
  const named = block.length > NAMED_IN_BLOCK + 1 ? NAMED_IN_BLOCK : block.length;
  return [
    `${label} (${block.length} scenarios)${first.verdict === 'flaky' ? ', each passing only when run again; the first attempt failed' : ''}${reason.length > 0 ? ', each for this reason:' : ':'}`,
    ...reason,
    ...block.slice(0, named).map((r) => `  - ${where(r)}`),
    ...(block.length > named ? [`  - and ${block.length - named} more (summary.json lists every one)`] : []),
  ];
}

/** An attachment the harness wrote as a JSON object; one it did not write (it cannot be read) is undefined. */
function objectIn<T>(body: string): T | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as T) : undefined;
  } catch {
    return undefined;
  }
}

/** The items of an attachment the harness wrote as a JSON array; one it did not write (it cannot be read) has none. */
function arrayIn<T>(body: string): T[] {
  try {
    const parsed: unknown = JSON.parse(body);
    return Array.isArray(parsed) ? (parsed as T[]) : [];
  } catch {
    return [];
  }
}

/**
 * The target's availability over the run, when the careful client had to make a call again: an operation a line,
 * with what the attempts met. An observation of the weather, never part of the verdict.
 */
export function availabilityLines(summary: Pick<RunSummary, 'availability'>): string[] {
  const retried = (summary.availability ?? []).filter((a) => a.retried > 0);
  if (retried.length === 0) return [];
  const total = retried.reduce((n, a) => n + a.retried, 0);
  const lines = [`AVAILABILITY (${total} call${total === 1 ? '' : 's'} made again; they do not change the verdict):`];
  for (const a of retried) {
    const met = Object.entries(a.met)
      .map(([what, n]) => `${what} ×${n}`)
      .join(', ');
    const ended = Object.entries(a.outcomes)
      .map(([outcome, n]) => `${outcome} ×${n}`)
      .join(', ');
    lines.push(`  ~ ${a.operation}: ${a.retried} of ${a.calls} calls made again; met ${met}; ${ended}`);
  }
  lines.push('');
  return lines;
}

/**
 * The warnings of a run, apart from its verdict: each distinct finding once, with how many scenarios found it,
 * grouped by check. They change no exit code; --strict makes those of readings failures.
 */
export function warningLines(summary: RunSummary): string[] {
  const byFinding = new Map<string, { warning: Warning; scenarios: Set<string> }>();
  for (const scenario of summary.scenarios) {
    for (const w of scenario.warnings ?? []) {
      const key = JSON.stringify([w.check, w.context.split(' — ')[0], w.field, w.expected, w.received]);
      const entry = byFinding.get(key) ?? { warning: w, scenarios: new Set<string>() };
      entry.scenarios.add(`${scenario.uri}:${scenario.line ?? ''}`);
      byFinding.set(key, entry);
    }
  }
  if (byFinding.size === 0) return [];
  const entries = [...byFinding.values()].sort((a, b) => a.warning.check.localeCompare(b.warning.check));
  const lines = [`WARNINGS (${entries.length}; they do not change the verdict):`];
  for (const { warning: w, scenarios } of entries) {
    lines.push(
      `  ! ${w.check} (${describeSource(w.source)}): ${w.field !== undefined ? `${w.field}: ` : ''}expected ${w.expected}, got ${w.received}`,
    );
    lines.push(`      ${w.context}; ${w.weight}; in ${scenarios.size} scenario${scenarios.size === 1 ? '' : 's'}`);
  }
  lines.push('');
  return lines;
}

function judgeSteps(steps: TestStepResult[]): { verdict: Verdict; reason?: string } {
  // A departure anywhere (a step's, or the After hook's check of every answer) outweighs a step that could not test.
  const broken =
    steps.find((s) => s.status === 'FAILED' && DEPARTURES.has(s.exception?.type ?? '')) ??
    steps.find((s) => s.status !== 'PASSED' && s.status !== 'SKIPPED');
  if (!broken) return { verdict: steps.some((s) => s.status === 'SKIPPED') ? 'skipped' : 'passed' };
  const reason = broken.exception?.message ?? broken.message ?? broken.status;
  if (broken.status === 'FAILED') {
    const type = broken.exception?.type ?? '';
    if (DEPARTURES.has(type)) return { verdict: 'failed', reason };
    if (UNAVAILABLE.has(type)) return { verdict: 'not tested', reason };
    // Anything else is the harness's own fault (a bug, a feature that cannot run): never the target's.
    return { verdict: 'not tested', reason: `the harness could not run this scenario (${type || 'error'}): ${reason}` };
  }
  // UNDEFINED, AMBIGUOUS or PENDING steps: the harness could not run the scenario.
  return { verdict: 'not tested', reason: `the harness could not run this scenario: step ${broken.status.toLowerCase()}` };
}
