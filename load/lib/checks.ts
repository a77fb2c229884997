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

interface Expected {
  /** Names of the checks recorded for this answer (built once, not per call). */
  statusCheck: string;
  bodyCheck: string;
  validators: ((data: unknown) => boolean)[];
}

// What each (operation, product, status) expects, worked out once per VU: the lookup runs on every answer, so
// it allocates nothing (nested maps, no key string), and the generator stays cheap per iteration.
const expectations = new Map<OperationId, Map<Product | undefined, Map<number, Expected>>>();

function expectedOf(id: OperationId, product: Product | undefined, status: number): Expected {
  let byProduct = expectations.get(id);
  if (!byProduct) expectations.set(id, (byProduct = new Map()));
  let byStatus = byProduct.get(product);
  if (!byStatus) byProduct.set(product, (byStatus = new Map()));
  let expected = byStatus.get(status);
  if (!expected) {
    const documented = operation(id).responses[status];
    const schemas = documented ? bodySchemasOf(documented, bindingOf(id, product ?? productsOf(id)[0]!).errors, behaviour) : [];
    expected = {
      statusCheck: `${id}: status ${status}`,
      bodyCheck: `${id}: body matches ${schemas.join(' or ')}`,
      validators: schemas.map((schema) => {
        const validate = validators[schema];
        if (!validate) throw new Error(`no validator was built for schema "${schema}"`);
        return validate;
      }),
    };
    byStatus.set(status, expected);
  }
  return expected;
}

/**
 * Checks an answer of an operation against its catalogue entry: its status, and its body against the status's
 * JSON Schema, every answer. An unexpected status counts in momo_unexpected_answers (k6's own http_req_failed,
 * with the documented success statuses set in api.ts, carries the error rate), a body that departs from its
 * schema in momo_schema_violations (held to none in slo.ts). Under load a k6 check is recorded only for what
 * failed, as a check is a metric sample and samples are what a generator's iteration costs most; a run that
 * wants every answer recorded as a check (the smoke run) sets LOAD_CHECK_EVERY_ANSWER. Returns the parsed body
 * when the status is as expected. `answered` is the response's status, when the caller has read it already.
 */
export function expectAnswer(id: OperationId, response: Response, status: number, product?: Product, answered = response.status): unknown {
  const expected = expectedOf(id, product, status);
  const ok = answered === status;
  if (!ok) {
    unexpectedAnswers.add(1);
    check(response, { [expected.statusCheck]: () => false });
    return undefined;
  }
  if (config.checkEveryAnswer) check(response, { [expected.statusCheck]: () => true });
  if (expected.validators.length === 0) return undefined;
  const body = parse(response);
  const valid = expected.validators.length === 1 ? expected.validators[0]!(body) : expected.validators.some((validate) => validate(body));
  if (!valid) {
    schemaViolations.add(1);
    check(body, { [expected.bodyCheck]: () => false });
  } else if (config.checkEveryAnswer) {
    check(body, { [expected.bodyCheck]: () => true });
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
