/**
 * The harness against the sandbox's spec-legal chaos (sandbox/chaos): a target that is slow, keeps payments PENDING
 * longer, and sends callbacks late or twice still conforms, within the run's waits. (The conditions that answer a
 * step with something else than it asks for, a 500, a 503, no answer, a token refused, fail or leave untested the
 * scenarios they meet: the run holds each step to the answer it expects, so they are not run here.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunSummary } from '../../conformance/results/verdict-stream.ts';
import { EMBEDDED_TIMINGS } from '../../conformance/runner/target.ts';
import { chaosPlugins } from '../../sandbox/chaos/chaos.ts';
import { resolveSettings, type SandboxSettings } from '../../sandbox/domain/settings.ts';
import { startEmbeddedSandbox } from '../../sandbox/start.ts';
import type { SandboxPlugin } from '../../sandbox/domain/plugins.ts';
import { runSuite, targetEnv } from '../support/suite.ts';
import { variationPlugins } from '../../sandbox-quality/variations/variations.ts';

/** The embedded sandbox under chaos (and any plugins before it), with the conditions it applied. */
async function startChaotic(overrides: Partial<SandboxSettings>, before: SandboxPlugin[] = []) {
  const settings = resolveSettings({ overrides: { ...overrides, logLevel: 'silent', host: '127.0.0.1', port: 0 } });
  const applied = new Set<string>();
  const sandbox = await startEmbeddedSandbox(overrides, {
    plugins: [...before, ...chaosPlugins(settings, (a) => applied.add(a.condition))],
  });
  return { sandbox, applied };
}

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
  const { sandbox, applied } = await startChaotic(overrides);
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

test('a token refused before its expires_in fails the scenario that meets it, even inside a wait that polls', async () => {
  // token-refused-early is live weather, not spec-legal: it breaks §2.6. The client renews the token and goes on, and
  // the departure is judged once, as it is renewed: no poll may take that failure for "not yet" and pass on a new token.
  const overrides: Partial<SandboxSettings> = { ...EMBEDDED_TIMINGS, chaos: { 'token-refused-early': 0.5 }, chaosSeed: 3 };
  const { sandbox, applied } = await startChaotic(overrides);
  try {
    const run = await runSuite(
      ['--tags', '@req:AUTH-TOKEN-VALID-UNTIL-EXPIRY', '--parallel', '0'],
      { ...targetEnv(sandbox.baseUrl), MOMO_RETRIES: '0' },
      300_000,
    );
    assert.ok(applied.has('token-refused-early'), 'the condition was met');
    assert.equal(run.code, 1, run.output);
    assert.match(run.output, /✘ token-honoured-until-expiry/, run.output);
  } finally {
    await sandbox.close();
  }
});

test('a creation cut after it was stored, made again and refused 409, counts as accepted by the follow-ups of a refusal', async () => {
  // A target that takes a foreign currency and ends the transaction FAILED conforms (§1, §7 rule 5); when its answer
  // to the creation is cut, the client's second attempt is refused as a duplicate. "No payment was created" must then
  // know the creation was accepted, not read its 409 as a refusal that left a payment behind.
  const overrides: Partial<SandboxSettings> = { ...EMBEDDED_TIMINGS, chaos: { 'cut-after-store': 1 }, chaosSeed: 1 };
  const { sandbox, applied } = await startChaotic(overrides, variationPlugins(['currency-refused-as-outcome']));
  try {
    const run = await runSuite(
      ['--tags', '@req:COL-RTP-INVALID-CURRENCY', '--parallel', '0'],
      { ...targetEnv(sandbox.baseUrl), MOMO_RETRIES: '0' },
      300_000,
    );
    assert.ok(applied.has('cut-after-store'), 'the condition was met');
    assert.equal(run.code, 0, run.output);
    const summary = JSON.parse(readFileSync(join(run.reportsDir, 'summary.json'), 'utf8')) as RunSummary;
    const creations = summary.availability.find((row) => row.operation.startsWith('request to pay'));
    assert.ok(
      (creations?.outcomes['created-earlier'] ?? 0) >= 1,
      `the creation was made again and refused 409: ${JSON.stringify(creations)}`,
    );
    const logged = readFileSync(join(run.reportsDir, 'messages.ndjson'), 'utf8');
    assert.match(logged, /Not checked that nothing was created: the creation was accepted \(HTTP 409 to a retry/);
  } finally {
    await sandbox.close();
  }
});
