import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiResponse, OperationRef } from '../../harness/client/momo-client.ts';
import {
  ConformanceFailure,
  PremiseNotHeld,
  TargetUnavailableAnswer,
  judge,
  judgeAnswer,
  type Expectation,
  type JudgingContext,
} from '../../harness/judging/judge.ts';
import type { Warning } from '../../harness/checks/index.ts';
import type { RetriedCall } from '../../harness/client/careful.ts';
import { recordFindings } from '../../harness/checks/answers.ts';
import { PREMISES, concerns, premiseSource, type PremiseName } from '../../harness/checks/premises.ts';
import { REFUSALS } from '../../harness/checks/refusals.ts';
import { secretsIn } from '../../harness/secrets/leak-scan.ts';
import { behaviourOf, type ProfileName } from '../../core/profiles.ts';
import { REDACTED, Redactor } from '../../core/secrets/redact.ts';

/** A judging context of a run: its profile and strictness, a redactor, and the warnings it kept. */
function contextOf(
  profile: ProfileName = 'spec',
  { strict = false, redactor = new Redactor() }: { strict?: boolean; redactor?: Redactor } = {},
): JudgingContext & { warnings: Warning[] } {
  const warnings: Warning[] = [];
  return {
    run: { profile, strict },
    behaviour: behaviourOf(profile),
    redactor,
    warn: (w) => warnings.push(w),
    evaluated: () => undefined,
    warnings,
  };
}

const SPEC = contextOf('spec');
const MTN = contextOf('mtn-sandbox');
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4eXoifQ.c2lnbmF0dXJlLXZhbHVl';

const OPS = {
  requestToPay: { id: 'requestToPay', product: 'collection', label: 'request to pay (collection)', section: '§4.2 #2' },
  getRequestToPayStatus: {
    id: 'getRequestToPayStatus',
    product: 'collection',
    label: 'get request-to-pay status (collection)',
    section: '§4.2 #2, §4.6',
  },
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
  return {
    operation,
    status,
    headers: json === undefined ? {} : { 'content-type': 'application/json; charset=utf-8' },
    json,
    text,
    durationMs: 3,
  };
}

/** Runs judge and returns the ConformanceFailure's message; fails the test when judge does not throw one. */
function failureOf(r: ApiResponse, expected: Expectation, context: JudgingContext = contextOf()): string {
  try {
    judge(r, expected, context);
  } catch (error) {
    assert.ok(error instanceof ConformanceFailure, String(error));
    assert.equal(error.name, 'ConformanceFailure');
    return error.message;
  }
  assert.fail(`judge accepted HTTP ${r.status} ${r.text}`);
}

const STATUS_RECORD = {
  amount: '10',
  currency: 'EUR',
  externalId: 'ext-1',
  payer: { partyIdType: 'MSISDN', partyId: '46733123499' },
  payerMessage: 'hi',
  payeeNote: 'note',
  status: 'PENDING',
};
const E = (status: Expectation['status'], more: Partial<Expectation> = {}): Expectation => ({ status, what: 'the case', ...more });

test('the expected status with a conforming body passes', () => {
  judge(response(OPS.requestToPay, 202), E(202), SPEC);
  judge(response(OPS.getRequestToPayStatus, 200, STATUS_RECORD), E(200), SPEC);
  judge(
    response(OPS.getRequestToPayStatus, 200, { ...STATUS_RECORD, status: 'SUCCESSFUL', financialTransactionId: '123456' }),
    E([200, 202]),
    SPEC,
  );
  judge(response(OPS.createAccessToken, 200, { access_token: JWT, token_type: 'Bearer', expires_in: 3600 }), E(200), SPEC);
  judge(
    response(OPS.requestToPay, 409, { code: 'RESOURCE_ALREADY_EXIST', message: 'Duplicated reference id' }),
    E(409, { code: 'RESOURCE_ALREADY_EXIST' }),
    SPEC,
  );
});

test('a wrong status fails naming the operation, its section, the check, its source, the field and what came back', () => {
  const message = failureOf(
    response(OPS.requestToPay, 500, { code: 'INTERNAL_PROCESSING_ERROR', message: 'boom' }),
    E(202, { what: 'a valid request to pay is accepted' }),
  );
  assert.ok(message.startsWith('request to pay (collection) — §4.2 #2: a valid request to pay is accepted'), message);
  assert.ok(message.includes('✘ status-code (definite: §4.2 #2): status: expected 202, got 500'), message);
  assert.ok(message.includes('received: HTTP 500 {"code":"INTERNAL_PROCESSING_ERROR","message":"boom"}'), message);
});

test('the source of a status comes from the catalogue unless the case gives its own', () => {
  // §4.6 does not show how an unknown id reads: the live sandbox's 404 is an observation.
  const unknown = response(OPS.getRequestToPayStatus, 200, STATUS_RECORD);
  const context = contextOf('spec');
  judge(unknown, E(404, { code: 'RESOURCE_NOT_FOUND' }), context);
  assert.equal(context.warnings.length, 1);
  assert.equal(context.warnings[0]!.check, 'status-code');
  assert.equal(context.warnings[0]!.source.kind, 'observed');
  assert.match(
    failureOf(unknown, E(404, { code: 'RESOURCE_NOT_FOUND' }), contextOf('mtn-sandbox')),
    /✘ status-code \(observed: real-api-notes, get request-to-pay status: .*; fails in the mtn-sandbox profile\): status: expected 404, got 200/,
  );
  assert.match(failureOf(unknown, E(404, { source: { kind: 'spec', clause: '§7 rule 2' } })), /status-code \(definite: §7 rule 2\)/);
});

test('a wrong status among several names them all; an empty body is said to be empty', () => {
  const message = failureOf(response(OPS.requestToPay, 404, ''), E([202, 409]));
  assert.ok(message.includes('status: expected 202 or 409, got 404'), message);
  assert.ok(message.includes('received: HTTP 404 (empty body)'), message);
  assert.ok(
    message.includes(
      'error-body (definite: §4: all payloads are JSON except where marked form-encoded): body: expected JSON: error-set-a.schema.json for 404, got an empty body',
    ),
    message,
  );
});

test('a 409 with the wrong code names both codes, and a missing code says so', () => {
  const message = failureOf(
    response(OPS.requestToPay, 409, { code: 'NOT_ALLOWED', message: 'no' }),
    E(409, { code: 'RESOURCE_ALREADY_EXIST' }),
  );
  assert.ok(message.includes('✘ error-code (definite: §4.2 #2): /code: expected "RESOURCE_ALREADY_EXIST", got "NOT_ALLOWED"'), message);
  const missing = failureOf(response(OPS.requestToPay, 409, { message: 'no code' }), E(409, { code: 'RESOURCE_ALREADY_EXIST' }));
  assert.ok(missing.includes('/code: expected "RESOURCE_ALREADY_EXIST", got none'), missing);
});

test("a code the spec does not name for the case weighs as a reading: a delivery notification's 409 TRANSACTION_NOT_COMPLETED", () => {
  const notification = {
    id: 'deliveryNotification' as const,
    product: 'collection' as const,
    label: 'request-to-pay delivery notification (collection)',
    section: '§4.2 #3',
  };
  const context = contextOf('spec');
  judge(
    response(notification, 409, { code: 'NOT_ALLOWED', message: 'not completed' }),
    E(409, { code: 'TRANSACTION_NOT_COMPLETED' }),
    context,
  );
  assert.deepEqual(
    context.warnings.map((w) => [w.check, w.source.kind, w.field]),
    [['error-code', 'reading', '/code']],
  );
  assert.match(
    failureOf(
      response(notification, 409, { code: 'NOT_ALLOWED', message: 'x' }),
      E(409, { code: 'TRANSACTION_NOT_COMPLETED' }),
      contextOf('spec', { strict: true }),
    ),
    /error-code \(reading: .*; a failure because the run is --strict\)/,
  );
});

test("an error code outside the operation's code set fails with its pointer: TRANSACTION_CANCELED. on a deposit (set B)", () => {
  const message = failureOf(response(OPS.deposit, 500, { code: 'TRANSACTION_CANCELED.', message: 'cancelled' }), E(500));
  assert.ok(
    message.includes('✘ error-body (definite: §2.14, §7: the error record {code, message} and its code set): /code: expected one of'),
    message,
  );
  assert.ok(message.includes('"RESOURCE_ALREADY_EXIST" (error-set-b.schema.json), got "TRANSACTION_CANCELED."'), message);
  judge(response(OPS.requestToPay, 500, { code: 'TRANSACTION_CANCELED.', message: 'cancelled' }), E(500), SPEC);
  judge(response(OPS.deposit, 500, { code: 'TRANSACTION_CANCELED', message: 'cancelled' }), E(500), SPEC);
});

test('401 accepts the OAuth {error} with any code and the gateway {statusCode, message}, and nothing else', () => {
  judge(response(OPS.requestToPay, 401, { statusCode: 401, message: 'Access denied due to invalid subscription key.' }), E(401), SPEC);
  judge(response(OPS.requestToPay, 401, { error: 'invalid_token' }), E(401, { code: 'invalid_token' }), SPEC);
  judge(response(OPS.deposit, 401, { error: 'login_failed', error_description: 'bad' }), E(401), SPEC);
  judge(response(OPS.deposit, 401, { error: 'Unauthorized Client!' }), E(401), SPEC);
  const codeMessage = failureOf(response(OPS.requestToPay, 401, { code: 'NOT_ALLOWED', message: 'x' }), E(401));
  assert.ok(codeMessage.includes('/error: expected the field (oauth-error.schema.json), got none'), codeMessage);
});

test('400 bodies are not checked: empty, text or any JSON', () => {
  judge(response(OPS.requestToPay, 400), E(400), SPEC);
  judge(response(OPS.requestToPay, 400, 'Bad Request'), E(400), SPEC);
  judge(
    response(OPS.requestToPay, 400, { statusCode: 400, error: 'Bad Request', message: 'amount is invalid', extra: true }),
    E(400),
    SPEC,
  );
});

test('records are open: an extra field fails in no profile, and under --strict it is a warning naming the field', () => {
  for (const profile of ['spec', 'mtn-sandbox'] as const) {
    const context = contextOf(profile);
    judge(
      response(OPS.getRequestToPayStatus, 200, { ...STATUS_RECORD, surprise: 1, payer: { ...STATUS_RECORD.payer, nickname: 'x' } }),
      E(200),
      context,
    );
    judge(
      response(OPS.createAccessToken, 200, { access_token: JWT, token_type: 'Bearer', expires_in: 3600, ext_expires_in: 3600 }),
      E(200),
      context,
    );
    assert.deepEqual(context.warnings, []);
  }
  const strict = contextOf('spec', { strict: true });
  judge(
    response(OPS.getRequestToPayStatus, 200, { ...STATUS_RECORD, surprise: 1, payer: { ...STATUS_RECORD.payer, nickname: 'x' } }),
    E(200),
    strict,
  );
  assert.deepEqual(strict.warnings.map((w) => [w.check, w.field]).sort(), [
    ['unknown-field', '/payer/nickname'],
    ['unknown-field', '/surprise'],
  ]);
  assert.match(strict.warnings[0]!.weight, /a warning in every run/);
});

test('a status record the spec does not show departs from the live record only as an observation: a warning in the spec profile, a failure on mtn-sandbox', () => {
  const numeric = { ...STATUS_RECORD, amount: 10 };
  const spec = contextOf('spec');
  judge(response(OPS.getRequestToPayStatus, 200, numeric), E(200), spec);
  assert.deepEqual(
    spec.warnings.map((w) => [w.check, w.field, w.source.kind]),
    [['body-schema', '/amount', 'observed']],
  );
  assert.match(
    failureOf(response(OPS.getRequestToPayStatus, 200, numeric), E(200), contextOf('mtn-sandbox')),
    /✘ body-schema \(observed: .*\): \/amount: expected a string \(request-to-pay-status\.schema\.json\), got 10/,
  );
  // Not even its status field is shown (§2.5, §4.6): a record without one departs from the live record only.
  const { status: _, ...statusless } = STATUS_RECORD;
  const warned = contextOf('spec');
  judge(response(OPS.getRequestToPayStatus, 200, statusless), E(200), warned);
  assert.ok(
    warned.warnings.some((w) => w.check === 'body-schema' && w.field === '/status' && w.source.kind === 'observed'),
    JSON.stringify(warned.warnings),
  );
  assert.ok(
    warned.warnings.every((w) => w.source.kind === 'observed'),
    JSON.stringify(warned.warnings),
  );
  assert.match(
    failureOf(response(OPS.getRequestToPayStatus, 200, statusless), E(200), contextOf('mtn-sandbox')),
    /✘ body-schema \(observed: .*\): \/status: expected the field/,
  );
});

test('a strict reading in a record is a warning, and a failure only under --strict', () => {
  const { amount: _, ...amountless } = STATUS_RECORD;
  const spec = contextOf('spec');
  judge(response(OPS.getRequestToPayStatus, 200, amountless), E(200), spec);
  assert.deepEqual(
    spec.warnings.map((w) => [w.field, w.source.kind]),
    [['/amount', 'reading']],
  );
  assert.match(
    failureOf(response(OPS.getRequestToPayStatus, 200, amountless), E(200), contextOf('spec', { strict: true })),
    /requiredFields/,
  );
});

test('the account-holder status is true or false as a bare boolean or {"result": …} in the spec profile; only {"result": …} on mtn-sandbox', () => {
  const holder = {
    id: 'accountHolderActive' as const,
    product: 'collection' as const,
    label: 'validate account holder status (collection)',
    section: '§4.2 #8',
  };
  judge(response(holder, 200, true), E(200), SPEC);
  judge(response(holder, 200, { result: false }), E(200), SPEC);
  judge(response(holder, 200, { result: true }), E(200), MTN);
  assert.match(
    failureOf(response(holder, 200, true), E(200), contextOf('mtn-sandbox')),
    /body-schema \(observed: real-api-notes, other operations: account holder active answers/,
  );
  // The format of the body is not shown (§4.2 #8): one the suite cannot read is a warning in the spec profile.
  const unreadable = contextOf('spec');
  judge(response(holder, 200, '"yes"'), E(200), unreadable);
  assert.ok(unreadable.warnings.length > 0);
  assert.ok(
    unreadable.warnings.every((w) => w.check === 'body-schema' && w.source.kind === 'reading'),
    JSON.stringify(unreadable.warnings),
  );
});

test('a 200 status record that is not JSON fails saying so', () => {
  const message = failureOf(response(OPS.getRequestToPayStatus, 200, '<html>ok</html>'), E(200));
  assert.ok(
    message.includes('body: expected JSON: request-to-pay-status.schema.json for 200, got a body that is not JSON (Content-Type missing)'),
    message,
  );
});

test('the profile decides the schema of basic user information', () => {
  const observed = {
    sub: '0',
    name: 'Sand Box',
    given_name: 'Sand',
    family_name: 'Box',
    birthdate: '1976-08-13',
    locale: 'sv_SE',
    gender: 'MALE',
    updated_at: 1717000000,
  };
  judge(response(OPS.basicUserInfo, 200, observed), E(200), MTN);
  const message = failureOf(response(OPS.basicUserInfo, 200, observed), E(200));
  assert.ok(message.includes('/status: expected the field (basic-user-info.schema.json), got none'), message);
});

test('secrets in bodies are redacted in the message: JWTs and secrets the redactor knows', () => {
  const redactor = new Redactor();
  redactor.add('subscription-key-0001');
  const body = { access_token: JWT, token_type: 5, expires_in: 3600, echo: 'subscription-key-0001' };
  const message = failureOf(response(OPS.createAccessToken, 200, body), E(200), contextOf('spec', { redactor }));
  assert.equal(message.includes(JWT), false, message);
  assert.equal(message.includes('subscription-key-0001'), false, message);
  assert.ok(message.includes(REDACTED), message);
  assert.ok(message.includes('/token_type: expected a string'), message);
});

test('an apiKey field in a body is redacted in the message even before the redactor knows the key', () => {
  const apiKey = 'f1db798c98df4bcf83b538175893bbf0';
  const message = failureOf(
    response(OPS.createApiKey, 200, { apiKey }),
    E(201, { what: 'creating the API key of an API user for the run' }),
  );
  assert.ok(message.includes('status: expected 201, got 200'), message);
  assert.equal(message.includes(apiKey), false, message);
});

test('recordFindings holds a value to a schema, each finding with the source of what it breaks', () => {
  assert.deepEqual(recordFindings('request-to-pay-status', STATUS_RECORD, SPEC.run), []);
  const findings = recordFindings('request-to-pay-status', { ...STATUS_RECORD, status: 'DONE' }, SPEC.run);
  assert.deepEqual(
    findings.map((f) => [f.check, f.field, f.source.kind]),
    [['body-schema', '/status', 'observed']],
  );
});

test('a 503 or SERVICE_UNAVAILABLE where something else was expected is the target being unavailable, not a departure', () => {
  const operation = { id: 'deposit' as const, product: 'disbursement' as const, label: 'deposit (disbursement)', section: '§4.3 #10' };
  for (const [status, body] of [
    [503, ''],
    [502, '<html>bad gateway</html>'],
    [500, '{"code":"SERVICE_UNAVAILABLE","message":"later"}'],
  ] as const) {
    const r = { operation, status, headers: {}, json: body.startsWith('{') ? JSON.parse(body) : undefined, text: body, durationMs: 1 };
    assert.throws(
      () => judge(r, E(202), SPEC),
      (error: Error) => error instanceof TargetUnavailableAnswer && /could not be tested/.test(error.message),
    );
  }
});

test('a call that ran out of attempts in changing weather could not be tested; one that met the same 500 each time is judged', () => {
  const ipe = { code: 'INTERNAL_PROCESSING_ERROR', message: 'x' };
  const gaveUp = (attempts: RetriedCall['attempts']): ApiResponse => ({
    ...response(OPS.getBalance, 500, ipe),
    retried: { operation: 'getBalance', product: 'collection', label: OPS.getBalance.label, attempts, outcome: 'gave-up' },
  });
  const changing = gaveUp([{ error: 'connection reset' }, { status: 503 }, { status: 500, code: 'INTERNAL_PROCESSING_ERROR' }]);
  assert.throws(
    () => judge(changing, E(200), MTN),
    (error: Error) =>
      error instanceof TargetUnavailableAnswer &&
      /3 attempts \(no answer \(connection reset\), 503, 500 INTERNAL_PROCESSING_ERROR\)/.test(error.message),
  );
  const steady = gaveUp(Array.from({ length: 4 }, () => ({ status: 500, code: 'INTERNAL_PROCESSING_ERROR' })));
  assert.throws(() => judge(steady, E(200), MTN), ConformanceFailure);
  // Where the 500 is what the scenario expects, the weather took nothing from it; where a 500 of another code is, it did.
  assert.doesNotThrow(() => judge(changing, E([500]), MTN));
  assert.throws(
    () => judge(changing, E([500], { code: 'NOT_ALLOWED_TARGET_ENVIRONMENT' }), MTN),
    (error: Error) => error instanceof TargetUnavailableAnswer,
  );
  assert.throws(() => judge(steady, E([500], { code: 'NOT_ALLOWED_TARGET_ENVIRONMENT' }), MTN), ConformanceFailure);
});

test('a JSON record labelled with another media type departs from §4.1', () => {
  const operation = {
    id: 'getBalance' as const,
    product: 'remittance' as const,
    label: 'get account balance (remittance)',
    section: '§4.4 #13',
  };
  const labelled = (contentType?: string) => ({
    ...response(operation, 200, { availableBalance: '10', currency: 'EUR' }),
    headers: (contentType ? { 'content-type': contentType } : {}) as Record<string, string>,
  });
  assert.doesNotThrow(() => judge(labelled('application/json'), E(200), SPEC));
  assert.doesNotThrow(() => judge(labelled('application/json;charset=UTF-8'), E(200), SPEC));
  assert.doesNotThrow(() => judge(labelled('application/vnd.momo+json'), E(200), SPEC));
  assert.match(
    failureOf(labelled('text/plain; charset=utf-8'), E(200)),
    /✘ media-type \(definite: §4: all payloads are JSON.*\): header Content-Type: expected application\/json, got "text\/plain; charset=utf-8"/,
  );
  // Without a Content-Type the body is still JSON: RFC 9110 §8.3 makes the header a SHOULD, so a warning.
  const missing = contextOf('spec');
  judge(labelled(), E(200), missing);
  assert.deepEqual(
    missing.warnings.map((w) => [w.check, w.field, w.received, w.source.kind]),
    [['media-type', 'header Content-Type', 'none', 'reading']],
  );
});

const HTML = '<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body>Sign in</body></html>';

test('a 2xx with an HTML page where the spec gives a JSON record is a departure, named "not JSON" with its Content-Type', () => {
  const page = { ...response(OPS.createApiKey, 201, HTML), headers: { 'content-type': 'text/html; charset=utf-8' } };
  const message = failureOf(page, E(201));
  assert.ok(message.includes(`received: HTTP 201 (an HTML page titled "Welcome", ${HTML.length} characters)`), message);
  assert.ok(
    message.includes(
      'body: expected JSON: api-key.schema.json for 201, got a body that is not JSON (Content-Type text/html; charset=utf-8)',
    ),
    message,
  );
});

test('a 2xx labelled application/json whose body does not parse is a departure that says so', () => {
  const cut = { ...response(OPS.getRequestToPayStatus, 200, '{"amount":"10","curr'), headers: { 'content-type': 'application/json' } };
  assert.match(failureOf(cut, E(200)), /got a body that is not valid JSON although its Content-Type is application\/json \(.+\)/);
});

test("a gateway's HTML error page with 502, 503 or 504 is not tested, never a departure, and named by its title", () => {
  for (const status of [502, 503, 504]) {
    const page = {
      ...response(OPS.requestToPay, status, `<html><head><title>${status} Gateway Error</title></head></html>`),
      headers: { 'content-type': 'text/html' },
    };
    assert.throws(
      () => judge(page, E(202), SPEC),
      (error: Error) =>
        error instanceof TargetUnavailableAnswer &&
        error.message.includes(`the target answered HTTP ${status} (an HTML page titled "${status} Gateway Error"`) &&
        /could not be tested/.test(error.message),
    );
  }
});

/** Runs judgeAnswer and returns its failure, which must be a fatal ConformanceFailure; undefined when it accepts. */
function answerFailure(r: ApiResponse, redactor: Redactor): (ConformanceFailure & { fatal?: boolean }) | undefined {
  try {
    judgeAnswer(r, contextOf('spec', { redactor }));
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
  assert.match(
    failure.message,
    /^get account balance \(collection\) — §4\.2 #4: an answer the partner can read whole, giving out no secret\n {2}✘ answer-bounded \(definite: .*\): body: expected at most 1 MiB \(MOMO_MAX_RESPONSE_BYTES\), got more: the harness read 1 MiB of it and no further\n {2}received: HTTP 200 x{1500}… \(5000 characters\)/,
  );
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
  const failure = answerFailure(
    {
      ...response(OPS.getBalance, 200, body),
      headers: { 'content-type': 'application/json', 'x-echo': Buffer.from(apiKey).toString('hex') },
    },
    redactor,
  );
  assert.ok(failure);
  assert.equal(failure.fatal, true);
  const message = failure.message;
  assert.ok(message.includes('✘ secret-not-disclosed (definite: §5'), message);
  assert.ok(message.includes('a subscription key (hex-encoded)'), message);
  assert.ok(message.includes('a Basic credential (base64-encoded)'), message);
  assert.ok(message.includes('an API key (hex-encoded)'), message);
  assert.ok(message.includes('get account balance (collection) issues none of them'), message);
  assert.deepEqual(secretsIn('message', message, [key, apiKey, basic]), [], message);
  assert.deepEqual(
    failure.findings.map((f) => f.check),
    ['secret-not-disclosed'],
  );
});

test('the operations that issue a secret may give it out: create API key its key, create access token its token, the OAuth token operation its tokens', () => {
  const redactor = new Redactor();
  const apiKey = 'f1db798c98df4bcf83b538175893bbf0';
  redactor.addBasicCredential('7b0e1f52-3a9c-4d8e-9f10-2c3b4a5d6e7f', apiKey);
  redactor.add(JWT, 'access token');
  redactor.add('consent-token-0123456789', 'consent token');
  redactor.add('refresh-token-0123456789', 'refresh token');
  assert.equal(answerFailure(response(OPS.createApiKey, 201, { apiKey }), redactor), undefined);
  assert.equal(
    answerFailure(response(OPS.createAccessToken, 200, { access_token: JWT, token_type: 'Bearer', expires_in: 3600 }), redactor),
    undefined,
  );
  assert.equal(
    answerFailure(
      response(OPS.createOAuthToken, 200, {
        access_token: 'consent-token-0123456789',
        refresh_token: 'refresh-token-0123456789',
        token_type: 'Bearer',
        expires_in: 3600,
      }),
      redactor,
    ),
    undefined,
  );
  assert.match(
    answerFailure(response(OPS.createOAuthToken, 200, { access_token: JWT }), redactor)?.message ?? '',
    /an access token \(in the clear\)/,
  );
  assert.match(
    answerFailure(response(OPS.getBalance, 200, { refresh: 'refresh-token-0123456789' }), redactor)?.message ?? '',
    /a refresh token \(in the clear\)/,
  );
  assert.equal(answerFailure(response(OPS.getBalance, 200, { availableBalance: '1', currency: 'EUR' }), redactor), undefined);
});

test('target text in a failure cannot change a report: ]]>, control characters, lone surrogates and U+FFFE become \\u escapes, in the body and in findings', () => {
  const hostile = 'a]]>b]]><testcase name="forged"/>\u0001\u0085\ud800\ufffe</script><!--';
  const message = failureOf(
    response(OPS.getRequestToPayStatus, 200, { ...STATUS_RECORD, status: hostile, [hostile]: hostile }),
    E(200),
    contextOf('mtn-sandbox'),
  );
  assert.equal(message.includes(']]>'), false, message);
  assert.doesNotMatch(message, /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFE\uFFFF]|[\uD800-\uDFFF]/);
  assert.ok(message.includes('a]]\\u003eb]]\\u003e<testcase'), message);
  // Whoever builds the failure, its message is safe: a step that quotes a value by hand, too.
  assert.equal(
    new ConformanceFailure(`gender is "${hostile}"`).message,
    'gender is "a]]\\u003eb]]\\u003e<testcase name="forged"/>\\u0001\\u0085\\ud800\\ufffe</script><!--"',
  );
});

describe('premises a finding rests on (harness/checks/premises.ts)', () => {
  const refund = { id: 'refund' as const, product: 'disbursement' as const, label: 'refund (disbursement)', section: '§4.3 #9' };
  const assuming = (context: JudgingContext, names: PremiseName[]): JudgingContext => ({
    ...context,
    assumed: (operation) =>
      names
        .filter((n) => concerns(PREMISES[n], operation))
        .map((name) => ({ name, ...PREMISES[name], source: premiseSource(PREMISES[name], context.run.profile) })),
  });

  test('a departure that rests on a premise weaker than a failure is not tested, naming the premise and its source', () => {
    const context = contextOf('spec');
    let caught: unknown;
    try {
      judge(
        response(refund, 400, { code: 'NOT_ALLOWED', message: 'no' }),
        E(202, { premises: ['refund-by-another-api-user'] }),
        assuming(context, ['refund-by-another-api-user']),
      );
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof PremiseNotHeld, String(caught));
    assert.equal(caught.premise, 'refund-by-another-api-user');
    assert.match(
      caught.message,
      /^Premise not held, so not tested: a disbursement API user may refund a request to pay that a collection API user made \(reading: /,
    );
    assert.match(caught.message, /status-code: status: expected 202, got 400/);
    // The departure is kept as a warning that says which premise it rests on.
    assert.equal(context.warnings.length, 1);
    assert.match(context.warnings[0]!.weight, /a premise of the scenario did not hold \(premise refund-by-another-api-user: /);
  });

  test('with --strict, or where the premise is definite, the same departure fails, naming the premise under it', () => {
    const message = failureOf(
      response(refund, 400, { code: 'NOT_ALLOWED', message: 'no' }),
      E(202, { premises: ['refund-by-another-api-user'] }),
      assuming(contextOf('spec', { strict: true }), ['refund-by-another-api-user']),
    );
    assert.match(message, /✘ status-code \(definite: .*; resting on the premise refund-by-another-api-user: .* \(reading: /);
  });

  test('a premise concerns only its operations, and never a check that holds of every answer: a secret given out fails whatever it rests on', () => {
    const context = assuming(contextOf('spec'), ['refund-by-another-api-user']);
    assert.match(
      failureOf(response(OPS.requestToPay, 400), E(202, { premises: ['refund-by-another-api-user'] }), context),
      /✘ status-code/,
    );
    // An answer that is no refusal of the premise's kind (a 500 INTERNAL_PROCESSING_ERROR) is the target's own departure.
    assert.match(
      failureOf(
        response(refund, 500, { code: 'INTERNAL_PROCESSING_ERROR', message: 'boom' }),
        E(202, { premises: ['refund-by-another-api-user'] }),
        context,
      ),
      /✘ status-code/,
    );
    // A case that does not name the premise does not rest on it, though the scenario assumes it: a duplicate accepted fails.
    assert.match(failureOf(response(refund, 202), E(409), context), /✘ status-code/);
    const secret = new Redactor();
    secret.add('sk-0123456789abcdef', 'subscription key');
    const leaking = assuming(contextOf('spec', { redactor: secret }), ['refund-by-another-api-user']);
    assert.throws(
      () => judgeAnswer(response(refund, 202, { leaked: 'sk-0123456789abcdef' }), leaking),
      (error: Error) => error instanceof ConformanceFailure && /secret-not-disclosed/.test(error.message),
    );
  });

  test('a finding that weighs as a warning on its own is a warning, not a premise not held', () => {
    const context = contextOf('spec');
    judge(
      response(refund, 202),
      E(400, { source: REFUSALS['text-bound'], premises: ['refund-by-another-api-user'] }),
      assuming(context, ['refund-by-another-api-user']),
    );
    assert.equal(context.warnings.length, 1);
    assert.doesNotMatch(context.warnings[0]!.weight, /premise/);
  });
});
