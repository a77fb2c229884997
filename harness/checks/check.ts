import { describeSource, severityOf, weakest, weightOf, type RunStrictness, type Severity, type Source } from '../../core/sources.ts';
import type { OperationId } from '../../core/catalogue/operations.ts';
import type { Product } from '../../core/products.ts';
import type { CheckName } from './index.ts';

/**
 * What every check is, whatever its family: a name, what it holds a target to, the source of that rule, and the
 * sources of the values it compares with where they are weaker than the rule (a case's premises are its own:
 * harness/checks/premises.ts). A family of checks
 * (harness/checks/<family>.ts) keeps each check's definition beside the function that makes it, as Schemathesis's
 * checks.py does; harness/checks/index.ts gathers them.
 */
export interface CheckDefinition {
  title: string;
  /** Where the rule comes from: the firmest a finding of the check can weigh. */
  source: Source;
  /** The expected values the check compares with whose source is not the rule's, by name: a finding about one rests on it too. */
  values?: Readonly<Record<string, Source>>;
  /** It only informs (an unknown field, under --strict): a warning whatever the run. */
  advisory?: true;
  /**
   * It holds of every answer of its operation, whatever the case (a record's schema, a secret kept), rather than of
   * the case a scenario sets up: a failure of it fails every requirement that cites it, not only the scenario's.
   */
  general?: true;
}

/** What a finding rests on, besides nothing: the check's rule, the expected value, a premise. */
export interface Basis {
  /** "the check", "the expected value", "premise refund-by-another-api-user: …". */
  on: string;
  source: Source;
}

/**
 * One thing a check found about an answer. `field` says where: a JSON pointer into the body ("/amount"), "status",
 * or a header. `expected` and `received` are short, and safe to show (the caller redacts what it quotes). `source`
 * is what the finding weighs as much as: the weakest of its basis in the run that weighed it.
 */
export interface Finding {
  check: CheckName;
  source: Source;
  /** Every source it rests on, when more than one: the check's rule, the expected value's, each premise assumed. */
  basis?: Basis[];
  advisory?: true;
  field?: string;
  expected: string;
  received: string;
}

export interface Found {
  field?: string;
  expected: string;
  received: string;
  /** The source of the expected value, when it is not the check's rule (a more precise clause, an observation). */
  source?: Source;
}

/** A finding of a check of a family, resting on the check's rule and, when it has one, the expected value's own source. */
export function findingOf(name: CheckName, definition: CheckDefinition, found: Found): Finding {
  const basis: Basis[] =
    found.source !== undefined && !sameSource(found.source, definition.source)
      ? [
          { on: 'the expected value', source: found.source },
          { on: `the check ${name}`, source: definition.source },
        ]
      : [];
  return {
    check: name,
    source: found.source ?? definition.source,
    ...(basis.length > 0 ? { basis } : {}),
    ...(definition.advisory ? { advisory: true as const } : {}),
    ...(found.field !== undefined ? { field: found.field } : {}),
    expected: found.expected,
    received: found.received,
  };
}

/** A value quoted in a finding is cut to this many characters. */
const MAX_VALUE_IN_FINDING = 120;

/** A value as a finding quotes it: JSON, cut short. */
export function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_VALUE_IN_FINDING ? `${text.slice(0, MAX_VALUE_IN_FINDING)}… (${text.length} characters)` : text;
}

const sameSource = (a: Source, b: Source) => JSON.stringify(a) === JSON.stringify(b);

/** The sources a finding rests on. */
export const basisOf = (f: Finding): Source[] => (f.basis && f.basis.length > 0 ? f.basis.map((b) => b.source) : [f.source]);

/** A finding that also rests on more sources (premises assumed): its basis grown, its source what it weighs as now. */
export function restingOn(f: Finding, more: readonly Basis[], run: RunStrictness): Finding {
  if (more.length === 0) return { ...f, source: weakest(basisOf(f), run) };
  const basis = [...(f.basis && f.basis.length > 0 ? f.basis : [{ on: 'the expected value', source: f.source }]), ...more];
  return {
    ...f,
    basis,
    source: weakest(
      basis.map((b) => b.source),
      run,
    ),
  };
}

/** How a finding weighs in a run: as much as the weakest source under it; an advisory check's never more than a warning. */
export function severityOfFinding(f: Finding, run: RunStrictness): Severity {
  if (f.advisory) return 'warning';
  return severityOf(weakest(basisOf(f), run), run);
}

/** "amount: expected "12.5", got "13.5"": what a finding says, one line. */
export function describeDifference(f: Finding): string {
  return `${f.field !== undefined ? `${f.field}: ` : ''}expected ${f.expected}, got ${f.received}`;
}

/** "status-code (definite: §7 rule 1)": the check and its source. */
export function describeCheck(f: Finding): string {
  return `${f.check} (${describeSource(f.source)})`;
}

/** The premises a finding rests on, one phrase: "; resting on the premise …". Empty when it rests on none. */
export function describePremises(f: Finding): string {
  const premises = (f.basis ?? []).filter((b) => b.on.startsWith('premise '));
  return premises.map((b) => `; resting on the ${b.on} (${describeSource(b.source)})`).join('');
}

/**
 * That a check was made on an answer of an operation, and how it came out: failed (a finding this run weighs as a
 * failure), warned (only warnings), passed. A requirement's verdict comes from the checks that cite it.
 */
export interface Evaluation {
  check: CheckName;
  operation: OperationId;
  product: Product;
  verdict: 'passed' | 'warned' | 'failed';
}

/** The media type of a scenario's attachment that lists the checks it made (a JSON array of Evaluation). */
export const EVALUATIONS_MEDIA_TYPE = 'application/vnd.momo.checks+json';

/** How each check made came out, given its findings: every check named, and every check a finding is of. */
export function evaluationsOf(
  operation: OperationId,
  product: Product,
  checks: readonly CheckName[],
  findings: readonly Finding[],
  run: RunStrictness,
): Evaluation[] {
  const made = [...new Set([...checks, ...findings.map((f) => f.check)])];
  return made.map((check) => {
    const severities = findings.filter((f) => f.check === check).map((f) => severityOfFinding(f, run));
    return { check, operation, product, verdict: severities.includes('failure') ? 'failed' : severities.length > 0 ? 'warned' : 'passed' };
  });
}

/** The media type of a scenario's attachment that lists its warnings (a JSON array of Warning). */
export const WARNINGS_MEDIA_TYPE = 'application/vnd.momo.warnings+json';

/** A finding that weighs as a warning in this run, with where it was made: what the reports list apart. */
export interface Warning extends Finding {
  /** The operation and the case: "request to pay (collection) — §4.2 #2: …". */
  context: string;
  /** Why it is a warning rather than a failure, in this run. */
  weight: string;
}

/**
 * A finding that weighs as a warning, with where it was made and why it weighs so. `blamed`: the premise it would fail
 * but for, when on its own it weighs as a failure (the judge then ends the scenario as not tested).
 */
export function warningOf(f: Finding, context: string, run: RunStrictness, blamed?: Basis): Warning {
  const premise = blamed;
  const weight = f.advisory
    ? 'a warning in every run: records are open'
    : premise
      ? `a premise of the scenario did not hold (${premise.on}), so this is not a departure: ${weightOf(premise.source, run, 'warning')}`
      : weightOf(f.source, run, 'warning');
  return { ...f, context, weight };
}

/** The findings of one judgement split by weight. */
export function weigh(findings: readonly Finding[], run: RunStrictness): { failures: Finding[]; warnings: Finding[] } {
  const failures: Finding[] = [];
  const warnings: Finding[] = [];
  for (const f of findings) (severityOfFinding(f, run) === 'failure' ? failures : warnings).push(f);
  return { failures, warnings };
}

/** The line of a failure that names its check, its source and, when it fails only because of the run, why. */
export function failureLine(f: Finding, run: RunStrictness): string {
  const because = f.source.kind === 'spec' ? '' : `; ${weightOf(f.source, run, 'failure')}`;
  return `  ✘ ${f.check} (${describeSource(f.source)}${because}${describePremises(f)}): ${describeDifference(f)}`;
}
