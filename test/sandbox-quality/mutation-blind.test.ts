/**
 * How `npm run mutation` weighs a deviation written blind: a default run in each profile its author lists, the spec
 * first, the seeded exploration in each, then --strict; it stops at the first run that detects it, and a catch only by
 * a reading, or only by the exploration, is counted apart.
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

const SCOPE = 'A consent token holds every scope asked for';
const SCOPE_KEY = `features/consent.feature › ${SCOPE}`;
const OTHER = 'A callback address over https is taken';

/** The plain server passes every way. */
const passesPlain = async () => new Set<string>();
/** The plain server fails the scope reading under --strict, as a server that grants fewer scopes does. */
const failsScopePlain = async (_spec: RunSpec, way: { strict: boolean }) => new Set(way.strict ? [SCOPE_KEY] : []);

/** A stand-in for a suite run: failing the scenarios given (the scope reading by default), only in the ways named. */
function fakeRun(detectedIn: string[], calls: string[], scenarios = [SCOPE], tagsSeen: (string | undefined)[] = []) {
  return async (spec: RunSpec, _dir: string, tags: string | undefined): Promise<RunResult> => {
    const way = `${spec.explore ? 'explore ' : ''}${spec.profile}${spec.strict ? ' --strict' : ''}${spec.beyondSpec ? ' @beyond-spec' : ''}`;
    calls.push(way);
    tagsSeen.push(tags);
    const caught = detectedIn.includes(way);
    return {
      label: spec.label,
      deviation: undefined,
      independent: spec.independent,
      profile: spec.profile,
      strict: spec.strict,
      ...(spec.beyondSpec ? { beyondSpec: true } : {}),
      ...(spec.explore ? { explore: true } : {}),
      warnings: caught ? 0 : 1,
      exitCode: caught ? 1 : 0,
      durationMs: 1000,
      failed: caught ? scenarios.map((scenario) => ({ scenario, uri: 'features/consent.feature' })) : [],
      notTested: 0,
      passed: 10,
    };
  };
}

test('the ways are a default run in each listed profile, the spec first, the exploration in each, then --strict, then @beyond-spec in the first, then that --strict', () => {
  assert.deepEqual(waysToCatch(['mtn-sandbox', 'spec']), [
    { profile: 'spec', strict: false },
    { profile: 'mtn-sandbox', strict: false },
    { profile: 'spec', strict: false, explore: true },
    { profile: 'mtn-sandbox', strict: false, explore: true },
    { profile: 'spec', strict: true },
    { profile: 'spec', strict: false, beyondSpec: true },
    { profile: 'spec', strict: true, beyondSpec: true },
  ]);
  assert.deepEqual(waysToCatch(['mtn-sandbox']), [
    { profile: 'mtn-sandbox', strict: false },
    { profile: 'mtn-sandbox', strict: false, explore: true },
    { profile: 'mtn-sandbox', strict: true },
    { profile: 'mtn-sandbox', strict: false, beyondSpec: true },
    { profile: 'mtn-sandbox', strict: true, beyondSpec: true },
  ]);
});

test('the runs stop at the first that detects the deviation, and say which ways were tried', async () => {
  const calls: string[] = [];
  const inOther = await runUntilDetected(
    blindSpec('caught-in-mtn', ['spec', 'mtn-sandbox']),
    '/nonexistent',
    passesPlain,
    fakeRun(['mtn-sandbox'], calls),
  );
  assert.deepEqual(calls, ['spec', 'mtn-sandbox']);
  assert.deepEqual(inOther.tried, ['spec', 'mtn-sandbox']);
  assert.equal(inOther.profile, 'mtn-sandbox');
  assert.equal(inOther.exitCode, 1);
});

test('a catch only under --strict is counted apart, and a miss names every way tried', async () => {
  const byReading = await runUntilDetected(
    blindSpec('scope-first-only', ['spec']),
    '/nonexistent',
    passesPlain,
    fakeRun(['spec --strict'], []),
  );
  const missed = await runUntilDetected(blindSpec('funds-off-by-one', ['spec']), '/nonexistent', passesPlain, fakeRun([], []));
  const byDefault = await runUntilDetected(blindSpec('token-forged', ['spec']), '/nonexistent', passesPlain, fakeRun(['spec'], []));
  const explored: string[] = [];
  const byExplore = await runUntilDetected(
    blindSpec('record-flips', ['spec']),
    '/nonexistent',
    passesPlain,
    fakeRun(['explore spec'], explored),
  );
  assert.deepEqual(explored, ['spec', 'explore spec'], 'the exploration comes after the default run, before --strict');
  const report = mutationReportOf([byReading, missed, byDefault, byExplore], false, 60_000);
  assert.equal(report.blindDetected, 3);
  assert.equal(report.blindDetectedByReading, 1);
  const table = mutationTable(report);
  assert.match(
    table,
    /\*\*3 of 4 deviations written blind into them detected\*\* \(1 in a default run, 1 only by the seeded exploration, 1 only by a reading under --strict\)/,
  );
  assert.match(table, /\| go `record-flips`: .* \| explore spec \| yes \|/);
  assert.match(table, /\| go `scope-first-only`: .* \| spec --strict \| yes, by a reading \|/);
  assert.match(
    table,
    /\| go `funds-off-by-one`: .* \| spec --strict @beyond-spec \| \*\*no\*\* \(exit 0; tried spec, explore spec, spec --strict, spec @beyond-spec, spec --strict @beyond-spec\) \|/,
  );
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

test('under --strict, only scenarios the plain server passes that way detect a deviation', async () => {
  const onlyAsPlain = await runUntilDetected(
    blindSpec('text-limit-off-by-one', ['spec']),
    '/nonexistent',
    failsScopePlain,
    fakeRun(['spec --strict'], []),
  );
  assert.deepEqual(onlyAsPlain.failed, []);
  assert.deepEqual(onlyAsPlain.failedAlsoPlain, [{ way: 'spec --strict', scenarios: 1 }]);
  const beyondPlain = await runUntilDetected(
    blindSpec('https-refused', ['spec']),
    '/nonexistent',
    failsScopePlain,
    fakeRun(['spec --strict'], [], [SCOPE, OTHER]),
  );
  assert.deepEqual(
    beyondPlain.failed.map((f) => f.scenario),
    [OTHER],
  );
  const report = mutationReportOf([onlyAsPlain, beyondPlain], false, 60_000);
  assert.equal(report.blindDetected, 1);
  assert.match(
    mutationTable(report),
    /`text-limit-off-by-one`: .* \*\*no\*\* \(exit 0; tried spec, explore spec, spec --strict, spec @beyond-spec, spec --strict @beyond-spec; in spec --strict it fails only the 1 scenarios its server fails plain\) \|/,
  );
});

test('the plain server is asked for only under --strict, when a strict run fails', async () => {
  const asked: string[] = [];
  const countingPlain = async (_spec: RunSpec, way: { profile: string; strict: boolean }) => {
    asked.push(`${way.profile}${way.strict ? ' --strict' : ''}`);
    return new Set([SCOPE_KEY]);
  };
  await runUntilDetected(blindSpec('a', ['spec']), '/nonexistent', countingPlain, fakeRun(['spec --strict'], []));
  await runUntilDetected(blindSpec('b', ['spec']), '/nonexistent', countingPlain, fakeRun(['spec'], []));
  await runUntilDetected(blindSpec('c', ['spec']), '/nonexistent', countingPlain, fakeRun([], []));
  // A default way that detects needs none: the plain server's own runs in that profile must pass.
  assert.deepEqual(asked, ['spec --strict']);
});

test('beyond the spec, only the beyond-spec scenarios run, those the plain server fails do not count, and a catch is counted apart', async () => {
  const BALANCE = 'A refund of a payment that does not exist moves no money';
  const TRANSFER = 'A disbursement partner transfers money to a payee who approves';
  const failsTransferPlain = async (_spec: RunSpec, way: { beyondSpec?: boolean }) =>
    new Set(way.beyondSpec ? [`features/consent.feature › ${TRANSFER}`] : []);
  const tags: (string | undefined)[] = [];
  const calls: string[] = [];
  const caught = await runUntilDetected(
    blindSpec('failed-refund-still-debited', ['spec']),
    '/nonexistent',
    failsTransferPlain,
    fakeRun(['spec @beyond-spec'], calls, [TRANSFER, BALANCE], tags),
  );
  assert.deepEqual(calls, ['spec', 'explore spec', 'spec --strict', 'spec @beyond-spec']);
  assert.deepEqual(tags, [undefined, undefined, undefined, '@beyond-spec']);
  assert.deepEqual(
    caught.failed.map((f) => f.scenario),
    [BALANCE],
  );
  const onlyAsPlain = await runUntilDetected(
    blindSpec('transfer-only', ['spec']),
    '/nonexistent',
    failsTransferPlain,
    fakeRun(['spec @beyond-spec'], [], [TRANSFER]),
  );
  const byDefault = await runUntilDetected(blindSpec('token-forged', ['spec']), '/nonexistent', passesPlain, fakeRun(['spec'], []));
  const report = mutationReportOf([caught, onlyAsPlain, byDefault], false, 60_000);
  assert.equal(report.blindDetected, 2);
  assert.equal(report.blindDetectedBeyondSpec, 1);
  const table = mutationTable(report);
  assert.match(
    table,
    /\*\*2 of 3 deviations written blind into them detected\*\* \(1 in a default run, 0 only by a reading under --strict, 1 only beyond the spec\)/,
  );
  assert.match(table, /`failed-refund-still-debited`: .* \| spec @beyond-spec \| yes, beyond the spec \|/);
  assert.match(table, /`transfer-only`: .* in spec @beyond-spec it fails only the 1 scenarios its server fails plain\) \|/);
});
