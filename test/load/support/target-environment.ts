import type { Product } from '../../../core/products.ts';
import { DEVELOPMENT_KEYS } from '../../../sandbox/domain/settings.ts';

/**
 * The environment the load commands read to load a target: PATH and HOME for k6, MOMO_BASE_URL and the three
 * subscription keys (the sandbox's development keys unless given).
 */
export function targetEnvironment(baseUrl: string, keys: Record<Product, string> = DEVELOPMENT_KEYS): Record<string, string | undefined> {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    MOMO_BASE_URL: baseUrl,
    MOMO_COLLECTION_KEY: keys.collection,
    MOMO_DISBURSEMENT_KEY: keys.disbursement,
    MOMO_REMITTANCE_KEY: keys.remittance,
  };
}
