/**
 * The harness against the sandbox's spec-legal chaos (sandbox/chaos): a target that is slow, keeps payments PENDING
 * longer, and sends callbacks late or twice still conforms, within the run's waits. (The conditions that answer a
 * step with something else than it asks for, a 500, a 503, no answer, a token refused, fail or leave untested the
 * scenarios they meet: the run holds each step to the answer it expects, so they are not run here.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EMBEDDED_TIMINGS } from '../../conformance/runner/target.ts';
import { chaosPlugins } from '../../sandbox/chaos/chaos.ts';
import { resolveSettings, type SandboxSettings } from '../../sandbox/domain/settings.ts';
import { startEmbeddedSandbox } from '../../sandbox/start.ts';
import { runSuite, targetEnv } from '../support/suite.ts';

test('a sandbox with latency, long PENDING, and late and repeated callbacks conforms', async () => {
  const overrides: Partial<SandboxSettings> = {
    ...EMBEDDED_TIMINGS,
    chaos: { latency: 0.5, 'long-pending': 0.3, 'callback-delayed': 0.3, 'callback-repeated': 0.3 },
    chaosSeed: 5,
    chaosLatencyMs: { min: 10, max: 300 },
    // Within the run's wait for an outcome (MOMO_POLL_TIMEOUT_MS, 3 s in targetEnv), as the spec gives no time.
    chaosLongPendingMs: 1500,
    chaosCallbackDelayMs: { min: 100, max: 1000 },
  };
  const settings = resolveSettings({ overrides: { ...overrides, logLevel: 'silent', host: '127.0.0.1', port: 0 } });
  const applied = new Set<string>();
  const sandbox = await startEmbeddedSandbox(overrides, { plugins: chaosPlugins(settings, (a) => applied.add(a.condition)) });
  try {
    const run = await runSuite(
      ['--tags', '@smoke or @callback', '--parallel', '0'],
      { ...targetEnv(sandbox.baseUrl), MOMO_CALLBACK_HOST: '127.0.0.1' },
      300_000,
    );
    assert.equal(run.code, 0, run.output);
    assert.match(run.output, /scenarios: \d+ passed, 0 failed/);
    assert.deepEqual([...applied].sort(), Object.keys(overrides.chaos!).sort(), 'a condition the run never met proves nothing');
  } finally {
    await sandbox.close();
  }
});
