import { parse as parseTagExpression } from '@cucumber/tag-expressions';
import { DIFFERENCES, type ProfileName } from '../../core/profiles.ts';
import type { RunSummary, Verdict as ScenarioVerdict } from '../results/verdict-stream.ts';
import { DIFFERENCE_REQUIREMENTS, type DifferenceName } from './profile-differences.ts';
import { SPEC_OPERATIONS, specOperationsOf } from './operations.ts';
import { BEYOND_SPEC_TAG, STRICT_TAG, groupOf, requirementIdsOf, type Requirement, type RequirementGroup } from './requirements.ts';
import type { Waiver } from './waivers.ts';
import { isGeneral, type Evaluation, type Warning } from '../../harness/checks/index.ts';

/**
 * PASS: its scenarios ran and passed. FAIL: one of them showed the target departing from it. WARN: they
 * passed only because the active profile accepts a named, explained deviation (core/profiles.ts DIFFERENCES).
 * NOT APPLICABLE: none of its scenarios was part of this run (the tag selection, or the kind of target, left
 * them out, or they skipped themselves). NOT TESTED: the target could not be tested (it did not answer).
 * WAIVED: it failed, and a waiver that has not expired accepts the failure. UNPROVOKABLE: no client can make
 * a target show it; the catalogue says why. FLAKY: none failed, but one passed only when run again
 * (MOMO_RETRIES): covered, never PASS, and it does not fail the run.
 */
export const REQUIREMENT_VERDICTS = ['PASS', 'FAIL', 'FLAKY', 'WARN', 'WAIVED', 'NOT TESTED', 'NOT APPLICABLE', 'UNPROVOKABLE'] as const;
export type RequirementVerdict = (typeof REQUIREMENT_VERDICTS)[number];

/** The verdicts of requirements that a scenario of this run checked, whatever the outcome. */
const COVERED: ReadonlySet<RequirementVerdict> = new Set(['PASS', 'FAIL', 'FLAKY', 'WARN', 'WAIVED']);

/** One scenario of the suite, whether this run ran it or not. */
export interface ScenarioOutcome {
  /** The pickle's id in the run's messages. */
  id: string;
  feature: string;
  name: string;
  uri: string;
  line?: number;
  tags: string[];
  /** The ledger's verdict; 'not run' when the run's tag expression left the scenario out. */
  verdict: ScenarioVerdict | 'not run';
  reason?: string;
  /** What its checks found that the run weighs as a warning: reported apart, changing no verdict. */
  warnings?: Warning[];
  /** The checks it made and how each came out: a requirement it is tagged with is judged by those that cite it. */
  checks?: Evaluation[];
}

/** What of the run the verdicts depend on. */
export interface RunContext {
  profile: ProfileName;
  /** The tag expression the user asked for (--tags), if any. */
  requested?: string;
  /** The run's whole tag expression: the user's, less what this target cannot take part in. */
  expression: string;
  /** With --rerun-failed: the summary.json whose failed scenarios alone this run ran again. */
  rerunOf?: string;
  /** The day of the run (UTC, YYYY-MM-DD), against which waivers expire. */
  date: string;
}

export interface RequirementResult {
  requirement: Requirement;
  verdict: RequirementVerdict;
  /** Why this verdict, in a sentence or two a reviewer can act on. */
  explanation: string;
  /** The ids of the scenarios that verify it, run or not. */
  scenarios: string[];
  /** The profile deviations it passed under (WARN). */
  deviations: DifferenceName[];
  /** What each scenario that ran says of it: a failed scenario, by the checks that cite it. */
  scenarioVerdicts: Record<string, RequirementScenarioVerdict>;
  /** The waiver that names it, if any (applied or not). */
  waiver?: Waiver;
}

/**
 * applied: it waived a failure. expired: its day has passed, so the failure counts. unused: its requirement
 * was checked and did not fail, so the waiver is stale. not in this run: its requirement was not checked.
 */
export type WaiverStatus = 'applied' | 'expired' | 'unused' | 'not in this run';

export interface WaiverResult {
  waiver: Waiver;
  status: WaiverStatus;
}

export interface Certification {
  requirements: RequirementResult[];
  waivers: WaiverResult[];
  /** What fails the run besides the failures: expired and unused waivers, one message each. */
  problems: string[];
}

/** The verdict of every requirement of the catalogue, given every scenario of the suite and the waivers. */
export function certify(
  requirements: readonly Requirement[],
  scenarios: readonly ScenarioOutcome[],
  waivers: readonly Waiver[],
  run: RunContext,
): Certification {
  const byRequirement = new Map<string, ScenarioOutcome[]>();
  for (const scenario of scenarios) {
    for (const id of requirementIdsOf(scenario.tags)) byRequirement.set(id, [...(byRequirement.get(id) ?? []), scenario]);
  }
  // A failed check also fails a requirement it cites that the scenario is not tagged with (citersOf).
  const citing = new Map(scenarios.map((scenario) => [scenario.id, citersOf(scenario, requirements)]));
  for (const scenario of scenarios) {
    for (const r of citing.get(scenario.id)!)
      if (!requirementIdsOf(scenario.tags).includes(r.id)) byRequirement.set(r.id, [...(byRequirement.get(r.id) ?? []), scenario]);
  }
  const waiverOf = new Map(waivers.map((w) => [w.requirement, w]));
  const citingOf = (scenario: ScenarioOutcome) => citing.get(scenario.id) ?? [];
  const results = requirements.map((requirement) => {
    const judged = judgeRequirement(requirement, byRequirement.get(requirement.id) ?? [], run, citingOf);
    const waiver = waiverOf.get(requirement.id);
    if (judged.verdict === 'FAIL' && waiver) {
      if (isExpired(waiver, run.date))
        judged.explanation = `The waiver of ${waiver.owner} expired on ${waiver.expires}. ${judged.explanation}`;
      else
        Object.assign(judged, {
          verdict: 'WAIVED',
          explanation: `Waived until ${waiver.expires} by ${waiver.owner}: ${waiver.reason}. ${judged.explanation}`,
        });
    }
    return { ...judged, ...(waiver ? { waiver } : {}) };
  });

  const verdictOf = new Map(results.map((r) => [r.requirement.id, r.verdict]));
  const waiverResults: WaiverResult[] = [];
  const problems: string[] = [];
  for (const waiver of waivers) {
    const verdict = verdictOf.get(waiver.requirement);
    const status: WaiverStatus = isExpired(waiver, run.date)
      ? 'expired'
      : verdict === 'WAIVED'
        ? 'applied'
        : verdict === 'NOT APPLICABLE' || verdict === 'NOT TESTED'
          ? 'not in this run'
          : 'unused';
    waiverResults.push({ waiver, status });
    if (status === 'expired')
      problems.push(
        `The waiver of ${waiver.requirement} (owner ${waiver.owner}) expired on ${waiver.expires}: fix the failure, or renew the waiver with a new expiry date.`,
      );
    if (status === 'unused')
      problems.push(
        `The waiver of ${waiver.requirement} (owner ${waiver.owner}) waived nothing: the requirement was checked and is ${verdict}. Remove the waiver.`,
      );
  }
  return { requirements: results, waivers: waiverResults, problems };
}

function judgeRequirement(
  requirement: Requirement,
  scenarios: ScenarioOutcome[],
  run: RunContext,
  citingOf: (scenario: ScenarioOutcome) => Requirement[],
): Omit<RequirementResult, 'waiver'> {
  const said = scenarios.map((scenario) => ({ scenario, verdict: verdictFor(requirement, scenario, citingOf(scenario)) }));
  const result = (verdict: RequirementVerdict, explanation: string, deviations: DifferenceName[] = []) => ({
    requirement,
    verdict,
    explanation,
    scenarios: scenarios.map((s) => s.id),
    deviations,
    scenarioVerdicts: Object.fromEntries(said.filter((s) => s.verdict !== 'not run').map((s) => [s.scenario.id, s.verdict])),
  });
  if (requirement.verification === 'unprovokable')
    return result('UNPROVOKABLE', `No client can provoke it: ${requirement.why ?? 'the catalogue gives no reason'}`);
  if (scenarios.length === 0 && run.rerunOf)
    return result('NOT APPLICABLE', `Not part of this run: it ran again only the failed and flaky scenarios of ${run.rerunOf}.`);
  if (scenarios.length === 0) return result('NOT TESTED', 'No scenario verifies it.');

  const having = (verdict: RequirementScenarioVerdict) => said.filter((s) => s.verdict === verdict).map((s) => s.scenario);
  const failed = having('failed');
  const notReached = having('not reached');
  const notTested = having('not tested');
  const passed = having('passed');
  const skipped = having('skipped');
  const flaky = having('flaky');
  const count = (list: ScenarioOutcome[]) => `${list.length} of ${scenarios.length} scenario${scenarios.length === 1 ? '' : 's'}`;
  // The first scenario of a kind, by name, with the first line of its reason.
  const first = ([scenario]: ScenarioOutcome[]) => `${scenario?.name}: ${(scenario?.reason ?? 'no reason was recorded').split('\n')[0]}`;
  if (failed.length > 0) return result('FAIL', `${count(failed)} failed. ${first(failed)}`);
  if (notTested.length > 0) return result('NOT TESTED', `${count(notTested)} could not test the target. ${first(notTested)}`);
  if (notReached.length > 0 && notReached.every((s) => s.verdict === 'passed') && passed.length === 0)
    return result(
      'NOT TESTED',
      `Not reached: ${count(notReached)} passed without checking it on this target: the way each took (a premise that held instead of another, harness/checks/premises.ts) does not pass through it.`,
    );
  if (notReached.length > 0 && notReached.some((s) => s.verdict !== 'passed'))
    return result('NOT TESTED', `Not reached: ${count(notReached)} failed before checking it. ${first(notReached)}`);
  if (flaky.length > 0) return result('FLAKY', `${count(flaky)} passed only when run again. The first attempt of ${first(flaky)}`);
  if (passed.length > 0) {
    const left = scenarios.length - passed.length;
    const passedText = `${count(passed)} passed${left > 0 ? `; ${left} did not run` : ''}.`;
    const deviations = activeDeviations(requirement.id, run.profile);
    if (deviations.length === 0) return result('PASS', passedText);
    const named = deviations.map((name) => `${name}: ${DIFFERENCES[name].explanation}`).join(' ');
    return result(
      'WARN',
      `${passedText} It passes only because the ${run.profile} profile accepts a documented deviation from the spec. ${named}`,
      deviations,
    );
  }
  if (skipped.length > 0) return result('NOT APPLICABLE', `${count(skipped)} skipped. ${first(skipped)}`);
  return result('NOT APPLICABLE', whyNotRun(requirement, scenarios, run));
}

/** What a scenario says of one requirement it is tagged with: its own verdict, or, when it failed, its checks'. */
export type RequirementScenarioVerdict = ScenarioOutcome['verdict'] | 'not reached';

/**
 * A failed scenario fails only the requirements whose checks failed in it: a requirement is about some operations
 * and verified by some checks (its catalogue entry), and a failed check of one of them, on one of them, fails it.
 * One whose checks passed before the failure passed; one whose checks the scenario never reached is not reached.
 * `citing` are the requirements of the catalogue that cite the scenario's failure (citersOf): when none does, every
 * requirement the scenario is tagged with fails, so that no failure is lost.
 */
export function verdictFor(
  requirement: Requirement,
  scenario: Pick<ScenarioOutcome, 'verdict' | 'checks'>,
  citing: readonly Requirement[],
): RequirementScenarioVerdict {
  // A scenario that passed on a way that does not pass through a requirement it carries (the consent redeemed within
  // one product, say) did not verify it: its checks are the evidence, and none cites it.
  if (scenario.verdict === 'passed' && requirement.checks && (scenario.checks?.length ?? 0) > 0)
    return scenario.checks!.some((e) => cites(requirement, e)) ? 'passed' : 'not reached';
  if (scenario.verdict !== 'failed' || !requirement.checks) return scenario.verdict;
  const made = (scenario.checks ?? []).filter((e) => cites(requirement, e));
  if (made.some((e) => e.verdict === 'failed')) return 'failed';
  if (citing.length === 0) return 'failed';
  return made.length > 0 ? 'passed' : 'not reached';
}

/** Whether a requirement cites a check made: the check is one of its own, on one of its operations, under one of its products. */
export function cites(requirement: Requirement, e: Evaluation): boolean {
  const { checks = [], operations, products } = requirement;
  // Provisioning is opened by any product's key: its requirements are of no product of the three.
  const ofProduct = products.includes('provisioning') || e.product === undefined || products.includes(e.product);
  return checks.includes(e.check) && (operations.length === 0 || operations.includes(e.operation)) && ofProduct;
}

/**
 * The requirements a failed scenario's failed checks cite: those it is tagged with, and, for a check that holds of
 * every answer whatever the case (isGeneral: a record's schema, not a duplicate's status), any other requirement
 * about the operation that the check verifies. A status record that departs from its schema, read in a callback
 * scenario, so fails the status query's requirement.
 */
export function citersOf(scenario: Pick<ScenarioOutcome, 'verdict' | 'checks' | 'tags'>, catalogue: readonly Requirement[]): Requirement[] {
  if (scenario.verdict !== 'failed') return [];
  const tagged = new Set(requirementIdsOf(scenario.tags));
  const failed = (scenario.checks ?? []).filter((e) => e.verdict === 'failed');
  return catalogue.filter((r) => failed.some((e) => cites(r, e) && (tagged.has(r.id) || (isGeneral(e.check) && r.operations.length > 0))));
}

/** Whether the user's own selection left a scenario out, or what this target or run need not take part in. */
function whyNotRun(requirement: Requirement, scenarios: ScenarioOutcome[], run: RunContext): string {
  const requested = run.requested ? parseTagExpression(run.requested) : undefined;
  if (requested && scenarios.every((s) => !requested.evaluate(s.tags)))
    return `Not selected: its scenarios are outside --tags "${run.requested}".`;
  const leftOut = (tag: string) => scenarios.every((s) => s.tags.includes(tag)) && run.expression.includes(`not ${tag}`);
  if (requirement.reading && leftOut(STRICT_TAG))
    return `A strict reading (${requirement.reading}), beyond what the spec and the live service make definite: run with --strict to hold the target to it.`;
  if (requirement.scope === 'beyond-spec' && leftOut(BEYOND_SPEC_TAG))
    return `An operation beyond the spec, which a target need not offer: run with --tags ${BEYOND_SPEC_TAG} to check it.`;
  return `Left out for this target: its scenarios are outside the run's selection "${run.expression}".`;
}

/** The differences of the active profile from the spec that a requirement is linked to. */
function activeDeviations(requirementId: string, profile: ProfileName): DifferenceName[] {
  return (Object.keys(DIFFERENCE_REQUIREMENTS) as DifferenceName[]).filter(
    (name) => DIFFERENCE_REQUIREMENTS[name].includes(requirementId) && DIFFERENCES[name][profile] !== DIFFERENCES[name].spec,
  );
}

function isExpired(waiver: Waiver, date: string): boolean {
  // Both are YYYY-MM-DD, so their order as strings is their order as days; the waiver holds through its day.
  return date > waiver.expires;
}

export interface CoverageCount {
  requirements: number;
  covered: number;
  verdicts: Record<RequirementVerdict, number>;
}

export interface Coverage {
  /** Every requirement of the spec a client can provoke, and its verdicts; UNPROVOKABLE ones counted apart. */
  total: CoverageCount & { unprovokable: number };
  /** The requirements of the strict readings (checked with --strict) and of the operations beyond the spec, counted apart from the spec's. */
  apart: ({ group: Exclude<RequirementGroup, 'spec'> } & CoverageCount & { unprovokable: number })[];
  products: ({ product: string } & CoverageCount)[];
  operations: { key: string; section: string; name: string; requirements: string[]; covered: number }[];
  operationsCovered: number;
}

/**
 * Coverage at a glance: requirements of the spec covered (checked by a scenario of the run) in all, per product
 * and per spec operation; the strict readings and the operations beyond the spec counted apart.
 */
export function coverageOf(all: readonly RequirementResult[]): Coverage {
  const results = all.filter((r) => groupOf(r.requirement) === 'spec');
  const testable = results.filter((r) => r.verdict !== 'UNPROVOKABLE');
  const products = [...new Set(results.flatMap((r) => r.requirement.products))];
  const apart = (['strict reading', 'beyond the spec'] as const).map((group) => {
    const inGroup = all.filter((r) => groupOf(r.requirement) === group);
    const provokable = inGroup.filter((r) => r.verdict !== 'UNPROVOKABLE');
    return { group, ...countOf(provokable), unprovokable: inGroup.length - provokable.length };
  });
  const operations = SPEC_OPERATIONS.map((operation) => {
    const about = results.filter((r) => specOperationsOf(r.requirement).includes(operation.key));
    return { ...operation, requirements: about.map((r) => r.requirement.id), covered: about.filter((r) => COVERED.has(r.verdict)).length };
  });
  return {
    total: { ...countOf(testable), unprovokable: results.length - testable.length },
    apart,
    products: products.map((product) => ({ product, ...countOf(testable.filter((r) => r.requirement.products.includes(product))) })),
    operations,
    operationsCovered: operations.filter((o) => o.covered > 0).length,
  };
}

function countOf(results: readonly RequirementResult[]): CoverageCount {
  const verdicts = Object.fromEntries(REQUIREMENT_VERDICTS.map((v) => [v, 0])) as Record<RequirementVerdict, number>;
  for (const r of results) verdicts[r.verdict] += 1;
  return { requirements: results.length, covered: results.filter((r) => COVERED.has(r.verdict)).length, verdicts };
}

/**
 * The run's exit code once waivers count: a failed scenario whose every requirement is WAIVED no longer
 * fails the run; an expired or unused waiver does. Otherwise as the scenarios' own (conformance/runner/ledger.ts):
 * 1 a failure, 2 something could not be tested or nothing passed, 0 the target conforms.
 */
export function exitCodeOf(summary: Pick<RunSummary, 'exitCode' | 'scenarios'>, certification: Certification): 0 | 1 | 2 {
  const resultOf = new Map(certification.requirements.map((r) => [r.requirement.id, r]));
  // A failed scenario no longer fails the run when every requirement it fails (by its failed checks) is waived.
  const catalogue = certification.requirements.map((r) => r.requirement);
  const waived = (scenario: RunSummary['scenarios'][number]) => {
    const citing = citersOf(scenario, catalogue);
    const failing = citing.length > 0 ? citing : requirementIdsOf(scenario.tags).flatMap((id) => resultOf.get(id)?.requirement ?? []);
    return failing.length > 0 && failing.every((r) => resultOf.get(r.id)?.verdict === 'WAIVED');
  };
  const failed = summary.scenarios.filter((s) => s.verdict === 'failed');
  if (failed.some((s) => !waived(s)) || certification.problems.length > 0) return 1;
  if (failed.length === 0) return summary.exitCode;
  const rest = summary.scenarios.filter((s) => s.verdict !== 'failed');
  return rest.some((s) => s.verdict === 'not tested') || !rest.some((s) => s.verdict === 'passed' || s.verdict === 'flaky') ? 2 : 0;
}
