import { OPERATIONS, type OperationId } from '../../core/catalogue/operations.ts';
import { bindingOf, bodySchemasOf } from '../../core/catalogue/routes.ts';
import type { ProfileBehaviour } from '../../core/profiles.ts';
import type { Product } from '../../core/products.ts';
import { observed, reading, spec, type Source } from '../../core/sources.ts';
import type { ResponseSource } from '../../core/catalogue/operations.ts';

export type { OperationId };

/**
 * The schema a response's body must match, given its status, from the operation's catalogue entry: the schema
 * of a documented status (success or error), the OAuth or gateway shape on any 401 (§7: "401 Unauthorized;
 * body {error}", and the gateway's own {statusCode, message}), the error set of the operation under its product
 * otherwise. 400 bodies are not shown in the spec (§7 rule 6) and are often empty on the live sandbox, so they
 * are not checked.
 */
export function schemasFor(
  id: OperationId,
  product: Product,
  status: number,
  profile: ProfileBehaviour,
): string[] | 'no body' | 'unchecked' {
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

/**
 * Where the catalogue says a status of an operation comes from, as a check cites it: the spec's clause (the binding's
 * section; for an operation beyond the spec, the provider's definition it rests on), the live service, or the
 * sandbox's own reading. Of several statuses, the firmest: a departure from all of them is a departure from that one.
 * A status the catalogue does not list for the operation is the case's own, and cites the operation's section.
 */
export function statusSourceOf(id: OperationId, product: Product, statuses: readonly number[]): Source {
  const kinds = statuses.map((status) => OPERATIONS[id].responses[status]?.source ?? 'spec');
  const firmest = (['spec', 'live', 'sandbox'] as const).find((kind) => kinds.includes(kind)) ?? 'spec';
  return sourceOfKind(firmest, id, product, statuses);
}

/** Where the codes of a status of an operation come from: its codeSource, else where the status comes from. */
export function codeSourceOf(id: OperationId, product: Product, status: number): Source {
  const response = OPERATIONS[id].responses[status];
  return sourceOfKind(response?.codeSource ?? response?.source ?? 'spec', id, product, [status]);
}

function sourceOfKind(kind: ResponseSource, id: OperationId, product: Product, statuses: readonly number[]): Source {
  const binding = bindingOf(id, product);
  const descriptions = statuses
    .map((s) => OPERATIONS[id].responses[s]?.description)
    .filter(Boolean)
    .join(' ');
  if (kind === 'live') return observed(`real-api-notes, ${OPERATIONS[id].label}: ${descriptions}`);
  if (kind === 'sandbox')
    return reading(`the spec does not say; the reference sandbox answers so (${OPERATIONS[id].label}: ${descriptions})`);
  return spec(binding.beyondSpec !== undefined ? `beyond the spec, ${binding.section}: ${binding.beyondSpec}` : binding.section);
}
