import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeadlineExceededError, consistently, eventually, type Timekeeper } from '../../harness/eventually.ts';

/** Virtual time: sleeping moves the clock on at once, and every sleep is recorded. */
function virtualTime(): Timekeeper & { slept: number[] } {
  let now = 0;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    sleep: async (ms) => {
      slept.push(ms);
      now += ms;
    },
  };
}

test('returns the first defined value, and stops probing', async () => {
  const time = virtualTime();
  let calls = 0;
  const value = await eventually(
    async () => {
      calls += 1;
      return calls === 3 ? { state: 'SUCCESSFUL' } : undefined;
    },
    { timeoutMs: 2000, intervalMs: 5, description: 'a status', time },
  );
  assert.deepEqual(value, { state: 'SUCCESSFUL' });
  assert.equal(calls, 3);
  assert.deepEqual(time.slept, [5, 5], 'one interval between probes');
});

test('falsy values other than undefined count as values', async () => {
  const time = virtualTime();
  assert.equal(await eventually(async () => 0, { timeoutMs: 100, intervalMs: 5, description: 'zero', time }), 0);
  assert.equal(await eventually(async () => false, { timeoutMs: 100, intervalMs: 5, description: 'false', time }), false);
  assert.equal(await eventually(async () => null, { timeoutMs: 100, intervalMs: 5, description: 'null', time }), null);
  assert.deepEqual(time.slept, []);
});

test('retries after thrown errors until a value comes', async () => {
  let calls = 0;
  const value = await eventually(
    async () => {
      calls += 1;
      if (calls < 3) throw new Error(`not yet ${calls}`);
      return 'done';
    },
    { timeoutMs: 2000, intervalMs: 5, description: 'retrying', time: virtualTime() },
  );
  assert.equal(value, 'done');
  assert.equal(calls, 3);
});

test("at the deadline, DeadlineExceededError names what was awaited and the last error's message", async () => {
  let calls = 0;
  const error = await eventually(
    async () => {
      calls += 1;
      throw new Error(`status is PENDING (probe ${calls})`);
    },
    { timeoutMs: 120, intervalMs: 10, description: 'the request to pay becomes SUCCESSFUL', time: virtualTime() },
  ).then(
    () => assert.fail('expected a rejection'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof DeadlineExceededError, String(error));
  assert.equal(error.name, 'DeadlineExceededError');
  assert.equal(error.description, 'the request to pay becomes SUCCESSFUL');
  assert.equal(error.timeoutMs, 120);
  assert.equal(calls, 13, 'a probe at 0, 10, … 120 ms');
  assert.equal(error.message, 'the request to pay becomes SUCCESSFUL: not reached within 120 ms; last seen: status is PENDING (probe 13)');
  assert.ok(error.lastProblem instanceof Error);
});

test('a deadline without an error says only that it was not reached', async () => {
  const error = await eventually(async () => undefined, {
    timeoutMs: 50,
    intervalMs: 10,
    description: 'a callback',
    time: virtualTime(),
  }).then(
    () => assert.fail('expected a rejection'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof DeadlineExceededError);
  assert.equal(error.message, 'a callback: not reached within 50 ms');
});

test('an error marked fatal stops the wait at once and is rethrown as is', async () => {
  const time = virtualTime();
  let calls = 0;
  const fatal = Object.assign(new Error('target down'), { fatal: true });
  await assert.rejects(
    eventually(
      async () => {
        calls += 1;
        throw fatal;
      },
      { timeoutMs: 5000, intervalMs: 10, description: 'x', time },
    ),
    (e: unknown) => e === fatal,
  );
  assert.equal(calls, 1);
  assert.deepEqual(time.slept, [], 'no waiting at all');
});

test('a fatal error after non-fatal ones also stops at once', async () => {
  let calls = 0;
  await assert.rejects(
    eventually(
      async () => {
        calls += 1;
        if (calls < 3) throw new Error('not yet');
        throw Object.assign(new Error('unreachable'), { fatal: true });
      },
      { timeoutMs: 5000, intervalMs: 5, description: 'x', time: virtualTime() },
    ),
    /unreachable/,
  );
  assert.equal(calls, 3);
});

test('the deadline is honoured exactly: the last wait is cut short to it, even with a long interval', async () => {
  for (const [intervalMs, expected] of [
    [10, Array(10).fill(10)],
    [1000, [100]],
    [30, [30, 30, 30, 10]],
  ] as const) {
    const time = virtualTime();
    await assert.rejects(
      eventually(async () => undefined, { timeoutMs: 100, intervalMs, description: 'never', time }),
      DeadlineExceededError,
    );
    assert.deepEqual(time.slept, expected, `interval ${intervalMs}`);
    assert.equal(time.now(), 100, `interval ${intervalMs}: gave up at the deadline`);
  }
});

test('consistently checks for the whole period, and fails at the first check that throws', async () => {
  const time = virtualTime();
  let checks = 0;
  await consistently(() => void (checks += 1), { durationMs: 100, intervalMs: 30, time });
  assert.deepEqual(time.slept, [30, 30, 30, 10]);
  assert.equal(checks, 5);
  let later = 0;
  await assert.rejects(
    consistently(
      () => {
        later += 1;
        if (later === 2) throw new Error('a second callback came');
      },
      { durationMs: 1000, intervalMs: 50, time: virtualTime() },
    ),
    /a second callback came/,
  );
  assert.equal(later, 2);
});
