import { fail } from 'k6';
import type { Account } from '../lib/api.ts';
import { number } from '../lib/config.ts';
import { requestToPayBody } from '../lib/payloads.ts';
import { createTransaction } from '../lib/payments.ts';
import { correctness, errorRateOf, latencyOf, noUnexpected401 } from '../lib/slo.ts';
import { fetchToken, provisionAccounts } from '../lib/tokens.ts';

const durationSeconds = number('LOAD_DURATION_SECONDS', 30);
const MINIMUM_EXPIRIES = 3;

/**
 * Payments at a steady rate for long enough that every VU's token expires several times: a client that
 * caches and renews its token in time must see no refusal because of an expired token. Run it against a
 * sandbox issuing short-lived tokens (npm run load starts one with LOAD_TOKEN_LIFETIME, default 5 s).
 */
export const options = {
  scenarios: {
    soak: {
      executor: 'constant-arrival-rate',
      rate: number('LOAD_RATE', 20),
      timeUnit: '1s',
      duration: `${durationSeconds}s`,
      preAllocatedVUs: number('LOAD_VUS', 10),
      maxVUs: number('LOAD_MAX_VUS', 50),
      tags: { op: 'requestToPay' },
    },
  },
  thresholds: { ...noUnexpected401(), ...correctness(), ...latencyOf('requestToPay'), ...errorRateOf('requestToPay') },
};

export function setup() {
  const accounts = provisionAccounts(['collection']);
  const probe = fetchToken(accounts.collection!);
  const lifetimeSeconds = (probe.refreshAt - Date.now()) / 1000 / 0.8;
  if (lifetimeSeconds * MINIMUM_EXPIRIES > durationSeconds) {
    fail(
      `setup: tokens live about ${Math.round(lifetimeSeconds)} s, so ${durationSeconds} s crosses fewer than ${MINIMUM_EXPIRIES} expiries; raise LOAD_DURATION_SECONDS or start the target with shorter-lived tokens (LOAD_TOKEN_LIFETIME)`,
    );
  }
  return accounts;
}

export default function (accounts: Record<string, Account>) {
  createTransaction('requestToPay', accounts.collection!, requestToPayBody('1'));
}
