/** A capacity step's figures from raw samples: counted over the window the script marked, whatever came before or after it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readWindow } from '../../load/runner/step-window.ts';

const T0 = Date.parse('2026-11-26T00:00:00Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

/** One process's output: the marks at 2 s and 12 s, and the given samples. */
function samplesFile(lines: object[], opensAt = 2000, closesAt = 12_000): string {
  const file = join(mkdtempSync(join(tmpdir(), 'momo-window-')), 'samples.json');
  const mark = (scenario: string, ms: number) => ({
    metric: 'momo_window_marks',
    type: 'Point',
    data: { time: at(ms), value: 1, tags: { scenario } },
  });
  writeFileSync(file, [mark('window-opens', opensAt), ...lines, mark('window-closes', closesAt)].map((l) => JSON.stringify(l)).join('\n'));
  return file;
}

/** A request of `op` answered at `answeredMs` after `durationMs`. */
const request = (op: string, answeredMs: number, durationMs: number, failed = false) => ({
  metric: 'http_req_duration',
  type: 'Point',
  data: { time: at(answeredMs), value: durationMs, tags: { scenario: op, op, expected_response: String(!failed) } },
});

test('throughput counts the answers inside the window; latency and errors, the requests started inside it', async () => {
  const file = samplesFile([
    // Answered in the ramp: no part of the step.
    request('requestToPay', 1500, 10),
    // Started in the ramp, answered inside: throughput only.
    request('requestToPay', 2100, 500),
    // Ten per second inside the window, 20 ms each, one of them refused.
    ...Array.from({ length: 100 }, (_, i) => request('requestToPay', 2020 + i * 100, 20, i === 50)),
    // Status reads: counted apart from the mix.
    ...Array.from({ length: 5 }, (_, i) => request('getRequestToPayStatus', 3000 + i * 1000, 5)),
    // Started inside, answered in the drain after: latency only.
    request('requestToPay', 12_800, 1000),
    // Setup: no scenario.
    { metric: 'http_req_duration', type: 'Point', data: { time: at(100), value: 3, tags: { op: 'createAccessToken' } } },
    { metric: 'dropped_iterations', type: 'Point', data: { time: at(1000), value: 1, tags: { scenario: 'requestToPay' } } },
    { metric: 'dropped_iterations', type: 'Point', data: { time: at(5000), value: 2, tags: { scenario: 'requestToPay' } } },
    { metric: 'momo_schema_violations', type: 'Point', data: { time: at(13_000), value: 1, tags: { scenario: 'requestToPay' } } },
  ]);
  const window = await readWindow(
    [file],
    ['requestToPay'],
    [
      { metric: 'http_req_duration{op:requestToPay}', expression: 'p(95)<250' },
      { metric: 'http_req_duration{op:requestToPay}', expression: 'p(99.9)<250' },
      { metric: 'http_req_failed{op:requestToPay}', expression: 'rate<=0.01' },
      { metric: 'dropped_iterations', expression: 'count<=0' },
      { metric: 'momo_schema_violations', expression: 'count==0' },
      { metric: 'momo_lost_transactions', expression: 'count<=0' },
    ],
  );
  assert.equal(window.seconds, 10);
  const rtp = window.operations.requestToPay!;
  assert.equal(rtp.answered, 101, 'the 100 of the window and the one started in the ramp');
  assert.equal(rtp.throughput, 10.1);
  assert.equal(rtp.started, 101, 'the 100 of the window and the one answered in the drain');
  assert.equal(rtp.failed, 1);
  assert.equal(rtp.latencyMs.max, 1000);
  assert.equal(rtp.latencyMs.p50, 20);
  assert.equal(window.operations.getRequestToPayStatus!.answered, 5);
  assert.equal(window.operations.createAccessToken, undefined, 'setup() is no part of the step');
  assert.equal(window.requestsPerSecond, 10.6);
  assert.equal(window.dropped, 2, 'dropped inside the window only');
  assert.equal(window.timeline.length, 10);
  assert.deepEqual(
    window.timeline.map((s) => s.throughput),
    [11, 10, 10, 10, 10, 10, 10, 10, 10, 10],
  );
  assert.equal(window.timeline.at(-1)!.max, 1000, 'the request answered in the drain counts in the slice it started in');
  assert.deepEqual(
    window.thresholds.map((t) => [t.expression, t.passed]),
    [
      ['p(95)<250', true],
      ['p(99.9)<250', false],
      ['rate<=0.01', true],
      ['count<=0', false],
      ['count==0', false],
      ['count<=0', true],
    ],
  );
});

test('each process of a split step is read over its own window, and a file without marks is refused', async () => {
  const a = samplesFile(Array.from({ length: 10 }, (_, i) => request('deposit', 2500 + i * 1000, 10)));
  const b = samplesFile(
    Array.from({ length: 10 }, (_, i) => request('deposit', 3500 + i * 1000, 10)),
    3000,
    13_000,
  );
  const window = await readWindow([a, b], ['deposit'], []);
  assert.equal(window.operations.deposit!.answered, 20);
  assert.equal(window.operations.deposit!.throughput, 2);

  const unmarked = join(mkdtempSync(join(tmpdir(), 'momo-window-')), 'samples.json');
  writeFileSync(unmarked, JSON.stringify(request('deposit', 2500, 10)));
  await assert.rejects(readWindow([unmarked], ['deposit'], []), /holds no measured window/);
});

test('an operation of the mix that started no request in the window has its latency unmeasured, never held', async () => {
  const file = samplesFile([
    // The one payment of a slow rate started in the ramp and was answered inside: throughput, but no latency.
    request('requestToPay', 2100, 500),
  ]);
  const window = await readWindow(
    [file],
    ['requestToPay'],
    [
      { metric: 'http_req_duration{op:requestToPay}', expression: 'p(95)<250' },
      { metric: 'http_req_duration{op:getRequestToPayStatus}', expression: 'p(95)<250' },
    ],
  );
  const [payment, statusRead] = window.thresholds;
  assert.deepEqual([payment!.passed, payment!.unmeasured], [false, true]);
  // Status reads are not the mix: a window without one says nothing of the step.
  assert.equal(statusRead!.passed, true);
});
