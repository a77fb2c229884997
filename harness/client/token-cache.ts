/** An access token and when it stops being usable, in ms since the epoch. */
export interface CachedToken {
  accessToken: string;
  /** When it was asked for (ms since the epoch): its life counts from no later than this. */
  issuedAt: number;
  expiresAt: number;
}

export interface TokenCacheOptions {
  /** Fetches a fresh token; `lifetimeSeconds` is its expires_in. */
  fetch: (key: string) => Promise<{ accessToken: string; lifetimeSeconds: number }>;
  /** Refresh this long before expiry, or a fifth of the lifetime when that is shorter. */
  refreshBeforeMs?: number;
  now?: () => number;
}

/**
 * Tokens per product and API user, fetched once and refreshed before they expire, as a well-behaved
 * client does. Concurrent callers for the same key share one fetch.
 */
export class TokenCache {
  private readonly tokens = new Map<string, CachedToken & { refreshAt: number }>();
  private readonly pending = new Map<string, Promise<CachedToken>>();
  private readonly now: () => number;
  private readonly refreshBeforeMs: number;
  fetches = 0;

  constructor(private readonly options: TokenCacheOptions) {
    this.now = options.now ?? Date.now;
    this.refreshBeforeMs = options.refreshBeforeMs ?? 60_000;
  }

  async get(key: string): Promise<string> {
    const cached = this.tokens.get(key);
    if (cached && this.now() < cached.refreshAt) return cached.accessToken;
    return (await this.refresh(key)).accessToken;
  }

  /** Drops a token the server refused, so the next get fetches a new one. */
  invalidate(key: string): void {
    this.tokens.delete(key);
  }

  /** The key a token is held under now, with when it was issued and expires; undefined for a token the cache does not hold. */
  heldAs(accessToken: string): (CachedToken & { key: string }) | undefined {
    for (const [key, token] of this.tokens) if (token.accessToken === accessToken) return { key, ...token };
    return undefined;
  }

  private refresh(key: string): Promise<CachedToken> {
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const started = this.now();
    const fetching = this.options.fetch(key).then(({ accessToken, lifetimeSeconds }) => {
      const lifetimeMs = lifetimeSeconds * 1000;
      const margin = Math.min(this.refreshBeforeMs, lifetimeMs / 5);
      // Counted from before the request, so the time it took cannot make the token outlive its expiry.
      const token = { accessToken, issuedAt: started, expiresAt: started + lifetimeMs, refreshAt: started + lifetimeMs - margin };
      this.tokens.set(key, token);
      this.fetches += 1;
      return token;
    });
    this.pending.set(key, fetching);
    const forget = () => this.pending.delete(key);
    fetching.then(forget, forget);
    return fetching;
  }
}
