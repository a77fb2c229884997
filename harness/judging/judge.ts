import type { ApiResponse, Exchange } from '../client/momo-client.ts';
import { attemptText, gaveUpInWeather, UNAVAILABLE_STATUSES } from '../client/careful.ts';
import type { ProfileBehaviour } from '../../core/profiles.ts';
import { describeSource, reading, severityOf, type RunStrictness, type Source } from '../../core/sources.ts';
import type { Redactor } from '../../core/secrets/redact.ts';
import { reportSafe } from '../../core/report-text.ts';
import { curlOf } from '../reproduction/curl.ts';
import { answerFindings, bodyChecksOf, bodyFindings, codeSourceFor, errorCodeFindings, statusFindings } from '../checks/answers.ts';
import {
  basisOf,
  describeDifference,
  evaluationsOf,
  failureLine,
  quote,
  restingOn,
  severityOfFinding,
  warningOf,
  weigh,
  type Basis,
  type CheckName,
  type Evaluation,
  type Finding,
  type Warning,
} from '../checks/index.ts';
import { isGeneral } from '../checks/index.ts';
import type { OperationId } from '../../core/catalogue/operations.ts';
import type { Product } from '../../core/products.ts';
import type { Premise, PremiseName } from '../checks/premises.ts';

export { quote, bodyChecksOf };

/**
 * The target answered, and the answer departs from the API: a failure to conform, never a harness problem.
 * Its message quotes the target, so it is made safe for every report here, whoever built it (reportSafe).
 * `findings` are the failed checks, each with its source.
 */
export class ConformanceFailure extends Error {
  readonly findings: readonly Finding[];
  /** The exchange whose answer the failure is about, as the evidence holds it: what its reproduction script replays up to. */
  readonly exchange: Exchange | undefined;
  /** `reproduce`: the answer the failure is about; the message then ends with the curl command that asks for it again. */
  constructor(message: string, reproduce?: ApiResponse, findings: readonly Finding[] = []) {
    super(reportSafe([message, ...(reproduce ? reproduction(reproduce) : [])].join('\n')));
    this.name = 'ConformanceFailure';
    this.findings = findings;
    this.exchange = reproduce?.exchange;
  }
}

/** A failure in a scenario's evidence: what its checks found, and the index of the exchange whose answer it is about. */
export interface FailureEvidence {
  findings: readonly Finding[];
  exchange?: number;
}

/**
 * The target answered that it cannot serve now (a gateway error, or SERVICE_UNAVAILABLE) where the scenario
 * expected something else: the run could not test, which says nothing about conformance.
 */
export class TargetUnavailableAnswer extends Error {
  readonly fatal = true;
  constructor(message: string) {
    super(reportSafe(message));
    this.name = 'TargetUnavailableAnswer';
  }
}

/**
 * The target answered an API call with a redirect (3xx). No operation of the API redirects, and a client of the API
 * does not follow one (it may carry credentials elsewhere): whatever answers at the configured URL is not the API,
 * so the run could not test it. Named with its Location, which is the setting to fix.
 */
export class TargetRedirected extends Error {
  readonly fatal = true;
  constructor(message: string) {
    super(reportSafe(message));
    this.name = 'TargetRedirected';
  }
}

/**
 * A premise of the scenario did not hold for the target (harness/checks/premises.ts): what the scenario set up to
 * check could not be set up, or a departure it found may be that premise failing rather than the target departing,
 * and the premise weighs less in this run than a failure. The scenario could not test its case: NOT TESTED, naming
 * the premise and its source, never FAILED.
 */
export class PremiseNotHeld extends Error {
  readonly fatal = true;
  readonly premise: string;
  constructor(premise: string, message: string) {
    super(reportSafe(message));
    this.name = 'PremiseNotHeld';
    this.premise = premise;
  }
}

/**
 * What needs to see did not come within the run's deadline, and the spec gives no time for it: the run
 * could not observe it, which says nothing about conformance (the live service's timing is an observation, which
 * only the mtn-sandbox profile holds a target to). Counted as not tested, with the deadline to raise.
 */
export class NotObservable extends Error {
  readonly fatal = true;
  constructor(message: string) {
    super(reportSafe(message));
    this.name = 'NotObservable';
  }
}

/** A premise the scenario assumes, with its name and its source in the run's profile. */
export interface AssumedPremise extends Omit<Premise, 'source'> {
  name: PremiseName;
  source: Source;
}

/** What judging needs of the run: how findings weigh, the profile's behaviour, the redactor, and where warnings go. */
export interface JudgingContext {
  run: RunStrictness;
  behaviour: ProfileBehaviour;
  redactor: Redactor;
  /** Receives each finding that weighs as a warning in this run: reported apart, it changes no verdict. */
  warn(warning: Warning): void;
  /** Receives each check made and how it came out: what a requirement's verdict is made of. */
  evaluated(evaluations: readonly Evaluation[]): void;
  /** The premises the scenario assumes, not yet seen to hold, that concern the answers of an operation. */
  assumed?(operation: OperationId): readonly AssumedPremise[];
}

/** One judgement of checks: where (an operation and the case), which checks were made, and what they found. */
export interface Judgement {
  /** "request to pay (collection) — §4.2 #2: a duplicate reference id is refused": how its failure begins. */
  header: string;
  /** The operation the checks are about, and its product: a failed check fails the requirements about it that cite the check. */
  operation: OperationId;
  product: Product;
  /** The checks made, whether they found anything or not; a finding's own check counts as made too. */
  checks: readonly CheckName[];
  findings: readonly Finding[];
  /** The answer judged: what the failure shows as received, and replays. */
  response?: ApiResponse;
  /** What was received, when not an answer (a callback, say). */
  received?: string;
  /** The premises the case rests on (harness/checks/premises.ts): while the scenario assumes one, its findings rest on it. */
  premises?: readonly PremiseName[];
}

export interface Expectation {
  /** The status (or one of the statuses) the case calls for. */
  status: number | readonly number[];
  /**
   * Where the status comes from: the clause (or observation, or reading) a departure cites. Unset: the catalogue's
   * source of those statuses for the operation (harness/checks/contract.ts statusSourceOf).
   */
  source?: Source;
  /** The error code the body must carry: `code` of {code, message}, or `error` of {error}. */
  code?: string;
  /**
   * Where the code comes from, when not from the same place as the status (the live service's code, a standard's).
   * Unset: the catalogue's codeSource of the status where it has one, else the status's source.
   */
  codeSource?: Source;
  /** What is being checked, in the domain's words, e.g. "a duplicate reference id is refused". */
  what: string;
  /** The premises the case rests on (harness/checks/premises.ts): while the scenario assumes one, its findings rest on it. */
  premises?: readonly PremiseName[];
}

const MAX_BODY_IN_MESSAGE = 1500;

/** §7 rule 6: the shape of a 400's body is not shown, so that its code is in `code` (or `error`) is our reading. */
const CODE_OF_A_400 = reading(
  '§7 rule 6: the body shape of the 400 responses is not shown; that its code is in code or error is our reading',
);

/**
 * Judges one response against an expectation: its status (status-code), its body against the contract of that
 * status (body-schema, media-type, reason-shape, and under --strict unknown-field), and its error code
 * (error-code). Findings that weigh as warnings go to the context; failures throw ConformanceFailure naming the
 * operation, each failed check with its source and the field that differed, what came back, and a replay.
 */
export function judge(response: ApiResponse, expected: Expectation, context: JudgingContext): void {
  const findings = responseFindings(response, expected, context);
  const checks: CheckName[] = [
    'status-code',
    ...(expected.code !== undefined ? ['error-code' as const] : []),
    ...bodyChecksOf(response, context.behaviour),
  ];
  conclude(
    {
      header: headerOf(response, expected.what),
      operation: response.operation.id,
      product: response.operation.product,
      checks,
      findings,
      response,
      ...(expected.premises ? { premises: expected.premises } : {}),
    },
    context,
  );
}

/** The findings of judge, without weighing them: for the tests, and for callers that add findings of their own. */
export function responseFindings(response: ApiResponse, expected: Expectation, context: JudgingContext): Finding[] {
  const statuses = typeof expected.status === 'number' ? [expected.status] : expected.status;
  const code = (response.json as { code?: unknown } | undefined)?.code;
  // A body that is not JSON is judged by the status it came with. With 502, 503 or 504 (a gateway's HTML error
  // page, say) the target said it could not serve: not tested, whatever the body. With any other status, and
  // above all a 2xx, whoever answers at the configured URL claims to be the API, and a record the spec gives
  // as JSON that is HTML, or that does not parse, is a departure.
  if (!statuses.includes(response.status) && (UNAVAILABLE_STATUSES.has(response.status) || code === 'SERVICE_UNAVAILABLE')) {
    throw new TargetUnavailableAnswer(
      `${response.operation.label}: the target answered HTTP ${response.status} ${bodyText(response.text, context.redactor)}; it was unavailable, so this could not be tested`,
    );
  }
  // A call that ran out of attempts in weather: its last answer is the weather's, not the target's to the case, even
  // when its status is one the case allows (a 500 INTERNAL_PROCESSING_ERROR where 500 INVALID_CURRENCY is due).
  const weathered =
    gaveUpInWeather(response.retried) && (!statuses.includes(response.status) || (expected.code !== undefined && code !== expected.code));
  if (weathered) {
    const met = [...new Set(response.retried!.attempts.map(attemptText))].join(', ');
    throw new TargetUnavailableAnswer(
      `${response.operation.label}: the target met changing weather at each of ${response.retried!.attempts.length} attempts (${met}); it was unavailable, so this could not be tested`,
    );
  }
  const { id, product } = response.operation;
  // A creation the careful client made again, refused then as a duplicate: an earlier attempt created it, as asked.
  if (response.createdEarlier && statuses.some((status) => status === 201 || status === 202))
    return bodyFindings(response, context.behaviour, context.run);
  const findings: Finding[] = [
    ...statusFindings(response, statuses, expected.source),
    ...bodyFindings(response, context.behaviour, context.run),
  ];
  if (expected.code !== undefined && statuses.includes(response.status)) {
    const source = expected.codeSource ?? codeSourceFor(id, product, response.status, expected.source);
    findings.push(
      ...errorCodeFindings(response, expected.code, response.status === 400 && source.kind === 'spec' ? CODE_OF_A_400 : source),
    );
  }
  return findings;
}

/**
 * A redirect where an answer of the API was due: the run could not test what answers at the configured URL (it is
 * not the API), whatever the scenario wanted. Thrown from the check of every answer, so it ends any wait.
 */
export function refuseRedirect(response: ApiResponse): void {
  if (response.status < 300 || response.status > 399) return;
  const location = response.headers.location;
  throw new TargetRedirected(
    `${response.operation.label}: the target answered HTTP ${response.status} ${location === undefined ? 'with no Location' : `to ${JSON.stringify(location)}`} instead of an answer of the API. No operation of the API redirects, and the harness does not follow a redirect (it would carry the partner's credentials elsewhere): point MOMO_BASE_URL (or MOMO_SANDBOX_URL) at the API itself${location === undefined ? '' : ', perhaps the Location above'}. Not tested.`,
  );
}

/**
 * What no answer may do, whatever its operation, status or the step waiting for it (answers.ts answerFindings):
 * called on every answer as it comes (the client's onResponse), so it throws at once, and ends any wait (fatal): a
 * second look would only see the same answer.
 */
export function judgeAnswer(response: ApiResponse, context: JudgingContext): void {
  try {
    conclude(
      {
        header: `${response.operation.label} — ${response.operation.section}: an answer the partner can read whole, giving out no secret`,
        operation: response.operation.id,
        product: response.operation.product,
        checks: ['answer-bounded', 'secret-not-disclosed'],
        findings: answerFindings(response, context.redactor),
        response,
      },
      context,
    );
  } catch (failure) {
    throw Object.assign(failure as Error, { fatal: true });
  }
}

/**
 * Weighs findings in this run. Each rests on its own sources (the check's rule, the expected value's) and, unless
 * its check holds of every answer whatever the case, on the premises the scenario assumes about the operation it is
 * about. Warnings go to the context. A finding that weighs as a failure on its own but not with a premise under it
 * is the premise perhaps not holding: PremiseNotHeld (not tested), naming it. Failures otherwise throw one
 * ConformanceFailure that begins with `header`, names each failed check, its source and the field, shows what came
 * back (redacted) and ends with the curl command that replays it.
 */
export function conclude(
  { header, operation, product, checks, findings, response, received, premises: restsOn = [] }: Judgement,
  context: JudgingContext,
): void {
  // Only the premises the case names, that the scenario still assumes, and that this answer could be the refusal of.
  const assumed = (context.assumed?.(operation) ?? []).filter(
    (p) => restsOn.includes(p.name) && (p.refusal === undefined || response === undefined || p.refusal(response)),
  );
  const premises: Basis[] = assumed.map((p) => ({ on: `premise ${p.name}: ${p.statement}`, source: p.source }));
  const rested = findings.map((f) => {
    const alone = restingOn(f, [], context.run);
    const withPremises = isGeneral(f.check) ? alone : restingOn(f, premises, context.run);
    return { alone, withPremises };
  });
  const weighed = rested.map((r) => r.withPremises);
  context.evaluated(evaluationsOf(operation, product, checks, weighed, context.run));
  const { failures } = weigh(weighed, context.run);
  const blamed = premises.find((p) => severityOf(p.source, context.run) === 'warning');
  for (const r of rested) {
    if (severityOfFinding(r.withPremises, context.run) === 'failure') continue;
    const alone = severityOfFinding(r.alone, context.run) === 'failure';
    context.warn(warningOf(redactFinding(r.withPremises, context.redactor), header, context.run, alone ? blamed : undefined));
  }
  const receivedLine = received ?? (response ? `HTTP ${response.status} ${bodyText(response.text, context.redactor)}` : undefined);
  if (failures.length > 0) {
    const shown = failures.map((f) => redactFinding(f, context.redactor));
    throw new ConformanceFailure(
      [
        header,
        ...shown.map((f) => failureLine(f, context.run)),
        ...(receivedLine !== undefined ? [`  received: ${receivedLine}`] : []),
      ].join('\n'),
      response,
      shown,
    );
  }
  const unheld = rested.filter((r) => severityOfFinding(r.alone, context.run) === 'failure').map((r) => r.alone);
  if (unheld.length === 0) return;
  const weak = assumed.filter((p) => severityOf(p.source, context.run) === 'warning');
  throw new PremiseNotHeld(
    weak.map((p) => p.name).join(', '),
    [
      ...weak.map((p) => `Premise not held, so not tested: ${p.statement} (${describeSource(p.source)}).`),
      ...weak.map((p) => `  ${p.unheld}`),
      `  ${header}`,
      ...unheld.map((f) => `  so this is not judged: ${f.check}: ${describeDifference(redactFinding(f, context.redactor))}`),
      ...(receivedLine !== undefined ? [`  received: ${receivedLine}`] : []),
    ].join('\n'),
  );
}

/** "request to pay (collection) — §4.2 #2: a duplicate reference id is refused": how a judgement of an answer begins. */
export function headerOf(response: ApiResponse, what: string): string {
  return `${response.operation.label} — ${response.operation.section}: ${what}`;
}

/** How the check of every answer's body (whether or not a step judged it) names what it holds the answer to. */
export function unjudgedHeader(response: ApiResponse): string {
  return `${response.operation.label} — ${response.operation.section}: an answer of the scenario, held to the record of its status`;
}

/** The lines that reproduce an exchange: a curl command with every secret an environment variable (harness/reproduction/curl.ts). */
function reproduction(response: ApiResponse): string[] {
  const curl = response.exchange ? curlOf(response.exchange) : undefined;
  return curl === undefined
    ? []
    : ['  reproduce (the MOMO_* variables of .env.example set):', ...curl.split('\n').map((line) => `    ${line}`)];
}

function redactFinding(f: Finding, redactor: Redactor): Finding {
  return {
    ...f,
    expected: redactor.text(f.expected),
    received: redactor.text(f.received),
    ...(f.field !== undefined ? { field: redactor.text(f.field) } : {}),
  };
}

export function bodyText(text: string, redactor: Redactor): string {
  if (text.trim() === '') return '(empty body)';
  // An HTML page (a gateway's error page, a web server's) is named by its title; the evidence keeps it whole.
  if (/^\s*(<!doctype html|<html)/i.test(text)) {
    const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
    return `(an HTML page${title ? ` titled "${redactor.text(title)}"` : ''}, ${text.length} characters)`;
  }
  const redacted = redactor.body(text);
  return redacted.length > MAX_BODY_IN_MESSAGE ? `${redacted.slice(0, MAX_BODY_IN_MESSAGE)}… (${redacted.length} characters)` : redacted;
}

export { basisOf };
