/**
 * The two weather proxies the project did not write (test/weather-proxy in Go, test/weather-proxy-py in Python),
 * each by its own tests, as their authors left them: what they inject, only where the spec allows it, and
 * deterministically for a seed. The suite runs behind them in test/conformance/weather.suite.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('the Go weather proxy passes its own tests (offline, the standard library only)', () => {
  const run = spawnSync('go', ['test', '-count=1', './...'], {
    cwd: `${ROOT}test/weather-proxy`,
    env: { ...process.env, GOFLAGS: '-buildvcs=false', GOPROXY: 'off', GOTOOLCHAIN: 'local', CGO_ENABLED: '0' },
    encoding: 'utf8',
    timeout: 300_000,
  });
  assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
});

test('the Python weather proxy passes its own tests (the standard library only)', () => {
  const run = spawnSync('python3', ['-m', 'unittest', 'test_weather_proxy'], {
    cwd: `${ROOT}test/weather-proxy-py`,
    encoding: 'utf8',
    timeout: 300_000,
  });
  assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
  assert.match(run.stderr, /^OK/m, run.stderr);
});
