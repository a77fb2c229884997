/** How the interop suite judges a flow (interop.ts), on results made up for the purpose. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judge, renderMarkdown } from './interop.ts';
import type { ClientBug, FlowResult } from './support/types.ts';

const exchange = (method: string, path: string, status: number, responseBody = '') => ({
  method,
  path,
  status,
  requestBody: '',
  responseBody,
});
const result = (flow: string, ok: boolean, exchanges: FlowResult['exchanges'], more: Partial<FlowResult> = {}): FlowResult => ({
  client: 'some-client',
  flow,
  profile: 'spec',
  strict: false,
  ok,
  ...(ok ? {} : { error: 'Error: it failed' }),
  exchanges,
  ...more,
});
const bug: ClientBug = {
  client: 'some-client',
  flow: 'checks a holder',
  what: 'sends MSISDN in upper case',
  contradicts: 'spec §4.2 #8',
  evidence: { method: 'GET', path: /\/accountholder\/MSISDN\//, status: 400 },
};

test('a failed flow is a client bug only when a known bug of that flow shows in one of its exchanges', () => {
  const { flows } = judge(
    [
      result('checks a holder', false, [exchange('GET', '/collection/v1_0/accountholder/MSISDN/4673/active', 400)]),
      result('pays', false, [exchange('POST', '/collection/v1_0/requesttopay', 400)]),
      result('reads the balance', true, [exchange('GET', '/collection/v1_0/account/balance', 200)]),
    ],
    [bug],
  );
  assert.deepEqual(
    flows.map((f) => f.verdict),
    ['client bug', 'SANDBOX FAILS IT', 'passes'],
  );
  assert.equal(flows[0]!.bug?.exchange.path, '/collection/v1_0/accountholder/MSISDN/4673/active');
});

test('a known bug whose flow fails another way, or now passes, is stale and explains nothing', () => {
  const otherWay = judge(
    [result('checks a holder', false, [exchange('GET', '/collection/v1_0/accountholder/msisdn/4673/active', 500)])],
    [bug],
  );
  assert.equal(otherWay.flows[0]!.verdict, 'SANDBOX FAILS IT');
  assert.equal(otherWay.stale.length, 1);
  const fixed = judge([result('checks a holder', true, [])], [bug]);
  assert.match(fixed.stale[0]!, /some-client \/ checks a holder: listed as a client bug/);
});

test('under --strict a refusal of a flow the default sandbox serves is a strict reading, not a failure', () => {
  const { flows } = judge(
    [
      result('pays', true, [exchange('POST', '/collection/v1_0/requesttopay', 202)]),
      result('pays', false, [exchange('POST', '/collection/v1_0/requesttopay', 400, '{"message":"unknown property \\"payee\\""}')], {
        strict: true,
      }),
    ],
    [],
  );
  assert.deepEqual(
    flows.map((f) => f.verdict),
    ['passes', 'strict reading'],
  );
  const markdown = renderMarkdown({ flows, stale: [] });
  assert.match(markdown, /refused: S1/);
  assert.match(markdown, /\*\*S1\*\* some-client: pays\. `POST \/collection\/v1_0\/requesttopay` answered 400/);
});

test('the page shows no id, port, token or key that changes from run to run, and no subscription key', () => {
  const path = '/v1_0/apiuser/5f7b4a33-d61e-407c-86f6-5b1aab1a3017/apikey';
  const body =
    '{"access_token":"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl","apiKey":"69a97275ef593ac87617caf9d0031219","callback":"http://127.0.0.1:41234/cb"}';
  const markdown = renderMarkdown(
    judge(
      [result('provisions', false, [exchange('POST', path, 400, body)])],
      [{ ...bug, flow: 'provisions', evidence: { method: 'POST', status: 400 } }],
    ),
  );
  assert.match(markdown, /\/v1_0\/apiuser\/\{uuid\}\/apikey/);
  for (const secret of ['5f7b4a33', 'eyJhbGci', '69a97275', '41234'])
    assert.ok(!markdown.includes(secret), `${secret} must not be on the page`);
});
