export const PRODUCTS = ['collection', 'disbursement', 'remittance'] as const;
export type Product = (typeof PRODUCTS)[number];

export function isProduct(value: string): value is Product {
  return (PRODUCTS as readonly string[]).includes(value);
}
