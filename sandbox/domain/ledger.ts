import { toMinor } from '../../core/money.ts';
import type { Product } from '../../core/products.ts';

/**
 * The accounts the sandbox keeps: one balance per API user, product and currency, opening at the configured
 * amount, and the currencies payments may be made in. Payments ask it before they move money, so the rules of
 * money (which currency, enough funds) live here and nowhere else.
 */
export interface Ledger {
  /** Whether payments (and balances) may be in this currency; another is INVALID_CURRENCY. */
  accepts(currency: string): boolean;
  balance(apiUserId: string, product: Product, currency: string): bigint;
  /** Whether the account holds at least `amountMinor`. */
  covers(apiUserId: string, product: Product, currency: string, amountMinor: bigint): boolean;
  credit(apiUserId: string, product: Product, currency: string, amountMinor: bigint): void;
  debit(apiUserId: string, product: Product, currency: string, amountMinor: bigint): void;
  /** Every account whose balance has moved, by "<API user>|<product>|<currency>", in no set order. */
  moved(): [string, bigint][];
}

export class InMemoryLedger implements Ledger {
  /** Balances by API user, then product, then currency: each level keyed by a value the payment already holds. */
  private readonly balances = new Map<string, Map<Product, Map<string, bigint>>>();
  private readonly openingMinor: bigint;
  private readonly currencies: ReadonlySet<string>;

  constructor(options: { openingBalance: string; currencies: readonly string[] }) {
    this.openingMinor = toMinor(options.openingBalance);
    this.currencies = new Set(options.currencies);
  }

  accepts(currency: string): boolean {
    return this.currencies.has(currency);
  }

  balance(apiUserId: string, product: Product, currency: string): bigint {
    return this.balances.get(apiUserId)?.get(product)?.get(currency) ?? this.openingMinor;
  }

  covers(apiUserId: string, product: Product, currency: string, amountMinor: bigint): boolean {
    return this.balance(apiUserId, product, currency) >= amountMinor;
  }

  credit(apiUserId: string, product: Product, currency: string, amountMinor: bigint): void {
    const accounts = this.accountsOf(apiUserId, product);
    accounts.set(currency, (accounts.get(currency) ?? this.openingMinor) + amountMinor);
  }

  /** An API user's accounts under a product, made when first credited. */
  private accountsOf(apiUserId: string, product: Product): Map<string, bigint> {
    let products = this.balances.get(apiUserId);
    if (!products) this.balances.set(apiUserId, (products = new Map()));
    let accounts = products.get(product);
    if (!accounts) products.set(product, (accounts = new Map()));
    return accounts;
  }

  debit(apiUserId: string, product: Product, currency: string, amountMinor: bigint): void {
    this.credit(apiUserId, product, currency, -amountMinor);
  }

  /** Every account whose balance has moved, by "<API user>|<product>|<currency>", in no set order. */
  moved(): [string, bigint][] {
    const moved: [string, bigint][] = [];
    for (const [apiUserId, products] of this.balances) {
      for (const [product, accounts] of products) {
        for (const [currency, balance] of accounts) moved.push([`${apiUserId}|${product}|${currency}`, balance]);
      }
    }
    return moved;
  }
}
