/**
 * docs/sandbox.md shows the client report's rules as --list-client-rules prints them from rules.ts, and its
 * bounds as the recorder keeps them: the rules and the numbers are written once, in the code.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_CLIENTS, MAX_FINDINGS, MAX_FINDINGS_PER_CLIENT } from '../../sandbox/client-report/recorder.ts';
import { clientRulesTable } from '../../sandbox/client-report/rules-table.ts';
import { documentText } from '../support/doc-commands.ts';

const sandboxDoc = documentText('docs/sandbox.md');

test('the rules table of docs/sandbox.md is the one npm run sandbox -- --list-client-rules prints', () => {
  const start = sandboxDoc.indexOf('<!-- client-rules:start');
  const end = sandboxDoc.indexOf('<!-- client-rules:end -->');
  assert.ok(start >= 0 && end > start, 'docs/sandbox.md has no client-rules markers');
  const table = sandboxDoc.slice(sandboxDoc.indexOf('\n', start) + 1, end).trim();
  assert.equal(table, clientRulesTable(), 'paste the output of npm run sandbox -- --list-client-rules between the markers');
});

test("docs/sandbox.md gives the report's bounds as the recorder has them", () => {
  const bounds = `it keeps ${MAX_CLIENTS} clients`;
  assert.ok(sandboxDoc.includes(bounds), `docs/sandbox.md does not say "${bounds}"`);
  const findings = `${MAX_FINDINGS_PER_CLIENT} findings a client and ${MAX_FINDINGS} in all`;
  assert.ok(sandboxDoc.replace(/\s+/g, ' ').includes(findings), `docs/sandbox.md does not say "${findings}"`);
});
