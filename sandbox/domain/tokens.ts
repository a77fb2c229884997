import { randomUUID } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';
import type { Clock } from './clock.ts';
import type { Product } from '../../core/products.ts';

/** What a sandbox JWT says about its bearer. */
export interface TokenClaims {
  /** API user id. */
  sub: string;
  /** Product whose operations the token opens. */
  prd: Product;
  /** `access` for product access tokens, `consent` for tokens of the CIBA consent flow. */
  use: 'access' | 'consent';
  iat: number;
  exp: number;
  jti: string;
  /** Consent tokens: the account holder and scopes consented to. */
  msisdn?: string;
  scope?: string;
}

const VERIFIED_CACHE_SIZE = 10_000;
/** Characters of an HS256 signature in base64url (256 bits). */
const SIGNATURE_KEY_LENGTH = 43;
const WHITE_SPACE = /\s/;

/**
 * Whether a token's signature is written as this authority writes it: canonical base64url. fast-jwt refuses characters
 * outside the alphabet (nearform/fast-jwt#607) but decodes the rest with Buffer's base64, which ignores the unused bits
 * of the last character: a token whose last character was moved within its group of four would pass for the one
 * signed (docs/upstream-reports.md). Checked once per token, before it is remembered.
 */
function signatureAsSigned(token: string): boolean {
  const signature = token.slice(token.lastIndexOf('.') + 1);
  return Buffer.from(signature, 'base64url').toString('base64url') === signature;
}

export type TokenCheck = { ok: true; claims: TokenClaims } | { ok: false; description: string };

/**
 * Signs and checks the sandbox's HS256 JWTs. Expiry is checked against the sandbox clock rather than by
 * fast-jwt, so tests can expire a token by moving the clock; signature checks are remembered per token.
 */
export class TokenAuthority {
  private readonly sign: (payload: Record<string, unknown>) => string;
  private readonly verify: (token: string) => TokenClaims;
  /**
   * Tokens whose signature was already checked, keyed by their signature's characters, with the whole token beside
   * it. fast-jwt's own cache hashes every token with SHA-256 for its key, which cost more per request than the
   * check it saves; and a key of the whole token means hashing its 300-odd characters on each request. A token is
   * found only when it equals the one checked, so a forged one, even with a signature copied from a good one, never is.
   */
  private readonly verified = new Map<string, { token: string; claims: TokenClaims }>();

  constructor(
    secret: string,
    private readonly clock: Pick<Clock, 'now'>,
  ) {
    this.sign = createSigner({ key: secret, algorithm: 'HS256', noTimestamp: true });
    this.verify = createVerifier({
      key: secret,
      algorithms: ['HS256'],
      ignoreExpiration: true,
      ignoreNotBefore: true,
      requiredClaims: ['sub', 'prd', 'use', 'exp'],
    });
  }

  issue(claims: { sub: string; prd: Product; use: TokenClaims['use']; msisdn?: string; scope?: string }, lifetimeSeconds: number): string {
    const now = this.clock.now();
    // Rounded up, so the token never stops working before the expires_in its holder was told.
    return this.sign({ ...claims, iat: Math.floor(now / 1000), exp: Math.ceil(now / 1000 + lifetimeSeconds), jti: randomUUID() });
  }

  /** The claims of a token this authority signed, whether or not it has expired; undefined for any other string. */
  claimsOf(token: string): TokenClaims | undefined {
    // The signature's last characters: any part of the token would do as the key, as a hit needs the whole token equal.
    const known = this.verified.get(token.slice(-SIGNATURE_KEY_LENGTH));
    if (known?.token === token) return known.claims;
    // White space is in no token this authority signs; one with it is refused unread (and so never remembered).
    if (WHITE_SPACE.test(token)) return undefined;
    if (!signatureAsSigned(token)) return undefined;
    let claims: TokenClaims;
    try {
      claims = this.verify(token);
    } catch {
      return undefined;
    }
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.clear();
    this.verified.set(token.slice(-SIGNATURE_KEY_LENGTH), { token, claims });
    return claims;
  }

  /** Seconds until a token's expiry (negative once it has passed). */
  secondsLeft(claims: TokenClaims): number {
    return claims.exp - this.clock.now() / 1000;
  }

  /** A token's claims if it may be used here: `product` undefined takes a token of any product (STRICT_READINGS.tokenProduct). */
  check(token: string, product: Product | undefined, use: TokenClaims['use']): TokenCheck {
    const claims = this.claimsOf(token);
    if (!claims) return { ok: false, description: 'The access token is malformed or its signature is not valid.' };
    if (claims.exp * 1000 <= this.clock.now()) return { ok: false, description: 'The access token expired.' };
    if (product !== undefined && claims.prd !== product)
      return { ok: false, description: `The access token was issued for the ${claims.prd} product, not ${product}.` };
    if (claims.use !== use) {
      return {
        ok: false,
        description:
          use === 'consent'
            ? 'This operation needs a consent token from the OAuth 2.0 token operation.'
            : 'A consent token cannot be used here; use an access token.',
      };
    }
    return { ok: true, claims };
  }
}
