/**
 * Why a request got no answer, in words a user can act on: refused, reset, timed out, DNS or TLS, each with
 * what to check or which setting to raise. The error codes are Node's (net, dns, tls) and undici's.
 */
import { reportSafe } from '../../core/report-text.ts';

/** The target could not be reached when the run began: every selected scenario is reported not tested. */
export class TargetUnreachableError extends Error {
  readonly fatal = true;
  constructor(message: string) {
    // The cause may quote what the server sent (a TLS alert, a parser's complaint): safe for every report.
    super(reportSafe(message));
    this.name = 'TargetUnreachableError';
  }
}

export interface TransportContext {
  url: string;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
}

// Certificate checks that failed: the server speaks TLS, but Node does not trust what it presented.
const UNTRUSTED_CERTIFICATE = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);
const EXPIRED_CERTIFICATE = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);
const REQUEST_TIMEOUTS = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export function explainTransportError(error: unknown, context: TransportContext): string {
  const e = error as Error & { code?: unknown; hostname?: string; cause?: Error & { code?: unknown } };
  // undici wraps some socket errors, and the cause then carries the code; a DOMException's code is a number.
  const code = [e.code, e.cause?.code].find((c): c is string => typeof c === 'string') ?? '';
  const detail = e.cause?.message && e.cause.message !== e.message ? `${e.message}: ${e.cause.message}` : e.message;
  const { host } = new URL(context.url);
  const request = `MOMO_REQUEST_TIMEOUT_MS (now ${context.requestTimeoutMs})`;

  if (code === 'ECONNREFUSED')
    return `connection refused: nothing accepts connections at ${host} (${code}); check MOMO_BASE_URL / MOMO_SANDBOX_URL and that the server is up`;
  if (code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE')
    return `connection reset: the server closed the connection without answering (${code}: ${detail})`;
  // AbortSignal.timeout() in the client makes short timeouts exact; its error has no code, only the name.
  if (REQUEST_TIMEOUTS.has(code) || e.name === 'TimeoutError')
    return `timed out: no answer within ${context.requestTimeoutMs} ms${code ? ` (${code})` : ''}; the target is too slow for the harness's timeout: raise ${request}`;
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ETIMEDOUT')
    return `timed out: no connection to ${host} within ${context.connectTimeoutMs} ms (${code}); check that the address is reachable from here, or raise MOMO_CONNECT_TIMEOUT_MS (now ${context.connectTimeoutMs})`;
  if (code === 'ENOTFOUND')
    return `DNS error: the host name ${e.hostname ?? host} does not resolve (${code}); check the host in MOMO_BASE_URL / MOMO_SANDBOX_URL`;
  if (code === 'EAI_AGAIN')
    return `DNS error: the host name ${e.hostname ?? host} could not be resolved now (${code}: no DNS server answered); check this machine's network and DNS`;
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `network error: ${host} cannot be reached from this machine (${code})`;
  if (UNTRUSTED_CERTIFICATE.has(code))
    return `TLS error: the server's certificate is not trusted (${code}: ${detail}); if the certificate is meant to be trusted, give Node its CA with NODE_EXTRA_CA_CERTS=<ca.pem>`;
  if (EXPIRED_CERTIFICATE.has(code)) return `TLS error: the server's certificate is not valid now (${code}: ${detail})`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `TLS error: the server's certificate is for another host name than ${host} (${code}: ${detail})`;
  if (code.startsWith('ERR_SSL_') || code === 'EPROTO' || code.startsWith('ERR_TLS_')) {
    return `TLS error: the TLS handshake with ${host} failed (${code}: ${opensslReason(detail)}); if the server speaks plain HTTP on this port, the URL must begin with http://`;
  }
  return `${code ? `${code}: ` : ''}${detail}`;
}

/** OpenSSL's messages run on with error numbers and source paths; the reason is the part a user reads. */
function opensslReason(text: string): string {
  return /SSL routines:[^:]*:([^:\n]+)/.exec(text)?.[1] ?? text.split('\n')[0]!.trim();
}
