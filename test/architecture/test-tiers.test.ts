/**
 * Every test file runs in exactly one tier, chosen by its name (test/tiers.ts), and `npm test` runs every tier:
 * a file whose suffix no tier knows would otherwise never run, and one that two tiers claim would run twice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { TIERS, filesOf, testFiles, tiersOf, type Tier } from '../tiers.ts';

const SCRIPTS = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> })
  .scripts;
const tiers = Object.keys(TIERS) as Tier[];

test('every test file belongs to exactly one tier, and every tier has files', () => {
  const files = testFiles();
  assert.ok(files.length > 50, `only ${files.length} test files found`);
  const misplaced = files.flatMap((file) => {
    const of = tiersOf(file);
    return of.length === 1 ? [] : [`${file}: ${of.length === 0 ? 'no tier' : `tiers ${of.join(', ')}`}`];
  });
  assert.deepEqual(misplaced, []);
  for (const tier of tiers) assert.ok(filesOf(tier, files).length > 0, `the ${tier} tier has no file`);
});

test('a name with a suffix no tier knows belongs to none', () => {
  assert.deepEqual(tiersOf('test/x/payments.test.ts'), ['fast']);
  assert.deepEqual(tiersOf('test/x/run.suite.test.ts'), ['suite']);
  assert.deepEqual(tiersOf('test/x/run.suit.test.ts'), []);
  assert.deepEqual(tiersOf('test/x/Payments.test.ts'), []);
});

test("each tier has its npm script, which runs that tier's files, and npm test runs every tier", () => {
  const scriptOf = (tier: Tier) => `test:${tier}`;
  for (const tier of tiers) {
    const script = SCRIPTS[scriptOf(tier)];
    assert.ok(
      script?.includes(`$(tsx test/tiers.ts ${tier})`),
      `package.json's ${scriptOf(tier)} runs $(tsx test/tiers.ts ${tier}): ${script}`,
    );
    assert.ok(SCRIPTS.test?.includes(`npm run ${scriptOf(tier)}`), `npm test runs ${scriptOf(tier)}`);
  }
  assert.ok(SCRIPTS.test?.startsWith('npm run lint && npm run typecheck && '), 'npm test lints and type-checks first');
});
