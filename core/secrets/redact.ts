import { SecretFinder } from './encodings.ts';
import type { Product } from '../products.ts';
import { reportSafe } from '../report-text.ts';

/** What every artifact shows in place of a secret. */
export const REDACTED = '[REDACTED]';

/** What a secret is, which decides which operation may give it out (disclosure.ts). */
export type SecretKind =
  | 'subscription key'
  | 'API key'
  | 'Basic credential'
  | 'access token'
  | 'consent token'
  | 'refresh token'
  | 'secret';

const SECRET_HEADERS = new Set(['authorization', 'ocp-apim-subscription-key', 'proxy-authorization', 'cookie', 'set-cookie']);
const SECRET_FIELDS = new Set(['apiKey', 'access_token', 'refresh_token', 'password', 'client_secret']);
// A body that does not parse (JSON cut off, say) may still hold a secret field: it is masked by its shape.
const SECRET_FIELD_IN_TEXT = new RegExp(`("(?:${[...SECRET_FIELDS].join('|')})"\\s*:\\s*)"[^"]*"?`, 'g');
// A JWT anywhere in text is a credential, whoever issued it.
const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;
const HAS_JWT = new RegExp(JWT.source);

/** A known secret seen in a text: what it is and how it was written, never its value. */
export interface SecretSeen {
  kind: SecretKind;
  encoding: string;
}

/**
 * Masks secrets in everything the harness writes: headers by name, JSON fields by name, JWTs by shape, and
 * every secret it has been told of (subscription keys, API keys, Basic credentials, tokens) wherever they
 * appear, in any encoding a target could echo them in (encodings.ts): in the clear, hex, base64 or base64url
 * at any offset, URL-encoded, JSON-escaped, split across lines. Masking replaces whole escapes and never a
 * line break at either end, so JSON stays JSON and text stays text. What text(), headers() and body() give is
 * also safe to write into any report (reportSafe): every text of the target reaches a report through them.
 */
export class Redactor {
  private readonly secrets = new Map<string, SecretKind>();
  private readonly basicOwners = new Map<string, Product>();
  // Compiled on first use after a secret is added: adding is rare, masking happens on every exchange.
  private finder: { values: string[]; search: SecretFinder } | undefined;

  /**
   * Remembers a secret so that it is masked wherever it appears (addBasicCredential adds the Basic form too).
   * Its kind says which operation may give it out; a secret of no stated kind is one that none may.
   */
  add(secret: string | undefined, kind: SecretKind = 'secret'): void {
    if (!secret || secret.length < 6) return;
    if (kind === 'secret' && this.secrets.has(secret)) return;
    this.secrets.set(secret, kind);
    this.finder = undefined;
  }

  /** `product`: the product the API user was provisioned under, which a reproduction names its variables after. */
  addBasicCredential(userId: string, apiKey: string, product?: Product): void {
    const credential = Buffer.from(`${userId}:${apiKey}`).toString('base64');
    this.add(apiKey, 'API key');
    this.add(credential, 'Basic credential');
    if (product !== undefined) this.basicOwners.set(credential, product);
  }

  /** The product of the API user whose Basic credential (base64 of id:key) this is, when it was said. */
  ownerOfBasic(credential: string): Product | undefined {
    return this.basicOwners.get(credential);
  }

  get known(): ReadonlySet<string> {
    return new Set(this.secrets.keys());
  }

  /** Every known secret in a text, in any encoding: what it is and how it was written. */
  seen(text: string): SecretSeen[] {
    const { values, search } = this.compiled();
    return search.find(text).map((sighting) => ({ kind: this.secrets.get(values[sighting.secret]!)!, encoding: sighting.encoding }));
  }

  /** A text with its secrets masked, safe to write into any report. */
  text(value: string): string {
    return reportSafe(this.masked(value));
  }

  headers(headers: Record<string, string | string[] | undefined>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) continue;
      const text = Array.isArray(value) ? value.join(', ') : value;
      out[reportSafe(name)] = SECRET_HEADERS.has(name.toLowerCase()) ? redactCredential(text) : this.text(text);
    }
    return out;
  }

  /**
   * A body as text, safe to write into any report: JSON with its secret fields masked, whether or not the secret
   * is known yet (and still the same JSON: reportSafe's escapes mean in JSON what they replace); other text as text().
   */
  body(text: string): string {
    if (text.trim() === '') return reportSafe(text);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return this.text(text.replace(SECRET_FIELD_IN_TEXT, `$1"${REDACTED}"`));
    }
    // Without a backslash, parsing changes no string: a secret in none of the text is in none of its strings,
    // and only the secret fields need masking: the common case, and the cheaper one.
    const plain =
      !text.includes('\\') && !HAS_JWT.test(text) && (this.secrets.size === 0 || this.compiled().search.find(text).length === 0);
    return reportSafe(JSON.stringify(plain ? this.walk(parsed, (string) => string) : this.json(parsed)));
  }

  /**
   * A JSON value with secret fields masked and secrets in strings (names included) masked. Its strings are not
   * made safe for a report, which would change them: written out, it goes through text() or a failure's message,
   * which do that.
   */
  json(value: unknown): unknown {
    return this.walk(value, (string) => this.masked(string));
  }

  private masked(value: string): string {
    const out = value.replace(JWT, REDACTED);
    if (this.secrets.size === 0) return out;
    return mask(out, this.compiled().search.find(out));
  }

  private walk(value: unknown, masked: (string: string) => string): unknown {
    if (typeof value === 'string') return masked(value);
    if (Array.isArray(value)) return value.map((v) => this.walk(v, masked));
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [masked(key), SECRET_FIELDS.has(key) ? REDACTED : this.walk(inner, masked)]),
    );
  }

  private compiled(): { values: string[]; search: SecretFinder } {
    if (!this.finder) {
      const values = [...this.secrets.keys()];
      this.finder = { values, search: new SecretFinder(values) };
    }
    return this.finder;
  }
}

/**
 * Replaces each sighting (overlapping ones as one). A backslash just before a sighting goes with it: left
 * alone it would escape the mask's first character and break the JSON the text may be.
 */
function mask(text: string, sightings: readonly { start: number; end: number }[]): string {
  const spans = sightings
    .map(({ start, end }) => {
      while (start > 0 && text.charCodeAt(start - 1) === 0x5c) start -= 1;
      return { start, end };
    })
    .sort((a, b) => a.start - b.start);
  let out = '';
  let done = 0;
  for (const { start, end } of spans) {
    if (start < done) {
      done = Math.max(done, end);
    } else {
      out += text.slice(done, start) + REDACTED;
      done = end;
    }
  }
  return out + text.slice(done);
}

/** Keeps the scheme of a credential ("Bearer [REDACTED]") so evidence still shows which kind was sent. */
function redactCredential(value: string): string {
  const scheme = /^(Basic|Bearer)\s+/i.exec(value);
  return scheme ? `${scheme[1]} ${REDACTED}` : REDACTED;
}
