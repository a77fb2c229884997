import { test } from 'node:test';
import assert from 'node:assert/strict';
import { explainTransportError } from '../../harness/client/transport-errors.ts';
import { urlOf } from '../../core/catalogue/routes.ts';

/** One host that serves both {base_url} and {sandbox_url}. */
const TARGET = 'https://gateway.momo.test:8443';
const CONTEXT = {
  url: urlOf('createAccessToken', 'collection', { gateway: TARGET, provisioning: TARGET }),
  connectTimeoutMs: 5000,
  requestTimeoutMs: 15000,
};
const failure = (code: string | number, message: string, extra: object = {}) => Object.assign(new Error(message), { code }, extra);

// The failing-target runs (test/conformance/failing-target.test.ts) meet refused, reset, timeouts, DNS and TLS
// for real; these are the causes a test machine cannot easily produce, and the shapes undici wraps them in.
test('each cause of a missing answer is said in words, with what to check or which setting to raise', () => {
  const cases: [Error, RegExp][] = [
    [
      failure('UND_ERR_CONNECT_TIMEOUT', 'Connect Timeout Error'),
      /^timed out: no connection to gateway\.momo\.test:8443 within 5000 ms \(UND_ERR_CONNECT_TIMEOUT\); .*raise MOMO_CONNECT_TIMEOUT_MS \(now 5000\)$/,
    ],
    [
      failure('UND_ERR_BODY_TIMEOUT', 'Body Timeout Error'),
      /^timed out: no answer within 15000 ms \(UND_ERR_BODY_TIMEOUT\); .*raise MOMO_REQUEST_TIMEOUT_MS \(now 15000\)$/,
    ],
    // AbortSignal.timeout()'s DOMException has a numeric code, which is no cause to name.
    [
      failure(23, 'The operation was aborted due to timeout', { name: 'TimeoutError' }),
      /^timed out: no answer within 15000 ms; .*MOMO_REQUEST_TIMEOUT_MS/,
    ],
    [
      failure('EAI_AGAIN', 'getaddrinfo EAI_AGAIN gateway.momo.test', { hostname: 'gateway.momo.test' }),
      /^DNS error: the host name gateway\.momo\.test could not be resolved now \(EAI_AGAIN/,
    ],
    [failure('EHOSTUNREACH', 'connect EHOSTUNREACH'), /^network error: gateway\.momo\.test:8443 cannot be reached from this machine/],
    [
      failure('CERT_HAS_EXPIRED', 'certificate has expired'),
      /^TLS error: the server's certificate is not valid now \(CERT_HAS_EXPIRED: certificate has expired\)$/,
    ],
    [
      failure('ERR_TLS_CERT_ALTNAME_INVALID', "Hostname/IP does not match certificate's altnames"),
      /^TLS error: the server's certificate is for another host name than gateway\.momo\.test:8443/,
    ],
    [
      failure('UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate'),
      /^TLS error: the server's certificate is not trusted .*NODE_EXTRA_CA_CERTS=<ca\.pem>$/,
    ],
    // undici's SocketError wraps the socket's own error: the code is found on the cause.
    [
      Object.assign(new Error('fetch failed'), { cause: failure('ECONNRESET', 'read ECONNRESET') }),
      /^connection reset: the server closed the connection without answering \(ECONNRESET: fetch failed: read ECONNRESET\)$/,
    ],
    [new Error('something else entirely'), /^something else entirely$/],
  ];
  for (const [error, words] of cases) assert.match(explainTransportError(error, CONTEXT), words);
});
