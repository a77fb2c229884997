/**
 * The checks and premises of the classes added after the sixth blind batch, each on its own: what departs, what does
 * not, and where a value the target chose reaches a finding, that it is bounded (a hostile target writes no report).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ApiResponse } from '../../harness/client/momo-client.ts';
import { subPerCustomerFindings } from '../../harness/checks/consent.ts';
import { pingBeforeAnswerFindings } from '../../harness/checks/callbacks.ts';
import { CONSENT_TOKEN_NOT_CACHED, notCachedFindings } from '../../harness/checks/credentials.ts';
import { sameParty } from '../../harness/checks/transactions.ts';
import { PREMISES } from '../../harness/checks/premises.ts';

test('one sub for two customers told apart by their phone numbers departs; anything less tells nothing', () => {
  const first = { sub: 'u-1', phone: '46733123499' };
  assert.deepEqual(subPerCustomerFindings(first, { sub: 'u-2', phone: '46733123498' }), []);
  assert.deepEqual(subPerCustomerFindings(first, { sub: 'u-1', phone: undefined }), []);
  assert.deepEqual(subPerCustomerFindings(first, { sub: 'u-1', phone: '46733123499' }), []);
  assert.deepEqual(subPerCustomerFindings({ sub: undefined, phone: '1' }, { sub: undefined, phone: '2' }), []);
  const [finding] = subPerCustomerFindings(first, { sub: 'u-1', phone: '46733123498' });
  assert.equal(finding?.check, 'userinfo-sub-per-customer');
  assert.equal(finding?.field, '/sub');
  assert.match(finding!.received, /"u-1" for both/);
});

test("a hostile customer's values reach the sub finding quoted and bounded", () => {
  const huge = 'x'.repeat(100_000);
  const [finding] = subPerCustomerFindings({ sub: huge, phone: `${huge}1` }, { sub: huge, phone: `${huge}2` });
  assert.ok(finding!.expected.length < 400, `${finding!.expected.length} characters`);
  assert.ok(finding!.received.length < 200, `${finding!.received.length} characters`);
});

test('a consent redeemed on its ping departs only when it is still pending, not when told to slow down', () => {
  assert.equal(pingBeforeAnswerFindings('authorization_pending')[0]?.check, 'consent-callback-after-answer');
  assert.deepEqual(pingBeforeAnswerFindings('slow_down'), []);
  assert.deepEqual(pingBeforeAnswerFindings(undefined), []);
  assert.deepEqual(pingBeforeAnswerFindings('access_denied'), []);
});

test('no-store is found among the directives in any case; a consent token weighs its absence as the reading', () => {
  const answer = (cacheControl?: string) =>
    ({ headers: cacheControl === undefined ? {} : { 'cache-control': cacheControl } }) as ApiResponse;
  assert.deepEqual(notCachedFindings(answer('private, No-Store')), []);
  const [none] = notCachedFindings(answer(), CONSENT_TOKEN_NOT_CACHED);
  assert.equal(none?.received, 'none');
  assert.deepEqual(none?.source, CONSENT_TOKEN_NOT_CACHED);
  const [long] = notCachedFindings(answer(`max-age=1, ${'x'.repeat(10_000)}`));
  assert.ok(long!.received.length < 200);
});

test('an e-mail party is the same party in any case in the spec profile, and only as sent in mtn-sandbox', () => {
  const sent = { partyIdType: 'EMAIL', partyId: 'Customer.Ab12@Example.com' } as const;
  const lowered = { partyIdType: 'EMAIL', partyId: 'customer.ab12@example.com' };
  assert.equal(sameParty(lowered, sent, 'spec'), true);
  assert.equal(sameParty(lowered, sent, 'mtn-sandbox'), false);
  assert.equal(sameParty({ partyIdType: 'EMAIL', partyId: 'other@example.com' }, sent, 'spec'), false);
});

test('what a partner does on a callback alone rests on an observation: the notification and the balance', () => {
  const premise = PREMISES['callback-told-outcome'];
  assert.equal((premise.source as { kind: string }).kind, 'observed');
  const operations: readonly string[] = premise.operations;
  for (const operation of ['deliveryNotification', 'getBalance', 'getRequestToPayStatus'])
    assert.ok(operations.includes(operation), operation);
});
