import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { existsSync, mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Exchange } from '../../harness/client/momo-client.ts';
import { bodyForEvidence, EVIDENCE_BODY_CHARS } from '../../harness/client/evidence-budget.ts';
import { curlOf, quote } from '../../harness/reproduction/curl.ts';
import { harOf } from '../../harness/reproduction/har.ts';
import { describeErrors, validatorFor } from '../../core/validation/schemas.ts';

const CREATOR = { name: 'momo-conformance-harness', version: '0.0.0' };

function requestToPay(overrides: Partial<Exchange['request']> = {}): Exchange {
  return {
    operation: 'request to pay (collection)',
    startedAt: '2026-03-10T12:00:00.000Z',
    credentials: {
      subscriptionKey: 'collection',
      accessToken: { product: 'collection', tokenUrl: 'http://127.0.0.1:1/collection/token/' },
    },
    request: {
      method: 'POST',
      url: 'http://127.0.0.1:1/collection/v1_0/requesttopay',
      headers: {
        'Ocp-Apim-Subscription-Key': '[REDACTED]',
        Authorization: 'Bearer [REDACTED]',
        'X-Reference-Id': '0b3c7c0e-5e0a-4c1a-9f55-3c7a1d2e9b10',
        'Content-Type': 'application/json',
      },
      body: '{"amount":"1","currency":"EUR"}',
      ...overrides,
    },
    response: {
      status: 500,
      headers: { 'content-type': 'application/json' },
      body: '{"code":"INTERNAL_PROCESSING_ERROR"}',
      durationMs: 12,
    },
  };
}

test('a reproduction names each secret by its environment variable and fetches the access token first, never a value', () => {
  const curl = curlOf(requestToPay())!;
  assert.match(
    curl,
    /^MOMO_TOKEN=\$\(curl -sS -X POST -u "\$MOMO_COLLECTION_USER_ID:\$MOMO_COLLECTION_API_KEY" -H 'Ocp-Apim-Subscription-Key: '"\$MOMO_COLLECTION_KEY" 'http:\/\/127\.0\.0\.1:1\/collection\/token\/'/m,
  );
  assert.match(curl, /-H 'Ocp-Apim-Subscription-Key: '"\$MOMO_COLLECTION_KEY"/);
  assert.match(curl, /-H 'Authorization: Bearer '"\$MOMO_TOKEN"/);
  assert.match(curl, /--data-binary '\{"amount":"1","currency":"EUR"\}' 'http:\/\/127\.0\.0\.1:1\/collection\/v1_0\/requesttopay'$/);
  assert.doesNotMatch(curl, /REDACTED/);
});

test("Basic credentials become -u with the API user's variables; a consent token becomes $MOMO_TOKEN with a note", () => {
  const basic = curlOf({ ...requestToPay({ headers: { Authorization: 'Basic [REDACTED]' } }), credentials: { basic: 'disbursement' } })!;
  assert.match(basic, /-u "\$MOMO_DISBURSEMENT_USER_ID:\$MOMO_DISBURSEMENT_API_KEY"/);
  const consent = curlOf({ ...requestToPay({ headers: { Authorization: 'Bearer [REDACTED]' } }), credentials: { otherToken: true } })!;
  assert.match(consent, /^# MOMO_TOKEN: .*a consent token/m);
  const wrong = curlOf({ ...requestToPay({ headers: { Authorization: 'Basic [REDACTED]' } }), credentials: { otherBasic: true } })!;
  assert.match(wrong, /-H 'Authorization: Basic '"\$MOMO_BASIC_CREDENTIAL"/);
  assert.match(consent, /-H 'Authorization: Bearer '"\$MOMO_TOKEN"/);
  assert.equal(curlOf({ operation: 'x', request: { method: 'GET', url: 'http://h/', headers: {} }, omitted: 'budget spent' }), undefined);
});

test('whatever the evidence holds, the command sends it as it is and runs nothing of it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'momo-curl-'));
  const planted = join(dir, 'planted');
  const hostile = `'; touch ${planted}; echo '$(touch ${planted})\`touch ${planted}\`"$HOME"\\'\n' `;
  let seen: { headers: IncomingHttpHeaders; body: string; url: string } | undefined;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), url: req.url! };
      res.writeHead(418).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x?q=${encodeURIComponent("'$(x)")}`;
    const curl = curlOf({
      operation: 'x',
      request: {
        method: 'POST',
        url,
        headers: { 'X-Callback-Url': hostile.replace(/\n/g, ' '), 'Content-Type': 'text/plain' },
        body: hostile,
      },
    })!;
    const { stdout: out } = await promisify(execFile)('bash', ['-c', curl], { encoding: 'utf8', env: { PATH: process.env.PATH } });
    assert.match(out, /^HTTP\/1\.1 418/);
    assert.equal(seen?.body, hostile);
    assert.equal(seen?.headers['x-callback-url'], hostile.replace(/\n/g, ' ').trim(), 'HTTP trims a header value, nothing else changes');
    assert.equal(existsSync(planted), false, 'nothing of the evidence ran');
    assert.equal(quote("it's"), `'it'\\''s'`);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test("a scenario's exchanges as HAR 1.2 follow the schema, with truncated bodies and calls without an answer marked", () => {
  const long = 'x'.repeat(EVIDENCE_BODY_CHARS + 10);
  const cut = bodyForEvidence(long, { bytes: long.length });
  const exchanges: Exchange[] = [
    requestToPay(),
    { ...requestToPay(), response: { status: 200, headers: { 'content-type': 'text/plain' }, durationMs: 3, ...cut } },
    { ...requestToPay(), response: undefined, transportError: 'timed out' },
    {
      operation: 'x',
      request: { method: 'GET', url: 'http://127.0.0.1:1/y', headers: {} },
      omitted: 'HTTP 200 in 3 ms; not recorded: the budget was spent',
    },
  ];
  const har = harOf({ title: 'Payments › a request to pay', exchanges }, CREATOR, '2026-03-10T12:00:00.000Z');
  const validate = validatorFor('har');
  assert.ok(validate(har), describeErrors(validate.errors).join('\n'));
  const [, truncated, unanswered, omitted] = har.log.entries;
  assert.match(truncated!.response.content.comment!, /^truncated: the evidence keeps 32768 of 32778 characters/);
  assert.equal(unanswered!.response.status, 0);
  assert.match(unanswered!.response.comment!, /no response: timed out/);
  assert.match(omitted!.response.comment!, /budget was spent/);
  assert.equal(
    validate({ log: { version: '1.2', creator: CREATOR, entries: [{ startedDateTime: 'yesterday' }] } }),
    false,
    'the schema refuses what is not HAR',
  );
});
