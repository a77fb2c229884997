/**
 * The folders of the project and the direction of their imports. Each top-level folder of code is in a layer,
 * and a file imports only from its own folder or from a lower layer: a core that imports nothing else of the
 * project; the harness library and the sandbox beside each other, neither knowing the other; the applications
 * (the conformance run, its steps, load) on those; the sandbox's quality tools (faults, fuzzer, mutation,
 * benchmark) above them; the command line on top. Folders import each other in no circle, at any depth.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const ROOT = resolve(new URL('../../', import.meta.url).pathname);

/** Lowest first. A folder may import from its own layer's folder (itself) and from every layer below. */
export const LAYERS: readonly (readonly string[])[] = [
  ['core'],
  ['harness', 'sandbox'],
  ['steps', 'conformance', 'load'],
  ['sandbox-quality'],
  ['cli'],
];

const layerOf = new Map(LAYERS.flatMap((folders, layer) => folders.map((folder) => [folder, layer] as const)));

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && entry.name !== 'node_modules') out.push(...sourceFiles(path));
    else if (entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The project files a file imports (static, re-exports, dynamic), as absolute paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [
    ...text.matchAll(
      /(?:^|\n)\s*(?:import|export)\s[^'"`]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g,
    ),
  ]
    .map((m) => m[1] ?? m[2] ?? m[3]!)
    .filter((s) => s.startsWith('.'));
  return specifiers.map((s) => resolve(dirname(file), s));
}

const topFolderOf = (file: string) => relative(ROOT, file).split(sep)[0]!;
const folderOf = (file: string) => relative(ROOT, dirname(file)).split(sep).join('/');

const files = LAYERS.flat().flatMap((folder) => sourceFiles(join(ROOT, folder)));
const edges = files.flatMap((file) => importsOf(file).map((target) => ({ file, target })));

test('every folder of code is in a layer, and every import goes to its own folder or a lower layer', () => {
  // bin/ holds the JavaScript launcher npm links (package.json bin), which imports no folder of code.
  const topFolders = readdirSync(ROOT).filter(
    (name) =>
      statSync(join(ROOT, name)).isDirectory() &&
      !name.startsWith('.') &&
      !['node_modules', 'dist', 'reports', 'docs', 'schemas', 'requirements', 'features', 'scripts', 'test', 'bin'].includes(name),
  );
  assert.deepEqual(
    topFolders.sort(),
    [...layerOf.keys()].sort(),
    'a top-level folder of code that no layer names (or a layer whose folder is gone)',
  );
  const upward = edges.flatMap(({ file, target }) => {
    const from = topFolderOf(file);
    const to = topFolderOf(target);
    if (from === to) return [];
    const fromLayer = layerOf.get(from)!;
    const toLayer = layerOf.get(to);
    if (toLayer === undefined) return [`${relative(ROOT, file)} imports ${relative(ROOT, target)}, outside every layer`];
    return toLayer < fromLayer
      ? []
      : [`${relative(ROOT, file)} (${from}, layer ${fromLayer}) imports ${relative(ROOT, target)} (${to}, layer ${toLayer})`];
  });
  assert.deepEqual(upward, []);
});

test('no folder imports, through others, a folder that imports it', () => {
  const graph = new Map<string, Set<string>>();
  for (const { file, target } of edges) {
    const from = folderOf(file);
    const to = folderOf(target);
    if (from !== to) (graph.get(from) ?? graph.set(from, new Set()).get(from)!).add(to);
  }
  // Tarjan's strongly connected components: any with more than one folder is a circle.
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (node: string): void => {
    indices.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indices.get(next)!));
      }
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) circles.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  const described = circles.map(
    (circle) =>
      `${circle.join(' ↔ ')}: ${edges
        .filter(
          ({ file, target }) => circle.includes(folderOf(file)) && circle.includes(folderOf(target)) && folderOf(file) !== folderOf(target),
        )
        .map(({ file, target }) => `${relative(ROOT, file)} → ${relative(ROOT, target)}`)
        .join(', ')}`,
  );
  assert.deepEqual(described, []);
});

test("the sandbox's own code knows nothing of deliberate faults", () => {
  const mentions = sourceFiles(join(ROOT, 'sandbox')).filter((file) =>
    /\bdeviations?\b|\bfaults?\b/i.test(readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')),
  );
  assert.deepEqual(
    mentions.map((file) => relative(ROOT, file)),
    [],
  );
});

test('tests import code of the layers, never a script', () => {
  const scripts = sourceFiles(join(ROOT, 'test')).flatMap((file) =>
    importsOf(file)
      .filter((target) => topFolderOf(target) === 'scripts')
      .map((target) => `${relative(ROOT, file)} → ${relative(ROOT, target)}`),
  );
  assert.deepEqual(scripts, []);
});

test("CONTRIBUTING's layout section names every folder of the layers", () => {
  const contributing = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8');
  const start = contributing.indexOf('## Project layout');
  assert.ok(start >= 0, 'CONTRIBUTING.md has no "## Project layout"');
  const layout = contributing.slice(start, contributing.indexOf('\n## ', start + 1));
  for (const folder of layerOf.keys()) assert.ok(layout.includes(`\`${folder}/\``), `CONTRIBUTING's layout lacks ${folder}/`);
});
