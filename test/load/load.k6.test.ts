import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedSandbox } from '../../sandbox/start.ts';
import { faultPlugins } from '../../sandbox-quality/faults/faults.ts';
import { runLoad } from '../../load/runner/load-command.ts';
import { callsByOperation, thresholdResults, type K6Summary } from '../../load/runner/summary.ts';
import { targetEnvironment } from './support/target-environment.ts';

const quiet = () => {};

function metric(summary: K6Summary, name: string): Record<string, number> {
  return (summary.metrics[name] ?? {}) as Record<string, number>;
}

test('the smoke scenario runs against the embedded sandbox: every iteration made, no failed check, nothing lost', async () => {
  const reports = mkdtempSync(join(tmpdir(), 'momo-load-smoke-'));
  const { code, output } = await runLoad({
    argv: ['smoke', '--reports', reports],
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    log: quiet,
    k6Output: 'pipe',
  });
  assert.equal(code, 0, output);
  const summary = JSON.parse(readFileSync(join(reports, 'summary.json'), 'utf8')) as K6Summary;
  assert.equal(metric(summary, 'iterations').count, 3);
  const checks = Object.values(summary.root_group?.checks ?? {});
  assert.ok(checks.length >= 10, 'every operation is checked');
  assert.deepEqual(
    checks.filter((c) => c.fails > 0),
    [],
  );
  assert.equal(metric(summary, 'momo_lost_transactions').count, 0);
  assert.equal(metric(summary, 'momo_unexpected_401').count, 0);
  // Every body is validated; the counter gets a sample only for a body that departs from its schema.
  assert.equal(metric(summary, 'momo_schema_violations').count ?? 0, 0);
  const bodyChecks = Object.values(summary.root_group?.checks ?? {}).filter((c) => /body matches/.test(c.name));
  assert.ok(bodyChecks.length >= 5 && bodyChecks.every((c) => c.passes > 0), 'every body was validated and recorded');
  assert.ok(thresholdResults(summary).every((t) => t.passed));
  assert.equal(summary.setup_data, undefined, 'the API keys of setup() are not kept');
  assert.doesNotMatch(readFileSync(join(reports, 'summary.json'), 'utf8'), /apiKey/);
  assert.match(readFileSync(join(reports, 'junit.xml'), 'utf8'), /<testsuite name="load smoke" tests="\d+" failures="0"/);
  assert.ok(existsSync(join(reports, 'report.html')));
  const callbacks = JSON.parse(readFileSync(join(reports, 'callbacks.json'), 'utf8')) as { callbacks: number };
  assert.equal(callbacks.callbacks, 3, 'one callback per request to pay');
});

test('one scenario split over two k6 processes with execution segments makes the configured iterations together', async () => {
  const running = await startEmbeddedSandbox();
  const { sandbox } = running;
  const url = running.baseUrl;
  const env = {
    ...targetEnvironment(url),
    LOAD_OPERATIONS: 'requestToPay',
  };
  try {
    const reports = ['0:1/2', '1/2:1'].map(() => mkdtempSync(join(tmpdir(), 'momo-load-segment-')));
    const halves = await Promise.all(
      ['0:1/2', '1/2:1'].map((segment, i) =>
        runLoad({
          argv: [
            'creation-throughput',
            '--iterations',
            '40',
            '--segment',
            segment,
            '--segment-sequence',
            '0,1/2,1',
            '--reports',
            reports[i]!,
          ],
          env,
          log: quiet,
          k6Output: 'pipe',
        }),
      ),
    );
    for (const half of halves) assert.equal(half.code, 0, half.output);
    const summaries = reports.map((dir) => JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as K6Summary);
    const made = summaries.map((s) => metric(s, 'iterations').count ?? 0);
    assert.deepEqual(made, [20, 20], 'each process makes its half of the 40 configured iterations');
    // The accepted creations, counted by k6's http_req_failed{op:...}, add up across segments.
    assert.deepEqual(summaries.flatMap(callsByOperation), [
      { operation: 'requestToPay', accepted: 20, refused: 0 },
      { operation: 'requestToPay', accepted: 20, refused: 0 },
    ]);
    assert.equal(sandbox.context.state.transactions.requesttopay.size, 40, 'together they created all 40 at the one target');
  } finally {
    await sandbox.close();
  }
});

test('under load every body is validated: a sandbox whose token answers depart from their schema fails the run on momo_schema_violations', async () => {
  // expires_in as a string: the token answer is the only body creation-throughput reads, once per VU.
  const running = await startEmbeddedSandbox({}, { plugins: faultPlugins(['token-expires-in-string']) });
  const env = {
    ...targetEnvironment(running.baseUrl),
    LOAD_OPERATIONS: 'requestToPay',
    LOAD_VUS: '4',
  };
  try {
    const reports = mkdtempSync(join(tmpdir(), 'momo-load-fault-'));
    const { code, output } = await runLoad({
      argv: ['creation-throughput', '--iterations', '40', '--reports', reports],
      env,
      log: quiet,
      k6Output: 'pipe',
    });
    assert.equal(code, 1, `a crossed threshold fails the run: ${output}`);
    const summary = JSON.parse(readFileSync(join(reports, 'summary.json'), 'utf8')) as K6Summary;
    assert.ok((metric(summary, 'momo_schema_violations').count ?? 0) >= 1, 'the departing bodies were counted');
    assert.deepEqual(
      thresholdResults(summary)
        .filter((t) => !t.passed)
        .map((t) => t.metric),
      ['momo_schema_violations'],
    );
    const failed = Object.values(summary.root_group?.checks ?? {})
      .filter((c) => c.fails > 0)
      .map((c) => c.name);
    assert.deepEqual(failed, ['createAccessToken: body matches access-token'], 'a failed check names the schema');
  } finally {
    await running.close();
  }
});
