import type { Account } from '../lib/api.ts';
import { number } from '../lib/config.ts';
import { APPROVING_CUSTOMER, SLOW_CUSTOMER, requestToPayBody } from '../lib/payloads.ts';
import { awaitFinal, createTransaction } from '../lib/payments.ts';
import { completionWithin, correctness, noLostTransactions, noUnexpected401 } from '../lib/slo.ts';
import { provisionAccounts } from '../lib/tokens.ts';

const deadlineMs = number('LOAD_COMPLETION_DEADLINE_MS', 30_000);
const intervalMs = number('LOAD_POLL_INTERVAL_MS', 200);
const customer = __ENV.LOAD_CUSTOMER === 'approving' ? APPROVING_CUSTOMER : SLOW_CUSTOMER;

/**
 * The time from 202 to a final status, by polling and, where the callback receiver is reachable, by
 * callbacks (npm run load measures those), and the transactions lost on the way: accepted, never readable.
 */
export const options = {
  scenarios: {
    completion: {
      executor: 'constant-arrival-rate',
      rate: number('LOAD_RATE', 10),
      timeUnit: '1s',
      duration: `${number('LOAD_DURATION_SECONDS', 20)}s`,
      // Each iteration lasts as long as the payment takes to settle, so enough VUs must wait at once.
      preAllocatedVUs: number('LOAD_VUS', 40),
      maxVUs: number('LOAD_MAX_VUS', 400),
    },
  },
  thresholds: { ...noLostTransactions(), ...completionWithin(), ...correctness(), ...noUnexpected401() },
};

export function setup() {
  return provisionAccounts(['collection']);
}

export default function (accounts: Record<string, Account>) {
  const account = accounts.collection!;
  const referenceId = createTransaction('requestToPay', account, requestToPayBody('5', customer), true);
  if (referenceId) awaitFinal('requestToPay', account, referenceId, Date.now(), { deadlineMs, intervalMs });
}
