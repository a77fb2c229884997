import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpuSecondsOf } from '../../core/process-cpu.ts';

test("a process's CPU time grows as it works, and a process that is gone has none", () => {
  const before = cpuSecondsOf(process.pid);
  assert.ok(before !== undefined && before > 0, `this process has used CPU: ${before}`);
  const until = Date.now() + 300;
  let spin = 0;
  while (Date.now() < until) spin += 1;
  const after = cpuSecondsOf(process.pid)!;
  assert.ok(after > before, `after ${spin} spins the CPU time grew: ${before} → ${after}`);
  // The highest pid Linux hands out is below 2^22.
  assert.equal(cpuSecondsOf(2 ** 22 + 1), undefined);
});
