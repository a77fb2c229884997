/**
 * The scenarios of "a currency the service does not take" pay in MOMO_REFUSED_CURRENCY. That the target refuses the
 * default one is a premise (the live sandbox takes only EUR; a service may take more): a target that takes both EUR
 * and USD is not tested by them with the default, the report naming the setting, and passes them once the setting
 * names a currency it refuses. A currency the run was told the target refuses and that it takes fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { startEmbeddedSandbox } from '../../sandbox/start.ts';
import { EMBEDDED_TIMINGS } from '../../conformance/runner/target.ts';
import { runSuite, targetEnv } from '../support/suite.ts';

const REFUSALS = '@req:COL-RTP-INVALID-CURRENCY or @req:DIS-DEPOSIT-INVALID-CURRENCY or @req:DIS-REFUND-INVALID-CURRENCY';

test('a target that takes EUR and USD: with the default refused currency the refusals are not tested, naming the setting; MOMO_REFUSED_CURRENCY=GBP passes them, USD fails them', async () => {
  const sandbox = await startEmbeddedSandbox({ ...EMBEDDED_TIMINGS, currencies: ['EUR', 'USD'] });
  try {
    const args = ['--tags', REFUSALS, '--parallel', '0', '--retries', '0'];
    const byDefault = await runSuite(args, targetEnv(sandbox.baseUrl));
    assert.equal(byDefault.code, 2, byDefault.output);
    assert.match(byDefault.output, /Premise not held, so not tested: the target refuses MOMO_REFUSED_CURRENCY/);
    assert.match(byDefault.output, /Set MOMO_REFUSED_CURRENCY to a currency the target refuses/);
    const told = await runSuite(args, { ...targetEnv(sandbox.baseUrl), MOMO_REFUSED_CURRENCY: 'USD' });
    assert.equal(told.code, 1, told.output);
    const named = await runSuite(args, { ...targetEnv(sandbox.baseUrl), MOMO_REFUSED_CURRENCY: 'GBP' });
    assert.equal(named.code, 0, named.output);
    // Each scenario's exchanges (har/): the refused request of each paid in GBP. Each creation has two: the refusal,
    // and the refusal that gave a callback address, which then hears nothing.
    const hars = readdirSync(join(named.reportsDir, 'har'));
    assert.equal(hars.length, 6, hars.join(', '));
    for (const file of hars) {
      const har = JSON.parse(readFileSync(join(named.reportsDir, 'har', file), 'utf8')) as {
        log: { entries: { request: { postData?: { text?: string } } }[] };
      };
      const currencies = har.log.entries
        .map((e) => e.request.postData?.text)
        .filter((t): t is string => t !== undefined)
        .map((t) => (JSON.parse(t) as { currency?: string }).currency);
      assert.ok(currencies.includes('GBP'), `${file}: ${currencies.join(', ')}`);
    }
  } finally {
    await sandbox.close();
  }
});
