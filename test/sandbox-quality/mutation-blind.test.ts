/**
 * How `npm run mutation` weighs a deviation written blind: a default run in each profile its author lists, the spec
 * first, then --strict; it stops at the first run that detects it, and a catch only by a reading is counted apart.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseCommandLine, CommandLineError } from '../../core/command-line.ts';
import {
  MUTATION_OPTIONS,
  mutationReportOf,
  mutationTable,
  runUntilDetected,
  waysToCatch,
  type RunResult,
  type RunSpec,
} from '../../sandbox-quality/mutation/mutation.ts';

const blindSpec = (deviation: string, profiles: ('spec' | 'mtn-sandbox')[]): RunSpec => ({
  label: `go --deviation ${deviation}`,
  independent: { server: 'go', deviation, clause: '§2.7', effect: 'grants the first scope only' },
  ...waysToCatch(profiles)[0]!,
  ways: waysToCatch(profiles),
});

/** A stand-in for a suite run: detected (exit 1, a scenario failed) only in the ways named. */
function fakeRun(detectedIn: string[], calls: string[]) {
  return async (spec: RunSpec): Promise<RunResult> => {
    const way = `${spec.profile}${spec.strict ? ' --strict' : ''}`;
    calls.push(way);
    const caught = detectedIn.includes(way);
    return {
      label: spec.label,
      deviation: undefined,
      independent: spec.independent,
      profile: spec.profile,
      strict: spec.strict,
      warnings: caught ? 0 : 1,
      exitCode: caught ? 1 : 0,
      durationMs: 1000,
      failed: caught ? [{ scenario: 'A consent token holds every scope asked for', uri: 'features/consent.feature' }] : [],
      notTested: 0,
      passed: 10,
    };
  };
}

test('the ways are a default run in each listed profile, the spec first, then --strict in the first', () => {
  assert.deepEqual(waysToCatch(['mtn-sandbox', 'spec']), [
    { profile: 'spec', strict: false },
    { profile: 'mtn-sandbox', strict: false },
    { profile: 'spec', strict: true },
  ]);
  assert.deepEqual(waysToCatch(['mtn-sandbox']), [
    { profile: 'mtn-sandbox', strict: false },
    { profile: 'mtn-sandbox', strict: true },
  ]);
});

test('the runs stop at the first that detects the deviation, and say which ways were tried', async () => {
  const calls: string[] = [];
  const inOther = await runUntilDetected(
    blindSpec('caught-in-mtn', ['spec', 'mtn-sandbox']),
    '/nonexistent',
    fakeRun(['mtn-sandbox'], calls),
  );
  assert.deepEqual(calls, ['spec', 'mtn-sandbox']);
  assert.deepEqual(inOther.tried, ['spec', 'mtn-sandbox']);
  assert.equal(inOther.profile, 'mtn-sandbox');
  assert.equal(inOther.exitCode, 1);
});

test('a catch only under --strict is counted apart, and a miss names every way tried', async () => {
  const byReading = await runUntilDetected(blindSpec('scope-first-only', ['spec']), '/nonexistent', fakeRun(['spec --strict'], []));
  const missed = await runUntilDetected(blindSpec('funds-off-by-one', ['spec']), '/nonexistent', fakeRun([], []));
  const byDefault = await runUntilDetected(blindSpec('token-forged', ['spec']), '/nonexistent', fakeRun(['spec'], []));
  const report = mutationReportOf([byReading, missed, byDefault], false, 60_000);
  assert.equal(report.blindDetected, 2);
  assert.equal(report.blindDetectedByReading, 1);
  const table = mutationTable(report);
  assert.match(
    table,
    /\*\*2 of 3 deviations written blind into them detected\*\* \(1 in a default run, 1 only by a reading under --strict\)/,
  );
  assert.match(table, /\| go `scope-first-only`: .* \| spec --strict \| yes, by a reading \|/);
  assert.match(table, /\| go `funds-off-by-one`: .* \| spec --strict \| \*\*no\*\* \(exit 0; tried spec, spec --strict\) \|/);
  assert.match(table, /\| go `token-forged`: .* \| spec \| yes \|/);
});

test('--blind takes server:deviation pairs and says what to write otherwise', () => {
  const { values } = parseCommandLine(['--blind', 'go:refund-not-debited,java:balance-cached'], MUTATION_OPTIONS);
  assert.deepEqual(values.blind, [
    { server: 'go', name: 'refund-not-debited' },
    { server: 'java', name: 'balance-cached' },
  ]);
  assert.deepEqual(parseCommandLine(['--blind', 'none'], MUTATION_OPTIONS).values.blind, []);
  for (const bad of ['refund-not-debited', 'ruby:x', 'go:', 'go:a:b'])
    assert.throws(
      () => parseCommandLine(['--blind', bad], MUTATION_OPTIONS),
      (error: unknown) => error instanceof CommandLineError && /server:deviation pairs.*--blind go:refund-not-debited/.test(error.message),
      bad,
    );
});
