import { check } from 'k6';
import type { RefinedResponse, ResponseType } from 'k6/http';
import { validators } from 'virtual:validators';
import { config } from './config.ts';
import { schemaViolations, unexpectedAnswers } from './metrics.ts';

type Response = RefinedResponse<ResponseType | undefined>;

/**
 * Checks an answer. An unexpected status counts in momo_unexpected_answers (k6's own http_req_failed,
 * with the documented success statuses set in api.ts, carries the error rate); a sample of the
 * answers (LOAD_VALIDATE_SHARE) is also recorded as k6 checks and has its body validated against the JSON
 * Schema of schemas/, so that checking never makes the load generator the bottleneck. An unexpected
 * status is always recorded as a failed check, whatever the sample. Returns the parsed body when the
 * status is as expected.
 */
export function expectAnswer(operation: string, response: Response, status: number, schema?: string): unknown {
  const ok = response.status === status;
  if (!ok) unexpectedAnswers.add(1);
  const sampled = Math.random() < config.validateShare;
  if (!ok || sampled) check(response, { [`${operation}: status ${status}`]: () => ok });
  if (!ok) return undefined;
  const body = schema || status === 200 ? parse(response) : undefined;
  if (schema && sampled) {
    const validate = validators[schema];
    if (!validate) throw new Error(`no validator was built for schema "${schema}"`);
    const valid = validate(body);
    schemaViolations.add(!valid);
    check(body, { [`${operation}: body matches ${schema}`]: () => valid });
  }
  return body;
}

function parse(response: Response): unknown {
  try {
    return typeof response.body === 'string' && response.body.length > 0 ? JSON.parse(response.body) : undefined;
  } catch {
    return undefined;
  }
}
