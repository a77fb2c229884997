import { check } from 'k6';
import type { RefinedResponse, ResponseType } from 'k6/http';
import { validators } from 'virtual:validators';
import type { OperationId } from '../../core/catalogue/operations.ts';
import { bindingOf, bodySchemasOf, operation, productsOf } from '../../core/catalogue/routes.ts';
import { behaviourOf } from '../../core/profiles.ts';
import { config, type Product } from './config.ts';
import { schemaViolations, unexpectedAnswers } from './metrics.ts';

type Response = RefinedResponse<ResponseType | undefined>;

const behaviour = behaviourOf(config.profile);

// The schemas of each (operation, product, status), worked out once per VU: the lookup runs on every answer, so
// it allocates nothing (nested maps, no key string), and the generator stays cheap per iteration.
const schemaCache = new Map<OperationId, Map<Product | undefined, Map<number, string[]>>>();

function schemasOf(id: OperationId, product: Product | undefined, status: number): string[] {
  let byProduct = schemaCache.get(id);
  if (!byProduct) schemaCache.set(id, byProduct = new Map());
  let byStatus = byProduct.get(product);
  if (!byStatus) byProduct.set(product, byStatus = new Map());
  let schemas = byStatus.get(status);
  if (!schemas) {
    const documented = operation(id).responses[status];
    schemas = documented ? bodySchemasOf(documented, bindingOf(id, product ?? productsOf(id)[0]!).errors, behaviour) : [];
    byStatus.set(status, schemas);
  }
  return schemas;
}

/**
 * Checks an answer of an operation against its catalogue entry. An unexpected status counts in
 * momo_unexpected_answers (k6's own http_req_failed, with the documented success statuses set in api.ts,
 * carries the error rate); a sample of the answers (LOAD_VALIDATE_SHARE) is also recorded as k6 checks and has
 * its body validated against the status's JSON Schema, so that checking never makes the load generator the
 * bottleneck. An unexpected status is always recorded as a failed check, whatever the sample. Returns the
 * parsed body when the status is as expected.
 */
export function expectAnswer(id: OperationId, response: Response, status: number, product?: Product): unknown {
  const ok = response.status === status;
  if (!ok) unexpectedAnswers.add(1);
  const sampled = Math.random() < config.validateShare;
  if (!ok || sampled) check(response, { [`${id}: status ${status}`]: () => ok });
  if (!ok) return undefined;
  const schemas = schemasOf(id, product, status);
  const body = schemas.length > 0 ? parse(response) : undefined;
  if (schemas.length > 0 && sampled) {
    const valid = schemas.some((schema) => {
      const validate = validators[schema];
      if (!validate) throw new Error(`no validator was built for schema "${schema}"`);
      return validate(body);
    });
    schemaViolations.add(!valid);
    check(body, { [`${id}: body matches ${schemas.join(' or ')}`]: () => valid });
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
