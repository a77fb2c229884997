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
  /**
   * Balances by API user, then by "<product>|<currency>". The API user's id is the caller's own string, whose
   * hash V8 keeps, where one key of all three would be a new string to hash on every payment.
   */
  private readonly balances = new Map<string, Map<string, bigint>>();
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
    return this.balances.get(apiUserId)?.get(accountOf(product, currency)) ?? this.openingMinor;
  }

  covers(apiUserId: string, product: Product, currency: string, amountMinor: bigint): boolean {
    return this.balance(apiUserId, product, currency) >= amountMinor;
  }

  credit(apiUserId: string, product: Product, currency: string, amountMinor: bigint): void {
    let accounts = this.balances.get(apiUserId);
    if (!accounts) this.balances.set(apiUserId, accounts = new Map());
    const account = accountOf(product, currency);
    accounts.set(account, (accounts.get(account) ?? this.openingMinor) + amountMinor);
  }

  debit(apiUserId: string, product: Product, currency: string, amountMinor: bigint): void {
    this.credit(apiUserId, product, currency, -amountMinor);
  }

  /** Every account whose balance has moved, by "<API user>|<product>|<currency>", in no set order. */
  moved(): [string, bigint][] {
    return [...this.balances].flatMap(([apiUserId, accounts]) => [...accounts].map(([account, balance]): [string, bigint] => [`${apiUserId}|${account}`, balance]));
  }
}

function accountOf(product: Product, currency: string): string {
  return `${product}|${currency}`;
}
