/** What every artifact shows in place of a secret. */
export const REDACTED = '[REDACTED]';

const SECRET_HEADERS = new Set(['authorization', 'ocp-apim-subscription-key', 'proxy-authorization', 'cookie', 'set-cookie']);
const SECRET_FIELDS = new Set(['apiKey', 'access_token', 'refresh_token', 'password', 'client_secret']);
// A body that does not parse (JSON cut off, say) may still hold a secret field: it is masked by its shape.
const SECRET_FIELD_IN_TEXT = new RegExp(`("(?:${[...SECRET_FIELDS].join('|')})"\\s*:\\s*)"[^"]*"?`, 'g');
// A JWT anywhere in text is a credential, whoever issued it.
const JWT = /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g;

/**
 * Masks secrets in everything the harness writes: headers by name, JSON fields by name, JWTs by shape, and
 * every secret it has been told of (subscription keys, API keys, Basic credentials) wherever they appear.
 */
export class Redactor {
  private readonly secrets = new Set<string>();

  /** Remembers a secret so that it is masked wherever it appears (addBasicCredential adds the Basic form too). */
  add(secret: string | undefined): void {
    if (!secret || secret.length < 6) return;
    this.secrets.add(secret);
  }

  addBasicCredential(userId: string, apiKey: string): void {
    this.add(apiKey);
    this.add(Buffer.from(`${userId}:${apiKey}`).toString('base64'));
  }

  get known(): ReadonlySet<string> {
    return this.secrets;
  }

  text(value: string): string {
    let out = value.replace(JWT, REDACTED);
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  }

  headers(headers: Record<string, string | string[] | undefined>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined) continue;
      const text = Array.isArray(value) ? value.join(', ') : value;
      out[name] = SECRET_HEADERS.has(name.toLowerCase()) ? redactCredential(text) : this.text(text);
    }
    return out;
  }

  /** A body as text: JSON with its secret fields masked, whether or not the secret is known yet; other text as text(). */
  body(text: string): string {
    if (text.trim() === '') return text;
    try {
      return JSON.stringify(this.json(JSON.parse(text)));
    } catch {
      return this.text(text.replace(SECRET_FIELD_IN_TEXT, `$1"${REDACTED}"`));
    }
  }

  /** A JSON value with secret fields masked and secrets in strings masked. */
  json(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) return value.map((v) => this.json(v));
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, SECRET_FIELDS.has(key) ? REDACTED : this.json(inner)]));
  }
}

/** Keeps the scheme of a credential ("Bearer [REDACTED]") so evidence still shows which kind was sent. */
function redactCredential(value: string): string {
  const scheme = /^(Basic|Bearer)\s+/i.exec(value);
  return scheme ? `${scheme[1]} ${REDACTED}` : REDACTED;
}
