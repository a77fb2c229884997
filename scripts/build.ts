/**
 * Compiles the harness into dist/node: the JavaScript an installed `momo-harness` runs, with no tsx or TypeScript.
 * Every source file becomes one file at the same place under dist/node (cli/run.ts → dist/node/cli/run.js), not one
 * bundle: cucumber loads the step definitions by path, each module is loaded once however many import it, and the
 * package finds its features, schemas and requirements from its root (core/package.ts) as the sources do.
 * Run by `npm run build`, and by npm pack (prepack) with the load bundles of dist/load.
 */
import { rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { COMPILED_DIR, PACKAGE_ROOT } from '../core/package.ts';

const OUT_DIR = join(PACKAGE_ROOT, COMPILED_DIR);

/** What a run loads: the command line, and the step definitions and support code cucumber loads by path. */
const ENTRIES = ['cli/momo-harness.ts', 'steps/**/*.ts'];

const shared = {
  // Node 20 (package.json engines) runs ES2022 and ES modules natively: nothing is lowered.
  platform: 'node',
  target: 'node20',
  format: 'esm',
  // Packages stay imports, resolved from node_modules at run time as the dependencies of package.json.
  packages: 'external',
  absWorkingDir: PACKAGE_ROOT,
  logLevel: 'warning',
} as const;

/** Every project file the entries reach (cli's subcommands, imported lazily, among them): a dry bundle's inputs. */
async function reachableSources(): Promise<string[]> {
  const { metafile } = await build({ ...shared, entryPoints: ENTRIES, bundle: true, write: false, outdir: OUT_DIR, metafile: true });
  return Object.keys(metafile.inputs)
    .filter((input) => input.endsWith('.ts'))
    .sort();
}

/**
 * Each relative import stays an import of its sibling, with the extension the output has: `./run.ts` becomes
 * `./run.js` (the sources import with .ts, which tsx and tsc's allowImportingTsExtensions accept).
 */
const siblingImports: Plugin = {
  name: 'sibling-imports',
  setup(b) {
    b.onResolve({ filter: /^\.\.?\// }, (args) =>
      args.kind === 'entry-point' ? undefined : { path: args.path.replace(/\.ts$/, '.js'), external: true },
    );
  },
};

/** Compiles every reachable source into outDir (dist/node unless told; a test builds elsewhere inside the package). */
export async function buildHarness(outDir = OUT_DIR): Promise<string[]> {
  const sources = await reachableSources();
  rmSync(outDir, { recursive: true, force: true });
  await build({
    ...shared,
    entryPoints: sources,
    // bundle, so that the plugin sees every import; each one is external, so every file is compiled alone.
    bundle: true,
    plugins: [siblingImports],
    outdir: outDir,
    // The folders of the sources, kept: dist/node/<folder>/<file>.js.
    outbase: PACKAGE_ROOT,
    // No keepNames: each file is compiled alone, so esbuild renames nothing, and JavaScript names functions and
    // classes as written. keepNames wrapped every closure in an Object.defineProperty call each time it was made,
    // about 4,000 instructions of each request to pay (docs/performance.md). test/package/compiled-names.test.ts
    // holds the names.
    // Stack traces of an unexpected error point at the TypeScript a maintainer reads.
    sourcemap: 'linked',
  });
  return sources;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // --out <folder>: somewhere else than dist/node (a test builds into a folder of its own inside the package).
  const outAt = process.argv.indexOf('--out');
  const outDir = outAt > 0 && process.argv[outAt + 1] ? resolve(process.argv[outAt + 1]!) : OUT_DIR;
  buildHarness(outDir).then(
    (sources) => console.log(`Compiled ${sources.length} files into ${relative(process.cwd(), outDir) || outDir}`),
    (error: Error) => {
      console.error(`Could not compile the harness: ${error.message}`);
      process.exit(1);
    },
  );
}
