import type { ApiResponse } from '../client/momo-client.ts';
import { attemptText, type RetriedCall } from '../client/careful.ts';
import { size } from '../client/evidence-budget.ts';
import { secretsDisclosed } from '../secrets/disclosure.ts';
import { schemasFor, statusSourceOf, codeSourceOf } from './contract.ts';
import { OPERATIONS, type OperationId } from '../../core/catalogue/operations.ts';
import type { Product } from '../../core/products.ts';
import type { ProfileBehaviour } from '../../core/profiles.ts';
import type { Redactor } from '../../core/secrets/redact.ts';
import { observed, reading, severityOf, spec, type RunStrictness, type Source } from '../../core/sources.ts';
import { schemaProblems, unknownFields, validatorFor, type SchemaProblem } from '../../core/validation/schemas.ts';
import { findingOf, quote, type CheckDefinition, type Finding, type Found } from './check.ts';
import { reasonShapeFindings } from './transactions.ts';

/**
 * What every answer is held to, whatever the case: its status, its error code, its body against the record of its
 * status, its media type, its size, and the secrets it must not give out. The judge (harness/judging/judge.ts) makes
 * these on each answer a step expects, and the harness makes the general ones on every answer as it comes.
 */
export const ANSWER_CHECKS = {
  'status-code': {
    title: 'The status code is the one the spec gives for the case.',
    source: spec("§4 (each operation's statuses), §7"),
  },
  'error-code': {
    title: 'An error carries the code the spec names for the case, in code of {code, message} or error of {error}.',
    source: spec('§7 (its rules and code sets)'),
  },
  'body-schema': {
    title:
      'The body of a success is the record the operation gives, every field it names of its type. Records are open: a field the record does not name is never a failure.',
    source: spec('§2 (the records); per field, the "x-source" of schemas/*.schema.json'),
    general: true,
  },
  'error-body': {
    title: 'The body of an error is the error record of its operation: {code, message} with a code of its set, or {error} on a 401.',
    source: spec('§2.14, §7 (the error record and the code sets); per field, the "x-source" of schemas/*.schema.json'),
    general: true,
  },
  'media-type': {
    title:
      'A JSON body is not labelled as another media type; without a Content-Type it is a warning (RFC 9110 §8.3 makes the header a SHOULD).',
    source: spec('§4: all payloads are JSON except where marked form-encoded; §4.1: Content-Type is the media type of the body'),
    values: {
      missing: reading('RFC 9110 §8.3: a sender SHOULD generate a Content-Type for a body; the spec marks the header optional (§4.1)'),
    },
    general: true,
  },
  'unknown-field': {
    title: 'Under --strict: a field a record of the spec does not name is reported, never failed (records are open).',
    source: reading('the spec never closes a record, and RFC 6749 §5.1 and OIDC Core §5.1 tell clients to ignore members they do not know'),
    advisory: true,
    general: true,
  },
  'answered-first-try': {
    title:
      'The target answers a call at its first attempt: a call the careful client had to make again (a transient 500 or 503, no answer, a token renewed) is reported as availability, never failed.',
    source: observed('real-api-notes, errors and inputs: the live sandbox has frequent transient 500/503s and slow periods; clients retry'),
    advisory: true,
    general: true,
  },
  'answer-bounded': {
    title: 'An answer fits within MOMO_MAX_RESPONSE_BYTES: no record of the API comes near it.',
    source: spec('§2: every record of the API is a few short fields'),
    general: true,
  },
  'secret-not-disclosed': {
    title: 'No answer gives out a secret of the partner outside the one operation that issues it, in any encoding.',
    source: spec(
      "§5 rules 1–3 and §4.5 #15: the subscription key, the API key and the tokens are the partner's credentials, each issued by one operation (OWASP API3:2023)",
    ),
    general: true,
  },
} as const satisfies Record<string, CheckDefinition>;

type AnswerCheck = keyof typeof ANSWER_CHECKS;
const found = (name: AnswerCheck, f: Found): Finding => findingOf(name, ANSWER_CHECKS[name], f);

/** Statuses as a finding says them, each once and in order; runs of three or more as a range ("400–501 or 505–599"). */
export function statusesInWords(statuses: readonly number[]): string {
  const runs: number[][] = [];
  for (const status of [...new Set(statuses)].sort((a, b) => a - b)) {
    const run = runs.at(-1);
    if (run && status === run.at(-1)! + 1) run.push(status);
    else runs.push([status]);
  }
  return runs.flatMap((run) => (run.length >= 3 ? [`${run[0]}–${run.at(-1)}`] : run.map(String))).join(' or ');
}

/** The status is one of those the case calls for; `source`: where they come from (else the catalogue's source of them). */
export function statusFindings(response: ApiResponse, statuses: readonly number[], source?: Source): Finding[] {
  // A creation made again and refused as a duplicate was accepted, by an earlier attempt the client heard no answer to.
  const accepted = response.createdEarlier === true;
  if (statuses.includes(response.status) || (accepted && statuses.some((status) => status === 201 || status === 202))) return [];
  const { id, product } = response.operation;
  return [
    found('status-code', {
      field: 'status',
      expected: statusesInWords(statuses),
      received: accepted ? `accepted by an earlier attempt (made again, it got ${response.status})` : String(response.status),
      source: source ?? statusSourceOf(id, product, statuses),
    }),
  ];
}

/** The error code the case calls for, in code of {code, message} or error of {error}: a finding when another came. */
export function errorCodeFindings(response: ApiResponse, code: string, source: Source): Finding[] {
  const body = response.json as { code?: unknown; error?: unknown } | undefined;
  const actual = body?.code ?? body?.error;
  if (actual === code) return [];
  const field = body && 'error' in body && !('code' in body) ? '/error' : '/code';
  return [
    found('error-code', {
      field,
      expected: JSON.stringify(code),
      received: actual === undefined ? 'none' : JSON.stringify(actual),
      source,
    }),
  ];
}

/**
 * Where the code of a case comes from: the catalogue's codeSource of the status where it has one; else the case's own
 * source of the status, when it gave one; else where the catalogue says the status comes from.
 */
export function codeSourceFor(id: OperationId, product: Product, status: number, caseSource?: Source): Source {
  if (OPERATIONS[id].responses[status]?.codeSource !== undefined || caseSource === undefined) return codeSourceOf(id, product, status);
  return caseSource;
}

/** The checks a body is held to, when its status has a record: its schema, and its media type when it is JSON. */
export function bodyChecksOf(response: ApiResponse, behaviour: ProfileBehaviour): AnswerCheck[] {
  if (!Array.isArray(schemasFor(response.operation.id, response.operation.product, response.status, behaviour))) return [];
  return response.json === undefined ? [bodyCheckOf(response.status)] : [bodyCheckOf(response.status), 'media-type'];
}

/** The check of a body by its status: the record of a success, or the error record. */
const bodyCheckOf = (status: number): 'body-schema' | 'error-body' => (status >= 400 ? 'error-body' : 'body-schema');

/** What is wrong with a response's body for its status, per the contract; empty when nothing is. */
export function bodyFindings(response: ApiResponse, behaviour: ProfileBehaviour, run: RunStrictness): Finding[] {
  const schemas = schemasFor(response.operation.id, response.operation.product, response.status, behaviour);
  if (!Array.isArray(schemas)) return [];
  if (response.json === undefined) {
    return [
      found(bodyCheckOf(response.status), {
        field: 'body',
        expected: `JSON: ${schemas.map(file).join(' or ')} for ${response.status}`,
        received: whyNotJson(response),
        source: spec('§4: all payloads are JSON except where marked form-encoded'),
      }),
    ];
  }
  const matched = schemas.find((name) => validatorFor(name)(response.json));
  if (matched === undefined)
    return schemaFindings(closestAlternative(schemas, response.json, run), response.json, bodyCheckOf(response.status));
  return [
    ...mediaTypeFindings(response),
    ...reasonShapeFindings(response),
    ...(run.strict ? unknownFieldFindings(matched, response.json) : []),
  ];
}

/** A value (a status record, a callback body) against a schema: its findings, each with the source of what it breaks. */
export function recordFindings(schema: string, value: unknown, run: RunStrictness): Finding[] {
  const findings = schemaFindings(schema, value);
  if (findings.length === 0 && run.strict) findings.push(...unknownFieldFindings(schema, value));
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
    found(check, {
      field: p.pointer,
      expected: `${p.expected} (${file(schema)})`,
      received: p.value === undefined ? 'none' : quote(p.value),
      ...(p.source ? { source: p.source } : {}),
    }),
  );
}

function unknownFieldFindings(schema: string, value: unknown): Finding[] {
  return unknownFields(schema, value).map((field) =>
    found('unknown-field', { field, expected: `only the fields ${file(schema)} names`, received: 'a field it does not name' }),
  );
}

/**
 * §4: the payloads are JSON, and Content-Type is the media type of a body (§4.1): a JSON record labelled as another
 * media type is not read as JSON by most clients, a departure. One without a Content-Type is a warning: RFC 9110
 * §8.3 makes the header a SHOULD, and the recipient may then read the body as what it is.
 */
function mediaTypeFindings(response: ApiResponse): Finding[] {
  const contentType = response.headers['content-type'];
  if (contentType === undefined)
    return [
      found('media-type', {
        field: 'header Content-Type',
        expected: 'application/json',
        received: 'none',
        source: ANSWER_CHECKS['media-type'].values.missing,
      }),
    ];
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  if (mediaType === 'application/json' || mediaType.endsWith('+json')) return [];
  return [found('media-type', { field: 'header Content-Type', expected: 'application/json', received: JSON.stringify(contentType) })];
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

/**
 * What no answer may do, whatever its operation, status or the step waiting for it: send a body beyond what the
 * harness reads (MOMO_MAX_RESPONSE_BYTES), which no answer of the API needs; or give out a secret of the run
 * outside the one operation that issues it (OWASP API3:2023), in any encoding, in its body or its headers. The
 * finding names the secret by its kind and encoding, never its value.
 */
export function answerFindings(response: ApiResponse, redactor: Redactor): Finding[] {
  const findings: Finding[] = [];
  if (response.exceededLimit !== undefined) {
    const limit = size(response.exceededLimit);
    findings.push(
      found('answer-bounded', {
        field: 'body',
        expected: `at most ${limit} (MOMO_MAX_RESPONSE_BYTES)`,
        received: `more: the harness read ${limit} of it and no further`,
      }),
    );
  }
  const headers = Object.entries(response.headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');
  const disclosed = secretsDisclosed(response.operation.id, `${headers}\n\n${response.text}`, redactor);
  if (disclosed.length > 0) {
    findings.push(
      found('secret-not-disclosed', {
        field: 'headers and body',
        expected: `no subscription key, API key, credential or token of the partner, in any encoding (${response.operation.label} issues none of them)`,
        received: disclosed.join(', '),
      }),
    );
  }
  return findings;
}

const file = (name: string) => `${name}.schema.json`;

/** How a call the careful client made again went, one finding naming the weather it met (an observation of availability). */
export function retriedFindings(call: RetriedCall): Finding[] {
  const met = call.attempts.slice(0, -1).map(attemptText);
  const last = call.attempts.at(-1)!;
  const ended =
    call.outcome === 'created-earlier'
      ? 'then 409: an earlier attempt had created it'
      : call.outcome === 'gave-up'
        ? `and still ${last.status ?? 'no answer'} when the attempts ran out`
        : call.outcome === 'renewed'
          ? 'the token renewed, then answered'
          : 'then answered';
  return [
    found('answered-first-try', {
      field: 'attempts',
      expected: 'an answer at the first attempt',
      received: `${[...new Set(met)].join(', ')}; ${ended}`,
    }),
  ];
}

/** A refusal with {error} carries an error code there, whatever code (§2.14: error is an error code). */
export function errorCodePresentFindings(response: ApiResponse, source: Source): Finding[] {
  const body = response.json as { error?: unknown } | undefined;
  return typeof body?.error === 'string'
    ? []
    : [
        found('error-code', {
          field: '/error',
          expected: 'an error code',
          received: body?.error === undefined ? 'none' : quote(body.error),
          source,
        }),
      ];
}
