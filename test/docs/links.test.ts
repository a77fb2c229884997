/**
 * Every relative link of the documents leads somewhere: to a file or folder of the project, and, with a #anchor,
 * to a heading of that document. Moving a section from one document to another breaks the links to it; this
 * finds them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { PACKAGE_ROOT } from '../../core/package.ts';
import { DOCUMENTS, documentText } from '../support/doc-commands.ts';

/** The links of a Markdown text outside code: [text](target), with the line each is on. */
export function linksOf(markdown: string): { line: number; target: string }[] {
  const links: { line: number; target: string }[] = [];
  let inBlock = false;
  markdown.split('\n').forEach((raw, index) => {
    if (/^\s*```/.test(raw)) {
      inBlock = !inBlock;
      return;
    }
    if (inBlock) return;
    const prose = raw.replace(/`[^`]*`/g, '');
    for (const m of prose.matchAll(/\]\(([^)\s]+)\)/g)) links.push({ line: index + 1, target: m[1]! });
  });
  return links;
}

/** The anchors of a document's headings, as GitHub makes them: lower case, punctuation gone, spaces as hyphens. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let inBlock = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) inBlock = !inBlock;
    const heading = inBlock ? undefined : /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let anchor = base;
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`;
    anchors.add(anchor);
  }
  return anchors;
}

test('every relative link of the documents leads to a file, and every #anchor to a heading', () => {
  const broken: string[] = [];
  for (const file of DOCUMENTS) {
    for (const { line, target } of linksOf(documentText(file))) {
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue;
      const [path, anchor] = target.split('#') as [string, string | undefined];
      const linked = path === '' ? file : normalize(join(dirname(file), path));
      if (!existsSync(join(PACKAGE_ROOT, linked))) {
        broken.push(`${file}:${line} ${target}: no ${linked}`);
        continue;
      }
      if (anchor !== undefined && linked.endsWith('.md') && !anchorsOf(documentText(linked)).has(anchor))
        broken.push(`${file}:${line} ${target}: ${linked} has no heading #${anchor}`);
    }
  }
  assert.deepEqual(broken, []);
});

test('anchors are made as GitHub makes them', () => {
  const anchors = anchorsOf(
    '# Reference\n## The command, in a clone and installed\n## Capacity search: `npm run capacity`\n## §1 Transfer\n## Results\n## Results\n```sh\n# not a heading\n```',
  );
  assert.deepEqual(
    [...anchors],
    ['reference', 'the-command-in-a-clone-and-installed', 'capacity-search-npm-run-capacity', '1-transfer', 'results', 'results-1'],
  );
  assert.deepEqual(linksOf('see [a](a.md#x) and `[b](b.md)`\n```\n[c](c.md)\n```'), [{ line: 1, target: 'a.md#x' }]);
});
