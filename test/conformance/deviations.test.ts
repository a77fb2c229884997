/**
 * The suite must fail, naming the right scenario, when the server breaks a rule. Each test puts a proxy
 * that breaks one rule in front of a faithful sandbox and runs the feature that covers the rule.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Alteration } from '../support/altering-proxy.ts';
import { runAgainstDeviation, type SuiteRun } from '../support/suite.ts';

interface Deviation {
  rule: string;
  tags: string;
  alteration: Alteration;
  /** Scenarios that must fail; every other selected scenario must still pass. */
  failing: string[];
  /** Words the failure message must contain: the operation and what departed. */
  mentions: string[];
}

const DEVIATIONS: Deviation[] = [
  {
    rule: 'provisioning: a reused API user id is accepted instead of 409 RESOURCE_ALREADY_EXIST',
    tags: '@provisioning',
    alteration: (x) => (x.method === 'POST' && x.path === '/v1_0/apiuser' && x.status === 409 ? { status: 201, body: '' } : undefined),
    failing: ['An API user id cannot be registered twice'],
    mentions: ['create API user (disbursement) — §4.5 #14', 'expected: HTTP 409 with RESOURCE_ALREADY_EXIST', 'received: HTTP 201'],
  },
];

function failedScenarios(run: SuiteRun): string[] {
  const summary = JSON.parse(readFileSync(join(run.reportsDir, 'summary.json'), 'utf8')) as { scenarios: { scenario: string; verdict: string }[] };
  return summary.scenarios.filter((s) => s.verdict !== 'passed').map((s) => `${s.scenario}: ${s.verdict}`);
}

for (const deviation of DEVIATIONS) {
  test(`the suite catches it when ${deviation.rule}`, async () => {
    const run = await runAgainstDeviation(deviation.alteration, deviation.tags);
    assert.equal(run.code, 1, run.output);
    assert.deepEqual(failedScenarios(run).sort(), deviation.failing.map((s) => `${s}: failed`).sort(), run.output);
    for (const words of deviation.mentions) assert.ok(run.output.includes(words), `the failure should say "${words}":\n${run.output}`);
  });
}
