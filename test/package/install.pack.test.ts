/**
 * What a certification lab does: `npm pack`, install the tarball into an empty folder, `npx momo-harness run`.
 * The installed package runs compiled JavaScript with its own features, schemas and requirements, and writes its
 * reports into the folder it is run in. Dependencies come from the npm registry (or npm's cache).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PACKAGE_ROOT } from '../../core/package.ts';

const MINUTE = 60_000;
const work = mkdtempSync(join(tmpdir(), 'momo-pack-'));
const app = join(work, 'app');

/** A command in the app folder with a plain environment: no MOMO_* setting, no tsx, only the bin folders named. */
function inApp(command: string, args: string[], timeoutMs: number, path = process.env.PATH ?? '') {
  const result = spawnSync(command, args, {
    cwd: app,
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { PATH: path, HOME: process.env.HOME ?? '' },
  });
  return { code: result.status, output: `${result.stdout}${result.stderr}` };
}

test('the packed tarball installs into an empty folder and its momo-harness runs there, compiled', { timeout: 12 * MINUTE }, async (t) => {
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const pack = spawnSync('npm', ['pack', '--pack-destination', work, '--silent'], {
    cwd: PACKAGE_ROOT,
    encoding: 'utf8',
    timeout: 3 * MINUTE,
  });
  assert.equal(pack.status, 0, pack.stderr);
  const tarball = join(work, readdirSync(work).find((name) => name.endsWith('.tgz'))!);

  spawnSync('mkdir', [app]);
  const install = inApp('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], 5 * MINUTE);
  assert.equal(install.code, 0, install.output);
  const installed = join(app, 'node_modules/momo-conformance-harness');
  for (const part of ['features', 'schemas', 'requirements', 'dist/node/steps', 'dist/load', 'README.md', 'docs/reference.md'])
    assert.ok(existsSync(join(installed, part)), `the package lacks ${part}`);
  assert.ok(
    !existsSync(join(app, 'node_modules/tsx')) && !existsSync(join(app, 'node_modules/typescript')),
    'tsx or TypeScript got installed: the package must run without them',
  );

  await t.test('--help of the command and of a subcommand', () => {
    const help = inApp('npx', ['--no-install', 'momo-harness', '--help'], MINUTE);
    assert.equal(help.code, 0, help.output);
    assert.match(help.output, /Commands:[\s\S]*run[\s\S]*keygen/);
    const runHelp = inApp('npx', ['--no-install', 'momo-harness', 'run', '--help'], MINUTE);
    assert.match(runHelp.output, /Usage: momo-harness run [\s\S]*--sign-key <file>/);
  });

  await t.test('npx momo-harness run --sign-key passes against the embedded sandbox, reports in the folder; verify --key checks it', () => {
    assert.equal(inApp('npx', ['--no-install', 'momo-harness', 'keygen', '--out', 'lab'], MINUTE).code, 0);
    const run = inApp('npx', ['--no-install', 'momo-harness', 'run', '--sign-key', 'lab.key.pem'], 6 * MINUTE);
    assert.equal(run.code, 0, run.output.slice(-3000));
    assert.match(run.output, /Verdict: the target conforms/);
    assert.ok(existsSync(join(app, 'reports/conformance/junit.xml')));
    const bundle = readdirSync(join(app, 'reports/certification')).find((name) => name.endsWith('.tar.gz'))!;
    const verify = inApp(
      'npx',
      ['--no-install', 'momo-harness', 'verify', join('reports/certification', bundle), '--key', 'lab.pub.pem'],
      MINUTE,
    );
    assert.equal(verify.code, 0, verify.output);
    assert.match(verify.output, /signed by SHA256:\w+, the key of lab\.pub\.pem/);
  });

  await t.test('without k6 (and without Go to build it), load says so in one line and exits 2', () => {
    const load = inApp(
      process.execPath,
      [join(installed, 'dist/node/cli/momo-harness.js'), 'load', 'smoke'],
      MINUTE,
      `${dirname(process.execPath)}:/usr/bin:/bin`,
    );
    assert.equal(load.code, 2, load.output);
    assert.equal(load.output.trim().split('\n').length, 1, load.output);
    assert.match(load.output, /k6 .* is needed/);
  });
});
