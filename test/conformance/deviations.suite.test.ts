/**
 * The suite must fail, naming the right scenario, when the server breaks a rule. Each test puts a proxy
 * that breaks one rule in front of a faithful sandbox and runs the feature that covers the rule.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Alteration } from '../support/altering-proxy.ts';
import { runAgainstDeviation, type SuiteRun } from '../support/suite.ts';

interface Deviation {
  rule: string;
  tags: string;
  alteration: Alteration;
  /** Scenarios that must fail; every other selected scenario must still pass. */
  failing: string[];
  /** Words the failure message must contain: the operation, the check with its source, and the field that departed. */
  mentions: string[];
}

const DEVIATIONS: Deviation[] = [
  {
    rule: 'provisioning: a reused API user id is accepted instead of 409 RESOURCE_ALREADY_EXIST',
    tags: '@provisioning',
    alteration: (x) => (x.operation === 'createApiUser' && x.status === 409 ? { status: 201, body: '' } : undefined),
    failing: ['An API user id cannot be registered twice'],
    mentions: [
      'create API user (disbursement) — §4.5 #14',
      '✘ status-code (definite: §4.5 #14): status: expected 409, got 201',
      'received: HTTP 201',
    ],
  },
  {
    rule: 'tokens: a refused access token (forged, say) opens the balance anyway',
    tags: '@tokens',
    alteration: (x) =>
      x.operation === 'getBalance' && x.status === 401
        ? { status: 200, body: JSON.stringify({ availableBalance: '0', currency: 'EUR' }), headers: { 'content-type': 'application/json' } }
        : undefined,
    // The remittance balance is the one the token scenarios call (the expired token's is disbursement's account-holder check).
    failing: ['A forged access token is refused'],
    mentions: ['✘ status-code (definite: §4.4 #13): status: expected 401, got 200', 'received: HTTP 200'],
  },
  {
    rule: 'collection: a second delivery notification right after the first is enqueued instead of 429',
    tags: '@collection and not @slow',
    alteration: (x) => (x.operation === 'deliveryNotification' && x.status === 429 ? { status: 200, body: '' } : undefined),
    failing: [
      'A second delivery notification soon after the first is refused',
      'A second delivery notification soon after the first is refused, with a token issued since too',
      'A delivery notification refused as too many attempts is refused again right after',
    ],
    mentions: [
      'request-to-pay delivery notification (collection) — §4.2 #3',
      '✘ status-code (definite: §4.2 #3): status: expected 429, got 200',
      'received: HTTP 200',
    ],
  },
  {
    rule: 'disbursement: a reused deposit reference id is accepted',
    tags: '@disbursement',
    alteration: (x) => (x.operation === 'deposit' && x.status === 409 ? { status: 202, body: '' } : undefined),
    failing: [
      'A deposit reference cannot be used twice',
      "A partner that asks again under a deposit's reference is told only where it first asked",
      'A deposit under the reference id of one with a payee who rejects the payment is refused as a duplicate',
      'A deposit sent again exactly as it was, under its reference id, is refused as a duplicate',
      'A deposit sent twice at once under one reference id is refused once',
    ],
    mentions: ['deposit (disbursement) — §4.3 #10', '✘ status-code (definite: §4.3 #10): status: expected 409, got 202'],
  },
  {
    rule: 'remittance: the balance is served in a forbidden target environment',
    tags: '@remittance',
    alteration: (x) =>
      x.operation === 'getBalance' && x.product === 'remittance' && x.status === 500
        ? { status: 200, body: JSON.stringify({ availableBalance: '0', currency: 'EUR' }), headers: { 'content-type': 'application/json' } }
        : undefined,
    failing: ['The balance cannot be read in a target environment the partner may not use'],
    mentions: [
      'get account balance (remittance) — §4.4 #13',
      '✘ status-code (definite: §4.4 #13): status: expected 500, got 200',
      'received: HTTP 200',
    ],
  },
  {
    rule: 'consent: user information is given for an ordinary access token',
    tags: '@consent',
    alteration: (x) =>
      x.operation === 'userInfo' && x.status === 401
        ? { status: 200, body: JSON.stringify({ sub: '46733123450', name: 'Sand Box' }), headers: { 'content-type': 'application/json' } }
        : undefined,
    failing: ['User information needs a consent token, not an ordinary access token'],
    mentions: [
      'get user information with consent (collection)',
      '✘ status-code (definite: §4.2 #6, §5.4): status: expected 401, got 200',
      'received: HTTP 200',
    ],
  },
  {
    rule: 'errors: a duplicate is refused with a code outside its code set (RESOURCE_ALREADY_EXISTS)',
    tags: '@errors',
    alteration: (x) =>
      x.operation === 'requestToPay' && x.status === 409
        ? { body: JSON.stringify({ code: 'RESOURCE_ALREADY_EXISTS', message: 'Duplicated reference id.' }) }
        : undefined,
    failing: ['A reference id used twice makes one payment, not two'],
    mentions: [
      'request to pay (collection) — §4.2 #2',
      '✘ error-body (definite: §2.14, §7: the error record {code, message} and its code set): /code: expected one of',
      '(error-set-a.schema.json), got "RESOURCE_ALREADY_EXISTS"',
      '✘ error-code (definite: §4.2 #2): /code: expected "RESOURCE_ALREADY_EXIST", got "RESOURCE_ALREADY_EXISTS"',
    ],
  },
  {
    rule: 'collection: a payment that read SUCCESSFUL reads PENDING again on a later GET',
    tags: '@collection and @smoke',
    alteration: finalStateReverts(),
    failing: ['A customer who approves pays what was asked', 'A reference id used twice makes one payment, not two'],
    mentions: [
      'get request-to-pay status (collection) — §3: a transaction that reached a final status keeps it',
      '✘ final-state-is-final (definite: §3: ',
      '/status: expected "SUCCESSFUL", as read before, got "PENDING"',
    ],
  },
];

/** A status query that answers PENDING for a transaction it answered SUCCESSFUL or FAILED for before. */
function finalStateReverts(): Alteration {
  const final = new Set<string>();
  return (x) => {
    if (x.operation !== 'getRequestToPayStatus' || x.status !== 200) return undefined;
    const record = JSON.parse(x.body) as Record<string, unknown>;
    if (record.status !== 'SUCCESSFUL' && record.status !== 'FAILED') return undefined;
    if (!final.has(x.path)) {
      final.add(x.path);
      return undefined;
    }
    const { financialTransactionId: _, reason: __, ...pending } = record;
    return { body: JSON.stringify({ ...pending, status: 'PENDING' }) };
  };
}

function failedScenarios(run: SuiteRun): string[] {
  const summary = JSON.parse(readFileSync(join(run.reportsDir, 'summary.json'), 'utf8')) as {
    scenarios: { scenario: string; verdict: string }[];
  };
  return summary.scenarios.filter((s) => s.verdict !== 'passed').map((s) => `${s.scenario}: ${s.verdict}`);
}

for (const deviation of DEVIATIONS) {
  test(`the suite catches it when ${deviation.rule}`, async () => {
    const run = await runAgainstDeviation(deviation.alteration, deviation.tags);
    assert.equal(run.code, 1, run.output);
    assert.deepEqual(failedScenarios(run).sort(), deviation.failing.map((s) => `${s}: failed`).sort(), run.output);
    for (const words of deviation.mentions) assert.ok(run.output.includes(words), `the failure should say "${words}":\n${run.output}`);
  });
}
