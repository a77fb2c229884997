import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderJunit } from '../../core/junit.ts';
import { parseXml } from '../support/reports.ts';

const HOSTILE = 'x]]><y a="&\'">\u0000\u001b\uD800 </testsuite><testcase name="forged"/>';

test('one JUnit writer: counts failures and skips per suite, and keeps its structure whatever the text', () => {
  const text = renderJunit(`run ${HOSTILE}`, [
    {
      name: `suite ${HOSTILE}`,
      timeSeconds: 1.25,
      properties: { verdict: HOSTILE },
      cases: [
        { classname: HOSTILE, name: 'passed' },
        { classname: 'c', name: 'passed with output', output: HOSTILE },
        { classname: 'c', name: 'failed', failure: { message: HOSTILE, type: HOSTILE, text: HOSTILE } },
        { classname: 'c', name: 'failed without text', failure: { message: 'm' } },
        { classname: 'c', name: HOSTILE, skipped: HOSTILE },
      ],
    },
    { name: 'empty', cases: [] },
  ]);
  const xml = parseXml(text);
  assert.equal(xml.root, 'testsuites');
  assert.equal(xml.count('testsuite'), 2);
  assert.equal(xml.count('testcase'), 5, 'no case forged by the text');
  assert.equal(xml.count('failure'), 2);
  assert.equal(xml.count('skipped'), 1);
  assert.equal(xml.count('system-out'), 1);
  assert.equal(xml.count('property'), 1);
  assert.match(text, /<testsuite name="suite [^"]*" tests="5" failures="2" errors="0" skipped="1" time="1\.3">/);
  assert.match(text, /<testsuite name="empty" tests="0" failures="0" errors="0" skipped="0">/);
  assert.match(text, /<failure message="m"><\/failure>/, 'a failure without a type has no type attribute');
});
