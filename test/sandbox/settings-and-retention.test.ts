import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { ManualClock } from '../../sandbox/domain/clock.ts';
import { DIFFERENCES, READINGS } from '../../core/profiles.ts';
import { DEVELOPMENT_KEYS, SettingsError, resolveSettings } from '../../sandbox/domain/settings.ts';
import { BoundedStore, ByteBudget, RECORD_OVERHEAD_BYTES, StoreFullError, estimateBytes } from '../../sandbox/domain/store.ts';
import { partyOf, transactionBytes, type Transaction } from '../../sandbox/domain/state.ts';
import {
  KEYS,
  assertSchema,
  eventually,
  path,
  payer,
  requestToPayBody,
  startSandbox,
  type Caller,
  type TestSandbox,
} from '../support/sandbox.ts';
import { startCli } from '../support/sandbox-cli.ts';

/** Every flag of the sandbox with its environment variable (sandbox/settings.ts). */
const FLAGS: Array<[string, string]> = [
  ['--host', 'MOMO_SANDBOX_HOST'],
  ['--port', 'PORT'],
  ['--profile', 'MOMO_PROFILE'],
  ['--token-lifetime', 'MOMO_SANDBOX_TOKEN_LIFETIME'],
  ['--currencies', 'MOMO_SANDBOX_CURRENCIES'],
  ['--target-environments', 'MOMO_SANDBOX_TARGET_ENVIRONMENTS'],
  ['--outcomes', 'MOMO_SANDBOX_OUTCOMES'],
  ['--delayed-success-ms', 'MOMO_SANDBOX_DELAYED_SUCCESS_MS'],
  ['--pending-timeout-ms', 'MOMO_SANDBOX_PENDING_TIMEOUT_MS'],
  ['--callback-method', 'MOMO_SANDBOX_CALLBACK_METHOD'],
  ['--callback-hosts', 'MOMO_SANDBOX_CALLBACK_HOSTS'],
  ['--callback-timeout-ms', 'MOMO_SANDBOX_CALLBACK_TIMEOUT_MS'],
  ['--callback-retry-delays-ms', 'MOMO_SANDBOX_CALLBACK_RETRY_DELAYS_MS'],
  ['--notification-window-ms', 'MOMO_SANDBOX_NOTIFICATION_WINDOW_MS'],
  ['--notification-cooldown-ms', 'MOMO_SANDBOX_NOTIFICATION_COOLDOWN_MS'],
  ['--opening-balance', 'MOMO_SANDBOX_OPENING_BALANCE'],
  ['--retention-max-entries', 'MOMO_SANDBOX_RETENTION_MAX_ENTRIES'],
  ['--retention-max-age-ms', 'MOMO_SANDBOX_RETENTION_MAX_AGE_MS'],
  ['--retention-max-bytes', 'MOMO_SANDBOX_RETENTION_MAX_BYTES'],
  ['--max-api-users', 'MOMO_SANDBOX_MAX_API_USERS'],
  ['--consent-interval', 'MOMO_SANDBOX_CONSENT_INTERVAL'],
  ['--consent-request-lifetime', 'MOMO_SANDBOX_CONSENT_REQUEST_LIFETIME'],
  ['--consent-token-lifetime', 'MOMO_SANDBOX_CONSENT_TOKEN_LIFETIME'],
  ['--consent-valid-in', 'MOMO_SANDBOX_CONSENT_VALID_IN'],
  ['--scopes', 'MOMO_SANDBOX_SCOPES'],
  ['--jwt-secret', 'MOMO_SANDBOX_JWT_SECRET'],
  ['--data', 'MOMO_SANDBOX_DATA'],
  ['--log-level', 'MOMO_SANDBOX_LOG_LEVEL'],
  ['--headers-timeout-ms', 'MOMO_SANDBOX_HEADERS_TIMEOUT_MS'],
  ['--request-timeout-ms', 'MOMO_SANDBOX_REQUEST_TIMEOUT_MS'],
  ['--keep-alive-timeout-ms', 'MOMO_SANDBOX_KEEP_ALIVE_TIMEOUT_MS'],
  ['--max-connections', 'MOMO_SANDBOX_MAX_CONNECTIONS'],
  ['--client-report', 'MOMO_SANDBOX_CLIENT_REPORT'],
  ['--chaos', 'MOMO_SANDBOX_CHAOS'],
  ['--chaos-seed', 'MOMO_SANDBOX_CHAOS_SEED'],
  ['--chaos-latency-ms', 'MOMO_SANDBOX_CHAOS_LATENCY_MS'],
  ['--chaos-long-pending-ms', 'MOMO_SANDBOX_CHAOS_LONG_PENDING_MS'],
  ['--chaos-callback-delay-ms', 'MOMO_SANDBOX_CHAOS_CALLBACK_DELAY_MS'],
  ['--deviations', 'MOMO_SANDBOX_DEVIATIONS'],
  ['--variations', 'MOMO_SANDBOX_VARIATIONS'],
  ['--strict', 'MOMO_SANDBOX_STRICT'],
  ['--collection-key', 'MOMO_COLLECTION_KEY'],
  ['--disbursement-key', 'MOMO_DISBURSEMENT_KEY'],
  ['--remittance-key', 'MOMO_REMITTANCE_KEY'],
];

/** resolveSettings must refuse these options with a SettingsError whose message contains every one of `mentions`. */
function assertRefused(options: Parameters<typeof resolveSettings>[0], mentions: string[]): SettingsError {
  let caught: unknown;
  try {
    resolveSettings(options);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof SettingsError, `expected a SettingsError, got ${String(caught)}`);
  for (const m of mentions) assert.ok(caught.message.includes(m), `the message should name ${JSON.stringify(m)}:\n${caught.message}`);
  return caught;
}

describe('resolveSettings', () => {
  test('defaults: port 8080, profile spec, EUR, tokens of 3600 s and the development keys', () => {
    const s = resolveSettings();
    assert.equal(s.host, '127.0.0.1');
    assert.equal(s.port, 8080);
    assert.equal(s.profile, 'spec');
    assert.deepEqual(s.currencies, ['EUR']);
    assert.deepEqual(s.targetEnvironments, ['sandbox']);
    assert.equal(s.tokenLifetimeSeconds, 3600);
    assert.deepEqual(s.subscriptionKeys, { ...DEVELOPMENT_KEYS });
    assert.deepEqual(s.subscriptionKeys, KEYS, 'the development keys are the documented ones');
    assert.equal(s.callbackMethod, 'documented', 'each operation calls back with its documented method');
    assert.equal(s.strict, false, 'the strict readings are off: the sandbox accepts what the live service accepts');
    assert.deepEqual(s.callbackRetryDelaysMs, [1000, 5000]);
    assert.equal(s.retentionMaxAgeMs, 3_600_000);
    assert.equal(s.retentionMaxEntries, 500_000);
    assert.equal(s.retentionMaxBytes, 256 * 1024 * 1024);
    assert.equal(s.callbackHosts, 'any', 'callbacks may go anywhere but link-local and metadata addresses');
    assert.equal(s.outcomesFile, undefined);
    assert.equal(s.logLevel, 'info');
    assert.deepEqual(s.scopes, ['profile', 'openid', 'all_info']);
  });

  test('without a configured JWT secret each start gets its own random one', () => {
    const a = resolveSettings().jwtSecret;
    const b = resolveSettings().jwtSecret;
    assert.ok(a.length >= 32, a);
    assert.notEqual(a, b);
    assert.equal(resolveSettings({ env: { MOMO_SANDBOX_JWT_SECRET: 'a-fixed-secret' } }).jwtSecret, 'a-fixed-secret');
  });

  test('the environment overrides the defaults', () => {
    const s = resolveSettings({
      env: {
        PORT: '9001',
        MOMO_PROFILE: 'mtn-sandbox',
        MOMO_COLLECTION_KEY: 'collection-secret-1',
        MOMO_SANDBOX_CURRENCIES: 'EUR, XOF',
        MOMO_SANDBOX_TARGET_ENVIRONMENTS: 'sandbox,mtnuganda',
        MOMO_SANDBOX_TOKEN_LIFETIME: '60',
        MOMO_SANDBOX_CALLBACK_RETRY_DELAYS_MS: 'none',
        MOMO_SANDBOX_CALLBACK_METHOD: 'POST',
        MOMO_SANDBOX_LOG_LEVEL: 'warn',
      },
    });
    assert.equal(s.port, 9001);
    assert.equal(s.profile, 'mtn-sandbox');
    assert.equal(s.subscriptionKeys.collection, 'collection-secret-1');
    assert.equal(s.subscriptionKeys.disbursement, DEVELOPMENT_KEYS.disbursement);
    assert.deepEqual(s.currencies, ['EUR', 'XOF']);
    assert.deepEqual(s.targetEnvironments, ['sandbox', 'mtnuganda']);
    assert.equal(s.tokenLifetimeSeconds, 60);
    assert.deepEqual(s.callbackRetryDelaysMs, []);
    assert.equal(s.callbackMethod, 'POST');
    assert.equal(s.logLevel, 'warn');
  });

  test('flags override the environment', () => {
    const env = { PORT: '9001', MOMO_PROFILE: 'mtn-sandbox', MOMO_COLLECTION_KEY: 'env-collection-key', MOMO_SANDBOX_CURRENCIES: 'XOF' };
    const s = resolveSettings({
      env,
      argv: ['--port', '7000', '--profile=spec', '--collection-key', 'flag-collection-key', '--currencies', 'EUR,GHS'],
    });
    assert.equal(s.port, 7000);
    assert.equal(s.profile, 'spec');
    assert.equal(s.subscriptionKeys.collection, 'flag-collection-key');
    assert.deepEqual(s.currencies, ['EUR', 'GHS']);
  });

  test('overrides win over flags and environment, and are still cross-checked', () => {
    assert.equal(resolveSettings({ env: { PORT: '9001' }, argv: ['--port', '7000'], overrides: { port: 0 } }).port, 0);
    assertRefused({ overrides: { retentionMaxAgeMs: 1000 } }, ['--retention-max-age-ms']);
  });

  test('a port that is not a number names --port and PORT and says what is wrong', () => {
    assertRefused({ argv: ['--port', 'abc'] }, ['--port', 'PORT', 'whole number', 'abc']);
    assertRefused({ env: { PORT: 'abc' } }, ['--port', 'PORT', 'whole number', 'abc']);
    assertRefused({ argv: ['--port', '1e3'] }, ['--port', 'PORT', 'whole number']);
    assertRefused({ argv: ['--port', '80.5'] }, ['--port', 'PORT', 'whole number']);
  });

  test('a port out of range names --port and PORT and the range', () => {
    assertRefused({ argv: ['--port', '70000'] }, ['--port', 'PORT', '65535', '70000']);
    assertRefused({ env: { PORT: '-1' } }, ['--port', 'PORT', '65535']);
  });

  test('an unknown profile names --profile and MOMO_PROFILE and the profiles there are', () => {
    assertRefused({ argv: ['--profile', 'prod'] }, ['--profile', 'MOMO_PROFILE', 'prod', 'spec', 'mtn-sandbox']);
    assertRefused({ env: { MOMO_PROFILE: 'SPEC' } }, ['--profile', 'MOMO_PROFILE', 'SPEC']);
  });

  test('a currency that is not an ISO 4217 code names --currencies and MOMO_SANDBOX_CURRENCIES', () => {
    assertRefused({ argv: ['--currencies', 'eur'] }, ['--currencies', 'MOMO_SANDBOX_CURRENCIES', '"eur"', 'ISO 4217']);
    assertRefused({ env: { MOMO_SANDBOX_CURRENCIES: 'EUR,EURO' } }, ['--currencies', 'MOMO_SANDBOX_CURRENCIES', '"EURO"']);
    assertRefused({ env: { MOMO_SANDBOX_CURRENCIES: ' , ' } }, ['--currencies', 'MOMO_SANDBOX_CURRENCIES', 'at least one']);
  });

  test('callback retry delays that are not numbers name the flag and the variable', () => {
    assertRefused({ argv: ['--callback-retry-delays-ms', 'x'] }, [
      '--callback-retry-delays-ms',
      'MOMO_SANDBOX_CALLBACK_RETRY_DELAYS_MS',
      '"x"',
    ]);
    assertRefused({ env: { MOMO_SANDBOX_CALLBACK_RETRY_DELAYS_MS: '100,-5' } }, [
      '--callback-retry-delays-ms',
      'MOMO_SANDBOX_CALLBACK_RETRY_DELAYS_MS',
      '100,-5',
    ]);
  });

  test('an invalid subscription key names the flag and the variable', () => {
    assertRefused({ argv: ['--collection-key', 'short'] }, ['--collection-key', 'MOMO_COLLECTION_KEY', '8 to 256']);
    assertRefused({ env: { MOMO_REMITTANCE_KEY: 'has a space in it' } }, ['--remittance-key', 'MOMO_REMITTANCE_KEY']);
  });

  test('two products given the same subscription key are refused', () => {
    // One key cannot open two products: every request with it would be routed to only one of them.
    assertRefused({ env: { MOMO_COLLECTION_KEY: 'one-shared-key-123', MOMO_DISBURSEMENT_KEY: 'one-shared-key-123' } }, [
      '--collection-key',
      '--disbursement-key',
    ]);
  });

  test('an unknown flag or a stray argument is refused, naming it', () => {
    assertRefused({ argv: ['--nope'] }, ['--nope', '--help']);
    assertRefused({ argv: ['--port', '8080', 'extra'] }, ['extra']);
  });

  test('a retention age shorter than the pending timeout names the flag, the variable and the reason', () => {
    const mentions = ['--retention-max-age-ms', 'MOMO_SANDBOX_RETENTION_MAX_AGE_MS', 'pending timeout'];
    assertRefused({ argv: ['--retention-max-age-ms', '5000', '--pending-timeout-ms', '10000'] }, mentions);
    assertRefused({ env: { MOMO_SANDBOX_RETENTION_MAX_AGE_MS: '5000', MOMO_SANDBOX_PENDING_TIMEOUT_MS: '10000' } }, mentions);
  });

  test('slow-caller bounds: defaults, and a headers timeout longer than the request timeout or a cap of 0 connections is refused by name', () => {
    const s = resolveSettings();
    assert.deepEqual([s.headersTimeoutMs, s.requestTimeoutMs, s.keepAliveTimeoutMs, s.maxConnections], [10_000, 30_000, 5000, 1024]);
    const fromEnv = resolveSettings({
      env: {
        MOMO_SANDBOX_HEADERS_TIMEOUT_MS: '2000',
        MOMO_SANDBOX_REQUEST_TIMEOUT_MS: '4000',
        MOMO_SANDBOX_KEEP_ALIVE_TIMEOUT_MS: '100',
        MOMO_SANDBOX_MAX_CONNECTIONS: '7',
      },
    });
    assert.deepEqual(
      [fromEnv.headersTimeoutMs, fromEnv.requestTimeoutMs, fromEnv.keepAliveTimeoutMs, fromEnv.maxConnections],
      [2000, 4000, 100, 7],
    );
    assertRefused({ argv: ['--headers-timeout-ms', '20000', '--request-timeout-ms', '10000'] }, [
      '--headers-timeout-ms',
      'MOMO_SANDBOX_REQUEST_TIMEOUT_MS',
      'must not exceed',
    ]);
    assertRefused({ argv: ['--max-connections', '0'] }, ['--max-connections', 'MOMO_SANDBOX_MAX_CONNECTIONS', 'between 1 and']);
    assertRefused({ env: { MOMO_SANDBOX_REQUEST_TIMEOUT_MS: 'soon' } }, ['--request-timeout-ms', 'whole number']);
  });

  test('several problems are reported together', () => {
    const error = assertRefused(
      { argv: ['--port', 'abc', '--profile', 'prod', '--currencies', 'eur'], env: { MOMO_SANDBOX_CALLBACK_RETRY_DELAYS_MS: 'x' } },
      ['--port', '--profile', '--currencies', '--callback-retry-delays-ms'],
    );
    assert.equal(error.problems.length, 4, error.message);
  });
});

// ---------------------------------------------------------------------------------------------------
// The command line: node --import tsx cli/momo-harness.ts sandbox

async function runCli(args: string[], env: Record<string, string> = {}) {
  const { out, exited } = startCli(args, env);
  const { code, signal } = await exited;
  return { code, signal, ...out };
}

function assertNoStackTrace(text: string): void {
  assert.doesNotMatch(text, /^\s+at .+[(:]\d+/m, `a stack trace was printed:\n${text}`);
}

describe('the command line', () => {
  test('--help exits 0 and lists every flag with its environment variable', async () => {
    const { code, stdout, stderr } = await runCli(['--help']);
    assert.equal(code, 0, stderr);
    for (const [flag, env] of FLAGS) {
      assert.match(stdout, new RegExp(`^\\s+${flag}\\s+${env}\\s`, 'm'), `--help does not list ${flag} with ${env}`);
    }
    assert.ok(stdout.includes('--list-differences'), '--help should mention --list-differences');
    assert.ok(stdout.includes('--list-deviations'), '--help should mention --list-deviations');
    assert.ok(stdout.includes('--list-variations'), '--help should mention --list-variations');
    const listed = stdout.split('\n').filter((line) => /^\s+--[a-z]/.test(line)).length;
    assert.equal(listed, FLAGS.length, 'every flag listed is one the tests know');
  });

  test('--list-differences exits 0 and lists every difference and reading', async () => {
    const { code, stdout, stderr } = await runCli(['--list-differences']);
    assert.equal(code, 0, stderr);
    for (const key of Object.keys(DIFFERENCES)) assert.match(stdout, new RegExp(`^- ${key}:`, 'm'), `${key} is not listed`);
    for (const reading of READINGS) assert.ok(stdout.includes(reading), `reading not listed: ${reading.slice(0, 60)}`);
  });

  test('--port abc exits 2 with a short message on stderr and no stack trace', async () => {
    const { code, stdout, stderr } = await runCli(['--port', 'abc']);
    assert.equal(code, 2);
    assert.equal(stdout, '');
    assert.ok(stderr.includes('--port') && stderr.includes('PORT') && stderr.includes('abc'), stderr);
    assert.ok(stderr.trim().split('\n').length <= 3, `stderr is long:\n${stderr}`);
    assertNoStackTrace(stderr);
  });

  test('an invalid environment variable or an unknown flag also exits 2 without a stack trace', async () => {
    const fromEnv = await runCli([], { MOMO_PROFILE: 'prod' });
    assert.equal(fromEnv.code, 2);
    assert.ok(fromEnv.stderr.includes('MOMO_PROFILE') && fromEnv.stderr.includes('--profile'), fromEnv.stderr);
    assertNoStackTrace(fromEnv.stderr);
    const unknown = await runCli(['--nope']);
    assert.equal(unknown.code, 2);
    assert.ok(unknown.stderr.includes('--nope'), unknown.stderr);
    assertNoStackTrace(unknown.stderr);
  });

  test('--port 0 starts, prints its address and the development keys, answers /health and stops on SIGTERM with 0', async () => {
    const { child, out, exited } = startCli(['--port', '0']);
    try {
      const base = await eventually(async () => /on (http:\/\/127\.0\.0\.1:\d+)\s*$/m.exec(out.stdout)?.[1], { timeoutMs: 15_000 });
      await eventually(async () => (out.stdout.includes('health:') ? true : undefined));
      for (const [product, key] of Object.entries(DEVELOPMENT_KEYS)) {
        assert.match(out.stdout, new RegExp(`${product}\\s+${key}`), `the ${product} development key is not printed`);
      }
      assert.doesNotMatch(out.stdout, /chaos|plugins/i, 'a sandbox started without --chaos has chaos, or another plugin');
      const health = await fetch(`${base}/health`);
      assert.equal(health.status, 200);
      const body = (await health.json()) as { status: string; profile: string };
      assert.equal(body.status, 'ok');
      assert.equal(body.profile, 'spec');
      child.kill('SIGTERM');
      const { code, signal } = await exited;
      assert.equal(signal, null);
      assert.equal(code, 0, out.stderr);
      assertNoStackTrace(out.stderr);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  test('--client-report: a folder it cannot write exits 2 with one line; a run stopped by SIGINT writes its report there', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'momo-client-report-cli-'));
    try {
      writeFileSync(join(dir, 'a-file'), '');
      const refused = await runCli(['--port', '0', '--client-report', join(dir, 'a-file', 'report')]);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /--client-report \(MOMO_SANDBOX_CLIENT_REPORT\)/);
      assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr);
      assertNoStackTrace(refused.stderr);

      const report = join(dir, 'report');
      const { child, out, exited } = startCli(['--port', '0'], { MOMO_SANDBOX_CLIENT_REPORT: report });
      try {
        const base = await eventually(async () => /on (http:\/\/127\.0\.0\.1:\d+)\s*$/m.exec(out.stdout)?.[1], { timeoutMs: 15_000 });
        await eventually(async () => (out.stdout.includes('Client report:') ? true : undefined));
        const upper = await fetch(`${base}/collection/v1_0/accountholder/MSISDN/46733123499/active`, {
          headers: { 'ocp-apim-subscription-key': DEVELOPMENT_KEYS.collection },
        });
        await upper.body?.cancel();
        child.kill('SIGINT');
        const { code } = await exited;
        assert.equal(code, 0, out.stderr);
        assert.match(out.stdout, /Client report written to /);
        const written = JSON.parse(readFileSync(join(report, 'client-report.json'), 'utf8')) as { clients: { findings: unknown[] }[] };
        assert.equal(written.clients.length, 1, 'the one client that called');
        assert.ok(readFileSync(join(report, 'client-report.html'), 'utf8').startsWith('<!doctype html>'));
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('--chaos starts it with the chaos, says so with the seed that repeats it, and logs each condition applied', async () => {
    const { child, out, exited } = startCli(['--port', '0', '--chaos', '503=1', '--chaos-seed', '9']);
    try {
      const base = await eventually(async () => /on (http:\/\/127\.0\.0\.1:\d+)\s*$/m.exec(out.stdout)?.[1], { timeoutMs: 15_000 });
      await eventually(async () => (out.stdout.includes('health:') ? true : undefined));
      assert.match(out.stdout, /^With spec-legal chaos: 503=1 \(--chaos; seed 9, --chaos-seed 9 repeats it\)\.$/m);
      const answer = await fetch(`${base}${path('createApiUser')}`, {
        method: 'POST',
        headers: {
          'ocp-apim-subscription-key': DEVELOPMENT_KEYS.collection,
          'x-reference-id': randomUUID(),
          'content-type': 'application/json',
        },
        body: JSON.stringify({ providerCallbackHost: '127.0.0.1' }),
      });
      assert.equal(answer.status, 503);
      assert.equal(((await answer.json()) as { code: string }).code, 'SERVICE_UNAVAILABLE');
      await eventually(async () => (out.stdout.includes('"msg":"chaos: 503: answered 503 SERVICE_UNAVAILABLE"') ? true : undefined));
      child.kill('SIGTERM');
      assert.equal((await exited).code, 0, out.stderr);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });

  test('a configured subscription key is used but never printed, even at log level trace', async () => {
    const secret = `custom-secret-${randomUUID()}`;
    const { child, out, exited } = startCli(['--port', '0', '--log-level', 'trace'], { MOMO_COLLECTION_KEY: secret });
    try {
      const base = await eventually(async () => /on (http:\/\/127\.0\.0\.1:\d+)\s*$/m.exec(out.stdout)?.[1], { timeoutMs: 15_000 });
      await eventually(async () => (out.stdout.includes('health:') ? true : undefined));
      assert.match(out.stdout, /collection\s+\(configured; not shown\)/);
      assert.match(out.stdout, new RegExp(`disbursement\\s+${DEVELOPMENT_KEYS.disbursement}`));
      const created = await fetch(`${base}${path('createApiUser')}`, {
        method: 'POST',
        headers: { 'ocp-apim-subscription-key': secret, 'x-reference-id': randomUUID(), 'content-type': 'application/json' },
        body: JSON.stringify({ providerCallbackHost: '127.0.0.1' }),
      });
      assert.equal(created.status, 201, 'the configured key opens the collection product');
      const devKey = await fetch(`${base}${path('getBalance', 'collection')}`, {
        headers: { 'ocp-apim-subscription-key': DEVELOPMENT_KEYS.collection },
      });
      assert.equal(devKey.status, 401, 'the development key no longer opens collection');
      await devKey.body?.cancel();
      child.kill('SIGTERM');
      const { code } = await exited;
      assert.equal(code, 0, out.stderr);
      assert.ok(out.stdout.includes('incoming request'), 'trace level logs requests, so the output has lines to check');
      assert.ok(!out.stdout.includes(secret), 'the configured key was printed on stdout');
      assert.ok(!out.stderr.includes(secret), 'the configured key was printed on stderr');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});

// ---------------------------------------------------------------------------------------------------
// BoundedStore

function newStore(limits = { maxEntries: 3, maxAgeMs: 1000 }) {
  const clock = new ManualClock(1_000_000);
  const forgotten: string[] = [];
  const store = new BoundedStore<string>('test', limits, clock, {
    onForget: (v) => {
      forgotten.push(v);
    },
  });
  return { clock, forgotten, store };
}

describe('BoundedStore', () => {
  test('stores sharing a byte budget refuse a record that would exceed it, by bytes, and give bytes back as records go', () => {
    const clock = new ManualClock(0);
    const budget = new ByteBudget(3 * RECORD_OVERHEAD_BYTES + 4000);
    const a = new BoundedStore<{ url: string }>('a', { maxEntries: 100, maxAgeMs: 1000, budget }, clock);
    const b = new BoundedStore<{ party: { id: string } }>('b', { maxEntries: 100, maxAgeMs: 5000, budget }, clock);
    a.add('1', { url: 'u'.repeat(1000) });
    assert.equal(budget.used, estimateBytes('1', { url: 'u'.repeat(1000) }));
    assert.equal(budget.used, RECORD_OVERHEAD_BYTES + 2 + 2000, 'two bytes a character, plus the fixed part');
    b.add('2', { party: { id: 'p'.repeat(900) } });
    assert.equal(budget.used, 2 * RECORD_OVERHEAD_BYTES + 4 + 2000 + 1800, 'nested strings count');
    assert.throws(
      () => b.add('3', { party: { id: 'p'.repeat(200) } }),
      (error: unknown) => {
        assert.ok(error instanceof StoreFullError && error.limit === 'bytes', String(error));
        assert.ok(error.message.includes(String(budget.maxBytes)), error.message);
        return true;
      },
    );
    assert.equal(b.size, 1, 'nothing was dropped to make room');
    clock.advance(1001);
    // An expired record of another store counts until that store is swept (the sandbox sweeps every one at least every 10 s).
    assert.throws(() => b.add('3', { party: { id: 'p'.repeat(200) } }), StoreFullError);
    assert.equal(a.forgetExpired(), 1);
    b.add('3', { party: { id: 'p'.repeat(200) } });
    b.delete('2');
    assert.equal(budget.used, RECORD_OVERHEAD_BYTES + 2 + 400);
  });

  test('a transaction is estimated by its fields as the generic walk estimates it, whatever a lenient body put in them', () => {
    // Required<Transaction>: a field added to transactions fails to compile here until the estimate is checked with it.
    const full: Required<Transaction> = {
      kind: 'requesttopay',
      referenceId: randomUUID(),
      apiUserId: randomUUID(),
      product: 'collection',
      targetEnvironment: 'sandbox',
      amountMinor: 10n,
      amount: '1.5',
      currency: 'EUR',
      externalId: 'e'.repeat(40),
      party: { partyIdType: 'MSISDN', partyId: '46733123450' },
      payerMessage: 'm'.repeat(100),
      payeeNote: 'n'.repeat(7),
      referenceIdToRefund: randomUUID(),
      status: 'FAILED',
      reason: 'NOT_ALLOWED',
      financialTransactionId: '1234567890',
      completedAt: 2,
      callbackUrl: `https://example.com/${'c'.repeat(2000)}`,
      callbackMethod: 'PUT',
      refundedMinor: 0n,
      lastNotificationAt: 3,
      timer: { cancel: () => undefined },
      unpayable: 'PAYER_NOT_FOUND',
    };
    assert.equal(transactionBytes('k', full), estimateBytes('k', full));
    // A body's party with a field of its own: the transaction keeps only the party's two fields (partyOf).
    const party = partyOf({ partyIdType: 'MSISDN', partyId: 'x', extra: 'y'.repeat(500) } as Transaction['party']);
    assert.deepEqual(party, { partyIdType: 'MSISDN', partyId: 'x' });
    const sparse = { ...full, amount: 12 as unknown as string, externalId: undefined, party };
    assert.equal(transactionBytes('key', sparse), estimateBytes('key', sparse));
  });

  test('get, has, size and values', () => {
    const { store } = newStore();
    store.add('a', 'A');
    store.add('b', 'B');
    assert.equal(store.get('a'), 'A');
    assert.equal(store.get('b'), 'B');
    assert.equal(store.get('c'), undefined);
    assert.equal(store.has('a'), true);
    assert.equal(store.has('c'), false);
    assert.equal(store.size, 2);
    assert.deepEqual([...store.values()], ['A', 'B']);
  });

  test('a record is readable up to maxAgeMs and forgotten after it', () => {
    const { clock, store, forgotten } = newStore();
    store.add('a', 'A');
    clock.advance(1000);
    assert.equal(store.get('a'), 'A', 'exactly maxAgeMs old is still inside the window');
    clock.advance(1);
    assert.equal(store.get('a'), undefined);
    assert.equal(store.has('a'), false);
    assert.deepEqual(forgotten, [], 'reading does not forget');
  });

  test('forgetExpired drops only the expired records, calls onForget for each and the size falls', () => {
    const { clock, store, forgotten } = newStore({ maxEntries: 10, maxAgeMs: 1000 });
    store.add('a', 'A');
    store.add('b', 'B');
    clock.advance(600);
    store.add('c', 'C');
    clock.advance(600);
    assert.equal(store.size, 3);
    assert.equal(store.forgetExpired(), 2);
    assert.equal(store.size, 1);
    assert.deepEqual(forgotten, ['A', 'B']);
    assert.equal(store.get('c'), 'C');
    assert.deepEqual([...store.values()], ['C']);
    assert.equal(store.forgetExpired(), 0, 'a second sweep finds nothing');
    assert.deepEqual(forgotten, ['A', 'B']);
  });

  test('when full of fresh records add throws StoreFullError and nothing is dropped', () => {
    const { clock, store, forgotten } = newStore();
    store.add('a', 'A');
    clock.advance(10);
    store.add('b', 'B');
    store.add('c', 'C');
    clock.advance(900);
    assert.throws(
      () => store.add('d', 'D'),
      (error: unknown) => {
        assert.ok(error instanceof StoreFullError);
        assert.equal(error.storeName, 'test');
        assert.equal(error.maxEntries, 3);
        assert.ok(error.message.includes('test') && error.message.includes('3'), error.message);
        return true;
      },
    );
    assert.equal(store.size, 3);
    assert.deepEqual([store.get('a'), store.get('b'), store.get('c'), store.get('d')], ['A', 'B', 'C', undefined]);
    assert.deepEqual(forgotten, []);
  });

  test('when full but the oldest record has expired, add forgets it and succeeds', () => {
    const { clock, store, forgotten } = newStore();
    store.add('a', 'A');
    clock.advance(500);
    store.add('b', 'B');
    store.add('c', 'C');
    clock.advance(501);
    store.add('d', 'D');
    assert.equal(store.size, 3);
    assert.deepEqual(forgotten, ['A']);
    assert.deepEqual([store.get('a'), store.get('b'), store.get('c'), store.get('d')], [undefined, 'B', 'C', 'D']);
  });

  test('a store without onForget forgets quietly', () => {
    const clock = new ManualClock(0);
    const store = new BoundedStore<number>('quiet', { maxEntries: 1, maxAgeMs: 10 }, clock);
    store.add('x', 1);
    clock.advance(11);
    store.add('y', 2);
    assert.equal(store.size, 1);
    assert.equal(store.get('y'), 2);
  });

  test('a record with its own shorter life is unreadable from its end, and a full store forgets it to make room', () => {
    const clock = new ManualClock(0);
    const forgotten: string[] = [];
    const store = new BoundedStore<{ name: string; until: number }>('lives', { maxEntries: 3, maxAgeMs: 10_000 }, clock, {
      onForget: (v) => {
        forgotten.push(v.name);
      },
      expiresAt: (v) => v.until,
    });
    store.add('a', { name: 'a', until: 9_000 });
    store.add('b', { name: 'b', until: 50 });
    store.add('c', { name: 'c', until: 9_000 });
    clock.advance(49);
    assert.equal(store.get('b')?.name, 'b');
    clock.advance(1);
    assert.equal(store.get('b'), undefined, 'readable until its end of life, not at it');
    // b ended behind a live head (a): a full store must still find it rather than refuse.
    store.add('d', { name: 'd', until: 9_000 });
    assert.deepEqual(forgotten, ['b']);
    assert.deepEqual(
      ['a', 'b', 'c', 'd'].map((k) => store.get(k)?.name),
      ['a', undefined, 'c', 'd'],
    );
    assert.equal(store.size, 3);
  });

  test('delete forgets one record at once', () => {
    const { store, forgotten } = newStore();
    store.add('a', 'A');
    store.add('b', 'B');
    store.delete('a');
    assert.equal(store.get('a'), undefined);
    assert.equal(store.size, 1);
    assert.deepEqual([...store.values()], ['B']);
    assert.deepEqual(forgotten, [], 'delete is not forgetting by age');
  });
});

// ---------------------------------------------------------------------------------------------------
// Retention through the app

describe('retention through the app', () => {
  const RTP = path('requestToPay');
  const rtpStatus = (referenceId: string) => path('getRequestToPayStatus', undefined, { referenceId });
  // Retention must outlast a transaction's pending time, callbacks and notification window, so the window is short too.
  const SHORT_RETENTION = { retentionMaxAgeMs: 5000, notificationWindowMs: 1000 };

  /** Fills a store of three with accepted requests to pay; the fourth must be refused with 503. */
  async function fillStore(sandbox: TestSandbox, caller: Caller) {
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) {
      const res = await sandbox.call({
        method: 'POST',
        url: RTP,
        headers: { ...caller.headers, 'x-reference-id': id },
        payload: requestToPayBody(),
      });
      assert.equal(res.statusCode, 202, res.body);
    }
    const refused = randomUUID();
    const full = await sandbox.call({
      method: 'POST',
      url: RTP,
      headers: { ...caller.headers, 'x-reference-id': refused },
      payload: requestToPayBody(),
    });
    assert.equal(full.statusCode, 503, full.body);
    return { ids, refused, full };
  }

  test('a full request-to-pay store answers 503 SERVICE_UNAVAILABLE with Retry-After and keeps what it holds', async () => {
    const sandbox = await startSandbox({ retentionMaxEntries: 3, ...SHORT_RETENTION });
    try {
      const caller = await sandbox.provision('collection');
      const { ids, refused, full } = await fillStore(sandbox, caller);
      const body = full.json();
      assertSchema('error-set-a', body);
      assert.equal(body.code, 'SERVICE_UNAVAILABLE');
      assert.match(String(full.headers['retry-after']), /^[1-9]\d*$/);
      assert.equal(sandbox.context.state.transactions.requesttopay.size, 3);
      for (const id of ids) {
        const status = await sandbox.call({ method: 'GET', url: rtpStatus(id), headers: caller.headers });
        assert.equal(status.statusCode, 200, status.body);
        assert.equal(status.json().status, 'SUCCESSFUL');
      }
      const notStored = await sandbox.call({ method: 'GET', url: rtpStatus(refused), headers: caller.headers });
      assert.equal(notStored.statusCode, 404);
      const health = await sandbox.call({ method: 'GET', url: '/health' });
      assert.equal(health.json().records.requestToPay, 3);
    } finally {
      await sandbox.close();
    }
  });

  test('once the clock passes the retention age, creation succeeds again and the old records are gone', async () => {
    const sandbox = await startSandbox({ retentionMaxEntries: 3, ...SHORT_RETENTION });
    try {
      const caller = await sandbox.provision('collection');
      const { ids, refused } = await fillStore(sandbox, caller);
      sandbox.clock.advance(5001);
      // The id refused while the store was full was never taken: it is free now.
      const again = await sandbox.call({
        method: 'POST',
        url: RTP,
        headers: { ...caller.headers, 'x-reference-id': refused },
        payload: requestToPayBody('46733123499', '3'),
      });
      assert.equal(again.statusCode, 202, again.body);
      const fresh = await sandbox.call({ method: 'GET', url: rtpStatus(refused), headers: caller.headers });
      assert.equal(fresh.statusCode, 200, fresh.body);
      assert.equal(fresh.json().amount, '3');
      for (const id of ids) {
        const old = await sandbox.call({ method: 'GET', url: rtpStatus(id), headers: caller.headers });
        assert.equal(old.statusCode, 404, `${id} should have been forgotten`);
        assertSchema('error-set-a', old.json());
      }
      const health = await sandbox.call({ method: 'GET', url: '/health' });
      assert.equal(health.json().records.requestToPay, 1);
    } finally {
      await sandbox.close();
    }
  });

  test('each kind of transaction has its own store: a full request-to-pay store does not refuse deposits', async () => {
    const sandbox = await startSandbox({ retentionMaxEntries: 1, ...SHORT_RETENTION });
    try {
      const collection = await sandbox.provision('collection');
      const disbursement = await sandbox.provision('disbursement');
      const first = await sandbox.call({
        method: 'POST',
        url: RTP,
        headers: { ...collection.headers, 'x-reference-id': randomUUID() },
        payload: requestToPayBody(),
      });
      assert.equal(first.statusCode, 202, first.body);
      const second = await sandbox.call({
        method: 'POST',
        url: RTP,
        headers: { ...collection.headers, 'x-reference-id': randomUUID() },
        payload: requestToPayBody(),
      });
      assert.equal(second.statusCode, 503, second.body);
      const deposit = await sandbox.call({
        method: 'POST',
        url: path('deposit'),
        headers: { ...disbursement.headers, 'x-reference-id': randomUUID() },
        payload: { amount: '5', currency: 'EUR', externalId: 'd-1', payee: payer('46733123499'), payerMessage: 'm', payeeNote: 'n' },
      });
      assert.equal(deposit.statusCode, 202, deposit.body);
      const secondDeposit = await sandbox.call({
        method: 'POST',
        url: path('deposit'),
        headers: { ...disbursement.headers, 'x-reference-id': randomUUID() },
        payload: { amount: '5', currency: 'EUR', payee: payer('46733123499') },
      });
      assert.equal(secondDeposit.statusCode, 503, secondDeposit.body);
      assertSchema('error-set-b', secondDeposit.json());
      assert.equal(secondDeposit.json().code, 'SERVICE_UNAVAILABLE');
    } finally {
      await sandbox.close();
    }
  });

  test('a full API-user store refuses provisioning with 503 and stores nothing', async () => {
    const sandbox = await startSandbox({ maxApiUsers: 1 });
    try {
      await sandbox.provision('collection');
      const id = randomUUID();
      const res = await sandbox.call({
        method: 'POST',
        url: path('createApiUser'),
        headers: { 'ocp-apim-subscription-key': KEYS.collection, 'x-reference-id': id },
        payload: { providerCallbackHost: '127.0.0.1' },
      });
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(res.json().code, 'SERVICE_UNAVAILABLE');
      assert.match(String(res.headers['retry-after']), /^[1-9]\d*$/);
      assert.equal(sandbox.context.state.apiUsers.size, 1);
      const read = await sandbox.call({
        method: 'GET',
        url: path('getApiUser', undefined, { referenceId: id }),
        headers: { 'ocp-apim-subscription-key': KEYS.collection },
      });
      assert.equal(read.statusCode, 404);
    } finally {
      await sandbox.close();
    }
  });
});
