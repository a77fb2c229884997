/**
 * --tags is checked against the grammar and against the tags of features/ before anything starts: a wrong
 * expression stops the run at once, exit 2, saying what to write, rather than after the sandbox and the workers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseTagExpression } from '@cucumber/tag-expressions';
import { readScenarios, type TaggedScenario } from '../../conformance/certification/coverage.ts';
import { TagSelectionError, checkTagExpression, literalsOf } from '../../conformance/runner/tag-selection.ts';
import { EXIT, runConformance } from '../../conformance/runner/conformance.ts';

const SCENARIOS = readScenarios();

function problemOf(expression: string, scenarios: readonly TaggedScenario[] = SCENARIOS): string {
  try {
    checkTagExpression(expression, scenarios);
  } catch (error) {
    assert.ok(error instanceof TagSelectionError, String(error));
    return error.message;
  }
  assert.fail(`--tags ${expression} was accepted`);
}

test('a malformed expression says what is wrong and shows a good one', () => {
  const example = 'A tag expression is tags joined by and, or, not and parentheses, e.g. --tags "@collection and not @slow".';
  assert.equal(problemOf('@smoke and'), `--tags "@smoke and": it ends with "and", which needs a tag after it. ${example}`);
  assert.equal(problemOf('or @smoke'), `--tags "or @smoke": it starts with "or", which needs a tag before it. ${example}`);
  assert.equal(problemOf('@smoke @slow'), `--tags "@smoke @slow": two tags stand side by side: join them with "and" or "or". ${example}`);
  assert.equal(problemOf('(@smoke or @slow'), `--tags "(@smoke or @slow": a "(" is not closed. ${example}`);
  assert.equal(problemOf('@smoke)'), `--tags "@smoke)": a ")" closes nothing. ${example}`);
  assert.equal(problemOf(' '), `--tags " ": it is empty. ${example}`);
  assert.equal(
    problemOf('@smoke AND not @slow'),
    '--tags "@smoke AND not @slow": the operators are written in lower case: did you mean "@smoke and not @slow"?',
  );
  assert.match(problemOf('@smoke,@slow'), /not commas: "@smoke or @slow"/);
});

test('a tag without @ is explained, with the expression corrected', () => {
  assert.equal(problemOf('smoke'), '--tags "smoke": tags start with @: did you mean @smoke?');
  assert.equal(
    problemOf('collection and not slow'),
    '--tags "collection and not slow": tags start with @: did you mean "@collection and not @slow"?',
  );
  assert.equal(problemOf('smok'), '--tags "smok": tags start with @: did you mean @smoke?');
});

test('a tag that no scenario carries is named, with the nearest tags the scenarios carry', () => {
  assert.equal(problemOf('@smok'), '--tags "@smok": no scenario carries @smok; did you mean @smoke?');
  assert.equal(
    problemOf('@collection and not @slwo'),
    '--tags "@collection and not @slwo": no scenario carries @slwo; did you mean @slow?',
  );
  assert.equal(
    problemOf('@req:COL-RTP-DUPLICATE-40'),
    '--tags "@req:COL-RTP-DUPLICATE-40": no scenario carries @req:COL-RTP-DUPLICATE-40; did you mean @req:COL-RTP-DUPLICATE-409?',
  );
  // Nothing near: the tags one selects by are listed, the requirement ids by their form.
  assert.match(
    problemOf('@nightly'),
    /no scenario carries @nightly \(the scenarios carry @beyond-spec, @callback, @collection, .*@smoke.*, and @req:<requirement id>/,
  );
});

test('tags that exist but never meet select nothing, which is said before the run', () => {
  const scenarios = [
    { location: 'a.feature:1', name: 'a', tags: ['@smoke'] },
    { location: 'a.feature:5', name: 'b', tags: ['@slow'] },
  ];
  assert.match(problemOf('@smoke and @slow', scenarios), /no scenario has the combination it asks for/);
  assert.deepEqual(
    checkTagExpression('@smoke or @slow', scenarios).map((s) => s.name),
    ['a', 'b'],
  );
});

test('a good expression gives the scenarios it selects: those cucumber would run', () => {
  const selected = checkTagExpression('@smoke and not @collection', SCENARIOS);
  assert.ok(selected.length > 0);
  assert.ok(selected.every((s) => s.tags.includes('@smoke') && !s.tags.includes('@collection')));
});

test('the tags of an expression are read from the parsed tree (fields of @cucumber/tag-expressions this relies on)', () => {
  assert.deepEqual(literalsOf(parseTagExpression('@a and not (@b or @c\\ d)')), ['@a', '@b', '@c d']);
  assert.deepEqual(literalsOf(parseTagExpression('')), []);
});

test('a wrong --tags stops the run before the target starts: its message is all the run says, exit 2', async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'momo-tags-'));
  for (const tags of ['@smoke and', 'smoke', '@smok']) {
    const lines: string[] = [];
    const code = await runConformance({ argv: ['--tags', tags], env: {}, cwd, log: (line) => lines.push(line) });
    assert.equal(code, EXIT.couldNotTest);
    assert.deepEqual(lines, [problemOf(tags)]);
  }
});

test('a selection that this target leaves out entirely stops before the target is probed, saying so', async () => {
  const cwd = mkdtempSync(join(tmpdir(), 'momo-tags-'));
  const lines: string[] = [];
  // Nothing listens on port 9: had the run gone on, it would say the target could not be tested.
  const env = {
    MOMO_BASE_URL: 'http://127.0.0.1:9',
    MOMO_COLLECTION_KEY: 'ck-1234567',
    MOMO_DISBURSEMENT_KEY: 'dk-1234567',
    MOMO_REMITTANCE_KEY: 'rk-1234567',
  };
  const code = await runConformance({ argv: ['--tags', '@stateful'], env, cwd, log: (line) => lines.push(line) });
  assert.equal(code, EXIT.couldNotTest);
  assert.match(lines.join('\n'), /Leaving out @stateful scenarios/);
  assert.match(
    lines.at(-1)!,
    /^--tags "@stateful" selects \d+ scenarios, and this run leaves out each of them \(see above\): nothing is left to test\.$/,
  );
  assert.ok(!lines.some((line) => /could not be tested|^Testing /.test(line)), lines.join('\n'));
});
