/**
 * The cheap commands of the documents (--help, --list-…), run as written, with npm and npx, in this clone: each
 * ends with exit code 0 and prints what it promises. examples.test.ts checks every command's words.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { PACKAGE_ROOT } from '../../core/package.ts';
import { allDocCommands } from '../support/doc-commands.ts';

const cheap = [
  ...new Map(
    allDocCommands()
      .filter((c) => c.kind !== 'npm' && c.args.some((a) => a === '--help' || a.startsWith('--list-')))
      .map((c) => [c.text, c]),
  ).values(),
];

test('the documents show cheap commands to run', () => {
  assert.ok(
    cheap.some((c) => c.text.startsWith('npx momo-harness')),
    cheap.map((c) => c.text).join('\n'),
  );
  assert.ok(cheap.length >= 6, cheap.map((c) => c.text).join('\n'));
});

for (const command of cheap) {
  test(`${command.file}:${command.line} ${command.text}`, () => {
    // A plain environment, as a user's shell: none of the npm variables of the npm that runs these tests.
    const result = spawnSync('sh', ['-c', command.text], {
      cwd: PACKAGE_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    const output = `${result.stdout}${result.stderr}`;
    assert.equal(result.status, 0, output);
    assert.match(result.stdout, /Usage: |Where the profiles differ|deviation|variation|chaos condition|^\| rule \|/im, output);
  });
}
