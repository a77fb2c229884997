import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { VALID_WAIVER, waiversFile } from './fixtures.ts';
import { WaiverError, loadWaivers, waiversFileOf } from '../../conformance/certification/waivers.ts';

const KNOWN = new Set(['COL-A', 'COL-B']);
const VALID = VALID_WAIVER;

function problemsOf(content: unknown, known: ReadonlySet<string> = KNOWN): string[] {
  try {
    loadWaivers(waiversFile(content), known);
  } catch (error) {
    assert.ok(error instanceof WaiverError, String(error));
    assert.match(error.message, /^The waivers file .*waivers\.json is wrong:/);
    return error.problems;
  }
  assert.fail('the waivers file was accepted');
}

test('a valid waivers file gives its waivers', () => {
  assert.deepEqual(loadWaivers(waiversFile({ $schema: 'https://momo-harness.dev/schemas/waivers.schema.json', waivers: [VALID] }), KNOWN), [
    VALID,
  ]);
});

test('a waiver naming a requirement the catalogue does not have is a configuration error naming it', () => {
  assert.deepEqual(problemsOf({ waivers: [VALID, { ...VALID, requirement: 'COL-TYPO' }] }), [
    '/waivers/1 names the requirement COL-TYPO, which is not in the requirement catalogue (requirements/momo-api.requirements.json): correct the id or remove the waiver',
  ]);
});

test('a waiver without an owner, with an impossible expiry date or an unknown field is refused, each said', () => {
  const { owner: _owner, ...withoutOwner } = VALID;
  const problems = problemsOf({
    waivers: [withoutOwner, { ...VALID, requirement: 'COL-B', expires: '2026-02-30' }, { ...VALID, approvedBy: 'me' }],
  });
  assert.ok(
    problems.some((p) => p.startsWith('/waivers/0') && p.includes('owner')),
    problems.join('\n'),
  );
  assert.ok(problems.includes('/waivers/1/expires must be a date in the form YYYY-MM-DD, got "2026-02-30"'), problems.join('\n'));
  assert.ok(
    problems.some((p) => p === '/waivers/2 has an unknown property "approvedBy"'),
    problems.join('\n'),
  );
});

test('an expiry date in another form is refused, naming the form to write it in', () => {
  assert.deepEqual(problemsOf({ waivers: [{ ...VALID, expires: '25/12/2026' }] }), [
    '/waivers/0/expires must be a date in the form YYYY-MM-DD, got "25/12/2026"',
  ]);
});

test('two waivers for one requirement, a file that is not JSON, and a file that is not there are refused', () => {
  assert.deepEqual(problemsOf({ waivers: [VALID, VALID] }), ['/waivers/1 waives COL-A a second time: keep one waiver per requirement']);
  assert.match(problemsOf('{"waivers": [')[0] ?? '', /^is not JSON/);
  assert.throws(
    () => loadWaivers('/nonexistent/waivers.json', KNOWN),
    (error: Error) => error instanceof WaiverError && /cannot be read/.test(error.message),
  );
});

test('the waivers file is MOMO_WAIVERS, else waivers.json of the project folder if there is one', () => {
  const dir = mkdtempSync(join(tmpdir(), 'momo-project-'));
  assert.equal(waiversFileOf(dir, undefined), undefined);
  assert.equal(waiversFileOf(dir, 'ci/waivers.json'), join(dir, 'ci/waivers.json'));
  writeFileSync(join(dir, 'waivers.json'), '{"waivers": []}');
  assert.equal(waiversFileOf(dir, undefined), join(dir, 'waivers.json'));
});
