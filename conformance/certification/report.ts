import { join, relative } from 'node:path';
import { DIFFERENCES, type ProfileName } from '../../core/profiles.ts';
import { describeSource } from '../../core/sources.ts';
import type { Finding } from '../../harness/checks/index.ts';
import { reportSafe } from '../../core/report-text.ts';
import type { OperationAvailability } from '../../harness/client/careful.ts';
import type { RunSummary } from '../results/verdict-stream.ts';
import type { Exchange } from '../../harness/client/momo-client.ts';
import type { Reproduction } from './reproductions.ts';
import { curlOf } from '../../harness/reproduction/curl.ts';
import type { ScenarioEvidence } from './evidence.ts';
import { specOperationsOf } from './operations.ts';
import { requirementIdsOf, type Requirement } from './requirements.ts';
import {
  certify,
  coverageOf,
  exitCodeOf,
  type RequirementScenarioVerdict,
  type Coverage,
  type RequirementVerdict,
  type RunContext,
  type WaiverStatus,
} from './verdicts.ts';
import type { Waiver } from './waivers.ts';
import {
  CHANGES,
  catalogueFingerprint,
  compareWithBaseline,
  exitCodeWithBaseline,
  scenarioKey,
  type Baseline,
  type Change,
  type ChangeCounts,
  type FailOn,
} from './baseline.ts';
import { OPERATION_IDS } from '../../core/catalogue/operations.ts';
import { readScenarios } from './coverage.ts';
import { ruleMatrix, runRuleCoverage, type RunRuleCoverage } from './rule-matrix.ts';

/** certification.json: everything index.html shows, for machines (schemas/certification-report.schema.json). */
export interface CertificationReport {
  harness: { name: string; version: string };
  generatedAt: string;
  /** The spec the requirements were read from, and its SHA-256; null when the file was not found. */
  spec: { file: string; sha256: string } | null;
  /** The operation catalogue the run was held to: a baseline compares only with a run of the same fingerprint. */
  catalogue: { operations: number; fingerprint: string };
  target: string;
  profile: { name: ProfileName; deviations: { name: string; explanation: string; spec: unknown; profile: unknown }[] };
  selection: { requested: string | null; expression: string };
  exitCode: 0 | 1 | 2;
  outcome: 'conforms' | 'does not conform' | 'could not test';
  coverage: Coverage;
  /** Rule × operation (rule-matrix.ts): where each rule of a class of operations was checked, and what it gave. */
  ruleCoverage: RunRuleCoverage;
  /** What fails the run besides failed requirements: expired and unused waivers. */
  problems: string[];
  waivers: (Waiver & { status: WaiverStatus })[];
  requirements: ReportedRequirement[];
  scenarios: ReportedScenario[];
  /** With --baseline: the earlier run, and how many requirements and scenarios fall in each class of change. */
  baseline?: ReportedBaseline;
  /**
   * The target's availability over the run, an operation a row: the calls the careful client had to make again and what
   * they met (harness/client/careful.ts). An observation, never part of the verdict.
   */
  availability?: OperationAvailability[];
}

export interface ReportedBaseline {
  file: string;
  generatedAt: string;
  target: string;
  failOn: FailOn;
  counts: { requirements: ChangeCounts; scenarios: ChangeCounts };
}

export interface ReportedRequirement extends Requirement {
  /** Keys of the spec operations (of the 19) it is about. */
  specOperations: string[];
  verdict: RequirementVerdict;
  explanation: string;
  scenarios: string[];
  deviations: string[];
  /** What each scenario that ran says of it (a failed one by the checks that cite it). */
  scenarioVerdicts: Record<string, RequirementScenarioVerdict>;
  waiver?: Waiver;
  /** With --baseline: what became of it since the baseline run. */
  change?: Change;
}

export interface ReportedScenario extends ScenarioEvidence {
  /** The requirements its '@req:' tags name. */
  requirements: string[];
  exchanges: ReportedExchange[];
  /** When it failed to conform: the script that replays it by itself (harness/reproduction/script.ts). */
  reproduction?: Reproduction;
  /** With --baseline: what became of it since the baseline run. */
  change?: Change;
}

/** An exchange of the evidence; in a failed scenario, with the curl command that sends it again (harness/reproduction/curl.ts). */
export type ReportedExchange = Exchange & { curl?: string };

export interface ReportInputs {
  harness: { name: string; version: string };
  generatedAt: Date;
  spec: { file: string; sha256: string } | null;
  summary: Pick<RunSummary, 'target' | 'exitCode' | 'scenarios'> & Partial<Pick<RunSummary, 'availability'>>;
  requirements: readonly Requirement[];
  scenarios: readonly ScenarioEvidence[];
  waivers: readonly Waiver[];
  run: Omit<RunContext, 'date'>;
  /** The earlier run to compare with (--baseline), and what fails the run then (--fail-on). */
  baseline?: { baseline: Baseline; failOn: FailOn };
  /** The reproduction of each failed scenario, by its id. */
  reproductions?: ReadonlyMap<string, Reproduction>;
}

/** The certification of one run: verdicts per requirement, coverage, waivers, and each scenario's evidence. */
export function buildReport(inputs: ReportInputs): CertificationReport {
  const run: RunContext = { ...inputs.run, date: inputs.generatedAt.toISOString().slice(0, 10) };
  const certification = certify(inputs.requirements, inputs.scenarios, inputs.waivers, run);
  const requirements: ReportedRequirement[] = certification.requirements.map(({ requirement, ...verdict }) => ({
    ...requirement,
    specOperations: specOperationsOf(requirement),
    ...verdict,
  }));
  // A failed scenario's exchanges, and those of each failed attempt of a flaky one, carry their curl commands.
  const scenarios: ReportedScenario[] = inputs.scenarios.map((s) => ({
    ...s,
    requirements: requirementIdsOf(s.tags),
    exchanges: s.verdict === 'failed' ? s.exchanges.map(withCurl) : s.exchanges,
    ...(inputs.reproductions?.has(s.id) ? { reproduction: inputs.reproductions.get(s.id)! } : {}),
    ...(s.earlierAttempts
      ? {
          earlierAttempts: s.earlierAttempts.map((a) => ({
            ...a,
            exchanges: a.verdict === 'failed' ? a.exchanges.map(withCurl) : a.exchanges,
          })),
        }
      : {}),
  }));
  let exitCode = exitCodeOf(inputs.summary, certification);
  let baseline: ReportedBaseline | undefined;
  if (inputs.baseline) {
    const { baseline: earlier, failOn } = inputs.baseline;
    const comparison = compareWithBaseline(earlier, { requirements, scenarios });
    for (const r of requirements) r.change = comparison.requirements.get(r.id);
    for (const s of scenarios) s.change = comparison.scenarios.get(scenarioKey(s));
    const untested =
      inputs.summary.scenarios.some((s) => s.verdict === 'not tested') ||
      !inputs.summary.scenarios.some((s) => s.verdict === 'passed' || s.verdict === 'flaky');
    exitCode = exitCodeWithBaseline(exitCode, comparison, failOn, certification.problems, untested);
    baseline = { file: earlier.file, generatedAt: earlier.generatedAt, target: earlier.target, failOn, counts: comparison.counts };
  }
  const deviations = Object.entries(DIFFERENCES)
    .filter(([, d]) => d[run.profile] !== d.spec)
    .map(([name, d]) => ({ name, explanation: d.explanation, spec: d.spec, profile: d[run.profile] }));
  return {
    harness: inputs.harness,
    generatedAt: inputs.generatedAt.toISOString(),
    spec: inputs.spec,
    catalogue: { operations: OPERATION_IDS.length, fingerprint: catalogueFingerprint() },
    target: inputs.summary.target,
    profile: { name: run.profile, deviations },
    selection: { requested: run.requested ?? null, expression: run.expression },
    exitCode,
    outcome: (['conforms', 'does not conform', 'could not test'] as const)[exitCode],
    coverage: coverageOf(certification.requirements),
    ruleCoverage: runRuleCoverage(
      ruleMatrix(
        certification.requirements.map((r) => r.requirement),
        readScenarios(),
      ),
      new Map(certification.requirements.map((r) => [r.requirement.id, r.verdict])),
    ),
    problems: certification.problems,
    waivers: certification.waivers.map(({ waiver, status }) => ({ ...waiver, status })),
    requirements,
    scenarios,
    ...(baseline ? { baseline } : {}),
    ...(inputs.summary.availability?.some((a) => a.retried > 0) ? { availability: inputs.summary.availability } : {}),
  };
}

/** Each exchange of a failed scenario carries the command that reproduces it, run in order the scenario's calls. */
function withCurl(exchange: Exchange): ReportedExchange {
  const curl = curlOf(exchange);
  return curl === undefined ? exchange : { ...exchange, curl };
}

/** A requirement that failed, in a scenario that failed it: the checks of the scenario's failure that cite it. */
export interface FailureRow {
  requirement: ReportedRequirement;
  scenario: ReportedScenario;
  /** The findings of the checks the requirement cites; all the failure's when none does (a failure is never lost). */
  findings: readonly Finding[];
}

/** Every failed requirement with each scenario that failed it, in catalogue order: what the reports begin with. */
export function failuresOf(report: Pick<CertificationReport, 'requirements' | 'scenarios'>): FailureRow[] {
  const scenarioOf = new Map(report.scenarios.map((s) => [s.id, s]));
  return report.requirements
    .filter((r) => r.verdict === 'FAIL')
    .flatMap((requirement) =>
      requirement.scenarios
        .filter((id) => requirement.scenarioVerdicts[id] === 'failed')
        .map((id) => scenarioOf.get(id))
        .filter((scenario): scenario is ReportedScenario => scenario !== undefined)
        .map((scenario) => {
          const all = scenario.failure?.findings ?? [];
          const cited = all.filter((f) => requirement.checks?.includes(f.check));
          return { requirement, scenario, findings: cited.length > 0 ? cited : all };
        }),
    );
}

/** A finding as the terminal says it: the check, its source, the field and the difference, each part cut short. */
export function differenceOf(f: Finding): string {
  return `${f.check} (${describeSource(f.source)}): ${f.field !== undefined ? `${f.field}: ` : ''}expected ${short(f.expected)}, got ${short(f.received)}`;
}

function short(text: string): string {
  return text.length > LONGEST_VALUE_IN_TERMINAL
    ? `${text.slice(0, LONGEST_VALUE_IN_TERMINAL)}… (${text.length} characters; the certification page has it whole)`
    : text;
}

const LONGEST_VALUE_IN_TERMINAL = 160;

/**
 * The failures as the terminal begins its summary with them: each failed scenario once, the requirements it failed,
 * what its checks found and the command that replays it; the first FAILURES_LISTED scenarios, then a count.
 */
function failureLines(failures: readonly FailureRow[], conformanceDir: string | undefined): string[] {
  if (failures.length === 0) return [];
  const byScenario = new Map<string, { scenario: ReportedScenario; requirements: string[]; findings: Finding[] }>();
  for (const { requirement, scenario, findings } of failures) {
    const entry = byScenario.get(scenario.id) ?? { scenario, requirements: [], findings: [] };
    entry.requirements.push(requirement.id);
    for (const f of findings) if (!entry.findings.includes(f)) entry.findings.push(f);
    byScenario.set(scenario.id, entry);
  }
  const requirements = new Set(failures.map((f) => f.requirement.id)).size;
  const lines = [
    `Failures: ${requirements} requirement${requirements === 1 ? '' : 's'} failed, in ${byScenario.size} scenario${byScenario.size === 1 ? '' : 's'}.`,
  ];
  for (const { scenario, requirements: ids, findings } of [...byScenario.values()].slice(0, FAILURES_LISTED)) {
    lines.push(
      `  ✘ ${scenario.feature} › ${scenario.name} (${scenario.uri}${scenario.line ? `:${scenario.line}` : ''})`,
      `    fails ${ids.join(', ')}`,
    );
    for (const f of findings) lines.push(`    ${differenceOf(f)}`);
    if (scenario.reproduction)
      lines.push(
        `    reproduce: sh ${conformanceDir ? shortPath(join(conformanceDir, scenario.reproduction.file)) : scenario.reproduction.file}`,
      );
  }
  if (byScenario.size > FAILURES_LISTED)
    lines.push(`  … and ${byScenario.size - FAILURES_LISTED} more failed scenarios on the certification page.`);
  return lines;
}

/** A path relative to the working folder when it lies inside it, else absolute. */
export function shortPath(file: string): string {
  const path = relative(process.cwd(), file);
  return path.startsWith('..') ? file : path;
}

/** The most failures the terminal lists one by one; the certification page lists them all. */
const FAILURES_LISTED = 20;

/**
 * The lines `npm start` ends with: first the failures (requirement, scenario, check and difference, and the
 * command that replays it), then requirements covered and passed out of the total, operations out of 19.
 */
export function closingLines(report: CertificationReport, indexHtml: string, conformanceDir?: string): string[] {
  const { total, operations, operationsCovered } = report.coverage;
  const v = total.verdicts;
  const others = (['WARN', 'FAIL', 'WAIVED', 'NOT TESTED', 'NOT APPLICABLE'] as const).filter((k) => v[k] > 0).map((k) => `${v[k]} ${k}`);
  const lines: string[] = failureLines(failuresOf(report), conformanceDir);
  lines.push(
    `Requirements: ${total.covered} of ${total.requirements} covered, ${v.PASS} of ${total.requirements} passed${others.length > 0 ? ` (${others.join(', ')})` : ''}; ${total.unprovokable} more no client can provoke.`,
    `Operations: ${operationsCovered} of ${operations.length} covered.`,
  );
  for (const group of report.coverage.apart) {
    if (group.requirements === 0) continue;
    const how = group.group === 'strict reading' ? 'run with --strict to check them' : 'run with --tags @beyond-spec to check them';
    const wanting = group.covered === 0 ? ` (${how})` : '';
    lines.push(
      `Counted apart, ${group.group === 'strict reading' ? 'strict readings' : 'beyond the spec'}: ${group.covered} of ${group.requirements} covered, ${group.verdicts.PASS} passed${group.verdicts.FAIL > 0 ? `, ${group.verdicts.FAIL} FAIL` : ''}${wanting}.`,
    );
  }
  for (const problem of report.problems) lines.push(`WAIVER: ${problem}`);
  if (report.baseline) lines.push(...baselineLines(report));
  const exchanges = report.scenarios.flatMap((s) => s.exchanges);
  const omitted = exchanges.filter((e) => e.omitted !== undefined).length;
  if (omitted > 0)
    lines.push(
      `Evidence: ${omitted} of ${exchanges.length} exchanges not recorded, the run's evidence budget (MOMO_EVIDENCE_BUDGET_BYTES) was spent; each keeps only its call and outcome.`,
    );
  lines.push(`Certification report: ${indexHtml}`);
  return lines;
}

/** What changed since the baseline, in the terminal: the counts, then each requirement and scenario that moved. */
function baselineLines(report: CertificationReport): string[] {
  const { baseline } = report;
  if (!baseline) return [];
  const counted = (counts: ChangeCounts) =>
    CHANGES.filter((c) => counts[c] > 0)
      .map((c) => `${counts[c]} ${c}`)
      .join(', ') || 'none';
  const lines = [
    `Since the baseline ${baseline.file} (${baseline.generatedAt}, ${reportSafe(baseline.target)}):`,
    `  requirements: ${counted(baseline.counts.requirements)}`,
    `  scenarios: ${counted(baseline.counts.scenarios)}`,
  ];
  const moved: Change[] = ['new failure', 'fixed', 'flaky'];
  for (const change of moved) {
    for (const r of report.requirements.filter((x) => x.change === change)) lines.push(`  ${change.toUpperCase()}: ${r.id} (${r.section})`);
    for (const s of report.scenarios.filter((x) => x.change === change))
      lines.push(`  ${change.toUpperCase()}: ${s.feature} › ${s.name} (${s.uri}${s.line ? `:${s.line}` : ''})`);
  }
  if (baseline.failOn === 'new')
    lines.push(
      `  --fail-on new: ${baseline.counts.scenarios['new failure'] + baseline.counts.requirements['new failure'] > 0 ? 'a new failure fails the run' : 'failures that failed in the baseline too do not fail the run'}.`,
    );
  return lines;
}
