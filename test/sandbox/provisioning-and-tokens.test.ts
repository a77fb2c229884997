import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { PRODUCTS, type Product } from '../../core/products.ts';
import { operation } from '../../core/catalogue/routes.ts';
import {
  KEYS,
  assertSchema,
  basic,
  path,
  rawPath,
  requestToPayBody,
  startSandbox,
  type Caller,
  type CallOptions,
  type TestSandbox,
  withSandbox,
} from '../support/sandbox.ts';
import { servedOperations, type ServedOperation } from '../support/sandbox.ts';

// The API gateway's two 401 messages (real-api-notes: "Missing or invalid subscription key").
const MISSING_KEY = 'Access denied due to missing subscription key. Make sure to include subscription key when making requests to an API.';
const INVALID_KEY = 'Access denied due to invalid subscription key. Make sure to provide a valid key for an active subscription.';
const UNKNOWN_KEY = 'not-a-subscription-key-of-this-sandbox';
const ORDINARY_MSISDN = '46733123499';

function createApiUser(
  sandbox: TestSandbox,
  id: string,
  options: { key?: string; payload?: unknown } = {},
): Promise<LightMyRequestResponse> {
  return sandbox.call({
    method: 'POST',
    url: path('createApiUser'),
    headers: { 'ocp-apim-subscription-key': options.key ?? KEYS.collection, 'x-reference-id': id },
    payload: 'payload' in options ? options.payload : { providerCallbackHost: 'callbacks.example.com' },
  });
}

function createApiKey(sandbox: TestSandbox, id: string, key: string = KEYS.collection): Promise<LightMyRequestResponse> {
  return sandbox.call({
    method: 'POST',
    url: path('createApiKey', undefined, { referenceId: id }),
    headers: { 'ocp-apim-subscription-key': key },
  });
}

function getApiUser(sandbox: TestSandbox, id: string, key: string = KEYS.collection): Promise<LightMyRequestResponse> {
  return sandbox.call({
    method: 'GET',
    url: path('getApiUser', undefined, { referenceId: id }),
    headers: { 'ocp-apim-subscription-key': key },
  });
}

function requestToken(
  sandbox: TestSandbox,
  product: Product,
  authorization: string | undefined,
  extra: Partial<CallOptions> = {},
): Promise<LightMyRequestResponse> {
  return sandbox.call({
    method: 'POST',
    url: path('createAccessToken', product),
    ...extra,
    headers: { 'ocp-apim-subscription-key': KEYS[product], authorization, ...extra.headers },
  });
}

/** A Bearer-protected business operation of each product that needs no state: its balance. */
function balance(
  sandbox: TestSandbox,
  product: Product,
  authorization: string | undefined,
  key: string = KEYS[product],
): Promise<LightMyRequestResponse> {
  return sandbox.call({
    method: 'GET',
    url: path('getBalance', product),
    headers: { 'ocp-apim-subscription-key': key, authorization, 'x-target-environment': 'sandbox' },
  });
}

async function records(sandbox: TestSandbox): Promise<Record<string, number>> {
  const health = await sandbox.call({ method: 'GET', url: '/health' });
  assert.equal(health.statusCode, 200);
  return health.json().records as Record<string, number>;
}

function assertOAuthError(res: LightMyRequestResponse, status: number, error: string): void {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json();
  assertSchema('oauth-error', body);
  assert.deepEqual(body, { error });
}

function assertInvalidToken(res: LightMyRequestResponse): void {
  assertOAuthError(res, 401, 'invalid_token');
  const challenge = res.headers['www-authenticate'];
  assert.equal(typeof challenge, 'string', 'a 401 for a Bearer operation carries WWW-Authenticate');
  assert.match(challenge as string, /^Bearer\b.*error="invalid_token"/);
}

function assertGatewayError(res: LightMyRequestResponse, message: string): void {
  assert.equal(res.statusCode, 401, res.body);
  const body = res.json();
  assertSchema('gateway-error', body);
  assert.deepEqual(body, { statusCode: 401, message });
}

function assertBadRequest(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 400, res.body);
  const body = res.json();
  assertSchema('bad-request', body);
  assert.equal(body.statusCode, 400);
}

function assertBusinessError(res: LightMyRequestResponse, status: number, schema: string, code: string): void {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json();
  assertSchema(schema, body);
  assert.equal(body.code, code);
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function withOtherSignature(token: string): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  // The first character carries six full bits of the signature, so changing it always changes the bytes.
  return `${header}.${payload}.${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`;
}

function decodePayload(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

// ---------------------------------------------------------------------------------------------------
// 1. Provisioning (§4.5, §7 set C, rules 1–2)
// ---------------------------------------------------------------------------------------------------

describe('provisioning', () => {
  test(`POST ${path('createApiUser')} creates the API user: 201 with an empty body`, async () => {
    await withSandbox({}, async (sandbox) => {
      const id = randomUUID();
      const created = await createApiUser(sandbox, id);
      assert.equal(created.statusCode, 201, created.body);
      assert.equal(created.body, '');
      assert.equal((await getApiUser(sandbox, id)).statusCode, 200);
      assert.equal((await records(sandbox)).apiUsers, 1);
    });
  });

  test('a duplicate X-Reference-Id is 409 RESOURCE_ALREADY_EXIST and leaves the first user unchanged', async () => {
    await withSandbox({}, async (sandbox) => {
      const id = randomUUID();
      assert.equal((await createApiUser(sandbox, id, { payload: { providerCallbackHost: 'first.example.com' } })).statusCode, 201);
      for (const key of [KEYS.collection, KEYS.remittance]) {
        const again = await createApiUser(sandbox, id, { key, payload: { providerCallbackHost: 'second.example.com' } });
        assertBusinessError(again, 409, 'error-set-c', 'RESOURCE_ALREADY_EXIST');
      }
      const user = await getApiUser(sandbox, id);
      assert.deepEqual(user.json(), { providerCallbackHost: 'first.example.com', targetEnvironment: 'sandbox' });
      assert.equal((await records(sandbox)).apiUsers, 1);
    });
  });

  test('an X-Reference-Id header that is missing or not a UUID v4 is 400 and creates nothing', async () => {
    await withSandbox({}, async (sandbox) => {
      const cases: Record<string, string | undefined> = {
        'not a UUID': 'not-a-uuid',
        'UUID v1': 'c232ab00-9414-11ec-b3c8-9e6bdeced846',
        'UUID without dashes': randomUUID().replaceAll('-', ''),
        empty: '',
        missing: undefined,
      };
      for (const [name, id] of Object.entries(cases)) {
        const res = await sandbox.call({
          method: 'POST',
          url: path('createApiUser'),
          headers: { 'ocp-apim-subscription-key': KEYS.collection, 'x-reference-id': id },
          payload: { providerCallbackHost: 'callbacks.example.com' },
        });
        assert.equal(res.statusCode, 400, `${name}: ${res.body}`);
        assertSchema('bad-request', res.json());
      }
      assert.equal((await records(sandbox)).apiUsers, 0);
    });
  });

  test('a missing or empty providerCallbackHost is 400 and creates nothing', async () => {
    await withSandbox({}, async (sandbox) => {
      const bodies: Record<string, unknown> = {
        'empty object': {},
        'empty host': { providerCallbackHost: '' },
        'other field only': { callbackHost: 'callbacks.example.com' },
        'no body': undefined,
      };
      for (const [name, payload] of Object.entries(bodies)) {
        const id = randomUUID();
        const res = await createApiUser(sandbox, id, { payload });
        assert.equal(res.statusCode, 400, `${name}: ${res.body}`);
        assertSchema('bad-request', res.json());
        assertBusinessError(await getApiUser(sandbox, id), 404, 'error-set-c', 'RESOURCE_NOT_FOUND');
      }
      assert.equal((await records(sandbox)).apiUsers, 0);
    });
  });

  test('a providerCallbackHost given as a URL is stored as given and its host is the one callbacks must name; --strict takes host names only', async () => {
    const url = 'http://merchant.example:8090/momo/callbacks';
    await withSandbox({}, async (sandbox) => {
      const caller = await sandbox.provision('collection', { providerCallbackHost: url });
      assert.equal((await getApiUser(sandbox, caller.userId)).json().providerCallbackHost, url, 'read back as given');
      const pay = (callback: string) =>
        sandbox.call({
          method: 'POST',
          url: path('requestToPay'),
          headers: { ...caller.headers, 'x-reference-id': randomUUID(), 'x-callback-url': callback },
          payload: requestToPayBody(),
        });
      assert.equal((await pay('http://merchant.example:8090/elsewhere')).statusCode, 202, 'the same host and port');
      assertBusinessError(await pay('http://other.example:8090/momo/callbacks'), 500, 'error-set-a', 'INVALID_CALLBACK_URL_HOST');
      assertBusinessError(await pay('http://merchant.example:9999/momo/callbacks'), 500, 'error-set-a', 'INVALID_CALLBACK_URL_HOST');
    });
    await withSandbox({ strict: true }, async (sandbox) => {
      const id = randomUUID();
      const res = await createApiUser(sandbox, id, { payload: { providerCallbackHost: url } });
      assertBadRequest(res);
      assert.match(res.json().message, /providerCallbackHost/);
      assert.equal(
        (await createApiUser(sandbox, randomUUID(), { payload: { providerCallbackHost: 'merchant.example:8090' } })).statusCode,
        201,
      );
    });
  });

  test(`POST ${rawPath('createApiKey', undefined, { referenceId: '{id}' })} is 201 {apiKey} of 32 hex characters, and the key gets a token`, async () => {
    await withSandbox({}, async (sandbox) => {
      const id = randomUUID();
      assert.equal((await createApiUser(sandbox, id)).statusCode, 201);
      const res = await createApiKey(sandbox, id);
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      assertSchema('api-key', body);
      assert.deepEqual(Object.keys(body), ['apiKey']);
      assert.match(body.apiKey, /^[0-9a-f]{32}$/);
      assert.equal((await requestToken(sandbox, 'collection', basic(id, body.apiKey))).statusCode, 200);
    });
  });

  test('a second API key replaces the first: the old key no longer gets a token', async () => {
    await withSandbox({}, async (sandbox) => {
      const id = randomUUID();
      assert.equal((await createApiUser(sandbox, id)).statusCode, 201);
      const first = (await createApiKey(sandbox, id)).json().apiKey as string;
      assert.equal((await requestToken(sandbox, 'collection', basic(id, first))).statusCode, 200);
      const second = await createApiKey(sandbox, id);
      assert.equal(second.statusCode, 201);
      const secondKey = second.json().apiKey as string;
      assert.notEqual(secondKey, first);
      assertOAuthError(await requestToken(sandbox, 'collection', basic(id, first)), 401, 'login_failed');
      assert.equal((await requestToken(sandbox, 'collection', basic(id, secondKey))).statusCode, 200);
    });
  });

  test('an API key for an unknown API user is 404 RESOURCE_NOT_FOUND; a non-UUID path is 400', async () => {
    await withSandbox({}, async (sandbox) => {
      assertBusinessError(await createApiKey(sandbox, randomUUID()), 404, 'error-set-c', 'RESOURCE_NOT_FOUND');
      assertBadRequest(await createApiKey(sandbox, 'not-a-uuid'));
      assertBadRequest(await createApiKey(sandbox, 'c232ab00-9414-11ec-b3c8-9e6bdeced846'));
      assert.equal((await records(sandbox)).apiUsers, 0);
    });
  });

  test(`GET ${rawPath('getApiUser', undefined, { referenceId: '{id}' })} is 200 {providerCallbackHost, targetEnvironment: "sandbox"} and never shows the key`, async () => {
    await withSandbox({}, async (sandbox) => {
      const id = randomUUID();
      assert.equal((await createApiUser(sandbox, id, { payload: { providerCallbackHost: 'webhook.example.org:8443' } })).statusCode, 201);
      assert.equal((await createApiKey(sandbox, id)).statusCode, 201);
      const res = await getApiUser(sandbox, id);
      assert.equal(res.statusCode, 200, res.body);
      const body = res.json();
      assertSchema('api-user', body);
      assert.deepEqual(body, { providerCallbackHost: 'webhook.example.org:8443', targetEnvironment: 'sandbox' });
    });
  });

  test('GET of an unknown API user is 404 RESOURCE_NOT_FOUND; a non-UUID id is 400', async () => {
    await withSandbox({}, async (sandbox) => {
      const res = await getApiUser(sandbox, randomUUID());
      assertBusinessError(res, 404, 'error-set-c', 'RESOURCE_NOT_FOUND');
      assertBadRequest(await getApiUser(sandbox, 'not-a-uuid'));
    });
  });

  test('provisioning accepts the key of any product, and the user belongs to the product whose key created it', async () => {
    await withSandbox({}, async (sandbox) => {
      for (const product of PRODUCTS) {
        const id = randomUUID();
        assert.equal((await createApiUser(sandbox, id, { key: KEYS[product] })).statusCode, 201, product);
        // Reading and keying the user works with any product's key.
        for (const other of PRODUCTS)
          assert.equal((await getApiUser(sandbox, id, KEYS[other])).statusCode, 200, `${product} read with ${other}`);
        const otherProduct = PRODUCTS.find((p) => p !== product)!;
        const key = await createApiKey(sandbox, id, KEYS[otherProduct]);
        assert.equal(key.statusCode, 201, `${product} keyed with ${otherProduct}`);
        const apiKey = key.json().apiKey as string;
        assert.equal((await requestToken(sandbox, product, basic(id, apiKey))).statusCode, 200, `${product} token`);
      }
    });
  });
});

// ---------------------------------------------------------------------------------------------------
// 2. The gateway: a subscription key on every operation
// ---------------------------------------------------------------------------------------------------

const PATH_VALUES: Record<string, () => string> = {
  referenceId: () => randomUUID(),
  currency: () => 'EUR',
  accountHolderIdType: () => 'msisdn',
  accountHolderId: () => ORDINARY_MSISDN,
  accountHolderMSISDN: () => ORDINARY_MSISDN,
};

function fillPath(url: string): string {
  return url.replace(/:([A-Za-z]+)/g, (_, name: string) => {
    const value = PATH_VALUES[name];
    if (!value) throw new Error(`no test value for path parameter :${name} of ${url}`);
    return value();
  });
}

interface World {
  callers: Record<Product, Caller>;
  consentTokens: Record<Product, string>;
}

async function world(sandbox: TestSandbox): Promise<World> {
  const callers = {} as Record<Product, Caller>;
  const consentTokens = {} as Record<Product, string>;
  for (const product of PRODUCTS) {
    callers[product] = await sandbox.provision(product);
    consentTokens[product] = sandbox.context.tokens.issue(
      { sub: callers[product].userId, prd: product, use: 'consent', msisdn: ORDINARY_MSISDN, scope: 'profile' },
      3600,
    );
  }
  return { callers, consentTokens };
}

/** A request to the operation that is right in everything the gateway does not look at. */
function requestFor(op: ServedOperation, { callers, consentTokens }: World, key: string | undefined): CallOptions {
  const headers: Record<string, string | undefined> = { 'ocp-apim-subscription-key': key };
  if (op.requiredHeaders?.includes('x-reference-id')) headers['x-reference-id'] = randomUUID();
  if (op.requiredHeaders?.includes('x-target-environment')) headers['x-target-environment'] = 'sandbox';
  if (op.product !== 'provisioning') {
    const caller = callers[op.product];
    if (op.credential === 'bearer') headers.authorization = `Bearer ${caller.token}`;
    if (op.credential === 'consent') headers.authorization = `Bearer ${consentTokens[op.product]}`;
    if (op.credential === 'basic') headers.authorization = basic(caller.userId, caller.apiKey);
  }
  return { method: op.method, url: fillPath(op.url), headers };
}

describe('gateway subscription key on every operation', () => {
  test('no Ocp-Apim-Subscription-Key: 401 with the missing-key message, and nothing is created', async (t) => {
    await withSandbox({}, async (sandbox) => {
      const w = await world(sandbox);
      const before = await records(sandbox);
      for (const op of servedOperations()) {
        await t.test(`${op.method} ${op.url}`, async () => {
          assertGatewayError(await sandbox.call(requestFor(op, w, undefined)), MISSING_KEY);
        });
      }
      assert.deepEqual(await records(sandbox), before);
    });
  });

  test('an unknown Ocp-Apim-Subscription-Key: 401 with the invalid-key message', async (t) => {
    await withSandbox({}, async (sandbox) => {
      const w = await world(sandbox);
      const before = await records(sandbox);
      for (const op of servedOperations()) {
        await t.test(`${op.method} ${op.url}`, async () => {
          assertGatewayError(await sandbox.call(requestFor(op, w, UNKNOWN_KEY)), INVALID_KEY);
        });
      }
      assert.deepEqual(await records(sandbox), before);
    });
  });

  test('the key of another product on a product operation: 401 with the invalid-key message', async (t) => {
    await withSandbox({}, async (sandbox) => {
      const w = await world(sandbox);
      const before = await records(sandbox);
      for (const op of servedOperations()) {
        if (op.product === 'provisioning') continue;
        for (const other of PRODUCTS.filter((p) => p !== op.product)) {
          await t.test(`${op.method} ${op.url} with the ${other} key`, async () => {
            assertGatewayError(await sandbox.call(requestFor(op, w, KEYS[other])), INVALID_KEY);
          });
        }
      }
      assert.deepEqual(await records(sandbox), before);
    });
  });

  test('control: the same requests with the right key pass the gateway on every operation', async (t) => {
    await withSandbox({}, async (sandbox) => {
      const w = await world(sandbox);
      for (const op of servedOperations()) {
        const keys = op.product === 'provisioning' ? PRODUCTS.map((p) => KEYS[p]) : [KEYS[op.product]];
        for (const key of keys) {
          await t.test(`${op.method} ${op.url} with ${key}`, async () => {
            const res = await sandbox.call(requestFor(op, w, key));
            assert.notEqual(res.statusCode, 401, res.body);
          });
        }
      }
    });
  });
});

// ---------------------------------------------------------------------------------------------------
// 3. Access tokens: createAccessToken under each product, with Basic credentials
// ---------------------------------------------------------------------------------------------------

describe('access tokens', () => {
  for (const [profile, tokenType] of [
    ['spec', 'Bearer'],
    ['mtn-sandbox', 'access_token'],
  ] as const) {
    test(`${profile} profile: a token for each product, token_type "${tokenType}", expires_in from the settings, no-store`, async () => {
      await withSandbox({ profile, tokenLifetimeSeconds: 1234 }, async (sandbox) => {
        for (const product of PRODUCTS) {
          const caller = await sandbox.provision(product);
          const res = await requestToken(sandbox, product, basic(caller.userId, caller.apiKey));
          assert.equal(res.statusCode, 200, `${product}: ${res.body}`);
          assert.equal(res.headers['cache-control'], 'no-store');
          const body = res.json();
          assertSchema('access-token', body);
          assert.equal(body.token_type, tokenType);
          assert.equal(body.expires_in, 1234);
          assert.equal(body.expires_in, sandbox.settings.tokenLifetimeSeconds);
          assert.equal(
            (await balance(sandbox, product, `Bearer ${body.access_token}`)).statusCode,
            200,
            `${product} token opens its balance`,
          );
        }
      });
    });
  }

  for (const [profile, status] of [
    ['spec', 401],
    ['mtn-sandbox', 500],
  ] as const) {
    test(`${profile} profile: a failed login is ${status} {"error":"login_failed"}`, async (t) => {
      await withSandbox({ profile }, async (sandbox) => {
        const callers = {} as Record<Product, Caller>;
        for (const product of PRODUCTS) callers[product] = await sandbox.provision(product);
        const keyless = randomUUID();
        assert.equal((await createApiUser(sandbox, keyless)).statusCode, 201);
        const c = callers.collection;
        const cases: Array<[string, Product, string | undefined]> = [
          ...PRODUCTS.map((p) => [`wrong API key (${p})`, p, basic(callers[p].userId, 'f'.repeat(32))] as [string, Product, string]),
          ['unknown API user', 'collection', basic(randomUUID(), c.apiKey)],
          ['API user without a key', 'collection', basic(keyless, '')],
          ['no Authorization', 'collection', undefined],
          ['Basic that is not base64', 'collection', 'Basic !!!not-base64!!!'],
          ['Basic without a colon', 'collection', `Basic ${Buffer.from(c.userId + c.apiKey).toString('base64')}`],
          ['Basic with nothing after the scheme', 'collection', 'Basic '],
          ['a Bearer token instead of Basic', 'collection', `Bearer ${c.token}`],
        ];
        for (const [name, product, authorization] of cases) {
          await t.test(name, async () => {
            assertOAuthError(await requestToken(sandbox, product, authorization), status, 'login_failed');
          });
        }
      });
    });
  }

  test('an API user of one product asking for a token of another: 500 NOT_ALLOWED_TARGET_ENVIRONMENT', async () => {
    for (const profile of ['spec', 'mtn-sandbox'] as const) {
      await withSandbox({ profile }, async (sandbox) => {
        for (const owner of PRODUCTS) {
          const caller = await sandbox.provision(owner);
          for (const other of PRODUCTS.filter((p) => p !== owner)) {
            const res = await requestToken(sandbox, other, basic(caller.userId, caller.apiKey));
            assertBusinessError(res, 500, 'error-set-b', 'NOT_ALLOWED_TARGET_ENVIRONMENT');
          }
        }
      });
    }
  });

  test(`a body sent to ${operation('createAccessToken').path.replace('/{product}', '')} is ignored, and refused (400) only under --strict`, async () => {
    const bodies = [
      { payload: { grant_type: 'client_credentials' } },
      { payload: 'grant_type=client_credentials', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      // MTN's Java SDK sends Content-Type: application/json with no body at all.
      { payload: '', headers: { 'content-type': 'application/json' } },
    ];
    await withSandbox({}, async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const authorization = basic(caller.userId, caller.apiKey);
      for (const body of bodies) {
        const res = await requestToken(sandbox, 'collection', authorization, body);
        assert.equal(res.statusCode, 200, `${JSON.stringify(body)}: ${res.body}`);
      }
    });
    await withSandbox({ strict: true }, async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const authorization = basic(caller.userId, caller.apiKey);
      assertBadRequest(await requestToken(sandbox, 'collection', authorization, bodies[0]));
      assertBadRequest(await requestToken(sandbox, 'collection', authorization, bodies[1]));
      // No body is no body, whatever the content type says.
      assert.equal((await requestToken(sandbox, 'collection', authorization, bodies[2])).statusCode, 200);
      assert.equal((await requestToken(sandbox, 'collection', authorization)).statusCode, 200);
    });
  });
});

// ---------------------------------------------------------------------------------------------------
// 4. Bearer tokens on business operations
// ---------------------------------------------------------------------------------------------------

describe('bearer tokens on business operations', () => {
  test('no Authorization: 401 {"error":"invalid_token"} with a WWW-Authenticate challenge', async () => {
    await withSandbox({}, async (sandbox) => {
      for (const product of PRODUCTS) assertInvalidToken(await balance(sandbox, product, undefined));
      const id = randomUUID();
      const res = await sandbox.call({
        method: 'POST',
        url: path('requestToPay'),
        headers: { 'ocp-apim-subscription-key': KEYS.collection, 'x-reference-id': id, 'x-target-environment': 'sandbox' },
        payload: requestToPayBody(),
      });
      assertInvalidToken(res);
      assert.equal((await records(sandbox)).requestToPay, 0);
    });
  });

  test('a token whose signature was changed is 401', async () => {
    await withSandbox({}, async (sandbox) => {
      const caller = await sandbox.provision('collection');
      assert.equal((await balance(sandbox, 'collection', `Bearer ${caller.token}`)).statusCode, 200);
      assertInvalidToken(await balance(sandbox, 'collection', `Bearer ${withOtherSignature(caller.token)}`));
      const [header, payload] = caller.token.split('.');
      assertInvalidToken(await balance(sandbox, 'collection', `Bearer ${header}.${payload}.`));
    });
  });

  test('a token whose signature is written otherwise, to the same bytes, is 401: only the token signed is taken', async () => {
    await withSandbox({}, async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const signature = caller.token.slice(caller.token.lastIndexOf('.') + 1);
      const body = caller.token.slice(0, caller.token.length - signature.length);
      const bytes = Buffer.from(signature, 'base64url');
      // The last of 43 characters carries 4 bits of the 256 and 2 unused: setting an unused bit keeps the bytes.
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const unusedBitSet = `${signature.slice(0, -1)}${alphabet[alphabet.indexOf(signature.at(-1)!) + 1]}`;
      const otherAlphabet = bytes.toString('base64').replace(/=+$/, '');
      const padded = `${signature}=`;
      for (const written of [unusedBitSet, otherAlphabet, padded]) {
        if (written === signature) continue;
        assert.deepEqual(Buffer.from(written, 'base64'), bytes, written);
        assertInvalidToken(await balance(sandbox, 'collection', `Bearer ${body}${written}`));
      }
      assert.equal((await balance(sandbox, 'collection', `Bearer ${caller.token}`)).statusCode, 200);
    });
  });

  test('a token with a changed payload or alg "none" is 401', async () => {
    await withSandbox({}, async (sandbox) => {
      const a = await sandbox.provision('collection');
      const b = await sandbox.provision('collection');
      const [header, , signature] = a.token.split('.');
      // A's signature over B's identity.
      const asB = `${header}.${base64url({ ...decodePayload(a.token), sub: b.userId })}.${signature}`;
      assertInvalidToken(await balance(sandbox, 'collection', `Bearer ${asB}`));
      // A's signature over a later expiry.
      const later = `${header}.${base64url({ ...decodePayload(a.token), exp: Number(decodePayload(a.token).exp) + 86_400 })}.${signature}`;
      assertInvalidToken(await balance(sandbox, 'collection', `Bearer ${later}`));
      // An unsigned token.
      const unsigned = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(decodePayload(a.token))}.`;
      assertInvalidToken(await balance(sandbox, 'collection', `Bearer ${unsigned}`));
    });
  });

  test('a token signed by another sandbox (another jwtSecret) is 401; one with the same secret is accepted', async () => {
    const sandbox = await startSandbox({ jwtSecret: 'first-sandbox-secret-0123456789abcdef' });
    const other = await startSandbox({ jwtSecret: 'second-sandbox-secret-0123456789abcdef' });
    const twin = await startSandbox({ jwtSecret: 'first-sandbox-secret-0123456789abcdef' });
    try {
      const caller = await sandbox.provision('collection');
      const claims = { sub: caller.userId, prd: 'collection', use: 'access' } as const;
      assertInvalidToken(await balance(sandbox, 'collection', `Bearer ${other.context.tokens.issue(claims, 3600)}`));
      // A token of the other sandbox's own API user is refused too.
      const stranger = await other.provision('collection');
      assertInvalidToken(await balance(sandbox, 'collection', `Bearer ${stranger.token}`));
      assert.equal((await balance(sandbox, 'collection', `Bearer ${twin.context.tokens.issue(claims, 3600)}`)).statusCode, 200);
    } finally {
      await Promise.all([sandbox.close(), other.close(), twin.close()]);
    }
  });

  test('malformed Bearer credentials are 401', async (t) => {
    await withSandbox({}, async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const cases: Record<string, string> = {
        'not a JWT': 'Bearer not-a-jwt',
        'three junk parts': 'Bearer a.b.c',
        'two parts': `Bearer ${caller.token.split('.').slice(0, 2).join('.')}`,
        'scheme only': 'Bearer',
        'scheme and a space': 'Bearer ',
        'token followed by junk': `Bearer ${caller.token} extra`,
        'another scheme': `Token ${caller.token}`,
        'token without a scheme': caller.token,
      };
      for (const [name, authorization] of Object.entries(cases)) {
        await t.test(name, async () => assertInvalidToken(await balance(sandbox, 'collection', authorization)));
      }
    });
  });

  test('what a malformed Bearer credential hears, and the scheme in any case', async () => {
    await withSandbox({}, async (sandbox) => {
      const caller = await sandbox.provision('collection');
      // The description travels in the challenge, as RFC 6750 puts it.
      const description = (res: LightMyRequestResponse) => /error_description="([^"]*)"/.exec(String(res.headers['www-authenticate']))?.[1];
      const sendBearer = 'Send Authorization: Bearer <access token>.';
      const [header, payload, signature] = caller.token.split('.') as [string, string, string];
      for (const authorization of [
        'Bearer',
        'Bearer ',
        'Bearer  ',
        `Bearer\t${caller.token}`,
        `Bearer  ${caller.token}`,
        `Bearer ${caller.token} extra`,
        `Bearer ${header}.${payload}.${signature.slice(0, 10)} ${signature.slice(10)}`,
        `Token ${caller.token}`,
        caller.token,
      ]) {
        const res = await balance(sandbox, 'collection', authorization);
        assertInvalidToken(res);
        assert.equal(description(res), sendBearer, JSON.stringify(authorization));
      }
      assert.equal(
        description(await balance(sandbox, 'collection', 'Bearer a.b.c')),
        'The access token is malformed or its signature is not valid.',
      );
      for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
        assert.equal((await balance(sandbox, 'collection', `${scheme} ${caller.token}`)).statusCode, 200, scheme);
      }
      // White space in a token already accepted is refused as well, whichever part it is in.
      assert.equal(
        description(await balance(sandbox, 'collection', `Bearer ${caller.token.slice(0, 20)}\u00a0${caller.token.slice(20)}`)),
        sendBearer,
      );
    });
  });

  test('an expired token is 401 while a fresh token works', async () => {
    await withSandbox({ tokenLifetimeSeconds: 60 }, async (sandbox) => {
      const caller = await sandbox.provision('collection');
      sandbox.clock.advance(59_000);
      assert.equal((await balance(sandbox, 'collection', `Bearer ${caller.token}`)).statusCode, 200, 'still valid at 59 s');
      sandbox.clock.advance(2_000);
      assertInvalidToken(await balance(sandbox, 'collection', `Bearer ${caller.token}`));
      const fresh = await requestToken(sandbox, 'collection', basic(caller.userId, caller.apiKey));
      assert.equal(fresh.statusCode, 200);
      assert.equal(fresh.json().expires_in, 60);
      assert.equal((await balance(sandbox, 'collection', `Bearer ${fresh.json().access_token}`)).statusCode, 200);
    });
  });

  test("a collection token on a disbursement operation opens it, as MTN's notebook saw live; the token's API user acts", async () => {
    await withSandbox({}, async (sandbox) => {
      const collection = await sandbox.provision('collection');
      assert.equal((await balance(sandbox, 'disbursement', `Bearer ${collection.token}`, KEYS.disbursement)).statusCode, 200);
      const id = randomUUID();
      const deposit = await sandbox.call({
        method: 'POST',
        url: path('deposit'),
        headers: {
          'ocp-apim-subscription-key': KEYS.disbursement,
          authorization: `Bearer ${collection.token}`,
          'x-reference-id': id,
          'x-target-environment': 'sandbox',
        },
        payload: {
          amount: '5',
          currency: 'EUR',
          externalId: 'e',
          payee: { partyIdType: 'MSISDN', partyId: ORDINARY_MSISDN },
          payerMessage: 'm',
          payeeNote: 'n',
        },
      });
      assert.equal(deposit.statusCode, 202, deposit.body);
      assert.equal(sandbox.context.state.transactions.deposit.get(id)?.apiUserId, collection.userId);
      // A token of another product still never gets past the gateway without that product's key.
      assert.equal((await balance(sandbox, 'disbursement', `Bearer ${collection.token}`, KEYS.collection)).statusCode, 401);
    });
  });

  test('under --strict a collection token on a disbursement operation (with the disbursement key) is 401', async () => {
    await withSandbox({ strict: true }, async (sandbox) => {
      const collection = await sandbox.provision('collection');
      assertInvalidToken(await balance(sandbox, 'disbursement', `Bearer ${collection.token}`, KEYS.disbursement));
      const deposit = await sandbox.call({
        method: 'POST',
        url: path('deposit'),
        headers: {
          'ocp-apim-subscription-key': KEYS.disbursement,
          authorization: `Bearer ${collection.token}`,
          'x-reference-id': randomUUID(),
          'x-target-environment': 'sandbox',
        },
        payload: {
          amount: '5',
          currency: 'EUR',
          externalId: 'e',
          payee: { partyIdType: 'MSISDN', partyId: ORDINARY_MSISDN },
          payerMessage: 'm',
          payeeNote: 'n',
        },
      });
      assertInvalidToken(deposit);
      assert.equal((await records(sandbox)).deposit, 0);
      // The other way round, and remittance, too.
      const disbursement = await sandbox.provision('disbursement');
      assertInvalidToken(await balance(sandbox, 'collection', `Bearer ${disbursement.token}`, KEYS.collection));
      assertInvalidToken(await balance(sandbox, 'remittance', `Bearer ${collection.token}`, KEYS.remittance));
    });
  });

  test('a Basic credential on a business operation is 401', async () => {
    await withSandbox({}, async (sandbox) => {
      const caller = await sandbox.provision('collection');
      assertInvalidToken(await balance(sandbox, 'collection', basic(caller.userId, caller.apiKey)));
      const res = await sandbox.call({
        method: 'POST',
        url: path('requestToPay'),
        headers: {
          'ocp-apim-subscription-key': KEYS.collection,
          authorization: basic(caller.userId, caller.apiKey),
          'x-reference-id': randomUUID(),
          'x-target-environment': 'sandbox',
        },
        payload: requestToPayBody(),
      });
      assertInvalidToken(res);
      assert.equal((await records(sandbox)).requestToPay, 0);
    });
  });

  test('a validly signed token of an API user that does not exist is 401', async () => {
    await withSandbox({}, async (sandbox) => {
      const ghost = sandbox.context.tokens.issue({ sub: randomUUID(), prd: 'collection', use: 'access' }, 3600);
      assertInvalidToken(await balance(sandbox, 'collection', `Bearer ${ghost}`));
    });
  });

  test('a consent token on a business operation and an access token on userinfo are 401', async () => {
    await withSandbox({}, async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const consent = sandbox.context.tokens.issue(
        { sub: caller.userId, prd: 'collection', use: 'consent', msisdn: ORDINARY_MSISDN, scope: 'profile' },
        3600,
      );
      assertInvalidToken(await balance(sandbox, 'collection', `Bearer ${consent}`));
      const userinfo = (authorization: string) =>
        sandbox.call({
          method: 'GET',
          url: path('userInfo', 'collection'),
          headers: { 'ocp-apim-subscription-key': KEYS.collection, authorization, 'x-target-environment': 'sandbox' },
        });
      assertInvalidToken(await userinfo(`Bearer ${caller.token}`));
      assert.equal((await userinfo(`Bearer ${consent}`)).statusCode, 200);
    });
  });
});

// ---------------------------------------------------------------------------------------------------
// 5. Ownership: another API user's transactions (delivery notification always; status queries under --strict)
// ---------------------------------------------------------------------------------------------------

describe('ownership', () => {
  test("API user B of the product reads A's request to pay by default (no ownership is known for status queries)", async () => {
    await withSandbox({}, async (sandbox) => {
      const a = await sandbox.provision('collection');
      const b = await sandbox.provision('collection');
      const id = randomUUID();
      assert.equal(
        (
          await sandbox.call({
            method: 'POST',
            url: path('requestToPay'),
            headers: { ...a.headers, 'x-reference-id': id },
            payload: requestToPayBody(),
          })
        ).statusCode,
        202,
      );
      const read = (caller: Caller) =>
        sandbox.call({ method: 'GET', url: path('getRequestToPayStatus', undefined, { referenceId: id }), headers: caller.headers });
      const [own, foreign] = [await read(a), await read(b)];
      assert.equal(foreign.statusCode, 200, foreign.body);
      assert.equal(foreign.body, own.body);
    });
  });

  test("under --strict, API user B reading A's request-to-pay status gets 404 RESOURCE_NOT_FOUND, exactly as for an unknown id", async () => {
    await withSandbox({ strict: true }, async (sandbox) => {
      const a = await sandbox.provision('collection');
      const b = await sandbox.provision('collection');
      const id = randomUUID();
      const created = await sandbox.call({
        method: 'POST',
        url: path('requestToPay'),
        headers: { ...a.headers, 'x-reference-id': id },
        payload: requestToPayBody(),
      });
      assert.equal(created.statusCode, 202, created.body);

      const foreign = await sandbox.call({
        method: 'GET',
        url: path('getRequestToPayStatus', undefined, { referenceId: id }),
        headers: b.headers,
      });
      const unknown = await sandbox.call({
        method: 'GET',
        url: path('getRequestToPayStatus', undefined, { referenceId: randomUUID() }),
        headers: b.headers,
      });
      assertBusinessError(foreign, 404, 'error-set-a', 'RESOURCE_NOT_FOUND');
      assert.equal(foreign.body, unknown.body);
      assert.equal(foreign.statusCode, unknown.statusCode);
      assert.equal(foreign.headers['content-type'], unknown.headers['content-type']);

      const own = await sandbox.call({
        method: 'GET',
        url: path('getRequestToPayStatus', undefined, { referenceId: id }),
        headers: a.headers,
      });
      assert.equal(own.statusCode, 200);
      assertSchema('request-to-pay-status', own.json());
    });
  });

  test("API user B's delivery notification on A's transaction is 404 as for an unknown id, and A's stays possible", async () => {
    await withSandbox({}, async (sandbox) => {
      const a = await sandbox.provision('collection');
      const b = await sandbox.provision('collection');
      const id = randomUUID();
      assert.equal(
        (
          await sandbox.call({
            method: 'POST',
            url: path('requestToPay'),
            headers: { ...a.headers, 'x-reference-id': id },
            payload: requestToPayBody(),
          })
        ).statusCode,
        202,
      );
      const notify = (caller: Caller, referenceId: string) =>
        sandbox.call({
          method: 'POST',
          url: path('deliveryNotification', 'collection', { referenceId }),
          headers: caller.headers,
          payload: { notificationMessage: 'Your goods are on their way' },
        });
      const foreign = await notify(b, id);
      const unknown = await notify(b, randomUUID());
      assertBusinessError(foreign, 404, 'error-set-a', 'RESOURCE_NOT_FOUND');
      assert.equal(foreign.body, unknown.body);
      // B's attempt did not use up A's notification (no 429 for A).
      const own = await notify(a, id);
      assert.equal(own.statusCode, 200, own.body);
    });
  });
});
