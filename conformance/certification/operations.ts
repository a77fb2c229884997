import { isOperationId } from '../../core/catalogue/operations.ts';
import { SPEC_OPERATIONS as COUNTED, specOperationOf, productsOf } from '../../core/catalogue/routes.ts';
import { isProduct } from '../../core/products.ts';

/** One of the 19 operations the spec counts, as the certification report names it. */
export interface SpecOperation {
  /** "4.2 #2", "4.6 refund": stable, and an anchor in the HTML report. */
  key: string;
  section: string;
  name: string;
}

export const SPEC_OPERATIONS: readonly SpecOperation[] = COUNTED.map((o) => ({ key: o.key, section: `§${o.key}`, name: o.title }));

/**
 * The spec operations (of the 19 the spec counts, core/catalogue) a requirement is about: each of its
 * operations under each of its business products; a requirement of provisioning alone (whose operations take
 * any product's key) under every product.
 */
export function specOperationsOf(requirement: { operations: readonly string[]; products: readonly string[] }): string[] {
  const keys = new Set<string>();
  const products = requirement.products.filter(isProduct);
  for (const operation of requirement.operations) {
    if (!isOperationId(operation)) continue;
    for (const product of productsOf(operation)) {
      const key = specOperationOf(operation, product);
      if (key && (products.length === 0 || products.includes(product))) keys.add(key);
    }
  }
  return SPEC_OPERATIONS.map((o) => o.key).filter((key) => keys.has(key));
}
