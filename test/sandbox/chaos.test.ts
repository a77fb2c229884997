/**
 * The sandbox's spec-legal chaos (--chaos, sandbox/chaos): each condition happens where it may, as its seed says,
 * is told to the listener and the log, and leaves answers the harness's own judge takes as the API's; a sandbox
 * without --chaos installs none of it; bad settings stop the start with a line that says what to fix.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import pino from 'pino';
import { request } from 'undici';
import type { LightMyRequestResponse } from 'fastify';
import { OPERATIONS, type OperationId } from '../../core/catalogue/operations.ts';
import { bindingOf, labelOf, routes } from '../../core/catalogue/routes.ts';
import { PROFILES, behaviourOf, type ProfileName } from '../../core/profiles.ts';
import type { Product } from '../../core/products.ts';
import { validatorFor } from '../../core/validation/schemas.ts';
import type { ApiResponse } from '../../harness/client/momo-client.ts';
import { schemasFor } from '../../harness/checks/contract.ts';
import { TargetUnavailableAnswer, judge, judgeAnswer, type JudgingContext } from '../../harness/judging/judge.ts';
import { bodyFindings } from '../../harness/checks/answers.ts';
import { Redactor } from '../../core/secrets/redact.ts';
import { chaosPlugins, chaosTable, chaosText } from '../../sandbox/chaos/chaos.ts';
import { ChaosDraws } from '../../sandbox/chaos/draws.ts';
import { INTERNAL_ERROR, UNAVAILABLE, routeKey, routesOf } from '../../sandbox/chaos/occasions.ts';
import type { ChaosApplied } from '../../sandbox/domain/chaos-applied.ts';
import { CHAOS_CONDITIONS, CHAOS_CONDITION_NAMES, type ChaosShares, SPEC_LEGAL_CONDITIONS } from '../../sandbox/domain/chaos-conditions.ts';
import type { SandboxPlugin } from '../../sandbox/domain/plugins.ts';
import { SettingsError, resolveSettings, type SandboxSettings } from '../../sandbox/domain/settings.ts';
import { listenOnLoopback } from '../../sandbox/start.ts';
import { KEYS, eventually, path, requestToPayBody, startSandbox, testSettings, type Caller, type TestSandbox } from '../support/sandbox.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

/** A sandbox with chaos, what the chaos told its listener, and the lines of its log. */
interface Chaotic {
  sandbox: TestSandbox;
  applied: ChaosApplied[];
  log: Record<string, unknown>[];
  /** What the sandbox sent as callbacks, and when by its clock (with `recordCallbacks`, nothing goes on the network). */
  callbacks: { at: number; url: string; kind: string; body: unknown }[];
}

async function chaotic(overrides: Partial<SandboxSettings>, { recordCallbacks = false } = {}): Promise<Chaotic> {
  const applied: ChaosApplied[] = [];
  const log: Record<string, unknown>[] = [];
  const callbacks: Chaotic['callbacks'] = [];
  const lines = new Writable({
    write(chunk, _encoding, done) {
      log.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  // The settings the sandbox is built with, so the chaos plugin reads the same shares and seed.
  const chaos = chaosPlugins(testSettings(overrides), (a) => applied.push(a));
  const recording = recordCallbacks ? [recordingCallbacks(callbacks)] : [];
  // The recorder first: the chaos wraps the sink as the recorder left it, as it wraps the real one.
  const sandbox = await startSandbox(overrides, { logger: pino({ level: 'info' }, lines), plugins: [...recording, ...chaos] });
  return { sandbox, applied, log, callbacks };
}

/** A callback sink that records what would be sent and when, instead of sending it. */
function recordingCallbacks(sent: Chaotic['callbacks']): SandboxPlugin {
  return {
    name: 'recorded callbacks',
    wrap: {
      callbacks: (_sink, { components }) => {
        const clock = components.clock!;
        const record = (url: string, body: unknown, context: Record<string, string>) =>
          sent.push({ at: clock.now(), url, kind: context.kind ?? '', body });
        return {
          send: (url, _method, body, context) => record(url, body, context),
          sendLater: (delayMs, url, _method, body, context) => void clock.setTimer(delayMs, () => record(url, body, context)),
          settled: async () => undefined,
          close: async () => undefined,
        };
      },
    },
  };
}

/** An API user of the product with an access token, made in the sandbox's state: no request, so no chaos on the way. */
function callerOf(sandbox: TestSandbox, product: Product = 'collection'): Caller {
  const userId = randomUUID();
  sandbox.context.state.apiUsers.add(userId, { id: userId, product, providerCallbackHost: '127.0.0.1', targetEnvironment: 'sandbox' });
  return withNewToken(sandbox, { product, userId, apiKey: '', token: '', headers: {} });
}

/** The caller with a new access token, as a client gets one after a 401. */
function withNewToken(sandbox: TestSandbox, caller: Caller): Caller {
  const token = sandbox.context.tokens.issue(
    { sub: caller.userId, prd: caller.product, use: 'access' },
    sandbox.settings.tokenLifetimeSeconds,
  );
  return {
    ...caller,
    token,
    headers: { 'ocp-apim-subscription-key': KEYS[caller.product], authorization: `Bearer ${token}`, 'x-target-environment': 'sandbox' },
  };
}

/**
 * The first seed whose draws of a condition, at a share, come out as the pattern (true: it applies): the test then
 * knows which occasion the condition takes, which is what seeding promises.
 */
function seedFor(condition: string, share: number, pattern: readonly boolean[]): number {
  for (let seed = 0; seed < 10_000; seed += 1) {
    const draws = new ChaosDraws(seed);
    if (pattern.every((applies) => draws.chance(condition, share) === applies)) return seed;
  }
  throw new Error(`no seed below 10000 draws ${pattern.join(',')} for ${condition} at ${share}`);
}

/**
 * The answer to a request, moving the sandbox's clock past a latency when the chaos holds it back: it waits until the
 * answer came or the chaos reported holding it (which may happen before `send` returns), then moves the clock by the
 * longest latency.
 */
async function answerOf(run: Chaotic, send: () => Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
  const held = () => run.applied.filter((a) => a.condition === 'latency').length;
  const before = held();
  let answered = false;
  const pending = send();
  void pending.finally(() => {
    answered = true;
  });
  await eventually(async () => (answered || held() > before ? true : undefined), { intervalMs: 1 });
  if (!answered) run.sandbox.clock.advance(run.sandbox.settings.chaosLatencyMs.max);
  return pending;
}

const transactionPath = (referenceId: string) => path('getRequestToPayStatus', 'collection', { referenceId });

function requestToPay(sandbox: TestSandbox, caller: Caller, referenceId: string, extra: Record<string, string> = {}) {
  return sandbox.call({
    method: 'POST',
    url: path('requestToPay'),
    headers: { ...caller.headers, 'x-reference-id': referenceId, ...extra },
    payload: requestToPayBody(),
  });
}

const statusOf = (sandbox: TestSandbox, caller: Caller, referenceId: string) =>
  sandbox.call({ method: 'GET', url: transactionPath(referenceId), headers: caller.headers });

const balanceOf = (sandbox: TestSandbox, caller: Caller) =>
  sandbox.call({ method: 'GET', url: path('getBalance', caller.product), headers: caller.headers });

/** A request to pay and its status query over a real connection, which the cuts need (inject has no socket to close). */
function overSocket(baseUrl: string, caller: Caller) {
  return {
    create: (referenceId: string) =>
      request(`${baseUrl}${path('requestToPay')}`, {
        method: 'POST',
        headers: { ...caller.headers, 'x-reference-id': referenceId, 'content-type': 'application/json' },
        body: JSON.stringify(requestToPayBody()),
      }),
    status: (referenceId: string) => request(`${baseUrl}${transactionPath(referenceId)}`, { headers: caller.headers }),
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The harness's judge over what the chaos answers.

function judgingContext(profile: ProfileName): JudgingContext {
  return {
    run: { profile, strict: false },
    behaviour: behaviourOf(profile),
    redactor: new Redactor(),
    warn: () => undefined,
    evaluated: () => undefined,
  };
}

function apiResponse(
  id: OperationId,
  product: Product,
  answer: { statusCode: number; headers: Record<string, unknown>; body: string },
): ApiResponse {
  let json: unknown;
  try {
    json = answer.body.trim() === '' ? undefined : JSON.parse(answer.body);
  } catch {
    json = undefined;
  }
  return {
    operation: { id, product, label: labelOf(id, product), section: bindingOf(id, product).section },
    status: answer.statusCode,
    headers: Object.fromEntries(Object.entries(answer.headers).map(([name, value]) => [name, String(value)])),
    json,
    text: answer.body,
    durationMs: 0,
  };
}

/**
 * The harness's judge, in both profiles, takes an answer as one the operation may give: a status its catalogue entry
 * lists with a body of that status (or a 503, which it counts as the target unavailable, never a departure), and no
 * secret given out.
 */
function assertJudgedLegal(id: OperationId, product: Product, answer: LightMyRequestResponse): void {
  for (const profile of PROFILES) {
    const response = apiResponse(id, product, answer);
    const context = judgingContext(profile);
    const listed = Object.keys(OPERATIONS[id].responses).map(Number);
    try {
      judge(response, { status: listed, what: 'an answer under chaos' }, context);
    } catch (error) {
      if (!(error instanceof TargetUnavailableAnswer && answer.statusCode === 503)) throw error;
    }
    assert.deepEqual(bodyFindings(response, context.behaviour, context.run), [], `${id} ${answer.statusCode} in the ${profile} profile`);
    judgeAnswer(response, context);
  }
}

// ---------------------------------------------------------------------------------------------------------------

describe('chaos conditions, one by one', () => {
  test('latency: an answer is held back on the sandbox clock within --chaos-latency-ms, then comes unchanged', async () => {
    const run = await chaotic({ chaos: { latency: 1 }, chaosSeed: 1, chaosLatencyMs: { min: 1000, max: 1000 } });
    try {
      const caller = callerOf(run.sandbox);
      let answered = false;
      const pending = balanceOf(run.sandbox, caller).finally(() => {
        answered = true;
      });
      await eventually(async () => (run.applied.length > 0 ? true : undefined), { intervalMs: 1 });
      run.sandbox.clock.advance(999);
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(answered, false, 'answered before the latency had passed');
      run.sandbox.clock.advance(1);
      const answer = await pending;
      assert.equal(answer.statusCode, 200);
      assertJudgedLegal('getBalance', 'collection', answer);
      assert.deepEqual(
        run.applied.map(({ condition, operationId, apiUserId, detail }) => ({ condition, operationId, apiUserId, detail })),
        [{ condition: 'latency', operationId: 'getBalance', apiUserId: caller.userId, detail: 'held the 200 back 1000 ms' }],
      );
      assert.match(run.applied[0]!.requestId ?? '', /^req-/);
    } finally {
      await run.sandbox.close();
    }
  });

  for (const condition of ['500', '503'] as const) {
    test(`${condition}: answered instead of carried out, nothing stored, and the same X-Reference-Id then succeeds`, async () => {
      // The creation draws the condition; the status query, the creation sent again and the second query do not.
      const run = await chaotic({ chaos: { [condition]: 0.5 }, chaosSeed: seedFor(condition, 0.5, [true, false, false, false]) });
      try {
        const caller = callerOf(run.sandbox);
        const id = randomUUID();
        const refused = await requestToPay(run.sandbox, caller, id);
        assert.equal(refused.statusCode, Number(condition));
        assert.deepEqual(refused.json(), condition === '500' ? INTERNAL_ERROR : UNAVAILABLE);
        if (condition === '503') assert.equal(refused.headers['retry-after'], '1');
        assertJudgedLegal('requestToPay', 'collection', refused);
        assert.equal((await statusOf(run.sandbox, caller, id)).statusCode, 404, 'the refused creation was stored');
        assert.equal((await requestToPay(run.sandbox, caller, id)).statusCode, 202);
        assert.equal((await statusOf(run.sandbox, caller, id)).statusCode, 200);
        assert.deepEqual(
          run.applied.map(({ condition: c, operationId, apiUserId, referenceId }) => ({ c, operationId, apiUserId, referenceId })),
          [{ c: condition, operationId: 'requestToPay', apiUserId: caller.userId, referenceId: id }],
        );
      } finally {
        await run.sandbox.close();
      }
    });
  }

  test('500 and 503 answer only for a target environment the sandbox serves: the spec gives the other its own 500', async () => {
    const run = await chaotic({ chaos: { '500': 1, '503': 1 }, chaosSeed: 3 });
    try {
      const caller = callerOf(run.sandbox);
      const answer = await run.sandbox.call({
        method: 'GET',
        url: path('getBalance', 'collection'),
        headers: { ...caller.headers, 'x-target-environment': 'mtnuganda' },
      });
      assert.equal(answer.statusCode, 500);
      assert.equal((answer.json() as { code: string }).code, 'NOT_ALLOWED_TARGET_ENVIRONMENT');
      assert.deepEqual(run.applied, []);
    } finally {
      await run.sandbox.close();
    }
  });

  test('500 and 503 go where the contract the harness judges by takes them, and nowhere else', () => {
    for (const profile of PROFILES) {
      const behaviour = behaviourOf(profile);
      const internal = routesOf('500', behaviour);
      const unavailable = routesOf('503', behaviour);
      for (const route of routes()) {
        const product = route.product ?? 'collection';
        const takes = (status: number, body: unknown) => {
          const schemas = schemasFor(route.operation.id, product, status, behaviour);
          return Array.isArray(schemas) && schemas.some((schema) => validatorFor(schema)(body));
        };
        const key = routeKey(route);
        // 500 only where the spec's own text lists it (§7 rule 3 for status reads), never where the catalogue infers it.
        assert.equal(internal.has(key), route.operation.responses[500]?.source === 'spec' && takes(500, INTERNAL_ERROR), `500 on ${key}`);
        assert.equal(unavailable.has(key), takes(503, UNAVAILABLE), `503 on ${key}`);
      }
      // Provisioning's errors are set C, which has neither code.
      assert.ok(!internal.has('createApiKey any') && !unavailable.has('getApiUser any'));
      assert.ok(internal.has('requestToPay collection') && unavailable.has('requestToPay collection'));
    }
  });

  test('cut-before-store: no answer, nothing stored (404), and the same X-Reference-Id then succeeds', async () => {
    const run = await chaotic({ chaos: { 'cut-before-store': 0.5 }, chaosSeed: seedFor('cut-before-store', 0.5, [true, false]) });
    const running = await listenOnLoopback(run.sandbox);
    try {
      const id = randomUUID();
      const api = overSocket(running.baseUrl, callerOf(run.sandbox));
      const send = () => api.create(id);
      const status = () => api.status(id);
      await assert.rejects(send(), { code: 'UND_ERR_SOCKET' });
      const unknown = await status();
      assert.equal(unknown.statusCode, 404);
      assert.deepEqual(await unknown.body.json(), { code: 'RESOURCE_NOT_FOUND', message: 'Requested resource was not found.' });
      const again = await send();
      await again.body.dump();
      assert.equal(again.statusCode, 202);
      const stored = await status();
      assert.equal(stored.statusCode, 200);
      assert.equal(((await stored.body.json()) as { status: string }).status, 'SUCCESSFUL');
      assert.deepEqual(
        run.applied.map(({ condition, operationId, referenceId, detail }) => ({ condition, operationId, referenceId, detail })),
        [{ condition: 'cut-before-store', operationId: 'requestToPay', referenceId: id, detail: 'closed the connection before storing' }],
      );
    } finally {
      await running.close();
    }
  });

  test('cut-after-store: no answer, yet the transaction reads back under the same X-Reference-Id, and sent again is 409', async () => {
    const run = await chaotic({ chaos: { 'cut-after-store': 1 }, chaosSeed: 5 });
    const running = await listenOnLoopback(run.sandbox);
    try {
      const caller = callerOf(run.sandbox);
      const id = randomUUID();
      const api = overSocket(running.baseUrl, caller);
      const send = () => api.create(id);
      await assert.rejects(send(), { code: 'UND_ERR_SOCKET' });
      const stored = await api.status(id);
      assert.equal(stored.statusCode, 200);
      const record = (await stored.body.json()) as { status: string; amount: string };
      assert.deepEqual([record.status, record.amount], ['SUCCESSFUL', '10']);
      const again = await send();
      assert.equal(again.statusCode, 409);
      assert.equal(((await again.body.json()) as { code: string }).code, 'RESOURCE_ALREADY_EXIST');
      assert.deepEqual(
        run.applied.map(({ condition, referenceId, apiUserId }) => ({ condition, referenceId, apiUserId })),
        [{ condition: 'cut-after-store', referenceId: id, apiUserId: caller.userId }],
      );
    } finally {
      await running.close();
    }
  });

  test('long-pending: a payment that settles at once stays PENDING --chaos-long-pending-ms, then settles as it would have', async () => {
    const run = await chaotic({ chaos: { 'long-pending': 1 }, chaosSeed: 2, chaosLongPendingMs: 5000 });
    try {
      const caller = callerOf(run.sandbox);
      const id = randomUUID();
      assert.equal((await requestToPay(run.sandbox, caller, id)).statusCode, 202);
      const statusNow = async () => {
        const answer = await statusOf(run.sandbox, caller, id);
        assertJudgedLegal('getRequestToPayStatus', 'collection', answer);
        return (answer.json() as { status: string }).status;
      };
      assert.equal(await statusNow(), 'PENDING');
      run.sandbox.clock.advance(4999);
      assert.equal(await statusNow(), 'PENDING');
      run.sandbox.clock.advance(1);
      assert.equal(await statusNow(), 'SUCCESSFUL');
      assert.deepEqual(run.applied, [
        {
          condition: 'long-pending',
          apiUserId: caller.userId,
          referenceId: id,
          detail: 'kept the requesttopay PENDING 5000 ms longer',
          at: Date.UTC(2026, 0, 1),
        },
      ]);
    } finally {
      await run.sandbox.close();
    }
  });

  test('callback-delayed, callback-repeated and callback-lost act on what the callback sink is given', async () => {
    const url = 'http://127.0.0.1:9/momo/callback';
    const outcomes: Record<string, { at: number; kind: string; status: unknown }[]> = {};
    for (const condition of ['callback-delayed', 'callback-repeated', 'callback-lost'] as const) {
      const run = await chaotic(
        { chaos: { [condition]: 1 }, chaosSeed: 4, chaosCallbackDelayMs: { min: 3000, max: 3000 } },
        { recordCallbacks: true },
      );
      try {
        const caller = callerOf(run.sandbox);
        const start = run.sandbox.clock.now();
        assert.equal((await requestToPay(run.sandbox, caller, randomUUID(), { 'x-callback-url': url })).statusCode, 202);
        run.sandbox.clock.advance(10_000);
        outcomes[condition] = run.callbacks.map((c) => ({ at: c.at - start, kind: c.kind, status: (c.body as { status: string }).status }));
        assert.deepEqual(
          run.applied.map((a) => [a.condition, a.apiUserId === caller.userId, a.referenceId !== undefined]),
          [[condition, true, true]],
        );
      } finally {
        await run.sandbox.close();
      }
    }
    assert.deepEqual(outcomes, {
      'callback-delayed': [{ at: 3000, kind: 'requesttopay', status: 'SUCCESSFUL' }],
      'callback-repeated': [
        { at: 0, kind: 'requesttopay', status: 'SUCCESSFUL' },
        { at: 1000, kind: 'requesttopay', status: 'SUCCESSFUL' },
      ],
      'callback-lost': [],
    });
  });

  test('callback-delayed holds the consent ping of bc-authorize back too', async () => {
    const run = await chaotic(
      { chaos: { 'callback-delayed': 1 }, chaosSeed: 4, chaosCallbackDelayMs: { min: 3000, max: 3000 } },
      { recordCallbacks: true },
    );
    try {
      const caller = callerOf(run.sandbox);
      const start = run.sandbox.clock.now();
      const asked = await run.sandbox.call({
        method: 'POST',
        url: path('bcAuthorize', 'collection'),
        headers: { ...caller.headers, 'content-type': 'application/x-www-form-urlencoded', 'x-callback-url': 'http://127.0.0.1:9/consent' },
        payload: 'login_hint=ID:46733123450/MSISDN&scope=profile&access_type=offline',
      });
      assert.equal(asked.statusCode, 200);
      run.sandbox.clock.advance(60_000);
      // The consent is granted after --consent-interval (1 s in the tests): the ping then, 3 s later.
      assert.deepEqual(
        run.callbacks.map((c) => [c.at - start, c.kind]),
        [[1000 + 3000, 'bc-authorize']],
      );
      assert.deepEqual(
        run.applied.map((a) => [a.condition, a.apiUserId, a.detail]),
        [['callback-delayed', caller.userId, 'sent the bc-authorize callback 3000 ms later']],
      );
    } finally {
      await run.sandbox.close();
    }
  });

  test('token-refused-early: a valid token is refused 401 before its expiry and from then on; a new token works', async () => {
    // Draws: the first use passes, the second is refused; a refused token draws no more; the new token's first use passes.
    const run = await chaotic({
      chaos: { 'token-refused-early': 0.5 },
      chaosSeed: seedFor('token-refused-early', 0.5, [false, true, false]),
    });
    try {
      let caller = callerOf(run.sandbox);
      assert.equal((await balanceOf(run.sandbox, caller)).statusCode, 200);
      const refused = await balanceOf(run.sandbox, caller);
      assert.equal(refused.statusCode, 401);
      assert.deepEqual(refused.json(), { error: 'invalid_token' });
      assert.match(String(refused.headers['www-authenticate']), /^Bearer error="invalid_token"/);
      assertJudgedLegal('getBalance', 'collection', refused);
      assert.equal((await balanceOf(run.sandbox, caller)).statusCode, 401, 'a refused token works again');
      caller = withNewToken(run.sandbox, caller);
      assert.equal((await balanceOf(run.sandbox, caller)).statusCode, 200);
      assert.deepEqual(
        run.applied.map((a) => [a.condition, a.operationId, a.apiUserId, a.detail]),
        [
          [
            'token-refused-early',
            'getBalance',
            caller.userId,
            'answered 401 invalid_token to an access token still valid, 3600 s before its expiry',
          ],
          [
            'token-refused-early',
            'getBalance',
            caller.userId,
            'answered 401 invalid_token to an access token refused before, 3600 s before its expiry',
          ],
        ],
      );
    } finally {
      await run.sandbox.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------

/** Every condition a sandbox on inject can show (the cuts need a socket), at a share each. */
const TOUR_SHARES: ChaosShares = {
  latency: 0.3,
  '500': 0.15,
  '503': 0.15,
  'long-pending': 0.3,
  'callback-delayed': 0.3,
  'callback-repeated': 0.3,
  'callback-lost': 0.3,
  'token-refused-early': 0.15,
};

/**
 * A client's round: payments with a callback and their status, a balance, an account-holder check, each answer judged
 * by the harness; a 401 gets the client a new token. What the chaos did, what was answered and what callbacks went,
 * with ids masked, so that two tours compare.
 */
async function tour(seed: number): Promise<{ applied: string[]; answers: string[]; callbacks: string[] }> {
  const run = await chaotic(
    {
      chaos: TOUR_SHARES,
      chaosSeed: seed,
      chaosLatencyMs: { min: 10, max: 50 },
      chaosLongPendingMs: 5000,
      chaosCallbackDelayMs: { min: 1000, max: 3000 },
    },
    { recordCallbacks: true },
  );
  const answers: string[] = [];
  try {
    let caller = callerOf(run.sandbox);
    const judged = async (id: OperationId, send: () => Promise<LightMyRequestResponse>) => {
      const answer = await answerOf(run, send);
      assertJudgedLegal(id, 'collection', answer);
      answers.push(`${id} ${answer.statusCode} ${answer.body.includes('"status"') ? (answer.json() as { status: string }).status : ''}`);
      if (answer.statusCode === 401) caller = withNewToken(run.sandbox, caller);
    };
    for (let round = 0; round < 12; round += 1) {
      const id = randomUUID();
      await judged('requestToPay', () => requestToPay(run.sandbox, caller, id, { 'x-callback-url': 'http://127.0.0.1:9/momo/callback' }));
      await judged('getRequestToPayStatus', () => statusOf(run.sandbox, caller, id));
      await judged('getBalance', () => balanceOf(run.sandbox, caller));
      await judged('accountHolderActive', () =>
        run.sandbox.call({
          method: 'GET',
          url: path('accountHolderActive', 'collection', { accountHolderIdType: 'msisdn', accountHolderId: '46733123499' }),
          headers: caller.headers,
        }),
      );
    }
    // Every held payment settles and every held callback goes.
    run.sandbox.clock.advance(10_000);
    return {
      applied: run.applied.map((a) => `${a.condition} ${a.operationId ?? '-'} ${a.detail}`),
      answers,
      callbacks: run.callbacks.map((c) => `${c.at - Date.UTC(2026, 0, 1)} ${c.kind} ${(c.body as { status: string }).status}`),
    };
  } finally {
    await run.sandbox.close();
  }
}

describe('chaos, seeded', () => {
  test('a tour meets every condition, each answer one the harness takes; the same seed gives the same tour, another seed another', async () => {
    const first = await tour(11);
    const conditions = new Set(first.applied.map((line) => line.split(' ')[0]));
    assert.deepEqual(
      CHAOS_CONDITION_NAMES.filter((name) => (TOUR_SHARES[name] ?? 0) > 0 && !conditions.has(name)),
      [],
      'conditions the tour never met',
    );
    assert.deepEqual(await tour(11), first);
    assert.notDeepEqual((await tour(12)).applied, first.applied);
  });

  test('the cuts are seeded too: the same seed cuts the same creations', async () => {
    const cutsOf = async (seed: number) => {
      const run = await chaotic({ chaos: { 'cut-before-store': 0.3, 'cut-after-store': 0.3 }, chaosSeed: seed });
      const running = await listenOnLoopback(run.sandbox);
      try {
        const api = overSocket(running.baseUrl, callerOf(run.sandbox));
        const outcomes: string[] = [];
        for (let n = 0; n < 12; n += 1) {
          const id = randomUUID();
          const answer = await api.create(id).then(
            async (r) => {
              await r.body.dump();
              return String(r.statusCode);
            },
            (error: { code?: string }) => String(error.code),
          );
          const status = await api.status(id);
          await status.body.dump();
          outcomes.push(`${answer} ${status.statusCode}`);
        }
        return { outcomes, applied: run.applied.map((a) => a.condition) };
      } finally {
        await running.close();
      }
    };
    const first = await cutsOf(21);
    assert.ok(first.outcomes.includes('UND_ERR_SOCKET 404') && first.outcomes.includes('UND_ERR_SOCKET 200'), first.outcomes.join(', '));
    assert.ok(first.outcomes.includes('202 200'), first.outcomes.join(', '));
    assert.deepEqual(await cutsOf(21), first);
  });
});

describe('chaos, seen and set', () => {
  test('each condition applied is a line of the log at info level, with its request and never a secret', async () => {
    const run = await chaotic({ chaos: { '500': 1 }, chaosSeed: 6 });
    try {
      const caller = callerOf(run.sandbox);
      await balanceOf(run.sandbox, caller);
      const lines = run.log.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('chaos: '));
      assert.equal(lines.length, 1);
      assert.equal(lines[0]!.level, 30);
      assert.equal(lines[0]!.msg, 'chaos: 500: answered 500 INTERNAL_PROCESSING_ERROR');
      assert.deepEqual(lines[0]!.chaos, run.applied[0]);
      const logged = JSON.stringify(run.log);
      for (const secret of [caller.token, KEYS.collection]) assert.ok(!logged.includes(secret), 'a secret reached the log');
      assert.ok(run.log.some((line) => line.msg === `chaos on (seed 6; --chaos-seed 6 repeats it)`));
    } finally {
      await run.sandbox.close();
    }
  });

  test('a listener that throws is logged, and the request is answered all the same', async () => {
    const settings = testSettings({ chaos: { '503': 1 }, chaosSeed: 1 });
    const sandbox = await startSandbox(settings, {
      plugins: chaosPlugins(settings, () => {
        throw new Error('the report is full');
      }),
    });
    try {
      assert.equal((await balanceOf(sandbox, callerOf(sandbox))).statusCode, 503);
    } finally {
      await sandbox.close();
    }
  });

  test('without --chaos, or with every share 0, no chaos plugin is installed', async () => {
    assert.deepEqual(chaosPlugins(testSettings()), []);
    assert.deepEqual(chaosPlugins(testSettings({ chaos: resolveSettings({ argv: ['--chaos', 'all,latency=0'] }).chaos })).length, 1);
    assert.deepEqual(chaosPlugins(testSettings({ chaos: { latency: 0, '500': 0 } })), []);
    const run = await chaotic({});
    try {
      assert.ok(!run.log.some((line) => String(line.msg).includes('plugins')), 'a sandbox without chaos started with a plugin');
    } finally {
      await run.sandbox.close();
    }
  });

  test('--chaos takes names with or without a share, and "all"; the amounts have their own settings', () => {
    const s = resolveSettings({ argv: ['--chaos', '500=0.1,latency,cut-after-store=0.05', '--chaos-seed', '42'] });
    assert.deepEqual(s.chaos, { '500': 0.1, latency: CHAOS_CONDITIONS.latency.defaultShare, 'cut-after-store': 0.05 });
    assert.equal(s.chaosSeed, 42);
    const all = resolveSettings({ env: { MOMO_SANDBOX_CHAOS: '500=0.2,all,callback-lost=0', MOMO_SANDBOX_CHAOS_LATENCY_MS: '5-50' } });
    assert.deepEqual(all.chaos, {
      // "all" is every spec-legal condition; the live ones (token-refused-early, callback-lost) are asked by name.
      ...Object.fromEntries(SPEC_LEGAL_CONDITIONS.map((name) => [name, CHAOS_CONDITIONS[name].defaultShare])),
      '500': 0.2,
      'callback-lost': 0,
    });
    assert.deepEqual(all.chaosLatencyMs, { min: 5, max: 50 });
    assert.deepEqual(resolveSettings().chaos, {});
    assert.ok(Number.isInteger(resolveSettings().chaosSeed));
  });

  test('a bad --chaos or chaos amount is refused naming the flag, the variable and what to write', () => {
    const refused = (options: Parameters<typeof resolveSettings>[0]) => {
      try {
        resolveSettings(options);
      } catch (error) {
        assert.ok(error instanceof SettingsError, String(error));
        return error.message;
      }
      assert.fail(`accepted ${JSON.stringify(options)}`);
    };
    const unknown = refused({ argv: ['--chaos', '500,lag'] });
    assert.ok(unknown.includes('--chaos (MOMO_SANDBOX_CHAOS) names "lag", which is no chaos condition'), unknown);
    for (const name of CHAOS_CONDITION_NAMES) assert.ok(unknown.includes(name), `${name} is not named in: ${unknown}`);
    assert.match(refused({ env: { MOMO_SANDBOX_CHAOS: '500=2' } }), /"500=2": a share is a number from 0 to 1, e\.g\. 500=0\.1/);
    assert.match(refused({ argv: ['--chaos', 'latency=half'] }), /"latency=half": a share is a number from 0 to 1/);
    assert.match(refused({ argv: ['--chaos', 'all=0.5'] }), /all takes no share/);
    assert.match(refused({ argv: ['--chaos-latency-ms', '500-100'] }), /--chaos-latency-ms .* shorter time first/);
    assert.match(
      refused({ env: { MOMO_SANDBOX_CHAOS_SEED: '4294967296' } }),
      /--chaos-seed \(MOMO_SANDBOX_CHAOS_SEED\) must be between 0 and/,
    );
    const retention = refused({
      argv: ['--chaos', 'long-pending', '--chaos-long-pending-ms', '3000000', '--retention-max-age-ms', '3600000'],
    });
    assert.match(retention, /--retention-max-age-ms .* what the chaos conditions add \(--chaos-long-pending-ms/);
  });

  test('the command: --list-chaos prints the conditions, --help names each with what allows it, a bad --chaos exits 2', () => {
    const run = (args: string[], env: Record<string, string> = {}) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'cli/momo-harness.ts', 'sandbox', ...args], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      });
    const listed = run(['--list-chaos']);
    assert.equal(listed.status, 0, listed.stderr);
    assert.equal(listed.stdout.trim(), chaosText());
    const help = run(['--help']);
    assert.equal(help.status, 0, help.stderr);
    // A message on every assert.ok: without one, Node 20 re-parses the transpiled one-line file to word it, for minutes.
    for (const name of CHAOS_CONDITION_NAMES)
      assert.ok(help.stdout.includes(`  ${name} [`) && help.stdout.includes(CHAOS_CONDITIONS[name].allowedBy), `--help lacks ${name}`);
    for (const bad of [run(['--chaos', 'lag']), run([], { MOMO_SANDBOX_CHAOS: 'latency=2' })]) {
      assert.equal(bad.status, 2, bad.stderr);
      assert.equal(bad.stdout, '');
      assert.match(bad.stderr, /--chaos \(MOMO_SANDBOX_CHAOS\)/);
      assert.doesNotMatch(bad.stderr, /^\s+at .+[(:]\d+/m, 'a stack trace was printed');
      assert.ok(bad.stderr.trim().split('\n').length <= 2, bad.stderr);
    }
  });

  test("docs/sandbox.md's table of the conditions is their definitions'", () => {
    assert.ok(readFileSync(`${ROOT}docs/sandbox.md`, 'utf8').includes(chaosTable()), 'docs/sandbox.md lacks chaosTable() as it prints now');
  });
});
