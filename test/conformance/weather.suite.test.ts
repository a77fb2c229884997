/**
 * A verdict that does not depend on the weather (issue 31): the suite through spec-legal weather, the sandbox's own
 * chaos and a proxy the project did not write in front of a server the project did not write, still conforms or could
 * not test, never blames the target; and a deviation under the same weather is still caught. The long version, every
 * condition alone and all together over 5 seeds in both profiles, is `npm run mutation`'s weather table.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runSuite } from '../support/suite.ts';
import { startWeatheredTarget, type Weather } from '../../sandbox-quality/weather/targets.ts';
import { OUTAGES, PROXY_CONDITIONS } from '../../sandbox-quality/weather/weather-table.ts';

interface Summary {
  exitCode: number;
  totals: Record<string, number>;
  scenarios: { scenario: string; verdict: string; reason?: string }[];
}

// The generated cases (features/inputs.feature, features/every-operation.feature) are refusals of one call each, with
// nothing the weather could change but what every other refusal shows already; they are left out here to keep CI short,
// and run under weather in `npm run mutation`'s weather table.
const WEATHERED_SCENARIOS = ['--tags', 'not @inputs and not @every-operation'];

async function runUnder(weather: Weather, argv: string[] = WEATHERED_SCENARIOS) {
  const target = await startWeatheredTarget(weather);
  try {
    // No reruns: the careful client is what absorbs the weather, not a second attempt at the scenario.
    const run = await runSuite(['--parallel', '2', ...argv], { MOMO_RETRIES: '0', ...target.env }, 300_000);
    const summary = JSON.parse(readFileSync(join(run.reportsDir, 'summary.json'), 'utf8')) as Summary;
    return { run, summary, applied: target.applied() };
  } finally {
    await target.stop();
  }
}

function assertNotBlamed({ run, summary, applied }: Awaited<ReturnType<typeof runUnder>>, weather: string): void {
  const failed = summary.scenarios.filter((s) => s.verdict === 'failed').map((s) => `${s.scenario}\n${s.reason ?? ''}`);
  assert.deepEqual(failed, [], `${weather} failed scenarios of a conforming target:\n${run.output}`);
  assert.ok(run.code === 0 || run.code === 2, `exit ${run.code} under ${weather}:\n${run.output}`);
  assert.ok(summary.totals.passed! >= 60, `only ${summary.totals.passed} scenarios passed under ${weather}`);
  assert.ok(Object.keys(applied).length >= 3, `${weather} applied too little to prove anything: ${JSON.stringify(applied)}`);
}

// The four runs are independent (each its own target and reports) and mostly wait on the weather: side by side, to keep
// CI short.
describe('the verdict under spec-legal weather', { concurrency: true }, () => {
  // One profile here, to keep CI short: `npm run mutation`'s weather table runs every condition and seed in both.
  test('the sandbox under --chaos all, mtn-sandbox: conforms or could not test, never fails', async () => {
    const weather: Weather = { kind: 'chaos', chaos: 'all', seed: 3, profile: 'mtn-sandbox' };
    assertNotBlamed(await runUnder(weather), '--chaos all --chaos-seed 3 (mtn-sandbox)');
  });

  test('an independent server behind the independent weather proxy: never failed (clean, it passes: independent-python)', async () => {
    const weather: Weather = { kind: 'proxy', conditions: 'all=0.05,latency=0.2', seed: 5, profile: 'spec' };
    assertNotBlamed(await runUnder(weather), 'the weather proxy');
  });

  test('the same server behind the second independent proxy, with its outages and its 504s after acting: never failed', async () => {
    const weather: Weather = { kind: 'proxy', proxy: 'python', conditions: PROXY_CONDITIONS, bursts: OUTAGES, seed: 3, profile: 'spec' };
    assertNotBlamed(await runUnder(weather), 'the python weather proxy');
  });

  test('a deviation under --chaos all is still caught: exit 1, failing its own feature', async () => {
    const weather: Weather = { kind: 'chaos', chaos: 'all', seed: 4, profile: 'spec', deviation: 'deposit-id-reused' };
    const { run, summary } = await runUnder(weather, ['--tags', '@disbursement and @negative and not @every-operation']);
    assert.equal(run.code, 1, run.output);
    assert.ok(summary.totals.failed! > 0, run.output);
  });
});
