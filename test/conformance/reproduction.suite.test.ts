/**
 * A failure must come with what reproduces it: each exchange of a failed scenario carries a curl command that,
 * run with the MOMO_* variables set, gets the same answer from the target; and each scenario's exchanges are a
 * HAR 1.2 file that follows the schema and travels in the bundle. One run against a sandbox behind a proxy that
 * breaks the balance record, then the commands against the same proxy.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describeErrors, validatorFor } from '../../core/validation/schemas.ts';
import { DEVELOPMENT_KEYS } from '../../sandbox/domain/settings.ts';
import { secretVariablesOf } from '../../harness/config.ts';
import { HAR_FOLDER } from '../../conformance/certification/har-files.ts';
import { readBundle } from '../../conformance/certification/bundle.ts';
import type { CertificationReport } from '../../conformance/certification/report.ts';
import type { RunSummary } from '../../conformance/results/ledger.ts';
import { AlteringProxy } from '../support/altering-proxy.ts';
import { provisionApiUser, runSuite, startReferenceSandbox, targetEnv } from '../support/suite.ts';

// The fault: the collection balance comes back without its availableBalance.
const BROKEN_BALANCE = JSON.stringify({ currency: 'EUR' });

test('every exchange of a failed scenario carries a curl command that reproduces it; every scenario is a HAR 1.2 file in the bundle', async () => {
  const sandbox = await startReferenceSandbox();
  const proxy = new AlteringProxy(sandbox.url, (x) => (x.operation === 'getBalanceInCurrency' && x.product === 'collection' && x.status === 200
    ? { body: BROKEN_BALANCE, headers: { 'content-type': 'application/json' } }
    : undefined));
  try {
    const url = await proxy.start();
    const user = await provisionApiUser(sandbox.url, 'collection');
    const names = secretVariablesOf('collection');
    // The variables a user sets: the run's own settings, the same for the run and for the commands.
    const env: Record<string, string> = { ...targetEnv(url), [names.userId]: user.userId, [names.apiKey]: user.apiKey };
    // One attempt: a rerun would find the token cached, and show the balance call alone.
    const run = await runSuite(['--tags', '@req:COL-BALANCE-200', '--parallel', '0', '--retries', '0'], env);
    assert.equal(run.code, 1, run.output);

    const report = JSON.parse(readFileSync(join(run.reportsDir, 'certification', 'certification.json'), 'utf8')) as CertificationReport;
    const failed = report.scenarios.filter((s) => s.verdict === 'failed');
    assert.equal(failed.length, 1, run.output);
    const exchanges = failed[0]!.exchanges;
    assert.ok(exchanges.length >= 2, 'the token and the balance');
    for (const exchange of exchanges) {
      assert.ok(exchange.curl, `${exchange.operation} carries its curl command`);
      for (const secret of [user.apiKey, DEVELOPMENT_KEYS.collection]) assert.ok(!exchange.curl.includes(secret), 'no secret in a command, only variables');
      // Each command, run in the scenario's order with the variables set, gets the answer the run got.
      const { stdout } = await promisify(execFile)('bash', ['-c', exchange.curl], { encoding: 'utf8', env: { PATH: process.env.PATH!, ...env } });
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(stdout)?.[1]);
      assert.equal(status, exchange.response?.status, `${exchange.operation}:\n${exchange.curl}\n${stdout}`);
      if (exchange.response?.body === BROKEN_BALANCE) assert.equal(stdout.split('\r\n\r\n')[1], BROKEN_BALANCE, 'the reproduction shows the same departure');
    }
    assert.ok(exchanges.some((e) => e.response?.body === BROKEN_BALANCE), 'the failing exchange is among them');

    // The failure message cucumber shows ends with the command of its exchange.
    const summary = JSON.parse(readFileSync(join(run.reportsDir, 'summary.json'), 'utf8')) as RunSummary;
    const reason = summary.scenarios.find((s) => s.verdict === 'failed')?.reason ?? '';
    assert.match(reason, /reproduce \(the MOMO_\* variables of \.env\.example set\):\n {4}# an access token of the collection API user/);
    assert.match(reason, /-H 'Authorization: Bearer '"\$MOMO_TOKEN"/);
    assert.match(readFileSync(join(run.reportsDir, 'certification', 'index.html'), 'utf8'), /<pre class="curl">/);

    // One HAR 1.2 file per scenario that called the target, valid, redacted, and in the bundle.
    const harDir = join(run.reportsDir, HAR_FOLDER);
    const files = readdirSync(harDir);
    assert.equal(files.length, report.scenarios.filter((s) => s.exchanges.length > 0).length);
    const validate = validatorFor('har');
    for (const file of files) {
      const text = readFileSync(join(harDir, file), 'utf8');
      assert.ok(validate(JSON.parse(text)), `${file}: ${describeErrors(validate.errors).join('\n')}`);
      assert.ok(!text.includes(user.apiKey) && !text.includes(DEVELOPMENT_KEYS.collection), `${file} is redacted`);
    }
    const bundle = readdirSync(join(run.reportsDir, 'certification')).find((f) => f.endsWith('.tar.gz'))!;
    const bundled = await readBundle(join(run.reportsDir, 'certification', bundle));
    for (const file of files) assert.ok(bundled.has(`conformance/${HAR_FOLDER}/${file}`), `${file} is in the bundle`);
  } finally {
    await proxy.stop();
    await sandbox.close();
  }
});
