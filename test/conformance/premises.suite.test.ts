/**
 * Premises (harness/checks/premises.ts) against whole runs: a target on which no way to set up a case holds leaves the
 * scenario not tested, naming each premise and quoting each refusal; and a premise the scenario assumes never hides a
 * departure from a rule that does not rest on it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startEmbeddedSandbox } from '../../sandbox/start.ts';
import { EMBEDDED_TIMINGS } from '../../conformance/runner/target.ts';
import { variationPlugins } from '../../sandbox-quality/variations/variations.ts';
import { faultPlugins } from '../../sandbox-quality/faults/faults.ts';
import { runSuite, targetEnv } from '../support/suite.ts';

interface Summary {
  scenarios: { scenario: string; verdict: string; reason?: string }[];
}

const summaryOf = (reportsDir: string) => JSON.parse(readFileSync(join(reportsDir, 'summary.json'), 'utf8')) as Summary;

test('a target on which neither the disbursement partner nor the API user that was paid may refund: the refund is not tested, naming both premises', async () => {
  // Only the payer may refund, and (the strict reading tokenProduct) a token of one product opens no other's operations.
  const sandbox = await startEmbeddedSandbox(
    { ...EMBEDDED_TIMINGS, strict: true },
    { plugins: variationPlugins(['refunds-by-the-payer-only']) },
  );
  try {
    const run = await runSuite(['--tags', '@req:DIS-REFUND-ACCEPTED-202', '--parallel', '0', '--retries', '0'], targetEnv(sandbox.baseUrl));
    assert.equal(run.code, 2, run.output);
    const [scenario] = summaryOf(run.reportsDir).scenarios;
    assert.equal(scenario?.verdict, 'not tested', run.output);
    assert.match(
      scenario!.reason!,
      /Premises not held, so not tested: none of 2 ways to set up the case holds on this target \(refund-by-another-api-user; refund-by-payer-api-user\)/,
    );
    assert.match(scenario!.reason!, /Only the API user that was paid may refund the payment/);
    assert.match(scenario!.reason!, /invalid_token/);
  } finally {
    await sandbox.close();
  }
});

test('a premise assumed (final states named otherwise) hides no departure from a rule that does not rest on it: a reused reference id accepted still fails', async () => {
  const sandbox = await startEmbeddedSandbox(EMBEDDED_TIMINGS, {
    plugins: [...variationPlugins(['final-states-named-otherwise']), ...faultPlugins(['payment-reference-reused'])],
  });
  try {
    const run = await runSuite(['--tags', '@req:COL-RTP-DUPLICATE-409', '--parallel', '0', '--retries', '0'], targetEnv(sandbox.baseUrl));
    assert.equal(run.code, 1, run.output);
    assert.match(run.output, /✘ status-code \(definite: [^)]*\): status: expected 409, got 202/);
  } finally {
    await sandbox.close();
  }
});

test('a target that takes one part of a payment refunded and refuses the next: the second part is not tested, under its own premise', async () => {
  const sandbox = await startEmbeddedSandbox(EMBEDDED_TIMINGS, { plugins: variationPlugins(['refunds-in-one-part']) });
  try {
    const run = await runSuite(
      ['--tags', '@beyond-spec and @req:TXN-MONEY-ONCE and @disbursement', '--parallel', '0', '--retries', '0'],
      targetEnv(sandbox.baseUrl),
    );
    const scenarios = summaryOf(run.reportsDir).scenarios;
    const second = scenarios.find((s) => s.scenario.includes('A second refund of part of a payment'));
    assert.equal(second?.verdict, 'not tested', run.output);
    assert.match(second!.reason!, /no further part/);
    assert.match(second!.reason!, /HTTP 400/);
    assert.ok(!scenarios.some((s) => s.verdict === 'failed'), run.output);
  } finally {
    await sandbox.close();
  }
});

test("refunds only the API user that was paid may make leave the disbursement partner's money scenarios not tested, never passed", async () => {
  const sandbox = await startEmbeddedSandbox(EMBEDDED_TIMINGS, { plugins: variationPlugins(['refunds-by-the-payer-only']) });
  try {
    const run = await runSuite(
      ['--tags', '@req:TXN-MONEY-ONCE and @disbursement and @beyond-spec', '--parallel', '0', '--retries', '0'],
      targetEnv(sandbox.baseUrl),
    );
    const scenarios = summaryOf(run.reportsDir).scenarios;
    const refunds = scenarios.filter((s) => /\brefund/.test(s.scenario));
    assert.ok(refunds.length >= 4, run.output);
    for (const refund of refunds) {
      assert.equal(refund.verdict, 'not tested', `${refund.scenario}\n${run.output}`);
      assert.match(refund.reason!, /made by the API user that was paid/);
    }
    assert.ok(!scenarios.some((s) => s.verdict === 'failed'), run.output);
  } finally {
    await sandbox.close();
  }
});
