import type { ApiResponse, Exchange } from '../client/momo-client.ts';
import { codeSourceOf, schemasFor, statusSourceOf } from './contract.ts';
import { OPERATIONS } from '../../core/catalogue/operations.ts';
import { sourceOfDifference, type ProfileBehaviour } from '../../core/profiles.ts';
import { severityOf, spec, type RunStrictness, type Source } from '../../core/sources.ts';
import type { Redactor } from '../../core/secrets/redact.ts';
import { reportSafe } from '../../core/report-text.ts';
import { secretsDisclosed } from '../secrets/disclosure.ts';
import { size } from '../client/evidence.ts';
import { curlOf } from '../reproduction/curl.ts';
import { schemaProblems, unknownFields, validatorFor, type SchemaProblem } from '../../core/validation/schemas.ts';
import {
  evaluationsOf,
  failureLine,
  finding,
  warningOf,
  weigh,
  type CheckName,
  type Evaluation,
  type Finding,
  type Warning,
} from './checks.ts';
import type { OperationId } from '../../core/catalogue/operations.ts';
import type { Product } from '../../core/products.ts';

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
 * What a check needs to see did not come within the run's deadline, and the spec gives no time for it: the run
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

const UNAVAILABLE_STATUSES = new Set([502, 503, 504]);

/** What judging needs of the run: how findings weigh, the profile's behaviour, the redactor, and where warnings go. */
export interface JudgingContext {
  run: RunStrictness;
  behaviour: ProfileBehaviour;
  redactor: Redactor;
  /** Receives each finding that weighs as a warning in this run: reported apart, it changes no verdict. */
  warn(warning: Warning): void;
  /** Receives each check made and how it came out: what a requirement's verdict is made of. */
  evaluated(evaluations: readonly Evaluation[]): void;
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
}

export interface Expectation {
  /** The status (or one of the statuses) the case calls for. */
  status: number | readonly number[];
  /**
   * Where the status comes from: the clause (or observation, or reading) a departure cites. Unset: the catalogue's
   * source of those statuses for the operation (harness/judging/contract.ts statusSourceOf).
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
}

const MAX_BODY_IN_MESSAGE = 1500;
/** A value quoted in a finding is cut to this many characters. */
const MAX_VALUE_IN_FINDING = 120;

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
    ...bodyChecksOf(response, context),
  ];
  conclude(
    {
      header: headerOf(response, expected.what),
      operation: response.operation.id,
      product: response.operation.product,
      checks,
      findings,
      response,
    },
    context,
  );
}

/** The checks a body is held to, when its status has a record: its schema, and its media type when it is JSON. */
export function bodyChecksOf(response: ApiResponse, context: JudgingContext): CheckName[] {
  if (!Array.isArray(schemasFor(response.operation.id, response.operation.product, response.status, context.behaviour))) return [];
  return response.json === undefined ? [bodyCheckOf(response.status)] : [bodyCheckOf(response.status), 'media-type'];
}

/** The check of a body by its status: the record of a success, or the error record. */
const bodyCheckOf = (status: number): 'body-schema' | 'error-body' => (status >= 400 ? 'error-body' : 'body-schema');

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
  const findings: Finding[] = [];
  const { id, product } = response.operation;
  if (!statuses.includes(response.status)) {
    findings.push(
      finding('status-code', {
        field: 'status',
        expected: statuses.join(' or '),
        received: String(response.status),
        source: expected.source ?? statusSourceOf(id, product, statuses),
      }),
    );
  }
  findings.push(...bodyFindings(response, context));
  if (expected.code !== undefined && statuses.includes(response.status)) {
    const body = response.json as { code?: unknown; error?: unknown } | undefined;
    const actual = body?.code ?? body?.error;
    if (actual !== expected.code) {
      const field = body && 'error' in body && !('code' in body) ? '/error' : '/code';
      findings.push(
        finding('error-code', {
          field,
          expected: JSON.stringify(expected.code),
          received: actual === undefined ? 'none' : JSON.stringify(actual),
          source: expected.codeSource ?? codeSourceFor(expected, id, product, response.status),
        }),
      );
    }
  }
  return findings;
}

function codeSourceFor(
  expected: Expectation,
  id: Parameters<typeof codeSourceOf>[0],
  product: Parameters<typeof codeSourceOf>[1],
  status: number,
): Source {
  if (OPERATIONS[id].responses[status]?.codeSource !== undefined || expected.source === undefined) return codeSourceOf(id, product, status);
  return expected.source;
}

/**
 * What no answer may do, whatever its operation, status or the step waiting for it: send a body beyond what the
 * harness reads (MOMO_MAX_RESPONSE_BYTES), which no answer of the API needs; or give out a secret of the run
 * outside the one operation that issues it (OWASP API3:2023, excessive data exposure), in any encoding, in its
 * body or its headers. Called on every answer as it comes (the client's onResponse), so it throws at once, and
 * ends any wait (fatal): a second look would only see the same answer. The message names the secret by its
 * kind and encoding, never its value, and shows the body redacted.
 */
export function judgeAnswer(response: ApiResponse, context: JudgingContext): void {
  const findings: Finding[] = [];
  if (response.exceededLimit !== undefined) {
    const limit = size(response.exceededLimit);
    findings.push(
      finding('answer-bounded', {
        field: 'body',
        expected: `at most ${limit} (MOMO_MAX_RESPONSE_BYTES)`,
        received: `more: the harness read ${limit} of it and no further`,
      }),
    );
  }
  const headers = Object.entries(response.headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');
  const disclosed = secretsDisclosed(response.operation.id, `${headers}\n\n${response.text}`, context.redactor);
  if (disclosed.length > 0) {
    findings.push(
      finding('secret-not-disclosed', {
        field: 'headers and body',
        expected: `no subscription key, API key, credential or token of the partner, in any encoding (${response.operation.label} issues none of them)`,
        received: disclosed.join(', '),
      }),
    );
  }
  try {
    conclude(
      {
        header: `${response.operation.label} — ${response.operation.section}: an answer the partner can read whole, giving out no secret`,
        operation: response.operation.id,
        product: response.operation.product,
        checks: ['answer-bounded', 'secret-not-disclosed'],
        findings,
        response,
      },
      context,
    );
  } catch (failure) {
    throw Object.assign(failure as Error, { fatal: true });
  }
}

/**
 * Weighs findings in this run: warnings go to the context; failures, if any, throw one ConformanceFailure that
 * begins with `header`, names each failed check, its source and the field, shows what came back (redacted) and
 * ends with the curl command that replays it.
 */
export function conclude({ header, operation, product, checks, findings, response, received }: Judgement, context: JudgingContext): void {
  context.evaluated(evaluationsOf(operation, product, checks, findings, context.run));
  const { failures, warnings } = weigh(findings, context.run);
  for (const w of warnings) context.warn(warningOf(redactFinding(w, context.redactor), header, context.run));
  if (failures.length === 0) return;
  const shown = failures.map((f) => redactFinding(f, context.redactor));
  const receivedLine = received ?? (response ? `HTTP ${response.status} ${bodyText(response.text, context.redactor)}` : undefined);
  throw new ConformanceFailure(
    [header, ...shown.map((f) => failureLine(f, context.run)), ...(receivedLine !== undefined ? [`  received: ${receivedLine}`] : [])].join(
      '\n',
    ),
    response,
    shown,
  );
}

/** "request to pay (collection) — §4.2 #2: a duplicate reference id is refused": how a judgement of an answer begins. */
export function headerOf(response: ApiResponse, what: string): string {
  return `${response.operation.label} — ${response.operation.section}: ${what}`;
}

/** What is wrong with a response's body for its status, per the contract; empty when nothing is. */
export function bodyFindings(response: ApiResponse, context: JudgingContext): Finding[] {
  const schemas = schemasFor(response.operation.id, response.operation.product, response.status, context.behaviour);
  if (!Array.isArray(schemas)) return [];
  if (response.json === undefined) {
    return [
      finding(bodyCheckOf(response.status), {
        field: 'body',
        expected: `JSON: ${schemas.map(file).join(' or ')} for ${response.status}`,
        received: whyNotJson(response),
        source: spec('§4: all payloads are JSON except where marked form-encoded'),
      }),
    ];
  }
  const matched = schemas.find((name) => validatorFor(name)(response.json));
  if (matched === undefined)
    return schemaFindings(closestAlternative(schemas, response.json, context.run), response.json, bodyCheckOf(response.status));
  return [
    ...mediaTypeFindings(response),
    ...reasonShapeFindings(response),
    ...(context.run.strict ? unknownFieldFindings(matched, response.json) : []),
  ];
}

/** A value (a status record, a callback body) against a schema: its findings, each with the source of what it breaks. */
export function recordFindings(schema: string, value: unknown, context: JudgingContext): Finding[] {
  const findings = schemaFindings(schema, value);
  if (findings.length === 0 && context.run.strict) findings.push(...unknownFieldFindings(schema, value));
  return findings;
}

/**
 * Of several schemas a body may match (any one), the one whose departures this run weighs least badly against:
 * an alternative that is only observed (the gateway's shape, in the spec profile) accepts a body that matches it,
 * but never excuses one that matches nothing, so the closest alternative that weighs as a failure is reported.
 */
function closestAlternative(schemas: readonly string[], value: unknown, run: RunStrictness): string {
  const weighed = schemas.map((name) => ({ name, problems: schemaProblems(name, value), root: rootSource(name) }));
  const binding = weighed.filter((w) => w.root === undefined || severityOf(w.root, run) === 'failure');
  const pool = binding.length > 0 ? binding : weighed;
  return pool.reduce((best, w) => (w.problems.length < best.problems.length ? w : best)).name;
}

function rootSource(name: string): Source | undefined {
  return (validatorFor(name).schema as Record<string, unknown>)['x-source'] as Source | undefined;
}

function schemaFindings(schema: string, value: unknown, check: 'body-schema' | 'error-body' = 'body-schema'): Finding[] {
  return schemaProblems(schema, value).map((p: SchemaProblem) =>
    finding(check, {
      field: p.pointer,
      expected: `${p.expected} (${file(schema)})`,
      received: p.value === undefined ? 'none' : quote(p.value),
      ...(p.source ? { source: p.source } : {}),
    }),
  );
}

function unknownFieldFindings(schema: string, value: unknown): Finding[] {
  return unknownFields(schema, value).map((field) =>
    finding('unknown-field', { field, expected: `only the fields ${file(schema)} names`, received: 'a field it does not name' }),
  );
}

/** §4.1: Content-Type is the media type of the body; a JSON record labelled otherwise is not read as JSON by most clients. */
function mediaTypeFindings(response: ApiResponse): Finding[] {
  const contentType = response.headers['content-type'];
  const mediaType = contentType === undefined ? undefined : contentType.split(';')[0]!.trim().toLowerCase();
  if (mediaType === 'application/json' || mediaType?.endsWith('+json')) return [];
  return [
    finding('media-type', {
      field: 'header Content-Type',
      expected: 'application/json',
      received: contentType === undefined ? 'none' : JSON.stringify(contentType),
    }),
  ];
}

/** Why a body that should be JSON is not: empty, of another content type, or JSON that does not parse. */
function whyNotJson(response: ApiResponse): string {
  if (response.text.trim() === '') return 'an empty body';
  const type = response.headers['content-type'];
  if (type === undefined || !/json/i.test(type)) return `a body that is not JSON (Content-Type ${type ?? 'missing'})`;
  let parseError = '';
  try {
    JSON.parse(response.text);
  } catch (error) {
    parseError = ` (${(error as Error).message})`;
  }
  return `a body that is not valid JSON although its Content-Type is ${type}${parseError}`;
}

const STATUS_QUERIES = new Set([
  'getRequestToPayStatus',
  'getDepositStatus',
  'getRefundStatus',
  'getTransferStatus',
  'getRequestToWithdrawStatus',
]);

/** The live sandbox sends the reason of a FAILED record as a bare code; the spec does not show the record. */
function reasonShapeFindings(response: ApiResponse): Finding[] {
  if (!STATUS_QUERIES.has(response.operation.id)) return [];
  const reason = (response.json as { reason?: unknown } | undefined)?.reason;
  if (reason === undefined || typeof reason === 'string') return [];
  return [
    finding('reason-shape', {
      field: '/reason',
      expected: 'a bare code string',
      received: quote(reason),
      source: sourceOfDifference('failureReason', 'mtn-sandbox'),
    }),
  ];
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

/** A value as a finding quotes it: JSON, cut short. */
export function quote(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_VALUE_IN_FINDING ? `${text.slice(0, MAX_VALUE_IN_FINDING)}… (${text.length} characters)` : text;
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

const file = (name: string) => `${name}.schema.json`;
