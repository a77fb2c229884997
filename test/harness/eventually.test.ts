import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeadlineExceededError, eventually } from '../../harness/eventually.ts';

test('returns the first defined value, and stops probing', async () => {
  let calls = 0;
  const value = await eventually(async () => {
    calls += 1;
    return calls === 3 ? { state: 'SUCCESSFUL' } : undefined;
  }, { timeoutMs: 2000, intervalMs: 5, description: 'a status' });
  assert.deepEqual(value, { state: 'SUCCESSFUL' });
  assert.equal(calls, 3);
});

test('falsy values other than undefined count as values', async () => {
  assert.equal(await eventually(async () => 0, { timeoutMs: 100, intervalMs: 5, description: 'zero' }), 0);
  assert.equal(await eventually(async () => false, { timeoutMs: 100, intervalMs: 5, description: 'false' }), false);
  assert.equal(await eventually(async () => null, { timeoutMs: 100, intervalMs: 5, description: 'null' }), null);
});

test('retries after thrown errors until a value comes', async () => {
  let calls = 0;
  const value = await eventually(async () => {
    calls += 1;
    if (calls < 3) throw new Error(`not yet ${calls}`);
    return 'done';
  }, { timeoutMs: 2000, intervalMs: 5, description: 'retrying' });
  assert.equal(value, 'done');
  assert.equal(calls, 3);
});

test('at the deadline, DeadlineExceededError names what was awaited and the last error\'s message', async () => {
  let calls = 0;
  const error = await eventually(async () => {
    calls += 1;
    throw new Error(`status is PENDING (probe ${calls})`);
  }, { timeoutMs: 120, intervalMs: 10, description: 'the request to pay becomes SUCCESSFUL' }).then(
    () => assert.fail('expected a rejection'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof DeadlineExceededError, String(error));
  assert.equal(error.name, 'DeadlineExceededError');
  assert.equal(error.description, 'the request to pay becomes SUCCESSFUL');
  assert.equal(error.timeoutMs, 120);
  assert.ok(calls > 1);
  assert.equal(error.message, `the request to pay becomes SUCCESSFUL: not reached within 120 ms; last seen: status is PENDING (probe ${calls})`);
  assert.ok(error.lastProblem instanceof Error);
});

test('a deadline without an error says only that it was not reached', async () => {
  const error = await eventually(async () => undefined, { timeoutMs: 50, intervalMs: 10, description: 'a callback' }).then(
    () => assert.fail('expected a rejection'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof DeadlineExceededError);
  assert.equal(error.message, 'a callback: not reached within 50 ms');
});

test('an error marked fatal stops the wait at once and is rethrown as is', async () => {
  let calls = 0;
  const fatal = Object.assign(new Error('target down'), { fatal: true });
  const started = performance.now();
  await assert.rejects(eventually(async () => {
    calls += 1;
    throw fatal;
  }, { timeoutMs: 5000, intervalMs: 10, description: 'x' }), (e: unknown) => e === fatal);
  assert.equal(calls, 1);
  assert.ok(performance.now() - started < 100);
});

test('a fatal error after non-fatal ones also stops at once', async () => {
  let calls = 0;
  await assert.rejects(eventually(async () => {
    calls += 1;
    if (calls < 3) throw new Error('not yet');
    throw Object.assign(new Error('unreachable'), { fatal: true });
  }, { timeoutMs: 5000, intervalMs: 5, description: 'x' }), /unreachable/);
  assert.equal(calls, 3);
});

test('the deadline is honoured: timeoutMs 100 rejects after about 100 ms, even with a long interval', async () => {
  for (const intervalMs of [10, 1000]) {
    const started = performance.now();
    await assert.rejects(eventually(async () => undefined, { timeoutMs: 100, intervalMs, description: 'never' }), DeadlineExceededError);
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 95, `interval ${intervalMs}: gave up after ${elapsed} ms`);
    assert.ok(elapsed < 250, `interval ${intervalMs}: gave up only after ${elapsed} ms`);
  }
});
