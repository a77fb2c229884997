import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import {
  BaselineError,
  catalogueFingerprint,
  compareWithBaseline,
  exitCodeWithBaseline,
  loadBaseline,
  type Baseline,
} from '../../conformance/certification/baseline.ts';
import { writeBundle } from '../../conformance/certification/bundle.ts';

const FINGERPRINT = catalogueFingerprint();

/** The parts of a certification.json a baseline reads. */
function report(more: Record<string, unknown> = {}) {
  return {
    generatedAt: '2026-03-10T02:00:00.000Z',
    target: 'http://127.0.0.1:8080',
    catalogue: { operations: 25, fingerprint: FINGERPRINT },
    requirements: [{ id: 'COL-A', verdict: 'PASS' }],
    scenarios: [{ uri: 'features/a.feature', name: 'a', verdict: 'passed' }],
    ...more,
  };
}

function file(name: string, content: string | Buffer): string {
  const path = join(mkdtempSync(join(tmpdir(), 'momo-baseline-')), name);
  writeFileSync(path, content);
  return path;
}

async function refused(path: string, why: RegExp): Promise<void> {
  await assert.rejects(loadBaseline(path), (error: Error) => {
    assert.ok(error instanceof BaselineError, `a BaselineError, got ${error.name}: ${error.message}`);
    assert.match(error.message, /^The baseline .* cannot be used: /);
    assert.match(error.message, why);
    return true;
  });
}

test('the catalogue fingerprint is the SHA-256 of the operation catalogue, the same on every call', () => {
  assert.match(FINGERPRINT, /^[0-9a-f]{64}$/);
  assert.equal(catalogueFingerprint(), FINGERPRINT);
});

test('a certification.json and an evidence bundle of an earlier run are read alike', async () => {
  const json = file('certification.json', JSON.stringify(report()));
  const fromJson = await loadBaseline(json);
  assert.deepEqual(fromJson.requirements, [{ id: 'COL-A', verdict: 'PASS' }]);
  assert.deepEqual(fromJson.scenarios, [{ uri: 'features/a.feature', name: 'a', verdict: 'passed' }]);

  const bundle = join(mkdtempSync(join(tmpdir(), 'momo-baseline-')), 'certification-x.tar.gz');
  await writeBundle(bundle, [{ path: 'certification/certification.json', source: json }], {
    harness: { name: 'h', version: '0' },
    createdAt: '2026-03-10T02:00:00.000Z',
    target: 't',
    profile: { name: 'spec', behaviour: {} },
    configuration: {},
    spec: null,
  });
  const fromBundle = await loadBaseline(bundle);
  assert.deepEqual({ ...fromBundle, file: '' }, { ...fromJson, file: '' });
});

test('a baseline that is missing, a folder, not JSON, or not a certification report: a clear error', async () => {
  await refused('/no/such/certification.json', /there is no such file/);
  await refused(mkdtempSync(join(tmpdir(), 'momo-baseline-')), /it is a folder/);
  await refused(file('certification.json', '<html>'), /neither JSON nor a gzipped evidence bundle/);
  await refused(file('certification.json', '[1, 2]'), /not a certification report \(not a JSON object\)/);
  await refused(
    file('summary.json', JSON.stringify({ scenarios: [], totals: {} })),
    /not a certification report \(no list of requirements/,
  );
  await refused(file('certification.json', JSON.stringify(report({ scenarios: [{ uri: 1 }] }))), /no list of scenarios/);
});

test('a baseline far larger than any certification.json is refused before it is read', async () => {
  const huge = file('certification.json', '{');
  truncateSync(huge, 3 * 1024 * 1024 * 1024); // sparse: 3 GiB to the reader, nothing on disk
  await refused(huge, /it is 3072\.0 MiB, more than the 64\.0 MiB such a file can be/);
});

test('a baseline of another catalogue version, or of none, cannot be compared with', async () => {
  await refused(
    file('certification.json', JSON.stringify(report({ catalogue: { operations: 25, fingerprint: '0'.repeat(64) } }))),
    /another version of the operation catalogue \(fingerprint 000000000000…, this harness's is [0-9a-f]{12}…\)/,
  );
  const { catalogue: _, ...older } = report();
  await refused(file('certification.json', JSON.stringify(older)), /names no catalogue version/);
});

test('a gzipped file that is not a bundle, or a bundle without a certification, is refused through the bundle reader', async () => {
  await refused(
    file('x.tar.gz', gzipSync('not a tar at all, just text')),
    /not a readable evidence bundle|holds no certification\/certification.json/,
  );
  const other = file('other.txt', 'hello');
  const bundle = join(mkdtempSync(join(tmpdir(), 'momo-baseline-')), 'b.tar.gz');
  await writeBundle(bundle, [{ path: 'conformance/other.txt', source: other }], {
    harness: { name: 'h', version: '0' },
    createdAt: 'x',
    target: 't',
    profile: { name: 'spec', behaviour: {} },
    configuration: {},
    spec: null,
  });
  await refused(bundle, /holds no certification\/certification.json/);
});

const BASELINE: Baseline = {
  file: 'last-night.json',
  generatedAt: '2026-03-10T02:00:00.000Z',
  target: 't',
  requirements: [
    { id: 'STILL-PASS', verdict: 'PASS' },
    { id: 'BREAKS', verdict: 'PASS' },
    { id: 'GETS-FIXED', verdict: 'FAIL' },
    { id: 'STILL-FAIL', verdict: 'FAIL' },
    { id: 'GOES-FLAKY', verdict: 'PASS' },
    { id: 'GOES-DOWN', verdict: 'PASS' },
    { id: 'LEFT-OUT', verdict: 'PASS' },
    { id: 'WAS-UNTESTED', verdict: 'NOT TESTED' },
  ],
  scenarios: [
    { uri: 'f', name: 'a', verdict: 'passed' },
    { uri: 'f', name: 'b', verdict: 'failed' },
    { uri: 'f', name: 'c', verdict: 'failed' },
  ],
};

test('every requirement and scenario falls in one class of change', () => {
  const comparison = compareWithBaseline(BASELINE, {
    requirements: [
      { id: 'STILL-PASS', verdict: 'WARN' },
      { id: 'BREAKS', verdict: 'FAIL' },
      { id: 'GETS-FIXED', verdict: 'PASS' },
      { id: 'STILL-FAIL', verdict: 'FAIL' },
      { id: 'GOES-FLAKY', verdict: 'FLAKY' },
      { id: 'GOES-DOWN', verdict: 'NOT TESTED' },
      { id: 'LEFT-OUT', verdict: 'NOT APPLICABLE' },
      { id: 'WAS-UNTESTED', verdict: 'FAIL' },
      { id: 'ADDED', verdict: 'PASS' },
    ],
    scenarios: [
      { uri: 'f', name: 'a', verdict: 'failed' },
      { uri: 'f', name: 'b', verdict: 'passed' },
      { uri: 'f', name: 'c', verdict: 'failed' },
      { uri: 'f', name: 'd', verdict: 'flaky' },
    ],
  });
  assert.deepEqual(Object.fromEntries(comparison.requirements), {
    'STILL-PASS': 'still passing',
    BREAKS: 'new failure',
    'GETS-FIXED': 'fixed',
    'STILL-FAIL': 'still failing',
    'GOES-FLAKY': 'flaky',
    'GOES-DOWN': 'not tested',
    'LEFT-OUT': 'not applicable',
    'WAS-UNTESTED': 'new failure',
    ADDED: 'new',
  });
  assert.deepEqual(Object.fromEntries(comparison.scenarios), {
    'f › a': 'new failure',
    'f › b': 'fixed',
    'f › c': 'still failing',
    'f › d': 'new',
  });
  assert.equal(comparison.counts.requirements['new failure'], 2);
  assert.equal(comparison.counts.scenarios['still failing'], 1);
});

test("--fail-on new: only a new failure (or a failing waiver) fails the run; any keeps the run's exit code; 2 stays 2", () => {
  const old = compareWithBaseline(BASELINE, {
    requirements: [{ id: 'STILL-FAIL', verdict: 'FAIL' }],
    scenarios: [{ uri: 'f', name: 'c', verdict: 'failed' }],
  });
  const fresh = compareWithBaseline(BASELINE, {
    requirements: [{ id: 'BREAKS', verdict: 'FAIL' }],
    scenarios: [{ uri: 'f', name: 'a', verdict: 'failed' }],
  });
  assert.equal(exitCodeWithBaseline(1, old, 'new', []), 0);
  assert.equal(exitCodeWithBaseline(1, old, 'new', ['The waiver of X expired']), 1);
  assert.equal(exitCodeWithBaseline(1, fresh, 'new', []), 1);
  assert.equal(exitCodeWithBaseline(1, old, 'any', []), 1);
  assert.equal(exitCodeWithBaseline(2, old, 'new', []), 2);
  assert.equal(exitCodeWithBaseline(0, old, 'new', []), 0);
  // Old failures passed by, and a scenario not tested: the night could not test, so it is never green.
  assert.equal(exitCodeWithBaseline(1, old, 'new', [], true), 2);
});
