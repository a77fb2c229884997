/**
 * The catalogue of deliberate deviations: how it is configured and what a few of them do to the sandbox.
 * Whether the conformance suite catches each one is test/conformance/mutation.test.ts and npm run mutation.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { DEVIATIONS, DEVIATION_NAMES, deviationsText } from '../../sandbox-quality/faults/faults.ts';
import { SettingsError, resolveSettings } from '../../sandbox/settings.ts';
import { KEYS, requestToPayBody, withSandbox } from '../support/sandbox.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

test('the catalogue holds at least 30 deviations, each described in one line, spread over every feature file', () => {
  assert.ok(DEVIATION_NAMES.length >= 30, `${DEVIATION_NAMES.length} deviations`);
  const features = new Set(DEVIATION_NAMES.map((name) => DEVIATIONS[name].feature));
  assert.deepEqual([...features].sort(), ['collection', 'consent', 'disbursement', 'errors', 'provisioning', 'remittance', 'tokens']);
  for (const name of DEVIATION_NAMES) {
    assert.match(name, /^[a-z0-9]+(-[a-z0-9]+)+$/, name);
    const { summary } = DEVIATIONS[name];
    assert.ok(summary.length > 20 && !summary.includes('\n') && summary.endsWith('.'), `${name}: ${summary}`);
  }
});

test('deviations are chosen by flag or environment, and an unknown name says where to find the known ones', () => {
  assert.deepEqual(resolveSettings().deviations, []);
  assert.deepEqual(resolveSettings({ env: { MOMO_SANDBOX_DEVIATIONS: 'callback-late, token-never-expires,callback-late' } }).deviations, ['callback-late', 'token-never-expires']);
  assert.deepEqual(resolveSettings({ argv: ['--deviations', 'callback-missing'], env: { MOMO_SANDBOX_DEVIATIONS: 'callback-late' } }).deviations, ['callback-missing']);
  assert.throws(() => resolveSettings({ env: { MOMO_SANDBOX_DEVIATIONS: 'callback-late,tokens-never-expire' } }), (error: Error) =>
    error instanceof SettingsError && error.message.includes('--deviations (MOMO_SANDBOX_DEVIATIONS) names "tokens-never-expire", which is not a deviation; --list-deviations shows'));
});

test('--list-deviations prints the catalogue by feature file', () => {
  const listed = spawnSync(process.execPath, ['--import', 'tsx', 'sandbox/main.ts', '--list-deviations'], { cwd: ROOT, encoding: 'utf8' });
  assert.equal(listed.status, 0, listed.stderr);
  assert.equal(listed.stdout.trim(), deviationsText());
  assert.match(listed.stdout, /features\/remittance\.feature:\n {2}remittance-balance-without-currency +The remittance balance record lacks its currency\./);
  for (const name of DEVIATION_NAMES) assert.ok(listed.stdout.includes(name), name);
});

test('an answer deviation rewrites what the client sees: JSON labelled text/plain, a token answer without no-store', async () => {
  await withSandbox({ deviations: ['json-labelled-text-plain', 'token-cacheable'] }, async (sandbox) => {
    const caller = await sandbox.provision('remittance');
    const balance = await sandbox.call({ method: 'GET', url: '/remittance/v1_0/account/balance', headers: caller.headers });
    assert.equal(balance.statusCode, 200);
    assert.equal(balance.headers['content-type'], 'text/plain; charset=utf-8');
    assert.deepEqual(Object.keys(JSON.parse(balance.body)).sort(), ['availableBalance', 'currency']);
    const token = await sandbox.call({ method: 'POST', url: '/remittance/token/', headers: { 'ocp-apim-subscription-key': KEYS.remittance, authorization: `Basic ${Buffer.from(`${caller.userId}:${caller.apiKey}`).toString('base64')}` } });
    assert.equal(token.statusCode, 200);
    assert.equal(token.headers['cache-control'], undefined);
  });
});

test('a behaviour deviation changes what the sandbox decides: a reused reference makes a second payment; the faithful sandbox refuses it', async () => {
  const payTwice = async (deviations: typeof DEVIATION_NAMES) => {
    let statuses: number[] = [];
    await withSandbox({ deviations }, async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const referenceId = randomUUID();
      const pay = () => sandbox.call({ method: 'POST', url: '/collection/v1_0/requesttopay', headers: { ...caller.headers, 'x-reference-id': referenceId }, payload: requestToPayBody() });
      statuses = [(await pay()).statusCode, (await pay()).statusCode];
    });
    return statuses;
  };
  assert.deepEqual(await payTwice([]), [202, 409]);
  assert.deepEqual(await payTwice(['payment-reference-reused']), [202, 202]);
});

test('a transaction that never leaves PENDING, and a forged token accepted, under their deviations only', async () => {
  await withSandbox({ deviations: ['payment-stays-pending', 'token-signature-not-checked'] }, async (sandbox) => {
    const caller = await sandbox.provision('collection');
    const referenceId = randomUUID();
    const [header, payload, signature] = caller.token.split('.');
    const forged = { ...caller.headers, authorization: `Bearer ${header}.${payload}.${signature!.startsWith('A') ? 'B' : 'A'}${signature!.slice(1)}` };
    const created = await sandbox.call({ method: 'POST', url: '/collection/v1_0/requesttopay', headers: { ...forged, 'x-reference-id': referenceId }, payload: requestToPayBody() });
    assert.equal(created.statusCode, 202);
    const status = await sandbox.call({ method: 'GET', url: `/collection/v1_0/requesttopay/${referenceId}`, headers: caller.headers });
    // The payer's test number succeeds at once on a faithful sandbox (test/sandbox/payments.test.ts).
    assert.equal((status.json() as { status: string }).status, 'PENDING');
  });
});
