import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import type { OperationId } from '../../core/catalogue/operations.ts';
import { OPERATIONS } from '../../core/catalogue/operations.ts';
import { routes, statusQueryOf } from '../../core/catalogue/routes.ts';
import type { CallbackAttempt } from '../../sandbox/domain/callbacks.ts';
import { assertSchema, path, payer, requestToPayBody, startSandbox, type Caller, type TestSandbox } from '../support/sandbox.ts';

// ---------------------------------------------------------------------------------------------
// A real callback listener on 127.0.0.1 (free port) that records what reaches it.
// ---------------------------------------------------------------------------------------------

interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: unknown;
  /** The sandbox's time when the request arrived. */
  at: number;
}

/** How the listener answers the n-th request (1-based): a status code, or never ('hang'). */
type Answer = number | 'hang';

interface Listener {
  port: number;
  received: Received[];
  url(path?: string): string;
  close(): Promise<void>;
}

async function startListener(clock: { now(): number }, answer: (n: number) => Answer = () => 200): Promise<Listener> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const at = clock.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, raw, body, at });
      const a = answer(received.length);
      if (a === 'hang') return;
      res.writeHead(a, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    received,
    url: (path = '/momo/callback') => `http://127.0.0.1:${port}${path}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * What the listener holds once the sandbox's time has moved on by `ms` (0: now) and every callback attempt
 * that set off by then has been answered or given up: time is the sandbox's clock, never the wall's.
 */
async function receivedAfter(sandbox: TestSandbox, listener: Listener, ms = 0): Promise<Received[]> {
  sandbox.clock.advance(ms);
  await sandbox.context.callbacks.settled();
  return listener.received.slice();
}

/** Runs body with a sandbox and a listener on its clock, closing both (sandbox first: it stops retries). */
async function withBoth(
  body: (sandbox: TestSandbox, listener: Listener) => Promise<void>,
  options: { settings?: Parameters<typeof startSandbox>[0]; answer?: (n: number) => Answer } = {},
): Promise<void> {
  const sandbox = await startSandbox(options.settings ?? {});
  const listener = await startListener(sandbox.clock, options.answer);
  try {
    await body(sandbox, listener);
  } finally {
    await sandbox.close();
    await listener.close();
  }
}

async function withSandbox(
  body: (sandbox: TestSandbox) => Promise<void>,
  settings: Parameters<typeof startSandbox>[0] = {},
): Promise<void> {
  const sandbox = await startSandbox(settings);
  try {
    await body(sandbox);
  } finally {
    await sandbox.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Calls
// ---------------------------------------------------------------------------------------------

/** The creations of transactions, by operation id; status() reads each one's record through its status query. */
const RTP = 'requestToPay' satisfies OperationId;
const DEPOSIT = 'deposit' satisfies OperationId;
const REFUND = 'refund' satisfies OperationId;

function requestToPay(
  sandbox: TestSandbox,
  caller: Caller,
  id: string,
  partyId = '46733123499',
  callbackUrl?: string,
): Promise<LightMyRequestResponse> {
  return sandbox.call({
    method: 'POST',
    url: path(RTP),
    headers: { ...caller.headers, 'x-reference-id': id, 'x-callback-url': callbackUrl },
    payload: requestToPayBody(partyId, '12.50'),
  });
}

function deposit(
  sandbox: TestSandbox,
  caller: Caller,
  id: string,
  partyId = '46733123499',
  callbackUrl?: string,
): Promise<LightMyRequestResponse> {
  return sandbox.call({
    method: 'POST',
    url: path(DEPOSIT),
    headers: { ...caller.headers, 'x-reference-id': id, 'x-callback-url': callbackUrl },
    payload: { amount: '7.00', currency: 'EUR', externalId: 'dep-1', payee: payer(partyId), payerMessage: 'Salary', payeeNote: 'June' },
  });
}

function status(sandbox: TestSandbox, caller: Caller, create: OperationId, id: string): Promise<LightMyRequestResponse> {
  return sandbox.call({ method: 'GET', url: path(statusQueryOf(create), undefined, { referenceId: id }), headers: caller.headers });
}

function notify(
  sandbox: TestSandbox,
  caller: Caller,
  id: string,
  payload: unknown = { notificationMessage: 'Your goods are on their way.' },
  extraHeaders: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return sandbox.call({
    method: 'POST',
    url: path('deliveryNotification', 'collection', { referenceId: id }),
    headers: { ...caller.headers, ...extraHeaders },
    payload,
  });
}

function assertError(response: LightMyRequestResponse, statusCode: number, code: string, schema = 'error-set-a'): void {
  assert.equal(response.statusCode, statusCode, response.body);
  const body = response.json();
  assertSchema(schema, body);
  assert.equal(body.code, code);
}

function assertBadRequest(response: LightMyRequestResponse): void {
  assert.equal(response.statusCode, 400, response.body);
  assertSchema('bad-request', response.json());
}

/** A request to pay that reached SUCCESSFUL at once. */
async function successfulRtp(sandbox: TestSandbox, caller: Caller): Promise<string> {
  const id = randomUUID();
  const created = await requestToPay(sandbox, caller, id);
  assert.equal(created.statusCode, 202, created.body);
  assert.equal((await status(sandbox, caller, RTP, id)).json().status, 'SUCCESSFUL');
  return id;
}

// =============================================================================================
// 1. Callbacks
// =============================================================================================

// Each test has its own sandbox and listener, so they run side by side: most of their time is real timers.
describe('callbacks', { concurrency: true }, () => {
  test('callback: a SUCCESSFUL request to pay sends exactly one PUT with the status record as JSON', async () => {
    await withBoth(async (sandbox, listener) => {
      const caller = await sandbox.provision('collection');
      const id = randomUUID();
      const created = await requestToPay(sandbox, caller, id, '46733123499', listener.url('/momo/callback?order=42'));
      assert.equal(created.statusCode, 202, created.body);

      const [first] = await receivedAfter(sandbox, listener);
      const record = (await status(sandbox, caller, RTP, id)).json();
      assert.equal(record.status, 'SUCCESSFUL');
      assert.equal(first!.method, 'PUT');
      assert.equal(first!.path, '/momo/callback?order=42');
      assert.match(String(first!.headers['content-type']), /^application\/json(;|$)/);
      assertSchema('request-to-pay-status', first!.body);
      assert.deepEqual(first!.body, record);

      // Answered 200: no retry follows, however long after.
      assert.equal(
        (await receivedAfter(sandbox, listener, 100 * sandbox.settings.callbackRetryDelaysMs.reduce((a, b) => a + b, 0))).length,
        1,
      );
    });
  });

  test('callback: a FAILED request to pay (46733123451) sends the FAILED record', async () => {
    await withBoth(async (sandbox, listener) => {
      const caller = await sandbox.provision('collection');
      const id = randomUUID();
      assert.equal((await requestToPay(sandbox, caller, id, '46733123451', listener.url())).statusCode, 202);
      const [first] = await receivedAfter(sandbox, listener);
      const record = (await status(sandbox, caller, RTP, id)).json();
      assert.equal(record.status, 'FAILED');
      assert.equal(record.reason, 'APPROVAL_REJECTED');
      assert.equal(first!.method, OPERATIONS.requestToPay.callback!.method);
      assertSchema('request-to-pay-status', first!.body);
      assert.deepEqual(first!.body, record);
    });
  });

  test('callback: a delayed request to pay (46733123454) calls back only once it settles, after the delay', async () => {
    await withBoth(async (sandbox, listener) => {
      const caller = await sandbox.provision('collection');
      const id = randomUUID();
      const createdAt = sandbox.clock.now();
      const delay = sandbox.settings.delayedSuccessMs;
      assert.equal((await requestToPay(sandbox, caller, id, '46733123454', listener.url())).statusCode, 202);
      assert.equal((await status(sandbox, caller, RTP, id)).json().status, 'PENDING');
      assert.deepEqual(await receivedAfter(sandbox, listener, delay - 1), [], 'no callback while PENDING');

      const [first] = await receivedAfter(sandbox, listener, 1);
      assert.equal(first!.at - createdAt, delay, 'the callback goes as the payment settles');
      const record = (await status(sandbox, caller, RTP, id)).json();
      assert.equal(record.status, 'SUCCESSFUL');
      assert.deepEqual(first!.body, record);
    });
  });

  test('callback: a request to pay that times out PENDING (46733123453) calls back FAILED EXPIRED', async () => {
    await withBoth(async (sandbox, listener) => {
      const caller = await sandbox.provision('collection');
      const id = randomUUID();
      const createdAt = sandbox.clock.now();
      const timeout = sandbox.settings.pendingTimeoutMs;
      assert.equal((await requestToPay(sandbox, caller, id, '46733123453', listener.url())).statusCode, 202);
      assert.deepEqual(await receivedAfter(sandbox, listener, timeout - 1), []);
      const [first] = await receivedAfter(sandbox, listener, 1);
      assert.equal(first!.at - createdAt, timeout);
      const record = (await status(sandbox, caller, RTP, id)).json();
      assert.equal(record.status, 'FAILED');
      assert.equal(record.reason, 'EXPIRED');
      assert.deepEqual(first!.body, record);
    });
  });

  test('callback: callbackMethod POST sends the callback with POST', async () => {
    await withBoth(
      async (sandbox, listener) => {
        const caller = await sandbox.provision('collection');
        const id = randomUUID();
        assert.equal((await requestToPay(sandbox, caller, id, '46733123499', listener.url())).statusCode, 202);
        const [first] = await receivedAfter(sandbox, listener);
        assert.equal(first!.method, 'POST');
        assert.match(String(first!.headers['content-type']), /^application\/json(;|$)/);
        assert.deepEqual(first!.body, (await status(sandbox, caller, RTP, id)).json());
      },
      { settings: { callbackMethod: 'POST' } },
    );
  });

  test('callback: a deposit calls back with the deposit status record', async () => {
    await withBoth(async (sandbox, listener) => {
      const caller = await sandbox.provision('disbursement');
      const id = randomUUID();
      const created = await deposit(sandbox, caller, id, '46733123499', listener.url('/deposits'));
      assert.equal(created.statusCode, 202, created.body);
      const [first] = await receivedAfter(sandbox, listener);
      const record = (await status(sandbox, caller, DEPOSIT, id)).json();
      assert.equal(record.status, 'SUCCESSFUL');
      assert.equal(first!.method, OPERATIONS.deposit.callback!.method, 'the documented method of a v1 deposit callback');
      assert.equal(first!.path, '/deposits');
      assert.match(String(first!.headers['content-type']), /^application\/json(;|$)/);
      assertSchema('deposit-status', first!.body);
      assert.deepEqual(first!.body, record);
    });
  });

  // Every creation that takes X-Callback-Url, under each product that serves it, from the catalogue.
  const creations = routes().filter((r) => r.operation.callback !== undefined && r.product !== undefined);

  /** A body the creation accepts, naming an ordinary payer or payee; a refund refunds a fresh successful request to pay. */
  async function creationBody(sandbox: TestSandbox, schema: string): Promise<Record<string, unknown>> {
    const party = { amount: '3', currency: 'EUR', externalId: 'ext-1', payerMessage: 'm', payeeNote: 'n' };
    switch (schema) {
      case 'request-to-pay':
        return { ...party, payer: payer('46733123499') };
      case 'deposit':
      case 'transfer':
        return { ...party, payee: payer('46733123499') };
      case 'refund':
        return { ...party, referenceIdToRefund: await successfulRtp(sandbox, await sandbox.provision('collection')) };
      default:
        throw new Error(`no body known for ${schema}; add one`);
    }
  }

  for (const setting of ['documented', 'PUT', 'POST'] as const) {
    test(`callback method, callbackMethod ${setting}: every creation calls back with ${setting === 'documented' ? 'its documented method' : setting}`, async () => {
      assert.ok(creations.length >= 9, creations.map((c) => `${c.product}.${c.operation.id}`).join(', '));
      await withBoth(
        async (sandbox, listener) => {
          for (const route of creations) {
            const what = `${route.product}.${route.operation.id}`;
            const caller = await sandbox.provision(route.product!);
            const body = await creationBody(sandbox, (route.operation.request as { schema: string }).schema);
            const before = listener.received.length;
            const created = await sandbox.call({
              method: route.method,
              url: path(route.operation.id, route.product),
              headers: { ...caller.headers, 'x-reference-id': randomUUID(), 'x-callback-url': listener.url(`/${what}`) },
              payload: body,
            });
            assert.equal(created.statusCode, 202, `${what}: ${created.body}`);
            const sent = (await receivedAfter(sandbox, listener)).slice(before).filter((r) => r.path === `/${what}`);
            assert.equal(sent.length, 1, `${what}: one callback`);
            assert.equal(sent[0]!.method, setting === 'documented' ? route.operation.callback!.method : setting, what);
          }
        },
        { settings: { callbackMethod: setting } },
      );
    });
  }

  test('callback: a refund calls back with the refund status record', async () => {
    await withBoth(async (sandbox, listener) => {
      const collector = await sandbox.provision('collection');
      const rtpId = await successfulRtp(sandbox, collector);
      const disburser = await sandbox.provision('disbursement');
      const id = randomUUID();
      const created = await sandbox.call({
        method: 'POST',
        url: path(REFUND),
        headers: { ...disburser.headers, 'x-reference-id': id, 'x-callback-url': listener.url('/refunds') },
        payload: {
          amount: '5',
          currency: 'EUR',
          externalId: 'ref-1',
          payerMessage: 'Refund',
          payeeNote: 'Sorry',
          referenceIdToRefund: rtpId,
        },
      });
      assert.equal(created.statusCode, 202, created.body);
      const [first] = await receivedAfter(sandbox, listener);
      const record = (await status(sandbox, disburser, REFUND, id)).json();
      assert.equal(record.status, 'SUCCESSFUL');
      assert.equal(first!.path, '/refunds');
      assertSchema('refund-status', first!.body);
      assert.deepEqual(first!.body, record);
    });
  });

  test('callback retries: 500, 500, then 200 gives exactly 3 attempts spaced by the retry delays', async () => {
    await withBoth(
      async (sandbox, listener) => {
        const caller = await sandbox.provision('collection');
        const id = randomUUID();
        assert.equal((await requestToPay(sandbox, caller, id, '46733123499', listener.url())).statusCode, 202);
        const [d1, d2] = sandbox.settings.callbackRetryDelaysMs as [number, number];
        assert.equal((await receivedAfter(sandbox, listener)).length, 1);
        assert.equal((await receivedAfter(sandbox, listener, d1 - 1)).length, 1, 'no retry before its delay');
        assert.equal((await receivedAfter(sandbox, listener, 1)).length, 2);
        const attempts = await receivedAfter(sandbox, listener, d2);
        assert.deepEqual(
          attempts.map((a) => a.at - attempts[0]!.at),
          [0, d1, d1 + d2],
          'spaced by the retry delays',
        );
        const record = (await status(sandbox, caller, RTP, id)).json();
        for (const a of attempts) {
          assert.equal(a.method, 'PUT');
          assert.deepEqual(a.body, record);
        }
        assert.equal((await receivedAfter(sandbox, listener, 10 * (d1 + d2))).length, 3, 'no attempt after the 200');
      },
      { answer: (n) => (n <= 2 ? 500 : 200) },
    );
  });

  test('callback retries: a listener that always answers 500 gets 1 + retryDelays.length attempts, then no more', async () => {
    await withBoth(
      async (sandbox, listener) => {
        const caller = await sandbox.provision('collection');
        assert.equal((await requestToPay(sandbox, caller, randomUUID(), '46733123499', listener.url())).statusCode, 202);
        const delays = sandbox.settings.callbackRetryDelaysMs;
        await receivedAfter(sandbox, listener);
        for (const delay of delays) await receivedAfter(sandbox, listener, delay);
        assert.equal(listener.received.length, 1 + delays.length);
        // Long past the last retry delay: a further attempt would have come by now.
        assert.equal((await receivedAfter(sandbox, listener, 100 * Math.max(...delays))).length, 1 + delays.length);
        assert.equal(sandbox.clock.pending, 0, 'no timer is left for another attempt');
      },
      { answer: () => 500 },
    );
  });

  test('callback retries: a listener that never answers is abandoned after callbackTimeoutMs and retried', async () => {
    await withBoth(
      async (sandbox, listener) => {
        const caller = await sandbox.provision('collection');
        const created = await requestToPay(sandbox, caller, randomUUID(), '46733123499', listener.url());
        assert.equal(created.statusCode, 202);
        const [d1, d2] = sandbox.settings.callbackRetryDelaysMs as [number, number];
        // Each attempt ends (settles) only because its callbackTimeoutMs gives it up: the listener never answers.
        assert.equal((await receivedAfter(sandbox, listener)).length, 1);
        assert.equal(sandbox.clock.pending, 1, 'the abandoned attempt set its retry');
        assert.equal((await receivedAfter(sandbox, listener, d1)).length, 2);
        assert.equal((await receivedAfter(sandbox, listener, d2)).length, 3);
        assert.equal(sandbox.clock.pending, 0, 'after the last retry, nothing more is set');
      },
      { answer: () => 'hang', settings: { callbackTimeoutMs: 250 } },
    );
  });

  test('callback observers: each attempt is told as it ends, with its status or why none came, and whether a retry follows', async () => {
    await withBoth(
      async (sandbox, listener) => {
        const attempts: CallbackAttempt[] = [];
        sandbox.context.callbacks.observe?.((attempt) => void attempts.push(attempt));
        const caller = await sandbox.provision('collection');
        const id = randomUUID();
        assert.equal((await requestToPay(sandbox, caller, id, '46733123499', listener.url())).statusCode, 202);
        const [d1] = sandbox.settings.callbackRetryDelaysMs as [number];
        await receivedAfter(sandbox, listener);
        await receivedAfter(sandbox, listener, d1);
        assert.deepEqual(
          attempts.map(({ attempt, status, timedOut, willRetry, context }) => ({ attempt, status, timedOut, willRetry, context })),
          [
            { attempt: 1, status: 500, timedOut: false, willRetry: true, context: { kind: 'requesttopay', referenceId: id } },
            { attempt: 2, status: 200, timedOut: false, willRetry: false, context: { kind: 'requesttopay', referenceId: id } },
          ],
        );
        assert.ok(attempts.every((a) => a.url === listener.url() && a.method === 'PUT' && a.elapsedMs >= 0));
      },
      // Attempts the listener answers at once end well inside this, even on a machine busy with other work.
      { answer: (n) => (n === 1 ? 500 : 200), settings: { callbackTimeoutMs: 20_000 } },
    );
  });

  test('callback observers: a listener that never answers is told as timed out', async () => {
    await withBoth(
      async (sandbox, listener) => {
        const attempts: CallbackAttempt[] = [];
        sandbox.context.callbacks.observe?.((attempt) => void attempts.push(attempt));
        const caller = await sandbox.provision('collection');
        assert.equal((await requestToPay(sandbox, caller, randomUUID(), '46733123499', listener.url())).statusCode, 202);
        await receivedAfter(sandbox, listener);
        assert.equal(attempts.length, 1);
        assert.equal(attempts[0]!.timedOut, true, attempts[0]!.problem);
        assert.equal(attempts[0]!.status, undefined);
      },
      { answer: () => 'hang', settings: { callbackTimeoutMs: 100, callbackRetryDelaysMs: [] } },
    );
  });

  test('callback: refused host gives 500 INVALID_CALLBACK_URL_HOST (set A) and creates nothing', async () => {
    await withBoth(async (sandbox, listener) => {
      const caller = await sandbox.provision('collection'); // providerCallbackHost 127.0.0.1
      const id = randomUUID();
      for (const url of [`http://localhost:${listener.port}/cb`, 'https://callbacks.example.com/cb', 'http://127.0.0.2/cb']) {
        const refused = await requestToPay(sandbox, caller, id, '46733123499', url);
        assertError(refused, 500, 'INVALID_CALLBACK_URL_HOST');
        assert.equal(refused.json().message, 'Callback URL does not match the configured value.');
      }
      assertError(await status(sandbox, caller, RTP, id), 404, 'RESOURCE_NOT_FOUND');
      // The same reference id is still free.
      assert.equal((await requestToPay(sandbox, caller, id, '46733123499', listener.url())).statusCode, 202);
      const [first] = await receivedAfter(sandbox, listener);
      assert.deepEqual(first!.body, (await status(sandbox, caller, RTP, id)).json());
      assert.equal(listener.received.length, 1);
    });
  });

  test('callback: a deposit with a refused host gives 500 INVALID_CALLBACK_URL_HOST (set B) and creates nothing', async () => {
    await withBoth(async (sandbox, listener) => {
      const caller = await sandbox.provision('disbursement');
      const id = randomUUID();
      const refused = await deposit(sandbox, caller, id, '46733123499', 'http://callbacks.example.com/cb');
      assertError(refused, 500, 'INVALID_CALLBACK_URL_HOST', 'error-set-b');
      assert.deepEqual(refused.json(), { code: 'INVALID_CALLBACK_URL_HOST', message: 'Callback URL does not match the configured value.' });
      assertError(await status(sandbox, caller, DEPOSIT, id), 404, 'RESOURCE_NOT_FOUND', 'error-set-b');
      assert.equal((await deposit(sandbox, caller, id, '46733123499', listener.url())).statusCode, 202);
      assert.equal((await status(sandbox, caller, DEPOSIT, id)).json().status, 'SUCCESSFUL');
      assert.equal((await receivedAfter(sandbox, listener)).length, 1);
    });
  });

  test('callback: a providerCallbackHost with a port accepts only that port', async () => {
    await withBoth(async (sandbox, listener) => {
      const caller = await sandbox.provision('collection', { providerCallbackHost: `127.0.0.1:${listener.port}` });
      const otherPort = listener.port === 65535 ? 65534 : listener.port + 1;
      for (const url of [`http://127.0.0.1:${otherPort}/cb`, 'http://127.0.0.1/cb']) {
        const id = randomUUID();
        assertError(await requestToPay(sandbox, caller, id, '46733123499', url), 500, 'INVALID_CALLBACK_URL_HOST');
        assertError(await status(sandbox, caller, RTP, id), 404, 'RESOURCE_NOT_FOUND');
      }
      const id = randomUUID();
      assert.equal((await requestToPay(sandbox, caller, id, '46733123499', listener.url())).statusCode, 202);
      const [first] = await receivedAfter(sandbox, listener);
      assert.deepEqual(first!.body, (await status(sandbox, caller, RTP, id)).json());
    });
  });

  test('callback: a malformed X-Callback-Url is 400 and creates nothing', async () => {
    await withSandbox(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const id = randomUUID();
      for (const url of ['not a url', '127.0.0.1/cb', 'ftp://127.0.0.1/cb', 'http://127.0.0.1/c b', 'http://[::1/cb']) {
        assertBadRequest(await requestToPay(sandbox, caller, id, '46733123499', url));
      }
      assertError(await status(sandbox, caller, RTP, id), 404, 'RESOURCE_NOT_FOUND');
      assert.equal((await requestToPay(sandbox, caller, id)).statusCode, 202);
    });
  });

  test('callback: an http(s) X-Callback-Url without a host or with an impossible port is malformed: 400, not 500', async () => {
    await withSandbox(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const id = randomUUID();
      for (const url of ['http://', 'http:///cb', 'http://127.0.0.1:99999/cb']) {
        const response = await requestToPay(sandbox, caller, id, '46733123499', url);
        assert.equal(response.statusCode, 400, `${url}: ${response.body}`);
        assertSchema('bad-request', response.json());
      }
      assertError(await status(sandbox, caller, RTP, id), 404, 'RESOURCE_NOT_FOUND');
    });
  });

  test('callback: without X-Callback-Url nothing is sent, not even to the providerCallbackHost', async () => {
    await withBoth(async (sandbox, listener) => {
      // Registered with the listener's exact address, so a default callback would land there.
      const caller = await sandbox.provision('collection', { providerCallbackHost: `127.0.0.1:${listener.port}` });
      const quiet = randomUUID();
      assert.equal((await requestToPay(sandbox, caller, quiet)).statusCode, 202);
      assert.equal((await requestToPay(sandbox, caller, randomUUID(), '46733123451')).statusCode, 202);
      assert.equal((await status(sandbox, caller, RTP, quiet)).json().status, 'SUCCESSFUL');
      assert.deepEqual(await receivedAfter(sandbox, listener, 100 * sandbox.settings.callbackRetryDelaysMs.reduce((a, b) => a + b, 0)), []);
    });
  });

  test('callback: close() stops the retries of a failing callback', async () => {
    const sandbox = await startSandbox();
    const listener = await startListener(sandbox.clock, () => 500);
    let closed = false;
    try {
      const caller = await sandbox.provision('collection');
      assert.equal((await requestToPay(sandbox, caller, randomUUID(), '46733123499', listener.url())).statusCode, 202);
      assert.equal((await receivedAfter(sandbox, listener)).length, 1);
      await sandbox.close();
      closed = true;
      sandbox.clock.advance(100 * sandbox.settings.callbackRetryDelaysMs.reduce((a, b) => a + b, 0));
      assert.equal(listener.received.length, 1);
    } finally {
      if (!closed) await sandbox.close();
      await listener.close();
    }
  });

  test('callback: a transaction still PENDING when its sandbox closes never calls back', async () => {
    const sandbox = await startSandbox();
    const listener = await startListener(sandbox.clock);
    let closed = false;
    try {
      const caller = await sandbox.provision('collection');
      assert.equal((await requestToPay(sandbox, caller, randomUUID(), '46733123454', listener.url())).statusCode, 202);
      await sandbox.close();
      closed = true;
      sandbox.clock.advance(100 * sandbox.settings.delayedSuccessMs);
      assert.equal(listener.received.length, 0);
    } finally {
      if (!closed) await sandbox.close();
      await listener.close();
    }
  });
});

// =============================================================================================
// 2. Delivery notification (§4.2 #3)
// =============================================================================================

describe('delivery notification', { concurrency: true }, () => {
  test('delivery notification: 200 with an empty body on a SUCCESSFUL request to pay, with or without Language', async () => {
    await withSandbox(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const plain = await notify(sandbox, caller, await successfulRtp(sandbox, caller));
      assert.equal(plain.statusCode, 200, plain.body);
      assert.equal(plain.body, '');
      for (const language of ['en', 'fra']) {
        const withLanguage = await notify(
          sandbox,
          caller,
          await successfulRtp(sandbox, caller),
          { notificationMessage: 'x'.repeat(160) },
          { language },
        );
        assert.equal(withLanguage.statusCode, 200, withLanguage.body);
        assert.equal(withLanguage.body, '');
      }
    });
  });

  test('delivery notification: 400 for a missing, empty or over-160-character notificationMessage, and it counts as no attempt', async () => {
    await withSandbox(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const id = await successfulRtp(sandbox, caller);
      for (const payload of [{}, { notificationMessage: '' }, { notificationMessage: 'x'.repeat(161) }, { notificationMessage: 42 }]) {
        assertBadRequest(await notify(sandbox, caller, id, payload));
      }
      // None of the rejected requests started the cool-down.
      assert.equal((await notify(sandbox, caller, id)).statusCode, 200);
    });
  });

  test('delivery notification: 400 for a reference id that is not a UUID, and for a bad Language header', async () => {
    await withSandbox(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      assertBadRequest(await notify(sandbox, caller, 'not-a-uuid'));
      const id = await successfulRtp(sandbox, caller);
      for (const language of ['english', 'e', '12', 'en-US']) {
        assertBadRequest(await notify(sandbox, caller, id, undefined, { language }));
      }
      assert.equal((await notify(sandbox, caller, id)).statusCode, 200);
    });
  });

  test("delivery notification: 404 RESOURCE_NOT_FOUND for an unknown id and for another API user's request to pay", async () => {
    await withSandbox(async (sandbox) => {
      const owner = await sandbox.provision('collection');
      const stranger = await sandbox.provision('collection');
      assertError(await notify(sandbox, owner, randomUUID()), 404, 'RESOURCE_NOT_FOUND');
      const id = await successfulRtp(sandbox, owner);
      const foreign = await notify(sandbox, stranger, id);
      assertError(foreign, 404, 'RESOURCE_NOT_FOUND');
      // Answered exactly as an unknown id, so ids cannot be probed.
      assert.deepEqual(foreign.json(), (await notify(sandbox, stranger, randomUUID())).json());
      // The stranger's attempt did not touch the owner's notification state.
      assert.equal((await notify(sandbox, owner, id)).statusCode, 200);
    });
  });

  test('delivery notification: 409 TRANSACTION_NOT_COMPLETED for a FAILED and for a PENDING request to pay', async () => {
    await withSandbox(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      for (const partyId of ['46733123451', '46733123453']) {
        const id = randomUUID();
        assert.equal((await requestToPay(sandbox, caller, id, partyId)).statusCode, 202);
        const before = (await status(sandbox, caller, RTP, id)).json();
        assertError(await notify(sandbox, caller, id), 409, 'TRANSACTION_NOT_COMPLETED');
        assert.deepEqual((await status(sandbox, caller, RTP, id)).json(), before, 'the notification changed nothing');
      }
    });
  });

  test('delivery notification: 410 EXPIRED once notificationWindowMs has passed since completion', async () => {
    await withSandbox(
      async (sandbox) => {
        const caller = await sandbox.provision('collection');
        const early = await successfulRtp(sandbox, caller);
        const late = await successfulRtp(sandbox, caller);
        sandbox.clock.advance(sandbox.settings.notificationWindowMs - 1);
        assert.equal((await notify(sandbox, caller, early)).statusCode, 200, 'still inside the window');
        sandbox.clock.advance(2);
        assertError(await notify(sandbox, caller, late), 410, 'EXPIRED');
        // The record itself is still there: only the notification opportunity has gone.
        assert.equal((await status(sandbox, caller, RTP, late)).json().status, 'SUCCESSFUL');
      },
      { notificationWindowMs: 30 * 60_000 },
    );
  });

  test('delivery notification: with the default window and retention, a SUCCESSFUL request to pay is notifiable until the window ends, then 410', async () => {
    await withSandbox(
      async (sandbox) => {
        const caller = await sandbox.provision('collection');
        const inside = await successfulRtp(sandbox, caller);
        const after = await successfulRtp(sandbox, caller);
        // The default window ends well inside the default retention age, so the record is still there to answer 410.
        assert.ok(sandbox.settings.notificationWindowMs < sandbox.settings.retentionMaxAgeMs);
        sandbox.clock.advance(sandbox.settings.notificationWindowMs - 1);
        const response = await notify(sandbox, caller, inside);
        assert.equal(response.statusCode, 200, `inside the ${sandbox.settings.notificationWindowMs} ms window: ${response.body}`);
        sandbox.clock.advance(2);
        assertError(await notify(sandbox, caller, after), 410, 'EXPIRED');
      },
      { tokenLifetimeSeconds: 7 * 86_400 },
    );
  });

  test('delivery notification: 410 EXPIRED is checked before the 429 cool-down', async () => {
    await withSandbox(
      async (sandbox) => {
        const caller = await sandbox.provision('collection');
        const id = await successfulRtp(sandbox, caller);
        assert.equal((await notify(sandbox, caller, id)).statusCode, 200);
        sandbox.clock.advance(1_001);
        assertError(await notify(sandbox, caller, id), 410, 'EXPIRED');
      },
      { notificationWindowMs: 1_000, notificationCooldownMs: 60_000 },
    );
  });

  test('delivery notification: 429 NOT_ALLOWED for a repeat within notificationCooldownMs, 200 again after it', async () => {
    await withSandbox(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const id = await successfulRtp(sandbox, caller);
      const other = await successfulRtp(sandbox, caller);
      assert.equal((await notify(sandbox, caller, id)).statusCode, 200);
      assertError(await notify(sandbox, caller, id), 429, 'NOT_ALLOWED');
      // The cool-down is per reference id.
      assert.equal((await notify(sandbox, caller, other)).statusCode, 200);
      sandbox.clock.advance(sandbox.settings.notificationCooldownMs - 1);
      assertError(await notify(sandbox, caller, id), 429, 'NOT_ALLOWED');
      sandbox.clock.advance(2);
      const again = await notify(sandbox, caller, id);
      assert.equal(again.statusCode, 200, again.body);
      assert.equal(again.body, '');
      // The successful repeat starts a new cool-down.
      assertError(await notify(sandbox, caller, id), 429, 'NOT_ALLOWED');
    });
  });

  test('delivery notification: 429 never comes before a first success (409s, then 200, then 429)', async () => {
    await withSandbox(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const id = randomUUID();
      assert.equal((await requestToPay(sandbox, caller, id, '46733123454')).statusCode, 202);
      assertError(await notify(sandbox, caller, id), 409, 'TRANSACTION_NOT_COMPLETED');
      assertError(await notify(sandbox, caller, id), 409, 'TRANSACTION_NOT_COMPLETED');
      sandbox.clock.advance(sandbox.settings.delayedSuccessMs);
      assert.equal((await status(sandbox, caller, RTP, id)).json().status, 'SUCCESSFUL');
      const first = await notify(sandbox, caller, id);
      assert.equal(first.statusCode, 200, first.body);
      assertError(await notify(sandbox, caller, id), 429, 'NOT_ALLOWED');
    });
  });

  test('delivery notification: 404s for an unknown id never turn into 429', async () => {
    await withSandbox(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const id = randomUUID();
      assertError(await notify(sandbox, caller, id), 404, 'RESOURCE_NOT_FOUND');
      assertError(await notify(sandbox, caller, id), 404, 'RESOURCE_NOT_FOUND');
    });
  });

  test('delivery notification: an unknown X-Target-Environment is 500 NOT_ALLOWED_TARGET_ENVIRONMENT (set A)', async () => {
    await withSandbox(async (sandbox) => {
      const caller = await sandbox.provision('collection');
      const id = await successfulRtp(sandbox, caller);
      assertError(
        await notify(sandbox, caller, id, undefined, { 'x-target-environment': 'mtnuganda' }),
        500,
        'NOT_ALLOWED_TARGET_ENVIRONMENT',
      );
      // Refused before any notification was recorded.
      assert.equal((await notify(sandbox, caller, id)).statusCode, 200);
    });
  });
});
