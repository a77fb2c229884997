import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the harness's own files are: the features, schemas, requirements, step definitions and load bundles are
 * read from the package, never from the working folder, so an installed `momo-harness` (its code compiled into
 * dist/node) finds them as a clone run through tsx does. The working folder holds only what the user brings
 * (.env, waivers.json) and what the run writes (reports/).
 */

/** The folder of package.json above this file: the clone, or node_modules/<package> once installed. */
export const PACKAGE_ROOT = rootAbove(dirname(fileURLToPath(import.meta.url)));

/** Where the build (scripts/build.ts) writes the compiled JavaScript, mirroring the folders of the sources. */
export const COMPILED_DIR = 'dist/node';

/** Whether this program is the compiled JavaScript (an installed package) or the TypeScript sources under tsx. */
export const COMPILED = import.meta.url.endsWith('.js');

/** The folder of a layer's code as this program runs it, e.g. codeDir('steps'): steps/ or dist/node/steps/. */
export function codeDir(folder: string): string {
  return COMPILED ? join(PACKAGE_ROOT, COMPILED_DIR, folder) : join(PACKAGE_ROOT, folder);
}

/** The extension of the code files this program runs: .js compiled, .ts under tsx. */
export const CODE_EXTENSION = COMPILED ? '.js' : '.ts';

/**
 * The node arguments that run `momo-harness` as this program runs: the compiled CLI, or its source with tsx
 * (which a compiled package does not have). Child runs (tests, npm run mutation, the benchmarks) use it.
 */
export function harnessProgram(): string[] {
  const cli = join(codeDir('cli'), `momo-harness${CODE_EXTENSION}`);
  return COMPILED ? [cli] : ['--import', 'tsx', cli];
}

function rootAbove(start: string): string {
  for (let dir = start; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${start}: the harness is not inside its package`);
  }
}
