/**
 * The reproduction script of a failed scenario (harness/reproduction/script.ts), run for real with sh and curl
 * against a recording server: it provisions what the calls need from the MOMO_* variables, makes every reference
 * id fresh and keeps it consistent, carries a value from an answer to the request that sends it, sends a poll that
 * saw nothing new once, keeps the run's pauses, prints the answer to the failed call beside the run's, and runs
 * nothing that the evidence holds.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Exchange } from '../../harness/client/momo-client.ts';
import { NEW_ANSWER, RUN_GOT, reproductionScriptOf, type ScenarioToReproduce } from '../../harness/reproduction/script.ts';
import { finding } from '../../harness/checks/index.ts';

interface Received {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

let server: Server;
let target: string;
let received: Received[] = [];

before(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ method: request.method!, url: request.url!, headers: request.headers, body });
      const json = (status: number, value: unknown) =>
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
      if (request.url === '/v1_0/apiuser') return void response.writeHead(201).end();
      if (request.url!.endsWith('/apikey')) return json(201, { apiKey: 'f'.repeat(32) });
      if (request.url === '/collection/token/')
        return json(200, { access_token: 'token-of-the-script', token_type: 'access_token', expires_in: 3600 });
      if (request.url === '/collection/v1_0/bc-authorize')
        return json(200, { auth_req_id: 'a-new-auth-req-id-2', interval: 1, expires_in: 60 });
      if (request.url === '/collection/oauth2/token/')
        return json(200, { access_token: 'a-consent-token', token_type: 'Bearer', expires_in: 3600 });
      if (request.method === 'GET') return json(200, { status: 'SUCCESSFUL', amount: '13.5' });
      return void response.writeHead(202).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  target = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The run's target, which the evidence names: another address than the one the script is sent to. */
const RUN_BASE = 'http://127.0.0.1:1';
const REFERENCE = '0b3c7c0e-5e0a-4c1a-9f55-3c7a1d2e9b10';

function exchange(
  at: number,
  method: 'GET' | 'POST',
  path: string,
  answer: { status: number; body?: string },
  extra: Partial<Exchange> & { headers?: Record<string, string>; body?: string } = {},
): Exchange {
  const { headers = {}, body, ...rest } = extra;
  return {
    operation: `${method} ${path}`,
    startedAt: new Date(Date.UTC(2026, 10, 25, 12, 0, 0) + at).toISOString(),
    credentials: { subscriptionKey: 'collection', accessToken: { product: 'collection', tokenUrl: `${RUN_BASE}/collection/token/` } },
    request: {
      method,
      url: `${RUN_BASE}${path}`,
      headers: { 'Ocp-Apim-Subscription-Key': '[REDACTED]', Authorization: 'Bearer [REDACTED]', ...headers },
      ...(body !== undefined ? { body } : {}),
    },
    response: { status: answer.status, headers: { 'content-type': 'application/json' }, body: answer.body ?? '', durationMs: 10 },
    ...rest,
  };
}

function scenario(exchanges: Exchange[], failedAt?: number): ScenarioToReproduce {
  return {
    title: 'Payments › a customer who approves pays what was asked',
    exchanges,
    ...(failedAt !== undefined ? { failedAt } : {}),
    findings: [finding('record-echoes-request', { field: '/amount', expected: '"12.5"', received: '"13.5"' })],
    bases: { gateway: RUN_BASE, provisioning: RUN_BASE },
    callbackHost: '127.0.0.1',
  };
}

async function runScript(script: string, variables: Record<string, string> = {}): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'momo-script-'));
  const file = join(dir, 'reproduce.sh');
  writeFileSync(file, script);
  received = [];
  const env = { PATH: process.env.PATH!, MOMO_BASE_URL: target, MOMO_COLLECTION_KEY: 'the-collection-key', ...variables };
  const { stdout } = await promisify(execFile)('sh', [file], { encoding: 'utf8', env, cwd: dir, timeout: 30_000 });
  return stdout;
}

test("a status read after a wait: fresh reference id, the API user and token provisioned, one poll of each answer, the pause kept, the answer beside the run's", async () => {
  const pending = { status: 200, body: '{"status":"PENDING","amount":"12.5"}' };
  const exchanges = [
    exchange(
      0,
      'POST',
      '/collection/v1_0/requesttopay',
      { status: 202 },
      { headers: { 'X-Reference-Id': REFERENCE, 'Content-Type': 'application/json' }, body: '{"amount":"12.5","currency":"EUR"}' },
    ),
    exchange(100, 'GET', `/collection/v1_0/requesttopay/${REFERENCE}`, pending),
    exchange(300, 'GET', `/collection/v1_0/requesttopay/${REFERENCE}`, pending),
    exchange(500, 'GET', `/collection/v1_0/requesttopay/${REFERENCE}`, pending),
    exchange(1600, 'GET', `/collection/v1_0/requesttopay/${REFERENCE}`, { status: 200, body: '{"status":"SUCCESSFUL","amount":"13.5"}' }),
  ];
  const script = reproductionScriptOf(scenario(exchanges, 4))!;
  assert.ok(
    script.split('\n').every((line) => line.startsWith('#') || !line.includes(REFERENCE)),
    "the run's reference id is not sent again",
  );
  assert.match(script, /^# {3}record-echoes-request \(definite: .*\): \/amount: expected "12\.5", got "13\.5"$/m);
  assert.match(script, /^sleep 1\.1 /m, 'the run waited 1.1 s after the last PENDING read');
  const output = await runScript(script);

  const paths = received.map((r) => `${r.method} ${r.url}`);
  const fresh = received.find((r) => r.url === '/collection/v1_0/requesttopay')!.headers['x-reference-id'] as string;
  assert.match(fresh, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  assert.notEqual(fresh, REFERENCE);
  assert.deepEqual(paths, [
    'POST /v1_0/apiuser',
    `POST /v1_0/apiuser/${received[0]!.headers['x-reference-id']}/apikey`,
    'POST /collection/token/',
    'POST /collection/v1_0/requesttopay',
    `GET /collection/v1_0/requesttopay/${fresh}`, // the last PENDING read: the three polls that saw it are one
    `GET /collection/v1_0/requesttopay/${fresh}`,
  ]);
  // The provisioned API user and its token are the ones sent; the subscription key is the variable's.
  const basic = received[2]!.headers.authorization as string;
  assert.equal(
    Buffer.from(basic.replace('Basic ', ''), 'base64').toString(),
    `${received[0]!.headers['x-reference-id']}:${'f'.repeat(32)}`,
  );
  assert.equal(received[3]!.headers.authorization, 'Bearer token-of-the-script');
  assert.ok(received.every((r) => r.headers['ocp-apim-subscription-key'] === 'the-collection-key'));
  assert.equal(received[3]!.body, '{"amount":"12.5","currency":"EUR"}');
  // The new answer, then the run's.
  const [, afterMarker = ''] = output.split(`${NEW_ANSWER}\n`);
  assert.match(afterMarker, /^HTTP\/1\.1 200 OK\r\n/);
  assert.match(afterMarker, /\{"status":"SUCCESSFUL","amount":"13\.5"\}\n/);
  assert.match(output, new RegExp(`${RUN_GOT.replace(/[()]/g, '\\$&')} HTTP 200 \\{"status":"SUCCESSFUL","amount":"13\\.5"\\}\\n$`));
});

/** The run's bc-authorize, answered with the auth_req_id the consent token's body names. */
const bcAuthorizeAtStart = () =>
  exchange(
    0,
    'POST',
    '/collection/v1_0/bc-authorize',
    { status: 200, body: '{"auth_req_id":"the-runs-auth-req-id-1","interval":1,"expires_in":60}' },
    { headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'login_hint=ID%3A46733123450%2FMSISDN&scope=profile' },
  );
/** The consent token asked for with the API user's Basic credential and the run's auth_req_id. */
const CONSENT_TOKEN_REQUEST = {
  credentials: { subscriptionKey: 'collection' as const, basic: 'collection' as const },
  headers: { Authorization: 'Basic [REDACTED]', 'Content-Type': 'application/x-www-form-urlencoded' },
  body: 'grant_type=urn%3Aopenid%3Aparams%3Agrant-type%3Aciba&auth_req_id=the-runs-auth-req-id-1',
};

test('a configured API user is used as it is, and a value an answer gave (an auth_req_id) is read from the new answer', async () => {
  const exchanges = [
    bcAuthorizeAtStart(),
    exchange(
      50,
      'POST',
      '/collection/oauth2/token/',
      { status: 200, body: '{"access_token":"[REDACTED]","token_type":"Bearer"}' },
      CONSENT_TOKEN_REQUEST,
    ),
    exchange(
      100,
      'GET',
      '/collection/oauth2/v1_0/userinfo',
      { status: 200, body: '{"sub":"0"}' },
      { credentials: { subscriptionKey: 'collection', otherToken: true } },
    ),
  ];
  const script = reproductionScriptOf(scenario(exchanges, 2))!;
  const user = '3f1c2a4e-6b7d-4e8f-9a0b-1c2d3e4f5a6b';
  await runScript(script, { MOMO_COLLECTION_USER_ID: user, MOMO_COLLECTION_API_KEY: 'k'.repeat(32) });
  assert.deepEqual(
    received.map((r) => r.url),
    ['/collection/token/', '/collection/v1_0/bc-authorize', '/collection/oauth2/token/', '/collection/oauth2/v1_0/userinfo'],
    'no API user provisioned',
  );
  assert.equal(received[2]!.body, 'grant_type=urn%3Aopenid%3Aparams%3Agrant-type%3Aciba&auth_req_id=a-new-auth-req-id-2');
  assert.equal(received[2]!.headers.authorization, `Basic ${Buffer.from(`${user}:${'k'.repeat(32)}`).toString('base64')}`);
  assert.equal(received[3]!.headers.authorization, 'Bearer a-consent-token', 'the consent token the new answer gave');
});

test('a consent token the run asked for while authorization was pending is asked for once, after the wait the run made', async () => {
  const basic = CONSENT_TOKEN_REQUEST;
  const pending = { status: 400, body: '{"error":"authorization_pending"}' };
  const exchanges = [
    bcAuthorizeAtStart(),
    exchange(50, 'POST', '/collection/oauth2/token/', pending, basic),
    exchange(600, 'POST', '/collection/oauth2/token/', pending, basic),
    exchange(1200, 'POST', '/collection/oauth2/token/', { status: 200, body: '{"access_token":"[REDACTED]","scope":"all"}' }, basic),
  ];
  const script = reproductionScriptOf(scenario(exchanges, 3))!;
  assert.match(script, /^sleep 1\.2 /m, 'the whole wait before the token the run got');
  await runScript(script, { MOMO_COLLECTION_USER_ID: '3f1c2a4e-6b7d-4e8f-9a0b-1c2d3e4f5a6b', MOMO_COLLECTION_API_KEY: 'k'.repeat(32) });
  assert.deepEqual(
    received.map((r) => r.url),
    ['/collection/token/', '/collection/v1_0/bc-authorize', '/collection/oauth2/token/'],
    'one redemption: an early one could take the consent the failing call is about',
  );
});

test('a creation or notification that succeeded twice is sent twice; a failure after the last call replays them all', async () => {
  const notify = (at: number) =>
    exchange(
      at,
      'POST',
      `/collection/v1_0/requesttopay/${REFERENCE}/deliverynotification`,
      { status: 200 },
      { headers: { 'Content-Type': 'application/json' }, body: '{"notificationMessage":"delivered"}' },
    );
  const script = reproductionScriptOf(scenario([notify(0), notify(10)]))!;
  assert.match(script, /^# The failure came after its last call/m);
  await runScript(script);
  assert.equal(received.filter((r) => r.url.endsWith('/deliverynotification')).length, 2);
});

test('nothing the evidence holds runs in the shell, and a missing variable is named', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'momo-hostile-'));
  const marker = join(dir, 'ran');
  const hostile = `'; touch ${marker}; echo '$(touch ${marker})\`touch ${marker}\`\n# a line\r\ntouch ${marker}`;
  const exchanges = [
    exchange(
      0,
      'POST',
      '/collection/v1_0/requesttopay',
      { status: 500, body: `{"message":${JSON.stringify(hostile)}}` },
      {
        operation: `request to pay\ntouch ${marker}`,
        headers: { 'X-Reference-Id': REFERENCE, 'X-Callback-Url': `http://h/${hostile.replace(/\s/g, '')}` },
        body: hostile,
      },
    ),
  ];
  const script = reproductionScriptOf({ ...scenario(exchanges, 0), title: `a title\ntouch ${marker}` })!;
  await runScript(script);
  assert.equal(existsSync(marker), false, 'no command of the evidence ran');
  assert.equal(received.at(-1)!.body, hostile, 'the body is sent byte for byte');

  const missing = await promisify(execFile)('sh', ['-c', script], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH!, MOMO_BASE_URL: target },
  }).then(
    () => '',
    (error: { stderr: string }) => error.stderr,
  );
  assert.match(missing, /MOMO_COLLECTION_KEY: set MOMO_COLLECTION_KEY to the collection subscription key the run used/);
});

test('no script when the evidence holds no call to send (the budget spent)', () => {
  const omitted: Exchange = { operation: 'x', request: { method: 'GET', url: `${RUN_BASE}/`, headers: {} }, omitted: 'budget spent' };
  assert.equal(reproductionScriptOf(scenario([omitted])), undefined);
});
