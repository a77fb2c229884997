import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import type { OperationId } from '../../core/catalogue/operations.ts';
import { statusQueryOf } from '../../core/catalogue/routes.ts';
import { assertSchema, path, startSandbox, type Caller, type TestSandbox, withSandbox } from '../support/sandbox.ts';

// ---------------------------------------------------------------------------------------------------
// Helpers local to this file.

type Kind = 'requesttopay' | 'deposit' | 'refund';

/** The operation that creates each kind; its status query reads the record. */
const CREATE: Record<Kind, OperationId> = {
  requesttopay: 'requestToPay',
  deposit: 'deposit',
  refund: 'refund',
};
const STATUS_SCHEMA: Record<Kind, string> = {
  requesttopay: 'request-to-pay-status',
  deposit: 'deposit-status',
  refund: 'refund-status',
};
const ERROR_SCHEMA: Record<Kind, string> = {
  requesttopay: 'error-set-a',
  deposit: 'error-set-b',
  refund: 'error-set-b',
};

interface Party {
  partyIdType: 'MSISDN' | 'EMAIL' | 'PARTY_CODE';
  partyId: string;
}
type Body = Record<string, unknown>;
type StatusRecord = {
  amount: string;
  currency: string;
  status: string;
  externalId?: string;
  financialTransactionId?: string;
  reason?: unknown;
  payer?: Party;
  payee?: Party;
  payerMessage?: string;
  payeeNote?: string;
};

const msisdn = (partyId: string): Party => ({ partyIdType: 'MSISDN', partyId });

function rtpBody(party: Party | string = '46733123499', amount: unknown = '10', currency = 'EUR'): Body {
  return {
    amount,
    currency,
    externalId: 'ext-rtp',
    payer: typeof party === 'string' ? msisdn(party) : party,
    payerMessage: 'Pay for goods',
    payeeNote: 'Thanks',
  };
}
function depositBody(party: Party | string = '46733123499', amount: unknown = '10', currency = 'EUR'): Body {
  return {
    amount,
    currency,
    externalId: 'ext-dep',
    payee: typeof party === 'string' ? msisdn(party) : party,
    payerMessage: 'Salary',
    payeeNote: 'Paid',
  };
}
function refundBody(referenceIdToRefund: string, amount: unknown = '1', currency = 'EUR'): Body {
  return { amount, currency, externalId: 'ext-ref', referenceIdToRefund, payerMessage: 'Refund', payeeNote: 'Refunded' };
}

/** A body of the kind with a given amount; refunds name a request to pay that need not exist (form checks come first). */
function bodyOf(kind: Kind, amount: unknown, currency = 'EUR'): Body {
  if (kind === 'requesttopay') return rtpBody('46733123499', amount, currency);
  if (kind === 'deposit') return depositBody('46733123499', amount, currency);
  return refundBody(randomUUID(), amount, currency);
}

function create(
  sandbox: TestSandbox,
  caller: Caller,
  kind: Kind,
  payload: Body,
  id: string = randomUUID(),
  headers: Record<string, string | undefined> = {},
) {
  return sandbox.call({
    method: 'POST',
    url: path(CREATE[kind]),
    headers: { ...caller.headers, 'x-reference-id': id, ...headers },
    payload,
  });
}

function getStatus(sandbox: TestSandbox, caller: Caller, kind: Kind, id: string): Promise<LightMyRequestResponse> {
  return sandbox.call({ method: 'GET', url: path(statusQueryOf(CREATE[kind]), undefined, { referenceId: id }), headers: caller.headers });
}

/** Creates a transaction, asserts the empty 202, and returns its id. */
async function created(sandbox: TestSandbox, caller: Caller, kind: Kind, payload: Body): Promise<string> {
  const id = randomUUID();
  const res = await create(sandbox, caller, kind, payload, id);
  assert.equal(res.statusCode, 202, res.body);
  assert.equal(res.body, '');
  return id;
}

/** The status record, asserted 200 and against the kind's schema. */
async function record(sandbox: TestSandbox, caller: Caller, kind: Kind, id: string): Promise<StatusRecord> {
  const res = await getStatus(sandbox, caller, kind, id);
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as StatusRecord;
  assertSchema(STATUS_SCHEMA[kind], body);
  return body;
}

/** The record once `afterMs` of the sandbox's time have passed: it must be final by then. */
async function settled(sandbox: TestSandbox, caller: Caller, kind: Kind, id: string, afterMs = 0): Promise<StatusRecord> {
  sandbox.clock.advance(afterMs);
  const r = await record(sandbox, caller, kind, id);
  assert.notEqual(r.status, 'PENDING', `still PENDING ${afterMs} ms on: ${JSON.stringify(r)}`);
  return r;
}

/**
 * The reason code of a FAILED record: a bare code string in both profiles, as the live service sends it
 * (real-api-notes.md) and as typed clients decode it.
 */
function reasonCode(r: StatusRecord): string {
  assert.equal(r.status, 'FAILED', JSON.stringify(r));
  assert.equal(typeof r.reason, 'string', `reason should be a code string: ${JSON.stringify(r)}`);
  return r.reason as string;
}

function assertSuccessful(r: StatusRecord): void {
  assert.equal(r.status, 'SUCCESSFUL', JSON.stringify(r));
  assert.equal(typeof r.financialTransactionId, 'string');
  assert.match(r.financialTransactionId!, /^[1-9]\d{9}$/, 'ten digits, the first not 0, as the live sandbox gives them');
  assert.equal('reason' in r, false);
}

function assertBadRequest(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 400, res.body);
  assertSchema('bad-request', res.json());
}

async function assertNotFound(sandbox: TestSandbox, caller: Caller, kind: Kind, id: string): Promise<void> {
  const res = await getStatus(sandbox, caller, kind, id);
  assert.equal(res.statusCode, 404, res.body);
  const body = res.json();
  assertSchema(ERROR_SCHEMA[kind], body);
  assert.equal(body.code, 'RESOURCE_NOT_FOUND');
}

async function balance(sandbox: TestSandbox, caller: Caller, url: string): Promise<{ availableBalance: string; currency: string }> {
  const res = await sandbox.call({ method: 'GET', url, headers: caller.headers });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json();
  assertSchema('balance', body);
  return body;
}
const collectionBalance = (s: TestSandbox, c: Caller, currency?: string) =>
  balance(s, c, currency ? path('getBalanceInCurrency', 'collection', { currency }) : path('getBalance', 'collection'));
const disbursementBalance = (s: TestSandbox, c: Caller) => balance(s, c, path('getBalance', 'disbursement'));

// The sandbox test numbers (real-api-notes.md) that FAIL at once, with their reasons.
const FAILING_NUMBERS: ReadonlyArray<[string, string]> = [
  ['46733123450', 'INTERNAL_PROCESSING_ERROR'],
  ['46733123451', 'APPROVAL_REJECTED'],
  ['46733123452', 'EXPIRED'],
  ['46733123455', 'PAYER_NOT_FOUND'],
  ['46733123456', 'PAYEE_NOT_ALLOWED_TO_RECEIVE'],
  ['46733123457', 'NOT_ALLOWED'],
  ['46733123458', 'NOT_ALLOWED_TARGET_ENVIRONMENT'],
  ['46733123459', 'INVALID_CALLBACK_URL_HOST'],
  ['46733123460', 'INVALID_CURRENCY'],
  ['46733123461', 'INTERNAL_PROCESSING_ERROR'],
  ['46733123462', 'SERVICE_UNAVAILABLE'],
];

// ---------------------------------------------------------------------------------------------------

describe('payments on one shared sandbox (spec profile)', () => {
  let sandbox: TestSandbox;
  let collector: Caller;
  let disburser: Caller;
  const callerOf = (kind: Kind) => (kind === 'requesttopay' ? collector : disburser);

  before(async () => {
    sandbox = await startSandbox();
    collector = await sandbox.provision('collection');
    disburser = await sandbox.provision('disbursement');
  });
  after(async () => {
    await sandbox?.close();
  });

  /** A SUCCESSFUL request to pay to refund. */
  async function successfulRtp(amount = '10', party: Party | string = '46733123499', currency = 'EUR'): Promise<string> {
    const id = await created(sandbox, collector, 'requesttopay', rtpBody(party, amount, currency));
    assertSuccessful(await record(sandbox, collector, 'requesttopay', id));
    return id;
  }

  const validBody = async (kind: Kind, amount = '10'): Promise<Body> =>
    kind === 'refund' ? refundBody(await successfulRtp('50'), amount) : bodyOf(kind, amount);

  describe('creation', () => {
    for (const kind of ['requesttopay', 'deposit', 'refund'] as const) {
      it(`${kind}: 202 with an empty body, and a status record with every field as sent`, async () => {
        const rtp = kind === 'refund' ? await successfulRtp('50') : undefined;
        const payload = kind === 'refund' ? refundBody(rtp!, '7') : bodyOf(kind, '7');
        const id = await created(sandbox, callerOf(kind), kind, payload);
        const r = await record(sandbox, callerOf(kind), kind, id);
        assertSuccessful(r);
        assert.equal(r.amount, '7');
        assert.equal(r.currency, 'EUR');
        assert.equal(r.externalId, payload.externalId);
        assert.equal(r.payerMessage, payload.payerMessage);
        assert.equal(r.payeeNote, payload.payeeNote);
        if (kind === 'requesttopay') assert.deepEqual(r.payer, payload.payer);
        if (kind === 'deposit') assert.deepEqual(r.payee, payload.payee);
        assert.equal(kind === 'requesttopay' ? 'payee' in r : 'payer' in r, false);
      });

      it(`${kind}: an X-Reference-Id that is not a UUID v4, or none, is 400 and creates nothing`, async () => {
        const payload = await validBody(kind);
        for (const bad of ['not-a-uuid', '6ba7b810-9dad-11d1-80b4-00c04fd430c8', '']) {
          const res = await create(sandbox, callerOf(kind), kind, payload, bad);
          assertBadRequest(res);
        }
        const missing = await create(sandbox, callerOf(kind), kind, payload, randomUUID(), { 'x-reference-id': undefined });
        assertBadRequest(missing);
        assert.match(missing.json().message, /X-Reference-Id/);
      });

      it(`${kind}: reusing an X-Reference-Id is 409 RESOURCE_ALREADY_EXIST (${ERROR_SCHEMA[kind]}) and leaves the first record unchanged`, async () => {
        const first = await validBody(kind, '10');
        const id = await created(sandbox, callerOf(kind), kind, first);
        const before = await record(sandbox, callerOf(kind), kind, id);
        const second = { ...(await validBody(kind, '20')), externalId: 'ext-other', payerMessage: 'Another' };
        const res = await create(sandbox, callerOf(kind), kind, second, id);
        assert.equal(res.statusCode, 409, res.body);
        const body = res.json();
        assertSchema(ERROR_SCHEMA[kind], body);
        assert.equal(body.code, 'RESOURCE_ALREADY_EXIST');
        const afterwards = await record(sandbox, callerOf(kind), kind, id);
        assert.deepEqual(afterwards, before);
        assert.equal(afterwards.amount, '10');
      });

      it(`${kind}: a missing X-Target-Environment is 400`, async () => {
        const res = await create(sandbox, callerOf(kind), kind, await validBody(kind), randomUUID(), { 'x-target-environment': undefined });
        assertBadRequest(res);
      });

      it(`${kind}: an unknown target environment is 500 NOT_ALLOWED_TARGET_ENVIRONMENT and creates nothing`, async () => {
        const id = randomUUID();
        const res = await create(sandbox, callerOf(kind), kind, await validBody(kind), id, { 'x-target-environment': 'mtnuganda' });
        assert.equal(res.statusCode, 500, res.body);
        const body = res.json();
        assertSchema(ERROR_SCHEMA[kind], body);
        assert.equal(body.code, 'NOT_ALLOWED_TARGET_ENVIRONMENT');
        await assertNotFound(sandbox, callerOf(kind), kind, id);
      });

      it(`${kind}: a currency other than EUR is 500 INVALID_CURRENCY and creates nothing`, async () => {
        const payload = { ...(await validBody(kind)), currency: 'UGX' };
        const id = randomUUID();
        const res = await create(sandbox, callerOf(kind), kind, payload, id);
        assert.equal(res.statusCode, 500, res.body);
        const body = res.json();
        assertSchema(ERROR_SCHEMA[kind], body);
        assert.equal(body.code, 'INVALID_CURRENCY');
        await assertNotFound(sandbox, callerOf(kind), kind, id);
      });

      it(`${kind}: an amount that is not a string is 400 and creates nothing`, async () => {
        for (const amount of [10, 0, null]) {
          const id = randomUUID();
          const res = await create(sandbox, callerOf(kind), kind, bodyOf(kind, amount), id);
          assert.equal(res.statusCode, 400, `amount ${JSON.stringify(amount)}: ${res.statusCode} ${res.body}`);
          assertSchema('bad-request', res.json());
          await assertNotFound(sandbox, callerOf(kind), kind, id);
        }
      });

      it(`${kind}: an amount string that is not a positive decimal is accepted and FAILS NOT_ALLOWED (the strict reading amountValue refuses it)`, async () => {
        for (const amount of ['0', '-1', '1e3', '1.23456', '9999999999999', '', ' 1', '1.', '01']) {
          const id = await created(sandbox, callerOf(kind), kind, await validBody(kind, amount));
          const res = await getStatus(sandbox, callerOf(kind), kind, id);
          assert.equal(res.statusCode, 200, res.body);
          const r = res.json() as StatusRecord;
          assert.equal(reasonCode(r), 'NOT_ALLOWED', `amount ${JSON.stringify(amount)}`);
          assert.equal(r.amount, amount, 'the amount reads back as sent');
          assert.equal('financialTransactionId' in r, false);
        }
      });

      it(`${kind}: amounts come back normalised ("12.50" → "12.5", "5.0" → "5")`, async () => {
        for (const [sent, stored] of [
          ['12.50', '12.5'],
          ['5.0', '5'],
          ['0.10', '0.1'],
          ['3', '3'],
        ] as const) {
          const id = await created(sandbox, callerOf(kind), kind, await validBody(kind, sent));
          assert.equal((await record(sandbox, callerOf(kind), kind, id)).amount, stored, `sent ${sent}`);
        }
      });
    }

    const badParties: ReadonlyArray<[string, Party]> = [
      ['MSISDN with letters', { partyIdType: 'MSISDN', partyId: '4673312abc' }],
      ['MSISDN with a leading zero', { partyIdType: 'MSISDN', partyId: '0733123450' }],
      ['MSISDN too long', { partyIdType: 'MSISDN', partyId: '4673312345012345' }],
      ['MSISDN given an e-mail', { partyIdType: 'MSISDN', partyId: 'someone@example.com' }],
      ['EMAIL without @', { partyIdType: 'EMAIL', partyId: 'someone.example.com' }],
      ['EMAIL given an MSISDN', { partyIdType: 'EMAIL', partyId: '46733123499' }],
      ['PARTY_CODE not a UUID', { partyIdType: 'PARTY_CODE', partyId: 'party-42' }],
      ['PARTY_CODE given an MSISDN', { partyIdType: 'PARTY_CODE', partyId: '46733123499' }],
    ];
    for (const kind of ['requesttopay', 'deposit'] as const) {
      it(`${kind}: partyId is validated by partyIdType (400 for each mismatch)`, async () => {
        for (const [what, party] of badParties) {
          const id = randomUUID();
          const payload = kind === 'requesttopay' ? rtpBody(party) : depositBody(party);
          const res = await create(sandbox, callerOf(kind), kind, payload, id);
          assert.equal(res.statusCode, 400, `${what}: ${res.statusCode} ${res.body}`);
          assertSchema('bad-request', res.json());
          await assertNotFound(sandbox, callerOf(kind), kind, id);
        }
        const unknownType = await create(
          sandbox,
          callerOf(kind),
          kind,
          kind === 'requesttopay'
            ? { ...rtpBody(), payer: { partyIdType: 'ALIAS', partyId: 'x' } }
            : { ...depositBody(), payee: { partyIdType: 'ALIAS', partyId: 'x' } },
        );
        assertBadRequest(unknownType);
      });
    }
  });

  describe('status records', () => {
    for (const kind of ['requesttopay', 'deposit', 'refund'] as const) {
      it(`${kind}: status of an unknown UUID is 404 RESOURCE_NOT_FOUND; of a non-UUID, 400`, async () => {
        await assertNotFound(sandbox, callerOf(kind), kind, randomUUID());
        for (const bad of ['not-a-uuid', '6ba7b810-9dad-11d1-80b4-00c04fd430c8']) {
          assertBadRequest(await getStatus(sandbox, callerOf(kind), kind, bad));
        }
      });
    }

    for (const kind of ['requesttopay', 'deposit'] as const) {
      it(`${kind}: partyId comes back exactly as sent, and EMAIL / PARTY_CODE parties succeed`, async () => {
        const parties: Party[] = [
          msisdn('+46733123499'),
          { partyIdType: 'EMAIL', partyId: 'Jane.Doe@Example.org' },
          // An e-mail whose local part is a failing test number is still not an MSISDN.
          { partyIdType: 'EMAIL', partyId: '46733123450@example.com' },
          { partyIdType: 'PARTY_CODE', partyId: 'A1B2C3D4-E5F6-4A7B-8C9D-0E1F2A3B4C5D' },
        ];
        for (const party of parties) {
          const id = await created(sandbox, callerOf(kind), kind, kind === 'requesttopay' ? rtpBody(party) : depositBody(party));
          const r = await record(sandbox, callerOf(kind), kind, id);
          assertSuccessful(r);
          assert.deepEqual(kind === 'requesttopay' ? r.payer : r.payee, party);
        }
      });

      it(`${kind}: a FAILED record has its reason code and no financialTransactionId (spec profile)`, async () => {
        const id = await created(
          sandbox,
          callerOf(kind),
          kind,
          kind === 'requesttopay' ? rtpBody('46733123451') : depositBody('46733123451'),
        );
        const r = await record(sandbox, callerOf(kind), kind, id);
        assert.equal(reasonCode(r), 'APPROVAL_REJECTED');
        assert.equal('financialTransactionId' in r, false);
      });
    }

    it('refund: a SUCCESSFUL refund has a financialTransactionId and no reason; a FAILED one the opposite', async () => {
      const ok = await created(sandbox, disburser, 'refund', refundBody(await successfulRtp('10'), '2'));
      assertSuccessful(await record(sandbox, disburser, 'refund', ok));
      const failed = await created(sandbox, disburser, 'refund', refundBody(randomUUID(), '2'));
      const r = await record(sandbox, disburser, 'refund', failed);
      assert.equal(reasonCode(r), 'RESOURCE_NOT_FOUND');
      assert.equal('financialTransactionId' in r, false);
    });
  });

  describe('outcome table (built-in test numbers)', () => {
    for (const kind of ['requesttopay', 'deposit'] as const) {
      it(`${kind}: each failing test number is FAILED at once with its reason`, async () => {
        for (const [number, reason] of FAILING_NUMBERS) {
          const body = kind === 'requesttopay' ? rtpBody(number) : depositBody(number);
          const id = await created(sandbox, callerOf(kind), kind, body);
          const r = await record(sandbox, callerOf(kind), kind, id);
          assert.equal(r.status, 'FAILED', `${number}: ${JSON.stringify(r)}`);
          assert.equal(reasonCode(r), reason, number);
        }
      });

      it(`${kind}: any other MSISDN is SUCCESSFUL at once`, async () => {
        for (const number of ['46733123499', '46733123463', '256772123456', '+46733123464']) {
          const body = kind === 'requesttopay' ? rtpBody(number) : depositBody(number);
          const id = await created(sandbox, callerOf(kind), kind, body);
          assertSuccessful(await record(sandbox, callerOf(kind), kind, id));
        }
      });

      it(`${kind}: 46733123453 stays PENDING, then FAILED EXPIRED after pendingTimeoutMs (600 ms)`, async () => {
        const id = await created(
          sandbox,
          callerOf(kind),
          kind,
          kind === 'requesttopay' ? rtpBody('46733123453') : depositBody('46733123453'),
        );
        const timeout = sandbox.settings.pendingTimeoutMs;
        sandbox.clock.advance(timeout - 1);
        const pending = await record(sandbox, callerOf(kind), kind, id);
        assert.equal(pending.status, 'PENDING', `still PENDING 1 ms before the ${timeout} ms timeout`);
        assert.equal('reason' in pending, false);
        assert.equal('financialTransactionId' in pending, false);
        assert.equal(reasonCode(await settled(sandbox, callerOf(kind), kind, id, 1)), 'EXPIRED');
      });

      it(`${kind}: 46733123454 is PENDING, then SUCCESSFUL after delayedSuccessMs (200 ms)`, async () => {
        const id = await created(
          sandbox,
          callerOf(kind),
          kind,
          kind === 'requesttopay' ? rtpBody('46733123454') : depositBody('46733123454'),
        );
        const delay = sandbox.settings.delayedSuccessMs;
        sandbox.clock.advance(delay - 1);
        assert.equal(
          (await record(sandbox, callerOf(kind), kind, id)).status,
          'PENDING',
          `still PENDING 1 ms before the ${delay} ms delay`,
        );
        assertSuccessful(await settled(sandbox, callerOf(kind), kind, id, 1));
      });
    }
  });

  describe('refund rules', () => {
    it("refund of a SUCCESSFUL request to pay is SUCCESSFUL, with payee = the request to pay's payer", async () => {
      const party = msisdn('+46733123411');
      const rtp = await successfulRtp('10', party);
      const id = await created(sandbox, disburser, 'refund', refundBody(rtp, '4'));
      const r = await record(sandbox, disburser, 'refund', id);
      assertSuccessful(r);
      assert.deepEqual(r.payee, party);
      assert.equal(r.amount, '4');
    });

    it('refund of an unknown request to pay is 202, then FAILED RESOURCE_NOT_FOUND', async () => {
      const id = await created(sandbox, disburser, 'refund', refundBody(randomUUID(), '4'));
      const r = await settled(sandbox, disburser, 'refund', id);
      assert.equal(reasonCode(r), 'RESOURCE_NOT_FOUND');
      assert.equal('payee' in r, false);
    });

    it('refund of a FAILED request to pay is FAILED NOT_ALLOWED', async () => {
      for (const number of ['46733123450', '46733123451']) {
        const rtp = await created(sandbox, collector, 'requesttopay', rtpBody(number, '10'));
        assert.equal((await record(sandbox, collector, 'requesttopay', rtp)).status, 'FAILED');
        const id = await created(sandbox, disburser, 'refund', refundBody(rtp, '4'));
        const r = await settled(sandbox, disburser, 'refund', id);
        assert.equal(reasonCode(r), 'NOT_ALLOWED', `refund of a FAILED request to pay from ${number}: ${JSON.stringify(r)}`);
      }
    });

    it('refund of a PENDING request to pay is FAILED NOT_ALLOWED', async () => {
      const rtp = await created(sandbox, collector, 'requesttopay', rtpBody('46733123453', '10'));
      assert.equal((await record(sandbox, collector, 'requesttopay', rtp)).status, 'PENDING');
      const id = await created(sandbox, disburser, 'refund', refundBody(rtp, '4'));
      const r = await settled(sandbox, disburser, 'refund', id);
      assert.equal(reasonCode(r), 'NOT_ALLOWED', JSON.stringify(r));
    });

    it('refunds may not exceed what is left: 6 then 6 of 10 → SUCCESSFUL, FAILED NOT_ALLOWED; then exactly 4 → SUCCESSFUL', async () => {
      const rtp = await successfulRtp('10');
      const first = await created(sandbox, disburser, 'refund', refundBody(rtp, '6'));
      assertSuccessful(await record(sandbox, disburser, 'refund', first));
      const second = await created(sandbox, disburser, 'refund', refundBody(rtp, '6'));
      assert.equal(reasonCode(await record(sandbox, disburser, 'refund', second)), 'NOT_ALLOWED');
      const rest = await created(sandbox, disburser, 'refund', refundBody(rtp, '4'));
      assertSuccessful(await record(sandbox, disburser, 'refund', rest));
      const more = await created(sandbox, disburser, 'refund', refundBody(rtp, '0.0001'));
      assert.equal(reasonCode(await record(sandbox, disburser, 'refund', more)), 'NOT_ALLOWED');
    });
  });

  describe('ownership', () => {
    for (const kind of ['requesttopay', 'deposit', 'refund'] as const) {
      it(`${kind}: another API user of the product reads the transaction; under --strict it is 404 RESOURCE_NOT_FOUND, as an unknown one`, async () => {
        const product = kind === 'requesttopay' ? 'collection' : 'disbursement';
        const other = await sandbox.provision(product);
        const id = await created(sandbox, callerOf(kind), kind, await validBody(kind));
        const own = await record(sandbox, callerOf(kind), kind, id);
        assert.deepEqual(await record(sandbox, other, kind, id), own, 'the same record, read by another API user of the product');
        await withSandbox({ strict: true }, async (strict) => {
          const owner = await strict.provision(product);
          const stranger = await strict.provision(product);
          const collector = kind === 'refund' ? await strict.provision('collection') : undefined;
          const body =
            kind === 'refund'
              ? refundBody(await created(strict, collector!, 'requesttopay', rtpBody('46733123499')), '1')
              : await validBody(kind);
          const strictId = await created(strict, owner, kind, body);
          await record(strict, owner, kind, strictId);
          await assertNotFound(strict, stranger, kind, strictId);
        });
      });
    }

    it("a transaction made under one product is not read through another product's status query", async () => {
      const referenceId = randomUUID();
      const transfer = await sandbox.call({
        method: 'POST',
        url: path('transfer', 'disbursement'),
        headers: { ...disburser.headers, 'x-reference-id': referenceId },
        payload: depositBody('46733123499'),
      });
      assert.equal(transfer.statusCode, 202, transfer.body);
      assert.equal(
        (await sandbox.call({ method: 'GET', url: path('getTransferStatus', 'disbursement', { referenceId }), headers: disburser.headers }))
          .statusCode,
        200,
      );
      const remitter = await sandbox.provision('remittance');
      const read = await sandbox.call({
        method: 'GET',
        url: path('getTransferStatus', 'remittance', { referenceId }),
        headers: remitter.headers,
      });
      assert.equal(read.statusCode, 404, read.body);
    });
  });
});

describe('the mtn-sandbox profile', () => {
  it('a FAILED record carries reason as a plain code string, on every kind', async () => {
    await withSandbox({ profile: 'mtn-sandbox' }, async (sandbox) => {
      const collector = await sandbox.provision('collection');
      const disburser = await sandbox.provision('disbursement');
      const cases: Array<[Kind, Caller, Body, string]> = [
        ['requesttopay', collector, rtpBody('46733123451'), 'APPROVAL_REJECTED'],
        ['deposit', disburser, depositBody('46733123450'), 'INTERNAL_PROCESSING_ERROR'],
        ['refund', disburser, refundBody(randomUUID(), '1'), 'RESOURCE_NOT_FOUND'],
      ];
      for (const [kind, caller, body, reason] of cases) {
        const id = await created(sandbox, caller, kind, body);
        const r = await record(sandbox, caller, kind, id);
        assert.equal(r.status, 'FAILED');
        assert.equal(r.reason, reason, `${kind}: ${JSON.stringify(r)}`);
        assert.equal('financialTransactionId' in r, false);
      }
      const ok = await created(sandbox, collector, 'requesttopay', rtpBody('46733123499'));
      assertSuccessful(await record(sandbox, collector, 'requesttopay', ok));
    });
  });
});

describe('settings', () => {
  it('currencies [EUR, UGX]: UGX is accepted and credited to the UGX balance; other codes still 500 INVALID_CURRENCY', async () => {
    await withSandbox({ currencies: ['EUR', 'UGX'] }, async (sandbox) => {
      const collector = await sandbox.provision('collection');
      const disburser = await sandbox.provision('disbursement');
      const id = await created(sandbox, collector, 'requesttopay', rtpBody('46733123499', '100', 'UGX'));
      const r = await record(sandbox, collector, 'requesttopay', id);
      assertSuccessful(r);
      assert.equal(r.currency, 'UGX');
      assert.deepEqual(await collectionBalance(sandbox, collector, 'UGX'), { availableBalance: '1000100', currency: 'UGX' });
      assert.deepEqual(await collectionBalance(sandbox, collector, 'EUR'), { availableBalance: '1000000', currency: 'EUR' });
      const dep = await created(sandbox, disburser, 'deposit', depositBody('46733123499', '5', 'UGX'));
      assertSuccessful(await record(sandbox, disburser, 'deposit', dep));
      const usd = await create(sandbox, collector, 'requesttopay', rtpBody('46733123499', '1', 'USD'));
      assert.equal(usd.statusCode, 500, usd.body);
      assert.equal(usd.json().code, 'INVALID_CURRENCY');
    });
  });

  it('refund in another currency than its request to pay is FAILED INVALID_CURRENCY', async () => {
    await withSandbox({ currencies: ['EUR', 'UGX'] }, async (sandbox) => {
      const collector = await sandbox.provision('collection');
      const disburser = await sandbox.provision('disbursement');
      const rtp = await created(sandbox, collector, 'requesttopay', rtpBody('46733123499', '10', 'EUR'));
      const id = await created(sandbox, disburser, 'refund', refundBody(rtp, '5', 'UGX'));
      const r = await settled(sandbox, disburser, 'refund', id);
      assert.equal(reasonCode(r), 'INVALID_CURRENCY');
      assert.deepEqual(await disbursementBalance(sandbox, disburser), { availableBalance: '1000000', currency: 'EUR' });
    });
  });

  describe('outcomes file', () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'momo-outcomes-'));
    });
    after(() => {
      rmSync(dir, { recursive: true, force: true });
    });

    it("a custom outcomes file changes a number's outcome and adds new ones; the rest of the table stays", async () => {
      const file = join(dir, 'custom.json');
      writeFileSync(
        file,
        JSON.stringify({
          '46733123450': { status: 'SUCCESSFUL' },
          '+46700000001': { status: 'FAILED', reason: 'PAYER_LIMIT_REACHED' },
          '46700000002': { status: 'SUCCESSFUL', delayMs: 100 },
        }),
      );
      await withSandbox({ outcomesFile: file }, async (sandbox) => {
        const collector = await sandbox.provision('collection');
        const changed = await created(sandbox, collector, 'requesttopay', rtpBody('46733123450'));
        assertSuccessful(await record(sandbox, collector, 'requesttopay', changed));
        const added = await created(sandbox, collector, 'requesttopay', rtpBody('46700000001'));
        assert.equal(reasonCode(await record(sandbox, collector, 'requesttopay', added)), 'PAYER_LIMIT_REACHED');
        const delayed = await created(sandbox, collector, 'requesttopay', rtpBody('46700000002'));
        assert.equal((await record(sandbox, collector, 'requesttopay', delayed)).status, 'PENDING');
        assertSuccessful(await settled(sandbox, collector, 'requesttopay', delayed, 100));
        const kept = await created(sandbox, collector, 'requesttopay', rtpBody('46733123451'));
        assert.equal(reasonCode(await record(sandbox, collector, 'requesttopay', kept)), 'APPROVAL_REJECTED');
      });
    });

    const invalidFiles: ReadonlyArray<[string, string, string | undefined]> = [
      ['an unknown status', JSON.stringify({ '46700000003': { status: 'MAYBE' } }), '46700000003'],
      ['FAILED without a reason', JSON.stringify({ '46700000004': { status: 'FAILED' } }), '46700000004'],
      ['a key that is not an MSISDN', JSON.stringify({ 'not-a-number': { status: 'SUCCESSFUL' } }), 'not-a-number'],
      ['a negative delay', JSON.stringify({ '46700000005': { status: 'SUCCESSFUL', delayMs: -1 } }), '46700000005'],
      ['an unknown field', JSON.stringify({ '46700000006': { status: 'SUCCESSFUL', after: 3 } }), '46700000006'],
      ['not JSON', '{ "46700000007": ', undefined],
      ['an array', '[]', undefined],
    ];
    for (const [what, content, entry] of invalidFiles) {
      it(`an outcomes file with ${what} makes startSandbox reject, naming the file${entry ? ' and the entry' : ''}`, async () => {
        const file = join(dir, `invalid-${what.replace(/\W+/g, '-')}.json`);
        writeFileSync(file, content);
        await assert.rejects(startSandbox({ outcomesFile: file }), (error: Error) => {
          assert.ok(error.message.includes(file), `message does not name the file: ${error.message}`);
          if (entry) assert.ok(error.message.includes(entry), `message does not name the entry ${entry}: ${error.message}`);
          return true;
        });
      });
    }
  });
});

describe('balances', () => {
  it('a successful request to pay credits the collection balance (both balance operations); a FAILED or PENDING one does not', async () => {
    await withSandbox({}, async (sandbox) => {
      const collector = await sandbox.provision('collection');
      const opening = { availableBalance: '1000000', currency: 'EUR' };
      assert.deepEqual(await collectionBalance(sandbox, collector), opening);
      assert.deepEqual(await collectionBalance(sandbox, collector, 'EUR'), opening);

      const failed = await created(sandbox, collector, 'requesttopay', rtpBody('46733123451', '30'));
      assert.equal((await record(sandbox, collector, 'requesttopay', failed)).status, 'FAILED');
      const pending = await created(sandbox, collector, 'requesttopay', rtpBody('46733123454', '40'));
      assert.equal((await record(sandbox, collector, 'requesttopay', pending)).status, 'PENDING');
      assert.deepEqual(await collectionBalance(sandbox, collector), opening);

      await created(sandbox, collector, 'requesttopay', rtpBody('46733123499', '12.50'));
      const credited = { availableBalance: '1000012.5', currency: 'EUR' };
      assert.deepEqual(await collectionBalance(sandbox, collector), credited);
      assert.deepEqual(await collectionBalance(sandbox, collector, 'EUR'), credited);

      assertSuccessful(await settled(sandbox, collector, 'requesttopay', pending, sandbox.settings.delayedSuccessMs));
      assert.deepEqual(await collectionBalance(sandbox, collector, 'EUR'), { availableBalance: '1000052.5', currency: 'EUR' });

      // Balances are per API user.
      const other = await sandbox.provision('collection');
      assert.deepEqual(await collectionBalance(sandbox, other), opening);
    });
  });

  it('deposits and refunds debit the disbursement balance; failed ones do not', async () => {
    await withSandbox({}, async (sandbox) => {
      const collector = await sandbox.provision('collection');
      const disburser = await sandbox.provision('disbursement');
      assert.deepEqual(await disbursementBalance(sandbox, disburser), { availableBalance: '1000000', currency: 'EUR' });
      const dep = await created(sandbox, disburser, 'deposit', depositBody('46733123499', '100.25'));
      assertSuccessful(await record(sandbox, disburser, 'deposit', dep));
      assert.deepEqual(await disbursementBalance(sandbox, disburser), { availableBalance: '999899.75', currency: 'EUR' });
      const failedDep = await created(sandbox, disburser, 'deposit', depositBody('46733123450', '50'));
      assert.equal((await record(sandbox, disburser, 'deposit', failedDep)).status, 'FAILED');
      const rtp = await created(sandbox, collector, 'requesttopay', rtpBody('46733123499', '10'));
      const refund = await created(sandbox, disburser, 'refund', refundBody(rtp, '9.75'));
      assertSuccessful(await record(sandbox, disburser, 'refund', refund));
      const failedRefund = await created(sandbox, disburser, 'refund', refundBody(randomUUID(), '5'));
      assert.equal((await record(sandbox, disburser, 'refund', failedRefund)).status, 'FAILED');
      assert.deepEqual(await disbursementBalance(sandbox, disburser), { availableBalance: '999890', currency: 'EUR' });
      // A refund moves no money on the collection side.
      assert.deepEqual(await collectionBalance(sandbox, collector), { availableBalance: '1000010', currency: 'EUR' });
    });
  });

  it('openingBalance is respected; a deposit beyond the balance is FAILED NOT_ENOUGH_FUNDS and moves nothing', async () => {
    await withSandbox({ openingBalance: '100' }, async (sandbox) => {
      const collector = await sandbox.provision('collection');
      const disburser = await sandbox.provision('disbursement');
      assert.deepEqual(await collectionBalance(sandbox, collector), { availableBalance: '100', currency: 'EUR' });
      assert.deepEqual(await disbursementBalance(sandbox, disburser), { availableBalance: '100', currency: 'EUR' });

      const tooMuch = await created(sandbox, disburser, 'deposit', depositBody('46733123499', '100.01'));
      const r = await settled(sandbox, disburser, 'deposit', tooMuch);
      assert.equal(reasonCode(r), 'NOT_ENOUGH_FUNDS');
      assert.equal('financialTransactionId' in r, false);
      assert.deepEqual(await disbursementBalance(sandbox, disburser), { availableBalance: '100', currency: 'EUR' });

      const all = await created(sandbox, disburser, 'deposit', depositBody('46733123499', '100'));
      assertSuccessful(await record(sandbox, disburser, 'deposit', all));
      assert.deepEqual(await disbursementBalance(sandbox, disburser), { availableBalance: '0', currency: 'EUR' });

      // A refund that the empty balance cannot cover fails the same way.
      const rtp = await created(sandbox, collector, 'requesttopay', rtpBody('46733123499', '10'));
      const refund = await created(sandbox, disburser, 'refund', refundBody(rtp, '1'));
      assert.equal(reasonCode(await record(sandbox, disburser, 'refund', refund)), 'NOT_ENOUGH_FUNDS');
      assert.deepEqual(await disbursementBalance(sandbox, disburser), { availableBalance: '0', currency: 'EUR' });
    });
  });
});
