/** Which scenarios and how many workers a run has, given its target and settings. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../harness/config.ts';
import { basename, join } from 'node:path';
import { readdirSync } from 'node:fs';
import { featuresLongestFirst, LONGEST_WAITS_FIRST, selectScenarios, selectWorkers } from '../../conformance/runner/conformance.ts';
import { PACKAGE_ROOT } from '../../core/package.ts';
import type { Target } from '../../conformance/runner/target.ts';
import { targetEnv } from '../support/suite.ts';

function remote(env: Record<string, string>): Target {
  const config = loadConfig({ ...targetEnv('https://sandbox.momodeveloper.mtn.com'), ...env });
  return { description: 'a remote target', config, embedded: false, stop: async () => {} };
}

test('a remote target leaves out @callback unless MOMO_CALLBACK_URL or MOMO_CALLBACK_HOST is reachable from it', () => {
  const loopback = selectScenarios('@collection', remote({}));
  assert.equal(
    loopback.expression,
    '(@collection) and not @strict and not @beyond-spec and not @stateful and not @uncertain and not @callback',
  );
  assert.ok(
    loopback.notes.some((n) => n.includes('set MOMO_CALLBACK_URL (e.g. a tunnel) or MOMO_CALLBACK_HOST')),
    loopback.notes.join('\n'),
  );
  const reachable: Record<string, string>[] = [
    { MOMO_CALLBACK_URL: 'https://abc.example.app' },
    { MOMO_CALLBACK_HOST: 'harness.example.com' },
  ];
  for (const env of reachable) {
    const selected = selectScenarios(undefined, remote(env));
    assert.equal(selected.expression, 'not @strict and not @beyond-spec and not @stateful and not @uncertain', JSON.stringify(env));
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

function embedded(env: Record<string, string> = {}): Target {
  return { description: 'the embedded sandbox', config: loadConfig(env), embedded: true, stop: async () => {} };
}

test('@strict scenarios run only with --strict (MOMO_STRICT), against any target, and the notes say how to run them', () => {
  const lenient = selectScenarios(undefined, embedded());
  assert.equal(lenient.expression, 'not @strict');
  assert.ok(
    lenient.notes.some((n) => n.includes('--strict runs them')),
    lenient.notes.join('\n'),
  );
  assert.equal(selectScenarios(undefined, embedded({ MOMO_STRICT: 'true' })).expression, '');
  assert.doesNotMatch(
    selectScenarios('@errors', remote({ MOMO_STRICT: '1', MOMO_CALLBACK_HOST: 'harness.example.com' })).expression,
    /@strict/,
  );
});

test('@beyond-spec scenarios run against the embedded sandbox; a remote target runs them only when the selection names the tag', () => {
  assert.doesNotMatch(selectScenarios(undefined, embedded()).expression, /beyond-spec/);
  const reachable = { MOMO_CALLBACK_HOST: 'harness.example.com' };
  const left = selectScenarios(undefined, remote(reachable));
  assert.match(left.expression, /not @beyond-spec/);
  assert.ok(
    left.notes.some((n) => n.includes('--tags @beyond-spec runs them')),
    left.notes.join('\n'),
  );
  for (const asked of ['@beyond-spec', '@smoke or @beyond-spec', '@beyond-spec and @disbursement']) {
    assert.doesNotMatch(selectScenarios(asked, remote(reachable)).expression, /not @beyond-spec/, asked);
  }
  assert.match(
    selectScenarios('@beyond-spec-extra', remote(reachable)).expression,
    /not @beyond-spec/,
    'another tag that starts the same is not the tag',
  );
});

test('where every customer has the same user information (the mtn-sandbox profile), @two-customers is left out, saying why', () => {
  assert.doesNotMatch(selectScenarios(undefined, embedded()).expression, /two-customers/);
  const live = selectScenarios('@consent', embedded({ MOMO_PROFILE: 'mtn-sandbox' }));
  assert.equal(live.expression, '(@consent) and not @strict and not @two-customers');
  assert.ok(
    live.notes.some((n) => n.includes('two customers cannot be told apart')),
    live.notes.join('\n'),
  );
});

test('the features that wait out lifetimes are handed out first, each feature once', async () => {
  const { loadConfiguration, loadSources } = await import('@cucumber/cucumber/api');
  const { runConfiguration } = await loadConfiguration({ provided: { paths: featuresLongestFirst() } }, { cwd: PACKAGE_ROOT });
  const { plan } = await loadSources(runConfiguration.sources);
  const files = [...new Set(plan.map((pickle) => basename(pickle.uri)))];
  assert.deepEqual(files.slice(0, LONGEST_WAITS_FIRST.length), [...LONGEST_WAITS_FIRST]);
  assert.equal(files.length, readdirSync(join(PACKAGE_ROOT, 'features')).filter((f) => f.endsWith('.feature')).length);
  assert.equal(plan.length, new Set(plan.map((pickle) => `${pickle.uri}:${pickle.location.line}:${pickle.name}`)).size);
});
