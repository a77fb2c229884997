import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MockAgent } from 'undici';
import { MomoClient, type ClientOptions } from '../../harness/client/momo-client.ts';
import {
  DEFAULT_RETRY_POLICY,
  availabilityOf,
  delayBefore,
  gaveUpInWeather,
  isTransientAnswer,
  repeatabilityOf,
  retryAfterMs,
  type RetriedCall,
} from '../../harness/client/careful.ts';
import { Redactor } from '../../core/secrets/redact.ts';
import { pathOf } from '../../core/catalogue/routes.ts';

const BASE = 'http://base.momo.test';
const KEYS = { collection: 'collection-key-0001', disbursement: 'disbursement-key-0002', remittance: 'remittance-key-0003' };
const REF = '3f1c2b7a-9d4e-4c1a-8b2f-0e6d5a4c3b21';
const BEARER = 'Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4eXoifQ.c2lnbmF0dXJlLXZhbHVl';
const FRESH = 'Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJmcmVzaCJ9.c2lnbmF0dXJlLXR3bw';
const PAYMENT = {
  amount: '10',
  currency: 'EUR',
  externalId: 'ext-1',
  payer: { partyIdType: 'MSISDN', partyId: '46733123499' },
  payerMessage: 'hi',
  payeeNote: 'note',
};
const JSON_TYPE = { 'content-type': 'application/json' };

/** A client on a mock agent whose waits are recorded, not slept: the tests see the backoff without taking its time. */
function careful(overrides: Partial<ClientOptions> = {}) {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const waits: number[] = [];
  const retried: RetriedCall[] = [];
  const sent: { authorization?: string }[] = [];
  const client = new MomoClient({
    baseUrl: BASE,
    sandboxUrl: 'http://sandbox.momo.test',
    subscriptionKeys: { ...KEYS },
    targetEnvironment: 'sandbox',
    connectTimeoutMs: 1000,
    requestTimeoutMs: 1000,
    redactor: new Redactor(),
    dispatcher: agent,
    sleep: async (ms) => {
      waits.push(ms);
    },
    onRetried: (call) => retried.push(call),
    onExchange: (e) => sent.push({ authorization: e.request.headers.authorization ?? e.request.headers.Authorization }),
    ...overrides,
  });
  const pool = agent.get(BASE);
  return { agent, client, pool, waits, retried, sent };
}

const statusPath = pathOf('getRequestToPayStatus', undefined, { referenceId: REF });
const createPath = pathOf('requestToPay');
const cut = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });

test('what is safe to repeat comes from the catalogue: reads, creations under a reference id and tokens; the rest once', () => {
  assert.equal(repeatabilityOf('getRequestToPayStatus'), 'read');
  assert.equal(repeatabilityOf('getBalance'), 'read');
  assert.equal(repeatabilityOf('requestToPay'), 'keyed');
  assert.equal(repeatabilityOf('requestToPay', false), 'once', 'a creation sent without its reference id has no key to repeat it under');
  assert.equal(repeatabilityOf('transfer'), 'keyed');
  assert.equal(repeatabilityOf('createAccessToken'), 'keyed');
  assert.equal(repeatabilityOf('deliveryNotification'), 'once');
  assert.equal(repeatabilityOf('createApiKey'), 'once');
  assert.equal(repeatabilityOf('bcAuthorize'), 'once');
});

test('a transient answer is a gateway 502–504 or a 500 that answers nothing; a 500 with a code of the case is an answer', () => {
  for (const status of [502, 503, 504]) assert.equal(isTransientAnswer(status, undefined), true, String(status));
  assert.equal(isTransientAnswer(500, undefined), true);
  assert.equal(isTransientAnswer(500, { code: 'INTERNAL_PROCESSING_ERROR', message: 'x' }), true);
  assert.equal(isTransientAnswer(500, { code: 'SERVICE_UNAVAILABLE' }), true);
  assert.equal(isTransientAnswer(500, { code: 'NOT_ALLOWED_TARGET_ENVIRONMENT' }), false);
  assert.equal(isTransientAnswer(500, { error: 'login_failed' }), false);
  assert.equal(isTransientAnswer(500, { code: 'INVALID_CURRENCY' }), false);
  for (const status of [200, 202, 400, 401, 404, 409, 501]) assert.equal(isTransientAnswer(status, undefined), false, String(status));
});

test('Retry-After is read as seconds or as an HTTP date; the backoff doubles up to its most', () => {
  assert.equal(retryAfterMs(undefined), undefined);
  assert.equal(retryAfterMs(' 3 '), 3000);
  assert.equal(retryAfterMs('Wed, 21 Oct 2026 07:28:05 GMT', Date.parse('Wed, 21 Oct 2026 07:28:00 GMT')), 5000);
  assert.equal(retryAfterMs('Wed, 21 Oct 2026 07:28:05 GMT', Date.parse('Wed, 21 Oct 2026 07:30:00 GMT')), 0);
  assert.equal(retryAfterMs('soon'), undefined);
  const policy = DEFAULT_RETRY_POLICY;
  assert.deepEqual(
    [2, 3, 4, 5, 6, 7].map((n) => delayBefore(n, policy)),
    [200, 400, 800, 1600, 2000, 2000],
  );
  assert.equal(delayBefore(2, policy, 1500), 1500);
});

test('a read that met a transient 500 is made again and its answer stands; the call is told as retried, answered', async () => {
  const { agent, client, pool, waits, retried } = careful();
  try {
    pool
      .intercept({ path: statusPath, method: 'GET' })
      .reply(500, { code: 'INTERNAL_PROCESSING_ERROR', message: 'x' }, { headers: JSON_TYPE });
    pool.intercept({ path: statusPath, method: 'GET' }).reply(200, { status: 'SUCCESSFUL' }, { headers: JSON_TYPE });
    const r = await client.getRequestToPayStatus(BEARER, REF);
    assert.equal(r.status, 200);
    assert.deepEqual(waits, [200]);
    assert.equal(retried.length, 1);
    assert.equal(retried[0]!.outcome, 'answered');
    assert.deepEqual(
      retried[0]!.attempts.map((a) => a.status),
      [500, 200],
    );
    assert.equal(r.retried?.outcome, 'answered');
    agent.assertNoPendingInterceptors();
  } finally {
    await agent.close();
  }
});

test('a 503 with Retry-After is asked again after the wait it asks for', async () => {
  const { agent, client, pool, waits } = careful();
  try {
    pool
      .intercept({ path: statusPath, method: 'GET' })
      .reply(503, { code: 'SERVICE_UNAVAILABLE' }, { headers: { ...JSON_TYPE, 'retry-after': '2' } });
    pool.intercept({ path: statusPath, method: 'GET' }).reply(200, { status: 'PENDING' }, { headers: JSON_TYPE });
    assert.equal((await client.getRequestToPayStatus(BEARER, REF)).status, 200);
    assert.deepEqual(waits, [2000]);
  } finally {
    await agent.close();
  }
});

test('a 500 that persists is the answer: after the attempts of the policy, it stands and the call is told as given up', async () => {
  const { agent, client, pool, waits, retried } = careful();
  try {
    pool
      .intercept({ path: statusPath, method: 'GET' })
      .reply(500, { code: 'INTERNAL_PROCESSING_ERROR' }, { headers: JSON_TYPE })
      .times(DEFAULT_RETRY_POLICY.attempts);
    const r = await client.getRequestToPayStatus(BEARER, REF);
    assert.equal(r.status, 500);
    assert.equal(waits.length, DEFAULT_RETRY_POLICY.attempts - 1);
    assert.equal(retried[0]!.outcome, 'gave-up');
    agent.assertNoPendingInterceptors();
  } finally {
    await agent.close();
  }
});

test('attempts that met changing weather are told apart from a steady answer, and a code quoted from them is redacted and short', async () => {
  const redactor = new Redactor();
  redactor.add(KEYS.collection, 'subscription key');
  const { agent, client, pool, retried } = careful({ redactor });
  try {
    pool.intercept({ path: statusPath, method: 'GET' }).replyWithError(cut());
    pool
      .intercept({ path: statusPath, method: 'GET' })
      .reply(503, { code: `${KEYS.collection}${'x'.repeat(500)}` }, { headers: JSON_TYPE });
    pool
      .intercept({ path: statusPath, method: 'GET' })
      .reply(500, { code: 'INTERNAL_PROCESSING_ERROR' }, { headers: JSON_TYPE })
      .times(DEFAULT_RETRY_POLICY.attempts - 2);
    const r = await client.getRequestToPayStatus(BEARER, REF);
    assert.equal(r.retried?.outcome, 'gave-up');
    assert.equal(gaveUpInWeather(r.retried), true, 'a cut, a 503 and 500s are changing weather');
    const quoted = retried[0]!.attempts[1]!.code!;
    assert.ok(!quoted.includes(KEYS.collection), `the subscription key is quoted: ${quoted}`);
    assert.ok(quoted.length <= 83, `a code of ${quoted.length} characters is quoted`);
    const steady = retried[0]!.attempts.slice(2);
    assert.equal(gaveUpInWeather({ ...r.retried!, attempts: steady }), false, 'the same 500 each time is a steady answer');
    assert.equal(gaveUpInWeather({ ...r.retried!, outcome: 'answered' }), false, 'an answered call did not give up');
    assert.equal(gaveUpInWeather(undefined), false, 'a call made once did not give up');
  } finally {
    await agent.close();
  }
});

test('a wait longer than the budget is not waited: the answer stands', async () => {
  const { agent, client, pool, waits } = careful({ retry: { ...DEFAULT_RETRY_POLICY, budgetMs: 1000 } });
  try {
    pool.intercept({ path: statusPath, method: 'GET' }).reply(503, {}, { headers: { 'retry-after': '5' } });
    assert.equal((await client.getRequestToPayStatus(BEARER, REF)).status, 503);
    assert.deepEqual(waits, []);
  } finally {
    await agent.close();
  }
});

test('a 500 with a code of the case is an answer, not weather: it is not asked again', async () => {
  const { agent, client, pool, waits } = careful();
  try {
    pool.intercept({ path: createPath, method: 'POST' }).reply(500, { code: 'NOT_ALLOWED_TARGET_ENVIRONMENT' }, { headers: JSON_TYPE });
    assert.equal((await client.requestToPay(BEARER, REF, PAYMENT)).status, 500);
    assert.deepEqual(waits, []);
    agent.assertNoPendingInterceptors();
  } finally {
    await agent.close();
  }
});

test('a creation cut before its answer is sent again under the same reference id; a 409 then says the first created it', async () => {
  const { agent, client, pool, retried } = careful();
  const references: string[] = [];
  try {
    pool.intercept({ path: createPath, method: 'POST' }).replyWithError(cut());
    pool.intercept({ path: createPath, method: 'POST' }).reply(
      409,
      (opts) => {
        references.push(String((opts.headers as Record<string, string>)['X-Reference-Id']));
        return { code: 'RESOURCE_ALREADY_EXIST', message: 'Duplicated reference id.' };
      },
      { headers: JSON_TYPE },
    );
    const r = await client.requestToPay(BEARER, REF, PAYMENT);
    assert.equal(r.status, 409);
    assert.equal(r.createdEarlier, true);
    assert.deepEqual(references, [REF]);
    assert.equal(retried[0]!.outcome, 'created-earlier');
    assert.deepEqual(retried[0]!.attempts[0]!.error !== undefined, true);
  } finally {
    await agent.close();
  }
});

test('a scenario about a duplicate knows its first attempt: a 409 to a reference it reuses is the answer it asked for', async () => {
  const { agent, client, pool } = careful();
  try {
    pool.intercept({ path: createPath, method: 'POST' }).reply(503, {}, { headers: { 'retry-after': '0' } });
    pool.intercept({ path: createPath, method: 'POST' }).reply(409, { code: 'RESOURCE_ALREADY_EXIST' }, { headers: JSON_TYPE });
    const r = await client.requestToPay(BEARER, REF, PAYMENT, { reusesReference: true });
    assert.equal(r.status, 409);
    assert.equal(r.createdEarlier, undefined);
    assert.equal(r.retried?.outcome, 'answered');
  } finally {
    await agent.close();
  }
});

test('a call that may not be repeated is not sent again after no answer: the error stands', async () => {
  const { agent, client, pool, waits } = careful();
  try {
    pool.intercept({ path: pathOf('deliveryNotification', 'collection', { referenceId: REF }), method: 'POST' }).replyWithError(cut());
    await assert.rejects(
      client.invoke('deliveryNotification', 'collection', {
        authorization: BEARER,
        params: { referenceId: REF },
        body: { notificationMessage: 'm' },
      }),
      {
        name: 'TargetUnavailableError',
      },
    );
    assert.deepEqual(waits, []);
  } finally {
    await agent.close();
  }
});

test('a call safe only once is asked again after a 503 or an internal error, not after a gateway 504 or a bare 500', async () => {
  const notify = { path: pathOf('deliveryNotification', 'collection', { referenceId: REF }), method: 'POST' };
  const send = (client: MomoClient) =>
    client.invoke('deliveryNotification', 'collection', {
      authorization: BEARER,
      params: { referenceId: REF },
      body: { notificationMessage: 'm' },
    });
  const { agent, client, pool, waits } = careful();
  try {
    for (const [status, body] of [
      [503, { code: 'SERVICE_UNAVAILABLE' }],
      [500, { code: 'INTERNAL_PROCESSING_ERROR' }],
    ] as const) {
      pool.intercept(notify).reply(status, body, { headers: JSON_TYPE });
      pool.intercept(notify).reply(200, {}, { headers: JSON_TYPE });
      assert.equal((await send(client)).status, 200, `asked again after ${status}`);
    }
    assert.equal(waits.length, 2);
    // The work may have been done behind a gateway that timed out: the answer stands, and a second notification is not sent.
    for (const [status, body] of [
      [504, '<html>gateway time-out</html>'],
      [500, ''],
    ] as const) {
      pool.intercept(notify).reply(status, body);
      assert.equal((await send(client)).status, status, `not asked again after ${status}`);
    }
    assert.equal(waits.length, 2);
    agent.assertNoPendingInterceptors();
  } finally {
    await agent.close();
  }
});

test('a renewed token is no weather: the same 500 at every attempt after it is a steady answer', async () => {
  const { agent, client, pool, retried } = careful({ renewCredential: async () => FRESH });
  try {
    pool.intercept({ path: statusPath, method: 'GET' }).reply(401, { error: 'invalid_token' }, { headers: JSON_TYPE });
    pool
      .intercept({ path: statusPath, method: 'GET' })
      .reply(500, { code: 'INTERNAL_PROCESSING_ERROR' }, { headers: JSON_TYPE })
      .times(DEFAULT_RETRY_POLICY.attempts);
    pool.intercept({ path: pathOf('getBalance', 'collection'), method: 'GET' }).reply(200, {}, { headers: JSON_TYPE });
    const r = await client.getRequestToPayStatus(BEARER, REF);
    assert.equal(r.status, 500);
    assert.equal(retried[0]!.outcome, 'gave-up');
    assert.equal(gaveUpInWeather(r.retried), false, JSON.stringify(r.retried?.attempts));
  } finally {
    await agent.close();
  }
});

test("the same 500 at every attempt is the case's answer while the target answers another call, an outage while it does not", async () => {
  const balance = { path: pathOf('getBalance', 'collection'), method: 'GET' };
  for (const [balanceStatus, outage] of [
    [200, false],
    [503, true],
  ] as const) {
    const { agent, client, pool, sent } = careful();
    try {
      pool
        .intercept({ path: statusPath, method: 'GET' })
        .reply(500, { code: 'INTERNAL_PROCESSING_ERROR' }, { headers: JSON_TYPE })
        .times(DEFAULT_RETRY_POLICY.attempts);
      pool
        .intercept(balance)
        .reply(balanceStatus, balanceStatus === 200 ? { availableBalance: '1', currency: 'EUR' } : {}, { headers: JSON_TYPE });
      const r = await client.getRequestToPayStatus(BEARER, REF);
      assert.equal(r.status, 500);
      assert.equal(r.retried?.targetAnsweredOthers, !outage);
      assert.equal(gaveUpInWeather(r.retried), outage, `balance ${balanceStatus}`);
      assert.equal(sent.length, DEFAULT_RETRY_POLICY.attempts + 1, 'one other call, once');
      agent.assertNoPendingInterceptors();
    } finally {
      await agent.close();
    }
  }
});

test("the control call uses the harness's good token: a steady 500 to an expired token is the case's answer", async () => {
  const { agent, client, pool } = careful({ controlCredential: async (product) => (product === 'collection' ? FRESH : undefined) });
  try {
    pool
      .intercept({ path: statusPath, method: 'GET' })
      .reply(500, { code: 'INTERNAL_PROCESSING_ERROR' }, { headers: JSON_TYPE })
      .times(DEFAULT_RETRY_POLICY.attempts);
    // The target answers the expired token with 500 wherever it is presented, and the good one with 200.
    const balance = pathOf('getBalance', 'collection');
    pool
      .intercept({ path: balance, method: 'GET', headers: { authorization: FRESH } })
      .reply(200, { availableBalance: '1', currency: 'EUR' }, { headers: JSON_TYPE });
    pool
      .intercept({ path: balance, method: 'GET', headers: { authorization: BEARER } })
      .reply(500, { code: 'INTERNAL_PROCESSING_ERROR' }, { headers: JSON_TYPE });
    const r = await client.getRequestToPayStatus(BEARER, REF);
    assert.equal(r.status, 500);
    assert.equal(r.retried?.targetAnsweredOthers, true, 'the balance answered the good token');
    assert.equal(gaveUpInWeather(r.retried), false, 'judged: the target answers others');
  } finally {
    await agent.close();
  }
});

test('a control credential the harness cannot give leaves the call its own', async () => {
  const { agent, client, pool } = careful({
    controlCredential: async () => {
      throw new Error('no token now');
    },
  });
  try {
    pool
      .intercept({ path: statusPath, method: 'GET' })
      .reply(500, { code: 'INTERNAL_PROCESSING_ERROR' }, { headers: JSON_TYPE })
      .times(DEFAULT_RETRY_POLICY.attempts);
    const balance = pathOf('getBalance', 'collection');
    pool.intercept({ path: balance, method: 'GET', headers: { authorization: BEARER } }).reply(503, {}, { headers: JSON_TYPE });
    const r = await client.getRequestToPayStatus(BEARER, REF);
    assert.equal(r.retried?.targetAnsweredOthers, false, "the balance, asked with the call's own token, did not answer");
    agent.assertNoPendingInterceptors();
  } finally {
    await agent.close();
  }
});

test('a code quoted from a transient answer cannot add a line to a report', async () => {
  const { agent, client, pool, retried } = careful();
  try {
    pool
      .intercept({ path: statusPath, method: 'GET' })
      .reply(503, { code: 'SERVICE_UNAVAILABLE\nVerdict: the target CONFORMS' }, { headers: JSON_TYPE });
    pool.intercept({ path: statusPath, method: 'GET' }).reply(200, { status: 'SUCCESSFUL' }, { headers: JSON_TYPE });
    await client.getRequestToPayStatus(BEARER, REF);
    const quoted = retried[0]!.attempts[0]!.code!;
    assert.ok(!quoted.includes('\n'), `a line break is quoted: ${quoted}`);
    assert.equal(quoted, JSON.stringify('SERVICE_UNAVAILABLE\nVerdict: the target CONFORMS'));
  } finally {
    await agent.close();
  }
});

test('a token refused with invalid_token is renewed once and the call made again with the new one', async () => {
  const renewals: string[] = [];
  const { agent, client, pool, sent, retried } = careful({
    renewCredential: async (authorization) => {
      renewals.push(authorization);
      return FRESH;
    },
  });
  const balance = { path: pathOf('getBalance', 'collection'), method: 'GET' };
  try {
    pool.intercept(balance).reply(401, { error: 'invalid_token' }, { headers: JSON_TYPE });
    pool.intercept(balance).reply(200, { availableBalance: '1', currency: 'EUR' }, { headers: JSON_TYPE });
    const r = await client.getBalance('collection', BEARER);
    assert.equal(r.status, 200);
    assert.deepEqual(renewals, [BEARER]);
    assert.equal(sent.length, 2);
    assert.equal(retried[0]!.outcome, 'renewed');
  } finally {
    await agent.close();
  }
});

test('a refusal renewed once and refused again stands; a refusal the step asked for (renew: false) or of a key is not renewed', async () => {
  let renewals = 0;
  const { agent, client, pool } = careful({
    renewCredential: async () => {
      renewals += 1;
      return FRESH;
    },
  });
  const balance = { path: pathOf('getBalance', 'collection'), method: 'GET' };
  try {
    pool.intercept(balance).reply(401, { error: 'invalid_token' }, { headers: JSON_TYPE }).times(2);
    assert.equal((await client.getBalance('collection', BEARER)).status, 401);
    assert.equal(renewals, 1);
    pool.intercept(balance).reply(401, { error: 'invalid_token' }, { headers: JSON_TYPE });
    assert.equal((await client.getBalance('collection', BEARER, undefined, { renew: false })).status, 401);
    pool
      .intercept(balance)
      .reply(401, { statusCode: 401, message: 'Access denied due to invalid subscription key.' }, { headers: JSON_TYPE });
    assert.equal((await client.getBalance('collection', BEARER)).status, 401);
    assert.equal(renewals, 1);
    agent.assertNoPendingInterceptors();
  } finally {
    await agent.close();
  }
});

test('the availability of a run counts calls and calls made again by operation, and what their earlier attempts met', () => {
  const call = (
    label: string,
    outcome: RetriedCall['outcome'],
    first: { status?: number; code?: string; error?: string },
  ): RetriedCall => ({
    operation: 'getRequestToPayStatus',
    product: 'collection',
    label,
    outcome,
    attempts: [first, { status: 200 }],
  });
  const rows = availabilityOf([
    { calls: { a: 5, b: 2 }, retried: [call('a', 'answered', { status: 500, code: 'INTERNAL_PROCESSING_ERROR' })] },
    { calls: { a: 3, c: 1 }, retried: [call('a', 'answered', { error: 'reset' }), call('c', 'gave-up', { status: 503 })] },
  ]);
  assert.deepEqual(rows, [
    { operation: 'a', calls: 8, retried: 2, outcomes: { answered: 2 }, met: { '500 INTERNAL_PROCESSING_ERROR': 1, 'no answer': 1 } },
    { operation: 'c', calls: 1, retried: 1, outcomes: { 'gave-up': 1 }, met: { '503': 1 } },
    { operation: 'b', calls: 2, retried: 0, outcomes: {}, met: {} },
  ]);
});
