import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { buildSandbox } from '../../sandbox/app.ts';
import { DEVELOPMENT_KEYS, resolveSettings } from '../../sandbox/settings.ts';
import { runLoad } from '../../load/runner/run.ts';
import { k6OperatorManifests } from '../../load/runner/k8s.ts';
import { callsByOperation, junitReport, thresholdResults, withoutSetupData, type K6Summary } from '../../load/runner/summary.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const quiet = () => {};

function metric(summary: K6Summary, name: string): Record<string, number> {
  return (summary.metrics[name] ?? {}) as Record<string, number>;
}

test('without k6 and without Go, the load commands stop with one line that says how to install k6', () => {
  const root = mkdtempSync(join(tmpdir(), 'momo-nok6-'));
  mkdirSync(join(root, 'scripts'));
  copyFileSync(join(ROOT, 'scripts/ensure-k6.sh'), join(root, 'scripts/ensure-k6.sh'));
  const result = spawnSync('bash', [join(root, 'scripts/ensure-k6.sh')], { env: { PATH: '/usr/bin:/bin' }, encoding: 'utf8' });
  assert.equal(result.status, 3);
  assert.equal(result.stdout, '');
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  assert.match(result.stderr, /install k6 \(https:\/\/grafana\.com\/docs\/k6\/latest\/set-up\/install-k6\/\) or Go/);
});

test('the smoke scenario runs against the embedded sandbox: every iteration made, no failed check, nothing lost', async () => {
  const reports = mkdtempSync(join(tmpdir(), 'momo-load-smoke-'));
  const { code, output } = await runLoad({ argv: ['smoke', '--reports', reports], env: { PATH: process.env.PATH, HOME: process.env.HOME }, log: quiet, k6Output: 'pipe' });
  assert.equal(code, 0, output);
  const summary = JSON.parse(readFileSync(join(reports, 'summary.json'), 'utf8')) as K6Summary;
  assert.equal(metric(summary, 'iterations').count, 3);
  const checks = Object.values(summary.root_group?.checks ?? {});
  assert.ok(checks.length >= 10, 'every operation is checked');
  assert.deepEqual(checks.filter((c) => c.fails > 0), []);
  assert.equal(metric(summary, 'momo_lost_transactions').count, 0);
  assert.equal(metric(summary, 'momo_unexpected_401').count, 0);
  assert.equal(metric(summary, 'momo_schema_violations').value, 0);
  assert.ok((metric(summary, 'momo_schema_violations').fails ?? 0) > 0, 'bodies were validated');
  assert.ok(thresholdResults(summary).every((t) => t.passed));
  assert.equal(summary.setup_data, undefined, 'the API keys of setup() are not kept');
  assert.doesNotMatch(readFileSync(join(reports, 'summary.json'), 'utf8'), /apiKey/);
  assert.match(readFileSync(join(reports, 'junit.xml'), 'utf8'), /<testsuite name="load smoke" tests="\d+" failures="0"/);
  assert.ok(existsSync(join(reports, 'report.html')));
  const callbacks = JSON.parse(readFileSync(join(reports, 'callbacks.json'), 'utf8')) as { callbacks: number };
  assert.equal(callbacks.callbacks, 3, 'one callback per request to pay');
});

test('one scenario split over two k6 processes with execution segments makes the configured iterations together', async () => {
  const settings = resolveSettings({ overrides: { port: 0, logLevel: 'silent' } });
  const sandbox = await buildSandbox(settings, { logger: pino({ level: 'silent' }) });
  await sandbox.app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(sandbox.app.server.address() as { port: number }).port}`;
  const env = {
    PATH: process.env.PATH, HOME: process.env.HOME,
    MOMO_BASE_URL: url, MOMO_COLLECTION_KEY: DEVELOPMENT_KEYS.collection, MOMO_DISBURSEMENT_KEY: DEVELOPMENT_KEYS.disbursement, MOMO_REMITTANCE_KEY: DEVELOPMENT_KEYS.remittance,
    LOAD_OPERATIONS: 'request-to-pay',
  };
  try {
    const reports = ['0:1/2', '1/2:1'].map(() => mkdtempSync(join(tmpdir(), 'momo-load-segment-')));
    const halves = await Promise.all(['0:1/2', '1/2:1'].map((segment, i) => runLoad({
      argv: ['creation-throughput', '--iterations', '40', '--segment', segment, '--segment-sequence', '0,1/2,1', '--reports', reports[i]!],
      env, log: quiet, k6Output: 'pipe',
    })));
    for (const half of halves) assert.equal(half.code, 0, half.output);
    const summaries = reports.map((dir) => JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as K6Summary);
    const made = summaries.map((s) => metric(s, 'iterations').count ?? 0);
    assert.deepEqual(made, [20, 20], 'each process makes its half of the 40 configured iterations');
    // The accepted creations, counted by k6's http_req_failed{op:...}, add up across segments.
    assert.deepEqual(summaries.flatMap(callsByOperation), [{ operation: 'request-to-pay', accepted: 20, refused: 0 }, { operation: 'request-to-pay', accepted: 20, refused: 0 }]);
    assert.equal(sandbox.context.state.transactions.requesttopay.size, 40, 'together they created all 40 at the one target');
  } finally {
    await sandbox.close();
  }
});

test('the k6-operator manifests split the run over the chosen parallelism and carry no secret', () => {
  const { configMap, testRun } = k6OperatorManifests('smoke', 'export default function () {}\nexport const options = {};', { parallelism: 4, baseUrl: 'https://momo.example.test' });
  assert.match(testRun, /^kind: TestRun$/m);
  assert.match(testRun, /^ {2}parallelism: 4$/m);
  assert.match(testRun, /name: momo-load-smoke\n {6}file: smoke\.js/);
  assert.match(testRun, /name: MOMO_COLLECTION_KEY\n {10}valueFrom:\n {12}secretKeyRef:\n {14}name: momo-keys/);
  assert.match(configMap, /^kind: ConfigMap$/m);
  assert.match(configMap, /smoke\.js: \|\n {4}export default function \(\) \{\}/);
  assert.doesNotMatch(testRun + configMap, /sandbox-collection-key/);
});

test('thresholds become JUnit test cases, a crossed one a failure, and setup data is dropped', () => {
  const summary: K6Summary = {
    metrics: {
      'http_req_duration{op:token}': { 'p(95)': 812.5, thresholds: { 'p(95)<250': true, 'p(99)<750': false } },
      momo_lost_transactions: { count: 0, thresholds: { 'count<=0': false } },
    },
    root_group: { checks: { a: { name: 'token: status 200', passes: 9, fails: 1 } } },
    setup_data: { collection: { apiKey: 'secret' } },
  };
  const results = thresholdResults(summary);
  assert.deepEqual(results.map((r) => [r.metric, r.expression, r.passed]), [
    ['http_req_duration{op:token}', 'p(95)<250', false],
    ['http_req_duration{op:token}', 'p(99)<750', true],
    ['momo_lost_transactions', 'count<=0', true],
  ]);
  const junit = junitReport('token-storm', summary, 12.3);
  assert.match(junit, /tests="4" failures="2"/);
  assert.match(junit, /<failure message="threshold crossed: http_req_duration\{op:token\} p\(95\)&lt;250">p\(95\)=812\.5<\/failure>/);
  assert.match(junit, /<failure message="1 of 10 failed"\/>/);
  assert.equal('setup_data' in withoutSetupData(summary), false);
});
