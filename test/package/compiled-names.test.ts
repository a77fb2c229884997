/**
 * The compiled package names its functions and classes as the sources do: error names reach messages and
 * reports (StoreFullError, the client's transport errors), and a stack trace should read as the code does.
 * The build compiles each file alone, without esbuild's keepNames (which cost every closure a defineProperty
 * call each time it was made); this holds that nothing was renamed for it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PACKAGE_ROOT } from '../../core/package.ts';

/** Modules that run something when imported: the command line itself, and cucumber's step files. */
const RUNS_WHEN_IMPORTED = (source: string) => source === 'cli/momo-harness.ts' || source.startsWith('steps/');

/** Every .js file under a folder, as paths relative to it. */
function compiledFiles(dir: string, under = ''): string[] {
  return readdirSync(join(dir, under)).flatMap((name) => {
    const path = join(under, name);
    if (statSync(join(dir, path)).isDirectory()) return compiledFiles(dir, path);
    return path.endsWith('.js') ? [path] : [];
  });
}

/** The names of a module's exported functions and classes, their static and prototype methods, and the methods of exported objects. */
function namesOf(module: Record<string, unknown>): Map<string, string> {
  const names = new Map<string, string>();
  const methods = (owner: object, label: string) => {
    for (const key of Object.getOwnPropertyNames(owner)) {
      const value = Object.getOwnPropertyDescriptor(owner, key)?.value as unknown;
      if (typeof value === 'function') names.set(`${label}.${key}`, value.name);
    }
  };
  for (const [exported, value] of Object.entries(module)) {
    if (typeof value === 'function') {
      names.set(exported, value.name);
      methods(value, exported);
      if (value.prototype) methods(value.prototype as object, `${exported}#`);
    } else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      methods(value, exported);
    }
  }
  return names;
}

test('every exported function, class and method keeps its name once compiled', { timeout: 120_000 }, async (t) => {
  // Inside the package, so that the compiled files find its node_modules, schemas and features as dist/node does.
  const outDir = mkdtempSync(join(PACKAGE_ROOT, '.compiled-names-'));
  t.after(() => rmSync(outDir, { recursive: true, force: true }));
  // The build as npm run build runs it (a script, run, not imported), into that folder.
  const build = spawnSync(process.execPath, ['--import', 'tsx', join(PACKAGE_ROOT, 'scripts/build.ts'), '--out', join(outDir, 'node')], {
    cwd: PACKAGE_ROOT,
    encoding: 'utf8',
  });
  assert.equal(build.status, 0, build.stderr);
  const sources = compiledFiles(join(outDir, 'node'))
    .map((file) => file.replace(/\.js$/, '.ts'))
    .filter((source) => !RUNS_WHEN_IMPORTED(source));
  assert.ok(sources.length > 50, `the build made only ${sources.length} files`);
  let compared = 0;
  for (const source of sources) {
    const compiled = join(outDir, 'node', source.replace(/\.ts$/, '.js'));
    const expected = namesOf((await import(pathToFileURL(join(PACKAGE_ROOT, source)).href)) as Record<string, unknown>);
    const actual = namesOf((await import(pathToFileURL(compiled).href)) as Record<string, unknown>);
    assert.deepEqual(actual, expected, `${source} compiled names its exports differently`);
    compared += expected.size;
  }
  assert.ok(compared > 300, `only ${compared} names compared`);
});
