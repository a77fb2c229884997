/**
 * The client report (--client-report, sandbox/client-report): each rule fires on a client that breaks it and
 * stays silent on one that keeps it; a cut creation retried under a new X-Reference-Id is the double-payment
 * finding, under the same one none; chaos conditions are told with how the client coped; the report's three
 * files follow their schema, carry no secret in any encoding, stay well formed whatever a client sends, and
 * keep bounded memory. A sandbox without the flag has no report at all.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeErrors, validatorFor } from '../../core/validation/schemas.ts';
import { scanForSecrets } from '../../harness/secrets/leak-scan.ts';
import { CLIENT_REPORT_FILES, CLIENT_REPORT_ROUTES, type ClientReport } from '../../sandbox/client-report/client-report.ts';
import type { ObservedExchange, Principal } from '../../sandbox/client-report/observed.ts';
import { MAX_CLIENTS, MAX_FINDINGS_PER_CLIENT, Recorder } from '../../sandbox/client-report/recorder.ts';
import type { ClientReportDocument } from '../../sandbox/client-report/report.ts';
import { RULES, SLOW_CALLBACK_SHARE } from '../../sandbox/client-report/rules.ts';
import { chaosPlugin } from '../../sandbox/chaos/chaos.ts';
import type { SandboxPlugin } from '../../sandbox/domain/plugins.ts';
import { resolveSettings } from '../../sandbox/domain/settings.ts';
import {
  KEYS,
  basic,
  bcAuthorize,
  consentToken,
  eventually,
  path,
  requestToPayBody,
  startSandbox,
  type Caller,
  type TestSandbox,
} from '../support/sandbox.ts';

const FORM = 'application/x-www-form-urlencoded';
const CIBA = 'urn:openid:params:grant-type:ciba';
const CONSENT_FORM = 'login_hint=ID:46733123499/MSISDN&scope=profile&access_type=offline';
/** Callback attempts that a listener answering at once ends well inside, even on a machine busy with other work. */
const SLOW_MACHINE = { callbackTimeoutMs: 20_000 };

// ---------------------------------------------------------------------------------------------
// A sandbox with a report, a callback listener, and what a test reads of the report
// ---------------------------------------------------------------------------------------------

interface ReportSandbox extends TestSandbox {
  report: ClientReport;
  dir: string;
}

async function withReport(
  body: (sandbox: ReportSandbox) => Promise<void>,
  settings: Parameters<typeof startSandbox>[0] = {},
  plugins: readonly SandboxPlugin[] = [],
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'momo-client-report-'));
  const sandbox = await startSandbox({ clientReport: dir, ...settings }, { plugins });
  try {
    assert.ok(sandbox.clientReport, 'the sandbox keeps a client report');
    await body({ ...sandbox, report: sandbox.clientReport, dir });
  } finally {
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each finding of the report, as "<rule>" of the client that made it. */
function findings(sandbox: ReportSandbox, client?: string): { client: string; rule: string; count: number; detail: string }[] {
  return sandbox.report
    .document()
    .clients.filter((c) => client === undefined || c.id === client)
    .flatMap((c) => c.findings.map((f) => ({ client: c.id, rule: f.rule, count: f.count, detail: f.detail })));
}

const rulesFound = (sandbox: ReportSandbox, client?: string) => [...new Set(findings(sandbox, client).map((f) => f.rule))].sort();
const userOf = (caller: Caller) => `api-user:${caller.userId}`;

interface Listener {
  url: string;
  close(): Promise<void>;
}

/** A callback listener on 127.0.0.1 that answers each callback with `status`, or never ('hang'). */
async function startListener(status: number | 'hang' = 200): Promise<Listener> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (status !== 'hang') res.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/momo/callback`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function pay(
  sandbox: TestSandbox,
  caller: Caller,
  referenceId: string,
  body: unknown = requestToPayBody(),
  headers: Record<string, string> = {},
) {
  return sandbox.call({
    method: 'POST',
    url: path('requestToPay', 'collection'),
    headers: { ...caller.headers, 'x-reference-id': referenceId, ...headers },
    payload: body,
  });
}

function readStatus(sandbox: TestSandbox, caller: Caller, referenceId: string) {
  return sandbox.call({ method: 'GET', url: path('getRequestToPayStatus', 'collection', { referenceId }), headers: caller.headers });
}

function newToken(sandbox: TestSandbox, caller: Caller) {
  return sandbox.call({
    method: 'POST',
    url: path('createAccessToken', caller.product),
    headers: { 'ocp-apim-subscription-key': KEYS[caller.product], authorization: basic(caller.userId, caller.apiKey) },
  });
}

const pollConsent = (sandbox: TestSandbox, caller: Caller, authReqId: string) =>
  consentToken(sandbox, caller, `grant_type=${CIBA}&auth_req_id=${authReqId}`);

/**
 * What a careful client does: provisions with fresh UUIDs, keeps one token, pays with a fresh id and a callback
 * its listener answers at once, reads the status once the payment is over, checks a holder in lower case, and
 * polls the consent flow at bc-authorize's interval.
 */
async function wellBehavedClient(sandbox: TestSandbox, listener: Listener): Promise<Caller> {
  const caller = await sandbox.provision('collection');
  const id = randomUUID();
  assert.equal((await pay(sandbox, caller, id, requestToPayBody(), { 'x-callback-url': listener.url })).statusCode, 202);
  await sandbox.context.callbacks.settled();
  assert.equal((await readStatus(sandbox, caller, id)).json().status, 'SUCCESSFUL');
  const balance = await sandbox.call({ method: 'GET', url: path('getBalance', 'collection'), headers: caller.headers });
  assert.equal(balance.statusCode, 200);
  const holder = await sandbox.call({
    method: 'GET',
    url: path('accountHolderActive', 'collection', { accountHolderIdType: 'msisdn', accountHolderId: '46733123499' }),
    headers: caller.headers,
  });
  assert.equal(holder.statusCode, 200);
  const authorized = await bcAuthorize(sandbox, caller);
  assert.equal(authorized.statusCode, 200, authorized.body);
  const { auth_req_id: authReqId, interval } = authorized.json() as { auth_req_id: string; interval: number };
  sandbox.clock.advance(interval * 1000);
  assert.equal((await pollConsent(sandbox, caller, authReqId)).statusCode, 200);
  return caller;
}

// ---------------------------------------------------------------------------------------------
// The rules, each fired and each kept
// ---------------------------------------------------------------------------------------------

describe('the client report: each rule', { concurrency: true }, () => {
  test('a well-behaved client gets a report with no finding, in every file', async () => {
    const listener = await startListener(200);
    try {
      await withReport(async (sandbox) => {
        const caller = await wellBehavedClient(sandbox, listener);
        const report = sandbox.report.document();
        assert.deepEqual(findings(sandbox), [], 'no client has a finding');
        const client = report.clients.find((c) => c.id === userOf(caller));
        assert.ok(client, 'the API user is a client of the report');
        assert.ok(client.requests >= 6 && client.callbacks === 1, JSON.stringify(client));
        assert.ok(
          report.clients.some((c) => c.kind === 'subscription-key' && c.label.startsWith('collection key #')),
          'provisioning is reported under the subscription key, named by its product and a short hash',
        );
        await sandbox.report.write();
        const junit = readFileSync(join(sandbox.dir, CLIENT_REPORT_FILES.junit), 'utf8');
        assert.equal((junit.match(/<testcase /g) ?? []).length, report.clients.length * RULES.length, 'a test case per rule per client');
        assert.ok(!junit.includes('<failure'), 'nothing fails');
        assert.match(
          readFileSync(join(sandbox.dir, CLIENT_REPORT_FILES.html), 'utf8'),
          /No client did anything that puts money or security at stake/,
        );
      }, SLOW_MACHINE);
    } finally {
      await listener.close();
    }
  });

  test('account-holder-kind-case: MSISDN in upper case, in a parameter and in a path word, is the finding; not a refusal too', async () => {
    await withReport(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const upper = await sandbox.call({
        method: 'GET',
        url: '/collection/v1_0/accountholder/MSISDN/46733123499/active',
        headers: caller.headers,
      });
      assert.equal(upper.statusCode, 400);
      const basicInfo = await sandbox.call({
        method: 'GET',
        url: '/collection/v1_0/accountholder/MSISDN/46733123499/basicuserinfo',
        headers: caller.headers,
      });
      assert.equal(basicInfo.statusCode, 404);
      assert.deepEqual(rulesFound(sandbox, userOf(caller)), ['account-holder-kind-case']);
      const details = findings(sandbox, userOf(caller)).map((f) => f.detail);
      assert.ok(
        details.some((d) => d.includes('accountHolderIdType') && d.includes('"msisdn"')),
        details.join('\n'),
      );
      assert.ok(
        details.some((d) => d.includes('/collection/v1_0/accountholder/msisdn/{accountHolderMSISDN}/basicuserinfo')),
        details.join('\n'),
      );
    });
  });

  test('reference-id-v4: "[object Object]", a UUID of version 1 and no X-Reference-Id are each a finding; a UUID v4 is none', async () => {
    await withReport(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const keyOnly = { 'ocp-apim-subscription-key': KEYS.collection };
      for (const id of ['[object Object]', 'c232ab00-9414-11ec-b3c8-9f6bdeced846']) {
        const created = await sandbox.call({
          method: 'POST',
          url: path('createApiUser'),
          headers: { ...keyOnly, 'x-reference-id': id },
          payload: { providerCallbackHost: '127.0.0.1' },
        });
        assert.equal(created.statusCode, 400);
      }
      assert.equal((await pay(sandbox, caller, '')).statusCode, 400);
      assert.equal((await pay(sandbox, caller, randomUUID())).statusCode, 202);
      const all = findings(sandbox);
      assert.deepEqual([...new Set(all.map((f) => f.rule))], ['reference-id-v4'], JSON.stringify(all));
      assert.deepEqual(all.map((f) => f.detail.replace(/"[^"]*"/, '"…"')).sort(), [
        'sent X-Reference-Id "…", a UUID of version 1 (create API user)',
        'sent X-Reference-Id "…", which is not a UUID (create API user)',
        'sent no X-Reference-Id (request to pay)',
      ]);
    });
  });

  test('reference-id-reused: the id of an earlier payment sent again for another one is the finding; for the same one it is none', async () => {
    await withReport(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const id = randomUUID();
      assert.equal((await pay(sandbox, caller, id)).statusCode, 202);
      assert.equal((await pay(sandbox, caller, id)).statusCode, 409, 'a retry of the same payment');
      assert.deepEqual(rulesFound(sandbox), []);
      assert.equal((await pay(sandbox, caller, id, requestToPayBody('46733123499', '99'))).statusCode, 409);
      assert.deepEqual(rulesFound(sandbox), ['reference-id-reused']);
    });
  });

  test("request-refused: what the gateway, the credential checks and the validators refuse, each in the sandbox's words", async () => {
    await withReport(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const noKey = await sandbox.call({
        method: 'GET',
        url: path('getBalance', 'collection'),
        headers: { 'x-target-environment': 'sandbox' },
      });
      assert.equal(noKey.statusCode, 401);
      const badToken = await sandbox.call({
        method: 'GET',
        url: path('getBalance', 'collection'),
        headers: { ...caller.headers, authorization: `${caller.headers.authorization}x` },
      });
      assert.equal(badToken.statusCode, 401);
      const badJson = await pay(sandbox, caller, randomUUID(), '{"amount": ', { 'content-type': 'application/json' });
      assert.equal(badJson.statusCode, 400);
      const badType = await pay(sandbox, caller, randomUUID(), 'amount=1', { 'content-type': 'text/plain' });
      assert.equal(badType.statusCode, 415);
      const badField = await pay(sandbox, caller, randomUUID(), { ...requestToPayBody(), amount: 10 });
      assert.equal(badField.statusCode, 400);
      const unknownPath = await sandbox.call({ method: 'GET', url: '/collection/v2_9/nothing', headers: caller.headers });
      assert.equal(unknownPath.statusCode, 404);
      const refused = findings(sandbox).filter((f) => f.rule === 'request-refused');
      assert.equal(refused.length, 6, refused.map((f) => f.detail).join('\n'));
      const details = refused.map((f) => f.detail).join('\n');
      for (const words of [
        'missing subscription key',
        'Bearer token was refused',
        'not valid JSON',
        'Content-Type',
        'body/amount',
        'No operation',
      ])
        assert.ok(details.includes(words), `no refusal says "${words}":\n${details}`);
      assert.ok(
        refused.some((f) => f.client === 'no-key'),
        'a request without a key is reported apart from any client',
      );
      assert.ok(
        refused.some((f) => f.client === userOf(caller) && f.detail.includes('Bearer')),
        'a refused token is still its API user',
      );
    });
  });

  test('token-reuse: tokens asked for while one is valid are the finding past the allowance; renewing near expiry is none', async () => {
    await withReport(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      for (let i = 0; i < 2; i++) assert.equal((await newToken(sandbox, caller)).statusCode, 200);
      assert.deepEqual(rulesFound(sandbox), [], 'two renewals are within the allowance');
      sandbox.clock.advance(sandbox.settings.tokenLifetimeSeconds * 1000 - 30_000);
      assert.equal((await newToken(sandbox, caller)).statusCode, 200, 'renewed 30 s before expiry');
      assert.deepEqual(rulesFound(sandbox), []);
      for (let i = 0; i < 3; i++) assert.equal((await newToken(sandbox, caller)).statusCode, 200);
      assert.deepEqual(rulesFound(sandbox), ['token-reuse']);
      assert.equal(findings(sandbox)[0]!.count, 3, 'each renewal past the allowance');
    });
  });

  test('polling-rate: three reads of one payment within a second are the finding; a read a second is none', async () => {
    await withReport(
      async (sandbox) => {
        const caller = await sandbox.provision('collection');
        const id = randomUUID();
        assert.equal((await pay(sandbox, caller, id, requestToPayBody('46733123453'))).statusCode, 202, 'one that stays PENDING');
        for (let i = 0; i < 3; i++) {
          assert.equal((await readStatus(sandbox, caller, id)).statusCode, 200);
          sandbox.clock.advance(1000);
        }
        assert.deepEqual(rulesFound(sandbox), []);
        for (let i = 0; i < 3; i++) await readStatus(sandbox, caller, id);
        assert.deepEqual(rulesFound(sandbox), ['polling-rate']);
      },
      { pendingTimeoutMs: 60_000 },
    );
  });

  test('polling-after-final: reads after SUCCESSFUL beyond one are the finding', async () => {
    await withReport(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const id = randomUUID();
      assert.equal((await pay(sandbox, caller, id)).statusCode, 202);
      for (let i = 0; i < 2; i++) {
        assert.equal((await readStatus(sandbox, caller, id)).json().status, 'SUCCESSFUL');
        sandbox.clock.advance(1000);
      }
      assert.deepEqual(rulesFound(sandbox), [], 'one read after the final state is allowed');
      await readStatus(sandbox, caller, id);
      assert.deepEqual(rulesFound(sandbox), ['polling-after-final']);
    });
  });

  test("ciba-interval: polling the token endpoint faster than bc-authorize's interval is the finding", async () => {
    await withReport(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const { auth_req_id: authReqId } = (await bcAuthorize(sandbox, caller)).json() as { auth_req_id: string };
      assert.equal((await pollConsent(sandbox, caller, authReqId)).statusCode, 400, 'authorization_pending');
      sandbox.clock.advance(sandbox.settings.consentIntervalSeconds * 1000);
      assert.equal((await pollConsent(sandbox, caller, authReqId)).statusCode, 200, 'a poll after the interval');
      assert.deepEqual(rulesFound(sandbox), []);
      const second = (await bcAuthorize(sandbox, caller)).json() as { auth_req_id: string };
      await pollConsent(sandbox, caller, second.auth_req_id);
      await pollConsent(sandbox, caller, second.auth_req_id);
      assert.deepEqual(rulesFound(sandbox), ['ciba-interval']);
    });
  });

  test('callback-answer: a listener that answers 500, or that nobody runs, is the finding', async () => {
    const failing = await startListener(500);
    const gone = await startListener(200);
    await gone.close();
    try {
      await withReport(
        async (sandbox) => {
          const caller = await sandbox.provision('collection');
          await pay(sandbox, caller, randomUUID(), requestToPayBody(), { 'x-callback-url': failing.url });
          await pay(sandbox, caller, randomUUID(), requestToPayBody(), { 'x-callback-url': gone.url });
          await sandbox.context.callbacks.settled();
          const found = findings(sandbox, userOf(caller));
          assert.deepEqual(
            found.map((f) => f.rule),
            ['callback-answer', 'callback-answer'],
          );
          assert.ok(found.some((f) => f.detail.includes('answered 500')) && found.some((f) => f.detail.includes('could not be reached')));
        },
        { ...SLOW_MACHINE, callbackRetryDelaysMs: [] },
      );
    } finally {
      await failing.close();
    }
  });

  test('callback-time: a listener that does not answer within the timeout is the finding', async () => {
    const hanging = await startListener('hang');
    try {
      await withReport(
        async (sandbox) => {
          const caller = await sandbox.provision('collection');
          await pay(sandbox, caller, randomUUID(), requestToPayBody(), { 'x-callback-url': hanging.url });
          await sandbox.context.callbacks.settled();
          assert.deepEqual(rulesFound(sandbox, userOf(caller)), ['callback-time']);
        },
        { callbackTimeoutMs: 100, callbackRetryDelaysMs: [] },
      );
    } finally {
      await hanging.close();
    }
  });

  test('callback-time: an answer after more than half the timeout is slow; one well inside it is not', () => {
    const recorder = new Recorder();
    const attempt = (elapsedMs: number) => ({
      at: 0,
      principal: PRINCIPAL,
      secrets: [],
      timeoutMs: 2000,
      attempt: {
        url: 'http://127.0.0.1/cb',
        method: 'PUT' as const,
        context: {},
        attempt: 1,
        status: 200,
        timedOut: false,
        elapsedMs,
        willRetry: false,
      },
    });
    recorder.callback(attempt(2000 * SLOW_CALLBACK_SHARE - 1));
    assert.equal(recorder.clients.get(PRINCIPAL.id)!.findings.size, 0);
    recorder.callback(attempt(2000 * SLOW_CALLBACK_SHARE + 1));
    assert.deepEqual(
      [...recorder.clients.get(PRINCIPAL.id)!.findings.values()].map((f) => f.rule.id),
      ['callback-time'],
    );
  });

  test('secret-in-url: the subscription key, an API key or a token in the query or the path is the finding', async () => {
    await withReport(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const { authorization, ...withoutKey } = caller.headers;
      const inQuery = await sandbox.call({
        method: 'GET',
        url: `${path('getBalance', 'collection')}?subscription-key=${KEYS.collection}`,
        headers: { authorization, 'x-target-environment': 'sandbox' },
      });
      assert.equal(inQuery.statusCode, 200, 'the sandbox takes the key there, as the provider does');
      const token = authorization!.slice('Bearer '.length);
      await sandbox.call({ method: 'GET', url: `${path('getBalance', 'collection')}?access_token=${token}`, headers: caller.headers });
      await sandbox.call({ method: 'GET', url: `${path('getBalance', 'collection')}?debug=${caller.apiKey}`, headers: caller.headers });
      assert.ok(withoutKey);
      const found = findings(sandbox, userOf(caller)).filter((f) => f.rule === 'secret-in-url');
      assert.equal(found.length, 3, found.map((f) => f.detail).join('\n'));
      assert.ok(
        found.some((f) => f.detail.includes('API key')),
        found.map((f) => f.detail).join('\n'),
      );
    });
  });
});

describe('the client report beside the other features, and under hostile callers', { concurrency: true }, () => {
  test('with --data and with chaos, the report still hears of every callback attempt', async () => {
    const failing = await startListener(500);
    const data = mkdtempSync(join(tmpdir(), 'momo-client-report-data-'));
    try {
      // Chaos with every share at 0 still wraps the callback sink, as --data does.
      const chaos = chaosPlugin(resolveSettings({ argv: ['--chaos', 'callback-delayed=0'] }), () => {});
      await withReport(
        async (sandbox) => {
          const caller = await sandbox.provision('collection');
          await pay(sandbox, caller, randomUUID(), requestToPayBody(), { 'x-callback-url': failing.url });
          await sandbox.context.callbacks.settled();
          assert.deepEqual(
            findings(sandbox, userOf(caller)).map((f) => f.rule),
            ['callback-answer'],
          );
        },
        { ...SLOW_MACHINE, callbackRetryDelaysMs: [], dataDir: join(data, 'state') },
        [chaos],
      );
    } finally {
      await failing.close();
      rmSync(data, { recursive: true, force: true });
    }
  });

  test('subscription keys the sandbox does not know are one client, however many a caller sends', async () => {
    await withReport(async (sandbox) => {
      for (let i = 0; i < MAX_CLIENTS + 10; i += 1) {
        await sandbox.call({
          method: 'GET',
          url: path('getBalance', 'collection'),
          headers: { 'ocp-apim-subscription-key': `junk-${i}`, 'x-target-environment': 'sandbox' },
        });
      }
      const caller = await sandbox.provision('collection');
      await pay(sandbox, caller, 'not-a-uuid');
      const clients = sandbox.report.document().clients.map((c) => c.id);
      assert.equal(clients.filter((id) => id.startsWith('key:unknown')).length, 1, clients.join(', '));
      assert.ok(rulesFound(sandbox, userOf(caller)).includes('reference-id-v4'), 'an API user after them is still judged');
    });
  });

  test("the report's own routes answer another method 405 with Allow, as every path of the sandbox does", async () => {
    await withReport(async (sandbox) => {
      const wrongMethod = await sandbox.call({ method: 'GET', url: CLIENT_REPORT_ROUTES.write });
      assert.equal(wrongMethod.statusCode, 405);
      assert.equal(wrongMethod.headers.allow, 'POST');
    });
  });

  test('writes asked for at once each write whole files', async () => {
    await withReport(async (sandbox) => {
      await sandbox.provision('collection');
      const [first, second] = await Promise.all([sandbox.report.write(), sandbox.report.write()]);
      assert.deepEqual(first, second);
      for (const file of first) assert.ok(readFileSync(file, 'utf8').length > 0, file);
      JSON.parse(readFileSync(join(sandbox.dir, CLIENT_REPORT_FILES.json), 'utf8'));
    });
  });
});

// ---------------------------------------------------------------------------------------------
// A cut creation: the double-payment risk
// ---------------------------------------------------------------------------------------------

/** A plugin that holds the answer to each request to pay until the test lets it go, and says when it holds one. */
function holdingRequestsToPay(): { plugin: SandboxPlugin; holding: Promise<string>; release(): void } {
  let held: (requestId: string) => void = () => undefined;
  let release: () => void = () => undefined;
  const holding = new Promise<string>((resolve) => {
    held = resolve;
  });
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  return {
    holding,
    release,
    plugin: {
      name: 'holds answers to requests to pay',
      install: (app) =>
        app.addHook('onSend', async (request, _reply, payload) => {
          if (request.routeOptions.config.route?.operation.id !== 'requestToPay') return payload;
          held(request.id);
          await released;
          return payload;
        }),
    },
  };
}

describe('the client report: a creation whose answer the client did not get', { concurrency: true }, () => {
  const cutRetries = async (retryWith: 'new id' | 'same id') => {
    const hold = holdingRequestsToPay();
    let result: { rules: string[]; coping: string[] } | undefined;
    await withReport(
      async (sandbox) => {
        const caller = await sandbox.provision('collection');
        await sandbox.app.listen({ host: '127.0.0.1', port: 0 });
        const { port } = sandbox.app.server.address() as AddressInfo;
        const id = randomUUID();
        const body = JSON.stringify(requestToPayBody());
        // The client sends the whole request, and closes the connection before the answer comes.
        const sent = httpRequest({
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: path('requestToPay', 'collection'),
          headers: {
            ...caller.headers,
            'x-reference-id': id,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        });
        sent.on('error', () => undefined);
        sent.end(body);
        await hold.holding;
        assert.ok(sandbox.context.state.transactions.requesttopay.get(id), 'the payment was stored before the cut');
        sent.destroy();
        await eventually(async () =>
          sandbox.report.document().clients.find((c) => c.id === userOf(caller))!.requests >= 2 ? true : undefined,
        );
        hold.release();
        const retry = await pay(sandbox, caller, retryWith === 'new id' ? randomUUID() : id);
        assert.equal(retry.statusCode, retryWith === 'new id' ? 202 : 409);
        result = { rules: rulesFound(sandbox, userOf(caller)), coping: [] };
      },
      {},
      [hold.plugin],
    );
    hold.release();
    return result!;
  };

  test('the client closes the connection after sending, then pays again under a NEW X-Reference-Id: the double-payment finding', async () => {
    assert.deepEqual((await cutRetries('new id')).rules, ['double-payment-risk']);
  });

  test('the client closes the connection after sending, then retries with the SAME X-Reference-Id: no finding', async () => {
    assert.deepEqual((await cutRetries('same id')).rules, []);
  });

  test('after a 500 on a creation, the same payment under a new X-Reference-Id is the finding; after a status read it is none', async () => {
    await withReport(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const unsupported = requestToPayBody('46733123499', '10', 'XOF');
      assert.equal((await pay(sandbox, caller, randomUUID(), unsupported)).statusCode, 500);
      const settled = randomUUID();
      assert.equal((await pay(sandbox, caller, settled, requestToPayBody('46733123499', '11', 'XOF'))).statusCode, 500);
      assert.equal((await readStatus(sandbox, caller, settled)).statusCode, 404, 'the client reads the status: none was made');
      assert.equal((await pay(sandbox, caller, randomUUID(), requestToPayBody('46733123499', '11', 'XOF'))).statusCode, 500);
      assert.deepEqual(rulesFound(sandbox), []);
      assert.equal((await pay(sandbox, caller, randomUUID(), unsupported)).statusCode, 500);
      assert.deepEqual(rulesFound(sandbox), ['double-payment-risk']);
    });
  });
});

// ---------------------------------------------------------------------------------------------
// Chaos conditions (the contract of sandbox/domain/chaos-applied.ts), fed as the chaos plugin would
// ---------------------------------------------------------------------------------------------

describe('the client report: chaos conditions and how the client coped', { concurrency: true }, () => {
  const afterCut = async (next: 'new id' | 'same id' | 'status then new id') => {
    let outcome: { rules: string[]; coping: ClientReportDocument['clients'][number]['chaos'] } | undefined;
    await withReport(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const id = randomUUID();
      assert.equal((await pay(sandbox, caller, id)).statusCode, 202);
      sandbox.report.chaosApplied({
        condition: 'cut-after-store',
        at: sandbox.clock.now(),
        operationId: 'requestToPay',
        apiUserId: caller.userId,
        referenceId: id,
        detail: 'cut the connection after storing the payment',
      });
      sandbox.clock.advance(2000);
      if (next === 'same id') assert.equal((await pay(sandbox, caller, id)).statusCode, 409);
      if (next === 'status then new id') assert.equal((await readStatus(sandbox, caller, id)).statusCode, 200);
      if (next !== 'same id') assert.equal((await pay(sandbox, caller, randomUUID())).statusCode, 202);
      const client = sandbox.report.document().clients.find((c) => c.id === userOf(caller))!;
      outcome = { rules: client.findings.map((f) => f.rule), coping: client.chaos };
    });
    return outcome!;
  };

  test('a cut-after-store, then the payment under a new X-Reference-Id: the double-payment finding, and the report says so', async () => {
    const { rules, coping } = await afterCut('new id');
    assert.deepEqual(rules, ['double-payment-risk']);
    assert.deepEqual(
      coping.map((c) => [c.condition, c.applied, c.coping]),
      [['cut-after-store', 1, [{ outcome: 'made it again under a new X-Reference-Id', count: 1 }]]],
    );
  });

  test('a cut-after-store, then a retry with the same X-Reference-Id: no finding, and the report says it retried', async () => {
    const { rules, coping } = await afterCut('same id');
    assert.deepEqual(rules, []);
    assert.equal(coping[0]!.first.coping, 'retried with the same X-Reference-Id');
  });

  test('a cut-after-store, then a status read: the client knows, and a later payment is no finding', async () => {
    const { rules, coping } = await afterCut('status then new id');
    assert.deepEqual(rules, []);
    assert.equal(coping[0]!.first.coping, 'read the status');
  });

  test('a condition on a request still being answered waits for its answer: a 202 the client got settles it', async () => {
    const hold = holdingRequestsToPay();
    await withReport(
      async (sandbox) => {
        const caller = await sandbox.provision('collection');
        const paying = pay(sandbox, caller, randomUUID());
        const requestId = await hold.holding;
        sandbox.report.chaosApplied({
          condition: 'latency',
          at: sandbox.clock.now(),
          requestId,
          operationId: 'requestToPay',
          detail: 'answered 2 s late',
        });
        hold.release();
        assert.equal((await paying).statusCode, 202);
        await sandbox.call({ method: 'GET', url: path('getBalance', 'collection'), headers: caller.headers });
        const coping = () =>
          sandbox.report
            .document()
            .clients.find((c) => c.id === userOf(caller))!
            .chaos.map((c) => [c.condition, c.first.coping]);
        assert.deepEqual(coping(), [['latency', 'went on with other requests']]);
        assert.equal((await pay(sandbox, caller, randomUUID())).statusCode, 202);
        assert.deepEqual(findings(sandbox, userOf(caller)), [], 'the client was told: a second payment is its own choice');
        assert.deepEqual(coping(), [['latency', 'sent the same request again']]);
      },
      {},
      [hold.plugin],
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The files: schema, secrets, hostile text, bounds
// ---------------------------------------------------------------------------------------------

/** A subscription key or API key as the provider makes them: 32 hex digits. */
const hexKey = () => randomUUID().replace(/-/g, '');

describe('the client report: its files', { concurrency: true }, () => {
  test('GET /client-report is the report, POST /client-report/write writes it, and client-report.json follows its schema', async () => {
    await withReport(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      await sandbox.call({ method: 'GET', url: '/collection/v1_0/accountholder/MSISDN/46733123499/active', headers: caller.headers });
      sandbox.report.chaosApplied({ condition: 'answer-503', at: sandbox.clock.now(), apiUserId: caller.userId, detail: 'answered 503' });
      const read = await sandbox.call({ method: 'GET', url: '/client-report' });
      assert.equal(read.statusCode, 200);
      const written = await sandbox.call({ method: 'POST', url: '/client-report/write' });
      assert.equal(written.statusCode, 200);
      assert.deepEqual(
        (written.json() as { written: string[] }).written.map((file) => file.slice(sandbox.dir.length + 1)).sort(),
        Object.values(CLIENT_REPORT_FILES).sort(),
      );
      const json = JSON.parse(readFileSync(join(sandbox.dir, CLIENT_REPORT_FILES.json), 'utf8')) as ClientReportDocument;
      const validate = validatorFor('client-report');
      assert.ok(validate(json), describeErrors(validate.errors).join('; '));
      assert.ok(validate(read.json()), describeErrors(validate.errors).join('; '));
      assert.ok(
        json.clients.some((c) => c.findings.length > 0 && c.chaos.length > 0),
        'the written report has findings and chaos',
      );
      assert.equal(
        (await sandbox.call({ method: 'GET', url: '/client-report' })).json().clients.length,
        json.clients.length,
        'meta routes are no client',
      );
    });
  });

  test('the report is written when the sandbox closes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'momo-client-report-'));
    try {
      const sandbox = await startSandbox({ clientReport: dir });
      await sandbox.provision('disbursement');
      await sandbox.close();
      const json = JSON.parse(readFileSync(join(dir, CLIENT_REPORT_FILES.json), 'utf8')) as ClientReportDocument;
      assert.ok(json.clients.some((c) => c.product === 'disbursement'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a folder that cannot be written stops the start, naming the setting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'momo-client-report-'));
    try {
      const file = join(dir, 'a-file');
      writeFileSync(file, '');
      await assert.rejects(startSandbox({ clientReport: join(file, 'report') }), /--client-report \(MOMO_SANDBOX_CLIENT_REPORT\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('no subscription key, API key, Basic credential or token reaches any file, in any encoding', async () => {
    const keys = { collection: hexKey(), disbursement: hexKey(), remittance: hexKey() };
    const production = hexKey();
    await withReport(
      async (sandbox) => {
        const userId = randomUUID();
        const keyHeader = { 'ocp-apim-subscription-key': keys.collection };
        await sandbox.call({
          method: 'POST',
          url: path('createApiUser'),
          headers: { ...keyHeader, 'x-reference-id': userId },
          payload: { providerCallbackHost: '127.0.0.1' },
        });
        const apiKey = (
          await sandbox.call({ method: 'POST', url: path('createApiKey', undefined, { referenceId: userId }), headers: keyHeader })
        ).json().apiKey as string;
        const credential = basic(userId, apiKey);
        const token = (
          await sandbox.call({
            method: 'POST',
            url: path('createAccessToken', 'collection'),
            headers: { ...keyHeader, authorization: credential },
          })
        ).json().access_token as string;
        const headers = { ...keyHeader, authorization: `Bearer ${token}`, 'x-target-environment': 'sandbox' };
        const caller: Caller = { product: 'collection', userId, apiKey, token, headers };
        const base64 = (text: string) => Buffer.from(text).toString('base64');
        // Every way a careless client could carry its secrets, each in a request whose exchange a finding keeps.
        const balance = path('getBalance', 'collection');
        await sandbox.call({ method: 'GET', url: `${balance}?subscription-key=${keys.collection}&access_token=${token}`, headers });
        await sandbox.call({ method: 'GET', url: `${balance}?note=${base64(apiKey)}`, headers });
        await sandbox.call({ method: 'GET', url: balance, headers: { ...headers, 'ocp-apim-subscription-key': production } });
        await sandbox.call({
          method: 'POST',
          url: path('createAccessToken', 'collection'),
          headers: { ...keyHeader, authorization: basic(userId, hexKey()) },
        });
        await pay(
          sandbox,
          caller,
          'not-a-uuid',
          { ...requestToPayBody(), payerMessage: `key ${apiKey} ${base64(token).slice(0, 100)}` },
          {
            'x-debug': `${base64(apiKey)} ${encodeURIComponent(token)} ${Buffer.from(apiKey).toString('hex')}`,
          },
        );
        await pay(sandbox, caller, randomUUID(), { ...requestToPayBody(), amount: 10, externalId: apiKey });
        const { auth_req_id: authReqId } = (
          await sandbox.call({
            method: 'POST',
            url: path('bcAuthorize', 'collection'),
            headers: { ...headers, 'content-type': FORM },
            payload: CONSENT_FORM,
          })
        ).json() as { auth_req_id: string };
        for (let poll = 0; poll < 2; poll++) {
          await sandbox.call({
            method: 'POST',
            url: path('createOAuthToken', 'collection'),
            headers: { ...keyHeader, authorization: credential, 'x-target-environment': 'sandbox', 'content-type': FORM },
            payload: `grant_type=${CIBA}&auth_req_id=${authReqId}&apiKey=${apiKey}`,
          });
        }
        await sandbox.report.write();
        const report = sandbox.report.document();
        const found = new Set(report.clients.flatMap((c) => c.findings.map((f) => f.rule)));
        for (const rule of ['secret-in-url', 'request-refused', 'reference-id-v4', 'ciba-interval'])
          assert.ok(found.has(rule), `the secrets are in a finding of ${rule}, whose exchange the report keeps`);
        const secrets = [...Object.values(keys), production, apiKey, token, credential.slice('Basic '.length)];
        assert.deepEqual(scanForSecrets(sandbox.dir, secrets), []);
        // The scan finds what it looks for: the same secrets written plainly are found.
        const control = mkdtempSync(join(tmpdir(), 'momo-client-report-control-'));
        try {
          writeFileSync(join(control, 'leak.txt'), `${base64(apiKey)} ${production}`);
          assert.equal(scanForSecrets(control, secrets).length, 2);
        } finally {
          rmSync(control, { recursive: true, force: true });
        }
        for (const file of Object.values(CLIENT_REPORT_FILES)) {
          const text = readFileSync(join(sandbox.dir, file), 'utf8');
          assert.ok(text.includes('[REDACTED]'), `${file} masks what it shows`);
        }
      },
      { subscriptionKeys: keys },
    );
  });

  test('hostile text stays text: </script>, ]]> and control characters are escaped and every file keeps its structure', async () => {
    const hostile = '</script><script>alert(1)</script>]]></failure><!-- \u0000\u0007\u001b\u0085\ud800 "\'&';
    await withReport(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      await pay(sandbox, caller, randomUUID(), { ...requestToPayBody(), amount: 10, externalId: hostile });
      await pay(sandbox, caller, hostile.slice(0, 30).replace(/[^\x20-\x7e]/g, ''), { ...requestToPayBody(), payeeNote: hostile });
      await sandbox.call({
        method: 'GET',
        url: `/collection/${encodeURIComponent(hostile.replace('\ud800', ''))}`,
        headers: { ...caller.headers, 'x-note': '</script>]]>' },
      });
      sandbox.report.chaosApplied({
        condition: hostile,
        at: sandbox.clock.now(),
        apiUserId: caller.userId,
        referenceId: hostile,
        detail: hostile,
      });
      await sandbox.report.write();
      const html = readFileSync(join(sandbox.dir, CLIENT_REPORT_FILES.html), 'utf8');
      const junit = readFileSync(join(sandbox.dir, CLIENT_REPORT_FILES.junit), 'utf8');
      const json = readFileSync(join(sandbox.dir, CLIENT_REPORT_FILES.json), 'utf8');
      const report = JSON.parse(json) as ClientReportDocument;
      assert.ok(validatorFor('client-report')(report));
      assert.ok(
        report.clients.some((c) => c.findings.length >= 3),
        'the hostile requests are in findings',
      );
      for (const [name, text] of [
        ['html', html],
        ['junit', junit],
        ['json', json],
      ] as const) {
        assert.doesNotMatch(text, /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u0085]/, `${name} has a raw control character`);
        assert.doesNotMatch(text, /[\ud800-\udbff](?![\udc00-\udfff])/, `${name} has a lone surrogate`);
      }
      assert.doesNotMatch(html, /<script|<!--|<\/failure/i, 'the page has no markup the client wrote');
      assert.equal((html.match(/<section /g) ?? []).length, 3 + report.clients.length, 'at stake, clients, one per client, the rules');
      assert.doesNotMatch(junit, /\]\]>|<script|<!--/);
      assert.equal((junit.match(/<testsuite /g) ?? []).length, report.clients.length);
      assert.equal((junit.match(/<failure /g) ?? []).length, (junit.match(/<\/failure>/g) ?? []).length);
      assert.equal((junit.match(/<testcase /g) ?? []).length, report.clients.length * RULES.length);
    });
  });
});

const PRINCIPAL: Principal = { id: 'api-user:test', kind: 'api-user', label: 'API user test' };

function exchange(over: Partial<ObservedExchange> = {}): ObservedExchange {
  return { requestId: randomUUID(), at: 0, principal: PRINCIPAL, method: 'GET', url: '/x', headers: {}, secrets: [], params: {}, ...over };
}

describe('the client report: bounded memory', () => {
  test('clients beyond the bound are counted, not kept', () => {
    const recorder = new Recorder();
    for (let i = 0; i < MAX_CLIENTS + 100; i++) {
      recorder.exchange(exchange({ principal: { id: `key:unknown:${i}`, kind: 'subscription-key', label: `key ${i}` } }));
    }
    assert.equal(recorder.clients.size, MAX_CLIENTS);
    assert.equal(recorder.omittedEvents, 100);
  });

  test('one exchange a finding, findings of a client bounded, every part of an exchange cut short', () => {
    const recorder = new Recorder();
    const refusal = (reason: string, at: number, body?: unknown) =>
      exchange({
        at,
        status: 400,
        body,
        url: `/nothing/${'x'.repeat(10_000)}`,
        headers: { 'x-long': 'y'.repeat(10_000) },
        responseBody: JSON.stringify({ statusCode: 400, error: 'Bad Request', message: reason }),
      });
    for (let at = 0; at < 50; at++) recorder.exchange(refusal('the same reason', at, { big: 'z'.repeat(60_000) }));
    for (let i = 0; i < MAX_FINDINGS_PER_CLIENT + 10; i++)
      recorder.exchange(refusal(`reason ${'abcdefghijklmnopqrstuvwxyz'[i % 26]}${'q'.repeat(i)}`, 100 + i));
    const client = recorder.clients.get(PRINCIPAL.id)!;
    assert.equal(client.findings.size, MAX_FINDINGS_PER_CLIENT);
    assert.ok(client.omittedFindings > 0);
    const first = [...client.findings.values()][0]!;
    assert.equal(first.count, 50, 'counted fifty times');
    assert.equal(first.firstExchange.at, new Date(0).toISOString(), 'the first exchange is kept, no other');
    assert.ok(first.firstExchange.requestBody!.length < 2200, `the body kept is ${first.firstExchange.requestBody!.length} characters`);
    assert.ok(first.firstExchange.target.length < 600);
    assert.ok(Object.values(first.firstExchange.requestHeaders!).every((value) => value.length < 300));
  });
});

describe('a sandbox without --client-report', () => {
  test('keeps no report and serves no report route', async () => {
    const sandbox = await startSandbox();
    try {
      assert.equal(sandbox.clientReport, undefined);
      assert.equal(sandbox.settings.clientReport, undefined);
      assert.equal((await sandbox.call({ method: 'GET', url: '/client-report' })).statusCode, 404);
      assert.equal((await sandbox.call({ method: 'POST', url: '/client-report/write' })).statusCode, 404);
    } finally {
      await sandbox.close();
    }
  });
});
