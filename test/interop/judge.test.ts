/** How the interop suite judges a flow (interop.ts) from what the client report found, on results made up for the purpose. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judge, renderMarkdown } from './interop.ts';
import type { ClientNote, FlowFinding, FlowResult } from './support/types.ts';

const exchange = (method: string, path: string, status: number, responseBody = '') => ({
  method,
  path,
  status,
  requestBody: '',
  responseBody,
});
const finding = (rule: string, severity: FlowFinding['severity'], over: Partial<FlowFinding> = {}): FlowFinding => ({
  rule,
  name: `the rule ${rule}`,
  severity,
  client: 'API user 5f7b4a33-d61e-407c-86f6-5b1aab1a3017 (collection)',
  detail: `broke ${rule}`,
  source: 'spec §4.2 #8',
  fix: 'Do it right.',
  exchange: { method: 'GET', target: '/collection/v1_0/accountholder/MSISDN/4673/active', status: 400 },
  ...over,
});
const result = (flow: string, ok: boolean, findings: FlowFinding[], more: Partial<FlowResult> = {}): FlowResult => ({
  client: 'mtn-momo',
  flow,
  profile: 'spec',
  strict: false,
  ok,
  ...(ok ? {} : { error: 'Error: it failed' }),
  exchanges: [],
  findings,
  ...more,
});

test('a failed flow is a client bug when the client report found a violation of a rule that names the mistake', () => {
  const { flows, bugs } = judge(
    [
      result('checks a holder', false, [finding('account-holder-kind-case', 'violation')]),
      result('pays', false, []),
      result('polls', false, [finding('polling-rate', 'practice')]),
      result('reads the balance', true, []),
    ],
    [],
  );
  assert.deepEqual(
    flows.map((f) => f.verdict),
    ['client bug', 'SANDBOX FAILS IT', 'SANDBOX FAILS IT', 'passes'],
  );
  assert.deepEqual(
    bugs.map((b) => [b.ref, b.client, b.rule]),
    [['B1', 'mtn-momo', 'account-holder-kind-case']],
  );
  assert.equal(flows[0]!.bug, bugs[0]);
});

test("a failed flow with nothing but the sandbox's refusal is a client bug only when a note confirms it: the sandbox may be wrong", () => {
  const refused = [result('provisions', false, [finding('request-refused', 'violation')])];
  assert.equal(judge(refused, []).flows[0]!.verdict, 'SANDBOX FAILS IT');
  const note: ClientNote = { client: 'mtn-momo', rule: 'request-refused', what: 'it sends a body the API refuses' };
  const confirmed = judge(refused, [note]);
  assert.equal(confirmed.flows[0]!.verdict, 'client bug');
  assert.equal(confirmed.bugs[0]!.note, note);
});

test('bugs are numbered by the order of the clients, then of the rules; one client breaking one rule in many flows is one bug', () => {
  const { bugs, flows } = judge(
    [
      result('provisions', false, [finding('reference-id-v4', 'violation')], { client: 'mtn-momo-sdk' }),
      result('checks a holder', false, [finding('account-holder-kind-case', 'violation')], { client: 'code-coast-momo-api' }),
      result('checks a payee', false, [finding('account-holder-kind-case', 'violation')], { client: 'code-coast-momo-api' }),
      result('checks a holder', false, [finding('account-holder-kind-case', 'violation')]),
    ],
    [],
  );
  assert.deepEqual(
    bugs.map((b) => `${b.ref} ${b.client} ${b.rule}`),
    ['B1 mtn-momo account-holder-kind-case', 'B2 code-coast-momo-api account-holder-kind-case', 'B3 mtn-momo-sdk reference-id-v4'],
  );
  assert.equal(flows[1]!.bug, flows[2]!.bug);
});

test('a note whose rule no run of its client breaks any more is stale', () => {
  const note: ClientNote = { client: 'mtn-momo', rule: 'account-holder-kind-case', what: 'isPayerActive sends MSISDN' };
  assert.deepEqual(judge([result('checks a holder', false, [finding('account-holder-kind-case', 'violation')])], [note]).stale, []);
  const fixed = judge([result('checks a holder', true, [])], [note]);
  assert.match(fixed.stale[0]!, /^mtn-momo \/ account-holder-kind-case: a note explains this bug/);
});

test('under --strict a refusal of a flow the default sandbox serves is a strict reading, not a failure', () => {
  const refusal = exchange('POST', '/collection/v1_0/requesttopay', 400, '{"message":"unknown property \\"payee\\""}');
  const { flows, bugs } = judge(
    [result('pays', true, []), result('pays', false, [finding('request-refused', 'violation')], { strict: true, exchanges: [refusal] })],
    [],
  );
  assert.deepEqual(
    flows.map((f) => f.verdict),
    ['passes', 'strict reading'],
  );
  const markdown = renderMarkdown({ flows, bugs, stale: [] });
  assert.match(markdown, /refused: S1/);
  assert.match(markdown, /\*\*S1\*\* mtn-momo: pays\. `POST \/collection\/v1_0\/requesttopay` answered 400/);
});

test("under --strict a flow refused before its client bug could show is a strict reading; the bug stays the default runs' finding", () => {
  const refusal = exchange('POST', '/v1_0/apiuser', 400, '{"message":"providerCallbackHost is not a host name"}');
  const { flows, bugs } = judge(
    [
      result('provisions and pays', false, [finding('reference-id-v4', 'violation')], { client: 'mtn-momo-sdk' }),
      result('provisions and pays', false, [finding('request-refused', 'violation')], {
        client: 'mtn-momo-sdk',
        strict: true,
        exchanges: [refusal],
      }),
    ],
    [],
  );
  assert.deepEqual(
    flows.map((f) => f.verdict),
    ['client bug', 'strict reading'],
  );
  assert.deepEqual(
    bugs.map((b) => b.rule),
    ['reference-id-v4'],
  );
});

test('the page gives each bug with its rule, source, exchange, fix and note, and what else the report found', () => {
  const note: ClientNote = {
    client: 'mtn-momo',
    rule: 'account-holder-kind-case',
    what: 'isPayerActive sends MSISDN',
    workaround: 'pass "msisdn"',
  };
  const markdown = renderMarkdown(
    judge(
      [
        result('checks a holder', false, [finding('account-holder-kind-case', 'violation')]),
        result('pays', true, [finding('token-reuse', 'practice')]),
      ],
      [note],
    ),
  );
  for (const words of [
    '### B1 mtn-momo: account-holder-kind-case',
    '**Found by:** the rule `account-holder-kind-case`',
    'spec §4.2 #8',
    '**Where in the client:** isPayerActive sends MSISDN',
    '`GET /collection/v1_0/accountholder/MSISDN/4673/active` answered 400',
    '**The flows it fails:** checks a holder',
    '**Fix:** Do it right.',
    '**Workaround:** pass "msisdn"',
    '**mtn-momo** `token-reuse` (practice): the rule token-reuse. In: pays.',
  ])
    assert.ok(markdown.includes(words), `the page lacks ${words}\n${markdown}`);
});

test('the page shows no id, port, token or key that changes from run to run, and no subscription key', () => {
  const body =
    '{"access_token":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl","apiKey":"69a97275ef593ac87617caf9d0031219","callback":"http://127.0.0.1:41234/cb","key":"sandbox-collection-key"}';
  const markdown = renderMarkdown(
    judge(
      [
        result('provisions', false, [
          finding('reference-id-v4', 'violation', {
            detail: 'sent X-Reference-Id "5f7b4a33-d61e-407c-86f6-5b1aab1a3017"',
            exchange: {
              method: 'POST',
              target: '/v1_0/apiuser/5f7b4a33-d61e-407c-86f6-5b1aab1a3017/apikey',
              status: 400,
              responseBody: body,
            },
          }),
        ]),
      ],
      [],
    ),
  );
  assert.match(markdown, /\/v1_0\/apiuser\/\{uuid\}\/apikey/);
  for (const secret of ['5f7b4a33', 'eyJhbGci', '69a97275', '41234', 'sandbox-collection-key'])
    assert.ok(!markdown.includes(secret), `${secret} must not be on the page`);
});
