import { Counter } from 'k6/metrics';
import type { Account } from '../lib/api.ts';
import { number } from '../lib/config.ts';
import { parseMix, ratesOf, type CapacityOperation } from '../lib/mixes.ts';
import { APPROVING_CUSTOMER, depositBody, refundBody, requestToPayBody } from '../lib/payloads.ts';
import { awaitFinal, createTransaction, refundablePayments } from '../lib/payments.ts';
import { completionWithin, correctness, errorRateOf, latencyOf, noLostTransactions, noUnexpected401 } from '../lib/slo.ts';
import { adoptToken, fetchToken, issueTokens, provisionAccounts, type IssuedToken } from '../lib/tokens.ts';
import { WINDOW_MARKS, WINDOW_METRIC } from '../lib/window.ts';

/**
 * One step of npm run capacity: an operation mix (LOAD_MIX, load/lib/mixes.ts) at a total arrival rate (LOAD_RATE),
 * reached in LOAD_WARMUP_SECONDS and then held for LOAD_DURATION_SECONDS, the measured window. Two marks in the
 * output (load/lib/window.ts) say when the window opens and closes; npm run capacity judges every SLO of
 * load/lib/slo.ts over it, and counts throughput as the requests answered inside it. A share of the creations
 * (LOAD_FOLLOW_SHARE) is followed to its final status, which gives the time to a final status under this load.
 */
const mix = parseMix(__ENV.LOAD_MIX || 'request-to-pay');
const rate = number('LOAD_RATE', 50);
const holdSeconds = number('LOAD_DURATION_SECONDS', 10);
const followShare = number('LOAD_FOLLOW_SHARE', 0.05);
const rampSeconds = number('LOAD_WARMUP_SECONDS', 2);
// Every VU is started before the load: a VU started during the step costs iterations dropped meanwhile.
const totalVus = number('LOAD_VUS', 100);
// Tokens per product fetched in setup() for the VUs to share; setup data is copied into every VU.
const tokenPool = Math.max(1, Math.min(totalVus, number('LOAD_TOKEN_POOL', 10)));
const rates = ratesOf(mix, rate);
const creations = rates.map(([op]) => op).filter((op) => op !== 'createAccessToken');

const windowMarks = new Counter(WINDOW_METRIC);
// One VU per process of a split step (LOAD_SEGMENTS): execution segments share the VUs out, one to each process,
// and each process marks the window of its own schedule.
const mark = (startTime: number) => ({
  executor: 'per-vu-iterations',
  exec: 'markWindow',
  vus: number('LOAD_SEGMENTS', 1),
  iterations: 1,
  startTime: `${startTime}s`,
  maxDuration: '10s',
});

export const options = {
  scenarios: {
    ...Object.fromEntries(
      rates.map(([op, opRate]) => {
        const vus = Math.max(2, Math.round((totalVus * opRate) / rate));
        // The ramp opens the VUs' connections gradually and lets the target settle; it is not measured.
        return [
          op,
          {
            executor: 'ramping-arrival-rate',
            exec: op,
            tags: { op },
            startRate: Math.max(1, Math.round(opRate / 10)),
            timeUnit: '1s',
            stages: [
              { target: opRate, duration: `${rampSeconds}s` },
              { target: opRate, duration: `${holdSeconds}s` },
            ],
            preAllocatedVUs: vus,
            maxVUs: vus,
          },
        ];
      }),
    ),
    [WINDOW_MARKS.opens]: mark(rampSeconds),
    [WINDOW_MARKS.closes]: mark(rampSeconds + holdSeconds),
  },
  thresholds: Object.assign(
    { ...correctness(), ...noUnexpected401() },
    creations.length > 0 ? { ...completionWithin(), ...noLostTransactions() } : {},
    ...rates.map(([op]) => ({ ...latencyOf(op), ...errorRateOf(op) })),
  ),
};

interface Data {
  accounts: Record<string, Account>;
  refundable: string[];
  /** Tokens fetched before the load, by product: no VU fetches one inside the measured window. */
  tokens: Record<string, IssuedToken[]>;
}

export function setup(): Data {
  const accounts = provisionAccounts(['collection', 'disbursement']);
  const needs = { collection: mix.requestToPay !== undefined, disbursement: mix.deposit !== undefined || mix.refund !== undefined };
  const tokens = Object.fromEntries(
    Object.entries(needs)
      .filter(([, needed]) => needed)
      .map(([product]) => [product, issueTokens(accounts[product]!, tokenPool)]),
  );
  return { accounts, refundable: mix.refund !== undefined ? refundablePayments(accounts.collection!) : [], tokens };
}

export function markWindow() {
  windowMarks.add(1);
}

const REQUEST_TO_PAY = JSON.stringify(requestToPayBody('10', APPROVING_CUSTOMER));
const DEPOSIT = JSON.stringify(depositBody('0.01', APPROVING_CUSTOMER));
const poll = { deadlineMs: number('LOAD_COMPLETION_DEADLINE_MS', 10_000), intervalMs: number('LOAD_POLL_INTERVAL_MS', 100) };

function created(op: CapacityOperation, account: Account, referenceId: string | undefined): void {
  if (referenceId && Math.random() < followShare) awaitFinal(op, account, referenceId, Date.now(), poll);
}

// Whether this VU took a token of the pool yet, by product: a property read per iteration, not a Map lookup.
const adopted: Record<string, boolean> = {};

/** The account of a product, with a token of the pool in this VU's cache. */
function ready(data: Data, product: 'collection' | 'disbursement'): Account {
  const account = data.accounts[product]!;
  if (!adopted[product]) {
    adoptToken(account, data.tokens[product] ?? []);
    adopted[product] = true;
  }
  return account;
}

export function createAccessToken(data: Data) {
  fetchToken(data.accounts.collection!);
}

export function requestToPay(data: Data) {
  const account = ready(data, 'collection');
  created('requestToPay', account, createTransaction('requestToPay', account, REQUEST_TO_PAY));
}

export function deposit(data: Data) {
  const account = ready(data, 'disbursement');
  created('deposit', account, createTransaction('deposit', account, DEPOSIT));
}

export function refund(data: Data) {
  const account = ready(data, 'disbursement');
  const original = data.refundable[Math.floor(Math.random() * data.refundable.length)]!;
  created('refund', account, createTransaction('refund', account, refundBody(original, '0.01')));
}
