import { describeErrors } from '../../core/validation/schemas.ts';
import type { ApiModel, ModelOperation } from './openapi-model.ts';
import { stateDifferences, type StateSnapshot } from './snapshot.ts';
import { parseJson, type Answer } from './episode.ts';

/** A property a request broke. */
export interface Violation {
  property: Property;
  detail: string;
}

export type Property =
  | 'documented-status'
  | 'no-undocumented-5xx'
  | 'documented-error-code'
  | 'body-matches-schema'
  | 'json-content-type'
  | 'no-internal-error'
  | 'rejection-changes-nothing'
  | 'read-changes-nothing'
  | 'no-crash'
  | 'no-prototype-pollution';

/** What the properties say of one request, in words for the documentation and the summary. */
export const PROPERTIES: Record<Property, string> = {
  'documented-status':
    'the status is one the document lists for the operation (or a framework answer to a request that names no operation)',
  'no-undocumented-5xx': 'a 5xx is one the document lists for the operation, with a code its description names',
  'documented-error-code': "an error body's code is one the description of its status names, when it names any",
  'body-matches-schema':
    'the body matches the schema the document gives the status, with no field it does not name; no body where it gives none',
  'json-content-type': 'a body is sent as application/json',
  'no-internal-error': "the sandbox logged no unexpected error (its error handler's INTERNAL_PROCESSING_ERROR)",
  'rejection-changes-nothing': 'a rejected request (4xx, 5xx) leaves API users, transactions, consents and balances as they were',
  'read-changes-nothing': 'a GET leaves the state as it was, whatever its answer',
  'no-crash': 'the sandbox answers every request within the time limit and keeps answering',
  'no-prototype-pollution': 'no request adds a property to Object.prototype',
};

/** Answers to requests that name no operation (another method, a path no route has): the router's. */
export const FRAMEWORK_ANSWERS: ReadonlySet<number> = new Set([400, 404, 405, 414]);

export interface Exchange {
  op: ModelOperation;
  method: string;
  answer: Answer;
  /** The request was sent to a path or with a method no operation serves, on purpose. */
  routeMiss: boolean;
  before: StateSnapshot;
  after: StateSnapshot;
  /** Unexpected errors the sandbox logged while answering. */
  internalErrors: string[];
}

/** Judges one exchange by every property; returns what it broke. */
export function judge(exchange: Exchange, model: ApiModel): Violation[] {
  const { op, answer, routeMiss } = exchange;
  const violations: Violation[] = [];
  const documented = op.responses.get(answer.status);
  const framework = routeMiss && FRAMEWORK_ANSWERS.has(answer.status);
  const body = parseJson(answer.body);
  const text = answer.body.trim();

  if (!documented && !framework) {
    violations.push(
      answer.status >= 500
        ? {
            property: 'no-undocumented-5xx',
            detail: `${answer.status} is not among the statuses the document lists for ${op.id} (${[...op.responses.keys()].join(', ')}): ${excerpt(answer.body)}`,
          }
        : {
            property: 'documented-status',
            detail: `${answer.status} is not among the statuses the document lists for ${op.id} (${[...op.responses.keys()].join(', ')}): ${excerpt(answer.body)}`,
          },
    );
  }
  for (const line of exchange.internalErrors) violations.push({ property: 'no-internal-error', detail: line });

  const code =
    body !== null && typeof body === 'object' && typeof (body as { code?: unknown }).code === 'string'
      ? (body as { code: string }).code
      : undefined;
  if (documented && code !== undefined && documented.codes.length > 0 && !documented.codes.includes(code.replace(/\.$/, ''))) {
    violations.push({
      property: answer.status >= 500 ? 'no-undocumented-5xx' : 'documented-error-code',
      detail: `${answer.status} ${code} is not a code the document names for ${answer.status} of ${op.id} (${documented.codes.join(', ')})`,
    });
  }

  if (exchange.method !== 'HEAD') {
    // What the body may be: the documented status's schema (or nothing, when it has no content), or the
    // router's bad-request body when the request named no operation.
    const accepted: ((body: unknown) => boolean)[] = [];
    if (documented) accepted.push(documented.validate ? (b) => documented.validate!(b) : () => text === '');
    if (framework) accepted.push((b) => model.validatorOf('BadRequest')(b));
    if (accepted.length > 0 && !accepted.some((accepts) => accepts(body))) {
      const why = documented?.validate
        ? describeErrors(documented.validate.errors).join('; ')
        : documented
          ? 'documented without content, but a body came'
          : 'not the bad-request body';
      violations.push({ property: 'body-matches-schema', detail: `${answer.status} of ${op.id}: ${why}; body: ${excerpt(answer.body)}` });
    } else if (documented?.validate) {
      // The document's records are open, as a target's may be; the sandbox's own are exactly their shapes.
      const unknown = model.unknownFieldsOf(documented.components, body);
      if (unknown.length > 0)
        violations.push({
          property: 'body-matches-schema',
          detail: `${answer.status} of ${op.id}: fields the record does not name: ${unknown.join(', ')}; body: ${excerpt(answer.body)}`,
        });
    }
    const contentType = String(answer.headers['content-type'] ?? '');
    if (text !== '' && !/^application\/json\b/i.test(contentType)) {
      violations.push({ property: 'json-content-type', detail: `${answer.status} of ${op.id} came as "${contentType}"` });
    }
  }

  const changed = stateDifferences(exchange.before, exchange.after);
  if (changed.length > 0 && answer.status >= 400) {
    violations.push({
      property: 'rejection-changes-nothing',
      detail: `${op.id} was answered ${answer.status}, yet changed ${changed.join(', ')}`,
    });
  } else if (changed.length > 0 && exchange.method === 'GET') {
    violations.push({ property: 'read-changes-nothing', detail: `GET ${op.id} changed ${changed.join(', ')}` });
  }
  return violations;
}

function excerpt(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
