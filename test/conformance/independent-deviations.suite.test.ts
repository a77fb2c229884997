/**
 * Deviations a blind author added to the independent python server (its --list-deviations), each a way a real provider
 * departs from the API: the suite must fail each, on the scenario of the clause it breaks. A sample runs here, each on a
 * class the suite once let through; `npm run mutation` runs them all.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSuite } from '../support/suite.ts';
import { independentTargetEnv, startIndependentServer } from '../support/independent-server.ts';
import type { ProfileName } from '../../core/profiles.ts';

interface Summary {
  scenarios: { scenario: string; verdict: string; reason?: string }[];
}

async function assertCaught(deviation: string, profile: ProfileName, tags: string, scenario: string, reason: RegExp): Promise<void> {
  const server = await startIndependentServer(profile, { server: 'python', deviations: [deviation] });
  try {
    const run = await runSuite(['--tags', tags], independentTargetEnv(server, profile), 120_000);
    const summary = JSON.parse(readFileSync(join(run.reportsDir, 'summary.json'), 'utf8')) as Summary;
    const found = summary.scenarios.find((s) => s.scenario.endsWith(scenario));
    assert.equal(found?.verdict, 'failed', `${scenario}: ${found?.verdict}\n${run.output}`);
    assert.match(found?.reason ?? '', reason, run.output);
    assert.equal(run.code, 1, run.output);
  } finally {
    await server.stop();
  }
}

// A 500 INTERNAL_PROCESSING_ERROR is weather when the target answers nothing else; here it answers every other call,
// and the balance the harness asks as a control is asked with the run's own good token, not the expired one.
test('a server answering an expired token with 500 INTERNAL_PROCESSING_ERROR fails, not "not tested"', () =>
  assertCaught(
    'expired-token-500',
    'spec',
    '@req:AUTH-TOKEN-EXPIRY',
    'An expired access token is refused',
    /status-code \(definite: §4\.3 #12\): status: expected 401, got 500/,
  ));
