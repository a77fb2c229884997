import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CertificationReport } from '../../conformance/certification/report.ts';
import {
  appendHistory,
  checkHistoryFile,
  corruptLineWarnings,
  HistoryError,
  historyRecordOf,
  percentile,
  readHistory,
} from '../../conformance/trend/history.ts';
import { renderTrend } from '../../conformance/trend/page.ts';
import { record } from './fixtures.ts';

const folder = () => mkdtempSync(join(tmpdir(), 'momo-history-'));

test('each run appends one line; every earlier line stays as it was', () => {
  const file = join(folder(), 'history.ndjson');
  checkHistoryFile(file);
  assert.equal(readFileSync(file, 'utf8'), '', 'checking creates the file, empty');
  appendHistory(file, record('2026-03-10T02:00:00.000Z', { 'COL-A': 'PASS' }, {}));
  const first = readFileSync(file, 'utf8');
  appendHistory(file, record('2026-03-11T02:00:00.000Z', { 'COL-A': 'FAIL' }, {}));
  const after = readFileSync(file, 'utf8');
  assert.ok(after.startsWith(first));
  assert.equal(after.split('\n').length, 3);
  assert.deepEqual(
    readHistory(file).records.map((r) => r.requirements['COL-A']),
    ['PASS', 'FAIL'],
  );
  checkHistoryFile(file);
  assert.equal(readFileSync(file, 'utf8'), after, 'checking never empties the file');
});

test('a corrupt line is reported by its number and kept; a cut last line does not swallow the next record', () => {
  const file = join(folder(), 'history.ndjson');
  appendHistory(file, record('2026-03-10T02:00:00.000Z', { 'COL-A': 'PASS' }, {}));
  appendFileSync(file, 'this is not json\n{"history": 2}\n{"history":1,"at":"2026-03-1');
  const before = readFileSync(file, 'utf8');
  appendHistory(file, record('2026-03-12T02:00:00.000Z', { 'COL-A': 'PASS' }, {}));
  const after = readFileSync(file, 'utf8');
  assert.ok(after.startsWith(before), 'nothing before the new record changed');
  const history = readHistory(file);
  assert.deepEqual(
    history.records.map((r) => r.at),
    ['2026-03-10T02:00:00.000Z', '2026-03-12T02:00:00.000Z'],
  );
  assert.deepEqual(history.corrupt, [
    { line: 2, why: 'not JSON' },
    { line: 3, why: 'not a history record of this harness (no "history": 1)' },
    { line: 4, why: 'not JSON' },
  ]);
  assert.deepEqual(
    corruptLineWarnings('h.ndjson', history)[0],
    'HISTORY: h.ndjson line 2 is not a run record (not JSON); it is kept as it is, and left out of the trend.',
  );
  assert.match(renderTrend(history, 'h.ndjson'), /line 3: not a history record/);
});

test('a history file that cannot be written stops the run before it starts', () => {
  assert.throws(
    () => checkHistoryFile(join(folder(), 'no', 'such', 'folder', 'h.ndjson')),
    (e: Error) => e instanceof HistoryError && /its folder does not exist/.test(e.message),
  );
  assert.throws(
    () => checkHistoryFile(folder()),
    (e: Error) => e instanceof HistoryError && /it is a folder/.test(e.message),
  );
  // Past its bound the file is refused whole, and left as it was: never cut, never read into memory.
  const huge = join(folder(), 'history.ndjson');
  writeFileSync(huge, '');
  truncateSync(huge, 3 * 1024 * 1024 * 1024);
  assert.throws(
    () => checkHistoryFile(huge),
    (e: Error) => e instanceof HistoryError && /it is 3072\.0 MiB, more than the 128\.0 MiB .*start a new history file/.test(e.message),
  );
  assert.equal(statSync(huge).size, 3 * 1024 * 1024 * 1024);
});

test("a run records every scenario's verdict by file and name; a record without them (an older harness) still reads", () => {
  const scenario = (uri: string, name: string, verdict: string) => ({ uri, name, verdict, exchanges: [] });
  const report = {
    generatedAt: '2026-03-10T02:00:00.000Z',
    target: 't',
    profile: { name: 'spec' },
    catalogue: { fingerprint: 'f' },
    exitCode: 1,
    outcome: 'does not conform',
    requirements: [
      { id: 'COL-A', verdict: 'FAIL' },
      { id: 'COL-Z', verdict: 'UNPROVOKABLE' },
    ],
    scenarios: [
      scenario('features/tokens.feature', 'A token', 'passed'),
      scenario('features/collection.feature', 'A payment', 'failed'),
      scenario('features/consent.feature', 'A consent', 'not run'),
    ],
  } as unknown as CertificationReport;
  const recorded = historyRecordOf(report, 1000);
  assert.deepEqual(recorded.scenarios, {
    'features/collection.feature › A payment': 'failed',
    'features/consent.feature › A consent': 'not run',
    'features/tokens.feature › A token': 'passed',
  });
  assert.deepEqual(recorded.requirements, { 'COL-A': 'FAIL' });

  const file = join(folder(), 'history.ndjson');
  const older = record('2026-03-09T02:00:00.000Z', { 'COL-A': 'PASS' }, {});
  writeFileSync(file, `${JSON.stringify(older)}\n${JSON.stringify({ ...recorded, scenarios: ['passed'] })}\n`);
  appendHistory(file, recorded);
  const history = readHistory(file);
  assert.deepEqual(history.records, [older, recorded]);
  assert.deepEqual(history.corrupt, [{ line: 2, why: 'its verdicts by scenario are not verdicts' }]);
});

test('p50 and p95 are nearest-rank percentiles', () => {
  const ms = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.equal(percentile(ms, 50), 50);
  assert.equal(percentile(ms, 95), 95);
  assert.equal(percentile([7], 95), 7);
  assert.equal(percentile([30, 10, 20], 50), 20);
});

test("no target text changes the trend page's structure", () => {
  const file = join(folder(), 'history.ndjson');
  const hostile = '</b><script>alert(1)</script><img src=x onerror=alert(2)>\u0000';
  writeFileSync(
    file,
    `${JSON.stringify(record('2026-03-10T02:00:00.000Z', { 'COL-A': 'PASS' }, { [hostile]: { count: 2, p50: 10, p95: 20 } }, { target: hostile }))}\n`,
  );
  const page = renderTrend(readHistory(file), file);
  assert.doesNotMatch(page, /<script|<img/);
  assert.match(page, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.match(page, /\\u0000/);
});
