import { existsSync, mkdirSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { build, type Plugin } from 'esbuild';
import standaloneModule from 'ajv/dist/standalone/index.js';
import { ajvOverSchemas, schemaId } from '../core/validation/schemas.ts';
import { OPERATIONS, OPERATION_IDS } from '../core/catalogue/operations.ts';
import { bodySchemasOf } from '../core/catalogue/routes.ts';
import { PACKAGE_ROOT } from '../core/package.ts';

// A CommonJS module whose default export is the module object under NodeNext.
const standaloneCode = standaloneModule as unknown as typeof standaloneModule.default;

const ROOT = PACKAGE_ROOT;
export const SCENARIO_DIR = join(ROOT, 'load/scenarios');
export const BUNDLE_DIR = join(ROOT, 'dist/load');

/** The schemas the load scripts check answers against: every body schema any status of the catalogue documents. */
const VALIDATED = [
  ...new Set(
    OPERATION_IDS.flatMap((id) =>
      Object.values(OPERATIONS[id].responses).flatMap((response) =>
        Object.values(OPERATIONS[id].products).flatMap((binding) => bodySchemasOf(response, binding!.errors)),
      ),
    ),
  ),
].sort();

/**
 * The scenarios of load/scenarios; an installed package has no sources, only the bundles its build made
 * (dist/load, which npm pack ships), and takes the scenarios from those.
 */
export function scenarioNames(): string[] {
  if (!existsSync(SCENARIO_DIR))
    return readdirSync(BUNDLE_DIR)
      .filter((f) => f.endsWith('.js') && f !== 'minimal.js')
      .map((f) => basename(f, '.js'))
      .sort();
  return readdirSync(SCENARIO_DIR)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => basename(f, '.ts'))
    .sort();
}

/**
 * The validators as one ES module of plain functions: ajv compiles the project's schemas here, at build
 * time, with the same options as the rest of the project, so k6 never compiles a schema.
 */
function validatorsModule(): string {
  const ajv = ajvOverSchemas({ code: { source: true, esm: true } });
  const exportName = (name: string) => name.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());
  const code = standaloneCode(ajv, Object.fromEntries(VALIDATED.map((name) => [exportName(name), schemaId(name)])));
  // The scripts look validators up by schema name, as the rest of the project does.
  return `${code}\nexport const validators = { ${VALIDATED.map((name) => `${JSON.stringify(name)}: ${exportName(name)}`).join(', ')} };\n`;
}

const virtualValidators: Plugin = {
  name: 'virtual-validators',
  setup(b) {
    b.onResolve({ filter: /^virtual:validators$/ }, () => ({ path: 'validators', namespace: 'virtual' }));
    b.onLoad({ filter: /.*/, namespace: 'virtual' }, () => ({ contents: validatorsModule(), resolveDir: ROOT, loader: 'js' }));
  },
};

/** Bundles every scenario of load/scenarios into dist/load/<scenario>.js. */
export async function buildLoadScripts(): Promise<string[]> {
  const names = scenarioNames();
  // An installed package: the bundles were built when it was packed.
  if (!existsSync(SCENARIO_DIR)) return names.map((n) => join(BUNDLE_DIR, `${n}.js`));
  const { outputFiles } = await build({
    // Named entries: dist/load/<scenario>.js whatever folder the source is in.
    entryPoints: {
      ...Object.fromEntries(names.map((n) => [n, join(SCENARIO_DIR, `${n}.ts`)])),
      minimal: join(ROOT, 'load/benchmarks/minimal.ts'),
    },
    outdir: BUNDLE_DIR,
    // One self-contained file per scenario: k6 loads a single script, and the bundle is what a
    // distributed run (execution segments, the k6-operator) ships to every runner.
    bundle: true,
    // k6 runs ES modules, and its runtime knows ES2020 well; newer syntax is lowered.
    format: 'esm',
    target: 'es2020',
    // Not Node: nothing of node: may be pulled in, and no Node globals are assumed.
    platform: 'neutral',
    mainFields: ['module', 'main'],
    // k6's own modules are provided by the k6 binary at run time, never bundled.
    external: ['k6', 'k6/*'],
    plugins: [virtualValidators],
    // Readable output: stack traces in k6 point at lines a person can follow.
    minify: false,
    sourcemap: 'inline',
    logLevel: 'warning',
    // Written below, each file whole at once: a k6 process of another run may be reading the last build.
    write: false,
  });
  mkdirSync(BUNDLE_DIR, { recursive: true });
  for (const file of outputFiles) {
    const partial = `${file.path}.${process.pid}.partial`;
    writeFileSync(partial, file.contents);
    renameSync(partial, file.path);
  }
  return names.map((n) => join(BUNDLE_DIR, `${n}.js`));
}

/** The minimal script the benchmarks compare against (load/benchmarks/minimal.ts). */
export function minimalScript(): string {
  return join(BUNDLE_DIR, 'minimal.js');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  buildLoadScripts().then(
    (files) => console.log(`Built ${files.length} load scripts into ${BUNDLE_DIR}`),
    (error: Error) => {
      console.error(`Could not build the load scripts: ${error.message}`);
      process.exit(1);
    },
  );
}
