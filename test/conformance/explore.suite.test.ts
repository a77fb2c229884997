/**
 * The seeded exploration (momo-harness explore) against deliberate deviations of four classes, each on its own,
 * from one fixed seed: it finds each, shrinks it to a few calls, and writes a replay that, run alone against another
 * sandbox with the same deviation, fails, and against a faithful sandbox passes. Against a faithful sandbox the same
 * seed finds nothing (exit 0), run as a user runs the command.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runExplore } from '../../conformance/explore/explore.ts';
import type { ExploreReport } from '../../conformance/explore/reports.ts';
import { EMBEDDED_TIMINGS } from '../../conformance/runner/target.ts';
import { PACKAGE_ROOT, harnessProgram } from '../../core/package.ts';
import { DEVELOPMENT_KEYS } from '../../sandbox/domain/settings.ts';
import { startEmbeddedSandbox } from '../../sandbox/start.ts';
import { faultPlugins, type FaultName } from '../../sandbox-quality/faults/faults.ts';
import { targetEnv } from '../support/suite.ts';
import type { ProfileName } from '../../core/profiles.ts';

/** The seed every case starts from: the command's default, so that a user's first run is the one tested. */
const SEED = '20260310';
/** The cases whose rule is the spec's own, run in the spec profile, whose replay shows the status that departs. */
const DEFINITE = { profile: 'spec' as ProfileName, source: 'spec', departs: /DEPARTS: status: expected/ };
/** A shrunk departure of any of these classes shows in this many calls, at the most. */
const MOST_CALLS = 5;

/** Explores the embedded sandbox, started with the deviation, in this process; the exit code, report and lines. */
async function explore(
  deviation: FaultName,
  profile: ProfileName,
): Promise<{ code: number; report: ExploreReport; dir: string; lines: string[]; ms: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'momo-explore-'));
  const lines: string[] = [];
  const started = Date.now();
  const code = await runExplore({
    argv: ['--seed', SEED, '--reports', dir, '--time-limit', '120'],
    env: { MOMO_SANDBOX_DEVIATIONS: deviation, MOMO_PROFILE: profile },
    cwd: dir,
    log: (line) => lines.push(line),
    faults: faultPlugins,
  });
  const report = JSON.parse(readFileSync(join(dir, 'explore.json'), 'utf8')) as ExploreReport;
  return { code, report, dir, lines, ms: Date.now() - started };
}

/** The replay, run alone with node against a sandbox of its own (with the deviations given), as a user runs it. */
async function replay(file: string, deviations: FaultName[], profile: ProfileName): Promise<{ code: number; output: string }> {
  const sandbox = await startEmbeddedSandbox({ profile, ...EMBEDDED_TIMINGS }, { plugins: faultPlugins(deviations) });
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [file], {
      env: { PATH: process.env.PATH ?? '', ...targetEnv(sandbox.baseUrl) },
      encoding: 'utf8',
    });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  } finally {
    await sandbox.close();
  }
}

const CLASSES: { deviation: FaultName; kind: string; check: string; profile: ProfileName; source: string; departs: RegExp }[] = [
  // A rule checked on one operation only: §7 rule 1 held for requests to pay, not for deposits.
  { deviation: 'deposit-id-reused', kind: 'a rule kept on one operation only', check: 'status-code', ...DEFINITE },
  // Nothing looks after the event: a second registration replaces the first API user.
  { deviation: 'api-user-id-reused', kind: 'an event nothing looks after', check: 'status-code', ...DEFINITE },
  // An input no valid call sends: an amount as a JSON number taken as a request to pay.
  { deviation: 'payment-body-not-validated', kind: 'an input no valid call sends', check: 'status-code', ...DEFINITE },
  // Callbacks only partly compared: a callback that says FAILED of a payment its status query reads SUCCESSFUL. That
  // the callback is the status record is the live service's (documented): a departure in the mtn-sandbox profile.
  {
    deviation: 'callback-disagrees-with-status',
    kind: 'a callback that is not the status record',
    check: 'callback-record',
    profile: 'mtn-sandbox',
    source: 'observed',
    departs: /DEPARTS: callback 1 \/status: expected "SUCCESSFUL", as the status query gives, got "FAILED"/,
  },
];

for (const { deviation, kind, check, profile, source, departs } of CLASSES) {
  test(`explore finds ${kind} (${deviation}) from a fixed seed, shrinks it, and its replay fails there and passes on a faithful sandbox`, async (t) => {
    const run = await explore(deviation, profile);
    const output = run.lines.join('\n');
    assert.equal(run.code, 1, output);
    const departure = run.report.departure!;
    assert.ok(departure, output);
    t.diagnostic(
      `seed ${SEED}: found in run ${departure.firstFound.afterRuns} (commands ${departure.firstFound.commands}, calls ${departure.firstFound.calls}), shrunk in ${departure.shrinkTries} tries to commands ${departure.commands.length}, calls ${departure.calls}; ${run.report.calls} calls in all, ${run.ms} ms`,
    );
    assert.ok(departure.calls <= MOST_CALLS, `shrunk to ${departure.calls} calls:\n${output}`);
    assert.ok(departure.calls <= departure.firstFound.calls);
    const [finding] = departure.findings;
    assert.equal(finding?.check, check, output);
    assert.equal(finding?.source.kind, source, 'a finding that fails in its profile, with its source');
    assert.equal(run.report.seed, Number(SEED));
    assert.match(
      readFileSync(join(run.dir, 'junit.xml'), 'utf8'),
      new RegExp(`<failure message="${source === 'spec' ? 'definite' : source}: `),
    );
    for (const file of readdirSync(run.dir))
      for (const key of Object.values(DEVELOPMENT_KEYS))
        assert.ok(!readFileSync(join(run.dir, file), 'utf8').includes(key), `${file} holds no key`);

    const script = join(run.dir, 'replay.mjs');
    const again = await replay(script, [deviation], profile);
    assert.equal(again.code, 1, again.output);
    assert.match(again.output, departs);
    const faithful = await replay(script, [], profile);
    assert.equal(faithful.code, 0, faithful.output);
    assert.match(faithful.output, /No departure/);
  });
}

test('against a faithful sandbox, the fixed seed finds nothing: exit 0, a report and no replay', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'momo-explore-'));
  const started = Date.now();
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, [...harnessProgram(), 'explore', '--seed', SEED, '--reports', dir], {
      cwd: PACKAGE_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
    child.on('close', (exit) => resolve({ code: exit, output: text }));
  });
  const report = JSON.parse(readFileSync(join(dir, 'explore.json'), 'utf8')) as ExploreReport;
  t.diagnostic(`seed ${SEED}: ${report.runsDone} runs, ${report.calls} calls, ${Date.now() - started} ms with the process's start`);
  assert.equal(code, 0, output);
  assert.equal(report.outcome, 'nothing found');
  assert.equal(report.runsDone, 100, 'every run of the default');
  assert.match(output, /Seed 20260310: 100 runs/);
  assert.match(output, /Nothing found/);
  assert.ok(!existsSync(join(dir, 'replay.mjs')), 'no replay without a departure');
});

test('the cap on calls and the time limit stop the exploration: exit 0, saying why, within the cap', async () => {
  for (const [limit, stopped] of [
    [['--max-calls', '30'], /the cap of 30 calls \(--max-calls\) was reached/],
    [['--time-limit', '1'], /the time limit \(--time-limit\) was reached/],
  ] as const) {
    const dir = mkdtempSync(join(tmpdir(), 'momo-explore-'));
    const lines: string[] = [];
    const started = Date.now();
    const code = await runExplore({
      argv: ['--runs', '1000000', ...limit, '--reports', dir],
      env: {},
      cwd: dir,
      log: (l) => lines.push(l),
    });
    const report = JSON.parse(readFileSync(join(dir, 'explore.json'), 'utf8')) as ExploreReport;
    assert.equal(code, 0, lines.join('\n'));
    assert.match(report.stopped ?? '', stopped);
    assert.match(lines.join('\n'), /stopped early/);
    assert.ok(report.runsDone < 1_000_000);
    if (limit[0] === '--max-calls') assert.ok(report.calls <= 30, `${report.calls} calls`);
    else assert.ok(Date.now() - started < 30_000, 'the runs left are not drawn for nothing');
  }
});

test('against a target of its own, the report carries none of its keys: exit 0, nothing found', async () => {
  const sandbox = await startEmbeddedSandbox({ profile: 'spec', ...EMBEDDED_TIMINGS });
  const dir = mkdtempSync(join(tmpdir(), 'momo-explore-'));
  const lines: string[] = [];
  try {
    const code = await runExplore({
      argv: ['--seed', SEED, '--runs', '10', '--reports', dir],
      env: targetEnv(sandbox.baseUrl),
      cwd: dir,
      log: (l) => lines.push(l),
    });
    assert.equal(code, 0, lines.join('\n'));
    assert.doesNotMatch(lines.join('\n'), /SECRET IN REPORT/);
    for (const file of readdirSync(dir)) {
      const text = readFileSync(join(dir, file), 'utf8');
      for (const key of Object.values(DEVELOPMENT_KEYS)) assert.ok(!text.includes(key), `${file} holds a subscription key`);
    }
  } finally {
    await sandbox.close();
  }
});
