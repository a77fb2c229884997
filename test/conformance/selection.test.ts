/** Which scenarios and how many workers a run has, given its target and settings. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../harness/config.ts';
import { selectScenarios, selectWorkers } from '../../conformance/runner/conformance.ts';
import type { Target } from '../../conformance/runner/target.ts';
import { targetEnv } from '../support/suite.ts';

function remote(env: Record<string, string>): Target {
  const config = loadConfig({ ...targetEnv('https://sandbox.momodeveloper.mtn.com'), ...env });
  return { description: 'a remote target', config, embedded: false, stop: async () => {} };
}

test('a remote target leaves out @callback unless MOMO_CALLBACK_URL or MOMO_CALLBACK_HOST is reachable from it', () => {
  const loopback = selectScenarios('@collection', remote({}));
  assert.equal(loopback.expression, '(@collection) and not @stateful and not @uncertain and not @callback');
  assert.ok(loopback.notes.some((n) => n.includes('set MOMO_CALLBACK_URL (e.g. a tunnel) or MOMO_CALLBACK_HOST')), loopback.notes.join('\n'));
  const reachable: Record<string, string>[] = [{ MOMO_CALLBACK_URL: 'https://abc.example.app' }, { MOMO_CALLBACK_HOST: 'harness.example.com' }];
  for (const env of reachable) {
    const selected = selectScenarios(undefined, remote(env));
    assert.equal(selected.expression, 'not @stateful and not @uncertain', JSON.stringify(env));
  }
  const localUrl = selectScenarios(undefined, remote({ MOMO_CALLBACK_URL: 'http://127.0.0.1:8090' }));
  assert.match(localUrl.expression, /not @callback/);
  assert.ok(localUrl.notes.some((n) => n.includes('http://127.0.0.1:8090')));
});

test('a fixed callback port makes the run use one process, and says so', () => {
  assert.deepEqual(selectWorkers(2, loadConfig({})), { parallel: 2 });
  assert.deepEqual(selectWorkers(0, loadConfig({ MOMO_CALLBACK_PORT: '8090' })), { parallel: 0 });
  const fixed = selectWorkers(2, loadConfig({ MOMO_CALLBACK_PORT: '8090' }));
  assert.equal(fixed.parallel, 0);
  assert.match(fixed.note ?? '', /one process .* fixed port 8090 \(MOMO_CALLBACK_PORT\)/);
});
