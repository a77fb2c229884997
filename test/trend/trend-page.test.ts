import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { HistoryRecord } from '../../conformance/trend/history.ts';
import { namedRuns, niceTicks } from '../../conformance/trend/chart.ts';
import { renderTrend, runNames } from '../../conformance/trend/page.ts';
import { record } from './fixtures.ts';

const RTP = 'request to pay (collection)';
const BALANCE = 'features/remittance.feature › A partner reads its remittance balance';
const TOKEN = 'features/tokens.feature › The collection product issues an access token';
const REFUND = 'features/disbursement.feature › A partner refunds a payment';

const page = (...records: HistoryRecord[]) => renderTrend({ records, corrupt: [] }, 'history.ndjson');
/** One section of the page, by its id: what a reader sees under one heading. */
const section = (html: string, id: string) =>
  html.match(new RegExp(`<section id="${id}"[^>]*>[\\s\\S]*?</section>`))?.[0] ?? assert.fail(`no section ${id}`);
/** The page's text without its tags, spaces folded: what a reader reads. */
const words = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

test('a run is named by its date and time in UTC; two runs of one day, minute or second read apart', () => {
  const at = [
    '2026-11-25T02:00:00.000Z',
    '2026-11-25T14:03:10.000Z',
    '2026-11-25T14:03:40.000Z',
    '2026-11-26T09:15:00.000Z',
    '2026-11-26T09:15:00.500Z',
    '2026-11-26T11:00:00+02:00',
  ];
  assert.deepEqual(runNames(at.map((a) => record(a, {}, {}))), [
    '2026-11-25 02:00',
    '2026-11-25 14:03:10',
    '2026-11-25 14:03:40',
    '2026-11-26 09:15:00 #1',
    '2026-11-26 09:15:00 #2',
    '2026-11-26 09:00',
  ]);

  const html = page(
    record('2026-11-25T02:00:00.000Z', { 'COL-A': 'PASS' }, { [RTP]: { count: 40, p50: 12, p95: 30 } }),
    record('2026-11-25T14:03:00.000Z', { 'COL-A': 'PASS' }, { [RTP]: { count: 40, p50: 13, p95: 31 } }),
  );
  assert.match(html, /Runs are named by the date and time they ended, in UTC\./);
  assert.equal(html.match(/UTC/g)?.length, 1, 'UTC is said once');
  assert.doesNotMatch(html, />11-25</, 'no run is named by its day alone');
  for (const [date, time] of [
    ['2026-11-25', '02:00'],
    ['2026-11-25', '14:03'],
  ]) {
    const name = `${date} ${time}`;
    assert.match(section(html, 'runs'), new RegExp(`<td class="run">${name}</td>`), `the runs table names ${name}`);
    assert.match(section(html, 'requirements'), new RegExp(`<th class="run">${name}</th>`), `the grid's column of ${name}`);
    assert.match(section(html, 'requirements'), new RegExp(`title="${name}: passed"`), `a cell's tooltip names ${name}`);
    assert.match(section(html, 'operations'), new RegExp(`>${date}<tspan [^>]*>${time}</tspan></text>`), `the x axis names ${name}`);
    assert.match(section(html, 'operations'), new RegExp(`<title>${name}: p95 \\d+ ms`), `a point's tooltip names ${name}`);
  }
});

test('the page begins with what changed: scenarios newly failing and newly passing, requirements, the outcome', () => {
  const before = record(
    '2026-11-25T02:00:00.000Z',
    { 'COL-A': 'PASS', 'REM-B': 'FAIL' },
    {},
    { scenarios: { [BALANCE]: 'passed', [TOKEN]: 'failed', [REFUND]: 'passed' } },
  );
  const after = record(
    '2026-11-25T14:03:00.000Z',
    { 'COL-A': 'FAIL', 'REM-B': 'FAIL', 'NEW-C': 'PASS' },
    {},
    {
      scenarios: { [BALANCE]: 'failed', [TOKEN]: 'passed', [REFUND]: 'passed' },
      exitCode: 1,
      outcome: 'does not conform',
      durationMs: 90_000,
      catalogue: '1'.repeat(64),
    },
  );
  const html = page(before, after);
  assert.ok(html.indexOf('<section id="changes">') < html.indexOf('<section id="runs">'), 'what changed comes first');
  const changes = words(section(html, 'changes'));
  assert.match(changes, /The last run, 2026-11-25 14:03 , compared with the run before it, 2026-11-25 02:00\./);
  assert.match(changes, /The operation catalogue changed between the two runs \(another version of the harness\)/);
  assert.match(changes, /The outcome changed from conforms \(exit 0\) to does not conform \(exit 1\) ?\./);
  assert.match(changes, new RegExp(`1 scenario newly fails: ${BALANCE} \\(passed before\\)`));
  assert.match(changes, new RegExp(`1 scenario newly passes: ${TOKEN} \\(failed before\\)`));
  assert.match(changes, /1 requirement newly fails: COL-A \(passed before\)/);
  assert.match(changes, /1 requirement appeared \(it was not in the run before\): NEW-C \(passed\)/);
  assert.doesNotMatch(changes, /REM-B|A partner refunds/, 'a verdict that stayed is no change');
  assert.match(changes, /The run took 90\.0 s, 48% longer than the run before \(61\.0 s\)\./);
});

test('a scenario that became not tested, appeared or disappeared is named; a long list is folded', () => {
  const many = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`features/collection.feature › Payment ${i}`, 'passed' as const]));
  const before = record('2026-11-25T02:00:00.000Z', {}, {}, { scenarios: { ...many, [BALANCE]: 'passed', [TOKEN]: 'passed' } });
  const after = record(
    '2026-11-26T02:00:00.000Z',
    {},
    {},
    {
      scenarios: {
        ...Object.fromEntries(Object.keys(many).map((k) => [k, 'not run' as const])),
        [BALANCE]: 'not tested',
        [REFUND]: 'passed',
      },
    },
  );
  const changes = section(page(before, after), 'changes');
  assert.match(
    words(changes),
    new RegExp(`1 scenario could not be tested \\(the target did not answer\\): ${BALANCE} \\(passed before\\)`),
  );
  assert.match(words(changes), new RegExp(`1 scenario appeared \\(it was not in the run before\\): ${REFUND} \\(passed\\)`));
  assert.match(
    words(changes),
    new RegExp(`1 scenario disappeared \\(it was in the run before, not in this one\\): ${TOKEN} \\(passed before\\)`),
  );
  assert.match(
    changes,
    /<details><summary>12 scenarios were not checked this time \(the selection or the kind of target left them out\)<\/summary>/,
  );
});

test('when nothing changed, the page says so; with one run, that there is nothing to compare with', () => {
  const night = (at: string) =>
    record(at, { 'COL-A': 'PASS' }, { [RTP]: { count: 40, p50: 12, p95: 30 } }, { scenarios: { [BALANCE]: 'passed' } });
  const changes = words(section(page(night('2026-11-25T02:00:00.000Z'), night('2026-11-26T02:00:00.000Z')), 'changes'));
  assert.match(
    changes,
    /Nothing changed: every scenario and requirement kept its verdict, and the outcome is the same, conforms \(exit 0\)\./,
  );
  assert.match(changes, /about as long as the run before/);
  assert.match(changes, /No operation's p95 response time moved by half or more\./);
  assert.match(
    words(section(page(night('2026-11-25T02:00:00.000Z')), 'changes')),
    /The history holds one run, 2026-11-25 02:00 \(conforms \(exit 0\)\): there is no run before it to compare it with\./,
  );
  assert.match(words(section(page(), 'changes')), /The history holds no run yet\./);
});

test('a run recorded by an older harness, without scenario verdicts, renders and says what cannot be compared', () => {
  const older = JSON.parse(
    JSON.stringify(record('2026-11-25T02:00:00.000Z', { 'COL-A': 'PASS' }, { [RTP]: { count: 40, p50: 12, p95: 30 } })),
  ) as HistoryRecord;
  assert.equal(older.scenarios, undefined, 'the older format has no scenarios');
  const html = page(
    older,
    record(
      '2026-11-26T02:00:00.000Z',
      { 'COL-A': 'FAIL' },
      { [RTP]: { count: 40, p50: 12, p95: 30 } },
      { scenarios: { [BALANCE]: 'failed' } },
    ),
  );
  const changes = words(section(html, 'changes'));
  assert.match(
    changes,
    /Scenarios cannot be compared: the run before \(2026-11-25 02:00\) was recorded by an older harness, which kept no verdict by scenario\. Requirements, the outcome and response times can\./,
  );
  assert.match(changes, /1 requirement newly fails: COL-A \(passed before\)/);
  assert.doesNotMatch(changes, /scenario newly/);
  assert.match(section(html, 'operations'), /<circle class="p95"/);
});

test('response times that moved by half or more are worth a glance; a few ms are not', () => {
  const slow = 'get account balance (remittance)';
  const before = record('2026-11-25T02:00:00.000Z', {}, { [RTP]: { count: 40, p50: 12, p95: 30 }, [slow]: { count: 8, p50: 5, p95: 6 } });
  const after = record('2026-11-26T02:00:00.000Z', {}, { [RTP]: { count: 40, p50: 20, p95: 90 }, [slow]: { count: 8, p50: 5, p95: 12 } });
  const changes = words(section(page(before, after), 'changes'));
  assert.match(changes, /Response times worth a glance .*request to pay \(collection\): p95 30 ms → 90 ms \(p50 12 → 20 ms\)/);
  assert.doesNotMatch(changes, /get account balance/, "6 ms → 12 ms is a night's noise");
});

test('y ticks are round numbers (1, 2 or 5 times a power of ten) from 0 to at least the largest value', () => {
  assert.deepEqual(niceTicks(7), [0, 2, 4, 6, 8]);
  assert.deepEqual(niceTicks(130), [0, 50, 100, 150]);
  assert.deepEqual(niceTicks(2400), [0, 500, 1000, 1500, 2000, 2500]);
  assert.deepEqual(niceTicks(0, { whole: true }), [0, 1]);
  for (const max of [0, 0.3, 1, 7, 10, 99, 101, 130, 2400, 61_234.5]) {
    const ticks = niceTicks(max);
    const step = ticks[1]! - ticks[0]!;
    assert.equal(ticks[0], 0, `${max}: from 0`);
    assert.ok(
      max === 0 ? ticks.at(-1) === 1 : ticks.at(-1)! >= max && ticks.at(-1)! - step < max,
      `${max}: the last tick ${ticks.at(-1)} is the first at or above it (1 for nothing but zeros)`,
    );
    assert.match(String(step / 10 ** Math.floor(Math.log10(step))), /^(1|2|5)$/, `${max}: a step of ${step}`);
    assert.ok(
      ticks.every((t, i) => i === 0 || Math.abs(t - ticks[i - 1]! - step) < 1e-9),
      `${max}: even steps ${ticks}`,
    );
    assert.ok(ticks.length >= 2 && ticks.length <= 11, `${max}: ${ticks.length} ticks`);
  }
});

test('every chart has a y axis with ticks and gridlines, a title with its unit, and runs named along x', () => {
  const html = section(
    page(
      record('2026-11-25T02:00:00.000Z', {}, { [RTP]: { count: 40, p50: 12, p95: 2400 } }),
      record('2026-11-26T02:00:00.000Z', {}, { [RTP]: { count: 40, p50: 7, p95: 130 } }),
    ),
    'operations',
  );
  assert.match(html, /<text class="axis-title"[^>]*rotate\(-90\)[^>]*>response time \(ms\)<\/text>/);
  assert.match(html, /<text class="axis-title"[^>]*>run<\/text>/);
  const yTicks = [...html.matchAll(/<text class="tick"[^>]*text-anchor="end">([^<]+)<\/text>/g)].map((m) => Number(m[1]));
  assert.deepEqual(yTicks, [0, 500, 1000, 1500, 2000, 2500]);
  assert.equal(html.match(/<line class="grid"/g)?.length, yTicks.length + 2, 'a gridline a y tick and a named run');
});

test('many runs: the x axis names every k-th run, the last always, and the page draws the latest hundred', () => {
  for (const n of [1, 2, 9, 30, 100, 365]) {
    const named = namedRuns(n);
    assert.equal(named.at(-1), n - 1, `${n} runs: the last is named`);
    assert.ok(named.length <= 9, `${n} runs: ${named.length} names fit under the axis`);
    if (n > 1) assert.ok(named.length >= 2, `${n} runs: more than one name`);
  }
  assert.deepEqual(namedRuns(5), [0, 1, 2, 3, 4]);
  const runs = Array.from({ length: 150 }, (_, i) =>
    record(new Date(Date.UTC(2026, 0, 1, 2) + i * 86_400_000).toISOString(), { 'COL-A': 'PASS' }, {}),
  );
  const html = page(...runs);
  assert.match(html, /150 runs of <code>history\.ndjson<\/code>; this page shows the last 100, from 2026-02-20 02:00 to 2026-05-30 02:00/);
  assert.equal(section(html, 'runs').match(/<tr><td class="run">/g)?.length, 100);
});

test("no scenario or operation name in a history changes the page's structure, in what changed either", () => {
  const hostile = '</li></ul><script>alert(1)</script><img src=x onerror=alert(2)>';
  const before = record(
    '2026-11-25T02:00:00.000Z',
    { [hostile]: 'PASS' },
    { [hostile]: { count: 2, p50: 10, p95: 20 } },
    { scenarios: { [hostile]: 'passed' }, target: hostile },
  );
  const after = record(
    '2026-11-26T02:00:00.000Z',
    { [hostile]: 'FAIL' },
    { [hostile]: { count: 2, p50: 10, p95: 200 } },
    { scenarios: { [hostile]: 'failed' }, outcome: hostile as HistoryRecord['outcome'], profile: hostile },
  );
  const html = page(before, after);
  assert.doesNotMatch(html, /<script|<img/);
  assert.equal(
    words(section(html, 'changes')).match(/&lt;script&gt;alert\(1\)&lt;\/script&gt;/g)?.length,
    6,
    'the target, profile, outcome, scenario, requirement and operation, each as text',
  );
});

test('the embedded sandbox on another free port is the same target; another target is said to be one', () => {
  const embedded = (port: number) => `the embedded reference sandbox (profile spec) at http://127.0.0.1:${port}`;
  const at = (time: string, target: string) => record(time, { 'COL-A': 'PASS' }, {}, { target });
  const changes = (a: HistoryRecord, b: HistoryRecord) => words(section(page(a, b), 'changes'));
  assert.doesNotMatch(
    changes(at('2026-11-25T02:00:00.000Z', embedded(41111)), at('2026-11-26T02:00:00.000Z', embedded(34005))),
    /The target changed/,
  );
  assert.match(
    changes(at('2026-11-25T02:00:00.000Z', embedded(41111)), at('2026-11-26T02:00:00.000Z', 'https://sandbox.provider.example')),
    /The target changed: the run before was against the embedded reference sandbox/,
  );
});
