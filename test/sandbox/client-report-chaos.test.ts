/**
 * The client report and the chaos wired together as the command wires them (cli/sandbox.ts: the report made first, its
 * chaosApplied handed to the chaos plugin): for each chaos condition, a client driven through it over a real connection
 * shows up in the report with that condition and how it went on, and the double-payment finding comes only for the
 * client that made the same payment again under a new X-Reference-Id after a creation whose outcome it was not told.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import type { OperationId } from '../../core/catalogue/operations.ts';
import { behaviourOf } from '../../core/profiles.ts';
import { chaosPlugins } from '../../sandbox/chaos/chaos.ts';
import { ChaosDraws } from '../../sandbox/chaos/draws.ts';
import { isRequestCondition, routesOf } from '../../sandbox/chaos/occasions.ts';
import { ClientReport } from '../../sandbox/client-report/client-report.ts';
import type { Coping } from '../../sandbox/client-report/recorder.ts';
import type { ReportedClient } from '../../sandbox/client-report/report.ts';
import { CHAOS_CONDITIONS, type ChaosCondition } from '../../sandbox/domain/chaos-conditions.ts';
import type { SandboxSettings } from '../../sandbox/domain/settings.ts';
import { listenOnLoopback, type RunningSandbox } from '../../sandbox/start.ts';
import { KEYS, basic, eventually, path, requestToPayBody, startSandbox, testSettings, type TestSandbox } from '../support/sandbox.ts';

/** The conditions as their definitions hold them. */
const CONDITIONS = Object.keys(CHAOS_CONDITIONS) as ChaosCondition[];

/** What the conditions wait, on the sandbox's manual clock. */
const CHAOS_AMOUNTS: Partial<SandboxSettings> = {
  chaosLatencyMs: { min: 1000, max: 1000 },
  chaosLongPendingMs: 5000,
  chaosCallbackDelayMs: { min: 3000, max: 3000 },
  // Callback attempts that a receiver answering at once ends well inside, even on a busy machine.
  callbackTimeoutMs: 20_000,
};

/**
 * A share below 1, with the seed whose draws make the condition hit the client's payment and nothing else: at share 1,
 * 503 would refuse the provisioning and 500 the token, and the client would never reach a payment.
 */
const SHARE = 0.5;
/** What the client does before its payment, each an occasion for a condition that acts on requests. */
const SETUP: readonly OperationId[] = ['createApiUser', 'createApiKey', 'createAccessToken'];
/** Occasions after the payment's that the seed keeps clear: the client's few requests after it, and a callback. */
const CLEAR_AFTER = 5;

/** How many occasions of the condition come before the payment's: the setup operations on its routes, if it acts on requests. */
function occasionsBeforeThePayment(condition: ChaosCondition): number {
  if (!isRequestCondition(condition)) return 0;
  const routes = routesOf(condition, behaviourOf('spec'));
  return SETUP.filter((id) => routes.has(`${id} ${id === 'createAccessToken' ? 'collection' : 'any'}`)).length;
}

/** The first seed whose draws of the condition pass the occasions before the payment, take the payment's, and pass the next. */
function seedThatHitsThePayment(condition: ChaosCondition): number {
  const pattern = [...Array<boolean>(occasionsBeforeThePayment(condition)).fill(false), true, ...Array<boolean>(CLEAR_AFTER).fill(false)];
  for (let seed = 0; seed < 100_000; seed += 1) {
    const draws = new ChaosDraws(seed);
    if (pattern.every((applies) => draws.chance(condition, SHARE) === applies)) return seed;
  }
  throw new Error(`no seed draws ${pattern.join(',')} for ${condition}`);
}

// ---------------------------------------------------------------------------------------------------------------
// A sandbox wired as the command wires it, a callback receiver, and a client over a real connection
// ---------------------------------------------------------------------------------------------------------------

interface CallbackReceiver {
  url: string;
  received: { status?: string }[];
  close(): Promise<void>;
}

/** A listener on 127.0.0.1 that keeps each callback's body and answers 200 at once. */
async function startCallbackReceiver(): Promise<CallbackReceiver> {
  const received: CallbackReceiver['received'] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString('utf8');
    });
    req.on('end', () => {
      received.push(JSON.parse(body) as { status?: string });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/momo/callback`,
    received,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface ChaosRun {
  condition: ChaosCondition;
  sandbox: TestSandbox;
  report: ClientReport;
  running: RunningSandbox;
  receiver: CallbackReceiver;
}

/** A sandbox with the condition on and a client report, wired as cli/sandbox.ts wires them, for one test. */
async function withChaosAndReport(condition: ChaosCondition, body: (run: ChaosRun) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'momo-client-report-chaos-'));
  const overrides: Partial<SandboxSettings> = {
    ...CHAOS_AMOUNTS,
    chaos: { [condition]: SHARE },
    chaosSeed: seedThatHitsThePayment(condition),
    clientReport: dir,
  };
  // As the command does: the report first, and its chaosApplied the chaos plugin's listener.
  const report = new ClientReport(dir);
  const sandbox = await startSandbox(overrides, {
    clientReport: report,
    plugins: chaosPlugins(testSettings(overrides), report.chaosApplied),
  });
  const running = await listenOnLoopback(sandbox);
  const receiver = await startCallbackReceiver();
  try {
    await body({ condition, sandbox, report, running, receiver });
  } finally {
    await receiver.close();
    await running.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What the client heard of a request: a status, or the connection closed without an answer. */
type Heard = number | 'no answer';

/**
 * A client of the collection product over a real connection (the cuts close it): it provisions an API user and key,
 * gets a token, pays with a callback to its receiver and reads the status, each answer waited for on the sandbox's
 * clock when latency holds it back.
 */
class PayingClient {
  userId = randomUUID();
  private apiKey = '';
  private token = '';

  constructor(readonly run: ChaosRun) {}

  get reportId(): string {
    return `api-user:${this.userId}`;
  }

  async provision(): Promise<void> {
    const provisioning = { 'ocp-apim-subscription-key': KEYS.collection };
    const user = await this.send(
      'POST',
      path('createApiUser'),
      { ...provisioning, 'x-reference-id': this.userId },
      { providerCallbackHost: '127.0.0.1' },
    );
    assert.equal(user.status, 201);
    const key = await this.send('POST', path('createApiKey', undefined, { referenceId: this.userId }), provisioning);
    assert.equal(key.status, 201);
    this.apiKey = (key.json as { apiKey: string }).apiKey;
    await this.renewToken();
  }

  async renewToken(): Promise<void> {
    const token = await this.send('POST', path('createAccessToken', 'collection'), {
      'ocp-apim-subscription-key': KEYS.collection,
      authorization: basic(this.userId, this.apiKey),
    });
    assert.equal(token.status, 200);
    this.token = (token.json as { access_token: string }).access_token;
  }

  async pay(referenceId: string): Promise<Heard> {
    const headers = { ...this.headers(), 'x-reference-id': referenceId, 'x-callback-url': this.run.receiver.url };
    return (await this.send('POST', path('requestToPay', 'collection'), headers, requestToPayBody())).status;
  }

  async readStatus(referenceId: string): Promise<{ heard: Heard; status?: string }> {
    const answer = await this.send('GET', path('getRequestToPayStatus', 'collection', { referenceId }), this.headers());
    return { heard: answer.status, status: (answer.json as { status?: string } | undefined)?.status };
  }

  private headers(): Record<string, string> {
    return { 'ocp-apim-subscription-key': KEYS.collection, authorization: `Bearer ${this.token}`, 'x-target-environment': 'sandbox' };
  }

  /** A request and what the client heard; an answer latency holds back comes once the sandbox's clock has moved past it. */
  private async send(
    method: 'GET' | 'POST',
    url: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<{ status: Heard; json?: unknown }> {
    const heldBefore = this.latencyApplied();
    let settled = false;
    const answer = request(`${this.run.running.baseUrl}${url}`, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).then(
      async (response) => {
        const text = await response.body.text();
        return { status: response.statusCode as Heard, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
      },
      (error: { code?: string }) => {
        assert.equal(error.code, 'UND_ERR_SOCKET', 'the connection closed without an answer');
        return { status: 'no answer' as Heard };
      },
    );
    void answer.finally(() => {
      settled = true;
    });
    await eventually(async () => (settled || this.latencyApplied() > heldBefore ? true : undefined), { intervalMs: 2 });
    if (!settled) this.run.sandbox.clock.advance(this.run.sandbox.settings.chaosLatencyMs.max);
    return answer;
  }

  /** How often the report was told of latency, for any client: each time, an answer is held back on the clock. */
  private latencyApplied(): number {
    if (this.run.condition !== 'latency') return 0;
    return this.run.report
      .document()
      .clients.flatMap((client) => client.chaos)
      .filter((chaos) => chaos.condition === 'latency')
      .reduce((sum, chaos) => sum + chaos.applied, 0);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// How a client goes on after the condition: one helper a behaviour
// ---------------------------------------------------------------------------------------------------------------

interface Behaviour {
  /** What the client does, in words for the test's name. */
  does: string;
  /** How the report should say it coped. */
  coping: Coping;
  /** Whether it made the payment a second time. */
  paysTwice: boolean;
  act(client: PayingClient, payment: string): Promise<void>;
}

const retriesWithTheSameId: Behaviour = {
  does: 'sends the payment again with the SAME X-Reference-Id',
  coping: 'retried with the same X-Reference-Id',
  paysTwice: false,
  act: async (client, payment) => {
    assert.equal(await client.pay(payment), 202);
  },
};

const readsTheStatus: Behaviour = {
  does: 'reads the status',
  coping: 'read the status',
  paysTwice: false,
  act: async (client, payment) => {
    assert.deepEqual(await client.readStatus(payment), { heard: 200, status: 'SUCCESSFUL' });
  },
};

const readsTheStatusUntilItSettles: Behaviour = {
  does: 'reads the status, PENDING, and again once it settled',
  coping: 'read the status',
  paysTwice: false,
  act: async (client, payment) => {
    assert.deepEqual(await client.readStatus(payment), { heard: 200, status: 'PENDING' });
    client.run.sandbox.clock.advance(CHAOS_AMOUNTS.chaosLongPendingMs!);
    assert.deepEqual(await client.readStatus(payment), { heard: 200, status: 'SUCCESSFUL' });
  },
};

const paysAgainUnderANewId: Behaviour = {
  does: 'sends the same payment under a NEW X-Reference-Id',
  coping: 'made it again under a new X-Reference-Id',
  paysTwice: true,
  act: async (client) => {
    assert.equal(await client.pay(randomUUID()), 202);
  },
};

/** A behaviour after getting a new token, as a client does after a 401 invalid_token. */
function afterANewToken(behaviour: Behaviour): Behaviour {
  return {
    ...behaviour,
    does: `gets a new token and ${behaviour.does}`,
    act: async (client, payment) => {
      await client.renewToken();
      await behaviour.act(client, payment);
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Each condition: what the client hears of its payment, what it meets then, and how a careful and a careless one go on
// ---------------------------------------------------------------------------------------------------------------

interface Driver {
  /** What the client hears of its payment when the condition hits it. */
  paymentHeard: Heard;
  /** What the client meets after that answer before it goes on (the callbacks the condition sends late, twice or never). */
  meet?: (client: PayingClient) => Promise<void>;
  /** The client that keeps to its payment's X-Reference-Id. */
  careful: Behaviour;
  /** The client that pays again under a new one. */
  careless: Behaviour;
  /** Whether the condition left the client without the creation's outcome, so that paying again risks paying twice. */
  outcomeUnknown: boolean;
}

const callbacksOf = (client: PayingClient) => client.run.receiver.received;

async function callbackComesLate(client: PayingClient): Promise<void> {
  await client.run.sandbox.context.callbacks.settled();
  assert.equal(callbacksOf(client).length, 0, 'the delayed callback came at once');
  client.run.sandbox.clock.advance(CHAOS_AMOUNTS.chaosCallbackDelayMs!.max);
  await eventually(async () => (callbacksOf(client).length === 1 ? true : undefined));
}

async function callbackComesTwice(client: PayingClient): Promise<void> {
  await eventually(async () => (callbacksOf(client).length === 1 ? true : undefined));
  client.run.sandbox.clock.advance(1000);
  await eventually(async () => (callbacksOf(client).length === 2 ? true : undefined));
  assert.deepEqual(
    callbacksOf(client).map((callback) => callback.status),
    ['SUCCESSFUL', 'SUCCESSFUL'],
  );
}

async function callbackNeverComes(client: PayingClient): Promise<void> {
  client.run.sandbox.clock.advance(60_000);
  await client.run.sandbox.context.callbacks.settled();
  assert.equal(callbacksOf(client).length, 0, 'the lost callback came');
}

/** A condition on the payment's callback: the client was told 202, meets the callback as it comes, and goes on. */
const aCallbackCondition = (meet: Driver['meet']): Driver => ({
  paymentHeard: 202,
  meet,
  careful: readsTheStatus,
  careless: paysAgainUnderANewId,
  outcomeUnknown: false,
});

const DRIVERS: Record<ChaosCondition, Driver> = {
  latency: { paymentHeard: 202, careful: readsTheStatus, careless: paysAgainUnderANewId, outcomeUnknown: false },
  '500': { paymentHeard: 500, careful: retriesWithTheSameId, careless: paysAgainUnderANewId, outcomeUnknown: true },
  '503': { paymentHeard: 503, careful: retriesWithTheSameId, careless: paysAgainUnderANewId, outcomeUnknown: true },
  'cut-before-store': { paymentHeard: 'no answer', careful: retriesWithTheSameId, careless: paysAgainUnderANewId, outcomeUnknown: true },
  'cut-after-store': { paymentHeard: 'no answer', careful: readsTheStatus, careless: paysAgainUnderANewId, outcomeUnknown: true },
  'long-pending': { paymentHeard: 202, careful: readsTheStatusUntilItSettles, careless: paysAgainUnderANewId, outcomeUnknown: false },
  'callback-delayed': aCallbackCondition(callbackComesLate),
  'callback-repeated': aCallbackCondition(callbackComesTwice),
  'callback-lost': aCallbackCondition(callbackNeverComes),
  'token-refused-early': {
    paymentHeard: 401,
    careful: afterANewToken(retriesWithTheSameId),
    careless: afterANewToken(paysAgainUnderANewId),
    outcomeUnknown: false,
  },
};

/** A client through the condition, going on as the behaviour says; what the report then says of it. */
async function clientThrough(condition: ChaosCondition, behaviour: Behaviour): Promise<{ reported: ReportedClient; payment: string }> {
  const driver = DRIVERS[condition];
  let outcome: { reported: ReportedClient; payment: string } | undefined;
  await withChaosAndReport(condition, async (run) => {
    const client = new PayingClient(run);
    await client.provision();
    const payment = randomUUID();
    assert.equal(await client.pay(payment), driver.paymentHeard, 'the condition hit the payment');
    await driver.meet?.(client);
    await behaviour.act(client, payment);
    const reported = run.report.document().clients.find((c) => c.id === client.reportId);
    assert.ok(reported, 'the report has the client');
    outcome = { reported, payment };
  });
  return outcome!;
}

const DOUBLE_PAYMENT = 'double-payment-risk';

describe('the client report, with chaos wired as the command wires it: how a client driven through each condition coped', () => {
  test('every condition the definitions hold has a driver', () => {
    assert.deepEqual(Object.keys(DRIVERS).sort(), [...CONDITIONS].sort());
  });

  for (const condition of CONDITIONS) {
    const driver = DRIVERS[condition];
    for (const behaviour of [driver.careful, driver.careless]) {
      const doublePayment = behaviour.paysTwice && driver.outcomeUnknown;
      test(`${condition}: a client that ${behaviour.does} is reported as "${behaviour.coping}"${doublePayment ? ', with the double-payment finding' : ', with no double-payment finding'}`, async () => {
        const { reported, payment } = await clientThrough(condition, behaviour);
        assert.deepEqual(
          reported.chaos.map((chaos) => ({
            condition: chaos.condition,
            applied: chaos.applied,
            coping: chaos.coping,
            referenceId: chaos.first.referenceId,
          })),
          [{ condition, applied: 1, coping: [{ outcome: behaviour.coping, count: 1 }], referenceId: payment }],
        );
        assert.deepEqual(
          reported.findings.filter((finding) => finding.rule === DOUBLE_PAYMENT).map((finding) => finding.rule),
          doublePayment ? [DOUBLE_PAYMENT] : [],
        );
      });
    }
  }
});
