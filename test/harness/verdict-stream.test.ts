import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Envelope, TestStepResult } from '@cucumber/messages';
import {
  NAMED_IN_BLOCK,
  ScenarioLedger,
  availabilityLines,
  sharedCauses,
  type RunSummary,
} from '../../conformance/results/verdict-stream.ts';
import { failureLine } from '../../harness/checks/check.ts';
import { finding } from '../../harness/checks/index.ts';

type Status = TestStepResult['status'];
const TS = { seconds: 0, nanos: 0 };
const URI = 'features/collection/request-to-pay.feature';

/** A feature file with scenarios at the given lines, one of them an outline with example rows. */
function gherkinDocument(
  uri: string,
  featureName: string,
  scenarios: { id: string; line: number; rows?: { id: string; line: number }[] }[],
): Envelope {
  return {
    gherkinDocument: {
      uri,
      comments: [],
      feature: {
        location: { line: 1 },
        tags: [],
        language: 'en',
        keyword: 'Feature',
        name: featureName,
        description: '',
        children: scenarios.map((s) => ({
          scenario: {
            location: { line: s.line },
            tags: [],
            keyword: 'Scenario',
            name: s.id,
            description: '',
            steps: [],
            examples: s.rows
              ? [
                  {
                    location: { line: s.line + 2 },
                    tags: [],
                    keyword: 'Examples',
                    name: '',
                    description: '',
                    tableBody: s.rows.map((r) => ({ location: { line: r.line }, cells: [], id: r.id })),
                    id: `${s.id}-examples`,
                  },
                ]
              : [],
            id: s.id,
          },
        })),
      },
    },
  } as Envelope;
}

function pickle(id: string, name: string, astNodeIds: string[], uri = URI, tags: string[] = []): Envelope {
  return {
    pickle: { id, uri, name, language: 'en', steps: [], tags: tags.map((t) => ({ name: t, astNodeId: 'tag' })), astNodeIds },
  } as Envelope;
}

const testCase = (id: string, pickleId: string): Envelope => ({ testCase: { id, pickleId, testSteps: [] } }) as Envelope;
const started = (id: string, testCaseId: string, attempt = 0): Envelope =>
  ({ testCaseStarted: { id, testCaseId, attempt, timestamp: TS } }) as Envelope;
const finished = (testCaseStartedId: string, willBeRetried = false): Envelope =>
  ({ testCaseFinished: { testCaseStartedId, willBeRetried, timestamp: TS } }) as Envelope;

function step(testCaseStartedId: string, status: Status, exception?: { type: string; message?: string }, message?: string): Envelope {
  const testStepResult = {
    status,
    duration: { seconds: 0, nanos: 0 },
    ...(exception ? { exception } : {}),
    ...(message ? { message } : {}),
  } as TestStepResult;
  return { testStepFinished: { testCaseStartedId, testStepId: `${testCaseStartedId}-step`, testStepResult, timestamp: TS } } as Envelope;
}

/** A ledger that has seen the feature, with scenarios named s1..sN on lines 10, 20, ...; returns it and what it logged. */
function ledgerWith(count: number) {
  const logged: string[] = [];
  const ledger = new ScenarioLedger((line) => logged.push(line));
  const scenarios = Array.from({ length: count }, (_, i) => ({ id: `s${i + 1}`, line: 10 * (i + 1) }));
  ledger.record(gherkinDocument(URI, 'Request to pay', scenarios));
  for (const s of scenarios) {
    ledger.record(pickle(`p-${s.id}`, `scenario ${s.id}`, [s.id], URI, ['@collection']));
    ledger.record(testCase(`tc-${s.id}`, `p-${s.id}`));
  }
  return { ledger, logged };
}

/** Runs one attempt of scenario sN with the given step results. */
function run(ledger: ScenarioLedger, scenario: string, attemptId: string, steps: Envelope[], willBeRetried = false): void {
  ledger.record(started(attemptId, `tc-${scenario}`));
  for (const s of steps) ledger.record(s);
  ledger.record(finished(attemptId, willBeRetried));
}

const RUN = { target: 'http://127.0.0.1:1', profile: 'spec', tags: '', durationMs: 1234 };

test('all steps PASSED: passed, exit code 0, and a conforming verdict', () => {
  const { ledger, logged } = ledgerWith(2);
  run(ledger, 's1', 'a1', [step('a1', 'PASSED' as Status), step('a1', 'PASSED' as Status)]);
  run(ledger, 's2', 'a2', [step('a2', 'PASSED' as Status)]);
  const summary = ledger.summary(RUN);
  assert.equal(summary.exitCode, 0);
  assert.deepEqual(summary.totals, { passed: 2, failed: 0, 'not tested': 0, skipped: 0, flaky: 0 });
  const first = summary.scenarios[0]!;
  assert.equal(first.verdict, 'passed');
  assert.equal(first.feature, 'Request to pay');
  assert.equal(first.scenario, 'scenario s1');
  assert.equal(first.uri, URI);
  assert.equal(first.line, 10);
  assert.deepEqual(first.tags, ['@collection']);
  assert.equal(first.reason, undefined);
  assert.deepEqual(logged, ['  ✔ Request to pay › scenario s1', '  ✔ Request to pay › scenario s2']);
  const lines = ledger.closingLines(summary);
  assert.equal(
    lines.some((l) => l.startsWith('FAILED') || l.startsWith('NOT TESTED')),
    false,
  );
  assert.ok(lines.includes('2 scenarios: 2 passed, 0 failed, 0 not tested, 0 skipped in 1.2 s'), lines.join('\n'));
  assert.equal(lines.at(-1), 'Verdict: the target conforms to the scenarios run.');
});

test('a FAILED step with a ConformanceFailure: failed, with its message as the reason; exit code 1', () => {
  const { ledger, logged } = ledgerWith(2);
  const reason = 'request to pay (collection) — §4.2 #2\n  expected: HTTP 202\n  received: HTTP 500';
  run(ledger, 's1', 'a1', [
    step('a1', 'PASSED' as Status),
    step('a1', 'FAILED' as Status, { type: 'ConformanceFailure', message: reason }),
    step('a1', 'SKIPPED' as Status),
  ]);
  run(ledger, 's2', 'a2', [step('a2', 'PASSED' as Status)]);
  const summary = ledger.summary(RUN);
  assert.equal(summary.exitCode, 1);
  const failed = summary.scenarios[0]!;
  assert.equal(failed.verdict, 'failed');
  assert.equal(failed.reason, reason);
  assert.equal(logged[0], '  ✘ Request to pay › scenario s1 (failed)');
  const lines = ledger.closingLines(summary);
  assert.ok(lines.includes(`FAILED: Request to pay › scenario s1 (${URI}:10)`), lines.join('\n'));
  assert.ok(lines.includes('    request to pay (collection) — §4.2 #2'), lines.join('\n'));
  assert.ok(lines.includes('      expected: HTTP 202'), lines.join('\n'));
  assert.equal(lines.at(-1), 'Verdict: the target does NOT conform (see the failures above).');
});

test("a FAILED step of another error type is the harness's fault: not tested, never blamed on the target", () => {
  const { ledger } = ledgerWith(1);
  run(ledger, 's1', 'a1', [step('a1', 'FAILED' as Status, { type: 'TypeError', message: 'Cannot read properties of undefined' })]);
  const summary = ledger.summary(RUN);
  assert.equal(summary.scenarios[0]!.verdict, 'not tested');
  assert.equal(summary.scenarios[0]!.reason, 'the harness could not run this scenario (TypeError): Cannot read properties of undefined');
  assert.equal(summary.exitCode, 2);
});

test("a state the target did not reach in time is its check's finding: failed when the check weighs as a failure, not tested where the spec gives no time", () => {
  const { ledger } = ledgerWith(3);
  run(ledger, 's1', 'a1', [
    step('a1', 'FAILED' as Status, {
      type: 'ConformanceFailure',
      message: '✘ transaction-outcome (observed: …): expected the payment reaching a final status within 10000 ms, got status PENDING',
    }),
  ]);
  run(ledger, 's2', 'a2', [
    step('a2', 'FAILED' as Status, {
      type: 'NotObservable',
      message: 'the payment reaching a final status within 10000 ms; raise MOMO_POLL_TIMEOUT_MS',
    }),
  ]);
  // A bare deadline is the harness's own wait: never blamed on the target.
  run(ledger, 's3', 'a3', [
    step('a3', 'FAILED' as Status, { type: 'DeadlineExceededError', message: 'a call each second: not reached within 10000 ms' }),
  ]);
  assert.deepEqual(
    ledger.summary(RUN).scenarios.map((s) => s.verdict),
    ['failed', 'not tested', 'not tested'],
  );
});

test('a target that says it is unavailable (503) where something else was expected: not tested', () => {
  const { ledger } = ledgerWith(1);
  run(ledger, 's1', 'a1', [
    step('a1', 'FAILED' as Status, { type: 'TargetUnavailableAnswer', message: 'deposit (disbursement): the target answered HTTP 503' }),
  ]);
  assert.equal(ledger.summary(RUN).scenarios[0]!.verdict, 'not tested');
});

test('a TargetUnavailableError: not tested, never a pass; exit code 2', () => {
  const { ledger, logged } = ledgerWith(2);
  run(ledger, 's1', 'a1', [
    step('a1', 'FAILED' as Status, {
      type: 'TargetUnavailableError',
      message: 'request to pay (collection): the target did not answer http://x: ECONNREFUSED',
    }),
  ]);
  run(ledger, 's2', 'a2', [step('a2', 'PASSED' as Status)]);
  const summary = ledger.summary(RUN);
  assert.equal(summary.scenarios[0]!.verdict, 'not tested');
  assert.match(summary.scenarios[0]!.reason ?? '', /ECONNREFUSED/);
  assert.deepEqual(summary.totals, { passed: 1, failed: 0, 'not tested': 1, skipped: 0, flaky: 0 });
  assert.equal(summary.exitCode, 2);
  assert.equal(logged[0], '  ? Request to pay › scenario s1 (not tested)');
  const lines = ledger.closingLines(summary);
  assert.ok(lines.includes(`NOT TESTED: Request to pay › scenario s1 (${URI}:10)`), lines.join('\n'));
  assert.ok(
    lines.some((l) => l.includes('ECONNREFUSED')),
    lines.join('\n'),
  );
  assert.equal(lines.at(-1), 'Verdict: the run could NOT test the target fully (see "not tested" above); this is not a pass.');
});

test('an UNDEFINED (or PENDING, AMBIGUOUS) step: not tested, saying the harness could not run it', () => {
  const { ledger } = ledgerWith(3);
  run(ledger, 's1', 'a1', [step('a1', 'PASSED' as Status), step('a1', 'UNDEFINED' as Status), step('a1', 'SKIPPED' as Status)]);
  run(ledger, 's2', 'a2', [step('a2', 'PENDING' as Status)]);
  run(ledger, 's3', 'a3', [step('a3', 'AMBIGUOUS' as Status, undefined, 'two step definitions match')]);
  const summary = ledger.summary(RUN);
  assert.deepEqual(
    summary.scenarios.map((s) => s.verdict),
    ['not tested', 'not tested', 'not tested'],
  );
  assert.equal(summary.scenarios[0]!.reason, 'the harness could not run this scenario: step undefined');
  assert.equal(summary.scenarios[1]!.reason, 'the harness could not run this scenario: step pending');
  assert.equal(summary.exitCode, 2);
});

test('a failed and a not-tested scenario together: exit code 1', () => {
  const { ledger } = ledgerWith(2);
  run(ledger, 's1', 'a1', [step('a1', 'FAILED' as Status, { type: 'ConformanceFailure', message: 'x' })]);
  run(ledger, 's2', 'a2', [step('a2', 'FAILED' as Status, { type: 'TargetUnavailableError', message: 'y' })]);
  const summary = ledger.summary(RUN);
  assert.equal(summary.exitCode, 1);
  const lines = ledger.closingLines(summary);
  assert.ok(lines.includes(`FAILED: Request to pay › scenario s1 (${URI}:10)`));
  assert.ok(lines.includes(`NOT TESTED: Request to pay › scenario s2 (${URI}:20)`));
  assert.ok(lines.includes('2 scenarios: 0 passed, 1 failed, 1 not tested, 0 skipped in 1.2 s'));
});

test('a scenario that fails and passes when run again is flaky: counted apart, never passed, not failing the run', () => {
  const { ledger, logged } = ledgerWith(2);
  run(
    ledger,
    's1',
    'a1',
    [step('a1', 'FAILED' as Status, { type: 'ConformanceFailure', message: 'expected: HTTP 202\nreceived: HTTP 500' })],
    true,
  );
  assert.deepEqual(logged, [], 'an attempt that will be retried is not announced');
  assert.equal(ledger.summary(RUN).scenarios.length, 0);
  run(ledger, 's1', 'a2', [step('a2', 'PASSED' as Status)]);
  run(ledger, 's2', 'a3', [step('a3', 'PASSED' as Status)]);
  const summary = ledger.summary(RUN);
  assert.equal(summary.scenarios.length, 2);
  const [flaky] = summary.scenarios;
  assert.equal(flaky!.verdict, 'flaky');
  assert.equal(flaky!.reason, 'expected: HTTP 202\nreceived: HTTP 500', "the first attempt's failure is the reason");
  assert.deepEqual(flaky!.earlierAttempts, [{ verdict: 'failed', reason: 'expected: HTTP 202\nreceived: HTTP 500' }]);
  assert.deepEqual(summary.totals, { passed: 1, failed: 0, 'not tested': 0, skipped: 0, flaky: 1 });
  assert.equal(summary.exitCode, 0);
  const closing = ledger.closingLines(summary).join('\n');
  assert.match(
    closing,
    /FLAKY: Request to pay › scenario s1 \(features\/collection\/request-to-pay.feature:10\), passed on attempt 2; the first failed:\n {4}expected: HTTP 202/,
  );
  assert.match(closing, /2 scenarios: 1 passed, 0 failed, 1 flaky \(passed only when run again/);
});

test('a scenario that fails on every attempt is failed, with each earlier attempt kept', () => {
  const { ledger } = ledgerWith(1);
  run(ledger, 's1', 'a1', [step('a1', 'FAILED' as Status, { type: 'ConformanceFailure', message: 'first' })], true);
  run(ledger, 's1', 'a2', [step('a2', 'FAILED' as Status, { type: 'ConformanceFailure', message: 'second' })]);
  const summary = ledger.summary(RUN);
  assert.equal(summary.scenarios[0]!.verdict, 'failed');
  assert.equal(summary.scenarios[0]!.reason, 'second');
  assert.deepEqual(summary.scenarios[0]!.earlierAttempts, [{ verdict: 'failed', reason: 'first' }]);
  assert.equal(summary.exitCode, 1);
});

test('interleaved attempts (parallel workers) are kept apart', () => {
  const { ledger } = ledgerWith(2);
  ledger.record(started('a1', 'tc-s1'));
  ledger.record(started('a2', 'tc-s2'));
  ledger.record(step('a2', 'FAILED' as Status, { type: 'ConformanceFailure', message: 'second fails' }));
  ledger.record(step('a1', 'PASSED' as Status));
  ledger.record(finished('a2'));
  ledger.record(finished('a1'));
  const summary = ledger.summary(RUN);
  const byName = Object.fromEntries(summary.scenarios.map((s) => [s.scenario, s.verdict]));
  assert.deepEqual(byName, { 'scenario s1': 'passed', 'scenario s2': 'failed' });
});

test('no scenarios: exit code 2 and "nothing was tested"', () => {
  const ledger = new ScenarioLedger(() => {});
  const summary: RunSummary = ledger.summary(RUN);
  assert.equal(summary.exitCode, 2);
  assert.deepEqual(summary.totals, { passed: 0, failed: 0, 'not tested': 0, skipped: 0, flaky: 0 });
  const lines = ledger.closingLines(summary);
  assert.ok(lines.includes('0 scenarios: 0 passed, 0 failed, 0 not tested, 0 skipped in 1.2 s'));
  assert.equal(lines.at(-1), 'Verdict: nothing was tested (no scenario matched).');
});

test('only skipped scenarios: not a pass (exit code 2)', () => {
  const { ledger } = ledgerWith(1);
  run(ledger, 's1', 'a1', [step('a1', 'SKIPPED' as Status)]);
  const summary = ledger.summary(RUN);
  assert.equal(summary.scenarios[0]!.verdict, 'skipped');
  assert.equal(summary.exitCode, 2);
});

test('an outline row is reported at the line of its example row', () => {
  const logged: string[] = [];
  const ledger = new ScenarioLedger((l) => logged.push(l));
  ledger.record(
    gherkinDocument(URI, 'Request to pay', [
      {
        id: 'outline',
        line: 30,
        rows: [
          { id: 'row-1', line: 34 },
          { id: 'row-2', line: 35 },
        ],
      },
    ]),
  );
  ledger.record(pickle('p-row-2', 'outline row 2', ['outline', 'row-2']));
  ledger.record(testCase('tc-row-2', 'p-row-2'));
  ledger.record(started('a1', 'tc-row-2'));
  ledger.record(step('a1', 'FAILED' as Status, { type: 'ConformanceFailure', message: 'bad amount accepted' }));
  ledger.record(finished('a1'));
  const summary = ledger.summary(RUN);
  assert.equal(summary.scenarios[0]!.line, 35);
  assert.ok(ledger.closingLines(summary).includes(`FAILED: Request to pay › outline row 2 (${URI}:35)`));
});

test('a target unreachable before the run: TargetUnreachableError is not tested, and the shared reason is said once', () => {
  const { ledger } = ledgerWith(3);
  const down = 'The target at http://127.0.0.1:1 could not be tested: connection refused';
  run(ledger, 's1', 'a1', [
    step('a1', 'FAILED' as Status, { type: 'TargetUnreachableError', message: down }),
    step('a1', 'SKIPPED' as Status),
  ]);
  run(ledger, 's2', 'a2', [step('a2', 'FAILED' as Status, { type: 'TargetUnreachableError', message: down })]);
  run(ledger, 's3', 'a3', [step('a3', 'FAILED' as Status, { type: 'TargetUnavailableAnswer', message: 'answered HTTP 503' })]);
  const summary = ledger.summary(RUN);
  assert.deepEqual(
    summary.scenarios.map((s) => [s.verdict, s.reason]),
    [
      ['not tested', down],
      ['not tested', down],
      ['not tested', 'answered HTTP 503'],
    ],
  );
  assert.equal(summary.exitCode, 2);
  const lines = ledger.closingLines(summary);
  assert.deepEqual(lines.slice(1, 9), [
    'NOT TESTED (2 scenarios), each for this reason:',
    `    ${down}`,
    `  - Request to pay › scenario s1 (${URI}:10)`,
    `  - Request to pay › scenario s2 (${URI}:20)`,
    '',
    `NOT TESTED: Request to pay › scenario s3 (${URI}:30)`,
    '    answered HTTP 503',
    '',
  ]);
});

test('a cause shared by many scenarios is said once with their count; the first few are named, and how many more', () => {
  const count = 200;
  const { ledger, logged } = ledgerWith(count);
  const down = 'The target at http://127.0.0.1:9 could not be tested: connection refused';
  for (let i = 1; i <= count; i++)
    run(ledger, `s${i}`, `a${i}`, [step(`a${i}`, 'FAILED' as Status, { type: 'TargetUnreachableError', message: down })]);
  const lines = ledger.closingLines(ledger.summary(RUN));
  assert.deepEqual(lines.slice(0, 10), [
    '',
    `NOT TESTED (${count} scenarios), each for this reason:`,
    `    ${down}`,
    ...[1, 2, 3, 4, 5].map((i) => `  - Request to pay › scenario s${i} (${URI}:${10 * i})`),
    `  - and ${count - NAMED_IN_BLOCK} more (summary.json lists every one)`,
    '',
  ]);
  assert.equal(lines.filter((l) => l.includes(down)).length, 1, 'the cause is said once');
  assert.ok(lines.length < 20, lines.join('\n'));
  // The progress lines name each scenario as it ends (the run silences them when the probe found the target down).
  assert.equal(logged.length, count);
});

test('a block one longer than the names shown names them all, rather than "and 1 more"', () => {
  const { ledger } = ledgerWith(NAMED_IN_BLOCK + 1);
  for (let i = 1; i <= NAMED_IN_BLOCK + 1; i++)
    run(ledger, `s${i}`, `a${i}`, [step(`a${i}`, 'FAILED' as Status, { type: 'ConformanceFailure', message: 'same' })]);
  const lines = ledger.closingLines(ledger.summary(RUN));
  assert.equal(lines[1], `FAILED (${NAMED_IN_BLOCK + 1} scenarios), each for this reason:`);
  assert.equal(lines.filter((l) => l.startsWith('  - Request to pay')).length, NAMED_IN_BLOCK + 1);
  assert.ok(!lines.some((l) => l.includes('more (summary.json')));
});

test('failures that share one cause are led by it, once, with the requirements it touched; a cause of one failure is not', () => {
  const { ledger } = ledgerWith(4);
  const refused = (operation: string) =>
    [
      `${operation} — §4.2 #2: the request is accepted`,
      failureLine(finding('status-code', { field: 'status', expected: '202', received: '401' }), { profile: 'spec', strict: false }),
      '  received: HTTP 401 {"error":"invalid_token"}',
    ].join('\n');
  const ids = ['s1', 's2', 's3'];
  for (const id of ids)
    run(ledger, id, `a-${id}`, [step(`a-${id}`, 'FAILED' as Status, { type: 'ConformanceFailure', message: refused(`call of ${id}`) })]);
  const other = `x — §4.6: y\n${failureLine(finding('status-code', { field: 'status', expected: '200', received: '500' }), { profile: 'spec', strict: false })}`;
  run(ledger, 's4', 'a-s4', [step('a-s4', 'FAILED' as Status, { type: 'ConformanceFailure', message: other })]);
  const summary = ledger.summary(RUN);
  const lines = ledger.closingLines(summary);
  const start = lines.indexOf('CAUSES shared by several failures (each once; the failures follow):');
  assert.ok(start >= 0, lines.join('\n'));
  assert.match(
    lines[start + 1]!,
    /^ {2}✘ status-code \(status\): HTTP 401 invalid_token: 3 scenarios failed on it, touching \d+ requirements?/,
  );
  assert.ok(!lines.slice(start + 1, start + 3).some((l) => l.includes('HTTP 500')), 'a cause of one failure is not a shared one');
  assert.equal(sharedCauses(summary.scenarios).length, 1);
});

test('a run that made calls again says so per operation, apart from the verdict', () => {
  assert.deepEqual(availabilityLines({ availability: [] }), []);
  assert.deepEqual(
    availabilityLines({
      availability: [
        {
          operation: 'request to pay (collection)',
          calls: 40,
          retried: 2,
          outcomes: { answered: 1, 'created-earlier': 1 },
          met: { '503': 1, 'no answer': 1 },
        },
        { operation: 'get balance (collection)', calls: 3, retried: 0, outcomes: {}, met: {} },
      ],
    }),
    [
      'AVAILABILITY (2 calls made again; they do not change the verdict):',
      '  ~ request to pay (collection): 2 of 40 calls made again; met 503 ×1, no answer ×1; answered ×1, created-earlier ×1',
      '',
    ],
  );
});
