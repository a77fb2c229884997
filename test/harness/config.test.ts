import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { CONFIG_VARIABLES, ConfigError, loadConfig } from '../../harness/config.ts';
import { environmentFor } from '../../harness/target.ts';

const KEYS = { MOMO_COLLECTION_KEY: 'ck-123456', MOMO_DISBURSEMENT_KEY: 'dk-123456', MOMO_REMITTANCE_KEY: 'rk-123456' };
const USER_ID = '7b0e1f52-3a9c-4d8e-9f10-2c3b4a5d6e7f';

function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    assert.equal(error.name, 'ConfigError');
    for (const p of error.problems) assert.ok(error.message.includes(p), `the message lists "${p}"`);
    return error.problems;
  }
  assert.fail('expected a ConfigError');
}

test('an empty environment gives the defaults: the embedded sandbox', () => {
  assert.deepEqual(loadConfig({}), {
    baseUrl: undefined,
    sandboxUrl: undefined,
    subscriptionKeys: { collection: undefined, disbursement: undefined, remittance: undefined },
    apiUsers: {},
    targetEnvironment: 'sandbox',
    currency: 'EUR',
    refusedCurrency: 'USD',
    refusedCurrencySet: false,
    callbackHost: '127.0.0.1',
    callbackPort: 0,
    callbackBind: '127.0.0.1',
    callbackUrl: undefined,
    profile: 'spec',
    strict: false,
    connectTimeoutMs: 5000,
    requestTimeoutMs: 15000,
    retries: 1,
    callRetries: 4,
    callRetryBudgetMs: 20000,
    maxResponseBytes: 1024 * 1024,
    evidenceBudgetBytes: 32 * 1024 * 1024,
    pollTimeoutMs: 10000,
    pollIntervalMs: 100,
    slowOutcomeTimeoutMs: 45000,
    callbackQuietMs: 3000,
    waiversFile: undefined,
    embeddedDeviations: undefined,
    embeddedVariations: undefined,
  });
});

test('blank values count as unset', () => {
  const config = loadConfig({ MOMO_BASE_URL: '  ', MOMO_CURRENCY: '', MOMO_PROFILE: ' ' });
  assert.equal(config.baseUrl, undefined);
  assert.equal(config.currency, 'EUR');
  assert.equal(config.profile, 'spec');
});

test('a remote target: the sandbox URL defaults to the base URL, trailing slashes removed, keys read', () => {
  const config = loadConfig({
    MOMO_BASE_URL: 'https://sandbox.momodeveloper.mtn.com//',
    ...KEYS,
    MOMO_TARGET_ENVIRONMENT: 'mtnghana',
    MOMO_CURRENCY: 'GHS',
    MOMO_PROFILE: 'mtn-sandbox',
    MOMO_CALLBACK_HOST: 'cb.example.com',
    MOMO_REQUEST_TIMEOUT_MS: '30000',
  });
  assert.equal(config.baseUrl, 'https://sandbox.momodeveloper.mtn.com');
  assert.equal(config.sandboxUrl, 'https://sandbox.momodeveloper.mtn.com');
  assert.deepEqual(config.subscriptionKeys, { collection: 'ck-123456', disbursement: 'dk-123456', remittance: 'rk-123456' });
  assert.equal(config.targetEnvironment, 'mtnghana');
  assert.equal(config.currency, 'GHS');
  assert.equal(config.profile, 'mtn-sandbox');
  assert.equal(config.callbackHost, 'cb.example.com');
  assert.equal(config.requestTimeoutMs, 30000);
});

test('a separate sandbox URL is kept, without its trailing slash', () => {
  const config = loadConfig({ MOMO_BASE_URL: 'http://gateway.local:8080', MOMO_SANDBOX_URL: 'http://provisioning.local:8081/', ...KEYS });
  assert.equal(config.baseUrl, 'http://gateway.local:8080');
  assert.equal(config.sandboxUrl, 'http://provisioning.local:8081');
});

test('MOMO_BASE_URL must be an http(s) URL', () => {
  for (const bad of ['not a url', 'ftp://files.example.com', 'sandbox.momodeveloper.mtn.com']) {
    const problems = problemsOf({ MOMO_BASE_URL: bad, ...KEYS });
    assert.equal(problems.length, 1, problems.join('\n'));
    assert.match(problems[0]!, /^MOMO_BASE_URL must be an http\(s\) URL/);
    assert.ok(problems[0]!.includes(`"${bad}"`));
  }
  const sandbox = problemsOf({ MOMO_BASE_URL: 'https://ok.example.com', MOMO_SANDBOX_URL: 'mailto:x@y', ...KEYS });
  assert.equal(sandbox.length, 1);
  assert.match(sandbox[0]!, /^MOMO_SANDBOX_URL must be an http\(s\) URL/);
});

test('with MOMO_BASE_URL set, every subscription key is required and the error names the missing ones', () => {
  const problems = problemsOf({ MOMO_BASE_URL: 'https://ok.example.com', MOMO_COLLECTION_KEY: 'ck-123456' });
  assert.equal(problems.length, 1);
  assert.ok(problems[0]!.includes('MOMO_DISBURSEMENT_KEY'));
  assert.ok(problems[0]!.includes('MOMO_REMITTANCE_KEY'));
  assert.equal(problems[0]!.includes('MOMO_COLLECTION_KEY'), false);
});

test('keys are not required for the embedded sandbox', () => {
  assert.equal(loadConfig({ MOMO_COLLECTION_KEY: 'ck-123456' }).subscriptionKeys.collection, 'ck-123456');
});

test('an existing API user: both the id and the key, and the id must be a UUID v4', () => {
  const config = loadConfig({ MOMO_COLLECTION_USER_ID: USER_ID, MOMO_COLLECTION_API_KEY: 'the-api-key' });
  assert.deepEqual(config.apiUsers.collection, { userId: USER_ID, apiKey: 'the-api-key' });
  assert.equal(config.apiUsers.disbursement, undefined);

  const withoutKey = problemsOf({ MOMO_DISBURSEMENT_USER_ID: USER_ID });
  assert.deepEqual(withoutKey, ['MOMO_DISBURSEMENT_USER_ID and MOMO_DISBURSEMENT_API_KEY go together: set both or neither']);
  const withoutId = problemsOf({ MOMO_REMITTANCE_API_KEY: 'the-api-key' });
  assert.deepEqual(withoutId, ['MOMO_REMITTANCE_USER_ID and MOMO_REMITTANCE_API_KEY go together: set both or neither']);
  const notUuid = problemsOf({ MOMO_COLLECTION_USER_ID: 'user-1', MOMO_COLLECTION_API_KEY: 'the-api-key' });
  assert.deepEqual(notUuid, ['MOMO_COLLECTION_USER_ID must be a UUID v4']);
});

test('bad numbers, profile, currency and callback host are each named with the value given', () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ MOMO_CONNECT_TIMEOUT_MS: 'abc' }, /^MOMO_CONNECT_TIMEOUT_MS must be a whole number from 100 to 120000, got "abc"$/],
    [{ MOMO_REQUEST_TIMEOUT_MS: '1.5' }, /^MOMO_REQUEST_TIMEOUT_MS must be a whole number .* got "1\.5"$/],
    [{ MOMO_POLL_TIMEOUT_MS: '99' }, /^MOMO_POLL_TIMEOUT_MS must be a whole number from 100 to 600000, got "99"$/],
    [{ MOMO_POLL_INTERVAL_MS: '60001' }, /^MOMO_POLL_INTERVAL_MS must be a whole number from 10 to 60000, got "60001"$/],
    [{ MOMO_SLOW_OUTCOME_TIMEOUT_MS: '-5' }, /^MOMO_SLOW_OUTCOME_TIMEOUT_MS .* got "-5"$/],
    [{ MOMO_PROFILE: 'live' }, /^MOMO_PROFILE must be spec or mtn-sandbox, got "live"$/],
    [{ MOMO_CURRENCY: 'eur' }, /^MOMO_CURRENCY must be an ISO 4217 code such as EUR, got "eur"$/],
    [
      { MOMO_CALLBACK_HOST: 'http://cb.example.com:8080' },
      /^MOMO_CALLBACK_HOST must be a host name or IPv4 address .* got "http:\/\/cb\.example\.com:8080"$/,
    ],
  ];
  for (const [env, expected] of cases) {
    const problems = problemsOf(env);
    assert.equal(problems.length, 1, `${JSON.stringify(env)}: ${problems.join(' | ')}`);
    assert.match(problems[0]!, expected);
  }
});

test('several problems are reported at once', () => {
  const problems = problemsOf({
    MOMO_BASE_URL: 'https://ok.example.com',
    MOMO_PROFILE: 'nope',
    MOMO_CURRENCY: 'euro',
    MOMO_POLL_INTERVAL_MS: 'x',
    MOMO_COLLECTION_USER_ID: USER_ID,
  });
  assert.equal(problems.length, 5, problems.join('\n'));
  assert.ok(problems.some((p) => p.startsWith('MOMO_PROFILE')));
  assert.ok(problems.some((p) => p.startsWith('MOMO_CURRENCY')));
  assert.ok(problems.some((p) => p.startsWith('MOMO_POLL_INTERVAL_MS')));
  assert.ok(problems.some((p) => p.startsWith('MOMO_COLLECTION_USER_ID and MOMO_COLLECTION_API_KEY')));
  assert.ok(problems.some((p) => p.includes('MOMO_COLLECTION_KEY, MOMO_DISBURSEMENT_KEY, MOMO_REMITTANCE_KEY')));
});

test('the callback receiver: a free port, bound to loopback for a loopback host and to every address otherwise', () => {
  const local = loadConfig({});
  assert.deepEqual([local.callbackPort, local.callbackBind, local.callbackUrl], [0, '127.0.0.1', undefined]);
  assert.equal(loadConfig({ MOMO_CALLBACK_HOST: 'localhost' }).callbackBind, '127.0.0.1');
  const remote = loadConfig({ MOMO_CALLBACK_HOST: 'harness.example.com' });
  assert.deepEqual([remote.callbackHost, remote.callbackBind], ['harness.example.com', '0.0.0.0']);
});

test('MOMO_CALLBACK_PORT and MOMO_CALLBACK_BIND are taken as given', () => {
  const config = loadConfig({ MOMO_CALLBACK_HOST: 'harness.example.com', MOMO_CALLBACK_PORT: '8090', MOMO_CALLBACK_BIND: '10.0.0.7' });
  assert.equal(config.callbackPort, 8090);
  assert.equal(config.callbackBind, '10.0.0.7');
  assert.equal(loadConfig({ MOMO_CALLBACK_BIND: '::' }).callbackBind, '::');
  assert.equal(loadConfig({ MOMO_CALLBACK_HOST: 'harness.example.com', MOMO_CALLBACK_BIND: '127.0.0.1' }).callbackBind, '127.0.0.1');
});

test('MOMO_CALLBACK_URL: its origin is the callback base and its host the registered callback host', () => {
  const tunnel = loadConfig({ MOMO_CALLBACK_URL: 'https://Abc.Example.app/', MOMO_CALLBACK_PORT: '8090' });
  assert.equal(tunnel.callbackUrl, 'https://abc.example.app');
  assert.equal(tunnel.callbackHost, 'abc.example.app');
  assert.equal(tunnel.callbackPort, 8090);
  assert.equal(tunnel.callbackBind, '0.0.0.0');
  const withPort = loadConfig({
    MOMO_CALLBACK_URL: 'http://203.0.113.9:8090',
    MOMO_CALLBACK_HOST: '203.0.113.9',
    MOMO_CALLBACK_BIND: '127.0.0.1',
  });
  assert.equal(withPort.callbackUrl, 'http://203.0.113.9:8090');
  assert.equal(withPort.callbackHost, '203.0.113.9');
  assert.equal(withPort.callbackBind, '127.0.0.1');
  assert.equal(
    loadConfig({ MOMO_CALLBACK_URL: 'https://abc.example.app:443' }).callbackUrl,
    'https://abc.example.app',
    'the default port is dropped',
  );
  const local = loadConfig({ MOMO_CALLBACK_URL: 'http://127.0.0.1:8090' });
  assert.deepEqual([local.callbackHost, local.callbackBind], ['127.0.0.1', '127.0.0.1']);
});

test('bad callback settings are each named with the value given', () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ MOMO_CALLBACK_PORT: '70000' }, /^MOMO_CALLBACK_PORT must be a whole number from 0 to 65535, got "70000"$/],
    [{ MOMO_CALLBACK_PORT: 'http' }, /^MOMO_CALLBACK_PORT must be a whole number .* got "http"$/],
    [{ MOMO_CALLBACK_BIND: 'my-laptop' }, /^MOMO_CALLBACK_BIND must be an IP address .* got "my-laptop"$/],
    [{ MOMO_CALLBACK_URL: 'abc.example.app' }, /^MOMO_CALLBACK_URL must be .* an absolute http\(s\) URL; got "abc\.example\.app"$/],
    [{ MOMO_CALLBACK_URL: 'ftp://abc.example.app' }, /^MOMO_CALLBACK_URL must be .* with the scheme http or https; got/],
    [
      { MOMO_CALLBACK_URL: 'https://abc.example.app/hooks' },
      /^MOMO_CALLBACK_URL must be .* without a path, query or credentials .*; got "https:\/\/abc\.example\.app\/hooks"$/,
    ],
    [{ MOMO_CALLBACK_URL: 'https://user:secret@abc.example.app' }, /without a path, query or credentials/],
    [{ MOMO_CALLBACK_URL: 'http://[::1]:8090' }, /with a host name or IPv4 address/],
    [
      { MOMO_CALLBACK_URL: 'https://abc.example.app', MOMO_CALLBACK_HOST: 'other.example.com' },
      /^MOMO_CALLBACK_HOST \("other\.example\.com"\) is not the host of MOMO_CALLBACK_URL \("abc\.example\.app"\)/,
    ],
  ];
  for (const [env, expected] of cases) {
    const problems = problemsOf(env);
    assert.equal(problems.length, 1, `${JSON.stringify(env)}: ${problems.join(' | ')}`);
    assert.match(problems[0]!, expected);
  }
});

test('deliberate deviations and conforming variations are for the embedded sandbox only', () => {
  const remote = { MOMO_BASE_URL: 'http://127.0.0.1:9', MOMO_COLLECTION_KEY: 'a', MOMO_DISBURSEMENT_KEY: 'b', MOMO_REMITTANCE_KEY: 'c' };
  assert.equal(loadConfig({ MOMO_SANDBOX_DEVIATIONS: 'callback-late' }).embeddedDeviations, 'callback-late');
  assert.throws(
    () => loadConfig({ MOMO_SANDBOX_DEVIATIONS: 'callback-late', ...remote }),
    (error: Error) =>
      error instanceof ConfigError &&
      error.message.includes(
        'MOMO_SANDBOX_DEVIATIONS starts the embedded sandbox with deliberate deviations; it cannot apply to the server MOMO_BASE_URL names',
      ),
  );
  assert.equal(loadConfig({ MOMO_SANDBOX_VARIATIONS: 'keys-reordered' }).embeddedVariations, 'keys-reordered');
  assert.throws(
    () => loadConfig({ MOMO_SANDBOX_VARIATIONS: 'keys-reordered', ...remote }),
    (error: Error) =>
      error instanceof ConfigError &&
      error.message.includes(
        'MOMO_SANDBOX_VARIATIONS starts the embedded sandbox with conforming variations; it cannot apply to the server MOMO_BASE_URL names',
      ),
  );
});

test('.env.example copied as it is tests the embedded sandbox: its target and keys are commented out', () => {
  const example = parseEnv(readFileSync(new URL('../../.env.example', import.meta.url), 'utf8')) as Record<string, string>;
  const config = loadConfig(example);
  assert.equal(config.baseUrl, undefined);
  assert.deepEqual(config.subscriptionKeys, { collection: undefined, disbursement: undefined, remittance: undefined });
  assert.equal(example.MOMO_BASE_URL, undefined);
});

test('the currency a target refuses: by default one that is not MOMO_CURRENCY; a setting names another', () => {
  assert.equal(loadConfig({}).refusedCurrency, 'USD');
  assert.equal(loadConfig({ MOMO_CURRENCY: 'USD' }).refusedCurrency, 'XOF');
  // A target that takes both EUR and USD names one it refuses.
  assert.equal(loadConfig({ MOMO_CURRENCY: 'EUR', MOMO_REFUSED_CURRENCY: 'GBP' }).refusedCurrency, 'GBP');
  assert.deepEqual(problemsOf({ MOMO_REFUSED_CURRENCY: 'usd' }), [
    'MOMO_REFUSED_CURRENCY must be an ISO 4217 code such as USD (three capital letters), got "usd"',
  ]);
  assert.deepEqual(problemsOf({ MOMO_CURRENCY: 'GHS', MOMO_REFUSED_CURRENCY: 'GHS' }), [
    'MOMO_REFUSED_CURRENCY must be a currency the target refuses, not MOMO_CURRENCY itself ("GHS"), the one it takes',
  ]);
});

test("the bounds on what a target can make the harness hold: a response body, and the run's evidence", () => {
  const config = loadConfig({ MOMO_MAX_RESPONSE_BYTES: '16777216', MOMO_EVIDENCE_BUDGET_BYTES: '0' });
  assert.equal(config.maxResponseBytes, 16 * 1024 * 1024);
  assert.equal(config.evidenceBudgetBytes, 0);
  assert.deepEqual(problemsOf({ MOMO_MAX_RESPONSE_BYTES: '10', MOMO_EVIDENCE_BUDGET_BYTES: '1073741824' }), [
    'MOMO_MAX_RESPONSE_BYTES must be a whole number from 1024 to 268435456, got "10"',
    'MOMO_EVIDENCE_BUDGET_BYTES must be a whole number from 0 to 67108864, got "1073741824"',
  ]);
});

test('every setting the harness reads is in .env.example, and the scenarios are given every one the runner read', () => {
  const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
  // Listed as a line of its own, set or commented out (the target and its keys are, so that a copy stays local).
  const listed = [...example.matchAll(/^(?:# )?(MOMO_[A-Z_]+)=/gm)].map((m) => m[1]);
  assert.deepEqual(listed.sort(), Object.keys(CONFIG_VARIABLES).sort());
  const config = loadConfig({
    MOMO_BASE_URL: 'http://127.0.0.1:1',
    ...KEYS,
    MOMO_MAX_RESPONSE_BYTES: '2048',
    MOMO_EVIDENCE_BUDGET_BYTES: '4096',
  });
  // What the scenarios read back is what the runner read.
  const { waiversFile: _w, embeddedDeviations: _d, ...read } = config;
  const { waiversFile: _w2, embeddedDeviations: _d2, ...again } = loadConfig(environmentFor(config));
  assert.deepEqual(again, read);
});
