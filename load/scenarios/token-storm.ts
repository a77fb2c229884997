import { number } from '../lib/config.ts';
import { correctness, latencyOf } from '../lib/slo.ts';
import { fetchToken, provisionAccounts } from '../lib/tokens.ts';
import type { Account } from '../lib/api.ts';

const rate = number('LOAD_RATE', 200);
const rampSeconds = number('LOAD_RAMP_SECONDS', 20);
const holdSeconds = number('LOAD_HOLD_SECONDS', 10);

/**
 * The token operation under a ramping arrival rate, as a fleet of clients that do not cache would hit it:
 * its capacity and latency. Open model: iterations start on schedule whether or not earlier ones finished.
 */
export const options = {
  scenarios: {
    tokens: {
      executor: 'ramping-arrival-rate',
      startRate: Math.max(1, Math.round(rate / 10)),
      timeUnit: '1s',
      preAllocatedVUs: number('LOAD_VUS', 20),
      maxVUs: number('LOAD_MAX_VUS', 200),
      stages: [
        { target: rate, duration: `${rampSeconds}s` },
        { target: rate, duration: `${holdSeconds}s` },
      ],
    },
  },
  thresholds: { ...latencyOf('createAccessToken'), ...correctness() },
};

export function setup() {
  return provisionAccounts(['collection']);
}

export default function (accounts: Record<string, Account>) {
  fetchToken(accounts.collection!);
}
