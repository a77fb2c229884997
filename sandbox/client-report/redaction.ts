import { REDACTED, Redactor } from '../../core/secrets/redact.ts';
import type { KnownSecret, ObservedCallback, ObservedExchange } from './observed.ts';

/**
 * The one exchange a finding keeps, made safe to write into any report: every secret the exchange may carry
 * masked in any encoding (core/secrets/redact.ts: the subscription keys, the API key and Basic credential the
 * client sent, its tokens, JWTs by their shape, secret fields by name), query parameters named like a
 * credential masked whatever their value, everything the client wrote made report-safe, and each part cut to
 * a bounded length after masking, so that no piece of a secret survives a cut.
 */

/** A query parameter whose name says it carries a credential: masked in a report, and a finding in a URL. */
export const CREDENTIAL_PARAMETER = /key|token|secret|passw|auth|credential|signature|session/i;

const BODY_CHARS = 2048;
const HEADER_CHARS = 256;
const HEADERS_KEPT = 24;
const TARGET_CHARS = 512;

const redactors = new WeakMap<readonly KnownSecret[], Redactor>();

/** The redactor of an exchange's secrets (made once for each list). */
export function redactorOf(secrets: readonly KnownSecret[]): Redactor {
  let redactor = redactors.get(secrets);
  if (!redactor) {
    redactor = new Redactor();
    for (const { value, kind } of secrets) redactor.add(value, kind);
    redactors.set(secrets, redactor);
  }
  return redactor;
}

/** At most `max` characters, saying so when it cut. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** A path and query, or a URL, with its secrets masked: credential-named parameters by name, the rest by value. */
export function redactedUrl(url: string, redactor: Redactor): string {
  const query = url.indexOf('?');
  if (query < 0) return clip(redactor.text(url), TARGET_CHARS);
  const parameters = url
    .slice(query + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const name = equals < 0 ? pair : pair.slice(0, equals);
      return equals >= 0 && CREDENTIAL_PARAMETER.test(decoded(name)) ? `${redactor.text(name)}=${REDACTED}` : redactor.text(pair);
    });
  return clip(`${redactor.text(url.slice(0, query))}?${parameters.join('&')}`, TARGET_CHARS);
}

/** A percent-encoded text decoded, or as it is when it is not valid percent-encoding. */
export function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/** An exchange as a finding shows it, at the time of the sandbox's clock. */
export interface ReportedExchange {
  at: string;
  /** A request of the client, or a callback the sandbox sent to the client's listener. */
  direction: 'request' | 'callback';
  operation?: string;
  method: string;
  /** The path and query of a request, or the URL of a callback, with secrets masked. */
  target: string;
  /** What came of it, in words: "answered 400", "the connection closed before the answer". */
  outcome: string;
  status?: number;
  requestHeaders?: Record<string, string>;
  requestBody?: string;
  responseBody?: string;
}

export function reportedExchange(exchange: ObservedExchange): ReportedExchange {
  const redactor = redactorOf(exchange.secrets);
  const headers = Object.entries(redactor.headers(exchange.headers as Record<string, string | string[] | undefined>))
    .slice(0, HEADERS_KEPT)
    .map(([name, value]) => [clip(name, 64), clip(value, HEADER_CHARS)]);
  return {
    at: new Date(exchange.at).toISOString(),
    direction: 'request',
    ...(exchange.operation ? { operation: exchange.operation } : {}),
    method: clip(redactor.text(exchange.method), 16),
    target: redactedUrl(exchange.url, redactor),
    outcome: exchange.status === undefined ? 'the connection closed before the answer was sent' : `answered ${exchange.status}`,
    ...(exchange.status !== undefined ? { status: exchange.status } : {}),
    requestHeaders: Object.fromEntries(headers),
    ...(exchange.body !== undefined ? { requestBody: clip(redactor.body(JSON.stringify(exchange.body) ?? ''), BODY_CHARS) } : {}),
    ...(exchange.responseBody ? { responseBody: clip(redactor.body(exchange.responseBody), BODY_CHARS) } : {}),
  };
}

export function reportedCallback(callback: ObservedCallback): ReportedExchange {
  const redactor = redactorOf(callback.secrets);
  const { attempt } = callback;
  const took = `${Math.round(attempt.elapsedMs)} ms`;
  return {
    at: new Date(callback.at).toISOString(),
    direction: 'callback',
    method: attempt.method,
    target: redactedUrl(attempt.url, redactor),
    outcome:
      attempt.status !== undefined
        ? `attempt ${attempt.attempt}: the listener answered ${attempt.status} after ${took}`
        : `attempt ${attempt.attempt}: ${attempt.timedOut ? 'no answer within' : 'no answer after'} ${took} (${clip(redactor.text(attempt.problem ?? ''), 200)})`,
    ...(attempt.status !== undefined ? { status: attempt.status } : {}),
  };
}
