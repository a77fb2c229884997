import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiResponse, OperationRef } from '../../harness/client/momo-client.ts';
import { ConformanceFailure, TargetUnavailableAnswer, judge, judgeAnswer, judgeRecord, type Expectation } from '../../harness/judging/judge.ts';
import { secretsIn } from '../../harness/secrets/leak-scan.ts';
import { behaviourOf } from '../../core/profiles.ts';
import { REDACTED, Redactor } from '../../harness/secrets/redact.ts';

const SPEC = behaviourOf('spec');
const MTN = behaviourOf('mtn-sandbox');
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4eXoifQ.c2lnbmF0dXJlLXZhbHVl';

const OPS = {
  requestToPay: { id: 'requestToPay', product: 'collection', label: 'request to pay (collection)', section: '§4.2 #2' },
  getRequestToPayStatus: { id: 'getRequestToPayStatus', product: 'collection', label: 'get request-to-pay status (collection)', section: '§4.2 #2, §4.6' },
  deposit: { id: 'deposit', product: 'disbursement', label: 'deposit (disbursement)', section: '§4.3 #10' },
  createApiKey: { id: 'createApiKey', product: 'collection', label: 'create API key (collection)', section: '§4.5 #15' },
  createAccessToken: { id: 'createAccessToken', product: 'collection', label: 'create access token (collection)', section: '§4.2 #1' },
  basicUserInfo: { id: 'basicUserInfo', product: 'collection', label: 'get basic user information (collection)', section: '§4.2 #5' },
  getBalance: { id: 'getBalance', product: 'collection', label: 'get account balance (collection)', section: '§4.2 #4' },
  createOAuthToken: { id: 'createOAuthToken', product: 'collection', label: 'create OAuth 2.0 token (collection)', section: '§4.3 #11' },
} satisfies Record<string, OperationRef>;

function response(operation: OperationRef, status: number, body?: unknown): ApiResponse {
  const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
  let json: unknown;
  try {
    json = text.trim() === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { operation, status, headers: json === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' }, json, text, durationMs: 3 };
}

/** Runs judge and returns the ConformanceFailure's message; fails the test when judge does not throw one. */
function failureOf(r: ApiResponse, expected: Expectation, redactor = new Redactor(), profile = SPEC): string {
  try {
    judge(r, expected, profile, redactor);
  } catch (error) {
    assert.ok(error instanceof ConformanceFailure, String(error));
    assert.equal(error.name, 'ConformanceFailure');
    return error.message;
  }
  assert.fail(`judge accepted HTTP ${r.status} ${r.text}`);
}

const STATUS_RECORD = { amount: '10', currency: 'EUR', externalId: 'ext-1', payer: { partyIdType: 'MSISDN', partyId: '46733123499' }, payerMessage: 'hi', payeeNote: 'note', status: 'PENDING' };

test('the expected status with a conforming body passes', () => {
  const redactor = new Redactor();
  judge(response(OPS.requestToPay, 202), { status: 202 }, SPEC, redactor);
  judge(response(OPS.getRequestToPayStatus, 200, STATUS_RECORD), { status: 200 }, SPEC, redactor);
  judge(response(OPS.getRequestToPayStatus, 200, { ...STATUS_RECORD, status: 'SUCCESSFUL', financialTransactionId: '123456' }), { status: [200, 202] }, SPEC, redactor);
  judge(response(OPS.createAccessToken, 200, { access_token: JWT, token_type: 'Bearer', expires_in: 3600 }), { status: 200 }, SPEC, redactor);
  judge(response(OPS.requestToPay, 409, { code: 'RESOURCE_ALREADY_EXIST', message: 'Duplicated reference id' }), { status: 409, code: 'RESOURCE_ALREADY_EXIST' }, SPEC, redactor);
});

test('a wrong status fails naming the operation, its section, the expected and received status and the body', () => {
  const message = failureOf(response(OPS.requestToPay, 500, { code: 'INTERNAL_PROCESSING_ERROR', message: 'boom' }), { status: 202, what: 'a valid request to pay is accepted' });
  assert.ok(message.startsWith('request to pay (collection) — §4.2 #2: a valid request to pay is accepted'), message);
  assert.ok(message.includes('expected: HTTP 202'), message);
  assert.ok(message.includes('received: HTTP 500 {"code":"INTERNAL_PROCESSING_ERROR","message":"boom"}'), message);
  assert.ok(message.includes('the status is 500, not 202'), message);
});

test('a wrong status among several names them all; an empty body is said to be empty', () => {
  const message = failureOf(response(OPS.requestToPay, 404, ''), { status: [202, 409] });
  assert.ok(message.includes('expected: HTTP 202 or 409'), message);
  assert.ok(message.includes('the status is 404, not 202 or 409'), message);
  assert.ok(message.includes('received: HTTP 404 (empty body)'), message);
  assert.ok(message.includes('the body is empty, but the spec gives error-set-a.schema.json for 404'), message);
});

test('a 409 with the wrong code names both codes', () => {
  const message = failureOf(response(OPS.requestToPay, 409, { code: 'NOT_ALLOWED', message: 'no' }), { status: 409, code: 'RESOURCE_ALREADY_EXIST' });
  assert.ok(message.includes('expected: HTTP 409 with RESOURCE_ALREADY_EXIST'), message);
  assert.ok(message.includes('the error code is "NOT_ALLOWED", not "RESOURCE_ALREADY_EXIST"'), message);
  const missing = failureOf(response(OPS.requestToPay, 409, { message: 'no code' }), { status: 409, code: 'RESOURCE_ALREADY_EXIST' });
  assert.ok(missing.includes('the error code is missing, not "RESOURCE_ALREADY_EXIST"'), missing);
});

test('an error code outside the operation\'s code set fails with the ajv pointer: TRANSACTION_CANCELED. on a deposit (set B)', () => {
  const message = failureOf(response(OPS.deposit, 500, { code: 'TRANSACTION_CANCELED.', message: 'cancelled' }), { status: 500 });
  assert.ok(message.includes('the body does not match error-set-b.schema.json'), message);
  assert.ok(message.includes('/code must be one of'), message);
  assert.ok(message.includes('"TRANSACTION_CANCELED"'), message);
  // The same body is in set A, so request to pay takes it.
  judge(response(OPS.requestToPay, 500, { code: 'TRANSACTION_CANCELED.', message: 'cancelled' }), { status: 500 }, SPEC, new Redactor());
  // And set B takes its own spelling.
  judge(response(OPS.deposit, 500, { code: 'TRANSACTION_CANCELED', message: 'cancelled' }), { status: 500 }, SPEC, new Redactor());
});

test('401 accepts the gateway {statusCode, message} and the OAuth {error}, and nothing else', () => {
  const redactor = new Redactor();
  judge(response(OPS.requestToPay, 401, { statusCode: 401, message: 'Access denied due to invalid subscription key.' }), { status: 401 }, SPEC, redactor);
  judge(response(OPS.requestToPay, 401, { error: 'invalid_token' }), { status: 401, code: 'invalid_token' }, SPEC, redactor);
  judge(response(OPS.deposit, 401, { error: 'login_failed', error_description: 'bad' }), { status: 401 }, SPEC, redactor);
  const codeMessage = failureOf(response(OPS.requestToPay, 401, { code: 'NOT_ALLOWED', message: 'x' }), { status: 401 });
  assert.ok(codeMessage.includes('gateway-error.schema.json'), codeMessage);
  assert.ok(codeMessage.includes('oauth-error.schema.json'), codeMessage);
  const wrongError = failureOf(response(OPS.requestToPay, 401, { error: 'login_failed' }), { status: 401, code: 'invalid_token' });
  assert.ok(wrongError.includes('the error code is "login_failed", not "invalid_token"'), wrongError);
});

test('400 bodies are not checked: empty, text or any JSON', () => {
  const redactor = new Redactor();
  judge(response(OPS.requestToPay, 400), { status: 400 }, SPEC, redactor);
  judge(response(OPS.requestToPay, 400, 'Bad Request'), { status: 400 }, SPEC, redactor);
  judge(response(OPS.requestToPay, 400, { statusCode: 400, error: 'Bad Request', message: 'amount is invalid', extra: true }), { status: 400 }, SPEC, redactor);
});

test('a 200 status record with an extra field fails naming the property', () => {
  const message = failureOf(response(OPS.getRequestToPayStatus, 200, { ...STATUS_RECORD, surprise: 1 }), { status: 200 });
  assert.ok(message.includes('the body does not match request-to-pay-status.schema.json'), message);
  assert.ok(message.includes('/ has an unknown property "surprise"'), message);
});

test('a 200 status record that is not JSON fails saying so', () => {
  const message = failureOf(response(OPS.getRequestToPayStatus, 200, '<html>ok</html>'), { status: 200 });
  assert.ok(message.includes('the body is not JSON (Content-Type missing), but the spec gives request-to-pay-status.schema.json for 200'), message);
});

test('the profile decides the schema of basic user information', () => {
  const observed = { sub: '0', name: 'Sand Box', given_name: 'Sand', family_name: 'Box', birthdate: '1976-08-13', locale: 'sv_SE', gender: 'MALE', updated_at: 1717000000 };
  judge(response(OPS.basicUserInfo, 200, observed), { status: 200 }, MTN, new Redactor());
  const message = failureOf(response(OPS.basicUserInfo, 200, observed), { status: 200 }, new Redactor(), SPEC);
  assert.ok(message.includes('basic-user-info.schema.json'), message);
});

test('secrets in bodies are redacted in the message: JWTs and secrets the redactor knows', () => {
  const redactor = new Redactor();
  redactor.add('subscription-key-0001');
  const body = { access_token: JWT, token_type: 'Bearer', expires_in: 3600, echo: 'subscription-key-0001' };
  const message = failureOf(response(OPS.createAccessToken, 200, body), { status: 200 }, redactor);
  assert.equal(message.includes(JWT), false, message);
  assert.equal(message.includes('subscription-key-0001'), false, message);
  assert.ok(message.includes(REDACTED), message);
  assert.ok(message.includes('has an unknown property "echo"'), message);
});

test('an apiKey field in a body is redacted in the message even before the redactor knows the key', () => {
  const apiKey = 'f1db798c98df4bcf83b538175893bbf0';
  const message = failureOf(response(OPS.createApiKey, 200, { apiKey }), { status: 201, what: 'creating the API key of an API user for the run' });
  assert.ok(message.includes('the status is 200, not 201'), message);
  assert.equal(message.includes(apiKey), false, message);
});

test('judgeRecord checks a value against a schema and names the section', () => {
  const redactor = new Redactor();
  judgeRecord('the callback of a request to pay', '§6', 'request-to-pay-status', STATUS_RECORD, redactor);
  assert.throws(() => judgeRecord('the callback of a request to pay', '§6', 'request-to-pay-status', { ...STATUS_RECORD, status: 'DONE', token: JWT }, redactor), (error: unknown) => {
    assert.ok(error instanceof ConformanceFailure);
    assert.ok(error.message.startsWith('the callback of a request to pay — §6'), error.message);
    assert.ok(error.message.includes('expected: a body matching request-to-pay-status.schema.json'), error.message);
    assert.ok(error.message.includes('/status'), error.message);
    assert.equal(error.message.includes(JWT), false, error.message);
    return true;
  });
});

test('a 503 or SERVICE_UNAVAILABLE where something else was expected is the target being unavailable, not a departure', () => {
  const operation = { id: 'deposit' as const, product: 'disbursement' as const, label: 'deposit (disbursement)', section: '§4.3 #10' };
  for (const [status, body] of [[503, ''], [502, '<html>bad gateway</html>'], [500, '{"code":"SERVICE_UNAVAILABLE","message":"later"}']] as const) {
    const response = { operation, status, headers: {}, json: body.startsWith('{') ? JSON.parse(body) : undefined, text: body, durationMs: 1 };
    assert.throws(() => judge(response, { status: 202 }, behaviourOf('spec'), new Redactor()), (error: Error) => error instanceof TargetUnavailableAnswer && /could not be tested/.test(error.message));
  }
});

test('a JSON record labelled with another media type departs from §4.1', () => {
  const operation = { id: 'getBalance' as const, product: 'remittance' as const, label: 'get account balance (remittance)', section: '§4.4 #13' };
  const labelled = (contentType?: string) => ({ ...response(operation, 200, { availableBalance: '10', currency: 'EUR' }), headers: (contentType ? { 'content-type': contentType } : {}) as Record<string, string> });
  assert.doesNotThrow(() => judge(labelled('application/json'), { status: 200 }, SPEC, new Redactor()));
  assert.match(failureOf(labelled('text/plain; charset=utf-8'), { status: 200 }), /Content-Type is "text\/plain; charset=utf-8", not application\/json \(§4.1\)/);
  assert.match(failureOf(labelled(), { status: 200 }), /Content-Type is missing/);
});

const HTML = '<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body>Sign in</body></html>';

test('a 2xx with an HTML page where the spec gives a JSON record is a departure, named "not JSON" with its Content-Type', () => {
  const page = { ...response(OPS.createApiKey, 201, HTML), headers: { 'content-type': 'text/html; charset=utf-8' } };
  const message = failureOf(page, { status: 201 });
  assert.ok(message.includes(`received: HTTP 201 (an HTML page titled "Welcome", ${HTML.length} characters)`), message);
  assert.ok(message.includes('the body is not JSON (Content-Type text/html; charset=utf-8), but the spec gives api-key.schema.json for 201'), message);
});

test('a 2xx labelled application/json whose body does not parse is a departure that says so', () => {
  const cut = { ...response(OPS.getRequestToPayStatus, 200, '{"amount":"10","curr'), headers: { 'content-type': 'application/json' } };
  const message = failureOf(cut, { status: 200 });
  assert.match(message, /the body is not valid JSON although its Content-Type is application\/json \(.+\), but the spec gives request-to-pay-status\.schema\.json for 200/);
});

test('a gateway\'s HTML error page with 502, 503 or 504 is not tested, never a departure, and named by its title', () => {
  for (const status of [502, 503, 504]) {
    const page = { ...response(OPS.requestToPay, status, `<html><head><title>${status} Gateway Error</title></head></html>`), headers: { 'content-type': 'text/html' } };
    assert.throws(() => judge(page, { status: 202 }, SPEC, new Redactor()), (error: Error) => error instanceof TargetUnavailableAnswer
      && error.message.includes(`the target answered HTTP ${status} (an HTML page titled "${status} Gateway Error"`) && /could not be tested/.test(error.message));
  }
});

/** Runs judgeAnswer and returns its failure, which must be a fatal ConformanceFailure; undefined when it accepts. */
function answerFailure(r: ApiResponse, redactor: Redactor): (ConformanceFailure & { fatal?: boolean }) | undefined {
  try {
    judgeAnswer(r, redactor);
  } catch (error) {
    assert.ok(error instanceof ConformanceFailure, String(error));
    return error;
  }
  return undefined;
}

test('a body that exceeded MOMO_MAX_RESPONSE_BYTES fails at once, in plain words, naming the operation and its section', () => {
  const failure = answerFailure({ ...response(OPS.getBalance, 200, 'x'.repeat(5000)), exceededLimit: 1024 * 1024 }, new Redactor());
  assert.ok(failure);
  assert.equal(failure.fatal, true, 'a second look would see the same answer: the wait ends');
  assert.match(failure.message, /^get account balance \(collection\) — §4\.2 #4: an answer the partner can read whole\n  expected: a body of at most 1 MiB \(MOMO_MAX_RESPONSE_BYTES\)\n  received: HTTP 200 x{1500}… \(5000 characters\)\n  - the body exceeded 1 MiB: the harness read that much of it and no further$/);
});

test('an answer that gives out a secret outside the operation that issues it fails (OWASP API3), naming the kind and encoding, never the secret', () => {
  const redactor = new Redactor();
  const key = 'sandbox-collection-key';
  const userId = '7b0e1f52-3a9c-4d8e-9f10-2c3b4a5d6e7f';
  const apiKey = 'f1db798c98df4bcf83b538175893bbf0';
  redactor.add(key, 'subscription key');
  redactor.addBasicCredential(userId, apiKey);
  const basic = Buffer.from(`${userId}:${apiKey}`).toString('base64');
  const shifted = Buffer.from(`x${basic}`).toString('base64');
  const body = { availableBalance: '10', currency: 'EUR', debug: Buffer.from(key).toString('hex'), trace: shifted };
  const failure = answerFailure({ ...response(OPS.getBalance, 200, body), headers: { 'content-type': 'application/json', 'x-echo': Buffer.from(apiKey).toString('hex') } }, redactor);
  assert.ok(failure);
  assert.equal(failure.fatal, true);
  const message = failure.message;
  assert.ok(message.startsWith('get account balance (collection) — §4.2 #4: an answer gives out no secret outside the operation that issues it (OWASP API3:2023, excessive data exposure)'), message);
  assert.ok(message.includes('a subscription key (hex-encoded)'), message);
  assert.ok(message.includes('a Basic credential (base64-encoded)'), message);
  assert.ok(message.includes('an API key (hex-encoded)'), message);
  assert.ok(message.includes('which get account balance (collection) does not issue'), message);
  assert.deepEqual(secretsIn('message', message, [key, apiKey, basic]), [], message);
});

test('the operations that issue a secret may give it out: create API key its key, create access token its token, the OAuth token operation its tokens', () => {
  const redactor = new Redactor();
  const apiKey = 'f1db798c98df4bcf83b538175893bbf0';
  redactor.addBasicCredential('7b0e1f52-3a9c-4d8e-9f10-2c3b4a5d6e7f', apiKey);
  redactor.add(JWT, 'access token');
  redactor.add('consent-token-0123456789', 'consent token');
  redactor.add('refresh-token-0123456789', 'refresh token');
  assert.equal(answerFailure(response(OPS.createApiKey, 201, { apiKey }), redactor), undefined);
  assert.equal(answerFailure(response(OPS.createAccessToken, 200, { access_token: JWT, token_type: 'Bearer', expires_in: 3600 }), redactor), undefined);
  assert.equal(answerFailure(response(OPS.createOAuthToken, 200, { access_token: 'consent-token-0123456789', refresh_token: 'refresh-token-0123456789', token_type: 'Bearer', expires_in: 3600 }), redactor), undefined);
  // The same secrets from another operation are a finding.
  assert.match(answerFailure(response(OPS.createOAuthToken, 200, { access_token: JWT }), redactor)?.message ?? '', /an access token \(in the clear\)/);
  assert.match(answerFailure(response(OPS.getBalance, 200, { refresh: 'refresh-token-0123456789' }), redactor)?.message ?? '', /a refresh token \(in the clear\)/);
  assert.equal(answerFailure(response(OPS.getBalance, 200, { availableBalance: '1', currency: 'EUR' }), redactor), undefined);
});

test('target text in a failure cannot change a report: ]]>, control characters, lone surrogates and U+FFFE become \\u escapes, in the body and in schema errors', () => {
  const hostile = 'a]]>b]]><testcase name="forged"/>\u0001\u0085\ud800\ufffe</script><!--';
  const message = failureOf(response(OPS.getRequestToPayStatus, 200, { ...STATUS_RECORD, [hostile]: hostile }), { status: 200 });
  assert.equal(message.includes(']]>'), false, message);
  assert.doesNotMatch(message, /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFE\uFFFF]|[\uD800-\uDFFF]/);
  assert.ok(message.includes('a]]\\u003eb]]\\u003e<testcase'), message);
  // Whoever builds the failure, its message is safe: a step that quotes a value by hand, too.
  assert.equal(new ConformanceFailure(`gender is "${hostile}"`).message, 'gender is "a]]\\u003eb]]\\u003e<testcase name="forged"/>\\u0001\\u0085\\ud800\\ufffe</script><!--"');
});
