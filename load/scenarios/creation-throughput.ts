import { TRANSACTIONS } from '../../core/catalogue/routes.ts';
import type { Account, Creation } from '../lib/api.ts';
import { number } from '../lib/config.ts';
import { depositBody, refundBody, requestToPayBody } from '../lib/payloads.ts';
import { createTransaction, refundablePayments } from '../lib/payments.ts';
import { correctness, errorRateOf, latencyOf, noUnexpected401 } from '../lib/slo.ts';
import { provisionAccounts } from '../lib/tokens.ts';

const rate = number('LOAD_RATE', 50);
const duration = `${number('LOAD_DURATION_SECONDS', 30)}s`;
const operations = (__ENV.LOAD_OPERATIONS || 'requestToPay,deposit,refund').split(',').map((s) => s.trim()) as Creation[];
// Each creation is made by the function of this script named after its operation id (exec).
const CREATIONS = TRANSACTIONS.map((t) => t.create);
// A fixed number of iterations instead of a rate: exact counts, for checking how a split run divides them.
const iterations = number('LOAD_ITERATIONS', 0);
// A closed model (so many VUs, each as fast as it can) instead of a rate: for the generator benchmark.
const closedVus = number('LOAD_CLOSED_VUS', 0);

/**
 * Creations at a constant arrival rate per operation, with tokens from each VU's cache: what the target
 * sustains. momo_token_requests against the accepted creations (printed by npm run load, from
 * http_req_failed{op:<operation>}) shows the cache at work.
 */
export const options = {
  scenarios: Object.fromEntries(
    operations.map((op) => {
      if (!CREATIONS.includes(op)) throw new Error(`LOAD_OPERATIONS: unknown operation "${op}" (${CREATIONS.join(', ')})`);
      return [
        op,
        iterations > 0
          ? {
              executor: 'shared-iterations',
              exec: op,
              iterations,
              vus: number('LOAD_VUS', 4),
              maxDuration: `${number('LOAD_MAX_DURATION_SECONDS', 120)}s`,
              tags: { op },
            }
          : closedVus > 0
            ? { executor: 'constant-vus', exec: op, vus: closedVus, duration, tags: { op } }
            : {
                executor: 'constant-arrival-rate',
                exec: op,
                tags: { op },
                rate,
                timeUnit: '1s',
                duration,
                preAllocatedVUs: number('LOAD_VUS', 20),
                maxVUs: number('LOAD_MAX_VUS', 200),
              },
      ];
    }),
  ),
  thresholds: Object.assign(
    { ...correctness(), ...noUnexpected401() },
    ...operations.map((op) => ({ ...latencyOf(op), ...errorRateOf(op) })),
  ),
};

interface Data {
  accounts: Record<string, Account>;
  /** Successful requests to pay that the refunds draw on, a small amount at a time. */
  refundable: string[];
}

export function setup(): Data {
  const accounts = provisionAccounts(['collection', 'disbursement']);
  return { accounts, refundable: operations.includes('refund') ? refundablePayments(accounts.collection!) : [] };
}

// Serialised once per VU: every creation sends the same body under its own reference id.
const REQUEST_TO_PAY = JSON.stringify(requestToPayBody('10'));
const DEPOSIT = JSON.stringify(depositBody('0.01'));

export function requestToPay(data: Data) {
  createTransaction('requestToPay', data.accounts.collection!, REQUEST_TO_PAY);
}

export function deposit(data: Data) {
  createTransaction('deposit', data.accounts.disbursement!, DEPOSIT);
}

export function refund(data: Data) {
  const original = data.refundable[Math.floor(Math.random() * data.refundable.length)]!;
  createTransaction('refund', data.accounts.disbursement!, refundBody(original, '0.01'));
}
