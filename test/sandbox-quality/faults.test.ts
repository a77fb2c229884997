/**
 * The deliberate faults (sandbox-quality/faults): their catalogue, how they are asked for, and for every one a
 * probe that shows its effect: the probe sees one thing on a faithful sandbox and another with the fault, so the
 * test fails the day a fault stops doing what it says. Whether the conformance suite catches each fault is
 * npm run mutation (docs/mutation.md) and test/conformance/mutation.suite.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import type { SandboxPlugin } from '../../sandbox/domain/plugins.ts';
import type { CallbackSink } from '../../sandbox/domain/callbacks.ts';
import { FAULTS, FAULT_NAMES, faultPlugins, faultsText, type FaultName } from '../../sandbox-quality/faults/faults.ts';
import {
  KEYS,
  basic,
  bcAuthorize,
  consentToken,
  path,
  payer,
  requestToPayBody,
  startSandbox,
  type Caller,
  type TestSandbox,
} from '../support/sandbox.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const ORDINARY = '46733123499';

test('the catalogue holds at least 30 faults, each described in one line, spread over every feature file', () => {
  assert.ok(FAULT_NAMES.length >= 30, `${FAULT_NAMES.length} faults`);
  const features = new Set(FAULT_NAMES.map((name) => FAULTS[name].feature));
  assert.deepEqual([...features].sort(), [
    'collection',
    'consent',
    'disbursement',
    'errors',
    'inputs',
    'provisioning',
    'remittance',
    'tokens',
  ]);
  for (const name of FAULT_NAMES) {
    assert.match(name, /^[a-z0-9]+(-[a-z0-9]+)+$/, name);
    const { summary, plugin } = FAULTS[name];
    assert.ok(summary.length > 20 && !summary.includes('\n') && summary.endsWith('.'), `${name}: ${summary}`);
    assert.ok(plugin.install !== undefined || plugin.wrap !== undefined, `${name} does nothing`);
  }
});

test('faults are named once each, and an unknown name says where to find the known ones', () => {
  assert.deepEqual(
    faultPlugins(['callback-late', 'token-never-expires', 'callback-late']).map((p) => p.name),
    ['callback-late', 'token-never-expires'],
  );
  assert.throws(
    () => faultPlugins(['callback-late', 'tokens-never-expire']),
    /"tokens-never-expire" is not a deliberate deviation; --list-deviations shows the \d+ there are/,
  );
});

test('the sandbox command lists the faults by feature file, and refuses an unknown one with exit 2', () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'cli/momo-harness.ts', 'sandbox', ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    });
  const listed = run(['--list-deviations']);
  assert.equal(listed.status, 0, listed.stderr);
  assert.equal(listed.stdout.trim(), faultsText());
  assert.match(
    listed.stdout,
    /features\/remittance\.feature:\n {2}remittance-balance-without-currency +The remittance balance record lacks its currency\./,
  );
  const unknown = run([], { MOMO_SANDBOX_DEVIATIONS: 'callback-late,tokens-never-expire' });
  assert.equal(unknown.status, 2);
  assert.match(
    unknown.stderr,
    /--deviations \(MOMO_SANDBOX_DEVIATIONS\) names "tokens-never-expire", which is not a deliberate deviation|"tokens-never-expire" is not a deliberate deviation/,
  );
});

/** A callback sink that records what the sandbox would send, where, and when, instead of sending it. */
function recordingSink(sent: Sent[]): SandboxPlugin {
  const sink: CallbackSink = {
    send: (url, _method, body, context) => void sent.push({ delayMs: 0, url, body, kind: context.kind ?? '' }),
    sendLater: (delayMs, url, _method, body, context) => void sent.push({ delayMs, url, body, kind: context.kind ?? '' }),
    settled: async () => undefined,
    close: async () => undefined,
  };
  return { name: 'recording callbacks', wrap: { callbacks: () => sink } };
}

/** A callback the sandbox would have sent. */
interface Sent {
  delayMs: number;
  url: string;
  body: unknown;
  kind: string;
}

interface Probe {
  /** What to do to the sandbox, and what to make of its answers. */
  run: (s: TestSandbox, sent: Sent[]) => Promise<unknown>;
  faithful: unknown;
  faulty: unknown;
}

const status = (res: { statusCode: number }) => res.statusCode;
const json = (res: { body: string }) => (res.body ? (JSON.parse(res.body) as Record<string, unknown>) : undefined);

async function pay(
  s: TestSandbox,
  caller: Caller,
  options: { referenceId?: string; body?: unknown; headers?: Record<string, string> } = {},
) {
  const referenceId = options.referenceId ?? randomUUID();
  const res = await s.call({
    method: 'POST',
    url: path('requestToPay'),
    headers: { ...caller.headers, 'x-reference-id': referenceId, ...options.headers },
    payload: options.body ?? requestToPayBody(ORDINARY),
  });
  return { res, referenceId };
}

const readStatus = (
  s: TestSandbox,
  caller: Caller,
  referenceId: string,
  operation: 'getRequestToPayStatus' | 'getDepositStatus' = 'getRequestToPayStatus',
) => s.call({ method: 'GET', url: path(operation, undefined, { referenceId }), headers: caller.headers });

const notify = (s: TestSandbox, caller: Caller, referenceId: string) =>
  s.call({
    method: 'POST',
    url: path('deliveryNotification', 'collection', { referenceId }),
    headers: caller.headers,
    payload: { notificationMessage: 'Delivered.' },
  });

const depositBody = (amount = '1') => ({
  amount,
  currency: 'EUR',
  externalId: 'd-1',
  payee: payer(ORDINARY),
  payerMessage: 'm',
  payeeNote: 'n',
});

async function deposit(s: TestSandbox, caller: Caller, options: { referenceId?: string; amount?: string } = {}) {
  const referenceId = options.referenceId ?? randomUUID();
  const res = await s.call({
    method: 'POST',
    url: path('deposit'),
    headers: { ...caller.headers, 'x-reference-id': referenceId },
    payload: depositBody(options.amount),
  });
  return { res, referenceId };
}

const tokenFor = (s: TestSandbox, product: 'collection' | 'disbursement' | 'remittance', userId: string, apiKey: string) =>
  s.call({
    method: 'POST',
    url: path('createAccessToken', product),
    headers: { 'ocp-apim-subscription-key': KEYS[product], authorization: basic(userId, apiKey) },
  });

/** A consent redeemed once: the auth_req_id and the grant's refresh token. */
/** The answer that redeems a consent request once the customer has decided. */
async function redeemedConsentAnswer(s: TestSandbox, caller: Caller) {
  const authReqId = json(await bcAuthorize(s, caller))!.auth_req_id as string;
  s.clock.advance(s.settings.consentIntervalSeconds * 1000);
  return { authReqId, answer: await consentToken(s, caller, `grant_type=urn:openid:params:grant-type:ciba&auth_req_id=${authReqId}`) };
}

async function redeemedConsent(s: TestSandbox, caller: Caller) {
  const { authReqId, answer } = await redeemedConsentAnswer(s, caller);
  return { authReqId, refreshToken: json(answer)!.refresh_token as string };
}

const PROBES: Record<FaultName, Probe> = {
  // provisioning.feature
  'api-user-created-200': {
    run: async (s) =>
      status(
        await s.call({
          method: 'POST',
          url: path('createApiUser'),
          headers: { 'ocp-apim-subscription-key': KEYS.collection, 'x-reference-id': randomUUID() },
          payload: { providerCallbackHost: '127.0.0.1' },
        }),
      ),
    faithful: 201,
    faulty: 200,
  },
  'api-user-id-reused': {
    run: async (s) => {
      const id = randomUUID();
      const create = () =>
        s.call({
          method: 'POST',
          url: path('createApiUser'),
          headers: { 'ocp-apim-subscription-key': KEYS.collection, 'x-reference-id': id },
          payload: { providerCallbackHost: '127.0.0.1' },
        });
      return [status(await create()), status(await create())];
    },
    faithful: [201, 409],
    faulty: [201, 201],
  },
  'api-user-id-not-validated': {
    run: async (s) =>
      status(
        await s.call({
          method: 'POST',
          url: path('createApiUser'),
          headers: { 'ocp-apim-subscription-key': KEYS.collection, 'x-reference-id': 'user-42' },
          payload: { providerCallbackHost: '127.0.0.1' },
        }),
      ),
    faithful: 400,
    faulty: 201,
  },
  'api-key-missing': {
    run: async (s) => {
      const id = randomUUID();
      await s.call({
        method: 'POST',
        url: path('createApiUser'),
        headers: { 'ocp-apim-subscription-key': KEYS.collection, 'x-reference-id': id },
        payload: { providerCallbackHost: '127.0.0.1' },
      });
      return Object.keys(
        json(
          await s.call({
            method: 'POST',
            url: path('createApiKey', undefined, { referenceId: id }),
            headers: { 'ocp-apim-subscription-key': KEYS.collection },
          }),
        )!,
      );
    },
    faithful: ['apiKey'],
    faulty: [],
  },
  'api-key-for-unknown-user': {
    run: async (s) =>
      status(
        await s.call({
          method: 'POST',
          url: path('createApiKey', undefined, { referenceId: randomUUID() }),
          headers: { 'ocp-apim-subscription-key': KEYS.collection },
        }),
      ),
    faithful: 404,
    faulty: 201,
  },
  'api-user-record-without-host': {
    run: async (s) => {
      const caller = await s.provision('collection');
      return Object.keys(
        json(
          await s.call({
            method: 'GET',
            url: path('getApiUser', undefined, { referenceId: caller.userId }),
            headers: { 'ocp-apim-subscription-key': KEYS.collection },
          }),
        )!,
      ).sort();
    },
    faithful: ['providerCallbackHost', 'targetEnvironment'],
    faulty: ['targetEnvironment'],
  },
  'api-user-read-latest': {
    run: async (s) => {
      const first = await s.provision('collection');
      await s.call({
        method: 'POST',
        url: path('createApiUser'),
        headers: { 'ocp-apim-subscription-key': KEYS.collection, 'x-reference-id': randomUUID() },
        payload: { providerCallbackHost: 'partner-two.example.com' },
      });
      const record = json(
        await s.call({
          method: 'GET',
          url: path('getApiUser', undefined, { referenceId: first.userId }),
          headers: { 'ocp-apim-subscription-key': KEYS.collection },
        }),
      )!;
      return record.providerCallbackHost === 'partner-two.example.com';
    },
    faithful: false,
    faulty: true,
  },
  'api-user-record-discloses-key': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const record = json(
        await s.call({
          method: 'GET',
          url: path('getApiUser', undefined, { referenceId: caller.userId }),
          headers: { 'ocp-apim-subscription-key': KEYS.collection },
        }),
      )!;
      return record.apiKey === caller.apiKey;
    },
    faithful: false,
    faulty: true,
  },

  // tokens.feature
  'token-never-expires': {
    run: async (s) => {
      const caller = await s.provision('remittance');
      s.clock.advance((s.settings.tokenLifetimeSeconds + 1) * 1000);
      return status(await s.call({ method: 'GET', url: path('getBalance', 'remittance'), headers: caller.headers }));
    },
    faithful: 401,
    faulty: 200,
  },
  'token-opens-other-products': {
    run: async (s) => {
      const caller = await s.provision('collection');
      return status(
        await s.call({
          method: 'GET',
          url: path('getBalance', 'remittance'),
          headers: { ...caller.headers, 'ocp-apim-subscription-key': KEYS.remittance },
        }),
      );
    },
    faithful: 401,
    faulty: 200,
  },
  'token-signature-not-checked': {
    run: async (s) => {
      const caller = await s.provision('remittance');
      const [header, payload, signature] = caller.token.split('.');
      const forged = `${header}.${payload}.${signature!.startsWith('A') ? 'B' : 'A'}${signature!.slice(1)}`;
      return status(
        await s.call({
          method: 'GET',
          url: path('getBalance', 'remittance'),
          headers: { ...caller.headers, authorization: `Bearer ${forged}` },
        }),
      );
    },
    faithful: 401,
    faulty: 200,
  },
  'token-wrong-api-key-accepted': {
    run: async (s) => {
      const caller = await s.provision('collection');
      return status(await tokenFor(s, 'collection', caller.userId, 'f'.repeat(32)));
    },
    faithful: 401,
    faulty: 200,
  },
  'token-for-other-product-user': {
    run: async (s) => {
      const caller = await s.provision('collection');
      return status(await tokenFor(s, 'disbursement', caller.userId, caller.apiKey));
    },
    faithful: 500,
    faulty: 200,
  },
  'token-cacheable': {
    run: async (s) => {
      const caller = await s.provision('collection');
      return (await tokenFor(s, 'collection', caller.userId, caller.apiKey)).headers['cache-control'];
    },
    faithful: 'no-store',
    faulty: undefined,
  },
  'token-expires-in-string': {
    run: async (s) => {
      const caller = await s.provision('collection');
      return typeof json(await tokenFor(s, 'collection', caller.userId, caller.apiKey))!.expires_in;
    },
    faithful: 'number',
    faulty: 'string',
  },

  // collection.feature
  'payment-stays-pending': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const { referenceId } = await pay(s, caller);
      return json(await readStatus(s, caller, referenceId))!.status;
    },
    faithful: 'SUCCESSFUL',
    faulty: 'PENDING',
  },
  'callback-missing': {
    run: async (s, sent) => {
      const caller = await s.provision('collection');
      await pay(s, caller, { headers: { 'x-callback-url': 'http://127.0.0.1:1/cb' } });
      return sent.length;
    },
    faithful: 1,
    faulty: 0,
  },
  'callback-to-other-path': {
    run: async (s, sent) => {
      const caller = await s.provision('collection');
      await pay(s, caller, { headers: { 'x-callback-url': 'http://127.0.0.1:1/cb' } });
      return sent.map((c) => c.url);
    },
    faithful: ['http://127.0.0.1:1/cb'],
    faulty: ['http://127.0.0.1:1/cb/notify'],
  },
  'final-state-reverts': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const { referenceId } = await pay(s, caller);
      return [json(await readStatus(s, caller, referenceId))!.status, json(await readStatus(s, caller, referenceId))!.status];
    },
    faithful: ['SUCCESSFUL', 'SUCCESSFUL'],
    faulty: ['SUCCESSFUL', 'PENDING'],
  },
  'callback-duplicated': {
    run: async (s, sent) => {
      const caller = await s.provision('collection');
      await pay(s, caller, { headers: { 'x-callback-url': 'http://127.0.0.1:1/cb' } });
      return sent.map((c) => c.delayMs);
    },
    faithful: [0],
    faulty: [0, 100],
  },
  'callback-late': {
    run: async (s, sent) => {
      const caller = await s.provision('collection');
      await pay(s, caller, { headers: { 'x-callback-url': 'http://127.0.0.1:1/cb' } });
      return sent.map((c) => c.delayMs);
    },
    faithful: [0],
    faulty: [30_000],
  },
  'callback-disagrees-with-status': {
    run: async (s, sent) => {
      const caller = await s.provision('collection');
      await pay(s, caller, { headers: { 'x-callback-url': 'http://127.0.0.1:1/cb' } });
      return sent.map((c) => (c.body as { status: string }).status);
    },
    faithful: ['SUCCESSFUL'],
    faulty: ['FAILED'],
  },
  'callback-retried-empty': {
    run: async (s, sent) => {
      const caller = await s.provision('collection');
      await pay(s, caller, { headers: { 'x-callback-url': 'http://127.0.0.1:1/cb' } });
      // The fault delivers the first attempt itself (refused here: nothing listens) and then hands the retry on.
      for (let waited = 0; sent.length === 0 && waited < 3000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      return sent.map((c) => (c.body === undefined ? 'empty' : 'record'));
    },
    faithful: ['record'],
    faulty: ['empty'],
  },
  'payment-address-called-again': {
    run: async (s, sent) => {
      const caller = await s.provision('collection');
      const { referenceId } = await pay(s, caller, { headers: { 'x-callback-url': 'http://127.0.0.1:1/cb' } });
      await notify(s, caller, referenceId);
      return sent.map((c) => c.kind);
    },
    faithful: ['requesttopay'],
    faulty: ['requesttopay', 'notice'],
  },
  'callback-host-not-checked': {
    run: async (s) => {
      const caller = await s.provision('collection');
      return status((await pay(s, caller, { headers: { 'x-callback-url': 'https://elsewhere.example/cb' } })).res);
    },
    faithful: 500,
    faulty: 202,
  },
  'payment-readable-by-others': {
    // Ownership of the status queries is a strict reading; of the delivery notification, the spec's (§4.2 #3).
    run: async (s) => {
      const owner = await s.provision('collection');
      const other = await s.provision('collection');
      const { referenceId } = await pay(s, owner);
      return status(await notify(s, other, referenceId));
    },
    faithful: 404,
    faulty: 200,
  },
  'notification-repeat-allowed': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const { referenceId } = await pay(s, caller);
      return [status(await notify(s, caller, referenceId)), status(await notify(s, caller, referenceId))];
    },
    faithful: [200, 429],
    faulty: [200, 200],
  },
  'notification-refusal-clears-cooldown': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const { referenceId } = await pay(s, caller);
      const answers = [];
      for (let i = 0; i < 3; i++) answers.push(status(await notify(s, caller, referenceId)));
      return answers;
    },
    faithful: [200, 429, 429],
    faulty: [200, 429, 200],
  },
  'notification-of-unfinished-payment': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const { referenceId } = await pay(s, caller, { body: requestToPayBody('46733123453') });
      return status(await notify(s, caller, referenceId));
    },
    faithful: 409,
    faulty: 200,
  },
  'failure-reason-free-text': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const { referenceId } = await pay(s, caller, { body: requestToPayBody('46733123451') });
      return json(await readStatus(s, caller, referenceId))!.reason;
    },
    faithful: 'APPROVAL_REJECTED',
    faulty: 'The payment could not be completed.',
  },
  'callback-host-of-latest-user': {
    run: async (s) => {
      const caller = await s.provision('collection');
      await s.provision('collection', { providerCallbackHost: 'partner-two.example.com' });
      return status((await pay(s, caller, { headers: { 'x-callback-url': 'http://127.0.0.1:1/cb' } })).res);
    },
    faithful: 202,
    faulty: 500,
  },
  'notification-needs-status-read': {
    run: async (s, sent) => {
      const caller = await s.provision('collection');
      const { referenceId } = await pay(s, caller, { headers: { 'x-callback-url': 'http://127.0.0.1:1/cb' } });
      // Told by the callback alone, then notified; read, and notified after the cool-down.
      const told = (sent.at(-1)?.body as { status?: string } | undefined)?.status;
      const before = status(await notify(s, caller, referenceId));
      await readStatus(s, caller, referenceId);
      s.clock.advance(s.settings.notificationCooldownMs);
      return [told, before, status(await notify(s, caller, referenceId))];
    },
    faithful: ['SUCCESSFUL', 200, 200],
    faulty: ['SUCCESSFUL', 409, 200],
  },
  'notification-cooldown-before-owner': {
    run: async (s) => {
      const owner = await s.provision('collection');
      const other = await s.provision('collection');
      const { referenceId } = await pay(s, owner);
      return [status(await notify(s, owner, referenceId)), status(await notify(s, other, referenceId))];
    },
    faithful: [200, 404],
    faulty: [200, 429],
  },
  'credit-posted-on-status-read': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const { referenceId } = await pay(s, caller, { body: requestToPayBody(ORDINARY, '10') });
      const balance = async () =>
        json(await s.call({ method: 'GET', url: path('getBalance', 'collection'), headers: caller.headers }))!.availableBalance;
      const unread = await balance();
      await readStatus(s, caller, referenceId);
      return [unread, await balance()];
    },
    faithful: ['1000010', '1000010'],
    faulty: ['1000000', '1000010'],
  },
  'balance-not-credited': {
    run: async (s) => {
      const caller = await s.provision('collection');
      await pay(s, caller, { body: requestToPayBody(ORDINARY, '10') });
      return json(await s.call({ method: 'GET', url: path('getBalance', 'collection'), headers: caller.headers }))!.availableBalance;
    },
    faithful: '1000010',
    faulty: '1000000',
  },
  'account-holder-kind-any-case': {
    run: async (s) => {
      const caller = await s.provision('collection');
      return status(
        await s.call({
          method: 'GET',
          url: path('accountHolderActive', 'collection', { accountHolderIdType: 'MSISDN', accountHolderId: ORDINARY }),
          headers: caller.headers,
        }),
      );
    },
    faithful: 400,
    faulty: 200,
  },
  'account-holder-result-string': {
    run: async (s) => {
      const caller = await s.provision('collection');
      return json(
        await s.call({
          method: 'GET',
          url: path('accountHolderActive', 'collection', { accountHolderIdType: 'msisdn', accountHolderId: ORDINARY }),
          headers: caller.headers,
        }),
      )!.result;
    },
    faithful: true,
    faulty: 'true',
  },

  // disbursement.feature
  'deposit-id-reused': {
    run: async (s) => {
      const caller = await s.provision('disbursement');
      const { res, referenceId } = await deposit(s, caller);
      return [status(res), status((await deposit(s, caller, { referenceId })).res)];
    },
    faithful: [202, 409],
    faulty: [202, 202],
  },
  'deposit-overdraws': {
    run: async (s) => {
      const caller = await s.provision('disbursement');
      const { referenceId } = await deposit(s, caller, { amount: '2000000' });
      return json(await readStatus(s, caller, referenceId, 'getDepositStatus'))!.status;
    },
    faithful: 'FAILED',
    faulty: 'SUCCESSFUL',
  },
  'payouts-funded-when-accepted': {
    run: async (s) => {
      const caller = await s.provision('disbursement');
      const balance = json(
        await s.call({ method: 'GET', url: path('getBalance', 'disbursement'), headers: caller.headers }),
      )!.availableBalance;
      // Two deposits of a little more than half the balance each, to a payee who answers after a while: both pending.
      const amount = String(Math.floor(Number(balance) / 2) + 1);
      const ids = [randomUUID(), randomUUID()];
      for (const referenceId of ids)
        await s.call({
          method: 'POST',
          url: path('deposit'),
          headers: { ...caller.headers, 'x-reference-id': referenceId },
          payload: { ...depositBody(amount), payee: payer('46733123454') },
        });
      s.clock.advance(s.settings.delayedSuccessMs + 1);
      const ended = [];
      for (const referenceId of ids) ended.push(json(await readStatus(s, caller, referenceId, 'getDepositStatus'))!.status);
      return ended.sort();
    },
    faithful: ['FAILED', 'SUCCESSFUL'],
    faulty: ['SUCCESSFUL', 'SUCCESSFUL'],
  },
  'refund-of-unknown-payment-succeeds': {
    run: async (s) => {
      const caller = await s.provision('disbursement');
      const referenceId = randomUUID();
      await s.call({
        method: 'POST',
        url: path('refund'),
        headers: { ...caller.headers, 'x-reference-id': referenceId },
        payload: { amount: '1', currency: 'EUR', externalId: 'r', payerMessage: 'm', payeeNote: 'n', referenceIdToRefund: randomUUID() },
      });
      return json(await s.call({ method: 'GET', url: path('getRefundStatus', undefined, { referenceId }), headers: caller.headers }))!
        .status;
    },
    faithful: 'FAILED',
    faulty: 'SUCCESSFUL',
  },
  'deposit-status-amount-number': {
    run: async (s) => {
      const caller = await s.provision('disbursement');
      const { referenceId } = await deposit(s, caller);
      return typeof json(await readStatus(s, caller, referenceId, 'getDepositStatus'))!.amount;
    },
    faithful: 'string',
    faulty: 'number',
  },

  // remittance.feature
  'remittance-balance-without-currency': {
    run: async (s) => {
      const caller = await s.provision('remittance');
      return 'currency' in json(await s.call({ method: 'GET', url: path('getBalance', 'remittance'), headers: caller.headers }))!;
    },
    faithful: true,
    faulty: false,
  },
  'remittance-target-environment-ignored': {
    run: async (s) => {
      const caller = await s.provision('remittance');
      return status(
        await s.call({
          method: 'GET',
          url: path('getBalance', 'remittance'),
          headers: { ...caller.headers, 'x-target-environment': 'mtnuganda' },
        }),
      );
    },
    faithful: 500,
    faulty: 200,
  },

  // consent.feature
  'user-info-with-access-token': {
    run: async (s) => {
      const caller = await s.provision('collection');
      return status(await s.call({ method: 'GET', url: path('userInfo', 'collection'), headers: caller.headers }));
    },
    faithful: 401,
    faulty: 200,
  },
  'consent-redeemable-twice': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const { authReqId } = await redeemedConsent(s, caller);
      return status(await consentToken(s, caller, `grant_type=urn:openid:params:grant-type:ciba&auth_req_id=${authReqId}`));
    },
    faithful: 400,
    faulty: 200,
  },
  'consent-scope-widened': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const authReqId = json(await bcAuthorize(s, caller))!.auth_req_id as string;
      s.clock.advance(s.settings.consentIntervalSeconds * 1000);
      return json(await consentToken(s, caller, `grant_type=urn:openid:params:grant-type:ciba&auth_req_id=${authReqId}`))!.scope;
    },
    faithful: 'profile',
    faulty: 'profile all_info openid',
  },
  'consent-scope-not-checked': {
    run: async (s) => status(await bcAuthorize(s, await s.provision('collection'), 'payments_all')),
    faithful: 400,
    faulty: 200,
  },
  'consent-refresh-refused': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const { refreshToken } = await redeemedConsent(s, caller);
      return status(await consentToken(s, caller, `grant_type=refresh_token&refresh_token=${refreshToken}`));
    },
    faithful: 200,
    faulty: 400,
  },
  'consent-refresh-token-not-kept': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const { refreshToken } = await redeemedConsent(s, caller);
      const refreshed = json(await consentToken(s, caller, `grant_type=refresh_token&refresh_token=${refreshToken}`))!;
      return status(await consentToken(s, caller, `grant_type=refresh_token&refresh_token=${refreshed.refresh_token as string}`));
    },
    faithful: 200,
    faulty: 400,
  },
  'consent-token-cacheable': {
    run: async (s) => (await redeemedConsentAnswer(s, await s.provision('collection'))).answer.headers['cache-control'],
    faithful: 'no-store',
    faulty: undefined,
  },
  'consent-pinged-before-decision': {
    run: async (s, sent) => {
      const caller = await s.provision('collection');
      const asked = await s.call({
        method: 'POST',
        url: path('bcAuthorize', 'collection'),
        headers: { ...caller.headers, 'content-type': 'application/x-www-form-urlencoded', 'x-callback-url': 'http://127.0.0.1:1/cb' },
        payload: 'login_hint=ID:46733123499/MSISDN&scope=profile&access_type=offline',
      });
      const ping = sent.find((callback) => callback.kind === 'bc-authorize');
      return [status(asked), ping?.delayMs === s.settings.consentIntervalSeconds * 1000 ? 'when decided' : `after ${ping?.delayMs} ms`];
    },
    faithful: [200, 'when decided'],
    faulty: [200, 'after 0 ms'],
  },
  'consent-poll-slowed-beyond-interval': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const authReqId = json(await bcAuthorize(s, caller))!.auth_req_id as string;
      const poll = async () =>
        json(await consentToken(s, caller, `grant_type=urn:openid:params:grant-type:ciba&auth_req_id=${authReqId}`))!;
      const first = (await poll()).error;
      // The next poll the announced interval (and a little) after the first: the consent is granted by then.
      s.clock.advance(s.settings.consentIntervalSeconds * 1000 + 250);
      const second = await poll();
      return [first, second.error ?? second.token_type];
    },
    faithful: ['authorization_pending', 'Bearer'],
    faulty: ['authorization_pending', 'slow_down'],
  },

  // errors.feature
  'payment-reference-reused': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const { res, referenceId } = await pay(s, caller);
      return [status(res), status((await pay(s, caller, { referenceId })).res)];
    },
    faithful: [202, 409],
    faulty: [202, 202],
  },
  'exact-repeat-accepted': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const { res, referenceId } = await pay(s, caller);
      const changed = { ...requestToPayBody(ORDINARY), externalId: 'another' };
      return [
        status(res),
        status((await pay(s, caller, { referenceId })).res),
        status((await pay(s, caller, { referenceId, body: changed })).res),
      ];
    },
    faithful: [202, 409, 409],
    faulty: [202, 202, 409],
  },
  'email-party-lower-cased': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const mixed = 'Customer.One@Example.com';
      const body = { ...requestToPayBody(ORDINARY), payer: { partyIdType: 'EMAIL', partyId: mixed } };
      const { res, referenceId } = await pay(s, caller, { body });
      return [status(res), (json(await readStatus(s, caller, referenceId))!.payer as { partyId?: string }).partyId];
    },
    faithful: [202, 'Customer.One@Example.com'],
    faulty: [202, 'customer.one@example.com'],
  },
  'duplicate-race': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const referenceId = randomUUID();
      const both = await Promise.all([pay(s, caller, { referenceId }), pay(s, caller, { referenceId })]);
      return both.map(({ res }) => status(res)).sort();
    },
    faithful: [202, 409],
    faulty: [202, 202],
  },
  'reference-ids-per-user': {
    run: async (s) => {
      const { referenceId } = await pay(s, await s.provision('collection'));
      return status((await pay(s, await s.provision('collection'), { referenceId })).res);
    },
    faithful: 409,
    faulty: 202,
  },
  'payment-body-not-validated': {
    run: async (s) => status((await pay(s, await s.provision('collection'), { body: { ...requestToPayBody(ORDINARY), amount: 10 } })).res),
    faithful: 400,
    faulty: 202,
  },
  'currency-not-checked': {
    run: async (s) => status((await pay(s, await s.provision('collection'), { body: requestToPayBody(ORDINARY, '5', 'USD') })).res),
    faithful: 500,
    faulty: 202,
  },
  'gateway-key-not-enforced': {
    run: async (s) => {
      const caller = await s.provision('remittance');
      return status(
        await s.call({
          method: 'GET',
          url: path('getBalance', 'remittance'),
          headers: { ...caller.headers, 'ocp-apim-subscription-key': undefined },
        }),
      );
    },
    faithful: 401,
    faulty: 200,
  },
  'duplicate-code-misspelled': {
    run: async (s) => {
      const caller = await s.provision('collection');
      const { referenceId } = await pay(s, caller);
      return json((await pay(s, caller, { referenceId })).res)!.code;
    },
    faithful: 'RESOURCE_ALREADY_EXIST',
    faulty: 'RESOURCE_ALREADY_EXISTS',
  },
  'unknown-payment-is-500': {
    run: async (s) => status(await readStatus(s, await s.provision('collection'), randomUUID())),
    faithful: 404,
    faulty: 500,
  },
  'bearer-token-not-required': {
    run: async (s) => {
      const caller = await s.provision('collection');
      return status((await pay(s, caller, { headers: { authorization: undefined } as never })).res);
    },
    faithful: 401,
    faulty: 202,
  },
  'json-labelled-text-plain': {
    run: async (s) => {
      const caller = await s.provision('remittance');
      return (await s.call({ method: 'GET', url: path('getBalance', 'remittance'), headers: caller.headers })).headers['content-type'];
    },
    faithful: 'application/json; charset=utf-8',
    faulty: 'text/plain; charset=utf-8',
  },
};

for (const name of FAULT_NAMES) {
  test(`fault ${name}: ${FAULTS[name].summary}`, async () => {
    const probe = PROBES[name];
    const observe = async (plugins: SandboxPlugin[]) => {
      const sent: Sent[] = [];
      // A fault of a strict reading is seen only with the readings on.
      const sandbox = await startSandbox({ strict: FAULTS[name].reading !== undefined }, { plugins: [recordingSink(sent), ...plugins] });
      try {
        return await probe.run(sandbox, sent);
      } finally {
        await sandbox.close();
      }
    };
    assert.deepEqual(await observe([]), probe.faithful, 'the faithful sandbox');
    assert.deepEqual(await observe(faultPlugins([name])), probe.faulty, `the sandbox with ${name}`);
  });
}
