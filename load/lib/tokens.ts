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
    if (created.status !== 201) fail(`setup: provisioning a ${product} API user at ${config.sandboxUrl} answered ${created.status}: check MOMO_SANDBOX_URL and MOMO_${upper}_KEY`);
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
  // The cache's entry for the account asked for last is kept beside it (and changed with it): a scenario asks
  // for the same account every iteration, and a Map lookup is one of the dearer things a k6 script does.
  const cached = account === lastAccount ? lastCached : cache.get(account.userId);
  if (cached && Date.now() < cached.refreshAt) {
    lastAccount = account;
    lastCached = cached;
    return cached.bearer;
  }
  return fetchToken(account).bearer;
}
let lastAccount: Account | undefined;
let lastCached: Cached | undefined;

/** A fresh token, bypassing the cache: what a client that does not cache does on every call. */
export function fetchToken(account: Account): Cached {
  const started = Date.now();
  tokenRequests.add(1, { product: account.product });
  const body = expectAnswer('createAccessToken', createAccessToken(account), 200, account.product) as { access_token: string; expires_in: number } | undefined;
  if (!body) return { bearer: 'Bearer invalid', refreshAt: 0 };
  const lifetimeMs = body.expires_in * 1000;
  const margin = Math.min(config.tokenRefreshSeconds * 1000, lifetimeMs / 5);
  const entry = { bearer: `Bearer ${body.access_token}`, refreshAt: started + lifetimeMs - margin };
  cache.set(account.userId, entry);
  lastAccount = account;
  lastCached = entry;
  return entry;
}

/** A 401 to a cached token: counted (it must not happen), and the token dropped so the next call gets a new one. */
export function refused(account: Account, status: number): void {
  if (status !== 401) return;
  unexpected401.add(1, { product: account.product });
  cache.delete(account.userId);
  if (lastAccount?.userId === account.userId) lastAccount = lastCached = undefined;
}
