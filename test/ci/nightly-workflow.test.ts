/**
 * The nightly workflow users copy (.github/workflows/nightly.yml) must be one GitHub runs: actionlint finds
 * nothing in it. actionlint is a Go module; scripts/ensure-actionlint.sh takes it from PATH or builds it into
 * .tools/. Without it and without Go the check is skipped with the reason, except in CI, where it fails.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { PRODUCTS } from '../../core/products.ts';
import { CONFIG_VARIABLES, secretVariablesOf } from '../../harness/config.ts';
import { ensureWithoutGo } from '../support/go-tools.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const WORKFLOW = join(ROOT, '.github/workflows/nightly.yml');

test('actionlint finds nothing in the nightly workflow', (t) => {
  const ensure = spawnSync('bash', [join(ROOT, 'scripts/ensure-actionlint.sh')], { encoding: 'utf8' });
  if (ensure.status === 3) {
    const reason = ensure.stderr.trim().split('\n').at(-1)!;
    if (process.env.CI) assert.fail(`actionlint is missing in CI: ${reason}`);
    t.skip(reason);
    return;
  }
  assert.equal(ensure.status, 0, ensure.stderr);
  const actionlint = ensure.stdout.trim().split('\n').at(-1)!;
  const lint = spawnSync(actionlint, ['-no-color', WORKFLOW], { encoding: 'utf8', cwd: ROOT });
  assert.equal(`${lint.stdout}${lint.stderr}`, '', 'no finding');
  assert.equal(lint.status, 0);
});

test('the workflow passes every secret the harness reads, and names no variable the harness does not read', () => {
  const text = readFileSync(WORKFLOW, 'utf8');
  const passed = new Set([...text.matchAll(/^\s+(MOMO_[A-Z_]+): \$\{\{/gm)].map((m) => m[1]!));
  for (const product of PRODUCTS)
    for (const name of Object.values(secretVariablesOf(product))) assert.ok(passed.has(name), `${name} reaches the run`);
  for (const name of passed) assert.ok(name in CONFIG_VARIABLES, `${name} is a setting of harness/config.ts`);
  assert.ok(passed.has('MOMO_BASE_URL'), 'the target comes from a secret');
});

test('without actionlint and without Go, scripts/ensure-actionlint.sh says in one line how to install it', () => {
  const result = ensureWithoutGo('ensure-actionlint.sh');
  assert.equal(result.status, 3);
  assert.equal(result.stdout, '');
  assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr);
  assert.match(result.stderr, /install actionlint \(https:\/\/github\.com\/rhysd\/actionlint\/blob\/main\/docs\/install\.md\) or Go/);
});
