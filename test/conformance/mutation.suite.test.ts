/**
 * The fast subset of `npm run mutation`: one deliberate deviation per feature file, each run against its own
 * feature's scenarios, must be detected by that feature; and the faithful sandbox must pass the whole suite.
 * The full table (every deviation, ten faithful runs) is in docs/mutation.md.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAULTS, type FaultName } from '../../sandbox-quality/faults/faults.ts';
import { mutationTable, runMutation } from '../../sandbox-quality/mutation/mutation.ts';

const ONE_PER_FEATURE: FaultName[] = [
  'api-user-id-reused',
  'token-opens-other-products',
  'callback-duplicated',
  'deposit-overdraws',
  'remittance-balance-without-currency',
  'consent-redeemable-twice',
  'gateway-key-not-enforced',
];

test('one deviation per feature file is caught by that feature, and the faithful sandbox passes', async () => {
  assert.equal(new Set(ONE_PER_FEATURE.map((name) => FAULTS[name].feature)).size, 7);
  const lines: string[] = [];
  const report = await runMutation({
    only: ONE_PER_FEATURE,
    jobs: 4,
    faithfulRuns: 1,
    scoped: true,
    reportsDir: mkdtempSync(join(tmpdir(), 'momo-mutation-')),
    log: (line) => lines.push(line),
  });
  const table = mutationTable(report);
  for (const deviation of report.deviations) {
    assert.ok(deviation.detected, `${deviation.deviation} was not detected:\n${lines.join('\n')}`);
    assert.ok(deviation.caughtByItsFeature, `${deviation.deviation} was not caught by features/${deviation.feature}.feature:\n${table}`);
    assert.equal(deviation.notTested, 0, `${deviation.deviation}: a deviation must fail scenarios, not make them untestable:\n${table}`);
  }
  assert.equal(report.faithfulPassed, 1, lines.join('\n'));
  assert.match(table, /\*\*7 of 7 deviations detected\*\*, \*\*1 of 1 faithful runs passed\*\*/);
  assert.match(table, /\| `callback-duplicated`: The callback is sent twice .* \| collection \| yes \| collection: A merchant that gives a callback address is told the outcome once/);
});
