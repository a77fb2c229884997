import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DIFFERENCE_REQUIREMENTS } from '../../conformance/certification/profile-differences.ts';
import { certify, coverageOf, exitCodeOf, type RunContext, type ScenarioOutcome } from '../../conformance/certification/verdicts.ts';
import type { Waiver } from '../../conformance/certification/waivers.ts';
import { loadRequirements } from '../../conformance/certification/requirements.ts';
import type { ScenarioResult } from '../../conformance/results/verdict-stream.ts';
import { requirement, scenario } from './fixtures.ts';

const RUN: RunContext = { profile: 'spec', expression: '', date: '2026-03-10' };

function verdictOf(scenarios: ScenarioOutcome[], run: RunContext = RUN, id = 'COL-A') {
  const [result] = certify([requirement(id)], scenarios, [], run).requirements;
  assert.ok(result);
  return result;
}

/** The ledger's summary of the scenarios that ran, as exitCodeOf reads it. */
function summaryOf(scenarios: ScenarioOutcome[], exitCode: 0 | 1 | 2) {
  const ran = scenarios.filter((s) => s.verdict !== 'not run') as (ScenarioOutcome & { verdict: ScenarioResult['verdict'] })[];
  return { exitCode, scenarios: ran.map((s) => ({ ...s, scenario: s.name, line: s.line, durationMs: 1 })) };
}

const waiver = (requirementId: string, expires = '2026-03-31'): Waiver => ({
  requirement: requirementId,
  reason: 'fixed in release 2.4 (TICKET-12)',
  owner: 'payments team',
  expires,
});

test('a requirement whose scenarios all passed is PASS, with its scenarios', () => {
  const result = verdictOf([
    scenario('a', 'passed', ['COL-A']),
    scenario('b', 'passed', ['COL-A']),
    scenario('other', 'failed', ['COL-B']),
  ]);
  assert.equal(result.verdict, 'PASS');
  assert.deepEqual(result.scenarios, ['pickle-a', 'pickle-b']);
  assert.equal(result.explanation, '2 of 2 scenarios passed.');
});

test('one failed scenario makes the requirement FAIL, naming the scenario and the first line of why', () => {
  const result = verdictOf([
    scenario('a', 'passed', ['COL-A']),
    scenario('duplicate', 'failed', ['COL-A'], { reason: 'request to pay: expected 409, got 202\n  body: {}' }),
  ]);
  assert.equal(result.verdict, 'FAIL');
  assert.equal(result.explanation, '1 of 2 scenarios failed. duplicate: request to pay: expected 409, got 202');
});

test('a scenario that could not test the target makes the requirement NOT TESTED, unless another failed', () => {
  const unavailable = scenario('a', 'not tested', ['COL-A'], { reason: 'the target did not answer' });
  assert.equal(verdictOf([unavailable, scenario('b', 'passed', ['COL-A'])]).verdict, 'NOT TESTED');
  assert.match(verdictOf([unavailable]).explanation, /could not test the target\. a: the target did not answer/);
  assert.equal(verdictOf([unavailable, scenario('c', 'failed', ['COL-A'])]).verdict, 'FAIL');
});

test('a scenario that passed only when run again makes the requirement FLAKY, covered but never PASS; a failure still wins', () => {
  const flaky = scenario('a', 'flaky', ['COL-A'], { reason: 'expected: HTTP 202\nreceived: HTTP 500' });
  const result = verdictOf([flaky, scenario('b', 'passed', ['COL-A'])]);
  assert.equal(result.verdict, 'FLAKY');
  assert.equal(result.explanation, '1 of 2 scenarios passed only when run again. The first attempt of a: expected: HTTP 202');
  assert.equal(verdictOf([flaky, scenario('c', 'failed', ['COL-A'])]).verdict, 'FAIL');
  const certification = certify([requirement('COL-A')], [flaky], [], RUN);
  assert.equal(coverageOf(certification.requirements).total.covered, 1);
  assert.equal(exitCodeOf(summaryOf([flaky], 0), certification), 0, 'flaky does not fail the run');
});

test('a requirement no scenario verifies is NOT TESTED, and says so', () => {
  const result = verdictOf([scenario('x', 'passed', ['COL-B'])]);
  assert.equal(result.verdict, 'NOT TESTED');
  assert.equal(result.explanation, 'No scenario verifies it.');
  assert.deepEqual(result.scenarios, []);
});

test("a requirement whose scenarios the user's --tags left out is NOT APPLICABLE, naming the selection", () => {
  const run = { ...RUN, requested: '@smoke', expression: '(@smoke)' };
  const result = verdictOf([scenario('a', 'not run', ['COL-A'])], run);
  assert.equal(result.verdict, 'NOT APPLICABLE');
  assert.equal(result.explanation, 'Not selected: its scenarios are outside --tags "@smoke".');
});

test('a requirement whose scenarios this kind of target cannot take part in is NOT APPLICABLE for the target', () => {
  const run = { ...RUN, requested: '@collection', expression: '(@collection) and not @stateful' };
  const result = verdictOf([scenario('a', 'not run', ['COL-A'], { tags: ['@collection', '@stateful', '@req:COL-A'] })], run);
  assert.equal(result.verdict, 'NOT APPLICABLE');
  assert.equal(
    result.explanation,
    'Left out for this target: its scenarios are outside the run\'s selection "(@collection) and not @stateful".',
  );
});

test('a requirement whose scenarios skipped themselves is NOT APPLICABLE with their reason', () => {
  const result = verdictOf([scenario('expiry', 'skipped', ['COL-A'], { reason: 'tokens live 3600 s, longer than this run waits' })]);
  assert.equal(result.verdict, 'NOT APPLICABLE');
  assert.equal(result.explanation, '1 of 1 scenario skipped. expiry: tokens live 3600 s, longer than this run waits');
});

test('a requirement with one scenario passed and another left out is PASS, and says how many did not run', () => {
  const result = verdictOf([scenario('a', 'passed', ['COL-A']), scenario('b', 'not run', ['COL-A'])]);
  assert.equal(result.verdict, 'PASS');
  assert.equal(result.explanation, '1 of 2 scenarios passed; 1 did not run.');
});

test('a scenario that verifies several requirements counts for each of them', () => {
  const both = scenario('both', 'failed', ['COL-A', 'COL-B'], { reason: 'wrong' });
  const { requirements } = certify([requirement('COL-A'), requirement('COL-B')], [both], [], RUN);
  assert.deepEqual(
    requirements.map((r) => [r.requirement.id, r.verdict, r.scenarios]),
    [
      ['COL-A', 'FAIL', ['pickle-both']],
      ['COL-B', 'FAIL', ['pickle-both']],
    ],
  );
});

test('an unprovokable requirement is listed as such with why, whatever the scenarios', () => {
  const unprovokable = requirement('ERR-RATE', { verification: 'unprovokable', why: 'the rate limit thresholds are not shown (§8)' });
  const [result] = certify([unprovokable], [scenario('flood', 'failed', ['ERR-RATE'])], [], RUN).requirements;
  assert.equal(result?.verdict, 'UNPROVOKABLE');
  assert.equal(result?.explanation, 'No client can provoke it: the rate limit thresholds are not shown (§8)');
});

test('a requirement bent by a difference of the active profile passes as WARN, naming and explaining the difference', () => {
  const [id] = DIFFERENCE_REQUIREMENTS.tokenFailureStatus;
  assert.ok(id, 'tokenFailureStatus names a requirement');
  const passed = [scenario('wrong key', 'passed', [id])];
  const warned = verdictOf(passed, { ...RUN, profile: 'mtn-sandbox' }, id);
  assert.equal(warned.verdict, 'WARN');
  assert.deepEqual(warned.deviations, ['tokenFailureStatus']);
  assert.match(
    warned.explanation,
    /only because the mtn-sandbox profile accepts a documented deviation from the spec\. tokenFailureStatus: A failed token request .* answers 500/,
  );
  assert.equal(verdictOf(passed, RUN, id).verdict, 'PASS', 'the spec profile accepts no deviation');
  assert.equal(
    verdictOf([scenario('wrong key', 'failed', [id])], { ...RUN, profile: 'mtn-sandbox' }, id).verdict,
    'FAIL',
    'a deviation excuses no failure',
  );
});

test('every requirement a profile difference names is in the catalogue', () => {
  const ids = new Set(loadRequirements().map((r) => r.id));
  for (const [name, linked] of Object.entries(DIFFERENCE_REQUIREMENTS)) {
    for (const id of linked) assert.ok(ids.has(id), `DIFFERENCE_REQUIREMENTS.${name} names ${id}, which is not in the catalogue`);
  }
});

test('a valid waiver turns a FAIL into WAIVED, and the run whose only failure it waived conforms', () => {
  const scenarios = [scenario('dup', 'failed', ['COL-A'], { reason: 'expected 409' }), scenario('ok', 'passed', ['COL-B'])];
  const certification = certify([requirement('COL-A'), requirement('COL-B')], scenarios, [waiver('COL-A')], RUN);
  const [waived] = certification.requirements;
  assert.equal(waived?.verdict, 'WAIVED');
  assert.equal(
    waived?.explanation,
    'Waived until 2026-03-31 by payments team: fixed in release 2.4 (TICKET-12). 1 of 1 scenario failed. dup: expected 409',
  );
  assert.deepEqual(
    certification.waivers.map((w) => w.status),
    ['applied'],
  );
  assert.deepEqual(certification.problems, []);
  assert.equal(exitCodeOf(summaryOf(scenarios, 1), certification), 0);
});

test('a waiver holds through its expiry day', () => {
  const certification = certify([requirement('COL-A')], [scenario('dup', 'failed', ['COL-A'])], [waiver('COL-A', '2026-03-10')], RUN);
  assert.equal(certification.requirements[0]?.verdict, 'WAIVED');
});

test('an expired waiver waives nothing: the requirement FAILS, and the run fails naming the waiver', () => {
  const scenarios = [scenario('dup', 'failed', ['COL-A'], { reason: 'expected 409' })];
  const certification = certify([requirement('COL-A')], scenarios, [waiver('COL-A', '2026-03-09')], RUN);
  assert.equal(certification.requirements[0]?.verdict, 'FAIL');
  assert.equal(
    certification.requirements[0]?.explanation,
    'The waiver of payments team expired on 2026-03-09. 1 of 1 scenario failed. dup: expected 409',
  );
  assert.deepEqual(
    certification.waivers.map((w) => w.status),
    ['expired'],
  );
  assert.deepEqual(certification.problems, [
    'The waiver of COL-A (owner payments team) expired on 2026-03-09: fix the failure, or renew the waiver with a new expiry date.',
  ]);
  assert.equal(exitCodeOf(summaryOf(scenarios, 1), certification), 1);
});

test('an expired waiver fails the run even when its requirement now passes', () => {
  const scenarios = [scenario('dup', 'passed', ['COL-A'])];
  const certification = certify([requirement('COL-A')], scenarios, [waiver('COL-A', '2026-01-01')], RUN);
  assert.deepEqual(
    certification.waivers.map((w) => w.status),
    ['expired'],
  );
  assert.equal(exitCodeOf(summaryOf(scenarios, 0), certification), 1);
});

test('an unused waiver (its requirement was checked and passed) fails the run with a message saying to remove it', () => {
  const scenarios = [scenario('dup', 'passed', ['COL-A'])];
  const certification = certify([requirement('COL-A')], scenarios, [waiver('COL-A')], RUN);
  assert.equal(certification.requirements[0]?.verdict, 'PASS');
  assert.deepEqual(
    certification.waivers.map((w) => w.status),
    ['unused'],
  );
  assert.deepEqual(certification.problems, [
    'The waiver of COL-A (owner payments team) waived nothing: the requirement was checked and is PASS. Remove the waiver.',
  ]);
  assert.equal(exitCodeOf(summaryOf(scenarios, 0), certification), 1);
});

test('a waiver whose requirement this run did not check is kept, not counted as unused', () => {
  const scenarios = [scenario('dup', 'not run', ['COL-A']), scenario('ok', 'passed', ['COL-B'])];
  const certification = certify([requirement('COL-A'), requirement('COL-B')], scenarios, [waiver('COL-A')], {
    ...RUN,
    requested: '@smoke',
  });
  assert.deepEqual(
    certification.waivers.map((w) => w.status),
    ['not in this run'],
  );
  assert.deepEqual(certification.problems, []);
  assert.equal(exitCodeOf(summaryOf(scenarios, 0), certification), 0);
});

test('a failed scenario still fails the run when one of its requirements is not waived, or it names none', () => {
  const partly = [scenario('both', 'failed', ['COL-A', 'COL-B'])];
  const certification = certify([requirement('COL-A'), requirement('COL-B')], partly, [waiver('COL-A')], RUN);
  assert.deepEqual(
    certification.requirements.map((r) => r.verdict),
    ['WAIVED', 'FAIL'],
  );
  assert.equal(exitCodeOf(summaryOf(partly, 1), certification), 1);

  const untagged = [scenario('waived', 'failed', ['COL-A']), scenario('untagged', 'failed', [])];
  assert.equal(exitCodeOf(summaryOf(untagged, 1), certify([requirement('COL-A')], untagged, [waiver('COL-A')], RUN)), 1);
});

test('with its failures waived, a run that could not test the rest is still exit 2, never a pass', () => {
  const scenarios = [scenario('dup', 'failed', ['COL-A']), scenario('down', 'not tested', ['COL-B'])];
  const certification = certify([requirement('COL-A'), requirement('COL-B')], scenarios, [waiver('COL-A')], RUN);
  assert.equal(exitCodeOf(summaryOf(scenarios, 1), certification), 2);
});

test("without waivers the exit code is the scenarios' own", () => {
  const scenarios = [scenario('ok', 'passed', ['COL-A'])];
  for (const code of [0, 1, 2] as const)
    assert.equal(exitCodeOf(summaryOf(scenarios, code), certify([requirement('COL-A')], scenarios, [], RUN)), code);
});

test('coverage counts requirements covered per product and per spec operation, unprovokable ones apart', () => {
  const requirements = [
    requirement('COL-RTP', { operations: ['requestToPay', 'getRequestToPayStatus'] }),
    requirement('DIS-DEP', { products: ['disbursement'], operations: ['deposit'] }),
    requirement('PROV-USER', { products: ['provisioning'], operations: ['createApiUser'] }),
    requirement('COL-RATE', { verification: 'unprovokable', why: 'not shown' }),
  ];
  const scenarios = [
    scenario('rtp', 'passed', ['COL-RTP']),
    scenario('dep', 'not run', ['DIS-DEP']),
    scenario('user', 'failed', ['PROV-USER']),
  ];
  const coverage = coverageOf(certify(requirements, scenarios, [], { ...RUN, requested: '@collection or @provisioning' }).requirements);
  assert.equal(coverage.total.requirements, 3);
  assert.equal(coverage.total.covered, 2);
  assert.equal(coverage.total.unprovokable, 1);
  assert.deepEqual(
    { ...coverage.total.verdicts },
    { PASS: 1, FAIL: 1, FLAKY: 0, WARN: 0, WAIVED: 0, 'NOT TESTED': 0, 'NOT APPLICABLE': 1, UNPROVOKABLE: 0 },
  );
  assert.deepEqual(
    coverage.products.map((p) => [p.product, p.covered, p.requirements]),
    [
      ['collection', 1, 1],
      ['disbursement', 0, 1],
      ['provisioning', 1, 1],
    ],
  );
  assert.equal(coverage.operations.length, 19);
  const covered = coverage.operations.filter((o) => o.covered > 0).map((o) => o.key);
  assert.deepEqual(covered, ['4.2 #2', '4.5 #14', '4.6 request to pay']);
  assert.equal(coverage.operationsCovered, 3);
  assert.deepEqual(coverage.operations.find((o) => o.key === '4.3 #10')?.requirements, ['DIS-DEP']);
});

test('a strict reading left out of a run without --strict is NOT APPLICABLE, saying --strict checks it', () => {
  const strict = requirement('AMOUNT-RULE', { reading: 'amountValue' });
  const run = { ...RUN, expression: 'not @strict' };
  const [result] = certify(
    [strict],
    [scenario('zero', 'not run', ['AMOUNT-RULE'], { tags: ['@strict', '@req:AMOUNT-RULE'] })],
    [],
    run,
  ).requirements;
  assert.equal(result!.verdict, 'NOT APPLICABLE');
  assert.match(result!.explanation, /strict reading \(amountValue\).*--strict/);
});

test('an operation beyond the spec left out for a remote target is NOT APPLICABLE, never FAIL, saying how to ask for it', () => {
  const beyond = requirement('BEY-X', {
    scope: 'beyond-spec',
    source: "the provider's definition",
    section: 'beyond the spec: docs/beyond-spec.md §1',
  });
  const run = { ...RUN, expression: 'not @beyond-spec and not @stateful' };
  const [result] = certify(
    [beyond],
    [scenario('transfer', 'not run', ['BEY-X'], { tags: ['@beyond-spec', '@req:BEY-X'] })],
    [],
    run,
  ).requirements;
  assert.equal(result!.verdict, 'NOT APPLICABLE');
  assert.match(result!.explanation, /beyond the spec.*--tags @beyond-spec/);
});

test('the coverage of the spec leaves out the strict readings and the operations beyond the spec, which are counted apart', () => {
  const requirements = [
    requirement('COL-RTP'),
    requirement('AMOUNT-RULE', { reading: 'amountValue' }),
    requirement('BEY-X', { scope: 'beyond-spec', source: 's', section: 'beyond the spec: docs/beyond-spec.md §1' }),
    requirement('BEY-Y', { scope: 'beyond-spec', source: 's', section: 'beyond the spec: docs/beyond-spec.md §2' }),
  ];
  const scenarios = [
    scenario('rtp', 'passed', ['COL-RTP']),
    scenario('zero', 'not run', ['AMOUNT-RULE'], { tags: ['@strict', '@req:AMOUNT-RULE'] }),
    scenario('x', 'passed', ['BEY-X'], { tags: ['@beyond-spec', '@req:BEY-X'] }),
    scenario('y', 'failed', ['BEY-Y'], { tags: ['@beyond-spec', '@req:BEY-Y'] }),
  ];
  const coverage = coverageOf(certify(requirements, scenarios, [], { ...RUN, expression: 'not @strict' }).requirements);
  assert.equal(coverage.total.requirements, 1);
  assert.equal(coverage.total.covered, 1);
  const apart = Object.fromEntries(
    coverage.apart.map((g) => [g.group, [g.covered, g.requirements, g.verdicts.PASS, g.verdicts.FAIL, g.verdicts['NOT APPLICABLE']]]),
  );
  assert.deepEqual(apart, { 'strict reading': [0, 1, 0, 0, 1], 'beyond the spec': [2, 2, 1, 1, 0] });
});
