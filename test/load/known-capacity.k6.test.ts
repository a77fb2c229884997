/**
 * npm run capacity against targets whose capacity is known by construction (support/known-capacity-target.ts):
 * the proof that the figure is the target's, not the generator's. The ranges are wide enough for a shared machine;
 * the tight figures, with their command, are in docs/benchmarks.md ("Capacity against targets of known capacity").
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCapacity } from '../../load/runner/capacity.ts';
import { startKnownCapacityTarget, type KnownCapacityOptions } from './support/known-capacity-target.ts';

async function searchAgainst(options: KnownCapacityOptions, argv: string[]) {
  const target = await startKnownCapacityTarget(options);
  const env = target.environment();
  const lines: string[] = [];
  try {
    const { code, report } = await runCapacity({
      argv: [...argv, '--warmup', '0', '--reports', mkdtempSync(join(tmpdir(), 'momo-known-capacity-'))],
      env,
      log: (line) => lines.push(line),
    });
    return { code, report, lines, stats: target.stats() };
  } finally {
    await target.close();
  }
}

test('tokens are fetched before the measured window: 200 VUs pay at 200/s against a target that serves 50 tokens a second', {
  timeout: 120_000,
}, async () => {
  const { code, report, lines } = await searchAgainst({ ratePerSecond: 50, bottleneck: 'tokens' }, [
    'request-to-pay',
    '--start',
    '200',
    '--max-rate',
    '200',
    '--step-duration',
    '3',
    '--vus',
    '200',
  ]);
  assert.equal(code, 0, lines.join('\n'));
  const [step] = report!.steps;
  // Had each VU fetched its token in the step, 200 tokens at 50/s would have queued for 4 s.
  assert.equal(step!.operations.createAccessToken, undefined, 'no token request answered inside the window');
  assert.ok(step!.throughput > 190 && step!.throughput < 210, `${step!.throughput}/s answered of 200/s`);
  assert.equal(report!.verdict.capacity, 200, lines.join('\n'));
});

test('a short search against a target of known capacity finds it, and never reports more than it answered', {
  timeout: 180_000,
}, async () => {
  const R = 120;
  const { code, report, lines, stats } = await searchAgainst({ ratePerSecond: R, bottleneck: 'every-operation' }, [
    'request-to-pay',
    '--start',
    '60',
    '--step-duration',
    '3',
    '--confirm-misses',
    '0',
    '--precision',
    '0.1',
    '--max-duration',
    '120',
    '--vus',
    '200',
  ]);
  assert.equal(code, 0, lines.join('\n'));
  const capacity = report!.verdict.capacity!;
  assert.ok(capacity >= 0.75 * R && capacity <= 1.1 * R, `capacity ${capacity}/s for R = ${R}/s:\n${lines.join('\n')}`);
  for (const step of report!.steps) {
    assert.ok(
      step.requestsPerSecond <= 1.05 * R,
      `${step.rate}/s: ${step.requestsPerSecond}/s reported answered, above R:\n${lines.join('\n')}`,
    );
    assert.ok(step.throughput <= 1.05 * R);
  }
  assert.ok(stats.mostServedInASecond <= R + 1, `the target served ${stats.mostServedInASecond} in one second`);
  // Past R the throughput stops rising, and the latency a full VU pool capped is said to be a lower bound. A short
  // window can still pass the rate where throughput first fell behind (the queue has not grown past the SLO yet).
  assert.ok(report!.saturation.fellBehindAt !== null && report!.saturation.fellBehindAt >= capacity, JSON.stringify(report!.saturation));
  assert.ok(report!.saturation.peakThroughput <= 1.05 * R);
  const capped = report!.steps.filter((s) => s.dropped > 0);
  assert.ok(capped.every((s) => s.latencyLowerBound));
  assert.ok(lines.some((l) => /p95 ≥ \d/.test(l)) === capped.length > 0, 'the progress line marks capped latency with ≥');
});
