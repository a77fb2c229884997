import type { OperationId } from '../../harness/contract.ts';
import { isProduct, type Product } from '../../core/products.ts';

/**
 * The 19 operations the spec counts: §4.2 #1–#8, §4.3 #9–#12, §4.4 #13, §4.5 #14–#16 and the three status
 * queries of §4.6. The harness's OperationIds are finer (one id, several products) and wider (balances the
 * spec does not list per product); this module is the one place that maps them onto the spec's count.
 */
export interface SpecOperation {
  /** "4.2 #2", "4.6 refund": stable, and an anchor in the HTML report. */
  key: string;
  section: string;
  name: string;
}

const op = (key: string, name: string): SpecOperation => ({ key, section: `§${key}`, name });

export const SPEC_OPERATIONS: readonly SpecOperation[] = [
  op('4.2 #1', 'collection: create access token'),
  op('4.2 #2', 'collection: request to pay'),
  op('4.2 #3', 'collection: request-to-pay delivery notification'),
  op('4.2 #4', 'collection: get account balance in a currency'),
  op('4.2 #5', 'collection: get basic user information'),
  op('4.2 #6', 'collection: get user information with consent'),
  op('4.2 #7', 'collection: bc-authorize'),
  op('4.2 #8', 'collection: validate account holder status'),
  op('4.3 #9', 'disbursement: refund'),
  op('4.3 #10', 'disbursement: deposit'),
  op('4.3 #11', 'disbursement: create OAuth 2.0 token'),
  op('4.3 #12', 'disbursement: validate account holder status'),
  op('4.4 #13', 'remittance: get account balance'),
  op('4.5 #14', 'provisioning: create API user'),
  op('4.5 #15', 'provisioning: create API key'),
  op('4.5 #16', 'provisioning: get API user'),
  op('4.6 request to pay', 'status query: request to pay'),
  op('4.6 refund', 'status query: refund'),
  op('4.6 deposit', 'status query: deposit'),
];

type ByProduct = Partial<Record<Product, string>>;
const everyProduct = (key: string): ByProduct => ({ collection: key, disbursement: key, remittance: key });

/**
 * Which spec operation an OperationId is, per product; a product that is absent is served by the harness
 * or the sandbox but is none of the 19 (e.g. the collection balance without a currency, §2.9 only).
 * The token operation of §4.2 #1 exists per product (§5.2 names no other path), and the consent operations
 * are served under every product (READINGS in core/profiles.ts), so each product's copy counts as the spec's one.
 */
const SPEC_OPERATION_OF: Record<OperationId, ByProduct> = {
  createAccessToken: everyProduct('4.2 #1'),
  requestToPay: { collection: '4.2 #2' },
  deliveryNotification: { collection: '4.2 #3' },
  getBalanceInCurrency: { collection: '4.2 #4' },
  basicUserInfo: { collection: '4.2 #5' },
  userInfo: everyProduct('4.2 #6'),
  bcAuthorize: everyProduct('4.2 #7'),
  accountHolderActive: { collection: '4.2 #8', disbursement: '4.3 #12' },
  refund: { disbursement: '4.3 #9' },
  deposit: { disbursement: '4.3 #10' },
  createOAuthToken: everyProduct('4.3 #11'),
  getBalance: { remittance: '4.4 #13' },
  // Provisioning takes any product's key (§4.5).
  createApiUser: everyProduct('4.5 #14'),
  createApiKey: everyProduct('4.5 #15'),
  getApiUser: everyProduct('4.5 #16'),
  getRequestToPayStatus: { collection: '4.6 request to pay' },
  getRefundStatus: { disbursement: '4.6 refund' },
  getDepositStatus: { disbursement: '4.6 deposit' },
};

/** The spec operation that `operation` called under `product` is, or undefined when it is none of the 19. */
export function specOperationOf(operation: OperationId, product: Product): string | undefined {
  return SPEC_OPERATION_OF[operation][product];
}

/**
 * The spec operations a requirement is about: each of its operations under each of its business products;
 * a requirement of provisioning alone (whose operations take any product's key) under every product.
 */
export function specOperationsOf(requirement: { operations: readonly string[]; products: readonly string[] }): string[] {
  const keys = new Set<string>();
  const products = requirement.products.filter(isProduct);
  const anyProduct = products.length === 0;
  for (const operation of requirement.operations) {
    const byProduct = SPEC_OPERATION_OF[operation as OperationId];
    if (!byProduct) continue;
    for (const [product, key] of Object.entries(byProduct) as [Product, string][]) {
      if (anyProduct || products.includes(product)) keys.add(key);
    }
  }
  return SPEC_OPERATIONS.map((o) => o.key).filter((key) => keys.has(key));
}
