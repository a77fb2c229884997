import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { verifyBundle } from '../../conformance/certification/bundle.ts';
import type { RunSummary } from '../../conformance/results/verdict-stream.ts';

/** Every report a run writes, relative to its --reports folder (the bundle besides: bundleOf). */
export const REPORT_FILES = [
  'cucumber.html',
  'cucumber.json',
  'messages.ndjson',
  'junit.xml',
  'summary.json',
  'certification/index.html',
  'certification/certification.json',
] as const;

/** The evidence bundle of a run, or undefined when it wrote none. */
export function bundleOf(reportsDir: string): string | undefined {
  const dir = join(reportsDir, 'certification');
  const name = existsSync(dir) ? readdirSync(dir).find((n) => /^certification-.*\.tar\.gz$/.test(n)) : undefined;
  return name === undefined ? undefined : join(dir, name);
}

/**
 * What every run must leave, whatever its target did: every report written and well formed, each in its own
 * terms (below), and a bundle that verifies as intact. Returns the run's summary.
 */
export async function assertEveryReport(reportsDir: string): Promise<RunSummary> {
  for (const file of REPORT_FILES) assert.ok(existsSync(join(reportsDir, file)), `${file} was not written`);
  const bundle = bundleOf(reportsDir);
  assert.ok(bundle, 'the evidence bundle was not written');
  const check = await verifyBundle(bundle);
  assert.ok(check.intact, check.intact ? '' : check.problems.join('\n'));
  const read = (file: string) => readFileSync(join(reportsDir, file), 'utf8');
  const summary = JSON.parse(read('summary.json')) as RunSummary;
  JSON.parse(read('cucumber.json'));
  JSON.parse(read('certification/certification.json'));
  const messages = read('messages.ndjson')
    .split('\n')
    .filter((line) => line !== '');
  for (const [i, line] of messages.entries()) assert.doesNotThrow(() => JSON.parse(line), `messages.ndjson line ${i + 1} is not JSON`);

  // JUnit: well-formed XML with one <testcase> per scenario that ran, whatever the failures quote.
  const junit = parseXml(read('junit.xml'));
  assert.equal(junit.root, 'testsuite');
  const ran = summary.scenarios.length;
  assert.equal(junit.count('testcase'), ran, `junit.xml has ${junit.count('testcase')} testcases for ${ran} scenarios`);

  // cucumber.html: the messages are a script; nothing in them may end it early, and it must still evaluate to them all.
  const html = read('cucumber.html');
  const start = html.indexOf('window.CUCUMBER_MESSAGES = [');
  assert.ok(start > 0, 'cucumber.html holds no messages');
  // Where the browser ends the script: the first "</script" followed by white space, "/" or ">".
  const closing = /<\/script[\s/>]/gi;
  closing.lastIndex = start;
  const end = closing.exec(html)?.index ?? -1;
  assert.ok(end > start, 'the messages script is never closed');
  const script = html.slice(start, end);
  assert.ok(!script.includes('<'), 'the messages script holds a "<", which could end it or open a comment');
  const evaluated = runInNewContext(`const window = {}; ${script}; window.CUCUMBER_MESSAGES`) as unknown[];
  assert.equal(evaluated.length, messages.length, 'cucumber.html holds every message, and its script ends after the last');

  // The certification page has no script at all, and no comment a target's text could have opened.
  const page = read('certification/index.html');
  assert.doesNotMatch(page, /<script|<\/script|<!--|]]>/i);
  return summary;
}

/** A parsed XML document, as far as a test needs: its root and how many elements of each name it has. */
export interface XmlDocument {
  root: string;
  count(name: string): number;
}

/**
 * A minimal well-formedness check of XML 1.0 without a DTD: only characters XML allows; one root; every tag
 * closed in order; attributes quoted, not repeated, without '<'; CDATA sections, comments and the declaration
 * closed; text without ']]>' or a '<'; and every '&' a predefined or numeric reference. Throws on the first
 * problem, saying where.
 */
export function parseXml(xml: string): XmlDocument {
  const fail = (why: string, at: number): never => {
    throw new Error(`junit.xml is not well-formed XML: ${why} at ${at}: ${JSON.stringify(xml.slice(Math.max(0, at - 40), at + 40))}`);
  };
  const illegal =
    /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.exec(xml);
  if (illegal) fail(`U+${illegal[0].charCodeAt(0).toString(16).padStart(4, '0')}, which XML 1.0 forbids`, illegal.index);
  const references = (text: string, at: number) => {
    for (const m of text.matchAll(/&/g)) {
      if (!/^&(?:amp|lt|gt|quot|apos|#[0-9]+|#x[0-9a-fA-F]+);/.test(text.slice(m.index))) fail('an "&" that is no reference', at + m.index);
    }
  };
  const counts = new Map<string, number>();
  const stack: string[] = [];
  let root: string | undefined;
  let i = 0;
  if (xml.startsWith('<?xml')) {
    const end = xml.indexOf('?>');
    if (end < 0) fail('an unclosed declaration', 0);
    i = end + 2;
  }
  const NAME = /[A-Za-z_:][-A-Za-z0-9._:]*/y;
  const nameAt = (at: number): string => {
    NAME.lastIndex = at;
    return NAME.exec(xml)?.[0] ?? fail('a tag without a name', at);
  };
  while (i < xml.length) {
    const lt = xml.indexOf('<', i);
    const text = xml.slice(i, lt < 0 ? xml.length : lt);
    if (text.includes(']]>')) fail('"]]>" in text', i + text.indexOf(']]>'));
    if (stack.length === 0 && text.trim() !== '') fail('text outside the root', i);
    references(text, i);
    if (lt < 0) break;
    if (xml.startsWith('<!--', lt)) {
      const end = xml.indexOf('-->', lt + 4);
      if (end < 0 || xml.slice(lt + 4, end).includes('--')) fail('a broken comment', lt);
      i = end + 3;
    } else if (xml.startsWith('<![CDATA[', lt)) {
      if (stack.length === 0) fail('a CDATA section outside the root', lt);
      const end = xml.indexOf(']]>', lt + 9);
      if (end < 0) fail('an unclosed CDATA section', lt);
      i = end + 3;
    } else if (xml.startsWith('</', lt)) {
      const name = nameAt(lt + 2);
      const close = /\s*>/y;
      close.lastIndex = lt + 2 + name.length;
      if (!close.exec(xml)) fail(`a broken end tag </${name}`, lt);
      if (stack.pop() !== name) fail(`</${name}> closes another element`, lt);
      i = close.lastIndex;
    } else {
      const name = nameAt(lt + 1);
      let at = lt + 1 + name.length;
      const seen = new Set<string>();
      const attribute = /\s+([A-Za-z_:][-A-Za-z0-9._:]*)\s*=\s*(?:"([^"<]*)"|'([^'<]*)')/y;
      attribute.lastIndex = at;
      for (let m = attribute.exec(xml); m; m = attribute.exec(xml)) {
        if (seen.has(m[1]!)) fail(`the attribute ${m[1]} twice`, at);
        seen.add(m[1]!);
        references(m[2] ?? m[3] ?? '', at);
        at = attribute.lastIndex;
      }
      const end = /\s*(\/?)>/y;
      end.lastIndex = at;
      const closing = end.exec(xml) ?? fail(`a broken start tag <${name}`, lt);
      if (stack.length === 0) {
        if (root !== undefined) fail('a second root element', lt);
        root = name;
      }
      counts.set(name, (counts.get(name) ?? 0) + 1);
      if (closing[1] !== '/') stack.push(name);
      i = end.lastIndex;
    }
  }
  if (stack.length > 0) fail(`<${stack.at(-1)}> is never closed`, xml.length);
  if (root === undefined) fail('no root element', 0);
  return { root: root!, count: (name) => counts.get(name) ?? 0 };
}
