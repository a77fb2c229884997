/**
 * The preflight (harness/preflight.ts) against the reference sandbox, in process: each setting a partner can get
 * wrong is refused by name, with the target's answer and what to do; settings that are right are not; and the
 * client then stops exactly the calls a refusal covers (SettingRefusedError), and no others.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startEmbeddedSandbox, type RunningSandbox } from '../../sandbox/start.ts';
import { loadConfig, type HarnessConfig } from '../../harness/config.ts';
import { preflight, refusalLines } from '../../harness/preflight.ts';
import { MomoClient } from '../../harness/client/momo-client.ts';
import { SettingRefusedError, type PreflightRefusals } from '../../harness/client/setting-refused.ts';
import { Redactor } from '../../core/secrets/redact.ts';
import { provisionApiUser } from '../support/suite.ts';
import { rewriteAnswers } from '../../sandbox-quality/faults/edges.ts';

let sandbox: RunningSandbox;

before(async () => {
  sandbox = await startEmbeddedSandbox();
});
after(async () => {
  await sandbox.close();
});

function configOf(overrides: Record<string, string> = {}): HarnessConfig {
  return loadConfig({
    MOMO_BASE_URL: sandbox.baseUrl,
    MOMO_COLLECTION_KEY: sandbox.subscriptionKeys.collection,
    MOMO_DISBURSEMENT_KEY: sandbox.subscriptionKeys.disbursement,
    MOMO_REMITTANCE_KEY: sandbox.subscriptionKeys.remittance,
    ...overrides,
  });
}

const apiUser = (product: 'collection' | 'disbursement', host: string) =>
  provisionApiUser(sandbox.baseUrl, product, host, sandbox.subscriptionKeys);

test('settings the target accepts pass the preflight, with API users provisioned or configured', async () => {
  assert.deepEqual(await preflight(configOf()), {});
  const user = await apiUser('collection', '127.0.0.1');
  assert.deepEqual(await preflight(configOf({ MOMO_COLLECTION_USER_ID: user.userId, MOMO_COLLECTION_API_KEY: user.apiKey })), {});
});

test("a wrong subscription key is refused by name, with the gateway's answer; the other products pass", async () => {
  const refusals = await preflight(configOf({ MOMO_DISBURSEMENT_KEY: 'a-rotated-key-0001' }));
  assert.deepEqual(Object.keys(refusals), ['disbursement']);
  assert.equal(refusals.disbursement!.setting, 'MOMO_DISBURSEMENT_KEY');
  assert.equal(refusals.disbursement!.scope, 'product');
  assert.match(
    refusals.disbursement!.message,
    /^the gateway refused MOMO_DISBURSEMENT_KEY: 401 \{"statusCode":401,"message":"Access denied due to invalid subscription key/,
  );
  assert.ok(!refusals.disbursement!.message.includes('a-rotated-key-0001'), 'the key itself is never quoted');
});

test('a wrong API key, and an API user the target does not know, are each named', async () => {
  const user = await apiUser('collection', '127.0.0.1');
  const wrongKey = await preflight(
    configOf({ MOMO_COLLECTION_USER_ID: user.userId, MOMO_COLLECTION_API_KEY: '0123456789abcdef0123456789abcdef' }),
  );
  assert.equal(wrongKey.collection?.setting, 'MOMO_COLLECTION_API_KEY');
  assert.match(wrongKey.collection!.message, /^the target refused MOMO_COLLECTION_API_KEY of MOMO_COLLECTION_USER_ID a token: 401/);
  const unknown = await preflight(configOf({ MOMO_COLLECTION_USER_ID: randomUUID(), MOMO_COLLECTION_API_KEY: user.apiKey }));
  assert.equal(unknown.collection?.setting, 'MOMO_COLLECTION_USER_ID');
  assert.ok(!unknown.collection!.message.includes(user.apiKey), 'the API key itself is never quoted');
});

test('a target environment the target refuses is one line for every product, stopping only the calls that carry it', async () => {
  const refusals = await preflight(configOf({ MOMO_TARGET_ENVIRONMENT: 'mtnuganda' }));
  assert.deepEqual(Object.keys(refusals).sort(), ['collection', 'disbursement', 'remittance']);
  for (const refusal of Object.values(refusals)) {
    assert.equal(refusal.setting, 'MOMO_TARGET_ENVIRONMENT');
    assert.equal(refusal.scope, 'environment');
  }
  const lines = refusalLines(refusals);
  assert.equal(lines.length, 1, lines.join('\n'));
  assert.match(
    lines[0]!,
    /^Preflight: the target refused MOMO_TARGET_ENVIRONMENT "mtnuganda": 500 \{"code":"NOT_ALLOWED_TARGET_ENVIRONMENT".*The collection, disbursement and remittance scenarios that call their API are not tested\.$/,
  );
});

test('an API user registered for callbacks to another host stops only the calls that ask for callbacks', async () => {
  const user = await apiUser('disbursement', 'callbacks.partner.example');
  const refusals = await preflight(
    configOf({ MOMO_DISBURSEMENT_USER_ID: user.userId, MOMO_DISBURSEMENT_API_KEY: user.apiKey, MOMO_CALLBACK_HOST: '127.0.0.1' }),
  );
  assert.equal(refusals.disbursement?.scope, 'callbacks');
  assert.equal(refusals.disbursement?.setting, 'MOMO_CALLBACK_HOST');
  assert.match(
    refusals.disbursement!.message,
    /MOMO_DISBURSEMENT_USER_ID is registered for callbacks to "callbacks\.partner\.example", not to "127\.0\.0\.1"/,
  );
});

test('the client does not make a call a refusal covers, and makes every other', async () => {
  const refusal = (scope: 'product' | 'environment' | 'callbacks') => ({ scope, setting: 'S', message: `refused (${scope})` });
  const clientWith = (refusals: PreflightRefusals) =>
    new MomoClient({
      baseUrl: sandbox.baseUrl,
      sandboxUrl: sandbox.baseUrl,
      subscriptionKeys: sandbox.subscriptionKeys,
      targetEnvironment: 'sandbox',
      connectTimeoutMs: 2000,
      requestTimeoutMs: 5000,
      redactor: new Redactor(),
      refusals,
    });
  const stopped = async (call: Promise<unknown>) =>
    call.then(
      () => false,
      (error) => error instanceof SettingRefusedError,
    );

  const product = clientWith({ collection: refusal('product') });
  assert.equal(await stopped(product.createAccessToken('collection', 'Basic eDp5')), true);
  assert.equal(await stopped(product.createAccessToken('disbursement', 'Basic eDp5')), false, 'another product still calls');
  assert.equal(
    await stopped(product.createAccessToken('collection', 'Basic eDp5', { subscriptionKey: 'none' })),
    false,
    'a call without the key, on purpose, still goes',
  );
  assert.equal(
    await stopped(product.createAccessToken('disbursement', 'Basic eDp5', { subscriptionKey: { product: 'collection' } })),
    true,
    'nor is the refused key sent elsewhere',
  );

  const environment = clientWith({ collection: refusal('environment') });
  assert.equal(await stopped(environment.createAccessToken('collection', 'Basic eDp5')), false, 'the token takes no target environment');
  assert.equal(await stopped(environment.getRequestToPayStatus('Bearer x', randomUUID())), true);

  const callbacks = clientWith({ collection: refusal('callbacks') });
  assert.equal(await stopped(callbacks.getRequestToPayStatus('Bearer x', randomUUID())), false);
  assert.equal(
    await stopped(
      callbacks.requestToPay('Bearer x', randomUUID(), { amount: '1', currency: 'EUR' }, { callbackUrl: 'http://127.0.0.1:9/cb' }),
    ),
    true,
  );
  for (const client of [product, environment, callbacks]) await client.close();
});

test('a target that refuses a token to an API user it has just provisioned is not let off as a setting: its scenarios judge it', async () => {
  // The key the target gave its new API user gets no token there: no setting of the run's is at fault.
  const refusing = await startEmbeddedSandbox(
    {},
    {
      plugins: [
        {
          name: 'new-keys-get-no-token',
          install: (app, context) =>
            rewriteAnswers(app, context, (a) => {
              if (a.operation === 'createAccessToken' && a.status === 200) {
                a.status = 401;
                a.body = { error: 'CREDENTIALS_INVALID' };
              }
            }),
        },
      ],
    },
  );
  try {
    const refusals = await preflight(
      loadConfig({
        MOMO_BASE_URL: refusing.baseUrl,
        MOMO_COLLECTION_KEY: refusing.subscriptionKeys.collection,
        MOMO_DISBURSEMENT_KEY: refusing.subscriptionKeys.disbursement,
        MOMO_REMITTANCE_KEY: refusing.subscriptionKeys.remittance,
      }),
    );
    assert.deepEqual(refusals, {});
  } finally {
    await refusing.close();
  }
});

test('an API user provisioned at MOMO_SANDBOX_URL that another server at MOMO_BASE_URL refuses a token names MOMO_SANDBOX_URL', async () => {
  // Two deployments that do not share their API users: a setting, not the target, is at fault.
  const provisioning = await startEmbeddedSandbox({ subscriptionKeys: sandbox.subscriptionKeys });
  try {
    const refusals = await preflight(configOf({ MOMO_SANDBOX_URL: provisioning.baseUrl }));
    // Disbursement's token comes from MOMO_BASE_URL, its API user from MOMO_SANDBOX_URL.
    assert.equal(refusals.disbursement?.setting, 'MOMO_SANDBOX_URL');
    assert.match(refusals.disbursement!.message, /refused a token to an API user just provisioned at MOMO_SANDBOX_URL/);
  } finally {
    await provisioning.close();
  }
});
