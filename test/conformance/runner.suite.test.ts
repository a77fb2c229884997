import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

test('a target that is down cannot be tested: exit 2 after one probe, and no report claims a pass', async () => {
  const run = await runSuite([], targetEnv(`http://127.0.0.1:${await closedPort()}`));
  assert.equal(run.code, 2, run.output);
  assert.match(run.output, /could not be tested: connection refused/);
  const summary = JSON.parse(readFileSync(join(run.reportsDir, 'summary.json'), 'utf8'));
  assert.equal(summary.totals.passed, 0, JSON.stringify(summary.totals));
  assert.equal(summary.totals['not tested'], summary.scenarios.length);
  // The one cause is said where the probe found it and once more over the scenarios it kept from testing, with
  // their count: not once a scenario.
  assert.equal(run.output.match(/could not be tested: connection refused/g)!.length, 2, run.output);
  assert.match(run.output, new RegExp(`^NOT TESTED \\(${summary.scenarios.length} scenarios\\), each for this reason:$`, 'm'));
  assert.ok(run.output.split('\n').length < 40, run.output);
  // Each scenario ended at once with the probe's cause: none called the target and waited for an answer.
  for (const scenario of summary.scenarios) assert.match(scenario.reason, /could not be tested: connection refused/, scenario.scenario);
  const certification = JSON.parse(readFileSync(join(run.reportsDir, 'certification', 'certification.json'), 'utf8'));
  assert.deepEqual(
    certification.scenarios.flatMap((s: { exchanges: unknown[] }) => s.exchanges),
    [],
  );
});

test('an unknown option is refused with the nearest one and the usage', async () => {
  const run = await runSuite(['--tag', '@smoke']);
  assert.equal(run.code, 2, run.output);
  assert.match(run.output, /^unknown option --tag; did you mean --tags\?$/m);
  assert.match(run.output, /Usage: momo-harness run/);
});

test('a tag that no scenario carries is not a pass: the run stops before it starts, naming the tag', async () => {
  const run = await runSuite(['--tags', '@no-such-tag', '--parallel', '0']);
  assert.equal(run.code, 2, run.output);
  assert.match(run.output, /no scenario carries @no-such-tag/);
  assert.doesNotMatch(run.output, /Testing /);
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
  const [serial, parallel] = await Promise.all([
    runSuite(['--parallel', '0', '--tags', 'not @slow']),
    runSuite(['--parallel', '2', '--tags', 'not @slow']),
  ]);
  assert.equal(serial.code, 0, serial.output);
  assert.equal(parallel.code, 0, parallel.output);
  const verdicts = (dir: string) =>
    JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'))
      .scenarios.map((s: { uri: string; scenario: string; verdict: string }) => `${s.uri} ${s.scenario} ${s.verdict}`)
      .sort();
  assert.deepEqual(verdicts(parallel.reportsDir), verdicts(serial.reportsDir));
});

test('a target that answers 503 to every third call is never "does not conform": the careful client gets through, or could not test', async () => {
  let calls = 0;
  const run = await runAgainstDeviation(() => ((calls += 1) % 3 === 0 ? { status: 503, body: '', headers: {} } : undefined), '@smoke');
  // 503 is weather the spec allows: the calls made again are reported apart, and what they could not reach is not tested.
  assert.notEqual(run.code, 1, run.output);
  assert.match(run.output, run.code === 2 ? /not tested/ : /calls made again; they do not change the verdict/);
  assert.doesNotMatch(run.output, /does NOT conform/);
});

test('callbacks reach a receiver on a fixed port through a public base URL, in one process', async () => {
  const port = await closedPort();
  const run = await runSuite(['--tags', '@callback', '--parallel', '2'], {
    MOMO_CALLBACK_PORT: String(port),
    MOMO_CALLBACK_URL: `http://127.0.0.1:${port}`,
  });
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
