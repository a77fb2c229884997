import type { Account } from '../lib/api.ts';
import { number } from '../lib/config.ts';
import { parseMix, ratesOf, type CapacityOperation } from '../lib/mixes.ts';
import { APPROVING_CUSTOMER, depositBody, refundBody, requestToPayBody } from '../lib/payloads.ts';
import { awaitFinal, createTransaction, refundablePayments } from '../lib/payments.ts';
import { completionWithin, correctness, errorRateOf, latencyOf, noLostTransactions, noUnexpected401 } from '../lib/slo.ts';
import { fetchToken, provisionAccounts } from '../lib/tokens.ts';

/**
 * One step of npm run capacity: an operation mix (LOAD_MIX, load/lib/mixes.ts) at a total arrival rate (LOAD_RATE)
 * reached in LOAD_WARMUP_SECONDS and held for LOAD_DURATION_SECONDS, held to every SLO of load/lib/slo.ts. A share of the creations
 * (LOAD_FOLLOW_SHARE) is followed to its final status, which gives the time to a final status under this load.
 */
const mix = parseMix(__ENV.LOAD_MIX || 'request-to-pay');
const rate = number('LOAD_RATE', 50);
const duration = `${number('LOAD_DURATION_SECONDS', 10)}s`;
const followShare = number('LOAD_FOLLOW_SHARE', 0.05);
const warmupSeconds = number('LOAD_WARMUP_SECONDS', 2);
// Every VU is started before the load: a VU started during the step costs iterations dropped meanwhile.
const totalVus = number('LOAD_VUS', 100);
const rates = ratesOf(mix, rate);
const creations = rates.map(([op]) => op).filter((op) => op !== 'createAccessToken');

export const options = {
  scenarios: Object.fromEntries(rates.map(([op, opRate]) => {
    const vus = Math.max(2, Math.round((totalVus * opRate) / rate));
    // A short ramp first: each VU fetches its token on its first iteration, and 200 of them at once at full
    // rate would be a token storm no steady client makes.
    return [op, {
      executor: 'ramping-arrival-rate', exec: op, tags: { op }, startRate: Math.max(1, Math.round(opRate / 10)), timeUnit: '1s',
      stages: [{ target: opRate, duration: `${warmupSeconds}s` }, { target: opRate, duration }], preAllocatedVUs: vus, maxVUs: vus,
    }];
  })),
  thresholds: Object.assign(
    { ...correctness(), ...noUnexpected401() },
    creations.length > 0 ? { ...completionWithin(), ...noLostTransactions() } : {},
    ...rates.map(([op]) => ({ ...latencyOf(op), ...errorRateOf(op) })),
  ),
};

interface Data {
  accounts: Record<string, Account>;
  refundable: string[];
}

export function setup(): Data {
  const accounts = provisionAccounts(['collection', 'disbursement']);
  return { accounts, refundable: mix.refund !== undefined ? refundablePayments(accounts.collection!) : [] };
}

const REQUEST_TO_PAY = JSON.stringify(requestToPayBody('10', APPROVING_CUSTOMER));
const DEPOSIT = JSON.stringify(depositBody('0.01', APPROVING_CUSTOMER));
const poll = { deadlineMs: number('LOAD_COMPLETION_DEADLINE_MS', 10_000), intervalMs: number('LOAD_POLL_INTERVAL_MS', 100) };

function created(op: CapacityOperation, account: Account, referenceId: string | undefined): void {
  if (referenceId && Math.random() < followShare) awaitFinal(op, account, referenceId, Date.now(), poll);
}

export function createAccessToken(data: Data) {
  fetchToken(data.accounts.collection!);
}

export function requestToPay(data: Data) {
  const account = data.accounts.collection!;
  created('requestToPay', account, createTransaction('requestToPay', account, REQUEST_TO_PAY));
}

export function deposit(data: Data) {
  const account = data.accounts.disbursement!;
  created('deposit', account, createTransaction('deposit', account, DEPOSIT));
}

export function refund(data: Data) {
  const account = data.accounts.disbursement!;
  const original = data.refundable[Math.floor(Math.random() * data.refundable.length)]!;
  created('refund', account, createTransaction('refund', account, refundBody(original, '0.01')));
}
