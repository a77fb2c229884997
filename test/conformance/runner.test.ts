import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../harness/config.ts';
import { selectScenarios, selectWorkers } from '../../conformance/runner/conformance.ts';
import type { Target } from '../../conformance/runner/target.ts';
import { runAgainstDeviation, runSuite, targetEnv } from '../support/suite.ts';

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

test('a wrong setting is reported with what to fix, and the run could not test (exit 2)', async () => {
  const run = await runSuite([], { MOMO_PROFILE: 'production', MOMO_CURRENCY: 'euro' });
  assert.equal(run.code, 2, run.output);
  assert.match(run.output, /MOMO_PROFILE must be spec or mtn-sandbox, got "production"/);
  assert.match(run.output, /MOMO_CURRENCY must be an ISO 4217 code/);
  assert.doesNotMatch(run.output, /\n\s+at /, 'no stack trace');
});

test('a remote target without subscription keys is a configuration error naming the variables', async () => {
  const run = await runSuite([], { MOMO_BASE_URL: 'http://127.0.0.1:9' });
  assert.equal(run.code, 2, run.output);
  assert.match(run.output, /MOMO_COLLECTION_KEY, MOMO_DISBURSEMENT_KEY, MOMO_REMITTANCE_KEY/);
});

test('a target that is down cannot be tested: exit 2 within seconds, and no report claims a pass', async () => {
  const started = Date.now();
  const run = await runSuite([], targetEnv(`http://127.0.0.1:${await closedPort()}`));
  assert.equal(run.code, 2, run.output);
  assert.match(run.output, /could not be tested: connection refused/);
  assert.ok(Date.now() - started < 20_000);
  const summary = JSON.parse(readFileSync(join(run.reportsDir, 'summary.json'), 'utf8'));
  assert.equal(summary.totals.passed, 0, JSON.stringify(summary.totals));
  assert.equal(summary.totals['not tested'], summary.scenarios.length);
});

test('an unknown option is refused with the usage', async () => {
  const run = await runSuite(['--tag', '@smoke']);
  assert.equal(run.code, 2, run.output);
  assert.match(run.output, /Usage: npm start/);
});

test('a tag expression that selects nothing is not a pass', async () => {
  const run = await runSuite(['--tags', '@no-such-tag', '--parallel', '0']);
  assert.equal(run.code, 2, run.output);
  assert.match(run.output, /nothing was tested/);
});

for (const profile of ['spec', 'mtn-sandbox'] as const) {
  test(`the embedded sandbox conforms in the ${profile} profile, and every report is written`, async () => {
    const run = await runSuite([], { MOMO_PROFILE: profile });
    assert.equal(run.code, 0, run.output);
    assert.match(run.output, /Verdict: the target conforms/);
    for (const file of ['cucumber.html', 'cucumber.json', 'messages.ndjson', 'junit.xml', 'summary.json']) {
      assert.ok(existsSync(join(run.reportsDir, file)), `${file} was not written`);
    }
    const summary = JSON.parse(readFileSync(join(run.reportsDir, 'summary.json'), 'utf8'));
    assert.equal(summary.totals.failed, 0);
    assert.equal(summary.totals['not tested'], 0);
    assert.ok(summary.totals.passed >= 6, JSON.stringify(summary.totals));
    assert.equal(summary.profile, profile);
    const junit = readFileSync(join(run.reportsDir, 'junit.xml'), 'utf8');
    assert.match(junit, /<testsuite[^>]*name="MoMo conformance"/);
  });
}

test('the suite gives the same results in parallel as in one process', async () => {
  const [serial, parallel] = await Promise.all([runSuite(['--parallel', '0', '--tags', 'not @slow']), runSuite(['--parallel', '2', '--tags', 'not @slow'])]);
  assert.equal(serial.code, 0, serial.output);
  assert.equal(parallel.code, 0, parallel.output);
  const verdicts = (dir: string) => JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')).scenarios
    .map((s: { uri: string; scenario: string; verdict: string }) => `${s.uri} ${s.scenario} ${s.verdict}`).sort();
  assert.deepEqual(verdicts(parallel.reportsDir), verdicts(serial.reportsDir));
});

test('a target that answers 503 to every third call could not be tested: exit 2, never "does not conform"', async () => {
  let calls = 0;
  const run = await runAgainstDeviation(() => ((calls += 1) % 3 === 0 ? { status: 503, body: '', headers: {} } : undefined), '@smoke');
  assert.equal(run.code, 2, run.output);
  assert.match(run.output, /not tested/);
  assert.doesNotMatch(run.output, /does NOT conform/);
});

function remote(env: Record<string, string>): Target {
  const config = loadConfig({ ...targetEnv('https://sandbox.momodeveloper.mtn.com'), ...env });
  return { description: 'a remote target', config, embedded: false, stop: async () => {} };
}

test('a remote target leaves out @callback unless MOMO_CALLBACK_URL or MOMO_CALLBACK_HOST is reachable from it', () => {
  const loopback = selectScenarios('@collection', remote({}));
  assert.equal(loopback.expression, '(@collection) and not @stateful and not @uncertain and not @callback');
  assert.ok(loopback.notes.some((n) => n.includes('set MOMO_CALLBACK_URL (e.g. a tunnel) or MOMO_CALLBACK_HOST')), loopback.notes.join('\n'));
  const reachable: Record<string, string>[] = [{ MOMO_CALLBACK_URL: 'https://abc.example.app' }, { MOMO_CALLBACK_HOST: 'harness.example.com' }];
  for (const env of reachable) {
    const selected = selectScenarios(undefined, remote(env));
    assert.equal(selected.expression, 'not @stateful and not @uncertain', JSON.stringify(env));
  }
  const localUrl = selectScenarios(undefined, remote({ MOMO_CALLBACK_URL: 'http://127.0.0.1:8090' }));
  assert.match(localUrl.expression, /not @callback/);
  assert.ok(localUrl.notes.some((n) => n.includes('http://127.0.0.1:8090')));
});

test('a fixed callback port makes the run use one process, and says so', () => {
  assert.deepEqual(selectWorkers(2, loadConfig({})), { parallel: 2 });
  assert.deepEqual(selectWorkers(0, loadConfig({ MOMO_CALLBACK_PORT: '8090' })), { parallel: 0 });
  const fixed = selectWorkers(2, loadConfig({ MOMO_CALLBACK_PORT: '8090' }));
  assert.equal(fixed.parallel, 0);
  assert.match(fixed.note ?? '', /one process .* fixed port 8090 \(MOMO_CALLBACK_PORT\)/);
});

test('callbacks reach a receiver on a fixed port through a public base URL, in one process', async () => {
  const port = await closedPort();
  const run = await runSuite(['--tags', '@callback', '--parallel', '2'], { MOMO_CALLBACK_PORT: String(port), MOMO_CALLBACK_URL: `http://127.0.0.1:${port}` });
  assert.equal(run.code, 0, run.output);
  assert.match(run.output, new RegExp(`Running in one process rather than 2 parallel workers: .* fixed port ${port}`));
  assert.match(run.output, /no parallel workers/);
  const summary = JSON.parse(readFileSync(join(run.reportsDir, 'summary.json'), 'utf8'));
  assert.ok(summary.totals.passed >= 1, JSON.stringify(summary.totals));
  assert.equal(summary.totals.failed + summary.totals['not tested'], 0);
});

test('a secret found in the reports after a run fails the run, naming the file but not the secret', async () => {
  const reports = mkdtempSync(join(tmpdir(), 'momo-leaky-'));
  writeFileSync(join(reports, 'notes.txt'), 'the collection key is sandbox-collection-key');
  const run = await runSuite(['--tags', '@provisioning and @smoke', '--parallel', '0', '--reports', reports]);
  assert.equal(run.code, 2, run.output);
  assert.match(run.output, /SECRET IN REPORT: notes\.txt holds configured secret #1/);
  assert.doesNotMatch(run.output.split('SECRET IN REPORT')[1] ?? '', /sandbox-collection-key/);
});
