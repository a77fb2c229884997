import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCampaign, type CampaignOptions } from '../../sandbox-quality/fuzz/campaign.ts';
import { judge, type Exchange } from '../../sandbox-quality/fuzz/properties.ts';
import { loadModel, type ApiModel } from '../../sandbox-quality/fuzz/openapi-model.ts';
import { main, summaryLines } from '../../sandbox-quality/fuzz/fuzz-command.ts';
import { snapshotState, stateDifferences } from '../../sandbox-quality/fuzz/snapshot.ts';
import { pathOf } from '../../core/catalogue/routes.ts';
import { PROFILES } from '../../core/profiles.ts';
import { startSandbox } from '../support/sandbox.ts';

const FAST: CampaignOptions = {
  requests: 3000,
  seed: 20260521,
  episodeLength: 300,
  profiles: PROFILES,
  strict: false,
  transport: 'inject',
  shrink: 1,
  shrinkTimeMs: 30_000,
};

test('a few thousand generated requests, valid and malformed, break no property of the sandbox', async () => {
  const result = await runCampaign(FAST);
  assert.deepEqual(result.violationCounts, {}, summaryLines(result).join('\n'));
  assert.ok(result.requests >= FAST.requests);
  const model = await documentModel();
  for (const op of model.operations) {
    const tally = result.byOperation[op.id];
    assert.ok(tally && tally.valid > 0 && tally.malformed > 0, `${op.id} got valid and malformed requests`);
  }
  // Valid requests get past the rules to the success paths, creations included, not only to refusals.
  for (const id of [
    'provisioningCreateApiUser',
    'collectionRequestToPay',
    'disbursementDeposit',
    'disbursementRefund',
    'collectionBcAuthorize',
    'collectionCreateOauthToken',
  ]) {
    const statuses = Object.keys(result.byOperation[id]!.statuses);
    assert.ok(
      statuses.some((s) => s.startsWith('2')),
      `${id} succeeded at least once: ${statuses.join(', ')}`,
    );
  }
  assert.ok(Object.keys(result.byMutation).length >= 25, 'most kinds of malformation were sent');
});

test('with the strict readings on, generated requests break no property either', async () => {
  const result = await runCampaign({ ...FAST, requests: 1500, strict: true });
  assert.deepEqual(result.violationCounts, {}, summaryLines(result).join('\n'));
});

test('the same seed sends the same requests and gets the same answers', async () => {
  const options: CampaignOptions = { ...FAST, requests: 300, episodeLength: 100, profiles: ['spec'] };
  const [first, second] = [await runCampaign(options), await runCampaign(options)];
  assert.deepEqual(second.byOperation, first.byOperation);
  assert.deepEqual(second.byMutation, first.byMutation);
});

async function documentModel(profile: 'spec' | 'mtn-sandbox' = 'spec'): Promise<ApiModel> {
  const sandbox = await startSandbox({ profile });
  try {
    return loadModel((await sandbox.call({ method: 'GET', url: '/openapi.json' })).json());
  } finally {
    await sandbox.close();
  }
}

const unchanged = { apiUsers: '[]', balances: '[]' };

function exchange(model: ApiModel, id: string, status: number, body: unknown, extra: Partial<Exchange> = {}): Exchange {
  const op = model.operations.find((o) => o.id === id)!;
  return {
    op,
    method: op.method,
    routeMiss: false,
    before: unchanged,
    after: unchanged,
    internalErrors: [],
    answer: {
      status,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: body === undefined ? '' : JSON.stringify(body),
    },
    ...extra,
  };
}

test('the properties catch what they are for, and pass what the document allows', async () => {
  const model = await documentModel();
  const broken = (e: Exchange) => judge(e, model).map((v) => v.property);
  const apiUser = { providerCallbackHost: 'example.com', targetEnvironment: 'sandbox' };

  assert.deepEqual(broken(exchange(model, 'provisioningGetApiUser', 200, apiUser)), []);
  assert.deepEqual(broken(exchange(model, 'provisioningGetApiUser', 418, {})), ['documented-status']);
  assert.deepEqual(broken(exchange(model, 'collectionRequestToPay', 502, { code: 'SERVICE_UNAVAILABLE', message: 'x' })), [
    'no-undocumented-5xx',
  ]);
  assert.deepEqual(
    broken(exchange(model, 'collectionRequestToPay', 500, { code: 'INTERNAL_PROCESSING_ERROR', message: 'x' })),
    ['no-undocumented-5xx'],
    'a documented 5xx status with a code its description does not name',
  );
  assert.deepEqual(
    broken(exchange(model, 'collectionAccountHolderActive', 500, { code: 'INTERNAL_PROCESSING_ERROR', message: 'x' })),
    [],
    'the account-holder test number that answers INTERNAL_PROCESSING_ERROR is documented',
  );
  assert.deepEqual(broken(exchange(model, 'provisioningGetApiUser', 404, { code: 'RESOURCE_ALREADY_EXIST', message: 'x' })), [
    'documented-error-code',
  ]);
  assert.deepEqual(broken(exchange(model, 'provisioningGetApiUser', 200, { ...apiUser, extra: 1 })), ['body-matches-schema']);
  assert.deepEqual(
    broken(exchange(model, 'collectionRequestToPay', 202, { status: 'PENDING' })),
    ['body-matches-schema'],
    'a body where the document gives none',
  );
  assert.deepEqual(
    broken(
      exchange(model, 'provisioningGetApiUser', 200, apiUser, {
        answer: { status: 200, headers: { 'content-type': 'text/plain' }, body: JSON.stringify(apiUser) },
      }),
    ),
    ['json-content-type'],
  );
  assert.deepEqual(
    broken(exchange(model, 'provisioningGetApiUser', 200, apiUser, { internalErrors: ['the sandbox logged "unexpected error"'] })),
    ['no-internal-error'],
  );

  const notFound = {
    statusCode: 404,
    error: 'Not Found',
    message: `No operation DELETE ${pathOf('getApiUser', undefined, { referenceId: 'x' })}.`,
  };
  assert.deepEqual(
    broken(exchange(model, 'provisioningGetApiUser', 404, notFound, { routeMiss: true })),
    [],
    'the router answers a request that names no operation',
  );
  assert.deepEqual(
    broken(exchange(model, 'provisioningGetApiUser', 404, notFound)),
    ['body-matches-schema'],
    "an operation's own 404 has its own body",
  );

  const changed = { before: unchanged, after: { ...unchanged, balances: '[["u|collection|EUR","5"]]' } };
  assert.deepEqual(
    broken(exchange(model, 'collectionRequestToPay', 400, { statusCode: 400, error: 'Bad Request', message: 'x' }, changed)),
    ['rejection-changes-nothing'],
  );
  assert.deepEqual(broken(exchange(model, 'provisioningGetApiUser', 200, apiUser, changed)), ['read-changes-nothing']);
  assert.deepEqual(
    broken(exchange(model, 'collectionRequestToPay', 202, undefined, changed)),
    [],
    'an accepted creation changes the state',
  );
});

test('the state snapshot sees every store and balance, and leaves out records past their life', async () => {
  const sandbox = await startSandbox();
  try {
    const caller = await sandbox.provision('collection');
    const { state, ledger, settings } = sandbox.context;
    const now = () => sandbox.clock.now();
    const before = snapshotState({ state, ledger }, now());
    ledger.credit(caller.userId, 'collection', 'EUR', 1n);
    state.apiUsers.get(caller.userId)!.apiKey = 'another key';
    assert.deepEqual(stateDifferences(before, snapshotState({ state, ledger }, now())), [
      'apiUsers (1 → 1 records)',
      'balances (0 → 1 records)',
    ]);

    state.consentGrants.add('grant', {
      refreshToken: 'grant',
      authReqId: 'a',
      apiUserId: caller.userId,
      product: 'collection',
      msisdn: '46733123450',
      scope: 'openid',
      refreshableUntil: now() + 1000,
    });
    const withGrant = snapshotState({ state, ledger }, now());
    sandbox.clock.advance(1000);
    const expired = snapshotState({ state, ledger }, now());
    assert.deepEqual(stateDifferences(withGrant, expired), ['consentGrants (1 → 0 records)'], 'a grant past its life no longer counts');
    state.forgetExpired();
    assert.deepEqual(stateDifferences(expired, snapshotState({ state, ledger }, now())), [], 'so the sweeper forgetting it is no change');

    state.transactions.requesttopay.add('payment', {
      kind: 'requesttopay',
      referenceId: 'payment',
      apiUserId: caller.userId,
      product: 'collection',
      targetEnvironment: 'sandbox',
      amountMinor: 1n,
      currency: 'EUR',
      status: 'PENDING',
      refundedMinor: 0n,
      callbackMethod: 'PUT',
    });
    const withPayment = snapshotState({ state, ledger }, now());
    sandbox.clock.advance(settings.retentionMaxAgeMs);
    assert.deepEqual(
      stateDifferences(withPayment, snapshotState({ state, ledger }, now())),
      [],
      'a payment is kept for the whole retention window',
    );
    sandbox.clock.advance(1);
    assert.deepEqual(
      stateDifferences(withPayment, snapshotState({ state, ledger }, now())),
      ['requesttopay (1 → 0 records)'],
      'and no longer counts past it',
    );
  } finally {
    await sandbox.close();
  }
});

test('npm run fuzz says what is wrong with its options and exits 2', async () => {
  const lines: string[] = [];
  const log = (line: string) => lines.push(line);
  assert.equal(await main(['--requests', 'many'], log), 2);
  assert.match(lines.at(-1)!, /--requests: "many" is not a whole number from 1 to 100000000; write e.g. --requests 100000/);
  assert.equal(await main(['--path', '3:1'], log), 2);
  assert.match(lines.at(-1)!, /needs that run's --seed/);
  assert.equal(await main(['--profile', 'live'], log), 2);
  assert.equal(await main(['--help'], log), 0);
  assert.match(lines.at(-1)!, /Exit codes: 0/);
});
