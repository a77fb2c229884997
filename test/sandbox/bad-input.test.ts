import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import type { LightMyRequestResponse } from 'fastify';
import type { Product } from '../../core/products.ts';
import {
  KEYS,
  assertSchema,
  basic,
  path,
  payer,
  rawPath,
  requestToPayBody,
  startSandbox,
  withSandbox,
  type Caller,
  type CallOptions,
  type TestSandbox,
} from '../support/sandbox.ts';
import { servedOperations, type ServedOperation } from '../support/sandbox.ts';
import { schemaDocuments, schemaId } from '../../core/validation/schemas.ts';

/**
 * Bad input of every kind: each gets a 4xx with a body that says what is wrong, no 5xx other than the
 * documented ones, no crash, and no state changed by a rejected request.
 */

const RTP = path('requestToPay');
const rtpStatus = (referenceId: string) => path('getRequestToPayStatus', undefined, { referenceId });
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

let sandbox: TestSandbox;
let caller: Caller;
/** A sandbox with the strict readings on (--strict): what they refuse, it refuses. */
let strictSandbox: TestSandbox;
let strictCaller: Caller;

before(async () => {
  sandbox = await startSandbox();
  caller = await sandbox.provision('collection');
  strictSandbox = await startSandbox({ strict: true });
  strictCaller = await strictSandbox.provision('collection');
});

after(async () => {
  await sandbox?.close();
  await strictSandbox?.close();
});

interface Snapshot {
  requestToPay: number;
  records: Record<string, number>;
}

async function snapshot(s: TestSandbox = sandbox): Promise<Snapshot> {
  const health = await s.call({ method: 'GET', url: '/health' });
  assert.equal(health.statusCode, 200, health.body);
  return {
    requestToPay: s.context.state.transactions.requesttopay.size,
    records: (health.json() as { records: Record<string, number> }).records,
  };
}

async function assertUnchanged(before: Snapshot, what: string, s: TestSandbox = sandbox): Promise<void> {
  assert.deepEqual(await snapshot(s), before, `a rejected request changed the state (${what})`);
}

/** A request rejected for its form: the status, the bad-request body, and a message naming each of `mentions`. */
function assertBadRequest(res: LightMyRequestResponse, status: number, mentions: string[], what = ''): void {
  assert.equal(res.statusCode, status, `${what}: ${res.body}`);
  assert.match(String(res.headers['content-type']), /^application\/json/, `${what}: content-type`);
  const body = res.json() as { statusCode: number; message: string };
  assertSchema('bad-request', body);
  assert.equal(body.statusCode, status, what);
  for (const m of mentions) assert.ok(body.message.includes(m), `${what}: the message should name ${JSON.stringify(m)}: ${body.message}`);
}

function postRtp(
  o: { payload?: unknown; headers?: Record<string, string | undefined>; id?: string } = {},
): Promise<LightMyRequestResponse> {
  return sandbox.call({
    method: 'POST',
    url: RTP,
    headers: { ...caller.headers, 'x-reference-id': o.id ?? randomUUID(), ...o.headers },
    payload: o.payload,
  });
}

/** Sends a request to pay that must be rejected, and checks the answer and that nothing was stored. */
async function rejectsRtp(
  o: { payload?: unknown; headers?: Record<string, string | undefined>; id?: string },
  status: number,
  mentions: string[],
  what: string,
): Promise<LightMyRequestResponse> {
  const before = await snapshot();
  const id = o.id ?? randomUUID();
  const res = await postRtp({ ...o, id });
  assertBadRequest(res, status, mentions, what);
  await assertUnchanged(before, what);
  if (UUID_V4.test(id)) {
    const status404 = await sandbox.call({ method: 'GET', url: rtpStatus(id), headers: caller.headers });
    assert.equal(status404.statusCode, 404, `${what}: the rejected request to pay must not be readable`);
  }
  return res;
}

/**
 * A request to pay that only a strict reading refuses: by default it is accepted and FAILS at once with
 * `reason` (or, with `reason` a number, is that business error at creation and stores nothing); under --strict
 * it is 400 naming each of `mentions`, and nothing is stored.
 */
async function refusedOnlyUnderStrict(payload: unknown, mentions: string[], reason: string | 500, what: string): Promise<void> {
  const id = randomUUID();
  const before = await snapshot();
  const res = await postRtp({ id, payload });
  if (typeof reason === 'number') {
    assert.equal(res.statusCode, reason, `${what}, by default: ${res.body}`);
    await assertUnchanged(before, what);
  } else {
    assert.equal(res.statusCode, 202, `${what} is accepted by default: ${res.body}`);
    const record = await readRtpAnyForm(id);
    assert.equal(record.status, 'FAILED', `${what}: ${JSON.stringify(record)}`);
    assert.equal(record.reason, reason, `${what}: ${JSON.stringify(record)}`);
  }
  const strictBefore = await snapshot(strictSandbox);
  const refused = await strictSandbox.call({
    method: 'POST',
    url: RTP,
    headers: { ...strictCaller.headers, 'x-reference-id': randomUUID() },
    payload,
  });
  assertBadRequest(refused, 400, mentions, `${what} (--strict)`);
  await assertUnchanged(strictBefore, `${what} (--strict)`, strictSandbox);
}

/** The record of a request to pay, which may hold what only the strict readings refuse. */
async function readRtpAnyForm(id: string): Promise<Record<string, unknown>> {
  const res = await sandbox.call({ method: 'GET', url: rtpStatus(id), headers: caller.headers });
  assert.equal(res.statusCode, 200, res.body);
  return res.json() as Record<string, unknown>;
}

async function readRtp(id: string): Promise<Record<string, unknown>> {
  const res = await sandbox.call({ method: 'GET', url: rtpStatus(id), headers: caller.headers });
  assert.equal(res.statusCode, 200, res.body);
  const record = res.json() as Record<string, unknown>;
  assertSchema('request-to-pay-status', record);
  return record;
}

const JSON_TYPE = { 'content-type': 'application/json' };

describe('request to pay: the body and its media type', () => {
  test('malformed JSON is 400 with a message about JSON', async () => {
    for (const text of ['{"amount": "10", ', '{amount: "10"}', "{'amount':'10'}", '{"amount":"10",}', '\u0000\u0001']) {
      await rejectsRtp({ payload: text, headers: JSON_TYPE }, 400, ['JSON'], `body ${JSON.stringify(text)}`);
    }
  });

  test('Content-Type text/plain is 415 naming the accepted type', async () => {
    await rejectsRtp(
      { payload: JSON.stringify(requestToPayBody()), headers: { 'content-type': 'text/plain' } },
      415,
      ['Content-Type', 'application/json'],
      'text/plain',
    );
  });

  test('Content-Type application/x-www-form-urlencoded is 415', async () => {
    await rejectsRtp(
      { payload: 'amount=10&currency=EUR', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      415,
      ['Content-Type', 'application/json'],
      'form',
    );
    await rejectsRtp({ payload: '<amount>10</amount>', headers: { 'content-type': 'application/xml' } }, 415, ['Content-Type'], 'xml');
  });

  test('a JSON body without Content-Type is accepted (Content-Type is optional, §4.1)', async () => {
    const id = randomUUID();
    const before = sandbox.context.state.transactions.requesttopay.size;
    const res = await postRtp({ id, payload: JSON.stringify(requestToPayBody('46733123499', '7')) });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal(sandbox.context.state.transactions.requesttopay.size, before + 1);
    assert.equal((await readRtp(id)).amount, '7');
  });

  test('application/json with parameters (charset) is accepted', async () => {
    const id = randomUUID();
    const res = await postRtp({
      id,
      payload: JSON.stringify(requestToPayBody()),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal((await readRtp(id)).status, 'SUCCESSFUL');
  });

  test('an empty body with application/json is 400', async () => {
    await rejectsRtp({ payload: '', headers: JSON_TYPE }, 400, ['body'], 'empty body');
    await rejectsRtp({ headers: JSON_TYPE }, 400, ['body'], 'no body at all');
  });

  test('a body of 70 KiB is 413', async () => {
    const big = { ...requestToPayBody(), externalId: 'x'.repeat(70 * 1024) };
    await rejectsRtp({ payload: JSON.stringify(big), headers: JSON_TYPE }, 413, ['64 KiB'], '70 KiB');
  });

  test('a JSON array, null, a string or a number as the body is 400', async () => {
    for (const text of ['[]', `[${JSON.stringify(requestToPayBody())}]`, 'null', '"amount"', '42', 'true']) {
      await rejectsRtp({ payload: text, headers: JSON_TYPE }, 400, ['body'], `body ${text.slice(0, 20)}`);
    }
  });

  test('__proto__ and constructor.prototype keys are 400 naming the key, and pollute nothing', async () => {
    const base = JSON.stringify(requestToPayBody()).slice(1, -1);
    const cases: Array<[string, string]> = [
      ['{"__proto__":{"polluted":true}}', '__proto__'],
      [`{${base},"__proto__":{"polluted":true}}`, '__proto__'],
      [`{${base},"constructor":{"prototype":{"polluted":true}}}`, 'constructor'],
      [`{${base},"payer":{"partyIdType":"MSISDN","partyId":"46733123499","__proto__":{"polluted":true}}}`, '__proto__'],
    ];
    const problems: string[] = [];
    for (const [text, key] of cases) {
      // Every such body is refused and stores nothing; the message must say which key, not that the JSON is invalid.
      const res = await rejectsRtp({ payload: text, headers: JSON_TYPE }, 400, [], text.slice(0, 40));
      assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype was polluted');
      const message = (res.json() as { message: string }).message;
      if (!message.includes(key)) problems.push(`${text.slice(0, 50)}… → ${message}`);
    }
    assert.deepEqual(problems, [], 'the message should name the forbidden key');
  });

  test('an unknown field is ignored, neither stored nor echoed; under --strict it is 400 naming the field', async () => {
    const bodies: Array<[unknown, string]> = [
      [{ ...requestToPayBody(), surprise: 'x' }, 'surprise'],
      [{ ...requestToPayBody(), payer: { ...payer('46733123499'), nickname: 'x' } }, 'nickname'],
    ];
    for (const [payload, field] of bodies) {
      const id = randomUUID();
      const res = await postRtp({ id, payload });
      assert.equal(res.statusCode, 202, `${field}: ${res.body}`);
      const record = await readRtp(id);
      assert.ok(!JSON.stringify(record).includes(field), `${field} must not come back: ${JSON.stringify(record)}`);
    }
    await withSandbox({ strict: true }, async (strict) => {
      const strictCaller = await strict.provision('collection');
      for (const [payload, field] of bodies) {
        const before = strict.context.state.transactions.requesttopay.size;
        const res = await strict.call({
          method: 'POST',
          url: RTP,
          headers: { ...strictCaller.headers, 'x-reference-id': randomUUID() },
          payload,
        });
        assertBadRequest(res, 400, [field], `strict, ${field}`);
        assert.equal(strict.context.state.transactions.requesttopay.size, before, `strict, ${field}: nothing stored`);
      }
    });
  });

  test('a missing amount, currency or payer is 400 naming it under --strict; by default the payment fails, or the currency is INVALID_CURRENCY', async () => {
    const outcome = { amount: 'NOT_ALLOWED', currency: 500, payer: 'PAYER_NOT_FOUND' } as const;
    for (const field of ['amount', 'currency', 'payer'] as const) {
      const body: Record<string, unknown> = { ...requestToPayBody() };
      delete body[field];
      await refusedOnlyUnderStrict(body, [field], outcome[field], `without ${field}`);
    }
  });
});

describe('request to pay: headers', () => {
  test('a missing X-Reference-Id is 400 naming the header', async () => {
    const before = await snapshot();
    const res = await postRtp({ headers: { 'x-reference-id': undefined }, payload: requestToPayBody() });
    assertBadRequest(res, 400, ['X-Reference-Id'], 'missing X-Reference-Id');
    await assertUnchanged(before, 'missing X-Reference-Id');
  });

  test('an X-Reference-Id that is not a UUID v4 is 400 naming the header', async () => {
    for (const id of [
      '123',
      'not-a-uuid',
      'a8098c1a-f86e-11da-bd1a-00112444be1e' /* v1 */,
      '00000000-0000-0000-0000-000000000000',
      `{${randomUUID()}}`,
      `${randomUUID()} `,
      randomUUID().replace(/-/g, ''),
      `${randomUUID()}x`,
    ]) {
      await rejectsRtp({ id, payload: requestToPayBody() }, 400, ['X-Reference-Id'], `X-Reference-Id ${id}`);
    }
  });

  test('a malformed X-Callback-Url is 400 naming the header', async () => {
    for (const url of [
      'not a url',
      'ftp://x',
      'ftp://127.0.0.1/cb',
      'javascript:alert(1)',
      '127.0.0.1/cb',
      `http://127.0.0.1/${'a'.repeat(2100)}`,
    ]) {
      await rejectsRtp(
        { payload: requestToPayBody(), headers: { 'x-callback-url': url } },
        400,
        ['X-Callback-Url'],
        `X-Callback-Url ${url.slice(0, 30)}`,
      );
    }
  });

  test('an empty optional header is taken as absent; under --strict it is 400 naming the header', async () => {
    const res = await postRtp({ payload: requestToPayBody(), headers: { 'x-callback-url': '' } });
    assert.equal(res.statusCode, 202, res.body);
    await withSandbox({ strict: true }, async (strict) => {
      const strictCaller = await strict.provision('collection');
      const refused = await strict.call({
        method: 'POST',
        url: RTP,
        headers: { ...strictCaller.headers, 'x-reference-id': randomUUID(), 'x-callback-url': '' },
        payload: requestToPayBody(),
      });
      assertBadRequest(refused, 400, ['X-Callback-Url'], 'strict, empty X-Callback-Url');
      assert.equal(strict.context.state.transactions.requesttopay.size, 0);
    });
  });

  test('a missing or malformed X-Target-Environment is 400 naming the header', async () => {
    for (const env of [undefined, '', 'sand box', 'sandbox;drop', 'x'.repeat(65), 'sändbox']) {
      await rejectsRtp(
        { payload: requestToPayBody(), headers: { 'x-target-environment': env } },
        400,
        ['X-Target-Environment'],
        `X-Target-Environment ${String(env)}`,
      );
    }
  });

  test('a missing subscription key or Bearer token is 401 and stores nothing', async () => {
    const before = await snapshot();
    const noKey = await postRtp({ payload: requestToPayBody(), headers: { 'ocp-apim-subscription-key': undefined } });
    assert.equal(noKey.statusCode, 401, noKey.body);
    assertSchema('gateway-error', noKey.json());
    const noToken = await postRtp({ payload: requestToPayBody(), headers: { authorization: undefined } });
    assert.equal(noToken.statusCode, 401, noToken.body);
    assertSchema('oauth-error', noToken.json());
    assert.equal(noToken.json().error, 'invalid_token');
    const basicInstead = await postRtp({ payload: requestToPayBody(), headers: { authorization: basic(caller.userId, caller.apiKey) } });
    assert.equal(basicInstead.statusCode, 401, basicInstead.body);
    assertSchema('oauth-error', basicInstead.json());
    await assertUnchanged(before, 'missing credentials');
  });

  test('the X-Reference-Id of a rejected request stays free', async () => {
    const id = randomUUID();
    await rejectsRtp({ id, payload: { ...requestToPayBody(), amount: 12 } }, 400, ['amount'], 'an amount that is not a string');
    const res = await postRtp({ id, payload: requestToPayBody() });
    assert.equal(res.statusCode, 202, res.body);
  });
});

describe('request to pay: amounts and currency', () => {
  test('absurd amounts are 400 naming amount under --strict; by default the payment fails NOT_ALLOWED and moves nothing', async () => {
    const balance = async () =>
      (await sandbox.call({ method: 'GET', url: path('getBalance', 'collection'), headers: caller.headers })).json().availableBalance;
    const opening = await balance();
    for (const amount of [
      '',
      ' 1',
      '1 ',
      '1,5',
      'NaN',
      'Infinity',
      '-Infinity',
      '1e5',
      '0x10',
      '00012',
      '1.',
      '.5',
      '+5',
      '-5',
      '0',
      '0.0000',
      '99999999999999999999',
      '1000000000000',
      '1.23456',
      '١٠',
      '１０',
      '10\u0000',
    ]) {
      await refusedOnlyUnderStrict({ ...requestToPayBody(), amount }, ['amount'], 'NOT_ALLOWED', `amount ${JSON.stringify(amount)}`);
    }
    assert.equal(await balance(), opening, 'no absurd amount moved money');
    await rejectsRtp({ payload: { ...requestToPayBody(), amount: '1'.repeat(65) } }, 400, ['amount'], 'an amount of 65 characters');
  });

  test('an amount that is a JSON number, null or an object is 400 naming amount', async () => {
    for (const amount of [10, 12.5, null, { value: '10' }, ['10'], true]) {
      await rejectsRtp({ payload: { ...requestToPayBody(), amount } }, 400, ['amount'], `amount ${JSON.stringify(amount)}`);
    }
  });

  test('the largest amount the schema allows is accepted and read back exactly', async () => {
    const id = randomUUID();
    const res = await postRtp({ id, payload: requestToPayBody('46733123499', '999999999999.9999') });
    assert.equal(res.statusCode, 202, res.body);
    assert.equal((await readRtp(id)).amount, '999999999999.9999');
  });

  test('a malformed currency is 400; a well-formed unsupported one is the documented 500 INVALID_CURRENCY', async () => {
    for (const currency of ['eur', 'EURO', 'E', '€', '', 'EU1']) {
      await rejectsRtp({ payload: { ...requestToPayBody(), currency } }, 400, ['currency'], `currency ${currency}`);
    }
    const before = await snapshot();
    const res = await postRtp({ payload: { ...requestToPayBody(), currency: 'USD' } });
    assert.equal(res.statusCode, 500, res.body);
    assertSchema('error-set-a', res.json());
    assert.equal(res.json().code, 'INVALID_CURRENCY');
    await assertUnchanged(before, 'INVALID_CURRENCY');
  });
});

describe('request to pay: text fields and parties', () => {
  test('control characters in payerMessage, payeeNote and externalId are 400 naming the field under --strict; by default they are kept as sent', async () => {
    const cases: Array<[string, string]> = [
      ['payerMessage', 'Pay\u0000now'],
      ['payerMessage', '\u001b[31mred'],
      ['payerMessage', 'line\nbreak'],
      ['payeeNote', 'tab\there'],
      ['payeeNote', 'del\u007f'],
      ['externalId', 'bell\u0007'],
      ['externalId', 'cr\r'],
    ];
    for (const [field, value] of cases) {
      const id = randomUUID();
      const res = await postRtp({ id, payload: { ...requestToPayBody(), [field]: value } });
      assert.equal(res.statusCode, 202, `${field} ${JSON.stringify(value)}: ${res.body}`);
      assert.equal((await readRtpAnyForm(id))[field], value, 'read back exactly');
      const refused = await strictSandbox.call({
        method: 'POST',
        url: RTP,
        headers: { ...strictCaller.headers, 'x-reference-id': randomUUID() },
        payload: { ...requestToPayBody(), [field]: value },
      });
      assertBadRequest(refused, 400, [field], `${field} ${JSON.stringify(value)} (--strict)`);
    }
  });

  test('payerMessage and payeeNote of 161 characters are 400; 160 are accepted', async () => {
    for (const field of ['payerMessage', 'payeeNote']) {
      await rejectsRtp({ payload: { ...requestToPayBody(), [field]: 'm'.repeat(161) } }, 400, [field], `${field} of 161`);
    }
    await rejectsRtp({ payload: { ...requestToPayBody(), externalId: 'e'.repeat(1025) } }, 400, ['externalId'], 'externalId of 1025');
    const refused = await strictSandbox.call({
      method: 'POST',
      url: RTP,
      headers: { ...strictCaller.headers, 'x-reference-id': randomUUID() },
      payload: { ...requestToPayBody(), externalId: 'e'.repeat(129) },
    });
    assertBadRequest(refused, 400, ['externalId'], 'externalId of 129 (--strict)');
    const id = randomUUID();
    const res = await postRtp({ id, payload: { ...requestToPayBody(), payerMessage: 'm'.repeat(160), payeeNote: 'n'.repeat(160) } });
    assert.equal(res.statusCode, 202, res.body);
    const record = await readRtp(id);
    assert.equal(record.payerMessage, 'm'.repeat(160));
    assert.equal(record.payeeNote, 'n'.repeat(160));
  });

  test('unicode text is accepted and read back exactly', async () => {
    const texts = {
      payerMessage: 'Zahlung für Café ☕ 日本',
      payeeNote: 'Cafe\u0301 مرحبا עברית 😀 \u200d',
      externalId: 'réf-№42-日本',
    };
    const id = randomUUID();
    const res = await postRtp({ id, payload: { ...requestToPayBody(), ...texts } });
    assert.equal(res.statusCode, 202, res.body);
    const record = await readRtp(id);
    assert.equal(record.payerMessage, texts.payerMessage);
    assert.equal(record.payeeNote, texts.payeeNote);
    assert.equal(record.externalId, texts.externalId);
  });

  test('a malformed payer is 400 naming payer', async () => {
    const payers: unknown[] = [
      {},
      null,
      '46733123499',
      { partyIdType: 'msisdn', partyId: '46733123499' },
      { partyIdType: 'MSISDN' },
      { partyIdType: 'MSISDN', partyId: '4673312349a' },
      { partyIdType: 'MSISDN', partyId: '٤٦٧٣٣١٢٣٤٩٩' },
      { partyIdType: 'MSISDN', partyId: '0046733123499' },
      { partyIdType: 'MSISDN', partyId: '1234567890123456' },
      { partyIdType: 'EMAIL', partyId: 'not an email' },
      { partyIdType: 'PARTY_CODE', partyId: 'abc' },
      { partyIdType: 'IBAN', partyId: 'SE3550000000054910000003' },
      { partyIdType: 'MSISDN', partyId: 46733123499 },
    ];
    for (const p of payers) {
      await rejectsRtp({ payload: { ...requestToPayBody(), payer: p } }, 400, ['payer'], `payer ${JSON.stringify(p)}`);
    }
  });
});

describe('unknown paths, methods and malformed paths', () => {
  test('an unknown path is 404 naming the method and the path', async () => {
    for (const [method, url] of [
      ['GET', '/nope'],
      ['POST', '/collection/v2_0/requesttopay'],
      ['GET', '/collection/v1_0/transfer'],
      ['POST', '/'],
    ] as const) {
      const before = await snapshot();
      const res = await sandbox.call({
        method,
        url,
        headers: caller.headers,
        ...(method === 'POST' ? { payload: requestToPayBody() } : {}),
      });
      assertBadRequest(res, 404, [method, url], `${method} ${url}`);
      await assertUnchanged(before, `${method} ${url}`);
    }
  });

  test("a known path with an undeclared method is 405, its Allow header listing the catalogue's methods there", async () => {
    const cases: Array<[CallOptions['method'], string, string]> = [
      ['DELETE', RTP, 'POST'],
      ['PUT', RTP, 'POST'],
      ['GET', RTP, 'POST'],
      ['PUT', path('createApiUser'), 'POST'],
      ['DELETE', path('getApiUser', undefined, { referenceId: caller.userId }), 'GET, HEAD'],
      ['PATCH', rtpStatus(randomUUID()), 'GET, HEAD'],
      ['GET', path('createAccessToken', 'collection'), 'POST'],
      ['PUT', path('bcAuthorize', 'collection'), 'POST'],
      ['POST', path('accountHolderActive', 'collection', { accountHolderIdType: 'msisdn', accountHolderId: '46733123499' }), 'GET, HEAD'],
    ];
    for (const [method, url, allow] of cases) {
      const before = await snapshot();
      const res = await sandbox.call({
        method,
        url,
        headers: { ...caller.headers, 'x-reference-id': randomUUID() },
        payload: method === 'GET' ? undefined : requestToPayBody(),
      });
      assertBadRequest(res, 405, [method, url.split('?')[0]!, allow], `${method} ${url}`);
      assert.equal(res.headers.allow, allow, `${method} ${url}`);
      await assertUnchanged(before, `${method} ${url}`);
    }
    // The API user the DELETE named is still there.
    const user = await sandbox.call({
      method: 'GET',
      url: path('getApiUser', undefined, { referenceId: caller.userId }),
      headers: { 'ocp-apim-subscription-key': KEYS.collection },
    });
    assert.equal(user.statusCode, 200, user.body);
  });

  test('OPTIONS on a known path is 405 with Allow', async () => {
    const res = await sandbox.call({ method: 'OPTIONS' as CallOptions['method'], url: RTP, headers: caller.headers });
    assertBadRequest(res, 405, ['OPTIONS'], 'OPTIONS');
    assert.equal(res.headers.allow, 'POST');
  });

  test('an account-holder id as long as the OpenAPI document allows (254 characters) is served, one more is 400, never 414', async () => {
    const holder = (id: string) =>
      sandbox.call({
        method: 'GET',
        url: path('accountHolderActive', 'collection', { accountHolderIdType: 'email', accountHolderId: id }),
        headers: caller.headers,
      });
    const email = (length: number) => `${'l'.repeat(64)}@${'d'.repeat(length - 64 - 1 - 4)}.com`;
    for (const length of [201, 254]) {
      const res = await holder(email(length));
      assert.equal(res.statusCode, 200, `${length} characters: ${res.body}`);
      assert.deepEqual(res.json(), { result: true });
    }
    // Percent-encoding makes the segment three times longer on the wire; the bound is on the decoded value.
    const encoded = await holder(`${'l'.repeat(60)}+ü@${'d'.repeat(254 - 62 - 1 - 4)}.com`);
    assert.equal(encoded.statusCode, 200, encoded.body);
    assertBadRequest(await holder(email(255)), 400, ['accountHolderId'], '255 characters');
    const openapi = (await sandbox.call({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, { get?: { parameters?: Array<{ name: string; schema: { maxLength?: number } }> } }>;
    };
    const declared = openapi.paths[path('accountHolderActive', 'collection')]!.get!.parameters!.find((p) => p.name === 'accountHolderId')!;
    assert.equal(declared.schema.maxLength, 254, 'the OpenAPI document states the same bound');
  });

  test('non-UUID ids in paths are 400 naming the parameter', async () => {
    const key = { 'ocp-apim-subscription-key': KEYS.collection };
    const cases: Array<[CallOptions['method'], string, Record<string, string>, unknown]> = [
      ['GET', rtpStatus('123'), caller.headers, undefined],
      ['GET', rtpStatus('a8098c1a-f86e-11da-bd1a-00112444be1e'), caller.headers, undefined],
      ['POST', path('deliveryNotification', 'collection', { referenceId: 'not-a-uuid' }), caller.headers, { notificationMessage: 'hello' }],
      ['GET', path('getApiUser', undefined, { referenceId: '123' }), key, undefined],
      ['POST', path('createApiKey', undefined, { referenceId: 'xyz' }), key, undefined],
      ['GET', path('getApiUser', undefined, { referenceId: 'f'.repeat(36) }), key, undefined],
    ];
    for (const [method, url, headers, payload] of cases) {
      const before = await snapshot();
      const res = await sandbox.call({ method, url, headers, payload });
      assertBadRequest(res, 400, ['referenceId'], `${method} ${url}`);
      await assertUnchanged(before, `${method} ${url}`);
    }
  });

  test("very long segments and percent-encoded junk are 4xx with the sandbox's bad-request body", async () => {
    const urls = [
      rtpStatus('a'.repeat(5000)),
      path('getApiUser', undefined, { referenceId: '9'.repeat(300) }),
      `/${'x'.repeat(10_000)}`,
      // Sent as written: malformed or already percent-encoded segments.
      rawPath('getRequestToPayStatus', undefined, { referenceId: '%E0%A4%A' }),
      rawPath('getRequestToPayStatus', undefined, { referenceId: '%zz' }),
      rawPath('getRequestToPayStatus', undefined, { referenceId: '%00' }),
      rawPath('getRequestToPayStatus', undefined, { referenceId: '..%2F..%2Fhealth' }),
      // Percent-encoded by path(): %3Cscript%3E…, %E2%82%AC, %25%25%25.
      rtpStatus('<script>alert(1)</script>'),
      path('getBalanceInCurrency', 'collection', { currency: '€' }),
      path('accountHolderActive', 'collection', { accountHolderIdType: 'msisdn', accountHolderId: '%%%' }),
    ];
    const problems: string[] = [];
    for (const url of urls) {
      const before = await snapshot();
      const res = await sandbox.call({ method: 'GET', url, headers: caller.headers });
      const what = url.length > 60 ? `${url.slice(0, 50)}… (${url.length} chars)` : url;
      assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${what}: ${res.statusCode} ${res.body.slice(0, 200)}`);
      assert.match(String(res.headers['content-type']), /^application\/json/, what);
      await assertUnchanged(before, what);
      // The same {statusCode, error, message} body as every other rejection (READINGS; schemas/bad-request).
      try {
        assertBadRequest(res, res.statusCode, [], what);
      } catch {
        problems.push(`${what} → ${res.statusCode} ${res.body.slice(0, 120)}`);
      }
    }
    assert.deepEqual(problems, [], 'these answers do not have the bad-request body');
  });
});

// ---------------------------------------------------------------------------------------------------
// A generated sweep over every operation that takes a body.

const CANONICAL_HEADER: Record<string, string> = {
  'x-reference-id': 'X-Reference-Id',
  'x-target-environment': 'X-Target-Environment',
  'x-callback-url': 'X-Callback-Url',
  language: 'Language',
};

/** A body each operation accepts as to its form; a new operation must be added here. */
function validBody(schema: string): Record<string, string | object> {
  switch (schema) {
    case 'request-to-pay':
      return requestToPayBody();
    case 'deposit':
    case 'transfer':
      return { amount: '5', currency: 'EUR', externalId: 'dep-1', payee: payer('46733123499'), payerMessage: 'm', payeeNote: 'n' };
    case 'refund':
      return { amount: '1', currency: 'EUR', externalId: 'ref-1', payerMessage: 'm', payeeNote: 'n', referenceIdToRefund: randomUUID() };
    case 'api-user-create':
      return { providerCallbackHost: '127.0.0.1' };
    case 'delivery-notification':
      return { notificationMessage: 'Your goods are on their way.' };
    case 'bc-authorize-request':
      return { login_hint: 'ID:46733123450/MSISDN', scope: 'profile', access_type: 'offline' };
    case 'oauth-token-request':
      return { grant_type: 'urn:openid:params:grant-type:ciba', auth_req_id: randomUUID() };
    default:
      throw new Error(`no valid body known for schema ${schema}; add one to the sweep`);
  }
}

function encode(body: Record<string, unknown>, mediaType: string): string {
  return mediaType === 'application/json' ? JSON.stringify(body) : new URLSearchParams(body as Record<string, string>).toString();
}

interface Case {
  name: string;
  headers?: Record<string, string | undefined>;
  payload?: string;
  status: number;
  /** Words the message must contain, for the bad-request answers. */
  mentions?: string[];
  /** A business 400 {code, message} accepted instead of a bad-request body (bc-authorize's UNSUPPORTED_SCOPE). */
  businessCode?: string;
  /**
   * Refused only under --strict (STRICT_READINGS): the live service is not known to refuse it, so the default
   * sandbox answers it as it answers the valid body.
   */
  strictOnly?: true;
}

function sweepCases(op: ServedOperation): Case[] {
  const body = op.body!;
  const mt = body.mediaType;
  const valid = validBody(body.schema);
  const cases: Case[] = [];
  if (mt === 'application/json') {
    cases.push(
      { name: 'truncated JSON', payload: encode(valid, mt).slice(0, -3), status: 400, mentions: ['JSON'] },
      { name: 'single quotes', payload: "{'a':'b'}", status: 400, mentions: ['JSON'] },
      { name: 'array', payload: '[]', status: 400, mentions: ['body'] },
      { name: 'null', payload: 'null', status: 400, mentions: ['body'] },
      { name: 'string', payload: '"x"', status: 400, mentions: ['body'] },
      { name: 'empty object', payload: '{}', status: 400, mentions: ['body'] },
      { name: 'empty body', payload: '', status: 400 },
      { name: '__proto__', payload: `{"__proto__":{"polluted":true},${encode(valid, mt).slice(1)}`, status: 400 },
      {
        name: 'constructor.prototype',
        payload: `{"constructor":{"prototype":{"polluted":true}},${encode(valid, mt).slice(1)}`,
        status: 400,
      },
      { name: 'deep nesting', payload: `${'['.repeat(5000)}${']'.repeat(5000)}`, status: 400 },
      {
        name: 'form body',
        payload: 'a=b',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        status: 415,
        mentions: ['Content-Type'],
      },
    );
  } else {
    cases.push(
      {
        name: 'JSON body',
        payload: JSON.stringify(valid),
        headers: { 'content-type': 'application/json' },
        status: 415,
        mentions: ['Content-Type'],
        strictOnly: true,
      },
      { name: 'empty form', payload: '', status: 400 },
      { name: 'junk form', payload: '%%%&&&===', status: 400 },
      {
        name: 'repeated parameter',
        payload: `${encode(valid, mt)}&${Object.keys(valid)[0]}=again`,
        status: 400,
        mentions: [Object.keys(valid)[0]!],
      },
      {
        name: 'NUL in a value',
        payload: `${encode(valid, mt)}`.replace(/=([^&]*)/, '=%00$1'),
        status: 400,
        mentions: [Object.keys(valid)[0]!],
      },
    );
  }
  cases.push(
    {
      name: 'text/plain',
      payload: encode(valid, mt),
      headers: { 'content-type': 'text/plain' },
      status: 415,
      mentions: ['Content-Type', mt],
    },
    {
      name: 'multipart',
      payload: '--x\r\n\r\n--x--',
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
      status: 415,
      mentions: ['Content-Type'],
    },
    { name: '70 KiB', payload: encode({ ...valid, [Object.keys(valid)[0]!]: 'x'.repeat(70 * 1024) }, mt), status: 413 },
    { name: 'unknown field', payload: encode({ ...valid, zzUnknown: '1' }, mt), status: 400, mentions: ['zzUnknown'], strictOnly: true },
  );
  for (const field of Object.keys(valid)) {
    const without: Record<string, unknown> = { ...valid };
    delete without[field];
    const required = requiredFields(body.schema);
    if (required.always.includes(field))
      cases.push({ name: `without ${field}`, payload: encode(without, mt), status: 400, mentions: [field] });
    if (required.strictOnly.includes(field))
      cases.push({ name: `without ${field}`, payload: encode(without, mt), status: 400, mentions: [field], strictOnly: true });
    cases.push({
      name: `${field} with a control character`,
      payload: encode({ ...valid, [field]: 'x\u0001y' }, mt),
      status: 400,
      mentions: [field],
      ...(fieldsUnderReadings(body.schema).includes(field) ? { strictOnly: true as const } : {}),
      // Any text is a well-formed scope; one the sandbox does not offer is UNSUPPORTED_SCOPE (§7 set A).
      ...(body.schema === 'bc-authorize-request' && field === 'scope' ? { businessCode: 'UNSUPPORTED_SCOPE' } : {}),
    });
    if (mt === 'application/json')
      cases.push({ name: `${field} as a number`, payload: encode({ ...valid, [field]: 12345 }, mt), status: 400, mentions: [field] });
  }
  for (const header of op.requiredHeaders ?? []) {
    cases.push({
      name: `without ${header}`,
      payload: encode(valid, mt),
      headers: { [header]: undefined },
      status: 400,
      mentions: [CANONICAL_HEADER[header]!],
    });
  }
  const invalidHeaderValues: Record<string, string[]> = {
    'x-reference-id': ['123', 'a8098c1a-f86e-11da-bd1a-00112444be1e'],
    'x-target-environment': ['sand box', ''],
    'x-callback-url': ['not a url', 'ftp://127.0.0.1/cb'],
    language: ['12', 'english'],
  };
  for (const header of [...(op.requiredHeaders ?? []), ...(op.optionalHeaders ?? [])]) {
    for (const value of invalidHeaderValues[header] ?? []) {
      cases.push({
        name: `${header}: ${value}`,
        payload: encode(valid, mt),
        headers: { [header]: value },
        status: 400,
        mentions: [CANONICAL_HEADER[header]!],
      });
    }
  }
  cases.push({
    name: 'without a subscription key',
    payload: encode(valid, mt),
    headers: { 'ocp-apim-subscription-key': undefined },
    status: 401,
  });
  cases.push({
    name: 'an unknown subscription key',
    payload: encode(valid, mt),
    headers: { 'ocp-apim-subscription-key': 'not-a-known-key' },
    status: 401,
  });
  if (op.credential === 'bearer') {
    cases.push({ name: 'without Authorization', payload: encode(valid, mt), headers: { authorization: undefined }, status: 401 });
    cases.push({
      name: 'a forged Bearer token',
      payload: encode(valid, mt),
      headers: { authorization: 'Bearer abc.def.ghi' },
      status: 401,
    });
  }
  if (op.credential === 'basic') {
    cases.push({ name: 'a malformed Basic credential', payload: encode(valid, mt), headers: { authorization: 'Basic !!!' }, status: 401 });
  }
  return cases;
}

type SchemaDocument = {
  $ref?: string;
  required?: string[];
  properties?: Record<string, { $ref?: string }>;
  strictReading?: { reading: string; schema: { required?: string[] } };
};

/** A body schema by its short name, following a whole-document $ref (transfer is a deposit). */
function bodySchema(name: string): SchemaDocument {
  const document = schemaDocuments.find((d) => d.$id === schemaId(name)) as SchemaDocument | undefined;
  if (!document) throw new Error(`no schema ${name}`);
  return document.$ref ? bodySchema(document.$ref.replace(/\.schema\.json$/, '')) : document;
}

/** The fields a body must have: those the spec or the live service requires, and those only the strict reading requiredFields does. */
function requiredFields(schema: string): { always: string[]; strictOnly: string[] } {
  const document = bodySchema(schema);
  return { always: document.required ?? [], strictOnly: document.strictReading?.schema.required ?? [] };
}

/** The fields whose value a strict reading constrains (amountValue, freeText): only --strict refuses their control characters. */
function fieldsUnderReadings(schema: string): string[] {
  const properties = bodySchema(schema).properties ?? {};
  return Object.keys(properties).filter((field) => {
    const ref = properties[field]!.$ref;
    return ref !== undefined && bodySchema(ref.replace(/\.schema\.json$/, '')).strictReading !== undefined;
  });
}

describe('a generated sweep over every operation with a body', () => {
  const callers = new Map<TestSandbox, Map<Product, Caller>>();
  let strictSandbox: TestSandbox;
  before(async () => {
    strictSandbox = await startSandbox({ strict: true });
    for (const s of [sandbox, strictSandbox]) {
      const byProduct = new Map<Product, Caller>();
      for (const product of ['collection', 'disbursement', 'remittance'] as const) byProduct.set(product, await s.provision(product));
      callers.set(s, byProduct);
    }
  });
  after(async () => {
    await strictSandbox?.close();
  });

  function baseHeaders(op: ServedOperation, s: TestSandbox = sandbox): Record<string, string | undefined> {
    const product: Product = op.product === 'provisioning' ? 'collection' : op.product;
    const c = callers.get(s)!.get(product)!;
    const headers: Record<string, string | undefined> = { 'ocp-apim-subscription-key': KEYS[product], 'content-type': op.body!.mediaType };
    if (op.credential === 'bearer') headers.authorization = c.headers.authorization;
    if (op.credential === 'basic') headers.authorization = basic(c.userId, c.apiKey);
    if (op.requiredHeaders?.includes('x-reference-id')) headers['x-reference-id'] = randomUUID();
    if (op.requiredHeaders?.includes('x-target-environment')) headers['x-target-environment'] = 'sandbox';
    return headers;
  }

  const urlOf = (op: ServedOperation) => op.url.replace(/:[A-Za-z]+/g, () => randomUUID());

  test('every operation with a body answers malformed bodies and bad headers with a 4xx that says why', async (t) => {
    const operations = servedOperations().filter((op) => op.body);
    assert.ok(
      operations.length >= 11,
      `expected every body-taking operation in the catalogue, got ${operations.map((o) => o.id).join(', ')}`,
    );
    for (const op of operations) {
      await t.test(op.id, async () => {
        // The valid body is not refused for its form, so each case below is refused for its own fault.
        const control = await sandbox.call({
          method: op.method,
          url: urlOf(op),
          headers: baseHeaders(op),
          payload: encode(validBody(op.body!.schema), op.body!.mediaType),
        });
        assert.ok(![413, 415].includes(control.statusCode), `${op.id} control: ${control.statusCode} ${control.body}`);
        if (control.statusCode === 400)
          assert.throws(
            () => assertSchema('bad-request', control.json()),
            `${op.id}: the valid body was refused for its form: ${control.body}`,
          );

        for (const c of sweepCases(op)) {
          if (c.strictOnly) {
            // Without --strict it is not refused for its form: answered as the valid body is, or with a business error.
            const lenient = await sandbox.call({
              method: op.method,
              url: urlOf(op),
              headers: { ...baseHeaders(op), ...c.headers },
              payload: c.payload,
            });
            const refusedForItsForm =
              [400, 413, 415].includes(lenient.statusCode) &&
              (() => {
                try {
                  assertSchema('bad-request', lenient.json());
                  return true;
                } catch {
                  return false;
                }
              })();
            assert.ok(
              !refusedForItsForm,
              `${op.id} / ${c.name} is not refused for its form without --strict: ${lenient.statusCode} ${lenient.body.slice(0, 300)}`,
            );
          }
          const target = c.strictOnly ? strictSandbox : sandbox;
          const before = await snapshot(target);
          const res = await target.call({
            method: op.method,
            url: urlOf(op),
            headers: { ...baseHeaders(op, target), ...c.headers },
            payload: c.payload,
          });
          const what = `${op.id} / ${c.name}${c.strictOnly ? ' (--strict)' : ''}`;
          assert.ok(res.statusCode >= 400 && res.statusCode < 500, `${what}: ${res.statusCode} ${res.body.slice(0, 300)}`);
          assert.equal(res.statusCode, c.status, `${what}: ${res.body.slice(0, 300)}`);
          assert.match(String(res.headers['content-type']), /^application\/json/, what);
          const body = res.json() as Record<string, unknown>;
          const said = [body.message, body.code, body.error].filter((v) => typeof v === 'string' && v.length > 0);
          assert.ok(said.length > 0, `${what}: no message, code or error in ${res.body}`);
          if (c.businessCode && body.code !== undefined) {
            assertSchema('error-set-a', body);
            assert.equal(body.code, c.businessCode, what);
          } else if (c.status === 401) {
            if (c.headers && 'ocp-apim-subscription-key' in c.headers) assertSchema('gateway-error', body);
            else assertSchema('oauth-error', body);
          } else {
            assertBadRequest(res, c.status, c.mentions ?? [], what);
          }
          await assertUnchanged(before, what, target);
        }
      });
    }
  });

  test('the documented 500s appear only when deliberately asked for, with their code and no state change', async (t) => {
    const operations = servedOperations().filter((op) => op.body && op.product !== 'provisioning');
    for (const op of operations) {
      await t.test(op.id, async () => {
        const errorSchema = op.product === 'collection' ? 'error-set-a' : 'error-set-b';
        const valid = validBody(op.body!.schema);
        const deliberate: Array<{ code: string; headers?: Record<string, string>; body?: Record<string, unknown> }> = [
          { code: 'NOT_ALLOWED_TARGET_ENVIRONMENT', headers: { 'x-target-environment': 'production' } },
        ];
        if (op.optionalHeaders?.includes('x-callback-url'))
          deliberate.push({ code: 'INVALID_CALLBACK_URL_HOST', headers: { 'x-callback-url': 'https://elsewhere.example/cb' } });
        if ('currency' in valid) deliberate.push({ code: 'INVALID_CURRENCY', body: { ...valid, currency: 'USD' } });
        for (const d of deliberate) {
          const before = await snapshot();
          const res = await sandbox.call({
            method: op.method,
            url: urlOf(op),
            headers: { ...baseHeaders(op), ...d.headers },
            payload: encode(d.body ?? valid, op.body!.mediaType),
          });
          assert.equal(res.statusCode, 500, `${op.id} / ${d.code}: ${res.body}`);
          const body = res.json();
          assertSchema(op.operation === 'bcAuthorize' ? 'error-set-a' : errorSchema, body);
          assert.equal(body.code, d.code, `${op.id}: ${res.body}`);
          await assertUnchanged(before, `${op.id} / ${d.code}`);
        }
      });
    }
  });
});

// ---------------------------------------------------------------------------------------------------

test('logs at trace level carry no API key, access token, subscription key or Basic credential', async () => {
  const chunks: string[] = [];
  const logger = pino({ level: 'trace' }, { write: (line: string) => void chunks.push(line) });
  const received: string[] = [];
  const listener = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received.push(req.url ?? '');
      res.statusCode = req.url === '/fail' ? 500 : 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = (listener.address() as AddressInfo).port;
  const s = await startSandbox({ logLevel: 'trace' }, { logger });
  try {
    const c = await s.provision('collection');
    // A failed token request, a forged token, and a bad body: failure paths log too.
    const failedToken = await s.call({
      method: 'POST',
      url: path('createAccessToken', 'collection'),
      headers: { 'ocp-apim-subscription-key': KEYS.collection, authorization: basic(c.userId, `${c.apiKey}x`) },
    });
    assert.equal(failedToken.statusCode, 401);
    const forged = await s.call({
      method: 'GET',
      url: path('getBalance', 'collection'),
      headers: { ...c.headers, authorization: `Bearer ${c.token}x` },
    });
    assert.equal(forged.statusCode, 401);
    const bad = await s.call({
      method: 'POST',
      url: RTP,
      headers: { ...c.headers, 'x-reference-id': randomUUID(), 'content-type': 'application/json' },
      payload: '{"amount":',
    });
    assert.equal(bad.statusCode, 400);
    for (const path of ['/ok', '/fail']) {
      const res = await s.call({
        method: 'POST',
        url: RTP,
        headers: { ...c.headers, 'x-reference-id': randomUUID(), 'x-callback-url': `http://127.0.0.1:${port}${path}` },
        payload: requestToPayBody(),
      });
      assert.equal(res.statusCode, 202, res.body);
    }
    // The failing callback's retries, on the sandbox's clock, until it gives up.
    await s.context.callbacks.settled();
    for (const delay of s.settings.callbackRetryDelaysMs) {
      s.clock.advance(delay);
      await s.context.callbacks.settled();
    }
    const logged = chunks.join('');
    assert.ok(logged.includes('callback delivered') && logged.includes('giving up'), 'the log has a delivered and an abandoned callback');
    assert.ok(received.includes('/ok') && received.includes('/fail'));
    const text = chunks.join('');
    assert.ok(text.includes('incoming request'), 'request logging is on at trace level, so the check has lines to look at');
    const basicCredential = basic(c.userId, c.apiKey).slice('Basic '.length);
    const secrets: Record<string, string> = {
      'API key': c.apiKey,
      'access token': c.token,
      'access token signature': c.token.split('.')[2]!,
      'subscription key': KEYS.collection,
      'Basic credential': basicCredential,
      'decoded Basic credential': `${c.userId}:${c.apiKey}`,
    };
    for (const [name, secret] of Object.entries(secrets)) {
      assert.ok(!text.includes(secret), `the log contains the ${name}`);
    }
  } finally {
    await s.close();
    await new Promise<void>((resolve) => listener.close(() => resolve()));
  }
});
