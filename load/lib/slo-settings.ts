/**
 * The SLO settings as plain data: the name each is set by, its default and what it means. Transport-free, so
 * both the k6 scripts (load/lib/slo.ts turns them into thresholds) and Node (npm run capacity's --slo, the
 * reports) read the one list.
 */
export interface SloSetting {
  /** The variable that sets it, for npm run load and k6 alike. */
  env: string;
  /** The name npm run capacity's --slo takes (--slo p95=200). */
  flag: string;
  fallback: number;
  /** What it bounds, in a few words, for verdicts ("the target broke the SLO on p95 latency"). */
  name: string;
  describe: string;
}

export const SLO_SETTINGS = {
  p95Ms: {
    name: 'p95 latency',
    env: 'LOAD_SLO_P95_MS',
    flag: 'p95',
    fallback: 250,
    describe: '95th percentile latency of one call, in ms',
  },
  p99Ms: {
    name: 'p99 latency',
    env: 'LOAD_SLO_P99_MS',
    flag: 'p99',
    fallback: 750,
    describe: '99th percentile latency of one call, in ms',
  },
  maxErrorRate: {
    name: 'error rate',
    env: 'LOAD_SLO_ERROR_RATE',
    flag: 'error-rate',
    fallback: 0.01,
    describe: 'share of calls that may answer other than documented',
  },
  maxDroppedIterations: {
    name: 'dropped iterations',
    env: 'LOAD_SLO_DROPPED_ITERATIONS',
    flag: 'dropped',
    fallback: 0,
    describe: 'iterations the open model could not start for lack of VUs',
  },
  maxLostTransactions: {
    name: 'lost transactions',
    env: 'LOAD_SLO_LOST_TRANSACTIONS',
    flag: 'lost',
    fallback: 0,
    describe: 'transactions accepted (202) whose status could never be read',
  },
  maxUnexpected401: {
    name: 'unexpected 401s',
    env: 'LOAD_SLO_UNEXPECTED_401',
    flag: 'unexpected-401',
    fallback: 0,
    describe: '401 answers to a cached, valid token',
  },
  timeToFinalP95Ms: {
    name: 'time to a final status',
    env: 'LOAD_SLO_TIME_TO_FINAL_P95_MS',
    flag: 'time-to-final',
    fallback: 2000,
    describe: '95th percentile time from 202 to a final status, in ms',
  },
} as const satisfies Record<string, SloSetting>;

export type SloName = keyof typeof SLO_SETTINGS;
