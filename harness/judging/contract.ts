import { OPERATIONS, type OperationId } from '../../core/catalogue/operations.ts';
import { bindingOf, bodySchemasOf } from '../../core/catalogue/routes.ts';
import type { ProfileBehaviour } from '../../core/profiles.ts';
import type { Product } from '../../core/products.ts';

export type { OperationId };

/**
 * The schema a response's body must match, given its status, from the operation's catalogue entry: the schema
 * of a documented status (success or error), the OAuth or gateway shape on any 401 (§7: "401 Unauthorized;
 * body {error}", and the gateway's own {statusCode, message}), the error set of the operation under its product
 * otherwise. 400 bodies are not shown in the spec (§7 rule 6) and are often empty on the live sandbox, so they
 * are not checked.
 */
export function schemasFor(id: OperationId, product: Product, status: number, profile: ProfileBehaviour): string[] | 'no body' | 'unchecked' {
  const binding = bindingOf(id, product);
  const response = OPERATIONS[id].responses[status];
  if (status >= 200 && status < 300 && response) {
    const schemas = bodySchemasOf(response, binding.errors, profile);
    return schemas.length > 0 ? schemas : 'no body';
  }
  if (status === 400) return 'unchecked';
  if (status === 401) return ['gateway-error', 'oauth-error'];
  const documented = response ? bodySchemasOf(response, binding.errors, profile) : [];
  return documented.length > 0 ? documented : [binding.errors];
}
