/**
 * A night after a night: real `npm start` runs of the smoke scenarios, one against a faithful sandbox and one
 * against a sandbox started with a fault, compared through --baseline; a target that fails a scenario's first
 * attempt only (flaky); the history they append and its trend; --rerun-failed; and the baselines a run refuses.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CertificationReport } from '../../conformance/certification/report.ts';
import type { RunSummary } from '../../conformance/results/verdict-stream.ts';
import { readHistory } from '../../conformance/trend/history.ts';
import { describeErrors, validatorFor } from '../../core/validation/schemas.ts';
import { AlteringProxy, type Alteration } from '../support/altering-proxy.ts';
import { runSuite, startReferenceSandbox, targetEnv, type SuiteRun } from '../support/suite.ts';

/** The remittance balance without its currency: the two smoke scenarios that read it fail. */
const FAULT = { MOMO_SANDBOX_DEVIATIONS: 'remittance-balance-without-currency' };
const SMOKE = ['--tags', '@smoke', '--parallel', '0'];
const FAILING = [
  'features/remittance.feature › A partner reads its remittance balance',
  'features/tokens.feature › The remittance product issues an access token to its own API user',
];

interface Night extends SuiteRun {
  report: CertificationReport;
  summary: RunSummary;
  certificationJson: string;
  bundle: string;
}

function night(run: SuiteRun): Night {
  const dir = join(run.reportsDir, 'certification');
  const certificationJson = join(dir, 'certification.json');
  return {
    ...run,
    certificationJson,
    report: JSON.parse(readFileSync(certificationJson, 'utf8')) as CertificationReport,
    summary: JSON.parse(readFileSync(join(run.reportsDir, 'summary.json'), 'utf8')) as RunSummary,
    bundle: join(dir, readdirSync(dir).find((f) => f.endsWith('.tar.gz'))!),
  };
}

const changesOf = (report: CertificationReport) =>
  Object.fromEntries(report.scenarios.filter((s) => s.change !== 'not applicable').map((s) => [`${s.uri} › ${s.name}`, s.change]));

let history: string;
let first: Night;
let broken: Night;
let stillBroken: Night;
let fixed: Night;

// Four nights in a row, each appending to one history: faithful, broken, broken again (--fail-on new), fixed.
before(async () => {
  history = join(mkdtempSync(join(tmpdir(), 'momo-history-')), 'history.ndjson');
  const withHistory = ['--history', history];
  first = night(await runSuite([...SMOKE, ...withHistory]));
  broken = night(await runSuite([...SMOKE, ...withHistory, '--baseline', first.certificationJson], FAULT));
  appendFileSync(history, '{"history": 1, "at": "cut off by a killed run\n');
  stillBroken = night(await runSuite([...SMOKE, ...withHistory, '--baseline', broken.bundle, '--fail-on', 'new'], FAULT));
  fixed = night(await runSuite([...SMOKE, ...withHistory, '--baseline', stillBroken.bundle]));
});

test('a new failure since the baseline fails the run, and is named in the terminal, certification.json and index.html', () => {
  assert.equal(first.code, 0, first.output);
  assert.equal(broken.code, 1, broken.output);
  const changes = changesOf(broken.report);
  for (const scenario of FAILING) assert.equal(changes[scenario], 'new failure', scenario);
  assert.equal(Object.values(changes).filter((c) => c === 'new failure').length, 2);
  assert.ok(
    Object.values(changes).every((c) => c === 'new failure' || c === 'still passing'),
    JSON.stringify(changes),
  );
  assert.equal(broken.report.baseline?.counts.scenarios['new failure'], 2);
  assert.ok((broken.report.baseline?.counts.requirements['new failure'] ?? 0) > 0);
  assert.match(broken.output, /Since the baseline .*certification\.json/);
  assert.match(
    broken.output,
    /NEW FAILURE: Remittance balance › A partner reads its remittance balance \(features\/remittance\.feature:\d+\)/,
  );
  const validate = validatorFor('certification-report');
  assert.ok(validate(broken.report), describeErrors(validate.errors).join('\n'));
  const html = readFileSync(join(broken.reportsDir, 'certification', 'index.html'), 'utf8');
  assert.match(html, /<section id="baseline">/);
  assert.match(html, /class="change c-new-failure">new failure</);
});

test('with --fail-on new, failures the baseline (a bundle) had too are still failing and do not fail the run', () => {
  assert.equal(stillBroken.code, 0, stillBroken.output);
  const changes = changesOf(stillBroken.report);
  for (const scenario of FAILING) assert.equal(changes[scenario], 'still failing');
  assert.equal(stillBroken.report.baseline?.failOn, 'new');
  assert.equal(stillBroken.report.exitCode, 0);
  assert.match(stillBroken.output, /--fail-on new: failures that failed in the baseline too do not fail the run/);
});

test('the night the fault is gone, its scenarios are fixed', () => {
  assert.equal(fixed.code, 0, fixed.output);
  const changes = changesOf(fixed.report);
  for (const scenario of FAILING) assert.equal(changes[scenario], 'fixed');
  assert.ok(fixed.report.requirements.some((r) => r.change === 'fixed'));
});

test('the history holds every night, keeps a corrupt line and names it, and the trend page is written', () => {
  const { records, corrupt } = readHistory(history);
  assert.deepEqual(
    records.map((r) => r.exitCode),
    [0, 1, 0, 0],
  );
  assert.equal(corrupt.length, 1);
  assert.match(
    fixed.output,
    /HISTORY: .*history\.ndjson line 3 is not a run record \(not JSON\); it is kept as it is, and left out of the trend\./,
  );
  assert.match(readFileSync(history, 'utf8'), /cut off by a killed run/);
  const [faithful, failing] = records;
  const balance = Object.keys(faithful!.requirements).find(
    (id) => faithful!.requirements[id] === 'PASS' && failing!.requirements[id] === 'FAIL',
  );
  assert.ok(balance, 'a requirement passed the first night and failed the second');
  const times = faithful!.operations['get account balance (remittance)'];
  assert.ok(times && times.count > 0 && times.p50 <= times.p95, JSON.stringify(faithful!.operations));
  const trend = readFileSync(join(fixed.reportsDir, 'trend', 'index.html'), 'utf8');
  assert.match(trend, /4 runs of/);
  assert.match(trend, /<svg role="img"/);
  // The page opens with what the last night changed: the two scenarios the fault broke pass again.
  const changes = trend.match(/<section id="changes">[\s\S]*?<\/section>/)?.[0] ?? assert.fail('no "what changed" section');
  assert.match(changes, /2 scenarios newly pass:/);
  for (const scenario of FAILING) assert.ok(changes.includes(`${scenario} <small>(failed before)</small>`), scenario);
  assert.equal(
    Object.keys(records.at(-1)!.scenarios ?? {}).length,
    fixed.report.scenarios.length,
    'every scenario of the suite, run or not, is recorded',
  );
  // A record holds verdicts and percentiles only: its size does not grow with what the run saw.
  const largest = Math.max(
    ...readFileSync(history, 'utf8')
      .split('\n')
      .map((line) => Buffer.byteLength(line)),
  );
  assert.ok(largest < 64 * 1024, `the largest record is ${largest} bytes`);
});

test('--rerun-failed runs only the failed scenarios of a summary.json', async () => {
  const rerun = night(await runSuite(['--parallel', '0', '--rerun-failed', join(broken.reportsDir, 'summary.json')]));
  assert.equal(rerun.code, 0, rerun.output);
  assert.deepEqual(rerun.summary.scenarios.map((s) => `${s.uri} › ${s.scenario}`).sort(), [...FAILING].sort());
  assert.match(rerun.output, /Running again the 2 failed or flaky scenarios of /);
  assert.ok(!rerun.report.requirements.some((r) => r.verdict === 'NOT TESTED'), 'what the rerun left out is not applicable, not untested');
});

test('a scenario that fails its first attempt only is flaky: counted apart, never passed, the run conforms, every attempt kept', async () => {
  const sandbox = await startReferenceSandbox();
  // The first remittance balance of the run comes without its currency; every later one is faithful.
  let spoiled = false;
  const firstOnly: Alteration = (x) => {
    if (spoiled || x.operation !== 'getBalance' || x.product !== 'remittance' || x.status !== 200) return undefined;
    spoiled = true;
    const { currency: _, ...body } = JSON.parse(x.body) as Record<string, unknown>;
    return { body: JSON.stringify(body) };
  };
  const proxy = new AlteringProxy(sandbox.url, firstOnly);
  try {
    const url = await proxy.start();
    const run = night(
      await runSuite(['--tags', '@smoke and @remittance', '--parallel', '0', '--baseline', first.certificationJson], targetEnv(url)),
    );
    assert.equal(run.code, 0, run.output);
    const flaky = run.summary.scenarios.filter((s) => s.verdict === 'flaky');
    assert.equal(flaky.length, 1, run.output);
    assert.equal(run.summary.totals.flaky, 1);
    assert.match(flaky[0]!.reason ?? '', /\/currency: expected the field \(balance\.schema\.json\), got none/);
    assert.match(run.output, /FLAKY: .* passed on attempt 2; the first failed:/);
    assert.match(run.output, /1 flaky \(passed only when run again/);
    const scenario = run.report.scenarios.find((s) => s.verdict === 'flaky')!;
    assert.equal(scenario.change, 'flaky');
    assert.equal(scenario.earlierAttempts?.length, 1);
    assert.ok(scenario.earlierAttempts![0]!.exchanges.length > 0 && scenario.exchanges.length > 0, 'the evidence of both attempts');
    assert.ok(run.report.requirements.some((r) => r.verdict === 'FLAKY'));
    assert.ok(!run.report.requirements.some((r) => r.verdict === 'FLAKY' && r.change !== 'flaky'));
    const validate = validatorFor('certification-report');
    assert.ok(validate(run.report), describeErrors(validate.errors).join('\n'));
    assert.match(readFileSync(join(run.reportsDir, 'certification', 'index.html'), 'utf8'), /<h4>Attempt 1: failed<\/h4>/);
  } finally {
    await proxy.stop();
    await sandbox.close();
  }
});

test('a target that cannot be tested puts what it kept from testing in "not tested", with exit 2', async () => {
  const run = night(
    await runSuite(['--tags', '@smoke', '--parallel', '0', '--baseline', first.certificationJson], {
      ...targetEnv('http://127.0.0.1:9'),
      MOMO_CONNECT_TIMEOUT_MS: '500',
    }),
  );
  assert.equal(run.code, 2, run.output);
  assert.ok(run.report.baseline!.counts.scenarios['not tested'] > 0);
  assert.ok(run.report.requirements.filter((r) => r.change === 'not tested').length > 0);
  assert.equal(run.report.baseline!.counts.scenarios['new failure'], 0);
});

test('a baseline that is missing, not a report, or of another catalogue stops the run with exit 2 before it starts', async () => {
  const other = join(first.reportsDir, 'other-catalogue.json');
  writeFileSync(other, JSON.stringify({ ...first.report, catalogue: { operations: 1, fingerprint: 'f'.repeat(64) } }));
  const cases: [string[], RegExp][] = [
    [['--baseline', join(first.reportsDir, 'nothing.json')], /cannot be used: there is no such file/],
    [['--baseline', join(first.reportsDir, 'summary.json')], /cannot be used: it is not a certification report/],
    [['--baseline', other], /another version of the operation catalogue/],
    [
      ['--baseline', first.certificationJson, '--fail-on', 'sometimes'],
      /--fail-on: "sometimes" is not new or any; write e.g. --fail-on new/,
    ],
  ];
  for (const [argv, message] of cases) {
    const run = await runSuite([...SMOKE, ...argv]);
    assert.equal(run.code, 2, run.output);
    assert.match(run.output, message);
    assert.doesNotMatch(run.output, /Testing /, 'the target is never called');
  }
});
