import type { ApiResponse } from '../client/momo-client.ts';
import { schemasFor } from './contract.ts';
import type { ProfileBehaviour } from '../../core/profiles.ts';
import type { Redactor } from '../secrets/redact.ts';
import { reportSafe } from '../secrets/report-text.ts';
import { secretsDisclosed } from '../secrets/disclosure.ts';
import { size } from '../client/evidence.ts';
import { curlOf } from '../reproduction/curl.ts';
import { describeErrors, validatorFor } from '../../core/validation/schemas.ts';

/**
 * The target answered, and the answer departs from the API: a failure to conform, never a harness problem.
 * Its message quotes the target, so it is made safe for every report here, whoever built it (reportSafe).
 */
export class ConformanceFailure extends Error {
  /** `reproduce`: the answer the failure is about; the message then ends with the curl command that asks for it again. */
  constructor(message: string, reproduce?: ApiResponse) {
    super(reportSafe([message, ...(reproduce ? reproduction(reproduce) : [])].join('\n')));
    this.name = 'ConformanceFailure';
  }
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

const UNAVAILABLE_STATUSES = new Set([502, 503, 504]);

export interface Expectation {
  /** The status (or one of the statuses) the spec gives for this case. */
  status: number | readonly number[];
  /** The error code the body must carry: `code` of {code, message}, or `error` of {error}. */
  code?: string;
  /** What is being checked, in the domain's words, e.g. "a duplicate reference id is refused". */
  what?: string;
}

const MAX_BODY_IN_MESSAGE = 1500;

/**
 * Judges one response: its status against the expectation, its body against the schema of that status
 * (the contract in contract.ts), and the error code. A departure throws ConformanceFailure naming the
 * operation and its spec section, what was expected, what came back (redacted) and the schema errors.
 */
export function judge(response: ApiResponse, expected: Expectation, profile: ProfileBehaviour, redactor: Redactor): void {
  const statuses = typeof expected.status === 'number' ? [expected.status] : expected.status;
  const code = (response.json as { code?: unknown } | undefined)?.code;
  // A body that is not JSON is judged by the status it came with. With 502, 503 or 504 (a gateway's HTML error
  // page, say) the target said it could not serve: not tested, whatever the body. With any other status, and
  // above all a 2xx, whoever answers at the configured URL claims to be the API, and a record the spec gives
  // as JSON that is HTML, or that does not parse, is a departure: bodyProblems() fails it, naming the problem.
  if (!statuses.includes(response.status) && (UNAVAILABLE_STATUSES.has(response.status) || code === 'SERVICE_UNAVAILABLE')) {
    throw new TargetUnavailableAnswer(`${response.operation.label}: the target answered HTTP ${response.status} ${bodyText(response.text, redactor)}; it was unavailable, so this could not be tested`);
  }
  const problems: string[] = [];
  if (!statuses.includes(response.status)) problems.push(`the status is ${response.status}, not ${statuses.join(' or ')}`);

  problems.push(...bodyProblems(response, profile));

  if (expected.code !== undefined && statuses.includes(response.status)) {
    const body = response.json as { code?: unknown; error?: unknown } | undefined;
    const actual = body?.code ?? body?.error;
    if (actual !== expected.code) problems.push(`the error code is ${actual === undefined ? 'missing' : JSON.stringify(actual)}, not "${expected.code}"`);
  }

  if (problems.length > 0) throw new ConformanceFailure(describeFailure(response, expected, statuses, problems, redactor), response);
}

/**
 * What no answer may do, whatever its operation, status or the step waiting for it: send a body beyond what the
 * harness reads (MOMO_MAX_RESPONSE_BYTES), which no answer of the API needs; or give out a secret of the run
 * outside the one operation that issues it (OWASP API3:2023, excessive data exposure), in any encoding, in its
 * body or its headers. Called on every answer as it comes (the client's onResponse), so it throws at once, and
 * ends any wait (fatal): a second look would only see the same answer. The message names the secret by its
 * kind and encoding, never its value, and shows the body redacted.
 */
export function judgeAnswer(response: ApiResponse, redactor: Redactor): void {
  const findings: { what: string; expected: string; problem: string }[] = [];
  if (response.exceededLimit !== undefined) {
    const limit = size(response.exceededLimit);
    findings.push({
      what: 'an answer the partner can read whole',
      expected: `a body of at most ${limit} (MOMO_MAX_RESPONSE_BYTES)`,
      problem: `the body exceeded ${limit}: the harness read that much of it and no further`,
    });
  }
  const headers = Object.entries(response.headers).map(([name, value]) => `${name}: ${value}`).join('\n');
  const disclosed = secretsDisclosed(response.operation.id, `${headers}\n\n${response.text}`, redactor);
  if (disclosed.length > 0) {
    findings.push({
      what: 'an answer gives out no secret outside the operation that issues it (OWASP API3:2023, excessive data exposure)',
      expected: 'no subscription key, API key, credential or token of the partner, in any encoding',
      problem: `it gives out ${disclosed.join(', ')}, which ${response.operation.label} does not issue`,
    });
  }
  if (findings.length === 0) return;
  throw Object.assign(new ConformanceFailure([
    `${response.operation.label} — ${response.operation.section}: ${findings.map((f) => f.what).join('; ')}`,
    `  expected: ${findings.map((f) => f.expected).join('; ')}`,
    `  received: HTTP ${response.status} ${bodyText(response.text, redactor)}`,
    ...findings.map((f) => `  - ${f.problem}`),
  ].join('\n'), response), { fatal: true });
}

/** What is wrong with a response's body for its status, per the contract; empty when nothing is. */
export function bodyProblems(response: ApiResponse, profile: ProfileBehaviour): string[] {
  const schemas = schemasFor(response.operation.id, response.operation.product, response.status, profile);
  if (!Array.isArray(schemas)) return [];
  if (response.json === undefined) {
    return [`the body is ${whyNotJson(response)}, but the spec gives ${schemas.map(file).join(' or ')} for ${response.status}`];
  }
  const results = schemas.map((name) => ({ name, errors: schemaErrors(name, response.json) }));
  if (results.some((r) => r.errors.length === 0)) return [...mediaTypeProblems(response), ...reasonShapeProblems(response, profile)];
  return results.map((r) => `the body does not match ${file(r.name)}:\n${r.errors.map((e) => `      ${e}`).join('\n')}`);
}

/** §4.1: Content-Type is the media type of the body; a JSON record labelled otherwise is not read as JSON by most clients. */
function mediaTypeProblems(response: ApiResponse): string[] {
  const contentType = response.headers['content-type'];
  const mediaType = contentType?.split(';')[0]!.trim().toLowerCase();
  if (mediaType === 'application/json' || mediaType?.endsWith('+json')) return [];
  return [`the body is JSON, but Content-Type is ${contentType === undefined ? 'missing' : `"${contentType}"`}, not application/json (§4.1)`];
}

/** Why a body that should be JSON is not: empty, of another content type, or JSON that does not parse. */
function whyNotJson(response: ApiResponse): string {
  if (response.text.trim() === '') return 'empty';
  const type = response.headers['content-type'];
  if (type === undefined || !/json/i.test(type)) return `not JSON (Content-Type ${type ?? 'missing'})`;
  let parseError = '';
  try {
    JSON.parse(response.text);
  } catch (error) {
    parseError = ` (${(error as Error).message})`;
  }
  return `not valid JSON although its Content-Type is ${type}${parseError}`;
}

const STATUS_QUERIES = new Set(['getRequestToPayStatus', 'getDepositStatus', 'getRefundStatus']);

/** The status schemas accept both shapes of reason; the mtn-sandbox profile takes only the live service's. */
function reasonShapeProblems(response: ApiResponse, profile: ProfileBehaviour): string[] {
  if (!STATUS_QUERIES.has(response.operation.id)) return [];
  const reason = (response.json as { reason?: unknown } | undefined)?.reason;
  // The spec does not show the record, so the spec profile takes either shape; the live service sends a string.
  if (reason === undefined || typeof reason === 'string' || profile.failureReason !== 'string') return [];
  return [`/reason is ${JSON.stringify(reason)}, but the live sandbox sends a plain code string (failureReason in core/profiles.ts)`];
}

/** A response no step judged, whose body departs from its schema: found after the scenario, still a failure. */
export function describeUnjudged(response: ApiResponse, problems: string[], redactor: Redactor): string {
  return [
    `${response.operation.label} — ${response.operation.section}: an answer of the scenario departs from its schema`,
    `  received: HTTP ${response.status} ${bodyText(response.text, redactor)}`,
    // A schema error can quote the target (an unknown property's name): redacted like the body.
    ...problems.map((p) => `  - ${redactor.text(p)}`),
    ...reproduction(response),
  ].join('\n');
}

/** Checks a value (a status record, a callback body) against a schema; a departure throws ConformanceFailure. */
export function judgeRecord(what: string, section: string, schema: string, value: unknown, redactor: Redactor): void {
  const errors = schemaErrors(schema, value);
  if (errors.length === 0) return;
  throw new ConformanceFailure([
    `${what} — ${section}`,
    `  expected: a body matching ${file(schema)}`,
    `  received: ${bodyText(JSON.stringify(redactor.json(value)), redactor)}`,
    ...errors.map((e) => `    ${redactor.text(e)}`),
  ].join('\n'));
}

function schemaErrors(name: string, value: unknown): string[] {
  const validate = validatorFor(name);
  return validate(value) ? [] : describeErrors(validate.errors);
}

function describeFailure(response: ApiResponse, expected: Expectation, statuses: readonly number[], problems: string[], redactor: Redactor): string {
  const wanted = `HTTP ${statuses.join(' or ')}${expected.code ? ` with ${expected.code}` : ''}`;
  return [
    `${response.operation.label} — ${response.operation.section}${expected.what ? `: ${expected.what}` : ''}`,
    `  expected: ${wanted}`,
    `  received: HTTP ${response.status} ${bodyText(response.text, redactor)}`,
    // A schema error can quote the target (an unknown property's name): redacted like the body.
    ...problems.map((p) => `  - ${redactor.text(p)}`),
  ].join('\n');
}

/**
 * The lines of a failure that reproduce its exchange: a curl command with every secret an environment variable
 * (harness/reproduction/curl.ts). None for a response the client did not record (one a test made up).
 */
function reproduction(response: ApiResponse): string[] {
  const curl = response.exchange ? curlOf(response.exchange) : undefined;
  return curl === undefined ? [] : ['  reproduce (the MOMO_* variables of .env.example set):', ...curl.split('\n').map((line) => `    ${line}`)];
}

function bodyText(text: string, redactor: Redactor): string {
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
