/**
 * A wrong setting reads as a wrong setting, never as a broken provider: a rotated subscription key, a wrong target
 * environment and a wrong API key each end the run with exit 2 ("could not test"), a first line that names the
 * setting, no scenario failed and no requirement FAIL; and a product whose settings are right is still tested.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CertificationReport } from '../../conformance/certification/report.ts';
import type { RunSummary } from '../../conformance/results/verdict-stream.ts';
import { provisionApiUser, runSuite, startReferenceSandbox, targetEnv } from '../support/suite.ts';

const CASES = [
  { setting: 'MOMO_COLLECTION_KEY', env: { MOMO_COLLECTION_KEY: 'a-rotated-collection-key' }, untouched: 'disbursement' },
  { setting: 'MOMO_TARGET_ENVIRONMENT', env: { MOMO_TARGET_ENVIRONMENT: 'mtnuganda' }, untouched: undefined },
  // An API user the target knows, with a key that is not its own.
  {
    setting: 'MOMO_DISBURSEMENT_API_KEY',
    env: async (url: string) => ({
      MOMO_DISBURSEMENT_USER_ID: (await provisionApiUser(url, 'disbursement')).userId,
      MOMO_DISBURSEMENT_API_KEY: '0123456789abcdef0123456789abcdef',
    }),
    untouched: 'collection',
  },
] as const;

for (const c of CASES) {
  test(`a wrong ${c.setting} gives exit 2 and a first line that names it, and fails nothing`, async () => {
    const sandbox = await startReferenceSandbox();
    try {
      const wrong = typeof c.env === 'function' ? await c.env(sandbox.url) : c.env;
      const run = await runSuite(['--tags', '@smoke', '--parallel', '0'], { ...targetEnv(sandbox.url), ...wrong });
      assert.equal(run.code, 2, run.output);
      const firstLine = run.output.split('\n')[0]!;
      assert.match(firstLine, new RegExp(`^Preflight: the (gateway|target) refused ${c.setting}\\b`), run.output);
      const summary = JSON.parse(readFileSync(join(run.reportsDir, 'summary.json'), 'utf8')) as RunSummary;
      assert.equal(summary.totals.failed, 0, run.output);
      const notTested = summary.scenarios.filter((s) => s.verdict === 'not tested');
      assert.ok(notTested.length > 0, run.output);
      for (const s of notTested)
        assert.match(s.reason ?? '', /^Not tested: the (gateway|target) refused|^Not tested: the target does not know/, s.scenario);
      const report = JSON.parse(readFileSync(join(run.reportsDir, 'certification', 'certification.json'), 'utf8')) as CertificationReport;
      assert.equal(report.outcome, 'could not test');
      assert.equal(report.requirements.filter((r) => r.verdict === 'FAIL').length, 0);
      // One product's bad key does not stop the others: their scenarios ran and passed.
      if (c.untouched)
        assert.ok(
          summary.scenarios.some((s) => s.verdict === 'passed' && s.tags.includes(`@${c.untouched}`)),
          run.output,
        );
    } finally {
      await sandbox.close();
    }
  });
}
