import { check } from 'k6';
import type { RefinedResponse, ResponseType } from 'k6/http';
import { validators } from 'virtual:validators';
import { config } from './config.ts';
import { schemaViolations, unexpectedAnswers } from './metrics.ts';

type Response = RefinedResponse<ResponseType | undefined>;

/**
 * Checks an answer: its status always; its body against the JSON Schema of schemas/ on a sample only, so
 * that validating never makes the load generator the bottleneck. Returns the parsed body when the status
 * is as expected.
 */
export function expectAnswer(operation: string, response: Response, status: number, schema?: string): unknown {
  const ok = check(response, { [`${operation}: status ${status}`]: (r) => r.status === status });
  unexpectedAnswers.add(!ok, { op: operation });
  if (!ok) return undefined;
  const body = schema || status === 200 ? parse(response) : undefined;
  if (schema && Math.random() < config.validateShare) {
    const validate = validators[schema];
    if (!validate) throw new Error(`no validator was built for schema "${schema}"`);
    const valid = validate(body);
    schemaViolations.add(!valid, { op: operation });
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
