import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { Product } from '../../core/products.ts';
import {
  assertSchema,
  basic,
  KEYS,
  path,
  rawPath,
  requestToPayBody,
  startSandbox,
  withSandbox,
  type Caller,
  type TestSandbox,
} from '../support/sandbox.ts';

/*
 * Balances (§2.9, §4.2 #4, §4.4 #13), account-holder status (§4.2 #8, §4.3 #12), basic user information
 * (§4.2 #5) and the consent flow (§4.2 #6, #7, §4.3 #11, §5.4) under both profiles.
 */

const PRODUCTS: readonly Product[] = ['collection', 'disbursement', 'remittance'];
const FORM = 'application/x-www-form-urlencoded';
const CONSENT_FORM = 'login_hint=ID:46733123450/MSISDN&scope=profile&access_type=offline';
const CIBA = 'urn:openid:params:grant-type:ciba';
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const errorSetOf = { collection: 'error-set-a', disbursement: 'error-set-b', remittance: 'error-set-b' } as const;

const USER_INFO_FIELDS = [
  'sub',
  'name',
  'given_name',
  'family_name',
  'middle_name',
  'email',
  'email_verified',
  'gender',
  'locale',
  'phone_number',
  'phone_number_verified',
  'address',
  'updated_at',
  'status',
  'birthdate',
  'credit_score',
  'active',
  'country_of_birth',
  'region_of_birth',
  'city_of_birth',
  'occupation',
  'employer_name',
  'identification_type',
  'identification_value',
];

function get(sandbox: TestSandbox, url: string, headers: Record<string, string | undefined>): Promise<LightMyRequestResponse> {
  return sandbox.call({ method: 'GET', url, headers });
}

function assertBusinessError(response: LightMyRequestResponse, status: number, schema: string, code: string): void {
  assert.equal(response.statusCode, status, response.body);
  const body = response.json();
  assertSchema(schema, body);
  assert.equal(body.code, code);
}

function assertBadRequest(response: LightMyRequestResponse, status = 400): void {
  assert.equal(response.statusCode, status, response.body);
  const body = response.json();
  assertSchema('bad-request', body);
  assert.equal(body.statusCode, status);
}

function assertOAuthError(response: LightMyRequestResponse, status: number, error: string): void {
  assert.equal(response.statusCode, status, response.body);
  const body = response.json();
  assertSchema('oauth-error', body);
  assert.equal(body.error, error);
}

function bcAuthorize(sandbox: TestSandbox, caller: Caller, payload: string = CONSENT_FORM, headers: Record<string, string> = {}) {
  return sandbox.call({
    method: 'POST',
    url: path('bcAuthorize', caller.product),
    headers: { ...caller.headers, 'content-type': FORM, ...headers },
    payload,
  });
}

/** createOAuthToken under the product, with the caller's Basic credential (§4.3 #11). */
function oauthToken(
  sandbox: TestSandbox,
  caller: Caller,
  payload: string,
  options: { product?: Product; authorization?: string; environment?: string } = {},
) {
  const product = options.product ?? caller.product;
  return sandbox.call({
    method: 'POST',
    url: path('createOAuthToken', product),
    headers: {
      'ocp-apim-subscription-key': KEYS[product],
      authorization: options.authorization ?? basic(caller.userId, caller.apiKey),
      'x-target-environment': options.environment ?? 'sandbox',
      'content-type': FORM,
    },
    payload,
  });
}

const ciba = (authReqId: string) => `grant_type=${CIBA}&auth_req_id=${authReqId}`;
const refresh = (refreshToken: string) => `grant_type=refresh_token&refresh_token=${refreshToken}`;

async function startConsent(sandbox: TestSandbox, caller: Caller, payload: string = CONSENT_FORM): Promise<string> {
  const response = await bcAuthorize(sandbox, caller, payload);
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json();
  assertSchema('consent-request', body);
  return body.auth_req_id as string;
}

interface ConsentToken {
  access_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
  refresh_token: string;
  refresh_token_expired_in: number;
}

/** bc-authorize, wait the interval on the sandbox clock, redeem: the consent token record. */
async function grantConsent(sandbox: TestSandbox, caller: Caller, payload: string = CONSENT_FORM): Promise<ConsentToken> {
  const authReqId = await startConsent(sandbox, caller, payload);
  sandbox.clock.advance(sandbox.settings.consentIntervalSeconds * 1000);
  const response = await oauthToken(sandbox, caller, ciba(authReqId));
  assert.equal(response.statusCode, 200, response.body);
  const body = response.json() as ConsentToken;
  assertSchema('consent-token', body);
  return body;
}

function userInfo(sandbox: TestSandbox, product: Product, accessToken: string) {
  return get(sandbox, path('userInfo', product), {
    'ocp-apim-subscription-key': KEYS[product],
    authorization: `Bearer ${accessToken}`,
    'x-target-environment': 'sandbox',
  });
}

async function consentRequestCount(sandbox: TestSandbox): Promise<number> {
  const health = await get(sandbox, '/health', {});
  return (health.json() as { records: { consentRequests: number } }).records.consentRequests;
}

describe('balances', () => {
  let sandbox: TestSandbox;
  before(async () => {
    sandbox = await startSandbox();
  });
  after(async () => {
    await sandbox.close();
  });

  for (const product of PRODUCTS) {
    test(`GET ${path('getBalance', product)} answers the opening balance in EUR`, async () => {
      const caller = await sandbox.provision(product);
      const response = await get(sandbox, path('getBalance', product), caller.headers);
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      assertSchema('balance', body);
      assert.deepEqual(body, { availableBalance: sandbox.settings.openingBalance, currency: 'EUR' });
    });
  }

  test(`GET ${path('getBalanceInCurrency', 'collection', { currency: 'EUR' })} answers the opening balance`, async () => {
    const caller = await sandbox.provision('collection');
    const response = await get(sandbox, path('getBalanceInCurrency', 'collection', { currency: 'EUR' }), caller.headers);
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assertSchema('balance', body);
    assert.deepEqual(body, { availableBalance: '1000000', currency: 'EUR' });
  });

  test('a well-formed currency that is not configured is 500 INVALID_CURRENCY', async () => {
    const caller = await sandbox.provision('collection');
    for (const currency of ['USD', 'XAF']) {
      const response = await get(sandbox, path('getBalanceInCurrency', 'collection', { currency }), caller.headers);
      assertBusinessError(response, 500, 'error-set-a', 'INVALID_CURRENCY');
    }
  });

  test('a malformed currency in the path is 400', async () => {
    const caller = await sandbox.provision('collection');
    for (const currency of ['eu', 'EURO', 'eur', 'E1R']) {
      assertBadRequest(await get(sandbox, path('getBalanceInCurrency', 'collection', { currency }), caller.headers));
    }
  });

  test("an unknown X-Target-Environment is 500 NOT_ALLOWED_TARGET_ENVIRONMENT in each product's error set", async () => {
    for (const product of PRODUCTS) {
      const caller = await sandbox.provision(product);
      const headers = { ...caller.headers, 'x-target-environment': 'mtnuganda' };
      assertBusinessError(
        await get(sandbox, path('getBalance', product), headers),
        500,
        errorSetOf[product],
        'NOT_ALLOWED_TARGET_ENVIRONMENT',
      );
    }
    const collection = await sandbox.provision('collection');
    const response = await get(sandbox, path('getBalanceInCurrency', 'collection', { currency: 'EUR' }), {
      ...collection.headers,
      'x-target-environment': 'mtnuganda',
    });
    assertBusinessError(response, 500, 'error-set-a', 'NOT_ALLOWED_TARGET_ENVIRONMENT');
  });

  test("balances belong to one API user: a payment to one does not move another's", async () => {
    const alice = await sandbox.provision('collection');
    const bob = await sandbox.provision('collection');
    const created = await sandbox.call({
      method: 'POST',
      url: path('requestToPay'),
      headers: { ...alice.headers, 'x-reference-id': randomUUID() },
      payload: requestToPayBody('46733123499', '12.5'),
    });
    assert.equal(created.statusCode, 202, created.body);
    for (const url of [path('getBalance', 'collection'), path('getBalanceInCurrency', 'collection', { currency: 'EUR' })]) {
      assert.deepEqual((await get(sandbox, url, alice.headers)).json(), { availableBalance: '1000012.5', currency: 'EUR' });
      assert.deepEqual((await get(sandbox, url, bob.headers)).json(), { availableBalance: '1000000', currency: 'EUR' });
    }
  });
});

test('balance: every configured currency is served, with the configured opening balance', async () => {
  const sandbox = await startSandbox({ currencies: ['EUR', 'XAF'], openingBalance: '250.75' });
  try {
    const caller = await sandbox.provision('collection');
    const xaf = await get(sandbox, path('getBalanceInCurrency', 'collection', { currency: 'XAF' }), caller.headers);
    assert.equal(xaf.statusCode, 200, xaf.body);
    assertSchema('balance', xaf.json());
    assert.deepEqual(xaf.json(), { availableBalance: '250.75', currency: 'XAF' });
    const first = await get(sandbox, path('getBalance', 'collection'), caller.headers);
    assert.deepEqual(first.json(), { availableBalance: '250.75', currency: 'EUR' });
    assertBusinessError(
      await get(sandbox, path('getBalanceInCurrency', 'collection', { currency: 'USD' }), caller.headers),
      500,
      'error-set-a',
      'INVALID_CURRENCY',
    );
  } finally {
    await sandbox.close();
  }
});

type HolderExpectation = { status: 200; result: boolean } | { status: number; code: string };

const HOLDER_NUMBERS: Record<'spec' | 'mtn-sandbox', Record<string, HolderExpectation>> = {
  spec: {
    '46733123450': { status: 200, result: false },
    '46733123451': { status: 200, result: false },
    '46733123452': { status: 500, code: 'NOT_ALLOWED' },
    '46733123453': { status: 500, code: 'NOT_ALLOWED_TARGET_ENVIRONMENT' },
    '46733123454': { status: 500, code: 'INTERNAL_PROCESSING_ERROR' },
    '46733123455': { status: 200, result: true },
    '46733123499': { status: 200, result: true },
  },
  'mtn-sandbox': {
    '46733123450': { status: 404, code: 'RESOURCE_NOT_FOUND' },
    '46733123451': { status: 200, result: false },
    '46733123452': { status: 500, code: 'NOT_ALLOWED' },
    '46733123453': { status: 500, code: 'NOT_ALLOWED_TARGET_ENVIRONMENT' },
    '46733123454': { status: 500, code: 'INTERNAL_PROCESSING_ERROR' },
    '46733123455': { status: 503, code: 'SERVICE_UNAVAILABLE' },
    '46733123499': { status: 200, result: true },
  },
};

for (const profile of ['spec', 'mtn-sandbox'] as const) {
  describe(`account holder status (${profile} profile)`, () => {
    let sandbox: TestSandbox;
    before(async () => {
      sandbox = await startSandbox({ profile });
    });
    after(async () => {
      await sandbox.close();
    });

    for (const product of ['collection', 'disbursement'] as const) {
      test(`${product}: the test numbers answer as documented for the ${profile} profile`, async () => {
        const caller = await sandbox.provision(product);
        for (const [msisdn, expected] of Object.entries(HOLDER_NUMBERS[profile])) {
          const response = await get(
            sandbox,
            path('accountHolderActive', product, { accountHolderIdType: 'msisdn', accountHolderId: msisdn }),
            caller.headers,
          );
          assert.equal(response.statusCode, expected.status, `${msisdn}: ${response.body}`);
          if ('result' in expected) {
            assertSchema('account-holder-status', response.json());
            assert.deepEqual(response.json(), { result: expected.result }, msisdn);
          } else {
            assertBusinessError(response, expected.status, errorSetOf[product], expected.code);
          }
        }
      });
    }

    if (profile === 'spec') {
      for (const product of ['collection', 'disbursement'] as const) {
        test(`${product}: a valid msisdn, email or party_code of an active holder is 200 {result:true}`, async () => {
          const caller = await sandbox.provision(product);
          for (const [type, id] of [
            ['msisdn', '46733123499'],
            ['msisdn', '+46733123499'],
            ['email', 'holder@example.com'],
            ['party_code', randomUUID()],
          ]) {
            const response = await get(
              sandbox,
              path('accountHolderActive', product, { accountHolderIdType: type!, accountHolderId: id! }),
              caller.headers,
            );
            assert.equal(response.statusCode, 200, `${type} ${id}: ${response.body}`);
            assertSchema('account-holder-status', response.json());
            assert.deepEqual(response.json(), { result: true });
          }
        });

        test(`${product}: an upper-case id type or an id that does not fit its type is 400`, async () => {
          const caller = await sandbox.provision(product);
          const cases = [
            ['MSISDN', '46733123499'],
            ['Email', 'holder@example.com'],
            ['msisdn', 'abc'],
            ['email', 'nope'],
            ['party_code', '123'],
            ['phone', '46733123499'],
          ];
          for (const [type, id] of cases) {
            // Sent as written, not percent-encoded ('holder@example.com' keeps its '@').
            const response = await get(
              sandbox,
              rawPath('accountHolderActive', product, { accountHolderIdType: type!, accountHolderId: id! }),
              caller.headers,
            );
            assertBadRequest(response);
          }
        });

        test(`${product}: an unknown X-Target-Environment is 500 NOT_ALLOWED_TARGET_ENVIRONMENT`, async () => {
          const caller = await sandbox.provision(product);
          const response = await get(
            sandbox,
            path('accountHolderActive', product, { accountHolderIdType: 'msisdn', accountHolderId: '46733123499' }),
            { ...caller.headers, 'x-target-environment': 'mtnghana' },
          );
          assertBusinessError(response, 500, errorSetOf[product], 'NOT_ALLOWED_TARGET_ENVIRONMENT');
        });
      }
    }
  });
}

describe('basic user information', () => {
  test('spec profile: the six fields of §2.10, gender in lower case', async () => {
    const sandbox = await startSandbox({ profile: 'spec' });
    try {
      const caller = await sandbox.provision('collection');
      const response = await get(sandbox, path('basicUserInfo', 'collection', { accountHolderMSISDN: '46733123499' }), caller.headers);
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      assertSchema('basic-user-info', body);
      assert.equal(body.gender, body.gender.toLowerCase());
      assert.ok(['male', 'female'].includes(body.gender), body.gender);
    } finally {
      await sandbox.close();
    }
  });

  test('mtn-sandbox profile: the observed "Sand Box" record', async () => {
    const sandbox = await startSandbox({ profile: 'mtn-sandbox' });
    try {
      const caller = await sandbox.provision('collection');
      const response = await get(sandbox, path('basicUserInfo', 'collection', { accountHolderMSISDN: '46733123450' }), caller.headers);
      assert.equal(response.statusCode, 200, response.body);
      const body = response.json();
      assertSchema('basic-user-info-observed', body);
      assert.equal(body.sub, '0');
      assert.equal(body.name, 'Sand Box');
      assert.equal(body.gender, 'MALE');
      assert.equal(body.locale, 'sv_SE');
      assert.equal(typeof body.updated_at, 'number');
    } finally {
      await sandbox.close();
    }
  });

  test('an invalid MSISDN is 400, and no Bearer token is 401 {error}', async () => {
    const sandbox = await startSandbox();
    try {
      const caller = await sandbox.provision('collection');
      for (const msisdn of ['abc', '0733123450', '123']) {
        assertBadRequest(await get(sandbox, path('basicUserInfo', 'collection', { accountHolderMSISDN: msisdn }), caller.headers));
      }
      const url = path('basicUserInfo', 'collection', { accountHolderMSISDN: '46733123499' });
      assertOAuthError(await get(sandbox, url, { ...caller.headers, authorization: undefined }), 401, 'invalid_token');
      assertOAuthError(
        await get(sandbox, url, { ...caller.headers, authorization: basic(caller.userId, caller.apiKey) }),
        401,
        'invalid_token',
      );
    } finally {
      await sandbox.close();
    }
  });
});

describe('consent flow (spec profile)', () => {
  let sandbox: TestSandbox;
  before(async () => {
    sandbox = await startSandbox({ profile: 'spec' });
  });
  after(async () => {
    await sandbox.close();
  });

  for (const product of PRODUCTS) {
    test(`${product}: bc-authorize, authorization_pending until the interval, consent token, userinfo`, async () => {
      const caller = await sandbox.provision(product);
      const { settings } = sandbox;
      const authorized = await bcAuthorize(sandbox, caller);
      assert.equal(authorized.statusCode, 200, authorized.body);
      const request = authorized.json();
      assertSchema('consent-request', request);
      assert.equal(request.interval, settings.consentIntervalSeconds);
      assert.equal(request.expires_in, settings.consentRequestLifetimeSeconds);

      const early = await oauthToken(sandbox, caller, ciba(request.auth_req_id));
      assertOAuthError(early, 400, 'authorization_pending');
      sandbox.clock.advance(settings.consentIntervalSeconds * 1000 - 1);
      assertOAuthError(await oauthToken(sandbox, caller, ciba(request.auth_req_id)), 400, 'authorization_pending');
      sandbox.clock.advance(1);

      const granted = await oauthToken(sandbox, caller, ciba(request.auth_req_id));
      assert.equal(granted.statusCode, 200, granted.body);
      const token = granted.json() as ConsentToken;
      assertSchema('consent-token', token);
      assert.equal(token.token_type, 'Bearer');
      assert.equal(token.scope, 'profile');
      assert.equal(token.expires_in, settings.consentTokenLifetimeSeconds);
      assert.match(token.refresh_token, UUID_V4);
      assert.equal(token.refresh_token_expired_in, settings.consentValidSeconds);

      const info = await userInfo(sandbox, product, token.access_token);
      assert.equal(info.statusCode, 200, info.body);
      const body = info.json();
      assertSchema('user-info', body);
      assert.equal(body.sub, '46733123450');
      assert.equal(body.gender, 'male');
      for (const claim of ['name', 'given_name', 'family_name', 'locale', 'birthdate'])
        assert.ok(claim in body, `profile scope shares ${claim}`);
      for (const claim of ['email', 'phone_number', 'address', 'identification_value'])
        assert.ok(!(claim in body), `profile scope does not share ${claim}`);
    });
  }

  test('refresh_token_expired_in follows consent_valid_in when bc-authorize gives it', async () => {
    const caller = await sandbox.provision('collection');
    const token = await grantConsent(sandbox, caller, `${CONSENT_FORM}&consent_valid_in=7200`);
    assert.equal(token.refresh_token_expired_in, 7200);
  });

  test("the spec's own paths: bc-authorize on collection, the consent token on disbursement by the API user that asked, userinfo on collection", async () => {
    const caller = await sandbox.provision('collection');
    const authReqId = await startConsent(sandbox, caller);
    sandbox.clock.advance(sandbox.settings.consentIntervalSeconds * 1000);
    // §4.2 #7 asks under collection and §4.3 #11 redeems under disbursement: the API user that asked redeems it there.
    const granted = await oauthToken(sandbox, caller, ciba(authReqId), { product: 'disbursement' });
    assert.equal(granted.statusCode, 200, granted.body);
    assertSchema('consent-token', granted.json());
    const info = await get(sandbox, path('userInfo', 'collection'), {
      'ocp-apim-subscription-key': KEYS.collection,
      authorization: `Bearer ${granted.json().access_token}`,
      'x-target-environment': 'sandbox',
    });
    assert.equal(info.statusCode, 200, info.body);
    assert.equal(info.json().sub, '46733123450');
    // The consent token opens the product the consent was asked under, under --strict too.
    await withSandbox({ strict: true, consentIntervalSeconds: 1 }, async (strict) => {
      const strictCaller = await strict.provision('collection');
      const id = await startConsent(strict, strictCaller);
      strict.clock.advance(1000);
      const token = await oauthToken(strict, strictCaller, ciba(id), { product: 'disbursement' });
      assert.equal(token.statusCode, 200, token.body);
      assert.equal((await userInfo(strict, 'collection', token.json().access_token)).statusCode, 200);
    });
  });

  test('another API user cannot redeem the consent, whatever its product: 400 invalid_grant', async () => {
    const owner = await sandbox.provision('collection');
    const disbursement = await sandbox.provision('disbursement');
    const authReqId = await startConsent(sandbox, owner);
    sandbox.clock.advance(sandbox.settings.consentIntervalSeconds * 1000);
    assertOAuthError(await oauthToken(sandbox, disbursement, ciba(authReqId), { product: 'disbursement' }), 400, 'invalid_grant');
    assert.equal((await oauthToken(sandbox, owner, ciba(authReqId))).statusCode, 200);
  });

  test('the access token operation still binds an API user to its product: 500 NOT_ALLOWED_TARGET_ENVIRONMENT', async () => {
    const caller = await sandbox.provision('collection');
    const foreign = await sandbox.call({
      method: 'POST',
      url: path('createAccessToken', 'disbursement'),
      headers: { 'ocp-apim-subscription-key': KEYS.disbursement, authorization: basic(caller.userId, caller.apiKey) },
    });
    assertBusinessError(foreign, 500, 'error-set-b', 'NOT_ALLOWED_TARGET_ENVIRONMENT');
  });

  test('a collection consent token opens userinfo of another product; under --strict it does not', async () => {
    const caller = await sandbox.provision('collection');
    const token = await grantConsent(sandbox, caller);
    assert.equal((await userInfo(sandbox, 'disbursement', token.access_token)).statusCode, 200);
    await withSandbox({ strict: true, consentIntervalSeconds: 1 }, async (strict) => {
      const strictCaller = await strict.provision('collection');
      const strictToken = await grantConsent(strict, strictCaller);
      assertOAuthError(await userInfo(strict, 'disbursement', strictToken.access_token), 401, 'invalid_token');
    });
  });

  test('an auth_req_id is redeemed once: the second redemption is 400 invalid_grant', async () => {
    const caller = await sandbox.provision('collection');
    const authReqId = await startConsent(sandbox, caller);
    sandbox.clock.advance(sandbox.settings.consentIntervalSeconds * 1000);
    assert.equal((await oauthToken(sandbox, caller, ciba(authReqId))).statusCode, 200);
    assertOAuthError(await oauthToken(sandbox, caller, ciba(authReqId)), 400, 'invalid_grant');
  });

  test('an auth_req_id expires after consentRequestLifetimeSeconds: 400 expired_token', async () => {
    const caller = await sandbox.provision('collection');
    const lifetimeMs = sandbox.settings.consentRequestLifetimeSeconds * 1000;
    const inTime = await startConsent(sandbox, caller);
    const tooLate = await startConsent(sandbox, caller);
    sandbox.clock.advance(lifetimeMs - 1);
    assert.equal((await oauthToken(sandbox, caller, ciba(inTime))).statusCode, 200);
    sandbox.clock.advance(1);
    assertOAuthError(await oauthToken(sandbox, caller, ciba(tooLate)), 400, 'expired_token');
  });

  test('an unknown auth_req_id is 400 invalid_grant', async () => {
    const caller = await sandbox.provision('collection');
    assertOAuthError(await oauthToken(sandbox, caller, ciba(randomUUID())), 400, 'invalid_grant');
  });

  test('the auth_req_id of another API user is 400 invalid_grant and stays redeemable by its owner', async () => {
    const owner = await sandbox.provision('collection');
    const other = await sandbox.provision('collection');
    const authReqId = await startConsent(sandbox, owner);
    sandbox.clock.advance(sandbox.settings.consentIntervalSeconds * 1000);
    assertOAuthError(await oauthToken(sandbox, other, ciba(authReqId)), 400, 'invalid_grant');
    const granted = await oauthToken(sandbox, owner, ciba(authReqId));
    assert.equal(granted.statusCode, 200, granted.body);
  });

  test('scope openid shares only sub', async () => {
    const caller = await sandbox.provision('collection');
    const token = await grantConsent(sandbox, caller, 'login_hint=ID:46733123450/MSISDN&scope=openid&access_type=online');
    assert.equal(token.scope, 'openid');
    const info = await userInfo(sandbox, 'collection', token.access_token);
    assert.equal(info.statusCode, 200, info.body);
    assertSchema('user-info', info.json());
    assert.deepEqual(info.json(), { sub: '46733123450' });
  });

  test('scope all_info shares every field of §2.11', async () => {
    const caller = await sandbox.provision('collection');
    const token = await grantConsent(sandbox, caller, 'login_hint=ID:46733123499/MSISDN&scope=all_info&access_type=offline');
    const info = await userInfo(sandbox, 'collection', token.access_token);
    assert.equal(info.statusCode, 200, info.body);
    const body = info.json();
    assertSchema('user-info', body);
    assert.deepEqual(Object.keys(body).sort(), [...USER_INFO_FIELDS].sort());
    assert.equal(body.sub, '46733123499');
  });

  test('userinfo refuses the ordinary access token: 401', async () => {
    const caller = await sandbox.provision('collection');
    assertOAuthError(await userInfo(sandbox, 'collection', caller.token), 401, 'invalid_token');
  });

  test('a consent token does not open a business operation: 401', async () => {
    const caller = await sandbox.provision('collection');
    const token = await grantConsent(sandbox, caller);
    const response = await get(sandbox, path('getBalance', 'collection'), {
      ...caller.headers,
      authorization: `Bearer ${token.access_token}`,
    });
    assertOAuthError(response, 401, 'invalid_token');
  });

  test('an expired consent token is 401 on userinfo; a refresh gives a new one that works', async () => {
    const caller = await sandbox.provision('collection');
    const token = await grantConsent(sandbox, caller);
    assert.equal((await userInfo(sandbox, 'collection', token.access_token)).statusCode, 200);
    sandbox.clock.advance(token.expires_in * 1000);
    assertOAuthError(await userInfo(sandbox, 'collection', token.access_token), 401, 'invalid_token');

    const refreshed = await oauthToken(sandbox, caller, refresh(token.refresh_token));
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    const renewed = refreshed.json() as ConsentToken;
    assertSchema('consent-token', renewed);
    assert.notEqual(renewed.access_token, token.access_token);
    assert.equal(renewed.scope, token.scope);
    assert.equal(renewed.refresh_token_expired_in, token.refresh_token_expired_in - token.expires_in);
    const info = await userInfo(sandbox, 'collection', renewed.access_token);
    assert.equal(info.statusCode, 200, info.body);
    assert.equal(info.json().sub, '46733123450');
  });

  test('a refresh token of another API user, or one past consent_valid_in, is 400 invalid_grant', async () => {
    const owner = await sandbox.provision('collection');
    const other = await sandbox.provision('collection');
    const token = await grantConsent(sandbox, owner, `${CONSENT_FORM}&consent_valid_in=60`);
    assert.equal(token.refresh_token_expired_in, 60);
    assertOAuthError(await oauthToken(sandbox, other, refresh(token.refresh_token)), 400, 'invalid_grant');
    sandbox.clock.advance(59_000);
    assert.equal((await oauthToken(sandbox, owner, refresh(token.refresh_token))).statusCode, 200);
    sandbox.clock.advance(1_000);
    assertOAuthError(await oauthToken(sandbox, owner, refresh(token.refresh_token)), 400, 'invalid_grant');
  });

  test('an unknown scope is 400 UNSUPPORTED_SCOPE and creates no consent request', async () => {
    const before = await consentRequestCount(sandbox);
    for (const product of PRODUCTS) {
      const caller = await sandbox.provision(product);
      const response = await bcAuthorize(sandbox, caller, 'login_hint=ID:46733123450/MSISDN&scope=banana&access_type=offline');
      assertBusinessError(response, 400, 'error-set-a', 'UNSUPPORTED_SCOPE');
    }
    assert.equal(await consentRequestCount(sandbox), before);
  });

  test('a bad login_hint, a bad access_type or a missing scope is 400 and creates no consent request', async () => {
    const caller = await sandbox.provision('collection');
    const before = await consentRequestCount(sandbox);
    const forms = [
      'login_hint=46733123450&scope=profile&access_type=offline',
      'login_hint=ID:abc/MSISDN&scope=profile&access_type=offline',
      'login_hint=ID:46733123450/EMAIL&scope=profile&access_type=offline',
      'login_hint=ID:46733123450/MSISDN&scope=profile&access_type=forever',
      'login_hint=ID:46733123450/MSISDN&scope=profile',
      'login_hint=ID:46733123450/MSISDN&access_type=offline',
      'login_hint=ID:46733123450/MSISDN&scope=&access_type=offline',
    ];
    for (const form of forms) {
      const response = await bcAuthorize(sandbox, caller, form);
      assert.equal(response.statusCode, 400, `${form}: ${response.body}`);
      assertSchema('bad-request', response.json());
    }
    // A scope of blanks only passes the form but names no scope.
    assertBusinessError(
      await bcAuthorize(sandbox, caller, 'login_hint=ID:46733123450/MSISDN&scope=%20%20&access_type=offline'),
      400,
      'error-set-a',
      'MISSING_SCOPE_INSTRUCTION',
    );
    assert.equal(await consentRequestCount(sandbox), before);
  });

  test("bc-authorize with an X-Callback-Url of another host is 500 INVALID_CALLBACK_URL_HOST; the API user's host is accepted", async () => {
    const caller = await sandbox.provision('collection', { providerCallbackHost: 'partner.example.com' });
    const before = await consentRequestCount(sandbox);
    const refused = await bcAuthorize(sandbox, caller, CONSENT_FORM, { 'x-callback-url': 'https://elsewhere.example.com/consent' });
    assertBusinessError(refused, 500, 'error-set-a', 'INVALID_CALLBACK_URL_HOST');
    assert.equal(await consentRequestCount(sandbox), before);
    const accepted = await bcAuthorize(sandbox, caller, CONSENT_FORM, { 'x-callback-url': 'https://partner.example.com/consent' });
    assert.equal(accepted.statusCode, 200, accepted.body);
    assertSchema('consent-request', accepted.json());
  });

  test('bc-authorize with a JSON body is served as the form would be, and 415 only under --strict', async () => {
    const caller = await sandbox.provision('collection');
    const request = {
      method: 'POST' as const,
      url: path('bcAuthorize', 'collection'),
      headers: caller.headers,
      payload: { login_hint: 'ID:46733123450/MSISDN', scope: 'profile', access_type: 'offline' },
    };
    const response = await sandbox.call(request);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(typeof JSON.parse(response.body).auth_req_id, 'string');
    await withSandbox({ strict: true }, async (strict) => {
      const strictCaller = await strict.provision('collection');
      const before = await consentRequestCount(strict);
      assertBadRequest(await strict.call({ ...request, headers: strictCaller.headers }), 415);
      assert.equal(await consentRequestCount(strict), before);
    });
  });

  test('bc-authorize needs an access token: none, or a Basic credential, is 401', async () => {
    const caller = await sandbox.provision('collection');
    assertOAuthError(await bcAuthorize(sandbox, caller, CONSENT_FORM, { authorization: '' }), 401, 'invalid_token');
    assertOAuthError(
      await bcAuthorize(sandbox, caller, CONSENT_FORM, { authorization: basic(caller.userId, caller.apiKey) }),
      401,
      'invalid_token',
    );
  });

  test('a wrong Basic credential on the OAuth 2.0 token is 401 {error:"login_failed"} and consumes nothing', async () => {
    const caller = await sandbox.provision('disbursement');
    const authReqId = await startConsent(sandbox, caller);
    sandbox.clock.advance(sandbox.settings.consentIntervalSeconds * 1000);
    assertOAuthError(
      await oauthToken(sandbox, caller, ciba(authReqId), { authorization: basic(caller.userId, 'f'.repeat(32)) }),
      401,
      'login_failed',
    );
    assertOAuthError(
      await oauthToken(sandbox, caller, ciba(authReqId), { authorization: basic(randomUUID(), caller.apiKey) }),
      401,
      'login_failed',
    );
    assertOAuthError(await oauthToken(sandbox, caller, ciba(authReqId), { authorization: `Bearer ${caller.token}` }), 401, 'login_failed');
    assert.equal((await oauthToken(sandbox, caller, ciba(authReqId))).statusCode, 200);
  });

  test('the Basic credential is checked before the target environment: a wrong one is 401 login_failed whatever X-Target-Environment says', async () => {
    const caller = await sandbox.provision('disbursement');
    const authReqId = await startConsent(sandbox, caller);
    sandbox.clock.advance(sandbox.settings.consentIntervalSeconds * 1000);
    for (const authorization of [basic(caller.userId, 'f'.repeat(32)), basic(randomUUID(), caller.apiKey), '']) {
      assertOAuthError(
        await oauthToken(sandbox, caller, ciba(authReqId), { environment: 'mtnzambia', authorization }),
        401,
        'login_failed',
      );
    }
    assert.equal((await oauthToken(sandbox, caller, ciba(authReqId))).statusCode, 200, 'nothing was consumed');
  });

  test('the OAuth 2.0 token with an unknown X-Target-Environment is 500 NOT_ALLOWED_TARGET_ENVIRONMENT', async () => {
    const caller = await sandbox.provision('disbursement');
    const authReqId = await startConsent(sandbox, caller);
    sandbox.clock.advance(sandbox.settings.consentIntervalSeconds * 1000);
    assertBusinessError(
      await oauthToken(sandbox, caller, ciba(authReqId), { environment: 'mtnzambia' }),
      500,
      'error-set-b',
      'NOT_ALLOWED_TARGET_ENVIRONMENT',
    );
    assert.equal((await oauthToken(sandbox, caller, ciba(authReqId))).statusCode, 200);
  });
});

test('consent: an auth_req_id is redeemable for all of its expires_in, even beyond the retention age', async () => {
  // expires_in of 2 h, transactions and consents kept 1 h (the defaults of retention).
  const sandbox = await startSandbox({ consentRequestLifetimeSeconds: 7200, retentionMaxAgeMs: 3_600_000 });
  try {
    const caller = await sandbox.provision('collection');
    const authReqId = await startConsent(sandbox, caller);
    sandbox.clock.advance(3_601_000); // past retention, well inside expires_in
    const granted = await oauthToken(sandbox, caller, ciba(authReqId));
    assert.equal(granted.statusCode, 200, granted.body);
    assertSchema('consent-token', granted.json());
  } finally {
    await sandbox.close();
  }
});

test('consent: grants that can no longer be refreshed do not fill the store for ever', async () => {
  const sandbox = await startSandbox({ retentionMaxEntries: 2, retentionMaxAgeMs: 5_000, notificationWindowMs: 1_000 });
  try {
    const caller = await sandbox.provision('collection');
    for (let round = 1; round <= 4; round += 1) {
      const authReqId = await startConsent(sandbox, caller, `${CONSENT_FORM}&consent_valid_in=2`);
      sandbox.clock.advance(sandbox.settings.consentIntervalSeconds * 1000);
      const granted = await oauthToken(sandbox, caller, ciba(authReqId));
      assert.equal(granted.statusCode, 200, `round ${round}: ${granted.body}`);
      // Past the consent's refresh validity and the retention age: nothing of this round is still in use.
      sandbox.clock.advance(10_000);
      assertOAuthError(await oauthToken(sandbox, caller, refresh(granted.json().refresh_token)), 400, 'invalid_grant');
    }
  } finally {
    await sandbox.close();
  }
});

describe('consent flow (mtn-sandbox profile)', () => {
  let sandbox: TestSandbox;
  before(async () => {
    sandbox = await startSandbox({ profile: 'mtn-sandbox' });
  });
  after(async () => {
    await sandbox.close();
  });

  test('a wrong Basic credential on the OAuth 2.0 token is 500 {error:"login_failed"}', async () => {
    const caller = await sandbox.provision('disbursement');
    const authReqId = await startConsent(sandbox, caller);
    sandbox.clock.advance(sandbox.settings.consentIntervalSeconds * 1000);
    assertOAuthError(
      await oauthToken(sandbox, caller, ciba(authReqId), { authorization: basic(caller.userId, 'f'.repeat(32)) }),
      500,
      'login_failed',
    );
    assert.equal((await oauthToken(sandbox, caller, ciba(authReqId))).statusCode, 200);
  });

  test('the consent token is Bearer and userinfo writes gender in upper case, the same record for every customer', async () => {
    const caller = await sandbox.provision('collection');
    const token = await grantConsent(sandbox, caller);
    assert.equal(token.token_type, 'Bearer');
    const info = await userInfo(sandbox, 'collection', token.access_token);
    assert.equal(info.statusCode, 200, info.body);
    assertSchema('user-info', info.json());
    // The live sandbox's "Sand Box" record, sub "0" whoever consented (core/profiles.ts userInfoPerCustomer).
    assert.equal(info.json().sub, '0');
    assert.equal(info.json().gender, 'MALE');
  });
});
