import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { reportSafe } from '../../core/report-text.ts';
import { REDACTED, Redactor } from '../../core/secrets/redact.ts';
import { EVIDENCE_BODY_CHARS, EvidenceBudget, bodyForEvidence } from '../../harness/client/evidence-budget.ts';
import type { Exchange } from '../../harness/client/momo-client.ts';

/** What no report may be handed: ]]>, C0 and C1 controls but tab, line feed and carriage return, lone surrogates, U+FFFE and U+FFFF. */
const UNSAFE =
  /\]\]>|[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

test('reportSafe writes every character a report cannot hold as a \\u escape, every occurrence, and leaves the rest readable', () => {
  assert.equal(reportSafe('a]]>b]]>c'), 'a]]\\u003eb]]\\u003ec');
  assert.equal(
    reportSafe('bell\u0007 nul\u0000 esc\u001b del\u007f nel\u0085 \u009f'),
    'bell\\u0007 nul\\u0000 esc\\u001b del\\u007f nel\\u0085 \\u009f',
  );
  assert.equal(
    reportSafe('lone \ud800 and \udc00, pair \ud83d\ude00, \ufffe\uffff'),
    'lone \\ud800 and \\udc00, pair \ud83d\ude00, \\ufffe\\uffff',
  );
  assert.equal(reportSafe('tab\tline\ncr\r é € </script> <!-- & " \''), 'tab\tline\ncr\r é € </script> <!-- & " \'');
});

test('inside a JSON text the escapes mean what they replace: any JSON value reads back the same, and nothing unsafe is left', () => {
  // Any UTF-16 code unit, lone surrogates included.
  const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));
  fc.assert(
    fc.property(fc.jsonValue(), fc.string({ unit: codeUnit }), (value, text) => {
      const json = JSON.stringify({ value, text, hostile: `${text}]]>${text}]]>` });
      const safe = reportSafe(json);
      assert.doesNotMatch(safe, UNSAFE);
      assert.deepEqual(JSON.parse(safe), JSON.parse(json));
    }),
    { numRuns: 300 },
  );
});

test('what the redactor gives (text, headers, body) is safe for any report; a JSON body stays the same JSON, secrets still masked', () => {
  const redactor = new Redactor();
  redactor.add('sandbox-collection-key', 'subscription key');
  const hostile = { message: 'x]]>y]]>\u0001\u0085\ud800\ufffe</script><!--', echo: 'sandbox-collection-key' };
  const body = redactor.body(JSON.stringify(hostile));
  assert.doesNotMatch(body, UNSAFE);
  assert.deepEqual(JSON.parse(body), { message: 'x]]>y]]>\u0001\u0085\ud800\ufffe</script><!--', echo: REDACTED });
  const text = redactor.text('not json ]]> \u0002 sandbox-collection-key');
  assert.equal(text, `not json ]]\\u003e \\u0002 ${REDACTED}`);
  const headers = redactor.headers({ 'x-debug': 'a]]>\u0085', 'ocp-apim-subscription-key': 'sandbox-collection-key' });
  assert.deepEqual(headers, { 'x-debug': 'a]]\\u003e\\u0085', 'ocp-apim-subscription-key': REDACTED });
  assert.equal(redactor.body(' \u000b '), ' \\u000b ');
});

test('the evidence keeps a body up to 32 KiB, then says where it was cut and how long it was; it never leaves half a surrogate pair', () => {
  assert.deepEqual(bodyForEvidence('{"a":1}', { bytes: 7 }), { body: '{"a":1}' });
  const long = `${'z'.repeat(EVIDENCE_BODY_CHARS - 1)}\ud83d\ude00${'z'.repeat(100)}`;
  const { body, bodyCut } = bodyForEvidence(long, { bytes: 40_000 });
  assert.deepEqual(bodyCut, { keptCharacters: EVIDENCE_BODY_CHARS - 1, characters: long.length, bytes: 40_000 });
  assert.doesNotMatch(body, UNSAFE);
  assert.ok(
    body.endsWith(
      `\n… [cut after ${EVIDENCE_BODY_CHARS - 1} of ${long.length} characters (40000 bytes): the evidence keeps 32 KiB of a body]`,
    ),
    body.slice(-200),
  );
  const exceeded = bodyForEvidence('short', { bytes: 5, exceededLimit: 2048 });
  assert.equal(
    exceeded.body,
    'short\n… [the body exceeded 2 KiB (MOMO_MAX_RESPONSE_BYTES): the harness read that much of it and no further]',
  );
  assert.deepEqual(exceeded.bodyCut, { keptCharacters: 5, characters: 5, bytes: 5, exceededLimit: 2048 });
});

test('the evidence budget keeps exchanges whole while they fit; past it each is recorded as omitted, with its call and outcome only', () => {
  const exchange = (n: number, body: string): Exchange => ({
    operation: `get account balance (collection) #${n}`,
    request: {
      method: 'GET',
      url: `http://target/collection/v1_0/account/balance?n=${n}`,
      headers: { Authorization: 'Bearer [REDACTED]' },
    },
    response: { status: 200, headers: { 'content-type': 'application/json' }, body, durationMs: 4 },
  });
  const budget = new EvidenceBudget(10_000, '10 KiB shared by 2 workers');
  const kept = [budget.admit(exchange(1, 'a'.repeat(4000))), budget.admit(exchange(2, 'b'.repeat(4000)))];
  assert.deepEqual(
    kept.map((e) => e.omitted),
    [undefined, undefined],
  );
  const omitted = budget.admit(exchange(3, 'c'.repeat(4000)));
  assert.deepEqual(omitted, {
    operation: 'get account balance (collection) #3',
    request: { method: 'GET', url: 'http://target/collection/v1_0/account/balance?n=3', headers: {} },
    omitted:
      "HTTP 200 in 4 ms; not recorded: the run's evidence budget (MOMO_EVIDENCE_BUDGET_BYTES, 10 KiB shared by 2 workers) was spent, so only the call and its outcome are kept",
  });
  // A small one that still fits is kept: the budget bounds the bytes, not the count.
  assert.equal(budget.admit(exchange(4, 'd')).omitted, undefined);
  assert.equal(budget.omitted, 1);
  const nothing = new EvidenceBudget(0);
  assert.match(
    nothing.admit({ operation: 'op', request: { method: 'GET', url: 'u', headers: {} }, transportError: 'connection reset' }).omitted ?? '',
    /^no response: connection reset; not recorded: the run's evidence budget \(MOMO_EVIDENCE_BUDGET_BYTES, 0 bytes\) was spent/,
  );
});
