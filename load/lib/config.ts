import type { Product } from '../../core/products.ts';
import { PROFILES, type ProfileName } from '../../core/profiles.ts';

/**
 * The load tests' settings, read from __ENV once: the same MOMO_* names as the conformance suite for the
 * target, and LOAD_* for the shape of the load. `npm run load` fills them in for the embedded sandbox.
 */
function text(name: string, fallback?: string): string {
  const value = __ENV[name];
  if (value !== undefined && value !== '') return value;
  if (fallback !== undefined) return fallback;
  throw new Error(`${name} is not set: run the load tests with "npm run load -- <scenario>", or set ${name} (see .env.example).`);
}

export function number(name: string, fallback: number): number {
  const raw = __ENV[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return value;
}

export type { Product };

function profile(): ProfileName {
  const value = text('MOMO_PROFILE', 'spec');
  if (!(PROFILES as readonly string[]).includes(value)) throw new Error(`MOMO_PROFILE must be ${PROFILES.join(' or ')}, got "${value}"`);
  return value as ProfileName;
}

export const config = {
  baseUrl: text('MOMO_BASE_URL').replace(/\/+$/, ''),
  sandboxUrl: text('MOMO_SANDBOX_URL', __ENV.MOMO_BASE_URL ?? '').replace(/\/+$/, ''),
  keys: {
    collection: text('MOMO_COLLECTION_KEY'),
    disbursement: text('MOMO_DISBURSEMENT_KEY'),
    remittance: text('MOMO_REMITTANCE_KEY', 'unused'),
  } as Record<Product, string>,
  targetEnvironment: text('MOMO_TARGET_ENVIRONMENT', 'sandbox'),
  profile: profile(),
  currency: text('MOMO_CURRENCY', 'EUR'),
  callbackHost: text('MOMO_CALLBACK_HOST', '127.0.0.1'),
  /** Base URL of the callback receiver `npm run load` runs; empty when none can be reached. */
  callbackUrl: text('LOAD_CALLBACK_URL', ''),
  /** Record every answer as a k6 check, not only the failed ones (every body is validated either way). */
  checkEveryAnswer: number('LOAD_CHECK_EVERY_ANSWER', 0) > 0,
  /** Refresh a cached token this many seconds before it expires (at most a fifth of its life). */
  tokenRefreshSeconds: number('LOAD_TOKEN_REFRESH_SECONDS', 60),
};
