import { accountHolderActive, readBalance } from '../lib/api.ts';
import { expectAnswer } from '../lib/checks.ts';
import { number } from '../lib/config.ts';
import { depositBody, refundBody, requestToPayBody, APPROVING_CUSTOMER } from '../lib/payloads.ts';
import { awaitFinal, createTransaction } from '../lib/payments.ts';
import { correctness, noLostTransactions, noUnexpected401 } from '../lib/slo.ts';
import { bearer, provisionAccounts } from '../lib/tokens.ts';
import type { Account } from '../lib/api.ts';

/** One VU, a few iterations of every operation the load tests use, every body validated: for tests. */
export const options = {
  scenarios: {
    smoke: { executor: 'per-vu-iterations', vus: 1, iterations: number('LOAD_ITERATIONS', 3), maxDuration: '60s' },
  },
  thresholds: { ...correctness(), ...noLostTransactions(), ...noUnexpected401(), checks: ['rate==1'] },
};

export function setup() {
  return provisionAccounts(['collection', 'disbursement']);
}

export default function (accounts: Record<string, Account>) {
  const collection = accounts.collection!;
  const disbursement = accounts.disbursement!;
  const poll = { deadlineMs: 10_000, intervalMs: 100 };

  const payment = createTransaction('requestToPay', collection, requestToPayBody('10'), true);
  if (payment) awaitFinal('requestToPay', collection, payment, Date.now(), poll);
  const deposit = createTransaction('deposit', disbursement, depositBody('1'));
  if (deposit) awaitFinal('deposit', disbursement, deposit, Date.now(), poll);
  if (payment) {
    const refund = createTransaction('refund', disbursement, refundBody(payment, '1'));
    if (refund) awaitFinal('refund', disbursement, refund, Date.now(), poll);
  }
  expectAnswer('getBalance', readBalance('collection', bearer(collection)), 200, 'collection');
  expectAnswer('accountHolderActive', accountHolderActive('collection', bearer(collection), APPROVING_CUSTOMER), 200, 'collection');
}
