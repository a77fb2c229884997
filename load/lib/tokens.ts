import { fail } from 'k6';
import { createAccessToken, createApiKey, createApiUser, type Account } from './api.ts';
import { expectAnswer } from './checks.ts';
import { config, type Product } from './config.ts';
import { uuidv4 } from './ids.ts';
import { tokenRequests, unexpected401 } from './metrics.ts';

/**
 * API users for the run: the ones MOMO_<PRODUCT>_USER_ID / _API_KEY name, or new ones. Called from
 * setup(), which fails the run at once, with the reason, when the target does not provision.
 */
export function provisionAccounts(products: readonly Product[]): Record<string, Account> {
  const accounts: Record<string, Account> = {};
  for (const product of products) {
    const upper = product.toUpperCase();
    const userId = __ENV[`MOMO_${upper}_USER_ID`];
    const apiKey = __ENV[`MOMO_${upper}_API_KEY`];
    if (userId && apiKey) {
      accounts[product] = { product, userId, apiKey };
      continue;
    }
    const id = uuidv4();
    const created = createApiUser(product, id);
    if (created.status !== 201)
      fail(
        `setup: provisioning a ${product} API user at ${config.sandboxUrl} answered ${created.status}: check MOMO_SANDBOX_URL and MOMO_${upper}_KEY`,
      );
    const key = createApiKey(product, id);
    const body = key.status === 201 ? (JSON.parse(key.body as string) as { apiKey: string }) : undefined;
    if (!body) fail(`setup: creating the ${product} API key answered ${key.status}`);
    accounts[product] = { product, userId: id, apiKey: body!.apiKey };
  }
  return accounts;
}

interface Cached {
  bearer: string;
  refreshAt: number;
}

// Module state is per VU in k6: each VU keeps its own tokens, as each client instance of a partner would.
// Keyed by the API user's id: an id belongs to one product, and no key string is built per call.
const cache = new Map<string, Cached>();

/**
 * A Bearer credential from the VU's cache, fetched when missing and refreshed before it expires: the
 * earlier of LOAD_TOKEN_REFRESH_SECONDS and a fifth of its life before expires_in runs out.
 */
export function bearer(account: Account): string {
  const cached = cache.get(account.userId);
  if (cached && Date.now() < cached.refreshAt) return cached.bearer;
  return fetchToken(account).bearer;
}

/** A fresh token, bypassing the cache: what a client that does not cache does on every call. */
export function fetchToken(account: Account): Cached {
  const started = Date.now();
  tokenRequests.add(1, { product: account.product });
  const issued = requestToken(account);
  if (!issued) return { bearer: 'Bearer invalid', refreshAt: 0 };
  const margin = Math.min(config.tokenRefreshSeconds * 1000, (issued.expiresAt - started) / 5);
  const entry = { bearer: issued.bearer, refreshAt: issued.expiresAt - margin };
  cache.set(account.userId, entry);
  return entry;
}

/** One call of the token operation, its body checked; undefined when it did not answer 200. */
function requestToken(account: Account): IssuedToken | undefined {
  const started = Date.now();
  const body = expectAnswer('createAccessToken', createAccessToken(account), 200, account.product) as
    | { access_token: string; expires_in: number }
    | undefined;
  return body ? { bearer: `Bearer ${body.access_token}`, expiresAt: started + body.expires_in * 1000 } : undefined;
}

/** A token fetched ahead of the load, for a VU to take into its cache (setup data: plain JSON). */
export interface IssuedToken {
  bearer: string;
  /** When it expires, in ms since the epoch (its expires_in counted from the request that fetched it). */
  expiresAt: number;
}

/**
 * Tokens fetched in setup(), before any measured load: a client that has been running a while holds a token
 * already, so a measurement must not pay a token fetch per VU. One request at a time, so the target sees no
 * burst. setup() data is copied into every VU, so the pool is a few tokens, not one per VU.
 */
export function issueTokens(account: Account, count: number): IssuedToken[] {
  const tokens: IssuedToken[] = [];
  for (let i = 0; i < count; i += 1) {
    const issued = requestToken(account);
    if (!issued) fail(`setup: the ${account.product} token operation did not answer 200, so the load would measure refusals`);
    tokens.push(issued!);
  }
  return tokens;
}

/**
 * Puts one of the pool's tokens into this VU's cache, unless it holds one for the account already. VUs take the
 * pool's tokens in turn. Each VU renews its token at its own moment within the refresh margin, spread by VU
 * number, so that VUs holding tokens fetched together do not all fetch a new one in the same second.
 */
export function adoptToken(account: Account, pool: readonly IssuedToken[]): void {
  if (pool.length === 0 || cache.has(account.userId)) return;
  const issued = pool[(__VU - 1) % pool.length]!;
  const lifetimeMs = Math.max(0, issued.expiresAt - Date.now());
  const margin = Math.min(config.tokenRefreshSeconds * 1000, lifetimeMs / 5);
  const spread = ((__VU * 7919) % 1000) / 1000;
  cache.set(account.userId, { bearer: issued.bearer, refreshAt: issued.expiresAt - margin * (0.5 + spread / 2) });
}

/** A 401 to a cached token: counted (it must not happen), and the token dropped so the next call gets a new one. */
export function refused(account: Account, status: number): void {
  if (status !== 401) return;
  unexpected401.add(1, { product: account.product });
  cache.delete(account.userId);
}
