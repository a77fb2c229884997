import { number } from './config.ts';

/**
 * The service-level objectives the load tests hold the target to, as named settings. A failed threshold
 * fails the run (k6 exits 99, npm run load exits 1).
 */
export const SLO = {
  /** 95th and 99th percentile latency of one call, in ms. */
  p95Ms: number('LOAD_SLO_P95_MS', 250),
  p99Ms: number('LOAD_SLO_P99_MS', 750),
  /** Share of calls that may answer other than documented. */
  maxErrorRate: number('LOAD_SLO_ERROR_RATE', 0.01),
  /** Iterations the open model could not start for lack of VUs: any means the generator, not the target, set the pace. */
  maxDroppedIterations: number('LOAD_SLO_DROPPED_ITERATIONS', 0),
  maxLostTransactions: number('LOAD_SLO_LOST_TRANSACTIONS', 0),
  maxUnexpected401: number('LOAD_SLO_UNEXPECTED_401', 0),
  /** 95th percentile time from 202 to a final status, in ms. */
  timeToFinalP95Ms: number('LOAD_SLO_TIME_TO_FINAL_P95_MS', 2000),
};

type Thresholds = Record<string, string[]>;

/** Latency of the calls of one operation (tagged op:<name>). */
export function latencyOf(operation: string): Thresholds {
  return { [`http_req_duration{op:${operation}}`]: [`p(95)<${SLO.p95Ms}`, `p(99)<${SLO.p99Ms}`] };
}

/**
 * The error rate of one operation's calls (tagged op:<name>). Its counts are also how a run reports the
 * creations the target accepted (load/runner/summary.ts): k6 counts every call anyway, and a counter of our own
 * would add a metric sample to every iteration, 7% of the generator's instructions (docs/benchmarks.md).
 */
export function errorRateOf(operation: string): Thresholds {
  return { [`http_req_failed{op:${operation}}`]: [`rate<=${SLO.maxErrorRate}`] };
}

/** What every run must hold: answers as documented, valid bodies, an honest open model. */
export function correctness(): Thresholds {
  return {
    http_req_failed: [`rate<=${SLO.maxErrorRate}`],
    // Every body is validated under load, and none may depart from its schema.
    momo_schema_violations: ['count==0'],
    dropped_iterations: [`count<=${SLO.maxDroppedIterations}`],
  };
}

export function noLostTransactions(): Thresholds {
  return { momo_lost_transactions: [`count<=${SLO.maxLostTransactions}`] };
}

export function noUnexpected401(): Thresholds {
  return { momo_unexpected_401: [`count<=${SLO.maxUnexpected401}`] };
}

export function completionWithin(): Thresholds {
  return { momo_time_to_final: [`p(95)<${SLO.timeToFinalP95Ms}`] };
}
