/**
 * The conforming variations (sandbox-quality/variations): their catalogue, and for every one proof that it changes
 * what a client sees. A tour of the API (provisioning, tokens, payments and their outcomes, callbacks, refusals,
 * accounts, consent) is taken against the faithful sandbox and against the sandbox with the variation, and the two
 * transcripts, with ids and secrets masked, must differ: a variation that changed nothing would pass the suite
 * without proving anything. That the suite passes each one is npm run mutation (docs/mutation.md) and
 * test/conformance/mutation.suite.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import type { SandboxPlugin } from '../../sandbox/domain/plugins.ts';
import type { CallbackSink } from '../../sandbox/domain/callbacks.ts';
import type { ProfileName } from '../../core/profiles.ts';
import { VARIATIONS, VARIATION_NAMES, variationPlugins, variationsText } from '../../sandbox-quality/variations/variations.ts';
import { FAULT_NAMES } from '../../sandbox-quality/faults/faults.ts';
import { KEYS, basic, path, payer, requestToPayBody, startSandbox, type TestSandbox } from '../support/sandbox.ts';

const ROOT = new URL('../../', import.meta.url).pathname;

test('the catalogue holds at least 40 variations, each in one line, citing what allows it, in the profiles it is legal in', () => {
  assert.ok(VARIATION_NAMES.length >= 40, `${VARIATION_NAMES.length} variations`);
  for (const name of VARIATION_NAMES) {
    assert.match(name, /^[a-z0-9]+(-[a-z0-9]+)+$/, name);
    assert.ok(!(FAULT_NAMES as readonly string[]).includes(name), `${name} is a fault's name too`);
    const { summary, allowedBy, profiles, plugin } = VARIATIONS[name];
    assert.ok(summary.length > 20 && !summary.includes('\n') && summary.endsWith('.'), `${name}: ${summary}`);
    assert.match(allowedBy, /§\d|RFC \d+|real-api-notes|OIDC|CIBA/, `${name} cites no clause, RFC or observation: ${allowedBy}`);
    assert.ok(profiles.length > 0 && profiles.every((p) => p === 'spec' || p === 'mtn-sandbox'), `${name}: ${profiles.join(', ')}`);
    assert.ok(plugin.install !== undefined || plugin.wrap !== undefined, `${name} does nothing`);
  }
  // Both kinds are there: what the spec allows and the live service does not do, and what the live service does.
  assert.ok(VARIATION_NAMES.some((n) => VARIATIONS[n].profiles.length === 1 && VARIATIONS[n].profiles[0] === 'spec'));
  assert.ok(VARIATION_NAMES.some((n) => VARIATIONS[n].profiles.length === 1 && VARIATIONS[n].profiles[0] === 'mtn-sandbox'));
});

test('variations are named once each, and an unknown name says where to find the known ones', () => {
  assert.deepEqual(
    variationPlugins(['keys-reordered', 'chunked-bodies', 'keys-reordered']).map((p) => p.name),
    ['keys-reordered', 'chunked-bodies'],
  );
  assert.throws(
    () => variationPlugins(['keys-reorderd']),
    /"keys-reorderd" is not a conforming variation; --list-variations shows the \d+ there are/,
  );
});

test('the sandbox command lists the variations with what allows each, and refuses an unknown one with exit 2', () => {
  const run = (args: string[], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'cli/momo-harness.ts', 'sandbox', ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    });
  const listed = run(['--list-variations']);
  assert.equal(listed.status, 0, listed.stderr);
  assert.equal(listed.stdout.trim(), variationsText());
  assert.match(listed.stdout, /token-extra-fields +The access token record carries ext_expires_in/);
  const unknown = run([], { MOMO_SANDBOX_VARIATIONS: 'keys-reorderd' });
  assert.equal(unknown.status, 2);
  assert.match(
    unknown.stderr,
    /--variations \(MOMO_SANDBOX_VARIATIONS\) names "keys-reorderd", which|"keys-reorderd" is not a conforming variation/,
  );
});

/** The values no two tours share (ids, keys, tokens, financial ids), masked so that the transcripts compare. */
function masked(text: string): string {
  return text
    .replace(/[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}/g, (jwt) => `<jwt ${Math.round(jwt.length / 500)}>`)
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>')
    .replace(/\b[0-9a-f]{32}\b/g, '<key>')
    .replace(/\b\d{8,}\b/g, '<digits>');
}

const SHOWN_HEADERS = ['content-type', 'transfer-encoding', 'cache-control', 'pragma', 'www-authenticate', 'x-request-id', 'server'];

/** A callback sink that records what the sandbox would send, instead of sending it. */
function recordingSink(lines: string[]): SandboxPlugin {
  const sink: CallbackSink = {
    send: (url, method, body) => void lines.push(`callback ${method} ${url} ${JSON.stringify(body)}`),
    sendLater: (delayMs, url, method, body) => void lines.push(`callback in ${delayMs} ms ${method} ${url} ${JSON.stringify(body)}`),
    settled: async () => undefined,
    close: async () => undefined,
  };
  return { name: 'recording callbacks', wrap: { callbacks: () => sink } };
}

/** One pass over the API, every answer written down: its status, the headers a client reads, and its body. */
async function tour(profile: ProfileName, plugins: SandboxPlugin[]): Promise<string> {
  const lines: string[] = [];
  // The recording sink is wrapped first: a variation of the callbacks wraps it in turn.
  const s = await startSandbox({ profile, consentIntervalSeconds: 1 }, { plugins: [recordingSink(lines), ...plugins] });
  const call = async (label: string, options: Parameters<TestSandbox['call']>[0]) => {
    const res = await s.call(options);
    const headers = SHOWN_HEADERS.filter((h) => res.headers[h] !== undefined).map((h) => `${h}: ${String(res.headers[h])}`);
    lines.push(`${label}: ${res.statusCode} ${headers.join('; ')}\n  ${res.body}`);
    return res;
  };
  try {
    const userId = randomUUID();
    const collection = { 'ocp-apim-subscription-key': KEYS.collection };
    await call('create API user', {
      method: 'POST',
      url: path('createApiUser'),
      headers: { ...collection, 'x-reference-id': userId },
      payload: { providerCallbackHost: '127.0.0.1' },
    });
    const apiKey = (
      await call('create API key', { method: 'POST', url: path('createApiKey', undefined, { referenceId: userId }), headers: collection })
    ).json().apiKey as string;
    await call('read API user', { method: 'GET', url: path('getApiUser', undefined, { referenceId: userId }), headers: collection });
    await call('an API user without a callback host', {
      method: 'POST',
      url: path('createApiUser'),
      headers: { ...collection, 'x-reference-id': randomUUID() },
      payload: {},
    });
    await call('token, wrong key', {
      method: 'POST',
      url: path('createAccessToken', 'collection'),
      headers: { ...collection, authorization: basic(userId, 'f'.repeat(32)) },
    });
    const token = (
      await call('token', {
        method: 'POST',
        url: path('createAccessToken', 'collection'),
        headers: { ...collection, authorization: basic(userId, apiKey) },
      })
    ).json().access_token as string;
    const headers = { ...collection, authorization: `Bearer ${token}`, 'x-target-environment': 'sandbox' };

    const paid = randomUUID();
    await call('request to pay', {
      method: 'POST',
      url: path('requestToPay'),
      headers: { ...headers, 'x-reference-id': paid, 'x-callback-url': 'http://127.0.0.1:1/cb' },
      payload: requestToPayBody('46733123499', '12.50'),
    });
    await call('its status at once', { method: 'GET', url: path('getRequestToPayStatus', undefined, { referenceId: paid }), headers });
    s.clock.advance(2_000);
    await call('its status later', { method: 'GET', url: path('getRequestToPayStatus', undefined, { referenceId: paid }), headers });
    await call('its status again', { method: 'GET', url: path('getRequestToPayStatus', undefined, { referenceId: paid }), headers });
    const rejected = randomUUID();
    await call('a payment the payer rejects', {
      method: 'POST',
      url: path('requestToPay'),
      headers: { ...headers, 'x-reference-id': rejected },
      payload: requestToPayBody('46733123451', '5'),
    });
    s.clock.advance(2_000);
    await call('its status', { method: 'GET', url: path('getRequestToPayStatus', undefined, { referenceId: rejected }), headers });
    await call('the reference again', {
      method: 'POST',
      url: path('requestToPay'),
      headers: { ...headers, 'x-reference-id': paid },
      payload: requestToPayBody('46733123499', '99'),
    });
    await call('a foreign currency', {
      method: 'POST',
      url: path('requestToPay'),
      headers: { ...headers, 'x-reference-id': randomUUID() },
      payload: requestToPayBody('46733123499', '5', 'USD'),
    });
    await call('another callback host', {
      method: 'POST',
      url: path('requestToPay'),
      headers: { ...headers, 'x-reference-id': randomUUID(), 'x-callback-url': 'http://elsewhere.example/cb' },
      payload: requestToPayBody(),
    });
    await call('an unknown payment', {
      method: 'GET',
      url: path('getRequestToPayStatus', undefined, { referenceId: randomUUID() }),
      headers,
    });
    const notify = (referenceId: string) => ({
      method: 'POST' as const,
      url: path('deliveryNotification', 'collection', { referenceId }),
      headers,
      payload: { notificationMessage: 'Delivered.' },
    });
    await call('delivery notification', notify(paid));
    await call('again', notify(paid));
    await call('of an unknown payment', notify(randomUUID()));
    await call('of a failed payment', notify(rejected));
    await call('balance', { method: 'GET', url: path('getBalanceInCurrency', 'collection', { currency: 'EUR' }), headers });
    await call('account holder', {
      method: 'GET',
      url: path('accountHolderActive', 'collection', { accountHolderIdType: 'msisdn', accountHolderId: '46733123499' }),
      headers,
    });
    await call('basic user information', {
      method: 'GET',
      url: path('basicUserInfo', 'collection', { accountHolderMSISDN: '46733123499' }),
      headers,
    });
    await call('no subscription key', {
      method: 'GET',
      url: path('getBalanceInCurrency', 'collection', { currency: 'EUR' }),
      headers: { ...headers, 'ocp-apim-subscription-key': undefined },
    });
    await call('a forged token', {
      method: 'GET',
      url: path('getBalanceInCurrency', 'collection', { currency: 'EUR' }),
      headers: { ...headers, authorization: `Bearer ${withOtherSignature(token)}` },
    });

    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const consent = (
      await call('bc-authorize', {
        method: 'POST',
        url: path('bcAuthorize', 'collection'),
        headers: { ...headers, ...form },
        payload: 'login_hint=ID:46733123499/MSISDN&scope=profile&access_type=offline',
      })
    ).json().auth_req_id as string;
    const redeem = {
      method: 'POST' as const,
      url: path('createOAuthToken', 'disbursement'),
      headers: {
        'ocp-apim-subscription-key': KEYS.disbursement,
        authorization: basic(userId, apiKey),
        'x-target-environment': 'sandbox',
        ...form,
      },
      payload: `grant_type=urn:openid:params:grant-type:ciba&auth_req_id=${consent}`,
    };
    let consentToken = (await call('consent token at once', redeem)).json().access_token as string | undefined;
    s.clock.advance(1_000);
    consentToken ??= (await call('consent token later', redeem)).json().access_token as string;
    await call('user information', {
      method: 'GET',
      url: path('userInfo', 'collection'),
      headers: { ...headers, authorization: `Bearer ${consentToken}` },
    });

    const payout = await s.provision('disbursement');
    const deposited = randomUUID();
    await call('deposit', {
      method: 'POST',
      url: path('deposit'),
      headers: { ...payout.headers, 'x-reference-id': deposited, 'x-callback-url': 'http://127.0.0.1:1/cb' },
      payload: { amount: '30.00', currency: 'EUR', externalId: 'd-1', payee: payer('46733123499'), payerMessage: 'm', payeeNote: 'n' },
    });
    s.clock.advance(2_000);
    await call('its status', {
      method: 'GET',
      url: path('getDepositStatus', undefined, { referenceId: deposited }),
      headers: payout.headers,
    });
    const refunded = randomUUID();
    await call('refund', {
      method: 'POST',
      url: path('refund'),
      headers: { ...payout.headers, 'x-reference-id': refunded, 'x-callback-url': 'http://127.0.0.1:1/cb' },
      payload: { amount: '12.5', currency: 'EUR', externalId: 'r-1', payerMessage: 'm', payeeNote: 'n', referenceIdToRefund: paid },
    });
    s.clock.advance(2_000);
    await call('its status', {
      method: 'GET',
      url: path('getRefundStatus', undefined, { referenceId: refunded }),
      headers: payout.headers,
    });
    await call('another refund of that payment', {
      method: 'POST',
      url: path('refund'),
      headers: { ...payout.headers, 'x-reference-id': randomUUID() },
      payload: { amount: '1', currency: 'EUR', externalId: 'r-2', payerMessage: 'm', payeeNote: 'n', referenceIdToRefund: paid },
    });
  } finally {
    await s.close();
  }
  return masked(lines.join('\n'));
}

/** The token with the first character of its signature changed: six bits of the signature, so never the same bytes. */
function withOtherSignature(token: string): string {
  const at = token.lastIndexOf('.') + 1;
  return `${token.slice(0, at)}${token[at] === 'A' ? 'B' : 'A'}${token.slice(at + 1)}`;
}

/** The first line where two tours part, for a message a person can read rather than two whole transcripts. */
function firstDifference(actual: string, expected: string): string {
  const [a, e] = [actual.split('\n'), expected.split('\n')];
  const at = a.findIndex((line, i) => line !== e[i]);
  const line = at === -1 ? e.length : at;
  return `line ${line + 1}: got ${JSON.stringify(a[line] ?? '(end)')}, the faithful tour has ${JSON.stringify(e[line] ?? '(end)')}`;
}

const faithful = new Map<ProfileName, Promise<string>>();
const faithfulTour = (profile: ProfileName) => faithful.get(profile) ?? faithful.set(profile, tour(profile, [])).get(profile)!;

test('the tour of a faithful sandbox is the same each time: what differs with a variation is the variation', async () => {
  for (const profile of ['spec', 'mtn-sandbox'] as const) {
    const [again, first] = [await tour(profile, []), await faithfulTour(profile)];
    assert.ok(again === first, `${profile}: ${firstDifference(again, first)}`);
  }
});

for (const name of VARIATION_NAMES) {
  test(`variation ${name}: ${VARIATIONS[name].summary}`, async () => {
    const profile = VARIATIONS[name].profiles[0]!;
    const varied = await tour(profile, variationPlugins([name]));
    assert.notEqual(varied, await faithfulTour(profile), `${name} changed nothing a client sees`);
  });
}
