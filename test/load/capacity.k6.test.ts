import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCapacity } from '../../load/runner/capacity.ts';
import { validatorFor } from '../../core/validation/schemas.ts';
import { parseXml } from '../support/reports.ts';
import { startEmbeddedSandbox } from '../../sandbox/start.ts';
import { targetEnvironment } from './support/target-environment.ts';

const env = { PATH: process.env.PATH, HOME: process.env.HOME };

// Short searches against the embedded sandbox (127.0.0.1), each bounded by --max-duration.
test('a short capacity search of the mixed scenario, split over 2 k6 processes, writes a page, capacity.json and JUnit', {
  timeout: 120_000,
}, async () => {
  const reports = mkdtempSync(join(tmpdir(), 'momo-capacity-'));
  const lines: string[] = [];
  // SLOs no step at 20-40/s can miss on a busy machine (the tests run two at a time on two cores): what is
  // tested is the search's course and its reports, not the sandbox's latency.
  const loose = ['--slo', 'p95=10000', '--slo', 'p99=20000', '--slo', 'time-to-final=20000', '--slo', 'dropped=100000'];
  const { code, report } = await runCapacity({
    argv: [
      'mixed',
      '--start',
      '20',
      '--max-rate',
      '40',
      '--step-duration',
      '2',
      '--max-duration',
      '40',
      '--vus',
      '20',
      '--segments',
      '2',
      '--follow-share',
      '0.5',
      ...loose,
      '--reports',
      reports,
    ],
    env,
    log: (line) => lines.push(line),
  });
  assert.equal(code, 0, lines.join('\n'));
  assert.ok(report);
  // A rate may be measured twice in a row when its latency rose past the knee (the search confirms a rise before
  // it sets the knee), which on a busy machine it can: the course is the rates in order, repeats aside.
  assert.deepEqual(
    report.steps.map((s) => s.rate).filter((rate, i, rates) => rate !== rates[i - 1]),
    [20, 40],
    lines.join('\n'),
  );
  assert.deepEqual(
    report.steps.map((s) => s.rate).filter((rate) => rate === 20),
    [20],
    `20/s once: ${lines.join('\n')}`,
  );
  assert.ok(report.steps.length <= 3, `40/s at most twice: ${lines.join('\n')}`);
  assert.equal(report.search.ended, 'max-rate', lines.join('\n'));
  assert.match(report.verdict.sentence, /^At least 40\/s: every rate measured met the SLOs/);
  assert.ok(
    report.steps.every((s) => s.requests > 0 && s.timeToFinalP95Ms !== null && s.generatorCores >= 0),
    JSON.stringify(
      report.steps.map((s) => ({
        rate: s.rate,
        requests: s.requests,
        timeToFinalP95Ms: s.timeToFinalP95Ms,
        generatorCores: s.generatorCores,
      })),
    ),
  );
  assert.ok(
    report.steps[0]!.thresholds.some((t) => t.metric === 'http_req_duration{op:refund}'),
    'judged over the merged samples, SLOs per operation included',
  );
  assert.ok(
    lines.some((l) => /^\[capacity \d+s\/40s\] step 1: 20\/s/.test(l)),
    'progress lines',
  );
  const json = JSON.parse(readFileSync(join(reports, 'capacity.json'), 'utf8'));
  assert.ok(validatorFor('capacity-report')(json));
  parseXml(readFileSync(join(reports, 'junit.xml'), 'utf8'));
  assert.ok(existsSync(join(reports, 'index.html')));
});

test('a search whose SLO no rate can meet ends with exit 1, naming the SLO', { timeout: 120_000 }, async () => {
  const reports = mkdtempSync(join(tmpdir(), 'momo-capacity-'));
  const lines: string[] = [];
  const { code, report } = await runCapacity({
    argv: [
      'token',
      '--slo',
      'p95=0.001',
      '--confirm-misses',
      '0',
      '--start',
      '4',
      '--step-duration',
      '1',
      '--max-duration',
      '30',
      '--vus',
      '4',
      '--reports',
      reports,
    ],
    env,
    log: (line) => lines.push(line),
  });
  assert.equal(code, 1, lines.join('\n'));
  assert.equal(report?.verdict.capacity, null);
  assert.match(report!.verdict.sentence, /^No rate met the SLOs, down to 1\/s: p95 latency/);
  assert.equal(report!.slos.p95Ms!.value, 0.001);
});

test('against a target of its own, the target is ramped up to the first rate, unjudged, over --warmup before the search starts', {
  timeout: 120_000,
}, async () => {
  const running = await startEmbeddedSandbox();
  const target = {
    ...env,
    ...targetEnvironment(running.baseUrl),
  };
  try {
    const reports = mkdtempSync(join(tmpdir(), 'momo-capacity-'));
    const lines: string[] = [];
    const { code, report } = await runCapacity({
      argv: [
        'request-to-pay',
        '--warmup',
        '2',
        '--start',
        '10',
        '--max-rate',
        '10',
        '--step-duration',
        '2',
        '--max-duration',
        '30',
        '--vus',
        '5',
        '--reports',
        reports,
      ],
      env: target,
      log: (line) => lines.push(line),
    });
    assert.equal(code, 0, lines.join('\n'));
    const warmup = lines.findIndex((l) => l.startsWith('Warm-up: up to 10/s over 2 s, then 2 s at it, not judged'));
    const firstStep = lines.findIndex((l) => /^\[capacity \d+s\/30s\] step 1: 10\/s/.test(l));
    assert.ok(warmup >= 0 && firstStep > warmup, lines.join('\n'));
    // What the warm-up reached is counted over its last seconds, at the rate it ramped up to.
    const reached = lines
      .map((l) => /^Warm-up done: over its last 2 s, (\d+)\/s answered of 10\/s asked, p95 /.exec(l)?.[1])
      .find((n) => n !== undefined);
    assert.ok(reached !== undefined && Number(reached) >= 8 && Number(reached) <= 12, lines.join('\n'));
    assert.deepEqual(
      report!.steps.map((s) => s.rate),
      [10],
      'the warm-up is no step of the search',
    );
    assert.equal(report!.search.warmupSeconds, 2);
    assert.ok(existsSync(join(reports, 'steps', 'warmup.json')), 'its k6 summary is kept beside the steps');
    assert.ok(validatorFor('capacity-report')(JSON.parse(readFileSync(join(reports, 'capacity.json'), 'utf8'))));
    assert.match(readFileSync(join(reports, 'index.html'), 'utf8'), /after a warm-up of 2 s up to 10\/s, not judged/);
  } finally {
    await running.close();
  }
});
