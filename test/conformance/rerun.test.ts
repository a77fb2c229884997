import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RerunError, scenariosToRerun } from '../../conformance/runner/rerun.ts';

function summary(content: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 'momo-rerun-')), 'summary.json');
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

const scenario = (uri: string, line: number | undefined, verdict: string) => ({
  id: 'x',
  feature: 'F',
  scenario: 's',
  uri,
  line,
  tags: [],
  verdict,
  durationMs: 1,
});

test('the failed and flaky scenarios of a run, by file and line; passed, skipped and not tested ones are left', () => {
  const file = summary({
    scenarios: [
      scenario('features/a.feature', 9, 'failed'),
      scenario('features/a.feature', 20, 'passed'),
      scenario('features/b.feature', 5, 'flaky'),
      scenario('features/c.feature', 7, 'not tested'),
    ],
  });
  assert.deepEqual(scenariosToRerun(file), ['features/a.feature:9', 'features/b.feature:5']);
});

test('a bad summary.json: a clear error naming the file', () => {
  const refused = (file: string, why: RegExp) =>
    assert.throws(
      () => scenariosToRerun(file),
      (e: Error) => e instanceof RerunError && e.message.startsWith(`--rerun-failed ${file}: `) && why.test(e.message),
    );
  refused('/no/such/summary.json', /there is no such file/);
  refused(mkdtempSync(join(tmpdir(), 'momo-rerun-')), /it is a folder/);
  refused(summary('{"scenarios": ['), /it is not JSON/);
  refused(summary({ requirements: [] }), /not the summary.json of a run/);
  refused(summary({ scenarios: [scenario('features/a.feature', 9, 'passed')] }), /no failed or flaky scenario \(1 scenarios\)/);
  refused(summary({ scenarios: [scenario('../../etc/passwd.feature', 1, 'failed')] }), /not a scenario of features\//);
  refused(summary({ scenarios: [scenario('features/a.feature', undefined, 'failed')] }), /not a scenario of features\/ with its line/);
});

test('a summary.json far larger than any run writes is refused before it is read', () => {
  const huge = join(mkdtempSync(join(tmpdir(), 'momo-rerun-')), 'summary.json');
  writeFileSync(huge, '{');
  truncateSync(huge, 3 * 1024 * 1024 * 1024); // sparse: 3 GiB to the reader, nothing on disk
  assert.throws(
    () => scenariosToRerun(huge),
    (e: Error) => e instanceof RerunError && /it is 3072\.0 MiB, more than the 64\.0 MiB/.test(e.message),
  );
});
