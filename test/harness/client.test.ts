import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockAgent } from 'undici';
import type { MockInterceptor } from 'undici/types/mock-interceptor.js';
import {
  GIVE_UP_AFTER_UNANSWERED,
  MomoClient,
  TargetUnavailableError,
  basicCredential,
  type ClientOptions,
  type Exchange,
} from '../../harness/client/momo-client.ts';
import { REDACTED, Redactor } from '../../core/secrets/redact.ts';
import { pathOf } from '../../core/catalogue/routes.ts';

const BASE = 'http://base.momo.test';
const SANDBOX = 'http://sandbox.momo.test';
const KEYS = { collection: 'collection-key-0001', disbursement: 'disbursement-key-0002', remittance: 'remittance-key-0003' };
const REF = '3f1c2b7a-9d4e-4c1a-8b2f-0e6d5a4c3b21';
const USER = '7b0e1f52-3a9c-4d8e-9f10-2c3b4a5d6e7f';
// JWT-shaped: three base64url segments, the first starting eyJ.
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4eXoifQ.c2lnbmF0dXJlLXZhbHVl';
const BEARER = `Bearer ${JWT}`;
const PAYMENT = {
  amount: '10',
  currency: 'EUR',
  externalId: 'ext-1',
  payer: { partyIdType: 'MSISDN', partyId: '46733123499' },
  payerMessage: 'hi',
  payeeNote: 'note',
};

interface Captured {
  calls: number;
  headers: Record<string, string>;
  body: string | undefined;
}

function setup(overrides: Partial<ClientOptions> = {}) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const exchanges: Exchange[] = [];
  const redactor = new Redactor();
  const client = new MomoClient({
    baseUrl: BASE,
    sandboxUrl: SANDBOX,
    subscriptionKeys: { ...KEYS },
    targetEnvironment: 'sandbox',
    connectTimeoutMs: 1000,
    requestTimeoutMs: 1000,
    redactor,
    onExchange: (e) => exchanges.push(e),
    dispatcher: agent,
    // One attempt a call: these tests are about one exchange; test/harness/careful.test.ts is about attempts.
    retry: { attempts: 1, budgetMs: 0, baseDelayMs: 0, maxDelayMs: 0 },
    ...overrides,
  });
  return { agent, client, exchanges, redactor };
}

function lowerHeaders(headers: MockInterceptor.MockResponseCallbackOptions['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  let entries: [string, string][];
  if (Array.isArray(headers)) {
    const flat = headers as string[];
    entries = [];
    for (let i = 0; i < flat.length; i += 2) entries.push([flat[i]!, flat[i + 1] ?? '']);
  } else if (headers instanceof Headers) {
    entries = [...headers.entries()];
  } else {
    entries = Object.entries(headers);
  }
  for (const [name, value] of entries) out[name.toLowerCase()] = value;
  return out;
}

/** Expects exactly one request to origin+path with this method, answers it, and captures what was sent. */
function expectCall(
  agent: MockAgent,
  origin: string,
  method: string,
  path: string,
  status: number,
  body = '',
  headers: Record<string, string> = {},
): Captured {
  const captured: Captured = { calls: 0, headers: {}, body: undefined };
  agent
    .get(origin)
    .intercept({ path, method })
    .reply(
      status,
      (opts) => {
        captured.calls += 1;
        captured.headers = lowerHeaders(opts.headers);
        captured.body = opts.body === undefined || opts.body === null ? undefined : String(opts.body);
        return body;
      },
      { headers },
    );
  return captured;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test('provisioning goes to the sandbox host with the product key, X-Reference-Id, JSON body and no X-Target-Environment', async () => {
  const { agent, client } = setup();
  try {
    const create = expectCall(agent, SANDBOX, 'POST', pathOf('createApiUser'), 201);
    const r1 = await client.createApiUser('collection', USER, 'callbacks.example.com');
    assert.equal(r1.status, 201);
    assert.equal(r1.json, undefined);
    assert.equal(r1.text, '');
    assert.deepEqual(r1.operation, {
      id: 'createApiUser',
      product: 'collection',
      label: 'create API user (collection)',
      section: '§4.5 #14',
    });
    assert.deepEqual(create.headers, {
      'ocp-apim-subscription-key': KEYS.collection,
      'x-reference-id': USER,
      'content-type': 'application/json',
    });
    assert.deepEqual(JSON.parse(create.body ?? ''), { providerCallbackHost: 'callbacks.example.com' });

    const key = expectCall(
      agent,
      SANDBOX,
      'POST',
      pathOf('createApiKey', undefined, { referenceId: USER }),
      201,
      '{"apiKey":"f1db798c98df4bcf83b538175893bbf0"}',
      JSON_HEADERS,
    );
    const r2 = await client.createApiKey('disbursement', USER);
    assert.equal(r2.status, 201);
    assert.deepEqual(r2.json, { apiKey: 'f1db798c98df4bcf83b538175893bbf0' });
    assert.equal(r2.operation.product, 'disbursement');
    assert.equal(r2.operation.id, 'createApiKey');
    assert.deepEqual(key.headers, { 'ocp-apim-subscription-key': KEYS.disbursement });
    assert.equal(key.body, undefined);

    const read = expectCall(
      agent,
      SANDBOX,
      'GET',
      pathOf('getApiUser', undefined, { referenceId: USER }),
      200,
      '{"providerCallbackHost":"callbacks.example.com","targetEnvironment":"sandbox"}',
      JSON_HEADERS,
    );
    const r3 = await client.getApiUser('remittance', USER);
    assert.equal(r3.status, 200);
    assert.deepEqual(r3.json, { providerCallbackHost: 'callbacks.example.com', targetEnvironment: 'sandbox' });
    assert.equal(r3.operation.label, 'get API user (remittance)');
    assert.deepEqual(read.headers, { 'ocp-apim-subscription-key': KEYS.remittance });
    agent.assertNoPendingInterceptors();
  } finally {
    await agent.close();
  }
});

test("the collection token goes to the sandbox host, other products' tokens to the base host, with Basic and no X-Target-Environment", async () => {
  const { agent, client } = setup();
  try {
    const basic = basicCredential(USER, 'api-key-secret');
    const tokenBody = `{"access_token":"${JWT}","token_type":"Bearer","expires_in":3600}`;
    const collection = expectCall(agent, SANDBOX, 'POST', pathOf('createAccessToken', 'collection'), 200, tokenBody, JSON_HEADERS);
    const c = await client.createAccessToken('collection', basic);
    assert.equal(c.status, 200);
    assert.deepEqual(c.json, { access_token: JWT, token_type: 'Bearer', expires_in: 3600 });
    assert.deepEqual(c.operation, {
      id: 'createAccessToken',
      product: 'collection',
      label: 'create access token (collection)',
      section: '§4.2 #1',
    });
    assert.deepEqual(collection.headers, { 'ocp-apim-subscription-key': KEYS.collection, authorization: basic });
    assert.equal(collection.body, undefined);

    const disbursement = expectCall(agent, BASE, 'POST', pathOf('createAccessToken', 'disbursement'), 200, tokenBody, JSON_HEADERS);
    const d = await client.createAccessToken('disbursement', basic);
    assert.equal(d.status, 200);
    assert.equal(d.operation.section, '§4.2 #1, §5.2');
    assert.deepEqual(disbursement.headers, { 'ocp-apim-subscription-key': KEYS.disbursement, authorization: basic });

    const remittance = expectCall(agent, BASE, 'POST', pathOf('createAccessToken', 'remittance'), 200, tokenBody, JSON_HEADERS);
    await client.createAccessToken('remittance', basic);
    assert.equal(remittance.headers['ocp-apim-subscription-key'], KEYS.remittance);
    agent.assertNoPendingInterceptors();
  } finally {
    await agent.close();
  }
});

test('the OAuth 2.0 token and bc-authorize send a form body with the form content type and X-Target-Environment', async () => {
  const { agent, client } = setup();
  try {
    const basic = basicCredential(USER, 'api-key-secret');
    const oauth = expectCall(agent, BASE, 'POST', pathOf('createOAuthToken', 'disbursement'), 200, '{}', JSON_HEADERS);
    const r = await client.createOAuthToken('disbursement', basic, { grant_type: 'urn:openid:params:grant-type:ciba', auth_req_id: REF });
    assert.equal(r.operation.id, 'createOAuthToken');
    assert.deepEqual(oauth.headers, {
      'ocp-apim-subscription-key': KEYS.disbursement,
      authorization: basic,
      'x-target-environment': 'sandbox',
      'content-type': 'application/x-www-form-urlencoded',
    });
    assert.equal(oauth.body, `grant_type=urn%3Aopenid%3Aparams%3Agrant-type%3Aciba&auth_req_id=${REF}`);

    const bc = expectCall(
      agent,
      BASE,
      'POST',
      pathOf('bcAuthorize', 'collection'),
      200,
      '{"auth_req_id":"x","interval":5,"expires_in":3600}',
      JSON_HEADERS,
    );
    await client.bcAuthorize(
      'collection',
      BEARER,
      { login_hint: 'ID:46733123450/MSISDN', scope: 'profile', access_type: 'offline' },
      { callbackUrl: 'http://cb.example/callbacks/1' },
    );
    assert.deepEqual(bc.headers, {
      'ocp-apim-subscription-key': KEYS.collection,
      authorization: BEARER,
      'x-callback-url': 'http://cb.example/callbacks/1',
      'x-target-environment': 'sandbox',
      'content-type': 'application/x-www-form-urlencoded',
    });
    assert.deepEqual(Object.fromEntries(new URLSearchParams(bc.body ?? '')), {
      login_hint: 'ID:46733123450/MSISDN',
      scope: 'profile',
      access_type: 'offline',
    });
    agent.assertNoPendingInterceptors();
  } finally {
    await agent.close();
  }
});

test('request to pay: base host, every header, JSON body, and the ApiResponse names the operation', async () => {
  const { agent, client } = setup();
  try {
    const rtp = expectCall(agent, BASE, 'POST', pathOf('requestToPay'), 202, '');
    const r = await client.requestToPay(BEARER, REF, PAYMENT, { callbackUrl: 'http://127.0.0.1:9/callbacks/abc' });
    assert.equal(r.status, 202);
    assert.equal(r.json, undefined);
    assert.equal(r.text, '');
    assert.equal(typeof r.durationMs, 'number');
    assert.deepEqual(r.operation, { id: 'requestToPay', product: 'collection', label: 'request to pay (collection)', section: '§4.2 #2' });
    assert.deepEqual(rtp.headers, {
      'ocp-apim-subscription-key': KEYS.collection,
      authorization: BEARER,
      'x-reference-id': REF,
      'x-callback-url': 'http://127.0.0.1:9/callbacks/abc',
      'x-target-environment': 'sandbox',
      'content-type': 'application/json',
    });
    assert.deepEqual(JSON.parse(rtp.body ?? ''), PAYMENT);
    agent.assertNoPendingInterceptors();
  } finally {
    await agent.close();
  }
});

test('status queries, delivery notification, deposit and refund go to the base host with the right product key', async () => {
  const { agent, client } = setup();
  try {
    const status = expectCall(
      agent,
      BASE,
      'GET',
      pathOf('getRequestToPayStatus', undefined, { referenceId: REF }),
      200,
      '{"status":"PENDING"}',
      JSON_HEADERS,
    );
    const s = await client.getRequestToPayStatus(BEARER, REF);
    assert.deepEqual(s.json, { status: 'PENDING' });
    assert.equal(s.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(status.headers, {
      'ocp-apim-subscription-key': KEYS.collection,
      authorization: BEARER,
      'x-target-environment': 'sandbox',
    });
    assert.equal(status.body, undefined);

    const note = expectCall(agent, BASE, 'POST', pathOf('deliveryNotification', 'collection', { referenceId: REF }), 200, '');
    await client.deliveryNotification(BEARER, REF, 'Thank you', { language: 'sv' });
    assert.deepEqual(note.headers, {
      'ocp-apim-subscription-key': KEYS.collection,
      authorization: BEARER,
      language: 'sv',
      'x-target-environment': 'sandbox',
      'content-type': 'application/json',
    });
    assert.deepEqual(JSON.parse(note.body ?? ''), { notificationMessage: 'Thank you' });

    const deposit = expectCall(agent, BASE, 'POST', pathOf('deposit'), 202);
    const dep = await client.deposit(BEARER, REF, {
      amount: '5',
      currency: 'EUR',
      externalId: 'e',
      payee: { partyIdType: 'MSISDN', partyId: '46733123499' },
    });
    assert.equal(dep.operation.label, 'deposit (disbursement)');
    assert.equal(dep.operation.section, '§4.3 #10');
    assert.equal(deposit.headers['ocp-apim-subscription-key'], KEYS.disbursement);
    assert.equal(deposit.headers['x-reference-id'], REF);
    assert.equal(deposit.headers['content-type'], 'application/json');

    const depStatus = expectCall(agent, BASE, 'GET', pathOf('getDepositStatus', undefined, { referenceId: REF }), 200, '{}', JSON_HEADERS);
    await client.getDepositStatus(BEARER, REF);
    assert.equal(depStatus.headers['ocp-apim-subscription-key'], KEYS.disbursement);

    const refund = expectCall(agent, BASE, 'POST', pathOf('refund'), 202);
    const ref = await client.refund(BEARER, REF, { amount: '5', currency: 'EUR', externalId: 'e', referenceIdToRefund: USER });
    assert.equal(ref.operation.id, 'refund');
    assert.deepEqual(JSON.parse(refund.body ?? ''), { amount: '5', currency: 'EUR', externalId: 'e', referenceIdToRefund: USER });

    const refundStatus = expectCall(
      agent,
      BASE,
      'GET',
      pathOf('getRefundStatus', undefined, { referenceId: REF }),
      200,
      '{}',
      JSON_HEADERS,
    );
    await client.getRefundStatus(BEARER, REF);
    assert.equal(refundStatus.calls, 1);
    agent.assertNoPendingInterceptors();
  } finally {
    await agent.close();
  }
});

test('accounts: remittance balance and disbursement account holder on the sandbox host, the others on the base host', async () => {
  const { agent, client } = setup();
  try {
    const remittance = expectCall(
      agent,
      SANDBOX,
      'GET',
      pathOf('getBalance', 'remittance'),
      200,
      '{"availableBalance":"0","currency":"EUR"}',
      JSON_HEADERS,
    );
    const rb = await client.getBalance('remittance', BEARER);
    assert.deepEqual(rb.operation, {
      id: 'getBalance',
      product: 'remittance',
      label: 'get account balance (remittance)',
      section: '§4.4 #13',
    });
    assert.equal(remittance.headers['ocp-apim-subscription-key'], KEYS.remittance);

    const collection = expectCall(
      agent,
      BASE,
      'GET',
      pathOf('getBalanceInCurrency', 'collection', { currency: 'EUR' }),
      200,
      '{}',
      JSON_HEADERS,
    );
    const cb = await client.getBalance('collection', BEARER, 'EUR');
    assert.equal(cb.operation.id, 'getBalanceInCurrency');
    assert.equal(cb.operation.section, '§4.2 #4');
    assert.equal(collection.calls, 1);

    const disbursementBalance = expectCall(agent, BASE, 'GET', pathOf('getBalance', 'disbursement'), 200, '{}', JSON_HEADERS);
    await client.getBalance('disbursement', BEARER);
    assert.equal(disbursementBalance.headers['ocp-apim-subscription-key'], KEYS.disbursement);

    const holderD = expectCall(
      agent,
      SANDBOX,
      'GET',
      pathOf('accountHolderActive', 'disbursement', { accountHolderIdType: 'msisdn', accountHolderId: '46733123450' }),
      200,
      '{"result":true}',
      JSON_HEADERS,
    );
    const hd = await client.accountHolderActive('disbursement', BEARER, 'msisdn', '46733123450');
    assert.deepEqual(hd.json, { result: true });
    assert.equal(hd.operation.section, '§4.3 #12');
    assert.equal(holderD.headers['ocp-apim-subscription-key'], KEYS.disbursement);

    const holderC = expectCall(
      agent,
      BASE,
      'GET',
      pathOf('accountHolderActive', 'collection', { accountHolderIdType: 'msisdn', accountHolderId: '46733123450' }),
      200,
      '{"result":true}',
      JSON_HEADERS,
    );
    const hc = await client.accountHolderActive('collection', BEARER, 'msisdn', '46733123450');
    assert.equal(hc.operation.section, '§4.2 #8');
    assert.equal(holderC.calls, 1);

    const basic = expectCall(
      agent,
      BASE,
      'GET',
      pathOf('basicUserInfo', 'collection', { accountHolderMSISDN: '46733123450' }),
      200,
      '{}',
      JSON_HEADERS,
    );
    await client.basicUserInfo(BEARER, '46733123450');
    assert.equal(basic.calls, 1);

    const info = expectCall(agent, BASE, 'GET', pathOf('userInfo', 'collection'), 200, '{}', JSON_HEADERS);
    const ui = await client.userInfo('collection', BEARER);
    assert.equal(ui.operation.id, 'userInfo');
    assert.equal(info.headers['x-target-environment'], 'sandbox');
    agent.assertNoPendingInterceptors();
  } finally {
    await agent.close();
  }
});

test('X-Target-Environment: the configured default, a per-call override, and null omits it', async () => {
  const { agent, client } = setup({ targetEnvironment: 'mtnghana' });
  try {
    const byDefault = expectCall(agent, BASE, 'GET', pathOf('getRequestToPayStatus', undefined, { referenceId: REF }), 200, '{}');
    await client.getRequestToPayStatus(BEARER, REF);
    assert.equal(byDefault.headers['x-target-environment'], 'mtnghana');

    const overridden = expectCall(agent, BASE, 'GET', pathOf('getRequestToPayStatus', undefined, { referenceId: REF }), 200, '{}');
    await client.getRequestToPayStatus(BEARER, REF, { targetEnvironment: 'mtnuganda' });
    assert.equal(overridden.headers['x-target-environment'], 'mtnuganda');

    const omitted = expectCall(agent, BASE, 'GET', pathOf('getRequestToPayStatus', undefined, { referenceId: REF }), 200, '{}');
    await client.getRequestToPayStatus(BEARER, REF, { targetEnvironment: null });
    assert.equal(omitted.calls, 1);
    assert.equal('x-target-environment' in omitted.headers, false);
    agent.assertNoPendingInterceptors();
  } finally {
    await agent.close();
  }
});

test("subscription key variants: another product's key, a given key, none; raw body with its own content type", async () => {
  const { agent, client } = setup();
  try {
    const other = expectCall(
      agent,
      BASE,
      'GET',
      pathOf('getRequestToPayStatus', undefined, { referenceId: REF }),
      401,
      '{"statusCode":401,"message":"Access denied"}',
      JSON_HEADERS,
    );
    await client.getRequestToPayStatus(BEARER, REF, { subscriptionKey: { product: 'remittance' } });
    assert.equal(other.headers['ocp-apim-subscription-key'], KEYS.remittance);

    const given = expectCall(agent, BASE, 'GET', pathOf('getRequestToPayStatus', undefined, { referenceId: REF }), 401, '');
    await client.getRequestToPayStatus(BEARER, REF, { subscriptionKey: { key: 'wrong-key-123' } });
    assert.equal(given.headers['ocp-apim-subscription-key'], 'wrong-key-123');

    const none = expectCall(agent, BASE, 'GET', pathOf('getRequestToPayStatus', undefined, { referenceId: REF }), 401, '');
    await client.getRequestToPayStatus(BEARER, REF, { subscriptionKey: 'none', authorization: '' });
    assert.deepEqual(none.headers, { 'x-target-environment': 'sandbox' });

    const raw = expectCall(agent, BASE, 'POST', pathOf('requestToPay'), 415, '');
    await client.requestToPay(BEARER, REF, PAYMENT, { rawBody: { text: '<xml/>', contentType: 'application/xml' } });
    assert.equal(raw.headers['content-type'], 'application/xml');
    assert.equal(raw.body, '<xml/>');

    const rawNoType = expectCall(agent, BASE, 'POST', pathOf('requestToPay'), 400, '');
    await client.requestToPay(BEARER, REF, PAYMENT, { rawBody: { text: '{"amount":' } });
    assert.equal('content-type' in rawNoType.headers, false);
    assert.equal(rawNoType.body, '{"amount":');
    agent.assertNoPendingInterceptors();
  } finally {
    await agent.close();
  }
});

test('a body that is not JSON gives json undefined and keeps the text', async () => {
  const { agent, client } = setup();
  try {
    expectCall(agent, BASE, 'GET', pathOf('getRequestToPayStatus', undefined, { referenceId: REF }), 500, '<html>Internal error</html>', {
      'content-type': 'text/html',
    });
    const r = await client.getRequestToPayStatus(BEARER, REF);
    assert.equal(r.status, 500);
    assert.equal(r.json, undefined);
    assert.equal(r.text, '<html>Internal error</html>');

    expectCall(agent, BASE, 'GET', pathOf('getRequestToPayStatus', undefined, { referenceId: REF }), 200, '   \n', JSON_HEADERS);
    const blank = await client.getRequestToPayStatus(BEARER, REF);
    assert.equal(blank.json, undefined);
    assert.equal(blank.text, '   \n');
  } finally {
    await agent.close();
  }
});

test('the evidence given to onExchange is redacted: key and Authorization headers, JWTs, known secrets', async () => {
  const { agent, client, exchanges, redactor } = setup();
  try {
    redactor.add(KEYS.collection);
    expectCall(
      agent,
      SANDBOX,
      'POST',
      pathOf('createAccessToken', 'collection'),
      200,
      `{"access_token":"${JWT}","token_type":"Bearer","expires_in":3600,"echo":"${KEYS.collection}"}`,
      JSON_HEADERS,
    );
    const basic = basicCredential(USER, 'the-api-key-secret');
    const response = await client.createAccessToken('collection', basic);
    // The caller still gets the real response.
    assert.equal((response.json as { access_token: string }).access_token, JWT);

    assert.equal(exchanges.length, 1);
    const e = exchanges[0]!;
    assert.equal(e.operation, 'create access token (collection)');
    assert.equal(e.request.method, 'POST');
    assert.equal(e.request.url, `${SANDBOX}${pathOf('createAccessToken', 'collection')}`);
    assert.equal(e.request.headers['Ocp-Apim-Subscription-Key'], REDACTED);
    assert.equal(e.request.headers.Authorization, `Basic ${REDACTED}`);
    assert.equal(e.transportError, undefined);
    assert.ok(e.response);
    assert.equal(e.response.status, 200);
    assert.equal(e.response.body.includes(JWT), false, e.response.body);
    assert.equal(e.response.body.includes(KEYS.collection), false, e.response.body);
    assert.deepEqual(JSON.parse(e.response.body), { access_token: REDACTED, token_type: 'Bearer', expires_in: 3600, echo: REDACTED });

    expectCall(agent, BASE, 'POST', pathOf('requestToPay'), 202);
    await client.requestToPay(BEARER, REF, PAYMENT);
    const second = exchanges[1]!;
    assert.equal(second.request.headers.Authorization, `Bearer ${REDACTED}`);
    assert.equal(second.request.headers['X-Reference-Id'], REF);
    assert.deepEqual(JSON.parse(second.request.body ?? ''), PAYMENT);
    assert.equal(second.response?.status, 202);
    assert.equal(second.response?.body, '');
    const serialized = JSON.stringify(exchanges);
    assert.equal(serialized.includes(JWT), false);
    assert.equal(serialized.includes(KEYS.collection), false);
  } finally {
    await agent.close();
  }
});

test('the evidence of create API key masks the apiKey field of the response', async () => {
  const { agent, client, exchanges } = setup();
  try {
    const apiKey = 'f1db798c98df4bcf83b538175893bbf0';
    expectCall(
      agent,
      SANDBOX,
      'POST',
      pathOf('createApiKey', undefined, { referenceId: USER }),
      201,
      `{"apiKey":"${apiKey}"}`,
      JSON_HEADERS,
    );
    const r = await client.createApiKey('collection', USER);
    assert.deepEqual(r.json, { apiKey });
    const body = exchanges[0]?.response?.body ?? '';
    assert.equal(body.includes(apiKey), false, `the API key is in the evidence: ${body}`);
    assert.deepEqual(JSON.parse(body), { apiKey: REDACTED });
  } finally {
    await agent.close();
  }
});

test('a transport error becomes a fatal TargetUnavailableError naming the operation and URL, with transportError in the evidence', async () => {
  const { agent, client, exchanges } = setup();
  try {
    agent
      .get(BASE)
      .intercept({ path: pathOf('requestToPay'), method: 'POST' })
      .replyWithError(new Error('socket exploded'));
    const error = await client.requestToPay(BEARER, REF, PAYMENT).then(
      () => assert.fail('expected a TargetUnavailableError'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof TargetUnavailableError, String(error));
    assert.equal(error.fatal, true);
    assert.equal(error.name, 'TargetUnavailableError');
    assert.equal(error.operation, 'request to pay (collection)');
    assert.equal(error.url, `${BASE}${pathOf('requestToPay')}`);
    assert.match(
      error.message,
      new RegExp(
        `^request to pay \\(collection\\): the target did not answer ${escapeRegExp(`${BASE}${pathOf('requestToPay')}`)}: .*socket exploded`,
      ),
    );
    assert.equal(exchanges.length, 1);
    const e = exchanges[0]!;
    assert.equal(e.response, undefined);
    assert.match(e.transportError ?? '', /socket exploded/);
    assert.equal(e.request.headers.Authorization, `Bearer ${REDACTED}`);
  } finally {
    await agent.close();
  }
});

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

test('connection refused on a closed local port is a TargetUnavailableError (real Agent)', async () => {
  const probe = createServer();
  const port = await listen(probe);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const exchanges: Exchange[] = [];
  const url = `http://127.0.0.1:${port}`;
  const client = new MomoClient({
    baseUrl: url,
    sandboxUrl: url,
    subscriptionKeys: { ...KEYS },
    targetEnvironment: 'sandbox',
    connectTimeoutMs: 1000,
    requestTimeoutMs: 1000,
    redactor: new Redactor(),
    onExchange: (e) => exchanges.push(e),
  });
  try {
    const error = await client.getBalance('collection', BEARER).then(
      () => assert.fail('expected a rejection'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof TargetUnavailableError, String(error));
    assert.equal(error.fatal, true);
    assert.equal(error.url, `${url}${pathOf('getBalance', 'collection')}`);
    assert.ok(error.message.includes('get account balance (collection)'), error.message);
    assert.ok(error.message.includes(`${url}${pathOf('getBalance', 'collection')}`), error.message);
    assert.match(error.message, /ECONNREFUSED/);
    assert.match(exchanges[0]?.transportError ?? '', /ECONNREFUSED/);
  } finally {
    await client.close();
  }
});

test('a server that never answers: requestTimeoutMs 200 gives a TargetUnavailableError, not a wait for ever', {
  timeout: 30_000,
}, async () => {
  const server = createServer(() => {
    /* never answers */
  });
  const port = await listen(server);
  const url = `http://127.0.0.1:${port}`;
  const exchanges: Exchange[] = [];
  const client = new MomoClient({
    baseUrl: url,
    sandboxUrl: url,
    subscriptionKeys: { ...KEYS },
    targetEnvironment: 'sandbox',
    connectTimeoutMs: 1000,
    requestTimeoutMs: 200,
    redactor: new Redactor(),
    onExchange: (e) => exchanges.push(e),
  });
  try {
    const error = await client.getRequestToPayStatus(BEARER, REF).then(
      () => assert.fail('expected a rejection'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof TargetUnavailableError, String(error));
    assert.equal(error.fatal, true);
    assert.match(error.message, /timed out: no answer within 200 ms/i);
    assert.ok(exchanges[0]?.transportError);
  } finally {
    await client.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test(`after ${GIVE_UP_AFTER_UNANSWERED} calls in a row without an answer the client stops calling; any answer before that resets the count`, async () => {
  const { agent, client, exchanges } = setup();
  try {
    const pool = agent.get(BASE);
    const balance = { path: pathOf('getBalance', 'collection'), method: 'GET' };
    const unanswered = () => pool.intercept(balance).replyWithError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    const fail = () =>
      client.getBalance('collection', BEARER).then(
        () => assert.fail('expected a rejection'),
        (e: unknown) => e as TargetUnavailableError,
      );
    for (let i = 1; i < GIVE_UP_AFTER_UNANSWERED; i += 1) {
      unanswered();
      await fail();
    }
    pool.intercept(balance).reply(200, { availableBalance: '1', currency: 'EUR' });
    await client.getBalance('collection', BEARER);
    for (let i = 0; i < GIVE_UP_AFTER_UNANSWERED; i += 1) {
      unanswered();
      assert.match(
        (await fail()).message,
        /the target did not answer .*connection reset: the server closed the connection without answering \(ECONNRESET/,
      );
    }
    const sent = exchanges.length;
    const notCalled = await fail();
    assert.ok(notCalled instanceof TargetUnavailableError && notCalled.fatal);
    assert.match(
      notCalled.message,
      new RegExp(
        `^Not called: the last ${GIVE_UP_AFTER_UNANSWERED} calls to the target got no answer, so the harness stopped calling it \\(the last: connection reset`,
      ),
    );
    assert.equal(exchanges.length, sent, 'a request that was not sent has no exchange');
  } finally {
    await agent.close();
  }
});

/** A local server whose every answer is what `answer` writes: the client against real sockets, not MockAgent. */
async function withServer(answer: (res: import('node:http').ServerResponse) => void, use: (url: string) => Promise<void>): Promise<void> {
  const server = createServer((_req, res) => answer(res));
  const url = `http://127.0.0.1:${await listen(server)}`;
  try {
    await use(url);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

function realClient(url: string, options: Partial<ClientOptions> = {}) {
  const exchanges: Exchange[] = [];
  const client = new MomoClient({
    baseUrl: url,
    sandboxUrl: url,
    subscriptionKeys: { ...KEYS },
    targetEnvironment: 'sandbox',
    connectTimeoutMs: 1000,
    requestTimeoutMs: 1000,
    redactor: new Redactor(),
    onExchange: (e) => exchanges.push(e),
    ...options,
  });
  return { client, exchanges };
}

/** Writes `chunk` for as long as the client reads, and stops when it goes: a body without end, or of `bytes`. */
function stream(res: import('node:http').ServerResponse, { bytes = Infinity, chunk = Buffer.alloc(64 * 1024, 'x') } = {}): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  let sent = 0;
  const pump = () => {
    while (!res.destroyed && sent < bytes) {
      const piece = chunk.subarray(0, Math.min(chunk.length, bytes - sent));
      sent += piece.length;
      if (!res.write(piece)) return;
    }
    if (sent >= bytes) res.end();
  };
  res.on('drain', pump);
  pump();
}

test('a body without end is read up to maxResponseBytes and no further: the answer says it exceeded, the evidence says where it was cut', {
  timeout: 30_000,
}, async () => {
  await withServer(
    (res) => stream(res),
    async (url) => {
      const { client, exchanges } = realClient(url, { maxResponseBytes: 256 * 1024 });
      try {
        const response = await client.getBalance('collection', BEARER);
        assert.equal(response.status, 200);
        assert.equal(response.exceededLimit, 256 * 1024);
        assert.equal(response.text.length, 256 * 1024);
        assert.equal(response.json, undefined);
        const evidence = exchanges[0]?.response;
        assert.ok(evidence);
        assert.deepEqual(evidence.bodyCut, {
          keptCharacters: 32 * 1024,
          characters: 256 * 1024,
          bytes: 256 * 1024,
          exceededLimit: 256 * 1024,
        });
        assert.ok(evidence.body.length < 33 * 1024, `the evidence keeps ${evidence.body.length} characters`);
        assert.match(
          evidence.body.slice(-300),
          /… \[cut after 32768 of 262144 characters \(262144 bytes\): the evidence keeps 32 KiB of a body; the body exceeded 256 KiB \(MOMO_MAX_RESPONSE_BYTES\): the harness read that much of it and no further\]$/,
        );
        // The connection was closed, not drained: the next call gets a fresh answer, no wait.
        assert.equal((await client.getBalance('collection', BEARER)).exceededLimit, 256 * 1024);
      } finally {
        await client.close();
      }
    },
  );
});

test('a body of exactly maxResponseBytes is read whole; one byte more exceeds it', { timeout: 30_000 }, async () => {
  for (const [bytes, exceeded] of [
    [4096, false],
    [4097, true],
  ] as const) {
    await withServer(
      (res) => stream(res, { bytes }),
      async (url) => {
        const { client } = realClient(url, { maxResponseBytes: 4096 });
        try {
          const response = await client.getBalance('collection', BEARER);
          assert.equal(response.text.length, 4096);
          assert.equal(response.exceededLimit !== undefined, exceeded, `${bytes} bytes`);
        } finally {
          await client.close();
        }
      },
    );
  }
});

test('a body that drips without end is a target that did not answer in time: a TargetUnavailableError naming the deadline, not a wait for ever', {
  timeout: 30_000,
}, async () => {
  await withServer(
    (res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
      const drip = setInterval(() => res.write(' '), 50);
      res.on('close', () => clearInterval(drip));
    },
    async (url) => {
      const { client, exchanges } = realClient(url, { connectTimeoutMs: 200, requestTimeoutMs: 300 });
      try {
        const error = await client.getBalance('collection', BEARER).then(
          () => assert.fail('expected a rejection'),
          (e: unknown) => e,
        );
        assert.ok(error instanceof TargetUnavailableError && error.fatal, String(error));
        assert.match(
          error.message,
          /timed out: HTTP 200 came, but its body did not end within 500 ms \(MOMO_CONNECT_TIMEOUT_MS \+ MOMO_REQUEST_TIMEOUT_MS\).*raise MOMO_REQUEST_TIMEOUT_MS \(now 300\)/,
        );
        assert.equal(exchanges[0]?.response, undefined);
        assert.match(exchanges[0]?.transportError ?? '', /its body did not end within 500 ms/);
      } finally {
        await client.close();
      }
    },
  );
});

test('a long body that is read whole is cut in the evidence only, saying where and how long it was; bytes that are not UTF-8 read as U+FFFD', {
  timeout: 30_000,
}, async () => {
  const long = `{"padding":"${'y'.repeat(100_000)}"}`;
  await withServer(
    (res) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(Buffer.concat([Buffer.from(long.slice(0, -2)), Buffer.from([0xff, 0xfe]), Buffer.from('"}')])),
    async (url) => {
      const { client, exchanges } = realClient(url);
      try {
        const response = await client.getBalance('collection', BEARER);
        assert.equal(response.exceededLimit, undefined);
        assert.ok((response.json as { padding: string }).padding.endsWith('yy\uFFFD\uFFFD'), 'the bytes that are not UTF-8 read as U+FFFD');
        const evidence = exchanges[0]!.response!;
        assert.equal(evidence.bodyCut?.exceededLimit, undefined);
        assert.equal(evidence.bodyCut?.keptCharacters, 32 * 1024);
        assert.match(
          evidence.body.slice(-200),
          /… \[cut after 32768 of \d+ characters \(100016 bytes\): the evidence keeps 32 KiB of a body\]$/,
        );
      } finally {
        await client.close();
      }
    },
  );
});

test('each exchange records whose secrets it carried, never their values: a reproduction fetches again only what the run held', async () => {
  const { agent, client, exchanges, redactor } = setup();
  agent
    .get(BASE)
    .intercept({ path: pathOf('getBalance', 'collection'), method: 'GET' })
    .reply(200, {})
    .times(2);
  agent
    .get(BASE)
    .intercept({ path: pathOf('createAccessToken', 'disbursement'), method: 'POST' })
    .reply(200, {})
    .times(2);
  redactor.add(JWT, 'access token');
  redactor.addBasicCredential(USER, 'api-key-of-the-user');
  await client.getBalance('collection', BEARER);
  await client.getBalance('collection', 'Bearer forged-token-value');
  await client.createAccessToken('disbursement', basicCredential(USER, 'api-key-of-the-user'));
  await client.createAccessToken('disbursement', basicCredential(USER, 'a-wrong-key'), { subscriptionKey: { product: 'collection' } });
  assert.deepEqual(
    exchanges.map((e) => e.credentials),
    [
      {
        subscriptionKey: 'collection',
        accessToken: { product: 'collection', tokenUrl: `${SANDBOX}${pathOf('createAccessToken', 'collection')}` },
      },
      { subscriptionKey: 'collection', otherToken: true },
      { subscriptionKey: 'disbursement', basic: 'disbursement' },
      { subscriptionKey: 'collection', otherBasic: true },
    ],
  );
  assert.ok(exchanges.every((e) => e.startedAt !== undefined && !Number.isNaN(Date.parse(e.startedAt))));
});
